"""What the user types beyond plain text: ``@path`` mentions, ``!command`` shell runs, and the
per-workspace input history."""
