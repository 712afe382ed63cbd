"""The built-in tools the model calls, one sub-package per kind: ``files`` (read, write, edit),
``search`` (grep, find, ls on ripgrep), ``exec`` (bash, process groups, the subreaper, freezing),
``jobs`` (background jobs), ``mcp`` (MCP servers as a tool source). ``base`` holds what every tool
shares (limits, parameter models); ``registry`` lists the built-in set. Nothing is imported here."""
