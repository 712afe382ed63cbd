"""MCP client: the Model Context Protocol servers users already run, as OwlTUI tools.

``config``: which servers (``.mcp.json``, ``[mcp.servers.NAME]``, ``--mcp-config``, approvals);
``source``: ``McpSource``, the tool source that connects them in the background and freezes their
tools before the first request; ``names``: ``mcp__SERVER__TOOL``; ``schema`` and ``results``: the
server's JSON schema in, its results out as text; ``client`` and ``stdio``: the SDK side (imported
only in the background); ``wiring``: the lines the runtime, the commands and the rules use.
Nothing is imported here, so importing a submodule never loads the MCP SDK."""
