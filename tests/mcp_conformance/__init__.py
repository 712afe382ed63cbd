"""The official MCP conformance suite's client scenarios, run against the real ``owltui -p``."""
