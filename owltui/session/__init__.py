"""What a session is made of, under every front end: the runtime and its composition root
(``runtime``), the command layer (``commands``), JSONL sessions (``store``), checkpoints and rewind
(``checkpoints``), what the user types beyond text (``input``), and configuration, approvals,
redaction, stats and the wording of notices."""
