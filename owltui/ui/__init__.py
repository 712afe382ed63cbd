"""The interactive front ends: the Textual TUI (``app``, its first frame ``boot``, ``launch``), its
controllers (``control``), widgets (``widgets``) and themes (``themes``), and plain mode
(``plain``, prompt-toolkit)."""
