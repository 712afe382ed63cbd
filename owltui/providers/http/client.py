"""The httpx client a model uses: ``LeanTransport`` for every request but those a proxy variable sends
through a proxy, decided per request (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` mount httpx's own
transport for their scheme; hosts ``NO_PROXY`` exempts stay on the lean path), and a cookie jar that
skips responses setting no cookie.

A proxy variable that cannot be used (a malformed URL, an unknown scheme, SOCKS without ``socksio``)
does not break the client: the requests it would carry fail with one line naming the variable, and
the others go on. A proxy that refuses our credentials (407) fails the same way: retrying cannot heal it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping

import httpx

from owltui.providers.http.errors import NetworkSetupError
from owltui.providers.http.transport import LeanTransport

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
_PASSWORD = re.compile(r"(//[^/@:]*):[^/@]*@")


def env_value(env: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """The variable ``name`` as set (lower case first, as urllib and curl read it) and its value."""
    for var in (name, name.upper()):
        value = env.get(var, "").strip()
        if value:
            return var, value
    return None


def proxy_configured(env: Mapping[str, str] | None = None) -> bool:
    """Whether any proxy variable is set (``NO_PROXY`` then decides, per host, where it applies)."""
    env = os.environ if env is None else env
    return any(env_value(env, name) for name in PROXY_VARS)


def shown_proxy(url: str) -> str:
    """A proxy URL fit for a message: its password hidden."""
    return _PASSWORD.sub(r"\1:***@", url)


def _exempt_pattern(host: str) -> str:
    """The httpx mount pattern of one ``NO_PROXY`` entry (the way httpx reads them: curl's rules)."""
    if "://" in host:
        return host
    bare = host.strip("[]")
    try:
        address = ipaddress.ip_address(bare.split("/", 1)[0])
    except ValueError:
        address = None
    if address is not None:
        return f"all://[{bare}]" if address.version == 6 else f"all://{bare}"
    if host.lower() == "localhost":
        return "all://localhost"
    return f"all://*{host}"  # ".example.com" or "example.com": the domain and its subdomains


class _ProxyTransport(httpx.AsyncBaseTransport):
    """httpx's transport through the proxy one variable names, built on its first request (a
    variable no request uses costs nothing, not even the CA bundle); its failures name the variable."""

    def __init__(self, var: str, url: str, verify: bool) -> None:
        self.var = var
        self.url = url
        self.verify = verify
        self.where = f"the proxy in {var} ({shown_proxy(url)})"
        self.inner: httpx.AsyncHTTPTransport | None = None

    def _build(self) -> httpx.AsyncHTTPTransport:
        shown = f"{self.var}={shown_proxy(self.url)}"
        try:
            proxy = httpx.Proxy(self.url if "://" in self.url else f"http://{self.url}")
            return httpx.AsyncHTTPTransport(verify=self.verify, proxy=proxy)
        except ImportError:
            raise NetworkSetupError(
                f"{shown} is a SOCKS proxy, which needs the socksio package (pip install 'httpx[socks]')"
            ) from None
        except Exception as exc:  # httpx.InvalidURL, ValueError (an unknown scheme), TypeError
            raise NetworkSetupError(
                f"{shown} is not a proxy URL OwlTUI can use ({exc}); expected "
                "http://, https://, socks5:// or socks5h://host:port"
            ) from None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.inner is None:
            self.inner = self._build()
        try:
            return await self.inner.handle_async_request(request)
        except httpx.ProxyError as exc:
            text = str(exc)
            if text.startswith(("401", "407")) or "authentication" in text.lower():
                raise NetworkSetupError(
                    f"{self.where} refused the connection ({text}): put the credentials in {self.var} "
                    "as http://user:password@host:port"
                ) from exc
            raise httpx.ProxyError(f"{text} ({self.where})") from exc
        except httpx.ConnectError as exc:
            raise httpx.ConnectError(f"{exc} (through {self.where})") from exc

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()


def proxy_mounts(
    env: Mapping[str, str] | None = None, *, verify: bool = True
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """httpx mounts for the proxy variables: a proxy transport per scheme they name, and None (the
    client's own transport: the lean one) for every host ``NO_PROXY`` exempts."""
    env = os.environ if env is None else env
    named = [(name.removesuffix("_proxy"), env_value(env, name)) for name in PROXY_VARS]
    if not any(found for _, found in named):
        return {}
    no_proxy = env_value(env, "no_proxy")
    exempt = [host.strip() for host in (no_proxy[1] if no_proxy else "").split(",") if host.strip()]
    if "*" in exempt:
        return {}
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    for scheme, found in named:
        if found is not None:
            mounts[f"{scheme}://"] = _ProxyTransport(found[0], found[1], verify)
    for host in exempt:
        mounts[_exempt_pattern(host)] = None
    return mounts


def routes_lean(client: httpx.AsyncClient, url: httpx.URL) -> bool:
    """Whether a request to ``url`` goes through the lean transport (it ends abandoned responses itself)."""
    pick = getattr(client, "_transport_for_url", None)  # httpx has no public name for it
    transport = pick(url) if pick is not None else getattr(client, "_transport", None)
    return isinstance(transport, LeanTransport)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, minus the work for responses that set no cookie: httpx builds a urllib
    request and response for every response to let the jar look for ``Set-Cookie`` (~60 µs)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


def make_client(timeout: httpx.Timeout, *, verify: bool) -> httpx.AsyncClient:
    """The client a model uses: the lean transport, with a proxy mounted where the variables say."""
    client = httpx.AsyncClient(
        timeout=timeout, transport=LeanTransport(verify=verify), mounts=proxy_mounts(verify=verify)
    )
    jar = getattr(client, "_cookies", None)  # httpx has no public way to give the client its jar class
    if type(jar) is httpx.Cookies:
        client._cookies = _Cookies(jar.jar)
    return client
