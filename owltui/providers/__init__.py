"""Model providers: Anthropic Messages, OpenAI-compatible Chat Completions and the offline demo
model, on the shared HTTP layer in ``http``. The CLI and session layers use
``resolve.resolve_provider`` and ``resolve.make_model``. Nothing is imported here, so
``owltui.providers.table`` loads without httpx."""
