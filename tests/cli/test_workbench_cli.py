"""``apply_patch`` and images the way a user meets them: the ``owltui -p`` console script against an
OpenAI-compatible server (a local fake) — a gpt-5 session is offered ``apply_patch`` instead of
``edit`` and its patch changes the file; ``@shot.png`` reaches a model that sees images as the data
URL of the file's own bytes, and a model the catalog does not know to see gets none, with the
refusal said."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, run_cli

PATCH = "*** Begin Patch\n*** Update File: app.py\n@@\n-print('hi')\n+print('hello')\n*** End Patch"


def _args(url: str, model: str) -> list[str]:
    return ["--provider", "openai", "--model", model, "--base-url", url]


def test_a_gpt5_session_patches_a_file_with_apply_patch(fake: FakeOpenAI, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hi')\n")
    fake.add(Turn(calls=[("apply_patch", {"input": PATCH})]), Turn(text="patched"))
    r = run_cli(["-p", "say hello", "--yes", *_args(fake.url, "gpt-5")], cli_env(tmp_path), ws)
    assert r.returncode == 0, r.stderr
    names = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert "apply_patch" in names and "edit" not in names
    assert (ws / "app.py").read_text() == "print('hello')\n"
    assert "patched" in r.stdout


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 60, 200)).save(out, "PNG")
    return out.getvalue()


def test_an_image_mention_reaches_a_model_that_sees_images(fake: FakeOpenAI, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    data = _png()
    (ws / "shot.png").write_bytes(data)
    fake.add(Turn(text="a blue rectangle"))
    r = run_cli(["-p", "what is in @shot.png", *_args(fake.url, "gpt-4.1")], cli_env(tmp_path), ws)
    assert r.returncode == 0, r.stderr
    user = fake.requests[0]["messages"][-1]
    urls = [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(data).decode()]


def test_a_model_not_known_to_see_gets_no_image_and_the_refusal_is_said(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shot.png").write_bytes(_png())
    fake.add(Turn(text="I cannot see it"))
    r = run_cli(["-p", "what is in @shot.png", *_args(fake.url, "fake-model")], cli_env(tmp_path), ws)
    assert r.returncode == 0, r.stderr
    sent = json.dumps(fake.requests[0]["messages"])
    assert "image_url" not in sent and "iVBOR" not in sent
    assert "cannot see images" in sent or "cannot see images" in r.stderr, (sent, r.stderr)
