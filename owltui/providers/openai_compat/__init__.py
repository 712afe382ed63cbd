"""The OpenAI-compatible Chat Completions provider: request shapes (``wire``), stream parsing
(``parser``) and the model (``model``)."""
