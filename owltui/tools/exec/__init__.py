"""Running commands: the ``bash`` tool, process groups with streamed bounded output, signals,
``/proc`` reading, the subreaper that sees escaped descendants, and freezing on pause."""
