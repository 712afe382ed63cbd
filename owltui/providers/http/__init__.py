"""The HTTP layer under both providers: the streaming model base (one POST, retries, idle
timeout), the lean HTTP/1.1 transport under httpx, the SSE decoder, the wire cache, the retry
policy and the provider errors."""
