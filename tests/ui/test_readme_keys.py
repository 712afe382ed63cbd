"""The README's key table and its `[keys]` example are the TUI's: every key the table names is bound
(or is the input's own), the ids the example lists are the binding ids, the example loads and does
what it says (Ctrl+P pauses, the palette moves to F1), and the slash commands named exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from owltui.session.commands.keys import BINDINGS, RESERVED, default_keys, normalize
from owltui.session.commands.table import COMMANDS
from owltui.session.config import load_config
from tests.ui.conftest import SIZE, make_app, wait_for

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SECTION = README.split("## Key bindings (TUI)", 1)[1].split("\n## ", 1)[0]
NAMES = {"esc": "escape", "pgup": "pageup", "pgdn": "pagedown"}
# keys the table names that are not [keys] bindings: the approval's letters, Textual's focus keys and
# the input's own (history, completion)
NOT_BINDINGS = {"y", "a", "n", "shift+tab", "tab", "up", "down", "@", "f1"}  # (f1: the palette, moved)


def _table_keys() -> set[str]:
    keys: set[str] = set()
    for row in re.findall(r"^\| (.*?) \| .* \|$", SECTION, flags=re.M)[2:]:
        for tick in re.findall(r"`([^`]+)`", row):
            if tick.startswith("/") or re.fullmatch(r"[A-Z_]{3,}", tick) or tick.startswith("["):
                continue  # a command, an argument, a config table
            key = "+".join(NAMES.get(p.lower(), p.lower()) for p in tick.split("+"))
            keys.add(key)
    return keys


def test_every_key_in_the_table_is_bound() -> None:
    bound = {k for bid in BINDINGS for k in default_keys(bid)}
    named = _table_keys()
    assert {"enter", "alt+enter", "ctrl+j", "escape", "ctrl+c", "f2", "ctrl+o", "ctrl+r", "ctrl+p"} <= named
    for key in named:
        if key in NOT_BINDINGS or key in RESERVED:
            continue
        assert normalize(key) in bound, key


def _keys_example() -> str:
    """The README's `[keys]` example: what follows `[keys]` in its toml block."""
    (example,) = [b for b in re.findall(r"```toml\n(.*?)```", README, flags=re.S) if "[keys]" in b]
    return example.split("[keys]", 1)[1]


def test_keys_example_lists_the_ids_and_loads(tmp_path: Path) -> None:
    keys_part = _keys_example()
    ids = re.findall(r"[a-z_]+", keys_part.split("ids:", 1)[1])
    assert ids == list(BINDINGS)
    path = tmp_path / "config.toml"
    path.write_text("[keys]" + keys_part)
    assert load_config({}, path=path).keys == {"pause": "ctrl+p"}


def test_slash_commands_named_exist() -> None:
    slash = {c.slash for c in COMMANDS if c.slash}
    named = set(re.findall(r"`/([a-z]+)", SECTION))
    assert named - {"allow", "always", "deny"} <= slash


@pytest.mark.anyio
async def test_the_readme_example_works(tmp_path: Path) -> None:
    """The app configured with the README's own `[keys]` example does what the README says."""
    from textual.command import CommandPalette

    path = tmp_path / "config.toml"
    path.write_text("[keys]" + _keys_example())
    app = make_app(keymap=load_config({}, path=path).keys)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "ctrl+p pauses")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette on f1")
        await pilot.press("escape")
        await app.action_quit()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('paws = "f5"', "[keys] paws: unknown binding id (ids: send, follow_up"),
        ('pause = "ctrl+t"', '[keys] pause = "ctrl+t": ctrl+t is already require\'s key'),
        ('pause = "f5"\nrequire = "f5"', "f5 is also given to"),
        ('pause = "ctrl+u"', "ctrl+u is the input's delete-to-start key"),
        ('pause = "p"', "p types text into the input"),
        ('pause = "esc"', "unknown key 'esc' in 'esc' (Textual calls it 'escape')"),
        ('pause = "ctrl+p"\nhistory_search = "f1"', "give palette a key too"),
    ],
)
def test_bad_keys_are_one_line_errors(tmp_path: Path, body: str, said: str) -> None:
    from owltui.session.config import ConfigError

    path = tmp_path / "config.toml"
    path.write_text(f"[keys]\n{body}\n")
    with pytest.raises(ConfigError) as err:
        load_config({}, path=path)
    text = str(err.value)
    assert said in text and "\n" not in text and str(path) in text


def test_moving_keys_around_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[keys]\npause = "ctrl+t"\nrequire = "f2"\npalette = "f5"\nfollow_up = "ctrl+enter"\n')
    assert load_config({}, path=path).keys["pause"] == "ctrl+t"
