"""The httpx client a model uses: ``LeanTransport`` under it, or httpx's own transport when a proxy may
apply (proxies stay httpx's business), with a cookie jar that skips responses setting no cookie."""

from __future__ import annotations

import os
from typing import Any

import httpx

from owltui.providers.http.transport import LeanTransport

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")


def proxy_configured(env: Any = None) -> bool:
    """Whether any proxy variable is set (httpx then decides, with NO_PROXY, where it applies)."""
    env = os.environ if env is None else env
    return any(env.get(name) or env.get(name.upper()) for name in PROXY_VARS)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, minus the work for responses that set no cookie: httpx builds a urllib
    request and response for every response to let the jar look for ``Set-Cookie`` (~60 µs)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


def make_client(timeout: httpx.Timeout, *, verify: bool) -> httpx.AsyncClient:
    """The client a model uses: the lean transport, or httpx's own when a proxy may apply."""
    if proxy_configured():
        client = httpx.AsyncClient(timeout=timeout, verify=verify)
    else:
        client = httpx.AsyncClient(timeout=timeout, transport=LeanTransport(verify=verify))
    jar = getattr(client, "_cookies", None)  # httpx has no public way to give the client its jar class
    if type(jar) is httpx.Cookies:
        client._cookies = _Cookies(jar.jar)
    return client
