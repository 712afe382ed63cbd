"""The ``everything`` fixture (server-everything over stdio and Streamable HTTP) for these tests."""

from tests.tools.mcp_resources.helpers import everything

__all__ = ["everything"]
