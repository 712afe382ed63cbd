"""File helpers, a leaf every layer may import: whether a path is inside a root, resolving a
user-given path, and atomic writes. Imports nothing else of OwlTUI."""
