"""Checkpoints: the workspace's files before each user turn in a shadow git store, rewinding
files and conversation, and the ``/rewind`` picker's words."""
