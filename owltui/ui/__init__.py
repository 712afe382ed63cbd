"""The Textual front end: ``app`` (``OwlApp``, ``run_tui``) and the widgets, screens and helpers it is
made of (each module says what it owns)."""
