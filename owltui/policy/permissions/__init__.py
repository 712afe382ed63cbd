"""Permission modes and rules: which tool calls run freely, which ask the user, which are refused;
the bash half on parsed commands, protected paths, the rules file, and what "always" saves."""
