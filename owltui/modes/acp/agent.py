"""The SDK ``Agent``: what OwlTUI answers to each ACP method.

``initialize`` says protocol version 1 (to any version asked), what OwlTUI can do and its ``env``
auth method; ``session/new`` builds a runtime for the cwd with the command line's options as
defaults (the client's MCP servers approved), ``session/load`` builds one on a saved session and
replays its branch before answering; ``session/list`` and ``session/close``; ``session/prompt`` and
``session/cancel`` go to the session (``session.AcpSession``); ``session/set_config_option`` and the
``_owltui/*`` extension methods go through the command layer (``config_options``, ``extensions``).
Several sessions live in one process, each with its own workspace, policy, sandbox and queue.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    ClientCapabilities,
    CloseSessionResponse,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
)
from anyio.abc import TaskGroup

from owltui import __version__
from owltui.agent.model import Model
from owltui.modes.acp.config_options import set_config_option
from owltui.modes.acp.extensions import EXTENSIONS, call_extension
from owltui.modes.acp.mcp_servers import ask_project, client_config
from owltui.modes.acp.session import AcpFront, AcpSession
from owltui.session.commands.layer import Commands
from owltui.session.runtime.failures import KEY_VARIABLES, for_the_user, missing_key
from owltui.session.runtime.options import Options

PROTOCOL_VERSION = 1
NOTIFICATIONS = ("_owltui/queue", "_owltui/paused", "_owltui/job")
ModelFor = Callable[[Path], Model | None]


def _error(exc: Exception) -> RequestError:
    """A runtime that cannot be built, as the client is told: a missing key is ``auth_required``."""
    text = str(exc)
    if missing_key(exc):
        return RequestError.auth_required({"message": text})
    if for_the_user(exc):
        return RequestError.invalid_params({"message": text})
    return RequestError.internal_error({"message": f"{type(exc).__name__}: {text}"})


def _workspace(cwd: str) -> Path:
    """A session's cwd: an existing absolute directory, or ``invalid_params``."""
    workspace = Path(cwd)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise RequestError.invalid_params({"message": f"cwd must be an existing absolute directory: {cwd}"})
    return workspace


class OwlAgent:
    """The connection's agent: its sessions, by id."""

    def __init__(
        self,
        defaults: Options,
        tg: TaskGroup,
        *,
        env: Mapping[str, str] | None = None,
        model_for: ModelFor | None = None,
    ) -> None:
        self.defaults = defaults
        self.tg = tg
        self.env = dict(os.environ if env is None else env)
        self.model_for = model_for
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Client | None = None
        self.caps = ClientCapabilities()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    def observe(self, event: StreamEvent) -> None:
        """A stream observer: the ``session/new`` response is out, so the session may talk."""
        if event.direction is not StreamDirection.OUTGOING:
            return
        message = event.message
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            session = self.sessions.get(result["sessionId"])
            if session is not None:
                session.open()

    # ---- initialize and auth ---------------------------------------------------------------------
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.caps = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=Implementation(name="owltui", title="OwlTUI", version=__version__),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), close=SessionCloseCapabilities()
                ),
            ),
            auth_methods=[
                EnvVarAuthMethod(
                    id="env",
                    type="env_var",
                    name="API key in the environment",
                    description="OwlTUI reads the provider's key from the environment it was started "
                    "with (or uses the offline demo model when none is set).",
                    vars=[AuthEnvVar(name=var, secret=True, optional=True) for var in KEY_VARIABLES],
                )
            ],
            field_meta={
                "owltui": {
                    "version": __version__,
                    "extensions": sorted(f"_owltui/{name}" for name in EXTENSIONS),
                    "notifications": list(NOTIFICATIONS),
                    "lanes": ["steer", "follow_up", "immediate"],
                }
            },
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        if method_id != "env":
            raise RequestError.invalid_params(
                {"message": f"unknown auth method {method_id!r}; OwlTUI offers 'env'"}
            )
        self.env.update({k: v for k, v in os.environ.items() if k in KEY_VARIABLES})
        from owltui.session.config import load_config
        from owltui.session.runtime.runtime import resolve_model

        d = self.defaults
        try:
            resolve_model(
                load_config(self.env), self.env, provider=d.provider, model=d.model, base_url=d.base_url
            )
        except Exception as exc:
            raise _error(exc) from None
        return AuthenticateResponse()

    # ---- sessions --------------------------------------------------------------------------------
    def _terminal_output(self) -> bool:
        meta = self.caps.field_meta or {}
        return bool(meta.get("terminal_output"))

    def _boolean_options(self) -> bool:
        session = self.caps.session
        options = session.config_options if session is not None else None
        return options is not None and options.boolean is not None

    async def _start(self, cwd: str, mcp_servers: list[Any] | None, **changes: Any) -> AcpSession:
        from owltui.session.runtime.build import build_runtime

        if self.conn is None:
            raise RequestError.internal_error({"message": "no connection"})
        workspace = _workspace(cwd)
        mcp = client_config(mcp_servers or [], self.defaults.mcp_config)
        options = replace(self.defaults, workspace=workspace, mcp_config=mcp, interactive=True, **changes)
        model = self.model_for(workspace) if self.model_for is not None else None
        try:
            runtime = build_runtime(options, model=model, env=self.env)
        except Exception as exc:
            raise _error(exc) from None
        finally:
            if mcp is not None and mcp != self.defaults.mcp_config:
                mcp.unlink(missing_ok=True)  # read while the runtime was built
        from owltui.session.approvals import attach_reviewer

        attach_reviewer(runtime)  # approvals carry the rules an "always" saves
        front = AcpFront()
        commands = Commands.with_custom(
            runtime, front, lambda line: print(f"owltui: {line}", flush=True, file=sys.stderr), self.env
        )
        session = AcpSession(
            self.conn,
            runtime,
            commands,
            terminal_output=self._terminal_output(),
            boolean_options=self._boolean_options(),
        )
        fs = self.caps.fs
        if fs is not None and fs.write_text_file:
            from owltui.modes.acp.editor_fs import EditorFiles, install_editor_files

            install_editor_files(runtime, EditorFiles(self.conn, session.session_id))
        from owltui.modes.acp.elicit import install_acp_asker

        install_acp_asker(runtime, self.conn, session.session_id, self.caps)  # MCP servers' questions
        self.sessions[session.session_id] = session
        conn = self.conn

        async def startup() -> None:
            await ask_project(conn, session.session_id, commands)

        self.tg.start_soon(self._serve, session, startup)
        await session.ready.wait()
        if session.finished.is_set():
            raise RequestError.internal_error({"message": "the session could not start (see stderr)"})
        return session

    async def _serve(self, session: AcpSession, startup: Callable[[], Any]) -> None:
        try:
            await session.run(startup=startup)
        except Exception as exc:  # one session failing must not end the others
            print(
                f"owltui: session {session.session_id} failed: {type(exc).__name__}: {exc}", file=sys.stderr
            )
        finally:
            self.sessions.pop(session.session_id, None)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = await self._start(cwd, mcp_servers)
        session.send_commands()  # sent once the response is out (``observe``)
        return NewSessionResponse(session_id=session.session_id, config_options=session.config_options())

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        from owltui.modes.acp.replay import replay_updates

        if session_id in self.sessions:
            raise RequestError.invalid_params({"message": f"session {session_id} is already open"})
        session = await self._start(cwd, mcp_servers, resume=session_id)
        store = session.runtime.store
        items = store.items() if store is not None else []
        session.open()
        for update in replay_updates(items, session.runtime.workspace):
            session.put(update)
        session.send_commands()
        await session.drain()
        return LoadSessionResponse(config_options=session.config_options())

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        from owltui.session.paths import sessions_dir
        from owltui.session.store.sessions import list_sessions

        workspace = Path(cwd) if cwd else self.defaults.workspace
        infos = list_sessions(sessions_dir(workspace.resolve(), self.env))
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=i.id,
                    cwd=i.cwd or str(workspace),
                    title=" ".join(i.first_prompt.split())[:80] or None,
                    updated_at=datetime.fromtimestamp(i.modified, UTC).isoformat(),
                )
                for i in infos
            ]
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self._session(session_id)
        del self.sessions[session_id]
        session.close()
        await session.finished.wait()
        return CloseSessionResponse()

    def _session(self, session_id: object) -> AcpSession:
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise RequestError.invalid_params({"message": f"no open session {session_id!r}"})
        return session

    def close_all(self) -> None:
        for session in list(self.sessions.values()):
            session.close()

    # ---- a session's methods ---------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        reason = await session.prompt(prompt, kwargs)  # the request's _meta, spread by the SDK
        return PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self._session(session_id)
        session.updates.hold_options = True  # the response carries them (a mode change emits an event)
        try:
            options = await set_config_option(
                session.commands, config_id, value, boolean=session.boolean_options
            )
        finally:
            session.updates.hold_options = False
        session.updates.options_shown(list(options))
        return SetSessionConfigOptionResponse(config_options=list(options))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        raise RequestError.method_not_found("session/set_mode")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        name = method.removeprefix("owltui/")
        if name == method or name not in EXTENSIONS:
            raise RequestError.method_not_found(f"_{method}")
        fields = dict(params)
        session = self._session(fields.pop("sessionId", None))
        result = await call_extension(session.commands, name, fields)
        session.options_changed()
        return result

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
