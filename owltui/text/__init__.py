"""Text that is safe to show and store, a leaf every layer may import: terminal sanitising,
faithful decoding of file bytes, and JSON text that cannot fail. Imports nothing else of OwlTUI."""
