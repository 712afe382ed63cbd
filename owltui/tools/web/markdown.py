"""A fetched body as text the model can read: HTML as Markdown (markdownify, on BeautifulSoup with
the standard library's parser), text and JSON as they are, anything else refused by its type.

What a page shows is kept; what it runs or hides is dropped (scripts, styles, ``<head>`` but its
title, forms' hidden inputs, SVG, iframes). Links and images are made absolute against the page's
URL, so the model can fetch what a page points to. Blank runs are squeezed to one empty line.
"""

from __future__ import annotations

import re
import warnings
from typing import Literal
from urllib.parse import urljoin

Kind = Literal["html", "text", "binary"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
        "application/csv",
        "image/svg+xml",
    }
)
DROPPED = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas")
_BLANKS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


def media_type(content_type: str | None) -> str:
    """``text/html; charset=utf-8`` → ``text/html`` (empty when no type was sent)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def kind_of(mtype: str, head: bytes) -> Kind:
    """What the body is, by its media type; with none sent, by its first bytes (a NUL byte: binary)."""
    if mtype in HTML_TYPES:
        return "html"
    if mtype.startswith("text/") or mtype in TEXT_TYPES or mtype.endswith(("+json", "+xml")):
        return "text"
    if mtype:
        return "binary"
    if b"\x00" in head:
        return "binary"
    start = head.lstrip()[:256].lower()
    return "html" if start.startswith((b"<!doctype html", b"<html")) else "text"


def decode(body: bytes, charset: str | None) -> str:
    """Text of a body: its declared charset when Python knows it, else UTF-8; never fails."""
    for name in (charset, "utf-8"):
        if name:
            try:
                return body.decode(name, errors="replace")
            except LookupError:
                continue
    return body.decode("utf-8", errors="replace")


def html_to_markdown(body: bytes, charset: str | None, base_url: str) -> str:
    """The page as Markdown, its title as the first heading when the body has none."""
    from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning
    from markdownify import ATX, STRIP, MarkdownConverter

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else ""
    for tag in soup.find_all(["head", *DROPPED]):
        tag.decompose()
    for tag in soup.find_all("input", attrs={"type": "hidden"}):
        tag.decompose()
    for name, attr in (("a", "href"), ("img", "src")):
        for tag in soup.find_all(name):
            value = tag.get(attr) if isinstance(tag, Tag) else None
            if isinstance(tag, Tag) and isinstance(value, str) and not value.startswith("#"):
                tag[attr] = urljoin(base_url, value)
    text = MarkdownConverter(heading_style=ATX, bullets="-", strip_document=STRIP).convert_soup(soup)
    text = _BLANKS.sub("\n\n", text).strip()
    if title and not text.startswith("# "):
        text = f"# {title}\n\n{text}" if text else f"# {title}"
    return text


def to_text(kind: Kind, body: bytes, charset: str | None, base_url: str) -> str:
    """The body as the model reads it (``kind`` is ``html`` or ``text``)."""
    if kind == "html":
        return html_to_markdown(body, charset, base_url)
    return decode(body, charset)
