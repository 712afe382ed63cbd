"""The offline demo model, the catalog and provider resolution."""

from __future__ import annotations

from typing import Any

import pytest

from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, Usage, UserMessage
from owltui.agent.model import ForceTool, Model, ModelRequest, TextDelta, ToolChoice, ToolSpec
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.catalog import lookup
from owltui.providers.demo import DemoModel
from owltui.providers.http.errors import ProviderConfigError
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.providers.resolve import make_model, resolve_provider
from tests.providers.helpers import collect, run
from tests.providers.loopback import LoopbackServer, Reply

TOOLS = [
    ToolSpec(name=n, description=n, parameters={"type": "object"})
    for n in ("bash", "grep", "ls", "read", "write")
]


def ask(text: str, choice: ToolChoice = "auto", items: list[Item] | None = None) -> AssistantMessage:
    msgs: list[Item] = items if items is not None else [UserMessage(text=text)]
    return run(
        collect(DemoModel(delay=0), ModelRequest(system="s", messages=msgs, tools=TOOLS, tool_choice=choice))
    ).message


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("list the files", "ls", {}),
        ("please list the files in src", "ls", {"path": "src"}),
        ("read README.md", "read", {"path": "README.md"}),
        ("show me owltui/cli.py", "read", {"path": "owltui/cli.py"}),
        ("run pytest", "bash", {"command": "pytest"}),
        ("run `ls -la`", "bash", {"command": "ls -la"}),
        ("search for TODO", "grep", {"pattern": "TODO"}),
        ("create notes.txt saying hello there", "write", {"path": "notes.txt", "content": "hello there\n"}),
    ],
)
def test_demo_turns_plain_requests_into_tool_calls(text: str, name: str, args: dict[str, Any]) -> None:
    msg = ask(text)
    assert msg.stop_reason == "tool_use"
    assert [(c.name, c.arguments) for c in msg.tool_calls] == [(name, args)]


def test_demo_summarises_tool_results_and_is_deterministic() -> None:
    items: list[Item] = [
        UserMessage(text="list the files"),
        AssistantMessage(tool_calls=[ToolCall(id="demo_1", name="ls")], stop_reason="tool_use"),
        ToolResult(call_id="demo_1", name="ls", content="README.md\nsrc/\ntests/\n"),
    ]
    msg = ask("", items=items)
    assert msg.stop_reason == "stop" and not msg.tool_calls
    assert "3 entries" in msg.text and "README.md" in msg.text
    assert ask("", items=items) == msg


@pytest.mark.parametrize(
    ("listing", "says"),
    [
        ("(empty directory)", "The directory is empty."),
        ("", "The directory is empty."),
        ("notes.txt\n", "The directory has 1 entry: notes.txt."),
        ("a\nb\n", "The directory has 2 entries: a, b."),
    ],
)
def test_demo_counts_a_listing_in_plain_words(listing: str, says: str) -> None:
    items: list[Item] = [
        UserMessage(text="list the files"),
        AssistantMessage(tool_calls=[ToolCall(id="demo_1", name="ls")], stop_reason="tool_use"),
        ToolResult(call_id="demo_1", name="ls", content=listing),
    ]
    assert ask("", items=items).text == says


def test_demo_explains_itself_and_honours_tool_choice() -> None:
    help_msg = ask("what's the meaning of life?")
    assert not help_msg.tool_calls and "demo" in help_msg.text.lower()
    none = ask("list the files", "none")
    assert not none.tool_calls and none.text
    forced = ask("hello", ForceTool(tool="read"))
    assert [(c.name, c.arguments) for c in forced.tool_calls] == [("read", {"path": "README.md"})]
    forced = ask("run make test", ForceTool(tool="bash"))
    assert forced.tool_calls[0].arguments == {"command": "make test"}
    required = ask("hello", "required")
    assert len(required.tool_calls) == 1


def test_demo_streams_word_by_word() -> None:
    model = DemoModel(delay=0)
    assert model.name == "demo (offline)" and isinstance(model, Model)

    async def deltas() -> list[str]:
        req = ModelRequest(system="s", messages=[UserMessage(text="hi")])
        return [e.text async for e in model.stream(req) if isinstance(e, TextDelta)]

    words = run(deltas())
    assert len(words) > 10 and all(w.strip() for w in words)


def test_catalog_prices_and_defaults() -> None:
    info = lookup("anthropic", "claude-sonnet-4-5-20250929")
    assert info.known and info.input == 3.0 and info.cache_read == 0.3 and info.cache_write == 3.75
    assert lookup("openai", "gpt-4o-2024-08-06").output == 10.0
    assert lookup("openai", "gpt-4.1-mini-2025-04-14").input == 0.4
    assert lookup("openai", "anthropic/claude-haiku-4-5").input == 1.0  # via a router
    unknown = lookup("openai", "llama3.2:3b")
    assert not unknown.known and unknown.context_window > 0 and unknown.input == 0
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=400_000, cache_write_tokens=100_000
    )
    assert info.cost(usage) == pytest.approx(0.5 * 3 + 15 + 0.4 * 0.3 + 0.1 * 3.75)


def no_probe(url: str) -> list[str] | None:
    raise AssertionError("must not probe")


def test_resolution_order() -> None:
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    r = resolve_provider(env=env, probe=no_probe)
    assert (r.provider, r.model, r.base_url, r.api_key) == (
        "anthropic",
        "claude-sonnet-4-5",
        "https://api.anthropic.com",
        "a",
    )
    r = resolve_provider(env={"OPENAI_API_KEY": "o"}, probe=no_probe)
    assert (r.provider, r.base_url) == ("openai", "https://api.openai.com/v1")
    r = resolve_provider(provider="openai", model="gpt-5", env=env, probe=no_probe)
    assert (r.provider, r.model, r.api_key) == ("openai", "gpt-5", "o")
    r = resolve_provider(model="openai:gpt-4.1-mini", env=env, probe=no_probe)
    assert (r.provider, r.model) == ("openai", "gpt-4.1-mini")
    r = resolve_provider(config_provider="openai", config_model="gpt-4o", env=env, probe=no_probe)
    assert (r.provider, r.model, r.source) == ("openai", "gpt-4o", "config")
    r = resolve_provider(model="demo:x", env=env, probe=no_probe)
    assert r.provider == "demo"
    r = resolve_provider(
        env={"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://proxy:8080"}, probe=no_probe
    )
    assert r.base_url == "http://proxy:8080"
    r = resolve_provider(env={}, probe=lambda url: ["qwen2.5:7b"])
    assert (r.provider, r.model, r.base_url, r.api_key) == (
        "openai",
        "qwen2.5:7b",
        "http://127.0.0.1:11434/v1",
        None,
    )
    r = resolve_provider(model="llama3:8b", env={}, probe=lambda url: ["other"])
    assert (r.provider, r.model) == ("openai", "llama3:8b")  # an Ollama tag is not provider:name
    assert resolve_provider(env={}, probe=lambda url: None).provider == "demo"
    assert resolve_provider(env={}, probe=None).provider == "demo"
    r = resolve_provider(
        provider="openai", model="m", base_url="http://localhost:1234/v1", env={}, probe=None
    )
    assert (r.base_url, r.api_key) == ("http://localhost:1234/v1", None)


def test_resolution_errors_are_one_sentence() -> None:
    with pytest.raises(ProviderConfigError) as exc:
        resolve_provider(provider="anthropic", env={}, probe=no_probe)
    assert str(exc.value) == (
        "anthropic: no API key: set ANTHROPIC_API_KEY (or choose another provider with --provider)."
    )
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        resolve_provider(model="openai:gpt-4o", env={}, probe=no_probe)
    with pytest.raises(ProviderConfigError, match="Unknown provider 'gemini'"):
        resolve_provider(provider="gemini", env={}, probe=no_probe)
    with pytest.raises(ProviderConfigError, match="contradicts"):
        resolve_provider(provider="anthropic", model="openai:gpt-4o", env={"ANTHROPIC_API_KEY": "a"})


def test_make_model() -> None:
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    m = make_model(resolve_provider(env=env, probe=no_probe), idle_timeout=5.0)
    assert isinstance(m, AnthropicModel) and m.name == "anthropic:claude-sonnet-4-5" and m.idle_timeout == 5.0
    m = make_model(resolve_provider(provider="openai", env=env, probe=no_probe))
    assert isinstance(m, OpenAICompatModel) and m.url() == "https://api.openai.com/v1/chat/completions"
    d = make_model(resolve_provider(provider="demo", env={}, probe=no_probe), delay=0)
    assert isinstance(d, DemoModel) and d.name == "demo (offline)"


def test_probe_against_a_real_loopback_server(server: LoopbackServer) -> None:
    from owltui.providers.resolve import probe_openai_compatible

    server.queue(Reply(status=200, stream=False, body=b'{"object":"list","data":[{"id":"qwen3:4b"}]}'))
    assert probe_openai_compatible(server.url + "/v1") == ["qwen3:4b"]
    assert server.requests[-1].path == "/v1/models"
    server.queue(Reply(status=404, body=b"{}"))
    assert probe_openai_compatible(server.url + "/v1") is None
