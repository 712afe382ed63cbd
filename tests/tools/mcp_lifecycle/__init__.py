"""MCP life cycle: call timeouts, servers approved mid-session, tools/list_changed at turn
boundaries, token economy of results, images from tool results."""
