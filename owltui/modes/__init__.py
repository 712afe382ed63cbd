"""Non-interactive front ends: print mode (``-p``) and RPC mode (``--rpc``)."""
