"""Security: the sandbox keeps tasks away from the user's files, the guest is loopback and token-only by
default, and model output is never executed on the host.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from osw_studio.actions import parse_reply
from osw_studio.core.errors import ActionParseError
from osw_studio.core.task import Task
from osw_studio.envs.local import LocalEnv, LocalProvider
from tests.fakes.desktop import start_guest, start_xvfb, stop, wait_ready
from tests.runner.conftest import ROOT

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120)]

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


@pytest.fixture
def host_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for the user's HOME, with a private key in ``.ssh``.

    It lives under /var/tmp, which the sandbox would otherwise see (read-only): a HOME under /tmp or
    /home would be hidden by the sandbox's private /tmp and /home anyway and prove nothing.
    """
    home = Path(tempfile.mkdtemp(prefix="osw-host-home-", dir="/var/tmp"))
    try:
        (home / ".ssh").mkdir(mode=0o700)
        (home / ".ssh" / "id_ed25519").write_text(f"CANARY-PRIVATE-KEY-{secrets.token_hex(8)}\n")
        monkeypatch.setenv("HOME", str(home))
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def hostile_task(home: Path, outside: list[Path]) -> Task:
    """A task whose setup tries to copy the user's key into the guest and to write files on the host."""
    steal = f"cat {home}/.ssh/id_ed25519 > /home/user/stolen.txt; ls -A {home} > /home/user/listing.txt"
    writes = "; ".join(f"echo pwned > {path}" for path in outside)
    return Task.model_validate(
        {
            "id": "hostile",
            "instruction": "Nothing to do.",
            "config": [
                {"type": "execute", "parameters": {"command": steal, "shell": True}},
                {"type": "execute", "parameters": {"command": writes, "shell": True}},
            ],
            "evaluator": {"func": "infeasible"},
        }
    )


@needs_bwrap
async def test_a_task_cannot_read_the_users_ssh_key_nor_write_outside_the_sandbox(host_home: Path) -> None:
    key = (host_home / ".ssh" / "id_ed25519").read_text()
    outside = [
        host_home / "escaped.txt",  # the user's HOME
        host_home.parent / f"osw-escaped-{secrets.token_hex(4)}.txt",  # anywhere else on the host
        ROOT / f"osw-escaped-{secrets.token_hex(4)}.txt",  # the checkout
    ]
    env = await LocalProvider(sandbox=True, accessibility=False).create()
    assert isinstance(env, LocalEnv)
    try:
        await env.reset(hostile_task(host_home, outside))
        stolen = await env.guest.get_file("/home/user/stolen.txt")
        listing = await env.guest.get_file("/home/user/listing.txt")
        probe = await env.guest.execute(f"cat {host_home}/.ssh/id_ed25519", shell=True)
    finally:
        await env.close()
        leaked = [path for path in outside if path.exists()]
        for path in leaked:
            path.unlink()
    # The read failed: the key is not in the guest, the HOME looks empty from inside.
    assert stolen == b""
    assert listing == b""
    assert probe.returncode != 0 and "No such file" in probe.error
    assert key.strip() not in probe.output
    # The writes failed: nothing appeared on the host.
    assert leaked == []


@needs_bwrap
async def test_the_users_dbus_and_home_are_hidden_but_the_guest_python_runs(host_home: Path) -> None:
    env = await LocalProvider(sandbox=True, accessibility=False).create()
    try:
        home = await env.guest.execute("echo $HOME; ls -A /home", shell=True)
        run_user = await env.guest.execute(["ls", "-A", "/run/user"])
        python = await env.guest.execute([sys.executable, "-c", "import osw_studio; print('ok')"])
    finally:
        await env.close()
    assert home.output.split() == ["/home/user", "user"]
    assert run_user.output == ""  # empty, or missing on machines without it
    # What the sandbox needs from under a hidden HOME (this Python, this checkout) stays usable.
    assert python.output == "ok\n"


def test_model_output_that_tries_to_run_code_is_refused_and_never_runs(tmp_path: Path) -> None:
    """Parsers turn replies into actions; anything but whitelisted calls with literals is an error."""
    canary = tmp_path / "ran.txt"
    hostile = [
        f"```python\nimport os\nos.system('touch {canary}')\n```",
        f"```python\n__import__('subprocess').run(['touch', '{canary}'])\n```",
        f"```python\npyautogui.click(*[exec(\"open('{canary}','w')\")])\n```",
        f"```python\npyautogui.write(open('{canary}', 'w').name)\n```",
        f"```python\neval(\"open('{canary}', 'w')\")\n```",
    ]
    for reply in hostile:
        with pytest.raises(ActionParseError):
            parse_reply(reply, "pyautogui")
    with pytest.raises(ActionParseError):
        parse_reply(
            f'{{"action_type": "CLICK", "x": "__import__(\\"os\\").system(\\"touch {canary}\\")"}}',
            "computer13",
        )
    assert not canary.exists()


def test_the_guest_server_binds_loopback_and_needs_a_token_by_default(tmp_path: Path) -> None:
    """``python -m osw_studio.guest`` with no --host and no --token: 127.0.0.1 only, a fresh token."""
    xvfb, display = start_xvfb((640, 480))
    server: subprocess.Popen[bytes] | None = None
    log_file = open(tmp_path / "guest.log", "wb")  # noqa: SIM115 - closed at the end
    try:
        ready = tmp_path / "ready"
        env = {k: v for k, v in os.environ.items() if k != "OSW_GUEST_TOKEN"} | {"HOME": str(tmp_path)}
        server = start_guest(display, ready, env=env, stdout=subprocess.DEVNULL, stderr=log_file)
        try:
            url, token = wait_ready(server, ready)
        except RuntimeError:
            pytest.fail(f"the guest did not start: {(tmp_path / 'guest.log').read_text()}")
        assert url.startswith("http://127.0.0.1:")
        assert len(token) >= 24 and token != "none"
        port = int(url.rsplit(":", 1)[1])
        listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
        local = [row.split()[1] for row in listening if row.split()[3] == "0A"]  # LISTEN
        assert f"0100007F:{port:04X}" in local  # 127.0.0.1, not 0.0.0.0
        assert f"00000000:{port:04X}" not in local
        assert httpx.get(f"{url}/platform", timeout=10).status_code == 401
        authorized = httpx.get(f"{url}/platform", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert authorized.status_code == 200 and authorized.text == "Linux"
    finally:
        for process in (server, xvfb):
            if process is not None:
                stop(process)
        log_file.close()
