"""Agent Skills through the real runtime: discovery at every level (nearest wins, bad files are one
warning each), the catalog in the system prompt (sorted, bounded, byte-identical across runs),
a scripted model that reads a user-level SKILL.md and runs its script, and ``/skill`` activation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall, ToolResult, UserMessage
from owltui.features.skills.catalog import MAX_CHARS, MAX_ENTRIES, catalog_text
from owltui.features.skills.discovery import discover_skills
from owltui.features.skills.frontmatter import FrontmatterError, split_frontmatter
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.session.commands.layer import Commands
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.session.test_command_layer import Front

pytestmark = pytest.mark.anyio


def skill(root: Path, name: str, description: str, *, extra: str = "", body: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body or f'Do {name}.'}\n")
    return path


def tree(tmp_path: Path) -> dict[str, Path]:
    """A repository with skills at its root and in a subdirectory (the workspace), the user's own,
    a name clash and four bad files."""
    repo, home, cfg = tmp_path / "repo", tmp_path / "home", tmp_path / "cfg"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    root_skills, sub_skills = repo / ".agents" / "skills", repo / "sub" / ".agents" / "skills"
    user_skills = home / ".agents" / "skills"
    paths = {
        "alpha": skill(root_skills, "alpha", "Root-level skill for alpha work."),
        "clash-far": skill(root_skills, "clash", "The root's clash (loses)."),
        "clash": skill(sub_skills, "clash", "The subdirectory's clash (wins)."),
        "beta": skill(
            sub_skills, "beta", "Sub-level skill.", extra="license: MIT\nmetadata:\n  author: me\n"
        ),
        "delta": skill(cfg / "owltui" / "skills", "delta", '"OwlTUI config-dir skill: quoted."'),
        "gamma": skill(
            user_skills, "gamma", "User-level skill with a script.", body="Run `sh scripts/hello.sh`."
        ),
        "hidden": skill(
            user_skills,
            "hidden",
            "Only for /skill.",
            extra="disable-model-invocation: true\n",
            body="HIDDEN BODY: check the release notes.",
        ),
    }
    (user_skills / "gamma" / "scripts").mkdir()
    (user_skills / "gamma" / "scripts" / "hello.sh").write_text('echo "hello from gamma $1"\n')
    (root_skills / "nofront").mkdir()
    (root_skills / "nofront" / "SKILL.md").write_text("# just markdown\n")
    skill(root_skills, "mismatch", "x").write_text("---\nname: other\ndescription: x\n---\n")
    skill(root_skills, "nodesc", "x").write_text("---\nname: nodesc\n---\nbody\n")
    skill(root_skills, "badname", "x").write_text("---\nname: Bad_Name\ndescription: x\n---\n")
    return {**paths, "repo": repo, "home": home, "cfg": cfg}


def runtime(
    tmp_path: Path, model: ScriptedModel, warnings: list[str] | None = None, **opts: object
) -> Runtime:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
    }
    out = [] if warnings is None else warnings
    options = Options(workspace=tmp_path / "repo" / "sub", no_session=True, **opts)  # type: ignore[arg-type]
    return build_runtime(options, model=model, env=env, warn=out.append)


def test_every_level_is_found_nearest_wins_and_each_bad_file_is_one_warning(tmp_path: Path) -> None:
    p = tree(tmp_path)
    warnings: list[str] = []
    rt = runtime(tmp_path, ScriptedModel(), warnings, yes=True)
    assert rt.skills is not None
    assert [s.name for s in rt.skills.skills] == ["alpha", "beta", "clash", "delta", "gamma", "hidden"]
    assert rt.skills.get("clash") is not None and rt.skills.get("clash").path == p["clash"]  # type: ignore[union-attr]
    skipped = [w for w in warnings if "skipped" in w]
    root = p["repo"] / ".agents" / "skills"
    assert len(skipped) == 4 and all("\n" not in w for w in warnings)
    assert any(str(root / "nofront" / "SKILL.md") in w and "no frontmatter" in w for w in skipped)
    assert any(str(root / "mismatch" / "SKILL.md") in w and "folder's name" in w for w in skipped)
    assert any(str(root / "nodesc" / "SKILL.md") in w and "'description'" in w for w in skipped)
    assert any(str(root / "badname" / "SKILL.md") in w and "'name'" in w for w in skipped)
    clash = [w for w in warnings if "same name" in w]
    assert clash == [f"skill 'clash': {p['clash']} is used, {p['clash-far']} has the same name"]

    prompt = rt.agent.config.system_prompt
    section = prompt[prompt.index("## Skills") :]
    entries = [line for line in section.splitlines() if line.startswith("- ")]
    assert entries == [
        f"- alpha: Root-level skill for alpha work. ({p['alpha']})",  # above the workspace: absolute
        "- beta: Sub-level skill. (.agents/skills/beta/SKILL.md)",  # inside it: relative
        "- clash: The subdirectory's clash (wins). (.agents/skills/clash/SKILL.md)",
        f"- delta: OwlTUI config-dir skill: quoted. ({p['delta']})",
        f"- gamma: User-level skill with a script. ({p['gamma']})",
    ]  # hidden: disable-model-invocation keeps it out

    listed = Commands(rt, Front()).slash("/skills")
    assert listed is not None and listed.ok
    rows = {r["name"]: r for r in listed.data["skills"]}
    assert rows["hidden"]["model_invocable"] is False and rows["gamma"]["level"] == "user"
    assert str(p["hidden"]) in listed.text and "/skill only" in listed.text


def test_claude_skills_only_with_the_compat_switch(tmp_path: Path) -> None:
    ws, cfg, home = tmp_path / "ws", tmp_path / "cfg", tmp_path / "home"
    skill(ws / ".claude" / "skills", "from-claude", "Claude Code project skill.")
    skill(home / ".claude" / "skills", "claude-user", "Claude Code user skill.")
    env = {"HOME": str(home)}
    assert discover_skills(ws, cfg / "owltui", env).skills == []
    found = discover_skills(ws, cfg / "owltui", env, claude=True)
    assert [s.name for s in found.skills] == ["claude-user", "from-claude"]


async def test_the_first_request_is_byte_identical_across_two_runs_and_stays_small(tmp_path: Path) -> None:
    tree(tmp_path)
    bodies: list[bytes] = []
    for _ in range(2):
        model = ScriptedModel([Step(text="ok")])
        rt = runtime(tmp_path, model, yes=True)  # every built-in tool
        async with rt:
            await rt.agent.run("hi")
        wire = OpenAICompatModel("m", api_key="k", base_url="http://127.0.0.1:9/v1")
        bodies.append(wire.encode_body(model.requests[0]))
        for path in (tmp_path / "repo" / ".agents" / "skills").rglob("SKILL.md"):
            path.touch()  # newer times, same files: same bytes
    assert bodies[0] == bodies[1]
    assert b"## Skills" in bodies[0] and b"gamma: User-level skill" in bodies[0]
    print(f"first request with five skills: {len(bodies[0])} bytes")


async def test_a_full_catalog_keeps_the_first_request_under_16_kb(tmp_path: Path) -> None:
    """Every built-in tool and skills past the catalog's budget, with the longest descriptions."""
    root = tmp_path / "repo" / "sub" / ".agents" / "skills"
    for i in range(100):
        skill(root, f"skill-with-a-long-name-{i:03d}", '"' + 'Does a thing \\u00e9\\"quoted\\". ' * 40 + '"')
    model = ScriptedModel([Step(text="ok")])
    rt = runtime(tmp_path, model, yes=True)
    async with rt:
        await rt.agent.run("hi")
    body = OpenAICompatModel("m", api_key="k", base_url="http://127.0.0.1:9/v1").encode_body(
        model.requests[0]
    )
    assert b"more skills not listed here" in body
    assert len(body) <= 16 * 1024, len(body)
    print(f"first request with a full catalog: {len(body)} bytes")


def test_the_catalog_is_bounded_in_entries_and_characters(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    root = tmp_path / "many" / ".agents" / "skills"
    for i in range(MAX_ENTRIES + 20):
        skill(root, f"s{i:03d}", "A short skill.")
    text = catalog_text(discover_skills(tmp_path / "many", tmp_path / "cfg", env), tmp_path / "many")
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert (
        len(lines) == MAX_ENTRIES + 1
        and lines[0].startswith("- s000: ")
        and lines[-2].startswith(f"- s{MAX_ENTRIES - 1:03d}: ")
    )
    assert lines[-1] == "- … 20 more skills not listed here; the user can see them all with /skills"

    root = tmp_path / "long" / ".agents" / "skills"
    for i in range(30):
        skill(root, f"s{i:03d}", "A skill. " * 110)  # near the specification's 1024
    text = catalog_text(discover_skills(tmp_path / "long", tmp_path / "cfg", env), tmp_path / "long")
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(text) <= MAX_CHARS + len(lines[-1]) + 1 and lines[-1].startswith("- … ")
    assert all(len(line) < 400 for line in lines) and "…" in lines[0]  # each description is cut too


async def test_a_model_reads_a_user_skill_and_runs_its_script(tmp_path: Path) -> None:
    p = tree(tmp_path)
    script = p["gamma"].parent / "scripts" / "hello.sh"
    model = ScriptedModel(
        [
            Step(calls=[Call("read", {"path": str(p["gamma"])})]),
            Step(calls=[Call("bash", {"command": f"sh {script} world"})]),
            Step(text="done"),
        ]
    )
    rt = runtime(tmp_path, model, yes=True)
    async with rt:
        out = await rt.agent.run("use the gamma skill")
    assert out.reason == "done"
    results = [i for i in rt.agent.history.items() if isinstance(i, ToolResult)]
    assert [r.name for r in results] == ["read", "bash"] and not any(r.is_error for r in results)
    assert "Run `sh scripts/hello.sh`." in results[0].content
    assert "hello from gamma world" in results[1].content


def test_user_skill_folders_are_read_freely_but_written_only_with_approval(tmp_path: Path) -> None:
    p = tree(tmp_path)
    asking = runtime(tmp_path, ScriptedModel(), interactive=False)  # nobody to approve anything
    read = ToolCall(id="r", name="read", arguments={"path": str(p["gamma"])})
    assert asking.permissions.review(read, True).decision == "allow"
    # even with --yes and no sandbox, writing a user-level skill asks (the user runs that code later)
    yolo = runtime(tmp_path, ScriptedModel(), yes=True, sandbox="off")
    for target in (p["gamma"], p["delta"]):
        write = ToolCall(id="w", name="write", arguments={"path": str(target), "content": "x"})
        verdict = yolo.permissions.review(write, False)
        assert verdict.decision == "ask" and verdict.forced, (target, verdict)


async def test_slash_skill_sends_the_body_and_the_arguments(tmp_path: Path) -> None:
    p = tree(tmp_path)
    model = ScriptedModel([Step(text="on it")])
    rt = runtime(tmp_path, model, yes=True)
    commands = Commands(rt, Front())
    async with rt:
        reply = commands.slash("/skill hidden for version 2.1")
        assert reply is not None and reply.ok, reply
        await rt.agent.wait_idle()
    sent = [m for m in model.views[0] if isinstance(m, UserMessage)][-1].text
    assert sent == (
        f"[skill hidden, activated by the user: the instructions of {p['hidden']} follow; paths in them "
        f"are relative to {p['hidden'].parent}]\n\nHIDDEN BODY: check the release notes.\n\n"
        "[the user's request for this skill]\nfor version 2.1"
    )
    missing = commands.slash("/skill nope")
    assert missing is not None and not missing.ok and "no skill named 'nope'" in missing.text


def test_frontmatter_reader_is_strict_and_reads_the_usual_forms() -> None:
    fields, body = split_frontmatter(
        "---\nname: pdf\ndescription: >\n  Fill PDF forms.\n  Use for PDFs.\nlicense: 'Apache-2.0'\n"
        'metadata:\n  author: someone\n  version: "1.0"\nallowed-tools: Bash(git:*) Read\n---\n# Body\n'
    )
    assert fields == {
        "name": "pdf",
        "description": "Fill PDF forms. Use for PDFs.",
        "license": "Apache-2.0",
        "metadata": {"author": "someone", "version": "1.0"},
        "allowed-tools": "Bash(git:*) Read",
    }
    assert body == "# Body"
    for bad in ("no front\n", "---\nname: x\n", "---\n  indented: x\n---\n", "---\nname: x\nname: y\n---\n"):
        with pytest.raises(FrontmatterError):
            split_frontmatter(bad)
