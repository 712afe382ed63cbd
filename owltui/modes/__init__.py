"""Non-interactive front ends: print mode (``-p``), RPC mode (``--rpc``) and playbook runs, and the
JSON-lines writer they share."""
