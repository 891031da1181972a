"""The local sandbox is a boundary: a task's commands run with no privileges (also when we are root),
reach no other display, no host socket and no host loopback service, and the sandbox works from a
checkout anywhere (``/tmp`` included).

Each test plays the attacker: a task (its setup steps, or commands the model would send) runs inside a
local env and tries the route; the host side checks that nothing got through.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from osw_studio.core.task import Task
from osw_studio.envs.local import LocalEnv, LocalProvider
from tests.conftest import ROOT

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

PROBE_TIMEOUT = 5.0


@pytest.fixture
def host_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for the user's HOME outside /tmp (which the sandbox would hide anyway), with secrets."""
    home = Path(tempfile.mkdtemp(prefix="osw-host-home-", dir="/var/tmp"))
    try:
        (home / ".ssh").mkdir(mode=0o700)
        (home / ".ssh" / "id_ed25519").write_text(f"CANARY-PRIVATE-KEY-{secrets.token_hex(8)}\n")
        monkeypatch.setenv("HOME", str(home))
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def env(host_home: Path) -> AsyncIterator[LocalEnv]:
    created = await LocalProvider(screen=(800, 600), sandbox=True, accessibility=False).create()
    try:
        yield created
    finally:
        await created.close()


async def run_task_step(env: LocalEnv, command: str) -> str:
    """Run ``command`` as a task's ``execute`` setup step would, return what it printed to a file."""
    out = f"/tmp/out-{secrets.token_hex(4)}.txt"
    task = Task.model_validate(
        {
            "id": "hostile",
            "instruction": "Nothing to do.",
            "config": [
                {"type": "execute", "parameters": {"command": f"({command}) > {out} 2>&1", "shell": True}}
            ],
            "evaluator": {"func": "infeasible"},
        }
    )
    await env.reset(task)
    return (await env.guest.get_file(out)).decode(errors="replace")


# --- privileges ------------------------------------------------------------------------------------


async def test_a_task_has_no_capabilities_and_cannot_uncover_the_hidden_home(
    env: LocalEnv, host_home: Path
) -> None:
    key = (host_home / ".ssh" / "id_ed25519").read_text().strip()
    status = await run_task_step(env, "grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status")
    attempts = await run_task_step(
        env,
        "umount -l /home; umount -l /home/user; mount -o remount,rw /usr; "
        f"mount --bind {host_home} /home/user/peek; cat /home/user/peek/.ssh/id_ed25519 {host_home}/.ssh/*; "
        "touch /usr/osw-escaped; id -u",
    )
    caps = dict(line.split(":\t") for line in status.splitlines())
    assert caps == {"CapEff": "0" * 16, "CapPrm": "0" * 16, "CapBnd": "0" * 16}, status
    assert key not in attempts
    assert not await asyncio.to_thread(os.path.lexists, "/usr/osw-escaped")
    uid = attempts.strip().splitlines()[-1]
    assert uid != "0", "the task runs as uid 0 inside"


# --- X displays ------------------------------------------------------------------------------------


def x_connects(display: str, xauthority: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "DISPLAY": display, "HOME": "/nonexistent"}
    env["XAUTHORITY"] = xauthority or "/nonexistent/.Xauthority"
    return subprocess.run(["xdpyinfo"], env=env, capture_output=True, text=True, timeout=30)


async def test_the_display_refuses_a_host_process_without_the_envs_cookie(env: LocalEnv) -> None:
    without = x_connects(env.display, None)
    assert without.returncode != 0
    assert "Authorization required" in without.stderr or "unable to open display" in without.stderr
    xauthority = env.session.x_environment()["XAUTHORITY"]
    assert (os.stat(xauthority).st_mode & 0o077) == 0, "the cookie file is readable by others"
    assert x_connects(env.display, xauthority).returncode == 0


async def test_a_task_in_one_env_cannot_reach_another_envs_display(host_home: Path) -> None:
    provider = LocalProvider(screen=(800, 600), sandbox=True, accessibility=False)
    first, second = await asyncio.gather(provider.create(), provider.create())
    try:
        number = first.display.lstrip(":")
        seen = await run_task_step(second, "ls -A /tmp/.X11-unix")
        # Every way in: the display name, the socket path, the abstract socket, with and without a cookie.
        probe = await run_task_step(
            second,
            f"xdpyinfo -display {first.display} >/dev/null && echo REACHED-NAME; "
            f"XAUTHORITY=/tmp/.Xauthority xdpyinfo -display {first.display} >/dev/null"
            " && echo REACHED-COOKIE; "
            f'python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(3); '
            f"s.connect('\\0/tmp/.X11-unix/X{number}'); print('REACHED-ABSTRACT')\"; "
            f'python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(3); '
            f"s.connect('/tmp/.X11-unix/X{number}'); print('REACHED-PATH')\"; true",
        )
        # Its own display works as before.
        own = await run_task_step(second, "xdpyinfo | grep -c dimensions")
    finally:
        await first.close()
        await second.close()
    assert seen.split() == [f"X{second.display.lstrip(':')}"]
    assert "REACHED" not in probe, probe
    assert own.strip() == "1"


# --- host sockets and services ---------------------------------------------------------------------


class Listener:
    """A host-side server that records whether anything connected to it."""

    def __init__(self, family: int, address: str | tuple[str, int]) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.connected = threading.Event()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connected.set()
            conn.sendall(b"SECRET-FROM-HOST\n")
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        address = self.sock.getsockname()
        self.sock.close()
        if isinstance(address, str) and address.startswith("/"):
            os.unlink(address)


def connect_probe(target: str) -> str:
    """A shell command that tries ``target`` (``tcp:HOST:PORT``, ``unix:PATH``, ``abstract:NAME``)."""
    kind, _, where = target.partition(":")
    if kind == "tcp":
        host, _, port = where.rpartition(":")
        make, address = "socket.socket()", repr((host, int(port)))
    else:
        make = "socket.socket(socket.AF_UNIX)"
        address = repr("\0" + where if kind == "abstract" else where)
    code = (
        f"import socket; s = {make}; s.settimeout({PROBE_TIMEOUT}); s.connect({address}); "
        f"print('REACHED {kind}', s.recv(64))"
    )
    return f"python3 -c {json.dumps(code)}; true"


async def test_host_sockets_and_loopback_services_are_out_of_reach(env: LocalEnv, host_home: Path) -> None:
    listeners: dict[str, Listener] = {}
    socket_dir = Path(tempfile.mkdtemp(prefix="osw-sockets-", dir="/var/tmp"))
    try:
        tcp = Listener(socket.AF_INET, ("127.0.0.1", 0))
        listeners[f"tcp:127.0.0.1:{tcp.sock.getsockname()[1]}"] = tcp
        name = f"osw-test-{secrets.token_hex(6)}"
        listeners[f"abstract:{name}"] = Listener(socket.AF_UNIX, "\0" + name)
        for folder in (host_home, socket_dir):
            path = folder / "agent.sock"
            listeners[f"unix:{path}"] = Listener(socket.AF_UNIX, str(path))
        run = Path("/run")
        if os.access(run, os.W_OK):
            path = run / f"osw-test-{secrets.token_hex(6)}.sock"
            listeners[f"unix:{path}"] = Listener(socket.AF_UNIX, str(path))
        # The guest's own port and the host's: a task may guess either.
        probes = "; ".join(connect_probe(target) for target in listeners)
        output = await run_task_step(env, probes)
        reached = {target for target, listener in listeners.items() if listener.connected.is_set()}
    finally:
        for listener in listeners.values():
            listener.close()
        shutil.rmtree(socket_dir, ignore_errors=True)
    assert "REACHED" not in output, output
    assert "SECRET-FROM-HOST" not in output
    assert reached == set()


async def test_the_guest_server_is_reached_through_its_socket_and_the_relay_only(env: LocalEnv) -> None:
    """The host's URL for the env still works (viewer, OSWorld code) and wants the token."""
    import httpx

    socket_mode = env.session.guest_socket.stat().st_mode & 0o777
    async with httpx.AsyncClient(base_url=env.url, timeout=30) as client:
        denied = await client.get("/screen_size")
        allowed = await client.post("/screen_size", headers={"Authorization": f"Bearer {env.token}"})
    assert socket_mode == 0o600
    assert denied.status_code == 401
    assert allowed.json() == {"width": 800, "height": 600}


# --- where the checkout lives ----------------------------------------------------------------------

CHILD = """
import asyncio, json, sys
import osw_studio
from osw_studio.envs.local import LocalProvider

async def main():
    env = await LocalProvider(screen=(640, 480), sandbox=True, accessibility=False).create()
    try:
        result = await env.guest.execute("echo $HOME", shell=True)
        size = list((await env.observe()).size)
        print(json.dumps({"home": result.output.strip(), "size": size, "package": osw_studio.__file__}))
    finally:
        await env.close()

asyncio.run(main())
"""


def test_a_checkout_and_venv_under_tmp_run_the_sandbox(tmp_path: Path) -> None:
    """A fresh clone under /tmp with its venv inside: the guest server's Python must still be found."""
    checkout = Path(tempfile.mkdtemp(prefix="osw-checkout-", dir="/tmp"))
    try:
        shutil.copytree(ROOT / "osw_studio", checkout / "osw_studio")
        venv = checkout / ".venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        (site,) = venv.glob("lib/python*/site-packages")
        # The checkout itself (as an editable install does), then this venv's packages for the deps.
        ours = [p for p in sys.path if p.endswith("site-packages")]
        (site / "osw_studio.pth").write_text(f"{checkout}\n" + "".join(f"{p}\n" for p in ours))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        child = subprocess.run(
            [str(venv / "bin" / "python"), "-c", CHILD],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
    finally:
        shutil.rmtree(checkout, ignore_errors=True)
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert Path(report.pop("package")).is_relative_to(checkout)
    assert report == {"home": "/home/user", "size": [640, 480]}


# --- outbound network, when a task needs it --------------------------------------------------------


@pytest.mark.skipif(shutil.which("slirp4netns") is None, reason="slirp4netns is not installed")
async def test_outbound_network_still_keeps_the_hosts_loopback_and_sockets_out(host_home: Path) -> None:
    """``network=outbound`` gives the guest a route out (slirp4netns) but not to this machine's 127.0.0.1."""
    tcp = Listener(socket.AF_INET, ("127.0.0.1", 0))
    name = f"osw-test-{secrets.token_hex(6)}"
    abstract = Listener(socket.AF_UNIX, "\0" + name)
    port = tcp.sock.getsockname()[1]
    provider = LocalProvider(screen=(640, 480), sandbox=True, accessibility=False, network="outbound")
    env = await provider.create()
    try:
        routes = await run_task_step(env, "cat /proc/net/route; cat /etc/resolv.conf")
        # 10.0.2.2 is slirp's alias of the host's loopback; 127.0.0.1 is the sandbox's own.
        probes = "; ".join(
            connect_probe(target)
            for target in (f"tcp:10.0.2.2:{port}", f"tcp:127.0.0.1:{port}", f"abstract:{name}")
        )
        output = await run_task_step(env, probes)
    finally:
        await env.close()
        tcp.close()
        abstract.close()
    default = [line.split() for line in routes.splitlines() if line.startswith("tap0")]
    assert ["tap0", "00000000"] in [fields[:2] for fields in default], routes
    assert "nameserver 10.0.2.3" in routes
    assert "REACHED" not in output, output
    assert not tcp.connected.is_set() and not abstract.connected.is_set()


def test_an_unknown_network_mode_is_a_clear_error() -> None:
    from osw_studio.core.errors import GuestError

    with pytest.raises(GuestError, match="unknown network 'internet'") as caught:
        LocalProvider(sandbox=True, network="internet")
    assert "none, outbound" in str(caught.value)


def test_the_cli_shows_the_sandboxs_network_and_takes_it_as_a_setting(host_home: Path) -> None:
    """``osw-studio sandbox --network ...`` says what the guest may reach; a wrong word is a clear error."""
    from tests.fakes.machine import fresh_env

    command = [sys.executable, "-m", "osw_studio", "sandbox", "--screen", "640x480", "--network", "outbound"]
    env = fresh_env(host_home)
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("running"):
                break
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "network: outbound" in lines, lines
    assert any(line.startswith("url:     http://127.0.0.1:") for line in lines)

    task = sorted((ROOT / "tasks" / "galculator").glob("*.json"))[0]
    wrong = subprocess.run(
        [
            sys.executable,
            "-m",
            "osw_studio",
            "run",
            str(task),
            "--agent",
            "replay",
            "--provider",
            "local",
            "network=web",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode != 0 and "Traceback" not in wrong.stderr
    assert "network=web: use network=none (the default) or network=outbound" in wrong.stderr + wrong.stdout
