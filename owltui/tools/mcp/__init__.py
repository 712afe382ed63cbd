"""MCP client: the Model Context Protocol servers users already run, as OwlTUI tools.

``config``: the server entry format (``.mcp.json``, ``[mcp.servers.NAME]``); ``approvals``: which
workspace files the user approved; ``selection``: which servers a session starts (the sources
merged, ``--mcp-config``); ``server``: one connection and its tools; ``source``: ``McpSource``, the
tool source that connects them in the background and freezes their tools before the first request;
``schema`` and ``results``: the server's JSON schema in, its results out as text; ``client`` and
``stdio``: the SDK side (imported only in the background); ``launch``: where and how a stdio server
starts (a neutral directory, a safe environment, the sandbox for servers a workspace file defines);
``wiring``: the lines the runtime, the
commands and the rules use. Nothing is imported here, so importing a submodule never loads the MCP
SDK."""
