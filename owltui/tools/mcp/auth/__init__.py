"""OAuth for HTTP MCP servers: the settings an entry's ``oauth`` key holds (``settings``), where
tokens and registered clients are kept (``store``), the loopback redirect and the browser
(``loopback``, ``browser``), the SDK's ``OAuthClientProvider`` fitted to them (``provider``), the
enterprise-managed ``identity_assertion`` grant (``identity``: the IdP's token exchange, then the
jwt-bearer grant), and ``/mcp login`` / ``/mcp logout`` (``login``).

Only ``settings`` is imported on the start-up path; the rest imports the MCP SDK.
"""
