"""The Agent Client Protocol front end (``owltui --acp``): ACP v1 over stdio on the official SDK,
beside RPC mode on the one command layer; the translation of events into session updates, the
replay of a saved branch, the editor's file writes, config options and OwlTUI's extension methods."""
