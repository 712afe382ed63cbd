"""The SDK's ``OAuthClientProvider`` (discovery, registration, PKCE, resource indicators, scope
step-up, refresh) fitted to OwlTUI: tokens and clients from ``store`` (with the stored absolute
expiry, so an access token that expired while OwlTUI was closed is refreshed, not re-authorized),
pre-registered clients and the client-credentials grant from the entry's ``oauth`` settings, the
loopback redirect and the browser when a login may run, and ``LoginRequired`` when it may not.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from owltui.tools.mcp.auth.browser import send_user_to
from owltui.tools.mcp.auth.errors import LoginFailed, LoginRequired
from owltui.tools.mcp.auth.legacy import LegacyIssuer
from owltui.tools.mcp.auth.loopback import PATH, Loopback
from owltui.tools.mcp.auth.settings import OAuthSettings
from owltui.tools.mcp.auth.store import Backend

LOGIN_WITHIN = 300.0  # seconds the user has to finish in the browser
CLIENT_NAME = "OwlTUI"
Show = Callable[[str], None]


def login_line(server: str, again: bool = False) -> str:
    what = "needs login again (its stored login was rejected)" if again else "needs login"
    return f"MCP server '{server}' {what}: run /mcp login {server}"


class ServerTokens:
    """The SDK's ``TokenStorage`` for one server URL over a ``Backend``."""

    def __init__(self, backend: Backend, url: str, settings: OAuthSettings, redirect_uri: str | None) -> None:
        self.backend = backend
        self.url = url
        self.settings = settings
        self.redirect_uri = redirect_uri
        self.entry: dict[str, Any] = dict(backend.get(url) or {})

    @property
    def has_tokens(self) -> bool:
        return isinstance(self.entry.get("tokens"), dict)

    @property
    def expires_at(self) -> float | None:
        value = self.entry.get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def _save(self) -> None:
        self.backend.put(self.url, self.entry)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.entry.get("tokens")
        try:
            return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.entry["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.entry["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self._save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        s = self.settings
        if s.client_id:
            return OAuthClientInformationFull(
                client_id=s.client_id,
                client_secret=s.client_secret,
                redirect_uris=[self.redirect_uri] if self.redirect_uri else None,  # type: ignore[list-item]
                token_endpoint_auth_method=s.token_endpoint_auth_method
                or ("client_secret_basic" if s.client_secret else "none"),
                scope=s.scope,
            )
        raw = self.entry.get("client")
        try:
            info = OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None
        uris = [str(u) for u in info.redirect_uris or []] if info is not None else []
        if info is not None and self.redirect_uri and uris and self.redirect_uri not in uris:
            return None  # registered for another loopback port: register again
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.settings.client_id:
            return  # the configured client is not stored
        self.entry["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._save()

    def stored_port(self) -> int | None:
        """The loopback port the stored client was registered with (reused: no new registration)."""
        raw = self.entry.get("client")
        uris = raw.get("redirect_uris") if isinstance(raw, dict) else None
        for uri in uris or []:
            parsed = httpx2.URL(str(uri))
            if parsed.host == "127.0.0.1" and parsed.port and parsed.path == PATH:
                return int(parsed.port)
        return None


def with_scope(authorization_url: str, scope: str | None) -> str:
    """The authorization URL asking for the configured ``scope`` (the SDK picks the scopes from
    what the server advertises; a configured list takes their place)."""
    if not scope:
        return authorization_url
    return str(httpx2.URL(authorization_url).copy_set_param("scope", scope))


class _Fitted(LegacyIssuer):
    """What OwlTUI adds to either SDK provider (mixed in before it)."""

    tokens: ServerTokens
    may_log_in: bool
    server: str
    on_login_needed: Callable[[str], None]
    context: Any

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc]
        self.context.token_expiry_time = self.tokens.expires_at

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self.may_log_in and not self.tokens.has_tokens:
            return self._login_needed_flow(request)
        return super()._auth_flow(request)

    async def _login_needed_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        refused = response.status_code == 401 or (
            response.status_code == 403
            and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        )
        if refused:
            line = login_line(self.server)
            self.on_login_needed(line)
            raise LoginRequired(line)


class OwlOAuth(_Fitted, OAuthClientProvider):
    """Authorization code with PKCE."""


class OwlClientCredentials(_Fitted, ClientCredentialsOAuthProvider):
    """The client-credentials grant (no user, no browser)."""


class OwlPrivateKeyJWT(_Fitted, PrivateKeyJWTOAuthProvider):
    """The client-credentials grant with a signed ``private_key_jwt`` assertion."""


def build_auth(
    server: str,
    url: str,
    settings: OAuthSettings,
    backend: Backend,
    *,
    loopback: Loopback | None,
    show: Show,
    on_login_needed: Callable[[str], None],
) -> httpx2.Auth:
    """The provider for one connection; ``loopback``: listening when a login may run now."""
    redirect_uri = loopback.redirect_uri if loopback is not None else None
    tokens = ServerTokens(backend, url, settings, redirect_uri)
    provider: _Fitted
    key = settings.private_key() if settings.grant == "client_credentials" else None
    if key is not None:
        assert settings.client_id
        signer = SignedJWTParameters(
            issuer=settings.client_id,
            subject=settings.client_id,
            signing_key=key,
            signing_algorithm=settings.signing_algorithm,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            provider = OwlPrivateKeyJWT(
                url, tokens, settings.client_id, signer.create_assertion_provider(), scope=settings.scope
            )
        provider.may_log_in = True
    elif settings.grant == "client_credentials":
        assert settings.client_id and settings.client_secret
        method = settings.token_endpoint_auth_method
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            provider = OwlClientCredentials(
                url,
                tokens,
                settings.client_id,
                settings.client_secret,
                token_endpoint_auth_method="client_secret_post"
                if method == "client_secret_post"
                else "client_secret_basic",
                scope=settings.scope,
            )
        provider.may_log_in = True
    else:
        had_tokens = tokens.has_tokens

        async def redirect(authorization_url: str) -> None:
            if loopback is None:
                line = login_line(server, again=had_tokens)
                on_login_needed(line)
                raise LoginRequired(line)
            await send_user_to(with_scope(authorization_url, settings.scope), show, server)

        async def callback() -> AuthorizationCodeResult:
            assert loopback is not None
            with anyio.move_on_after(LOGIN_WITHIN):
                got = await loopback.receive()
                if got.error:
                    raise LoginFailed(f"the authorization server refused the login: {got.error}")
                if not got.code:
                    raise LoginFailed("the redirect carried no authorization code")
                return AuthorizationCodeResult(code=got.code, state=got.state, iss=got.iss)
            raise LoginFailed(f"the browser did not come back within {LOGIN_WITHIN:g} s")

        metadata = OAuthClientMetadata(
            redirect_uris=[redirect_uri or f"http://127.0.0.1{PATH}"],  # type: ignore[list-item]
            client_name=CLIENT_NAME,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope=settings.scope,
        )
        provider = OwlOAuth(url, metadata, tokens, redirect, callback, settings.client_metadata_url)
        provider.may_log_in = loopback is not None
    provider.tokens = tokens
    provider.server = server
    provider.on_login_needed = on_login_needed
    assert isinstance(provider, httpx2.Auth)
    return provider
