"""The runtime every front end drives: ``Runtime`` (one agent with its config, tools, permissions,
jobs and session), ``build`` (the composition root), ``options`` (what the command line chose)
and ``sources`` (tool sources with a start/close life cycle)."""
