"""The Anthropic Messages API provider: request shapes with cache breakpoints (``wire``), stream
parsing (``parser``) and the model (``model``)."""
