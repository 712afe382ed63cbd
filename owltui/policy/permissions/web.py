"""The ``fetch`` tool's verdict: which hosts it reaches freely, which ask, which are refused.

``fetch`` changes nothing locally (it is read-only), but what it reaches is the user's to choose:
a URL whose host an ``[allow] fetch`` rule names runs without asking (``"docs.python.org"``,
``"*.github.com"``: shell globs on the host, or on ``host:port``); a ``[deny] fetch`` rule refuses;
any other host asks, unless the mode is ``yolo``. "always" saves the host. A loopback, private or
link-local address (``localhost``, ``127.0.0.1``, ``10.x``, ``169.254.169.254``...) asks in every
mode, ``--yes`` included, unless a rule names that host exactly (no glob reaches it). A URL carrying
a user or password is refused (fetch sends no credentials), and so is every URL while the
sandbox's network is off for commands (``sandbox_network = false``). The same verdict is asked again
for each redirect to another host.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
import socket
from urllib.parse import urlsplit

from owltui.policy.permissions.model import Review
from owltui.policy.permissions.rules import RULES_FILE, Rules, escape_glob

__all__ = ["fetch_host", "is_private_host", "review_fetch"]

SCHEMES = ("http", "https")
_LEGACY_IPV4 = re.compile(r"[0-9a-fx.]+", re.IGNORECASE)


def fetch_host(url: str) -> tuple[str, int | None]:
    """The host (lower case, IDNA) and explicit port of an http(s) URL; ValueError with one line
    saying what is wrong otherwise."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a URL fetch can read: {exc}") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ValueError(f"only http:// and https:// URLs can be fetched, not {url!r}")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ValueError(f"the URL {url!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("the URL carries a user or password, and fetch sends no credentials")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        host = host.lower()
    return host, port


def is_private_host(host: str) -> bool:
    """A name or address that points into this machine or its network (loopback, private,
    link-local, unspecified, ``localhost`` and its subdomains). Only the literal host is judged:
    a public name that resolves to a private address is not seen here."""
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if not _LEGACY_IPV4.fullmatch(host):
            return False
        try:  # the forms the resolver also takes: 2130706433, 0x7f.1, 127.1
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return bool(
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_unspecified
        or address.is_reserved
    )


def _subjects(host: str, port: int | None) -> list[str]:
    return [host] if port is None else [host, f"{host}:{port}"]


def _matches(patterns: list[str], subjects: list[str], exact: bool) -> str | None:
    for pattern in patterns:
        p = pattern.strip().lower()
        if exact:
            if p in subjects or p in {escape_glob(s) for s in subjects}:
                return pattern
        elif p == "*" or any(fnmatch.fnmatchcase(s, p) for s in subjects):
            return pattern
    return None


def review_fetch(url: object, rules: Rules, mode: str, *, network: bool = True) -> Review:
    """The verdict on fetching ``url`` (see the module's docstring)."""
    if not network:
        return Review(
            "refuse",
            "Refused: the sandbox's network is off for commands (sandbox_network = false), so fetch "
            "is off too.",
        )
    if not isinstance(url, str) or not url.strip():
        return Review("refuse", "Refused: fetch needs a url.")
    try:
        host, port = fetch_host(url)
    except ValueError as exc:
        return Review("refuse", f"Refused: {exc}.")
    subjects = _subjects(host, port)
    denied = _matches(rules.deny.get("fetch", []), subjects, exact=False)
    if denied is not None:
        return Review("refuse", f"Refused: the deny rule fetch = {denied!r} in {RULES_FILE} blocks {host}.")
    allow = rules.allow.get("fetch", [])
    rule = [escape_glob(subjects[-1] if is_private_host(host) else host)]
    if is_private_host(host):
        if _matches(allow, subjects, exact=True) is not None:
            return Review("allow")
        return Review(
            "ask",
            f"fetch {url}: {host} is this machine or its network",
            forced=True,
            notes=[
                f"{host} is a local or private address; only a rule naming it exactly allows it, "
                f'e.g. [allow] fetch = ["{rule[0]}"] in {RULES_FILE}'
            ],
            rules=rule,
        )
    if mode == "yolo" or _matches(allow, subjects, exact=False) is not None:
        return Review("allow")
    return Review("ask", f"fetch {url}", notes=[f"no [allow] fetch rule names {host}"], rules=rule)
