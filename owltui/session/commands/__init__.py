"""The command layer: every slash command and every RPC command, declared once (``table.COMMANDS``)
and run against a typed ``Host`` (``host``) for a ``Frontend``; ``layer.Commands`` is what a front
end drives. Nothing is imported here."""
