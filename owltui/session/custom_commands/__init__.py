"""Custom slash commands: Markdown prompt templates the user keeps in ``.owltui/commands/`` and the
config dir's ``commands/`` (``files``: finding and reading them), their arguments (``template``),
what a command's run may use (``scope``: ``allowed-tools`` and ``model``), and the ``Command``
objects the command layer offers beside its table (``offer``)."""
