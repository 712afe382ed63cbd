"""The TUI's widgets and screens: the conversation and its blocks, tool blocks, the input, the queue
panel, status bar, pause banner, pickers, Ctrl+R search and the main screen's layout."""
