"""A server entry's ``oauth`` key (no SDK import: parsed on the start-up path)::

    "oauth": {"client_id": "...", "client_secret": "${SECRET}", "scopes": ["read", "write"],
              "redirect_port": 8976, "client_metadata_url": "https://example.com/owltui.json",
              "grant": "authorization_code", "auto_login": false}

    "oauth": {"grant": "client_credentials", "client_id": "...", "client_secret": "${SECRET}"}

    "oauth": {"grant": "identity_assertion", "client_id": "...", "client_secret": "${SECRET}",
              "idp_token_endpoint": "https://idp.example.com/token", "idp_client_id": "...",
              "idp_id_token_file": "~/.cache/idp/id_token", "issuer": "https://auth.example.com"}

Every key is optional: without any, a server answering 401 is discovered and registered with
(client ID metadata document where offered, else dynamic registration). ``"oauth": false`` turns
OAuth off for the server (a static ``Authorization`` header does too).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

AUTO_LOGIN_ENV = "OWLTUI_MCP_AUTO_LOGIN"  # "1": every server may log in through the browser unasked


class OAuthSettings(BaseModel):
    """How OwlTUI logs in to one server. ``client_id`` / ``client_secret``: a client registered
        with the authorization server beforehand (no registration then); ``scopes``: asked for instead
        of what the server advertises; ``redirect_port``: the loopback port (default: any free one);
        ``client_metadata_url``: this client's metadata document (an https URL), used as its client id
        where the server supports that; ``grant``: ``client_credentials`` for machine-to-machine
        servers (needs ``client_id`` and ``client_secret``, or a key signing ``private_key_jwt``
    assertions: ``private_key_file`` / ``private_key_pem`` with ``signing_algorithm``, default
    RS256; no browser); ``auto_login``: log in through
        the browser when the server asks, also at start-up and in print mode (else ``/mcp login``).
    ``grant = "identity_assertion"``: enterprise-managed login (no browser): the IdP's ID token
    (``idp_id_token`` / ``idp_id_token_file``) exchanged at ``idp_token_endpoint`` (as
    ``idp_client_id``) for an ID-JAG, presented with ``client_id`` / ``client_secret`` to the MCP
    authorization server ``issuer`` (default: the first one the server's protected-resource
    metadata names)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    client_id: str | None = Field(default=None, min_length=1)
    client_secret: str | None = None
    scopes: list[str] | None = None
    redirect_port: int | None = Field(default=None, ge=1, le=65535)
    client_metadata_url: str | None = None
    grant: Literal["authorization_code", "client_credentials", "identity_assertion"] = "authorization_code"
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] | None = None
    private_key_pem: str | None = None
    private_key_file: str | None = None
    signing_algorithm: str = "RS256"
    auto_login: bool = False
    issuer: str | None = Field(default=None, min_length=1)
    idp_token_endpoint: str | None = Field(default=None, min_length=1)
    idp_client_id: str | None = Field(default=None, min_length=1)
    idp_id_token: str | None = Field(default=None, min_length=1)
    idp_id_token_file: str | None = Field(default=None, min_length=1)

    @field_validator("scopes", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return value.split() if isinstance(value, str) else value

    @field_validator("client_metadata_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("https://"):
            raise ValueError("client_metadata_url must be an https:// URL")
        return value

    def checked(self) -> OAuthSettings:
        signs = bool(self.private_key_pem or self.private_key_file)
        if self.grant == "client_credentials" and not (self.client_id and (self.client_secret or signs)):
            raise ValueError(
                'grant "client_credentials" needs client_id and client_secret (or private_key_file)'
            )
        if self.grant == "identity_assertion":
            needs = {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "idp_token_endpoint": self.idp_token_endpoint,
                "idp_client_id": self.idp_client_id,
            }
            missing = [k for k, v in needs.items() if not v]
            if not (self.idp_id_token or self.idp_id_token_file):
                missing.append("idp_id_token (or idp_id_token_file)")
            if missing:
                raise ValueError(f'grant "identity_assertion" needs {", ".join(missing)}')
            if self.token_endpoint_auth_method == "none":
                raise ValueError(
                    'grant "identity_assertion" needs a client secret: not token_endpoint_auth_method "none"'
                )
        return self

    def id_token(self) -> str:
        """The enterprise IdP's ID token (``idp_id_token_file`` read now: a file a login tool
        refreshes is read afresh at each exchange)."""
        if self.idp_id_token:
            return self.idp_id_token
        assert self.idp_id_token_file
        return Path(os.path.expanduser(self.idp_id_token_file)).read_text(encoding="utf-8").strip()

    def private_key(self) -> str | None:
        """The PEM key signing ``private_key_jwt`` assertions (``private_key_file`` read now)."""
        if self.private_key_pem:
            return self.private_key_pem
        if self.private_key_file:
            return Path(os.path.expanduser(self.private_key_file)).read_text(encoding="utf-8")
        return None

    @property
    def scope(self) -> str | None:
        return " ".join(self.scopes) if self.scopes else None


def parse_oauth(raw: object) -> OAuthSettings:
    """The ``oauth`` value: ``false`` (off), ``true`` / absent (defaults), or an object."""
    if raw is None or raw is True:
        return OAuthSettings()
    if raw is False:
        return OAuthSettings(enabled=False)
    if not isinstance(raw, dict):
        raise ValueError("oauth must be an object, true or false")
    try:
        return OAuthSettings.model_validate(raw).checked()
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        if callable(errors):
            first = errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"oauth{'.' + where if where else ''}: {first['msg']}") from None
        raise ValueError(f"oauth: {exc}") from None
