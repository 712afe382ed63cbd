"""User hooks in Claude Code's format: commands run at the loop's events (``docs/hooks.md``)."""
