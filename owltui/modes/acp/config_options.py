"""A session's ACP config options and setting them: ``mode`` (the permission modes), ``model`` (the
catalog's models of the providers with a key, as ``/model`` offers them), ``steering`` (batch or
immediate) and ``paused`` (the pause gate).

Each change runs the command the TUI runs (``/mode``, ``/model``, ``/steering``, ``pause`` /
``resume``) through the command layer, so it behaves and is refused the same way; the answer is the
full list as it stands after the change. ``paused`` is a boolean option where the client said it
takes them (``sessionCapabilities``'s config options ``boolean``), else a select of ``on`` / ``off``.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp import RequestError
from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect, SessionConfigSelectOption

from owltui.policy.permissions.model import MODES
from owltui.session.commands.controls import STEERING
from owltui.session.commands.host import Host
from owltui.session.commands.layer import Commands
from owltui.session.commands.models import catalog_choices
from owltui.session.commands.spec import Reply
from owltui.session.describe import model_display

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean

MODE_WORDS = {
    "ask": "reading is free; writes, edits and commands ask",
    "edits": "writes and edits in the workspace run; commands ask",
    "yolo": "everything runs (protected paths still ask)",
    "read-only": "only reading tools run",
    "plan": "read-only tools until you accept a plan",
}
STEERING_WORDS = {
    "batch": "steering waits for the running tool batch",
    "immediate": "steering skips the batch's calls not yet started",
}
PAUSED_WORDS = {"on": "paused", "off": "running"}


def _select(
    config_id: str,
    name: str,
    current: str,
    options: Sequence[tuple[str, str, str | None]],
    category: str | None = None,
) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        type="select",
        id=config_id,
        name=name,
        category=category,  # type: ignore[arg-type]
        current_value=current,
        options=[SessionConfigSelectOption(value=v, name=n, description=d) for v, n, d in options],
    )


def model_values(host: Host) -> list[tuple[str, str]]:
    """``(spec, label)`` of the models this session may switch to, the one in use first."""
    current = host.model_label
    sources = host.model_sources
    choices = catalog_choices(sources.env, current) if sources is not None else []
    out = [(current, model_display(current))]
    out += [(c.spec, c.spec) for c in choices if c.spec != current]
    return out


def config_options(host: Host, *, boolean: bool = False) -> list[ConfigOption]:
    """The session's options with their current values (``boolean``: the client takes boolean ones)."""
    out: list[ConfigOption] = []
    policy = host.permissions
    if policy is not None:
        modes = [(m, m, MODE_WORDS.get(m)) for m in MODES]
        out.append(_select("mode", "Permission mode", policy.mode, modes, "mode"))
    models = [(spec, label, None) for spec, label in model_values(host)]
    out.append(_select("model", "Model", host.model_label, models, "model"))
    steering = [(s, s, STEERING_WORDS[s]) for s in STEERING]
    out.append(_select("steering", "Steering", host.agent.config.steering, steering))
    paused = host.gate.paused
    if boolean:
        out.append(
            SessionConfigOptionBoolean(
                type="boolean", id="paused", name="Paused", description="the pause gate", current_value=paused
            )
        )
    else:
        gate = [(v, PAUSED_WORDS[v], None) for v in ("off", "on")]
        out.append(_select("paused", "Paused", "on" if paused else "off", gate))
    return out


def _choice(value: str | bool, allowed: list[str], config_id: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise RequestError.invalid_params(
            {"reason": f"{config_id} must be one of {', '.join(allowed)}", "configId": config_id}
        )
    return value


async def set_config_option(
    commands: Commands, config_id: str, value: str | bool, *, boolean: bool = False
) -> list[ConfigOption]:
    """Set ``config_id`` to ``value`` through the command layer; the full list after it. A bad id
    or value, or a refusal of the command, is ``invalid_params`` with the reason."""
    host = commands.ctx.host
    reply: Reply | None
    if config_id == "mode" and host.permissions is not None:
        reply = commands.call("mode", mode=_choice(value, list(MODES), config_id))
    elif config_id == "model":
        spec = _choice(value, [spec for spec, _ in model_values(host)], config_id)
        reply = commands.call("model", spec=spec) if spec != host.model_label else None
    elif config_id == "steering":
        reply = commands.call("steering", mode=_choice(value, list(STEERING), config_id))
    elif config_id == "paused":
        on = value if isinstance(value, bool) else _choice(value, ["on", "off"], config_id) == "on"
        reply = commands.call("pause") if on else commands.call("resume")
    else:
        raise RequestError.invalid_params(
            {"reason": f"unknown config option {config_id!r}", "configId": config_id}
        )
    if reply is not None and reply.then is not None:
        reply = await reply.then
    if reply is not None and not reply.ok:
        raise RequestError.invalid_params({"reason": reply.text, "configId": config_id})
    return config_options(host, boolean=boolean)
