"""Tests of what MCP servers ask of OwlTUI: elicitation, roots, sampling."""
