"""Features: chat, the ``task`` subagent, playbooks, compaction, project instructions and ``/init``.
Each is a system prompt, tools, hooks and where its history lives, run on the one agent loop."""
