"""MCP resources and prompts against the reference server-everything over stdio."""
