"""The kernel sandbox: Landlock and namespaces set up in the forked child, the scrubbed
environment, and recognising a write the sandbox refused."""
