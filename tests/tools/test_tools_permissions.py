import tomllib
from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall
from owltui.policy.permissions.model import Answer
from owltui.policy.permissions.paths import protected_paths
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.policy.permissions.rules import rule_matches

pytestmark = pytest.mark.anyio

READ_ONLY = {"read", "ls", "grep", "find", "read_result", "job_output"}


class Asker:
    def __init__(self, answer: Answer = "allow") -> None:
        self.answer: Answer = answer
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, call: ToolCall, reason: str) -> Answer:
        self.asked.append((call.name, reason))
        return self.answer


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


CALLS = {
    "read": call("read", path="a.txt"),
    "ls": call("ls"),
    "grep": call("grep", pattern="x"),
    "find": call("find", pattern="*"),
    "read_result": call("read_result", result_id="r1"),
    "job_output": call("job_output", job_id="1"),
    "job_kill": call("job_kill", job_id="1"),
    "write": call("write", path="src/a.py", content=""),
    "edit": call("edit", path="src/a.py", old_text="a", new_text="b"),
    "bash": call("bash", command="make"),
}

# mode -> tools that run without asking; the rest ask (or are refused in read-only mode)
FREE = {
    "ask": READ_ONLY | {"job_kill"},
    "edits": READ_ONLY | {"job_kill", "write", "edit"},
    "yolo": set(CALLS),
    "read-only": READ_ONLY | {"job_kill"},
}


@pytest.mark.parametrize("mode", list(FREE))
@pytest.mark.parametrize("tool", list(CALLS))
async def test_permission_matrix(ws: Path, mode: str, tool: str) -> None:
    asker = Asker("allow")
    policy = PermissionPolicy(ws, mode, asker)
    verdict = await policy.check(CALLS[tool], read_only=tool in READ_ONLY)
    if tool in FREE[mode]:
        assert verdict is None and not asker.asked
    elif mode == "read-only":
        assert verdict is not None and "read-only mode" in verdict and not asker.asked
    else:
        assert verdict is None and [name for name, _ in asker.asked] == [tool]


async def test_nobody_to_ask_refuses_with_how_to_allow(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", None)
    verdict = await policy.check(call("bash", command="pytest -q"), read_only=False)
    assert verdict is not None
    assert "needs approval" in verdict and "--yes" in verdict and ".owltui/permissions.toml" in verdict
    assert await policy.check(call("read", path="x"), read_only=True) is None


async def test_denied_answer_is_a_refusal(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", Asker("deny"))
    verdict = await policy.check(call("bash", command="rm -rf build"), read_only=False)
    assert verdict is not None and "denied" in verdict and "rm -rf build" in verdict


async def test_always_is_saved_and_honoured(ws: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy(ws, "ask", asker)
    assert await policy.check(call("bash", command="git status -s"), read_only=False) is None
    assert await policy.check(call("write", path="src/x.py", content=""), read_only=False) is None
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved == {"allow": {"bash": ["git status *"], "write": ["src/x.py"]}}
    again = PermissionPolicy(ws, "ask", Asker("deny"))
    assert await again.check(call("bash", command="git status"), read_only=False) is None
    assert await again.check(call("bash", command="git status --short"), read_only=False) is None
    assert await again.check(call("write", path="src/x.py", content="1"), read_only=False) is None
    assert await again.check(call("bash", command="git push"), read_only=False) is not None
    assert await again.check(call("bash", command="git statusx"), read_only=False) is not None
    # the policy that saved the rule uses it at once
    assert await policy.check(call("bash", command="git status --porcelain"), read_only=False) is None
    assert len(asker.asked) == 2


async def test_allow_and_deny_rules(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text(
        '[allow]\nbash = ["git status*", "pytest*", "git push*"]\nwrite = ["src/**"]\n'
        '[deny]\nbash = ["git push*"]\nwrite = ["src/secrets/*"]\n'
    )
    policy = PermissionPolicy(ws, "ask", None)
    ok = [
        call("bash", command="git status --short"),
        call("bash", command="pytest -q && git status"),
        call("write", path="src/pkg/mod.py", content=""),
    ]
    for c in ok:
        assert await policy.check(c, read_only=False) is None, c
    asks = [
        call("bash", command="git status; rm -rf /"),
        call("bash", command="pytest $(rm -rf /)"),
        call("bash", command="pytest > /etc/passwd"),
        call("write", path="docs/a.md", content=""),
    ]
    for c in asks:
        verdict = await policy.check(c, read_only=False)
        assert verdict is not None and "needs approval" in verdict, c
    for c in [call("bash", command="git push origin main"), call("bash", command="ls && git push -f")]:
        verdict = await policy.check(c, read_only=False)
        assert verdict is not None and "deny rule" in verdict, c
    verdict = await PermissionPolicy(ws, "yolo").check(call("write", path="src/secrets/k", content=""), False)
    assert verdict is not None and "deny rule" in verdict
    (ws / "src" / "secrets").mkdir(parents=True)
    (ws / "innocent").symlink_to(ws / "src" / "secrets")
    verdict = await PermissionPolicy(ws, "yolo").check(call("write", path="innocent/k", content=""), False)
    assert verdict is not None and "deny rule" in verdict


async def test_outside_workspace_writes_always_ask(ws: Path, tmp_path: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nwrite = ["*"]\nedit = ["**"]\n')
    outside = tmp_path / "elsewhere.txt"
    for mode in ("ask", "edits"):
        asker = Asker("always")
        policy = PermissionPolicy(ws, mode, asker)
        assert await policy.check(call("write", path=str(outside), content=""), read_only=False) is None
        assert (
            await policy.check(call("edit", path="../elsewhere.txt", old_text="a", new_text="b"), False)
            is None
        )
        assert [name for name, _ in asker.asked] == ["write", "edit"]
        assert "outside the workspace" in asker.asked[0][1]
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved == {"allow": {"write": ["*"], "edit": ["**"]}}  # "always" outside is not saved
    assert (
        await PermissionPolicy(ws, "yolo").check(call("write", path=str(outside), content=""), False) is None
    )
    assert await PermissionPolicy(ws, "ask").check(call("read", path=str(outside)), True) is None


async def test_symlink_out_of_the_workspace_counts_as_outside(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (ws / "link").symlink_to(tmp_path / "out")
    asker = Asker("allow")
    assert (
        await PermissionPolicy(ws, "edits", asker).check(call("write", path="link/x", content=""), False)
        is None
    )
    assert asker.asked and "outside the workspace" in asker.asked[0][1]


async def test_malformed_rules_file_is_ignored(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text("[allow\nbash = ")
    verdict = await PermissionPolicy(ws, "ask").check(call("bash", command="ls"), read_only=False)
    assert verdict is not None and "needs approval" in verdict


def test_unknown_mode_rejected(ws: Path) -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        PermissionPolicy(ws, "sometimes")


# ---- "always": what is proposed, and saved --------------------------------------------------------
PROPOSED = [
    ("git status --short", ["git status *"]),
    ("git -C sub status", ["git -C sub status"]),
    ("npm test", ["npm test *"]),
    ("npm run build -- --watch", ["npm run build *"]),
    ("uv run pytest -q", ["uv run pytest *"]),
    ("npx tsc --noEmit", ["npx tsc *"]),
    ("pytest -q tests/x.py", ["pytest *"]),
    ("python -m pytest -x", ["python -m pytest *"]),
    ("python3 scripts/gen.py --out x", ["python3 scripts/gen.py *"]),
    ("python -c 'print(1)'", ["python -c print(1)"]),
    (".venv/bin/pytest -q", [".venv/bin/pytest *"]),
    ("/usr/bin/ls -la", ["ls *"]),
    ("ls -la", ["ls *"]),
    ("ls", ["ls *"]),
    ("make", ["make"]),
    ("make test", ["make test *"]),
    ("rm -rf build", ["rm -rf build"]),
    ("git push origin main", ["git push origin main"]),
    ("npm install left-pad", ["npm install left-pad"]),
    ("find . -name '*.pyc' -delete", ["find . -name [*].pyc -delete"]),
    ("rm 'a[1]?.txt'", ["rm a[[]1][?].txt"]),
    ("timeout 60 pytest -q", ["pytest *"]),
    ("FOO=1 pytest -q", ["pytest *"]),
    ("bash -c 'pytest -q && ruff check .'", ["pytest *", "ruff check *"]),
    ("pytest -q && git status && pytest -x", ["pytest *", "git status *"]),
    ("ls | xargs rm", []),  # "rm" exactly would never match what xargs appends
    ("pytest $(ls tests)", []),
    ("pytest -q > /tmp/log", ["pytest *"]),  # the temp dir is scratch space
    ("pytest -q > /srv/log", []),
    ("git status; eval $X", []),
    ("$RUNNER test", []),
    ("echo 'unterminated", []),
]


@pytest.mark.parametrize(("command", "rules"), PROPOSED)
def test_always_proposes_program_and_subcommand(ws: Path, command: str, rules: list[str]) -> None:
    policy = PermissionPolicy(ws, "ask", Asker())
    assert policy.proposed_rules(call("bash", command=command)) == rules


def test_proposed_rules_never_match_another_command_through_its_own_globs(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", Asker())
    (rule,) = policy.proposed_rules(call("bash", command="find . -name '*.pyc' -delete"))
    assert rule_matches(rule, "find . -name *.pyc -delete")
    for other in ("find . -delete", "find . -name x.pyc -delete", "find / -name anything.pyc -delete"):
        assert not rule_matches(rule, other)
    (rule,) = policy.proposed_rules(call("write", path="src/[a]*.py", content=""))
    assert (
        rule == "src/[[]a][*].py" and rule_matches(rule, "src/[a]*.py") and not rule_matches(rule, "src/x.py")
    )


def test_parts_already_allowed_are_not_proposed_again(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["git status *"]\n')
    policy = PermissionPolicy(ws, "ask", Asker())
    assert policy.proposed_rules(call("bash", command="git status && pytest -q")) == ["pytest *"]
    review = policy.review(call("bash", command="git status && pytest -q"))
    assert review.decision == "ask" and review.rules == ["pytest *"]
    assert any("pytest -q" in n for n in review.notes)


async def test_always_on_a_compound_command_saves_one_rule_per_part(ws: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy(ws, "ask", asker)
    assert await policy.check(call("bash", command="npm test && git diff --stat"), False) is None
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved == {"allow": {"bash": ["npm test *", "git diff *"]}}
    fresh = PermissionPolicy(ws, "ask", None)
    assert await fresh.check(call("bash", command="git diff && npm test -- -u"), False) is None


async def test_always_on_an_unsafe_command_allows_it_once_and_saves_nothing(ws: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy(ws, "ask", asker)
    assert await policy.check(call("bash", command="pytest $(git ls-files tests)"), False) is None
    assert not (ws / ".owltui" / "permissions.toml").exists()


async def test_always_on_a_destructive_command_saves_exactly_that_command(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", Asker("always"))
    assert await policy.check(call("bash", command="rm -rf build"), False) is None
    fresh = PermissionPolicy(ws, "ask", None)
    assert await fresh.check(call("bash", command="rm -rf build"), False) is None
    assert await fresh.check(call("bash", command="rm -rf /"), False) is not None


# ---- protected configuration ----------------------------------------------------------------------
PROTECTED = [
    ".owltui/permissions.toml",
    ".owltui/commands/x.md",
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/config.worktree",
    ".GIT/Config",
]


@pytest.mark.parametrize("mode", ["ask", "edits", "yolo"])
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_protected_paths_ask_in_every_mode(ws: Path, tmp_path: Path, mode: str, tool: str) -> None:
    config = tmp_path / "xdg" / "owltui"
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nwrite = ["**", "*"]\nedit = ["**", "*"]\n')
    targets = [*PROTECTED, str(config / "config.toml")]
    extra = {"content": "x"} if tool == "write" else {"old_text": "a", "new_text": "b"}
    asker = Asker("always")
    policy = PermissionPolicy(ws, mode, asker, config_dir=config)
    for target in targets:
        assert await policy.check(call(tool, path=target, **extra), read_only=False) is None
    assert len(asker.asked) == len(targets)
    assert all("configuration" in why or "hooks" in why for _, why in asker.asked)
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved["allow"][tool] == ["**", "*"]  # "always" saves nothing for protected paths
    nobody = PermissionPolicy(ws, mode, None, config_dir=config)
    for target in targets:
        verdict = await nobody.check(call(tool, path=target, **extra), read_only=False)
        assert verdict is not None and "explicit approval" in verdict and "exactly" in verdict, target
    # an ordinary file is not affected
    assert await nobody.check(call(tool, path="src/a.py", **extra), read_only=False) is None


async def test_protected_path_named_exactly_by_a_rule_is_allowed_without_asking(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nwrite = [".git/hooks/pre-commit"]\n')
    for mode in ("ask", "edits", "yolo"):
        policy = PermissionPolicy(ws, mode, None)
        assert await policy.check(call("write", path=".git/hooks/pre-commit", content=""), False) is None
        assert await policy.check(call("write", path=".git/hooks/pre-push", content=""), False) is not None
        assert await policy.check(call("write", path=".git/config", content=""), False) is not None
    verdict = await PermissionPolicy(ws, "read-only").check(
        call("write", path=".git/hooks/pre-commit", content=""), False
    )
    assert verdict is not None and "read-only" in verdict


async def test_protected_through_a_symlink(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / "innocent").symlink_to(ws / ".git")
    (ws / "cfg").symlink_to(ws / ".owltui", target_is_directory=True)
    policy = PermissionPolicy(ws, "yolo", None)
    for path in ("innocent/config", "innocent/hooks/post-checkout", "cfg/permissions.toml"):
        verdict = await policy.check(call("write", path=path, content=""), False)
        assert verdict is not None and "explicit approval" in verdict, path


def test_protected_paths_for_the_sandbox(ws: Path, tmp_path: Path) -> None:
    paths = protected_paths(ws, tmp_path / "cfg")
    assert {ws / ".owltui", ws / ".git" / "config", ws / ".git" / "hooks", tmp_path / "cfg"} <= set(paths)
    # a worktree: .git is a file naming the real git directory
    real = tmp_path / "main.git" / "worktrees" / "w"
    real.mkdir(parents=True)
    (real / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {real}\n")
    paths = protected_paths(wt)
    # the whole git directory, its common directory and the pointer file itself
    assert {real, tmp_path / "main.git", wt / ".git"} <= set(paths)


# ---- rules are read at start, and when the user saves one -----------------------------------------
async def test_a_rules_file_written_later_does_not_change_the_running_policy(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", None)
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["*"]\nwrite = ["**"]\n')
    assert await policy.check(call("bash", command="touch pwned"), False) is not None
    assert await policy.check(call("write", path="x", content=""), False) is not None
    # the user saves a rule: the file keeps what it holds, the running policy gains only that rule
    policy.save_rule("bash", "pytest *")
    assert await policy.check(call("bash", command="pytest -q"), False) is None
    assert await policy.check(call("bash", command="touch pwned"), False) is not None
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved["allow"]["bash"] == ["*", "pytest *"]
    # a new session reads the file as it is
    assert await PermissionPolicy(ws, "ask", None).check(call("bash", command="touch x"), False) is None


async def test_deny_rules_are_not_lost_or_loosened_by_a_tool_write(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[deny]\nbash = ["touch*"]\n')
    policy = PermissionPolicy(ws, "yolo", None)
    (ws / ".owltui" / "permissions.toml").write_text("")
    assert await policy.check(call("bash", command="touch x"), False) is not None


# ---- modes and the sandbox ------------------------------------------------------------------------
async def test_read_only_refuses_bash_write_edit_whatever_else(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["*"]\nwrite = ["*"]\n')
    policy = PermissionPolicy(ws, "read-only", Asker())
    for c in (
        call("bash", command="ls"),
        call("write", path="a", content=""),
        call("edit", path="a", old_text="a", new_text="b"),
    ):
        verdict = await policy.check(c, read_only=False)
        assert verdict is not None and "read-only mode" in verdict
    assert await policy.check(call("bash", command="ls"), read_only=True) is not None


@pytest.mark.parametrize("mode", ["ask", "edits", "yolo"])
async def test_without_a_sandbox_every_command_asks(ws: Path, mode: str) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["ls*"]\n')
    asker = Asker()
    policy = PermissionPolicy(ws, mode, asker, sandbox_enforced=lambda: False)
    assert await policy.check(call("bash", command="ls"), False) is None
    assert [name for name, _ in asker.asked] == ["bash"]
    review = policy.review(call("bash", command="ls"))
    assert review.forced and any("sandbox" in n for n in review.notes)
    verdict = await PermissionPolicy(ws, mode, None, sandbox_enforced=False).check(
        call("bash", command="ls"), False
    )
    assert verdict is not None and "sandbox" in verdict
    # --sandbox off, said explicitly: the rules and the mode decide again
    off = PermissionPolicy(ws, mode, None, sandbox_enforced=False, sandbox_off=True)
    assert await off.check(call("bash", command="ls -la"), False) is None
    # only bash is concerned
    assert (
        await PermissionPolicy(ws, mode, None, sandbox_enforced=False).check(call("read", path="x"), True)
        is None
    )


async def test_a_program_by_relative_path_after_cd_elsewhere_asks(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["./run.sh*", "cd *"]\n')
    policy = PermissionPolicy(ws, "ask", None)
    assert await policy.check(call("bash", command="./run.sh --fast"), False) is None
    assert await policy.check(call("bash", command="cd /tmp && ./run.sh"), False) is not None
    assert await policy.check(call("bash", command="cd $X && ./run.sh"), False) is not None
