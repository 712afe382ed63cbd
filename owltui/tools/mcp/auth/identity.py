"""Enterprise-managed login (``grant = "identity_assertion"``, SEP-990), no browser and no user.

Leg 1 (``IdJagExchange``): the RFC 8693 token exchange at the enterprise IdP, turning the IdP's ID
token into an Identity Assertion JWT Authorization Grant (ID-JAG) for the MCP authorization server
(``audience``) and the MCP server (``resource``). Leg 2: the SDK's ``IdentityAssertionOAuthProvider``
(the RFC 7523 jwt-bearer grant at that authorization server), over the token store. The
authorization server is the configured ``issuer``; without one, the first authorization server the
MCP server's RFC 9728 protected-resource metadata names (``OwlIdentityAssertion``). Neither token
is ever logged or put in an error.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed
from pydantic import BaseModel, ValidationError

from owltui.tools.mcp.auth.errors import LoginFailed
from owltui.tools.mcp.auth.provider import ServerTokens
from owltui.tools.mcp.auth.settings import OAuthSettings
from owltui.tools.mcp.auth.store import Backend

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
EXCHANGE_TIMEOUT = 30.0  # seconds for the IdP's answer
REASON_CHARS = 200  # of the IdP's error_description quoted


class ExchangeAnswer(BaseModel):
    """The IdP's RFC 8693 answer: the ID-JAG is its ``access_token``."""

    access_token: str
    issued_token_type: str | None = None


class ExchangeRefusal(BaseModel):
    """The IdP's RFC 6749 error body."""

    error: str
    error_description: str | None = None


class IdJagExchange:
    """The ``assertion_provider(audience, resource)`` the SDK calls: one token exchange each time
    (an ID-JAG is short-lived and bound to one audience and resource)."""

    def __init__(self, settings: OAuthSettings, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        assert settings.idp_token_endpoint and settings.idp_client_id
        self.settings = settings
        self.endpoint = settings.idp_token_endpoint
        self.transport = transport

    def _form(self, audience: str, resource: str) -> dict[str, str]:
        try:
            subject = self.settings.id_token()
        except OSError as exc:
            raise LoginFailed(f"the IdP's ID token could not be read: {exc.strerror or exc}") from None
        if not subject:
            raise LoginFailed("the IdP's ID token is empty")
        assert self.settings.idp_client_id
        return {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject,
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": audience,
            "resource": resource,
            "client_id": self.settings.idp_client_id,
        }

    async def __call__(self, audience: str, resource: str) -> str:
        form = self._form(audience, resource)
        where = f"the identity provider's token exchange ({self.endpoint})"
        try:
            async with httpx2.AsyncClient(timeout=EXCHANGE_TIMEOUT, transport=self.transport) as http:
                response = await http.post(self.endpoint, data=form, headers={"Accept": "application/json"})
        except httpx2.HTTPError as exc:
            raise LoginFailed(f"{where} could not be reached: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise LoginFailed(f"{where} refused: {_refusal(response)}")
        try:
            answer = ExchangeAnswer.model_validate_json(response.content)
        except ValidationError:
            raise LoginFailed(f"{where} answered without an access_token (the ID-JAG)") from None
        if answer.issued_token_type not in (None, ID_JAG):
            raise LoginFailed(f"{where} issued a {answer.issued_token_type}, not an ID-JAG")
        return answer.access_token


def _refusal(response: httpx2.Response) -> str:
    """The IdP's error as a few words (its ``error`` and description, never the body as is)."""
    try:
        refusal = ExchangeRefusal.model_validate_json(response.content)
    except ValidationError:
        return f"HTTP {response.status_code}"
    words = " ".join((refusal.error_description or "").split())[:REASON_CHARS]
    return f"HTTP {response.status_code} {refusal.error}" + (f" ({words})" if words else "")


class OwlIdentityAssertion(IdentityAssertionOAuthProvider):
    """The SDK's jwt-bearer provider; when no issuer is configured, the issuer is found once, at
    the first 401, in the server's protected-resource metadata (then the SDK's flow runs)."""

    def __init__(self, server_url: str, tokens: ServerTokens, settings: OAuthSettings) -> None:
        assert settings.client_id and settings.client_secret
        method = settings.token_endpoint_auth_method
        super().__init__(
            server_url,
            tokens,
            settings.client_id,
            settings.client_secret,
            settings.issuer or server_url,  # a placeholder until discovered
            IdJagExchange(settings),
            scope=settings.scope,
            # RFC 8414's default for token_endpoint_auth_methods_supported
            token_endpoint_auth_method="client_secret_post"
            if method == "client_secret_post"
            else "client_secret_basic",
        )
        self.server_url = server_url
        self.issuer_known = settings.issuer is not None

    def set_issuer(self, issuer: str) -> None:
        self._issuer = issuer
        self._client.issuer = issuer
        self.issuer_known = True

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.issuer_known:
            return super()._auth_flow(request)
        return self._discovering_flow(request)

    async def _discovering_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code != 401:
            return
        if not self.issuer_known:
            hinted = extract_resource_metadata_from_www_auth(response)
            metadata: ProtectedResourceMetadata | None = None
            for url in build_protected_resource_metadata_discovery_urls(hinted, self.server_url):
                metadata = await handle_protected_resource_response(
                    (yield create_oauth_metadata_request(url))
                )
                if metadata is not None:
                    break
            self.set_issuer(self._issuer_from(metadata))
        flow = super()._auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            got = yield outgoing
            try:
                outgoing = await flow.asend(got)
            except StopAsyncIteration:
                return

    def _issuer_from(self, metadata: ProtectedResourceMetadata | None) -> str:
        if metadata is None:
            raise LoginFailed(
                "the server publishes no protected-resource metadata naming its authorization server:"
                ' set "issuer" in its "oauth" settings'
            )
        if not check_resource_allowed(self._resource, str(metadata.resource)):
            raise LoginFailed(
                f"the server's protected-resource metadata is for {metadata.resource}, not {self._resource}"
            )
        return str(metadata.authorization_servers[0])


def build_identity_auth(url: str, settings: OAuthSettings, backend: Backend) -> httpx2.Auth:
    """The provider of a ``grant = "identity_assertion"`` entry."""
    return OwlIdentityAssertion(url, ServerTokens(backend, url, settings, None), settings)
