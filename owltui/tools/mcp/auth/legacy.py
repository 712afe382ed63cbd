"""The 2025-03-26 (no protected-resource metadata) discovery path, widened by one case the SDK
refuses: authorization-server metadata at the MCP server's root well-known whose ``issuer`` is
the same origin with a path (``http://host:port/oauth``). The SDK expects the bare origin there
and rejects any other issuer (RFC 8414 section 3.3); a server that publishes no resource metadata
is its own authorization server, so an issuer on its own origin (scheme, host, port) names that
server and is accepted. An issuer on any other origin is still refused, by the SDK's own check.

How: when the flow's last protected-resource probe has failed, the root metadata is fetched once,
before the SDK decides which issuer it expects; ``_expected_issuer`` then answers that same-origin
issuer, and the SDK's own metadata request is answered with the response already fetched.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlparse

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    handle_auth_metadata_response,
    handle_protected_resource_response,
)


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlparse(url)
    default = {"http": 80, "https": 443}.get(parsed.scheme.lower())
    return parsed.scheme.lower(), (parsed.hostname or "").lower(), parsed.port or default


def same_origin(issuer: str, server_url: str) -> bool:
    """Whether ``issuer`` has the scheme, host and port of ``server_url``."""
    return _origin(issuer) == _origin(server_url)


def _challenged(response: httpx2.Response) -> bool:
    return response.status_code == 401 or (
        response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"
    )


class LegacyIssuer:
    """Mixed in before ``OAuthClientProvider``: the same-origin issuer on the legacy path."""

    context: Any
    _legacy_issuer: str | None = None

    def _expected_issuer(self) -> str:
        if self.context.auth_server_url is None and self._legacy_issuer is not None:
            return self._legacy_issuer
        return super()._expected_issuer()  # type: ignore[misc,no-any-return]

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        return self._legacy_flow(request, super()._auth_flow(request))  # type: ignore[misc]

    async def _legacy_flow(
        self, request: httpx2.Request, flow: AsyncGenerator[httpx2.Request, httpx2.Response]
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        probes: list[str] = []
        server_error = False
        fetched: httpx2.Response | None = None
        fetched_url = ""
        try:
            outgoing = await flow.__anext__()
            while True:
                url = str(outgoing.url)
                if fetched is not None and url == fetched_url and outgoing.method == "GET":
                    response, fetched = fetched, None
                else:
                    response = yield outgoing
                if outgoing is request and _challenged(response):
                    server = self.context.server_url
                    found_at = build_protected_resource_metadata_discovery_urls(
                        extract_resource_metadata_from_www_auth(response), server
                    )
                    probes = [str(httpx2.URL(u)) for u in found_at]
                    server_error = False
                elif probes and url in probes:
                    server_error = server_error or response.status_code >= 500 or response.status_code == 429
                    found = await handle_protected_resource_response(response)
                    if found is not None:
                        probes = []
                    elif url == probes[-1] and not server_error:
                        probes = []
                        probe = self._legacy_metadata_request()
                        fetched_url = str(probe.url)
                        fetched = yield probe
                        await self._learn(fetched)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _legacy_metadata_request(self) -> httpx2.Request:
        (url,) = build_oauth_authorization_server_metadata_discovery_urls(None, self.context.server_url)
        return create_oauth_metadata_request(url)

    async def _learn(self, response: httpx2.Response) -> None:
        """Keep the metadata's issuer when it is on the MCP server's own origin."""
        _ok, metadata = await handle_auth_metadata_response(response)
        self._legacy_issuer = None
        if metadata is not None and same_origin(str(metadata.issuer), self.context.server_url):
            self._legacy_issuer = str(metadata.issuer)
