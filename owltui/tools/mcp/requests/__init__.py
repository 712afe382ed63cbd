"""What an MCP server may ask of OwlTUI while connected: elicitation (a form or a URL the user
answers), roots (the workspace), sampling (always refused).

- ``handlers``: ``McpRequests``, the callbacks the SDK client is given (``client.make_client``),
  the ``[mcp] elicitation`` policy, the roots and their ``list_changed``, the tie of a question to
  the tool call it came from (its time limit stops while asked; withdrawn when the call ends).
- ``form``: a form's schema read into fields, defaults filled in, an answer checked.
- ``question``: what reaches whoever answers (``Question``, ``Answer``, the ``Asker`` protocol).
- ``broker``: ``ElicitBroker``, the interactive sessions' asker: ``mcp_elicitation`` events (RPC)
  and listeners (the TUI's ``ElicitPrompt``), answered by ``mcp_elicitation_answer``.
"""
