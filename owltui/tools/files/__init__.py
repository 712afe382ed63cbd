"""File tools: ``read`` (numbered pages of faithful text), ``write`` and ``edit``, their pager and
the "did you mean" suggestion for a missing path."""
