"""What touches the MCP SDK: the client over a transport, listing tools, errors in one sentence.

Imported in a worker thread by ``McpSource.start`` (the SDK costs about a second to import), never
on the start-up path. The SDK's own log records are kept off the terminal (a NullHandler on the
``mcp`` logger): what matters reaches the user as one warning per server.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field, ValidationError

from owltui.tools.mcp.config import ServerSpec
from owltui.tools.mcp.launch import Launch
from owltui.tools.mcp.requests.handlers import McpRequests
from owltui.tools.mcp.schema import SchemaProblem, check_schema
from owltui.tools.mcp.stdio import StdioTransport

logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("httpx2").addHandler(logging.NullHandler())

CLIENT_INFO = mcp_types.Implementation(name="owltui", version="0.1.0")
MAX_PAGES = 100
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)

__all__ = ["describe_error", "http_transport", "list_all_tools", "make_client", "stdio_transport"]


def stdio_transport(spec: ServerSpec, env: dict[str, str], launch: Launch) -> StdioTransport:
    started = launch.start(spec, env)
    return StdioTransport(started.argv, started.env, started.cwd, started.preexec)


class HttpTransport:
    """Streamable HTTP with the configured headers on every request, and OAuth (``auth``) for a
    server that asks for it and has no static ``Authorization`` header. Remembers the last HTTP
    error status (the SDK turns a 401 into a generic JSON-RPC error) for the failure message, and
    ``login_needed``: the line saying the server needs ``/mcp login`` (no login may run now)."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        spec: ServerSpec | None = None,
        env: Mapping[str, str] | None = None,
        show: Callable[[str], None] | None = None,
        may_log_in: bool | None = None,
    ) -> None:
        """``may_log_in``: a browser login may run now (default: the entry's ``oauth.auto_login``
        or ``OWLTUI_MCP_AUTO_LOGIN=1``); ``show``: where the login URL is shown."""
        self.url = url
        self.headers = headers
        self.spec = spec
        self.env: Mapping[str, str] = env if env is not None else os.environ
        self.show = show or (lambda _line: None)
        self.may_log_in = may_log_in
        self.http_error: str | None = None
        self.login_needed: str | None = None
        self._stack: AsyncExitStack | None = None

    async def _seen(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.http_error = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()

    def _needs_login(self, line: str) -> None:
        self.login_needed = line

    async def _auth(self, stack: AsyncExitStack) -> httpx2.Auth | None:
        spec = self.spec
        oauth = spec.oauth if spec is not None else None
        if spec is None or oauth is None or not oauth.enabled:
            return None
        if any(k.lower() == "authorization" for k in self.headers):
            return None  # a static token is the server's auth
        from owltui.tools.mcp.auth.connect import open_auth

        return await open_auth(spec, self.env, stack, self.show, self._needs_login, self.may_log_in)

    async def __aenter__(self) -> Any:
        async with AsyncExitStack() as stack:
            auth = await self._auth(stack)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=self.headers,
                    timeout=HTTP_TIMEOUT,
                    auth=auth,
                    event_hooks={"response": [self._seen]},
                )
            )
            streams = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
            self._stack = stack.pop_all()
        return streams

    async def __aexit__(self, *exc: Any) -> bool | None:
        stack, self._stack = self._stack, None
        return await stack.__aexit__(*exc) if stack is not None else None


def http_transport(
    spec: ServerSpec, env: Mapping[str, str], show: Callable[[str], None] | None = None
) -> HttpTransport:
    """The server's transport; ``show``: where a login URL is shown (see ``auth``)."""
    return HttpTransport(spec.url, spec.headers, spec, env, show)


def make_client(
    transport: Any,
    on_message: Callable[[Any], Awaitable[None]],
    requests: McpRequests | None = None,
    server: str = "",
) -> Client:
    """A client that negotiates the protocol version (``server/discover``, else ``initialize``).
    With ``requests``: it answers elicitation and roots (advertised), and refuses sampling (not
    advertised) with a reason the server sees."""
    handler: Any = on_message
    if requests is None:
        return Client(transport, mode="auto", cache=None, client_info=CLIENT_INFO, message_handler=handler)
    return _AnsweringClient(
        transport,
        mode="auto",
        cache=None,
        client_info=CLIENT_INFO,
        message_handler=handler,
        refuse_sampling=requests.refuse_sampling,
        **requests.callbacks(server),
    )


class _AnsweringClient(Client):
    """A client whose session refuses sampling with OwlTUI's reason while not advertising it (the
    SDK advertises sampling whenever it is given a sampling callback)."""

    def __init__(self, *args: Any, refuse_sampling: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refuse_sampling = refuse_sampling

    async def __aenter__(self) -> Any:
        entered = await super().__aenter__()
        session: Any = self.session
        build = getattr(session, "_build_capabilities", None)
        if build is not None and hasattr(session, "_sampling_callback"):

            def capabilities(version: str) -> mcp_types.ClientCapabilities:
                built: mcp_types.ClientCapabilities = build(version)
                return built.model_copy(update={"sampling": None})

            session._build_capabilities = capabilities
            session._sampling_callback = self._refuse_sampling
        return entered


class _LenientList(BaseModel):
    """``tools/list`` without the SDK's per-tool checks (one bad tool fails the SDK's whole list)."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    next_cursor: str | None = Field(None, alias="nextCursor")


def _admit(raw: dict[str, Any], problems: list[tuple[str, str]]) -> mcp_types.Tool | None:
    name = str(raw.get("name", "?"))
    try:
        raw = {**raw, "inputSchema": check_schema(raw.get("inputSchema"))}
    except SchemaProblem as problem:
        problems.append((name, str(problem)))
        return None
    try:
        return mcp_types.Tool.model_validate(raw, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        problems.append((name, f"its definition is invalid ({where}: {first['msg']})"))
        return None


async def _list_loosely(client: Client, cursor: str | None, strict: ValidationError) -> _LenientList:
    """One ``tools/list`` page without the session's whole-result check (which is what rejected the
    page). Uses the session's dispatcher directly, as ``send_request`` does; if this SDK version does
    not have it, the strict error stands."""
    session: Any = client.session
    params = {"cursor": cursor} if cursor else None
    data: dict[str, Any] = {"method": "tools/list", "params": params}
    opts: dict[str, Any] = {}
    try:
        session._stamp(data, opts)
        raw = await session._dispatcher.send_raw_request("tools/list", data.get("params"), opts)
    except AttributeError:
        raise strict from None
    return _LenientList.model_validate(raw)


def _absorb(client: Client, tools: list[mcp_types.Tool], complete: bool) -> None:
    """Tell the session about tools listed the loose way, as its own listing would (it checks
    results against their output schemas, and lists again for a tool it does not know)."""
    session: Any = client.session
    try:
        session._absorb_tool_listing(mcp_types.ListToolsResult(tools=tools), complete=complete)
    except AttributeError:
        pass


async def list_all_tools(client: Client) -> tuple[list[mcp_types.Tool], list[tuple[str, str]]]:
    """Every page of ``tools/list``, and ``(tool, why)`` for tools left out. The SDK's own listing
    first; when it rejects the list (a tool whose schema breaks the protocol's rules), the list again,
    read tool by tool, so only the bad tools are left out."""
    tools: list[mcp_types.Tool] = []
    problems: list[tuple[str, str]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        try:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
        except ValidationError as strict:
            loose = await _list_loosely(client, cursor, strict)
            admitted = [t for raw in loose.tools if (t := _admit(raw, problems)) is not None]
            _absorb(client, admitted, complete=cursor is None and not loose.next_cursor)
            tools.extend(admitted)
            cursor = loose.next_cursor
        if not cursor:
            break
    return tools, problems


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if isinstance(e, Exception)]
        exc = inner[0] if inner else exc.exceptions[0]
    return exc


def describe_error(exc: BaseException, spec: ServerSpec) -> str:
    """Why the server failed, in one line (no headers: they may hold secrets)."""
    exc = _leaf(exc)
    if isinstance(exc, FileNotFoundError) and spec.transport == "stdio":
        where = f" in {spec.cwd}" if spec.cwd is not None and exc.filename == str(spec.cwd) else ""
        return f"command not found: {spec.command}{where}"
    if isinstance(exc, PermissionError) and spec.transport == "stdio":
        return f"cannot run {spec.command}: permission denied"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
        return f"it sent a malformed {exc.title} ({'.'.join(str(p) for p in first['loc'])}: {first['msg']})"
    if isinstance(exc, MCPError):
        if exc.code == mcp_types.CONNECTION_CLOSED:
            return "the connection closed before the server answered"
        return f"{exc.message} (MCP error {exc.code})"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} {exc.response.reason_phrase} from {spec.url}"
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        return f"cannot connect to {spec.url} ({exc or type(exc).__name__})"
    if isinstance(exc, httpx2.HTTPError):
        return f"{type(exc).__name__} talking to {spec.url}: {exc}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
