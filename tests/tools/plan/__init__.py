"""Tests of the plan tools: ``todo``."""
