"""The policy's verdict on ``fetch``: allow rules on hosts (globs, ports), deny rules, yolo, local
addresses that a glob never reaches, read-only mode, and what "always" would save."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.policy.permissions.web import is_private_host
from owltui.ui.text import summarize_args


def policy(tmp_path: Path, rules: str = "", mode: str = "ask") -> PermissionPolicy:
    (tmp_path / ".owltui").mkdir(exist_ok=True)
    (tmp_path / ".owltui" / "permissions.toml").write_text(rules)
    return PermissionPolicy(tmp_path, mode, config_dir=tmp_path / "cfg")


def decide(p: PermissionPolicy, url: str) -> str:
    return p.review(ToolCall(id="c", name="fetch", arguments={"url": url}), True).decision


RULES = '[allow]\nfetch = ["docs.python.org", "*.github.com", "127.0.0.1", "localhost:8080"]\n'


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        ("https://docs.python.org/3/library/", "allow"),
        ("https://DOCS.python.org./3/", "allow"),  # case and the root dot do not matter
        ("https://api.github.com/repos", "allow"),
        ("https://github.com/", "ask"),  # "*.github.com" names subdomains only
        ("https://api.github.com.evil.example/", "ask"),
        ("https://python.org/", "ask"),
        ("http://127.0.0.1:9000/x", "allow"),  # named exactly
        ("http://localhost:8080/", "allow"),
        ("http://localhost:8081/", "ask"),
        ("ftp://docs.python.org/", "refuse"),
        ("file:///etc/passwd", "refuse"),
        ("https://user:pw@docs.python.org/", "refuse"),
        ("not a url", "refuse"),
    ],
)
def test_allow_rules_name_hosts(tmp_path: Path, url: str, decision: str) -> None:
    assert decide(policy(tmp_path, RULES), url) == decision


def test_a_glob_never_reaches_a_local_address_and_yolo_still_asks_for_one(tmp_path: Path) -> None:
    p = policy(tmp_path, '[allow]\nfetch = ["*"]\n', mode="yolo")
    assert decide(p, "https://example.com/") == "allow"
    for url in ("http://localhost/", "http://10.1.2.3/", "http://169.254.169.254/latest/", "http://[::1]/"):
        review = p.review(ToolCall(id="c", name="fetch", arguments={"url": url}), True)
        assert review.decision == "ask" and review.forced, url
    assert decide(policy(tmp_path, "", mode="yolo"), "https://example.com/") == "allow"


def test_deny_rules_win(tmp_path: Path) -> None:
    p = policy(tmp_path, '[allow]\nfetch = ["*.example.com"]\n[deny]\nfetch = ["ads.example.com"]\n', "yolo")
    assert decide(p, "https://ads.example.com/x") == "refuse"
    assert decide(p, "https://www.example.com/x") == "allow"


def test_read_only_mode_still_lets_allowed_hosts_be_read(tmp_path: Path) -> None:
    p = policy(tmp_path, RULES, mode="read-only")
    assert decide(p, "https://docs.python.org/") == "allow"
    assert decide(p, "https://python.org/") == "ask"


def test_always_saves_the_host(tmp_path: Path) -> None:
    p = policy(tmp_path)
    call = ToolCall(id="c", name="fetch", arguments={"url": "https://docs.python.org/3/"})
    assert p.proposed_rules(call) == ["docs.python.org"]
    local = ToolCall(id="c", name="fetch", arguments={"url": "http://localhost:8000/"})
    assert p.proposed_rules(local) == ["localhost:8000"]


@pytest.mark.anyio
async def test_nobody_to_ask_refuses_with_the_rule_to_add(tmp_path: Path) -> None:
    why = await policy(tmp_path).check(
        ToolCall(id="c", name="fetch", arguments={"url": "https://docs.python.org/"}), True
    )
    assert why is not None and why.startswith("Refused: fetch needs approval")
    assert '[allow] fetch = ["docs.python.org"]' in why


def test_private_hosts() -> None:
    private = ["localhost", "a.localhost", "127.0.0.2", "192.168.1.1", "::1", "0.0.0.0", "::ffff:10.0.0.1"]
    legacy = ["2130706433", "0x7f.1", "127.1", "0x7f000001"]  # what the resolver reads as 127.0.0.1
    assert all(map(is_private_host, private + legacy))
    assert not any(map(is_private_host, ["example.com", "8.8.8.8", "2606:4700::1111", "cafe", "dead.beef"]))


def test_the_call_is_shown_by_its_url() -> None:
    assert summarize_args("fetch", {"url": "https://docs.python.org/3/"}) == "https://docs.python.org/3/"
