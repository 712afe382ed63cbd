"""MCP resources and prompts: what connected servers offer beside tools.

``index`` gathers each server's resources, resource templates and prompts once it connects (the
lists mention completion and the prompt commands read without waiting); ``contents`` turns resource
contents and prompt messages into text and images; ``tools`` are the model's ``mcp_list_resources``
and ``mcp_read_resource``; ``mentions`` reads ``@server:uri``; ``prompts`` are the
``/mcp__SERVER__PROMPT`` commands.
"""
