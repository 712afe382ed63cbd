"""Sessions on disk: one append-only JSONL file per session (locked, fsynced, corrupt lines
skipped, branches), reading it back, and finding sessions (``-c``, ``--resume``, the listing)."""
