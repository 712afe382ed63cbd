"""The user's desktop sockets against a hostile command: tmux, ssh-agent, Unix and UDP sockets, io_uring.

Each attack is a real process against a real server the test starts (a tmux server, an ssh-agent
holding a key, a Unix socket, a UDP socket) and runs twice: with the protection off (sandbox off,
or the variable kept, or the network on) it must work — so the test can fail — and under the
sandbox it must not. Servers live in a short private directory (socket paths are limited to 108
bytes) and are stopped afterwards. The filter's decisions for both architectures are also checked
with a small BPF interpreter, so aarch64 is covered on an x86_64 machine.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.policy.sandbox import seccomp
from owltui.policy.sandbox.child import capabilities
from owltui.policy.sandbox.env import SOCKET_VARS, child_env
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.exec.bash import BashParams, BashTool

CAPS = capabilities()
FILTER = seccomp.socket_filter_support()
needs_filter = pytest.mark.skipif(
    CAPS.landlock_abi < 1 or FILTER is not None, reason=f"no Landlock or no socket filter here ({FILTER})"
)
pytestmark = pytest.mark.anyio
PY = sys.executable

# The sandboxes a command may get: the full one (as root: a mount namespace without a user
# namespace), the unprivileged user's (a user namespace), and Landlock without namespaces.
SANDBOXES: dict[str, dict[str, Any]] = {
    "default": {},
    "user-namespace": {"userns": True},
    "no-namespaces": {"namespaces": False},
}


@pytest.fixture(params=list(SANDBOXES), ids=list(SANDBOXES))
def sandbox_kw(request: pytest.FixtureRequest) -> dict[str, Any]:
    kw = SANDBOXES[request.param]
    if kw.get("userns") and not CAPS.namespaces:
        pytest.skip("no namespaces here")
    return kw


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def sockdir() -> Iterator[Path]:
    """A short private directory for socket files (the temp dir: writable for any user)."""
    d = Path(tempfile.mkdtemp(prefix="owl-sk-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


async def run(ws: Path, command: str, policy: SandboxPolicy) -> ToolOutput:
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(sandbox=policy))
    return await BashTool().run(BashParams(command=command, timeout=30), ctx)


def wait_for(cond: Any, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return bool(cond())


# ---- tmux ---------------------------------------------------------------------------------------
@pytest.fixture
def tmux_server(sockdir: Path) -> Iterator[Path]:
    """A real tmux server on a private socket, as the user's own terminal would have one."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    sock = sockdir / "tmux"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    subprocess.run(
        ["tmux", "-S", str(sock), "-f", "/dev/null", "new-session", "-d", "-s", "owl", "sleep 600"],
        check=True,
        env=env,
        timeout=10,
    )
    try:
        yield sock
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=10, check=False)


async def test_tmux_run_shell_through_the_socket(
    ws: Path, tmux_server: Path, sockdir: Path, sandbox_kw: dict[str, Any]
) -> None:
    if CAPS.landlock_abi < 1 or FILTER is not None:
        pytest.skip(f"no Landlock or no socket filter here ({FILTER})")
    marker = sockdir / "tmux-ran"
    command = f"tmux -S {tmux_server} run-shell 'touch {marker}'"
    out = await run(ws, command, SandboxPolicy("off", ws))
    assert wait_for(marker.exists), f"the attack must work without the sandbox: {out.content}"
    marker.unlink()
    out = await run(ws, command, SandboxPolicy("workspace-write", ws, **sandbox_kw))
    assert out.is_error
    assert not wait_for(marker.exists, 0.5), "tmux ran the command outside the sandbox"
    # the user's tmux is unharmed: the server still answers the user
    listed = await anyio.run_process(["tmux", "-S", str(tmux_server), "ls"], check=False)
    assert listed.returncode == 0 and b"owl" in listed.stdout


async def test_tmux_through_the_inherited_variable(
    ws: Path, tmux_server: Path, sockdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain ``tmux run-shell`` finds the server through ``$TMUX``: scrubbed unless ``env_keep`` names
    it, and with it kept, the sandbox still refuses the socket."""
    monkeypatch.setenv("TMUX", f"{tmux_server},{os.getpid()},0")
    monkeypatch.setenv("TMUX_PANE", "%0")
    marker = sockdir / "tmux-env-ran"
    command = f"tmux run-shell 'touch {marker}'"
    out = await run(ws, command, SandboxPolicy("off", ws, env_keep=["TMUX", "TMUX_PANE"]))
    assert wait_for(marker.exists), f"the attack must work with the variable: {out.content}"
    marker.unlink()
    out = await run(ws, command, SandboxPolicy("off", ws))
    assert out.is_error and not wait_for(marker.exists, 0.5), "the variable was not scrubbed"
    if CAPS.landlock_abi >= 1 and FILTER is None:
        out = await run(ws, command, SandboxPolicy("workspace-write", ws, env_keep=["TMUX", "TMUX_PANE"]))
        assert out.is_error and not wait_for(marker.exists, 0.5), "the socket filter let tmux through"


# ---- ssh-agent ----------------------------------------------------------------------------------
@dataclass
class Agent:
    sock: Path
    fingerprint: str


@pytest.fixture
def ssh_agent(sockdir: Path) -> Iterator[Agent]:
    """A real ssh-agent holding a fresh key, as the user's login would have one."""
    for tool in ("ssh-agent", "ssh-add", "ssh-keygen"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian package openssh-client)")
    sock = sockdir / "agent"
    key = sockdir / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30)
    started = subprocess.run(
        ["ssh-agent", "-s", "-a", str(sock)], capture_output=True, text=True, check=True, timeout=10
    )
    pid = int(started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True, timeout=10)
        fp = subprocess.run(
            ["ssh-keygen", "-lf", f"{key}.pub"], capture_output=True, text=True, check=True, timeout=10
        ).stdout.split()[1]
        key.unlink()  # only the agent holds the private key now, as with a passphrase or a token
        yield Agent(sock, fp)
    finally:
        os.kill(pid, signal.SIGTERM)


async def test_ssh_agent_signs_for_no_sandboxed_command(
    ws: Path, ssh_agent: Agent, sockdir: Path, sandbox_kw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    if CAPS.landlock_abi < 1 or FILTER is not None:
        pytest.skip(f"no Landlock or no socket filter here ({FILTER})")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(ssh_agent.sock))
    (sockdir / "doc").write_text("sign me\n")
    sign = f"ssh-keygen -Y sign -n file -f {sockdir}/id_ed25519.pub {sockdir}/doc"
    # the variable alone is scrubbed
    out = await run(ws, "ssh-add -l", SandboxPolicy("off", ws))
    assert ssh_agent.fingerprint not in out.content
    # protection off: the agent lists the key and signs with it
    off = SandboxPolicy("off", ws, env_keep=["SSH_AUTH_SOCK"])
    out = await run(ws, "ssh-add -l", off)
    assert ssh_agent.fingerprint in out.content, out.content
    out = await run(ws, f"{sign} && echo signed", off)
    assert "signed" in out.content and (sockdir / "doc.sig").exists(), out.content
    (sockdir / "doc.sig").unlink()
    # under the sandbox: neither through the kept variable nor through the socket path
    policy = SandboxPolicy("workspace-write", ws, env_keep=["SSH_AUTH_SOCK"], **sandbox_kw)
    for command in ("ssh-add -l", f"SSH_AUTH_SOCK={ssh_agent.sock} ssh-add -l", sign):
        out = await run(ws, command, policy)
        assert out.is_error and ssh_agent.fingerprint not in out.content, (command, out.content)
    assert not (sockdir / "doc.sig").exists()


# ---- plain Unix sockets -------------------------------------------------------------------------
@pytest.fixture
def unix_server(sockdir: Path) -> Iterator[Path]:
    """A listening Unix stream socket; whoever connects is accepted (the backlog is enough)."""
    path = sockdir / "srv.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(16)
    try:
        yield path
    finally:
        srv.close()


def python(code: str) -> str:
    return f"{PY} -c {shlex.quote(code)}"


def connect_unix(path: Path | str) -> str:
    return python(
        f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); print('connected')"
    )


def send_dgram(path: Path) -> str:
    return python(
        "import socket; a, b = socket.socketpair(type=socket.SOCK_DGRAM); "
        f"a.sendto(b'hi', {str(path)!r}); print('sent')"
    )


async def test_a_unix_socket_connect_is_refused(
    ws: Path, unix_server: Path, sandbox_kw: dict[str, Any]
) -> None:
    if CAPS.landlock_abi < 1 or FILTER is not None:
        pytest.skip(f"no Landlock or no socket filter here ({FILTER})")
    command = connect_unix(unix_server)
    out = await run(ws, command, SandboxPolicy("off", ws))
    assert out.content.strip() == "connected", out.content
    out = await run(ws, command, SandboxPolicy("workspace-write", ws, **sandbox_kw))
    assert out.is_error and "connected" not in out.content
    assert "Operation not permitted" in out.content
    # read-only mode too
    out = await run(ws, command, SandboxPolicy("read-only", ws, **sandbox_kw))
    assert out.is_error and "connected" not in out.content


@needs_filter
async def test_an_abstract_unix_socket_is_refused_with_the_network_on(ws: Path) -> None:
    name = f"\0owl-test-{os.getpid()}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(name)
    srv.listen(4)
    try:
        command = connect_unix(name)
        out = await run(ws, command, SandboxPolicy("off", ws))
        assert out.content.strip() == "connected", out.content
        out = await run(ws, command, SandboxPolicy("workspace-write", ws))
        assert out.is_error and "connected" not in out.content
    finally:
        srv.close()


@needs_filter
async def test_a_datagram_socketpair_cannot_send_to_a_socket_path(ws: Path, sockdir: Path) -> None:
    """A connected datagram socket may still ``sendto`` any path (syslog, journald): such pairs are refused."""
    path = sockdir / "dgram.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(str(path))
    srv.settimeout(3)
    try:
        command = send_dgram(path)
        out = await run(ws, command, SandboxPolicy("off", ws))
        assert out.content.strip() == "sent" and srv.recv(16) == b"hi", out.content
        out = await run(ws, command, SandboxPolicy("workspace-write", ws))
        assert out.is_error and "sent" not in out.content
        srv.settimeout(0.2)
        with pytest.raises(TimeoutError):
            srv.recv(16)
    finally:
        srv.close()


@needs_filter
async def test_sandbox_unix_sockets_allows_the_listed_socket(ws: Path, unix_server: Path) -> None:
    policy = SandboxPolicy("workspace-write", ws, unix_sockets=[str(unix_server)])
    out = await run(ws, connect_unix(unix_server), policy)
    assert out.content.strip() == "connected", out.content
    [note] = policy.startup_notes()
    assert "sandbox_unix_sockets" in note and "every Unix socket" in note and str(unix_server) in note


@needs_filter
@pytest.mark.parametrize(
    "command",
    [
        f"{PY} -c 'import socket; a, b = socket.socketpair(); a.sendall(b\"pair\"); print(b.recv(4).decode())'",
        f"{PY} -c 'import socket; a, b = socket.socketpair(type=socket.SOCK_SEQPACKET); "
        'a.send(b"pair"); print(b.recv(4).decode())\'',
        "printf 'b\\na\\nb\\n' | sort | uniq | tr -d '\\n'; echo",
        f"{PY} -c 'import asyncio; asyncio.run(asyncio.sleep(0)); print(\"pair\")'",
        f"{PY} -c 'import multiprocessing as m; a, b = m.Pipe(); a.send(\"pair\"); print(b.recv())'",
        "git --version >/dev/null && echo pair",
    ],
    ids=["socketpair", "seqpacket-pair", "pipes", "asyncio", "multiprocessing-pipe", "git"],
)
async def test_pipes_and_socketpairs_still_work(ws: Path, command: str) -> None:
    out = await run(ws, command, SandboxPolicy("workspace-write", ws, network=False))
    assert not out.is_error, out.content
    assert out.content.strip() in ("pair", "ab"), out.content


# ---- UDP with the network off ---------------------------------------------------------------------
UDP_COMMANDS = {
    "python": "{py} -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM | "
    'socket.SOCK_CLOEXEC); s.sendto(b"leak", ("127.0.0.1", {port})); print("sent")\'',
    "bash-dev-udp": "echo leak > /dev/udp/127.0.0.1/{port} && echo sent",
    "nonblocking-v6-mapped": "{py} -c 'import socket; s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM | "
    'socket.SOCK_NONBLOCK); s.sendto(b"leak", ("::ffff:127.0.0.1", {port})); print("sent")\'',
}


@pytest.mark.parametrize("how", list(UDP_COMMANDS))
async def test_udp_is_refused_with_the_network_off(ws: Path, how: str, sandbox_kw: dict[str, Any]) -> None:
    if CAPS.landlock_abi < 1 or FILTER is not None:
        pytest.skip(f"no Landlock or no socket filter here ({FILTER})")
    srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    srv.bind(("127.0.0.1", 0))
    srv.settimeout(3)
    try:
        command = UDP_COMMANDS[how].format(py=PY, port=srv.getsockname()[1])
        out = await run(ws, command, SandboxPolicy("workspace-write", ws, **sandbox_kw))  # network on
        assert out.content.strip() == "sent" and srv.recv(16).startswith(b"leak"), out.content
        out = await run(ws, command, SandboxPolicy("workspace-write", ws, network=False, **sandbox_kw))
        assert out.is_error and "sent" not in out.content
        srv.settimeout(0.2)
        with pytest.raises(TimeoutError):
            srv.recv(16)
    finally:
        srv.close()


@needs_filter
async def test_only_plain_tcp_is_left_with_the_network_off(ws: Path) -> None:
    """SCTP, raw and packet sockets are not TCP, which is all Landlock governs."""
    code = (
        "import socket\n"
        "for args in [(2, 1, 132), (2, 3, 1), (17, 3, 0), (2, 2, 1)]:\n"
        "    try: socket.socket(*args).close(); print('open', args)\n"
        "    except PermissionError: print('refused', args)\n"
        "    except OSError as e: print('other', args, e.errno)\n"
        "socket.socket(socket.AF_INET, socket.SOCK_STREAM, 6).close(); print('tcp')\n"
    )
    out = await run(ws, f'{PY} -c "{code}"', SandboxPolicy("workspace-write", ws, network=False))
    lines = out.content.splitlines()
    assert lines[-1] == "tcp" and not any(line.startswith("open") for line in lines), out.content


# ---- io_uring ------------------------------------------------------------------------------------
IO_URING = (
    "{py} -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); "
    "r = libc.syscall(425, 4, p); print(r, ctypes.get_errno())'"
)


@needs_filter
async def test_io_uring_is_refused(ws: Path) -> None:
    command = IO_URING.format(py=PY)
    out = await run(ws, command, SandboxPolicy("off", ws))
    fd, err = (int(x) for x in out.content.split())
    if fd < 0:
        pytest.skip(f"io_uring is not available here even without the sandbox (errno {err})")
    out = await run(ws, command, SandboxPolicy("workspace-write", ws))
    assert out.content.split() == ["-1", "38"], out.content  # ENOSYS: programs fall back


# ---- the environment ----------------------------------------------------------------------------
DESKTOP_ENV = {
    "TMUX": "/tmp/tmux-1000/default,1234,0",
    "TMUX_PANE": "%3",
    "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1",
    "SSH_AGENT_PID": "4321",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "VSCODE_IPC_HOOK_CLI": "/run/user/1000/vscode-ipc.sock",
    "VSCODE_IPC_HOOK": "/run/user/1000/vscode-main.sock",
    "WAYLAND_DISPLAY": "wayland-0",
    "DISPLAY": ":0",
    "XAUTHORITY": "/run/user/1000/xauth",
    "NVIM": "/run/user/1000/nvim.1.0",
}


@pytest.mark.parametrize("mode", ["workspace-write", "off"])
async def test_desktop_variables_reach_no_command(
    ws: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    for name, value in DESKTOP_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_VAR", "plain")
    out = await run(ws, "env", SandboxPolicy(mode, ws))
    assert "PLAIN_VAR=plain" in out.content
    for name in DESKTOP_ENV:
        assert f"\n{name}=" not in f"\n{out.content}", name
    kept = await run(ws, "env", SandboxPolicy(mode, ws, env_keep=["DISPLAY", "VSCODE_IPC_HOOK*"]))
    for name, value in DESKTOP_ENV.items():
        present = f"\n{name}={value}\n" in f"\n{kept.content}"
        assert present == (name in ("DISPLAY", "VSCODE_IPC_HOOK_CLI", "VSCODE_IPC_HOOK")), name


def test_socket_vars_match_whole_names_only() -> None:
    env = {"TMUX": "x", "TMUXINATOR_CONFIG": "y", "MY_DISPLAY": "z", "VSCODE_IPC_HOOK_EXTHOST": "w"}
    assert child_env(env) == {"TMUXINATOR_CONFIG": "y", "MY_DISPLAY": "z"}
    assert "TMUX" in SOCKET_VARS and "SSH_AUTH_SOCK" in SOCKET_VARS


# ---- what the user is told ---------------------------------------------------------------------
@pytest.mark.skipif(CAPS.landlock_abi < 1, reason="this kernel has no Landlock")
async def test_an_unsupported_machine_runs_commands_unfiltered_and_says_so(
    ws: Path, unix_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seccomp, "_probed", True)
    monkeypatch.setattr(seccomp, "_support", "no socket filter for the riscv64 architecture")
    policy = SandboxPolicy("workspace-write", ws, network=False, namespaces=CAPS.namespaces)
    assert not policy.blocks_unix_sockets
    assert any("riscv64" in n and "Unix sockets" in n and "UDP" in n for n in policy.startup_notes())
    out = await run(ws, connect_unix(unix_server), policy)
    assert out.content.strip() == "connected", out.content


@needs_filter
def test_a_full_sandbox_blocks_unix_sockets_quietly(ws: Path) -> None:
    policy = SandboxPolicy("workspace-write", ws)
    assert policy.blocks_unix_sockets
    assert not SandboxPolicy("off", ws).blocks_unix_sockets
    if CAPS.namespaces:
        assert policy.startup_notes() == []


# ---- the filter program, for every architecture it knows -------------------------------------------
def run_bpf(rows: list[tuple[int, int, int, int]], data: bytes) -> int:
    """A classic-BPF interpreter for the instructions the filter uses."""
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = rows[pc]
        pc += 1
        if code == 0x20:
            acc = int.from_bytes(data[k : k + 4], "little")
        elif code == 0x54:
            acc &= k
        elif code == 0x15:
            pc += jt if acc == k else jf
        elif code == 0x35:
            pc += jt if acc >= k else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected BPF code {code:#x}")


def seccomp_data(arch: int, nr: int, *args: int) -> bytes:
    full = [*args, 0, 0, 0, 0, 0, 0][:6]
    return (
        nr.to_bytes(4, "little")
        + arch.to_bytes(4, "little")
        + (0).to_bytes(8, "little")
        + b"".join((a & (2**64 - 1)).to_bytes(8, "little") for a in full)
    )


ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x50001, 0x50026
AF_UNIX, AF_INET, AF_INET6, AF_PACKET, AF_NETLINK = 1, 2, 10, 17, 16
STREAM, DGRAM, RAW, SEQPACKET = 1, 2, 3, 5
NONBLOCK_CLOEXEC = 0x800 | 0x80000

# (what, syscall name, args, network, unix_sockets allowed) -> expected
CASES = [
    ("unix stream", "socket", (AF_UNIX, STREAM, 0), True, False, EPERM),
    ("unix dgram cloexec", "socket", (AF_UNIX, DGRAM | NONBLOCK_CLOEXEC, 0), True, False, EPERM),
    ("unix with high bits", "socket", (AF_UNIX | 1 << 32, STREAM, 0), True, False, EPERM),
    ("unix allowed by list", "socket", (AF_UNIX, STREAM, 0), True, True, ALLOW),
    ("tcp", "socket", (AF_INET, STREAM, 0), False, False, ALLOW),
    ("tcp explicit", "socket", (AF_INET6, STREAM | NONBLOCK_CLOEXEC, 6), False, False, ALLOW),
    ("sctp", "socket", (AF_INET, STREAM, 132), False, False, EPERM),
    ("mptcp", "socket", (AF_INET, STREAM, 262), False, False, EPERM),
    ("udp network off", "socket", (AF_INET, DGRAM | NONBLOCK_CLOEXEC, 0), False, False, EPERM),
    ("udp6 network off", "socket", (AF_INET6, DGRAM, 17), False, False, EPERM),
    ("raw network off", "socket", (AF_INET, RAW, 1), False, False, EPERM),
    ("packet network off", "socket", (AF_PACKET, RAW, 0), False, False, EPERM),
    ("udp network on", "socket", (AF_INET, DGRAM, 0), True, False, ALLOW),
    ("netlink", "socket", (AF_NETLINK, RAW, 0), False, False, ALLOW),
    ("socketpair stream", "socketpair", (AF_UNIX, STREAM, 0, 0), False, False, ALLOW),
    (
        "socketpair seqpacket",
        "socketpair",
        (AF_UNIX, SEQPACKET | NONBLOCK_CLOEXEC, 0, 0),
        False,
        False,
        ALLOW,
    ),
    ("socketpair dgram", "socketpair", (AF_UNIX, DGRAM | NONBLOCK_CLOEXEC, 0, 0), True, False, EPERM),
    ("socketpair dgram allowed", "socketpair", (AF_UNIX, DGRAM, 0, 0), True, True, ALLOW),
    ("io_uring_setup", "io_uring_setup", (4, 0), True, True, ENOSYS),
    ("read", "read", (0, 0, 0), False, False, ALLOW),
]
SYSCALLS = {"x86_64": {"read": 0}, "aarch64": {"read": 63}}


@pytest.mark.parametrize("arch_name", ["x86_64", "aarch64"])
@pytest.mark.parametrize(
    ("what", "call", "args", "network", "unix", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_filter_program(
    arch_name: str, what: str, call: str, args: tuple[int, ...], network: bool, unix: bool, expected: int
) -> None:
    arch = seccomp._ARCHES[arch_name]
    rows = seccomp._program(arch, unix, network)
    nr = SYSCALLS[arch_name].get(call) if call == "read" else getattr(arch, call)
    assert nr is not None
    assert run_bpf(rows, seccomp_data(arch.audit, nr, *args)) == expected, what


@pytest.mark.parametrize("arch_name", ["x86_64", "aarch64"])
def test_filter_refuses_other_abis(arch_name: str) -> None:
    arch = seccomp._ARCHES[arch_name]
    rows = seccomp._program(arch, False, True)
    i386, arm = 0x40000003, 0x40000028
    for foreign in (i386, arm):  # compat numbers differ: socketcall, socket 359/281 ... all refused
        assert run_bpf(rows, seccomp_data(foreign, 102, AF_UNIX, STREAM)) == ENOSYS
    if arch.x32:
        assert run_bpf(rows, seccomp_data(arch.audit, 0x40000000 | 41, AF_UNIX, STREAM)) == ENOSYS
