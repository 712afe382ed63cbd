"""Running one client scenario of the official conformance suite against the adapter, and reading
its verdict: the checks it wrote (``checks.json``), the client's exit and output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.tools.mcp_node import conformance_bin, node_env

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = f"{sys.executable} -m tests.mcp_conformance.adapter"
BAD = ("FAILURE", "WARNING")


@dataclass
class Verdict:
    scenario: str
    returncode: int
    checks: list[dict[str, Any]]
    output: str

    @property
    def bad(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if c.get("status") in BAD]

    @property
    def passed(self) -> bool:
        return (
            self.returncode == 0 and not self.bad and any(c.get("status") == "SUCCESS" for c in self.checks)
        )

    def report(self) -> str:
        lines = [f"scenario {self.scenario}: suite exit {self.returncode}"]
        for c in self.bad:
            detail = c.get("errorMessage") or json.dumps(c.get("details") or {})[:600]
            lines.append(f"  {c.get('status')} {c.get('id')}: {c.get('description')} -- {detail}")
        if not self.checks:
            lines.append("  (no checks recorded)")
        lines.append("--- suite output (tail) ---")
        lines.append(self.output[-6000:])
        return "\n".join(lines)


def client_scenarios() -> list[str]:
    """``conformance list --client``, as the suite prints it."""
    out = subprocess.run(
        [str(conformance_bin()), "list", "--client"],
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [
        line.strip()[2:].split(" ")[0] for line in out.stdout.splitlines() if line.strip().startswith("- ")
    ]


def run_scenario(scenario: str, timeout_ms: int = 60_000, extra_env: dict[str, str] | None = None) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="owltui-conformance-out-") as out:
        argv = [str(conformance_bin()), "client", "--scenario", scenario, "--command", ADAPTER]
        argv += ["--timeout", str(timeout_ms), "-o", out]
        env = node_env(
            {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        )
        env.update(extra_env or {})
        done = subprocess.run(
            argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_ms / 1000 + 30
        )
        found = sorted(Path(out).rglob("checks.json"))
        checks: list[dict[str, Any]] = json.loads(found[0].read_text()) if found else []
        stdio = "".join(p.read_text() for p in Path(out).rglob("std*.txt"))
        return Verdict(scenario, done.returncode, checks, done.stdout + done.stderr + stdio)
