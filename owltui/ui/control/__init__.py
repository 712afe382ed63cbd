"""The TUI's controllers: keyboard actions, input routing, the honest interrupt, start-up and
shutdown, the queue keys, command replies, and the presenter that turns agent events into widgets.
``app_api`` is the narrow view of the app they are given."""
