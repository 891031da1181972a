"""End to end on Xvfb: the local sandbox provider and RemoteEnv against a real guest server."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from osw_studio.core.errors import GuestError
from osw_studio.core.task import Task
from osw_studio.envs import local
from osw_studio.envs.check import check_env
from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.local import LocalEnv, LocalProvider, is_alive
from osw_studio.envs.remote import RemoteEnv
from tests.fakes.desktop import Desktop

pytestmark = pytest.mark.timeout(120)


async def gone_within(pids: set[int], seconds: float) -> set[int]:
    """The PIDs still alive after waiting up to ``seconds`` for them to exit."""
    for _ in range(int(seconds / 0.05)):
        if not any(is_alive(pid) for pid in pids):
            break
        await asyncio.sleep(0.05)
    return {pid for pid in pids if is_alive(pid)}


@pytest.fixture
async def local_env() -> AsyncIterator[LocalEnv]:
    env = await LocalProvider().create()
    yield env
    await env.close()


async def test_check_env_passes_on_two_local_envs_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_free_port() -> int:
        raise AssertionError("the guest server picks its own port (--port 0); none is picked for it")

    # A port picked by the provider and handed over could be taken before the server binds it.
    monkeypatch.setattr(local, "free_port", no_free_port)
    provider = LocalProvider(screen=(1280, 800))
    first, second = await asyncio.gather(provider.create(), provider.create())
    try:
        assert first.display != second.display and first.url != second.url
        assert first.url.startswith("http://127.0.0.1:") and second.url.startswith("http://127.0.0.1:")
        assert first.capabilities is not None and first.capabilities.unicode_typing
        passed = await check_env(first)
        assert passed == ["reset", "observe", "click", "typing (Unicode)"]
        assert (await second.observe()).size == (1280, 800)
        pids = first.pids() | second.pids()
        assert len(pids) >= 8  # Xvfb, openbox, dbus, guest (each in bwrap), twice
    finally:
        await first.close()
        await second.close()
    assert await gone_within(pids, 5) == set()
    assert not first.session.root.exists()


async def test_a_task_setup_launches_mousepad_and_xterm(local_env: LocalEnv, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello from the host\n")
    task = Task.model_validate(
        {
            "id": "launch-apps",
            "instruction": "Edit the notes.",
            "config": [
                {
                    "type": "download",
                    "parameters": {"files": [{"url": "notes.txt", "path": "/home/user/notes.txt"}]},
                },
                {"type": "launch", "parameters": {"command": ["mousepad", "/home/user/notes.txt"]}},
                {"type": "launch", "parameters": {"command": "xterm -title osw-term"}},
                {
                    "type": "execute",
                    "parameters": {
                        "command": ["xdotool", "search", "--onlyvisible", "--name", "notes.txt"],
                        "until": {"returncode": 0},
                    },
                },
                {
                    "type": "execute",
                    "parameters": {
                        "command": ["xdotool", "search", "--onlyvisible", "--name", "osw-term"],
                        "until": {"returncode": 0},
                    },
                },
                {"type": "activate_window", "parameters": {"window_name": "notes.txt", "strict": False}},
            ],
            "evaluator": {"func": "infeasible"},
        }
    )
    obs = await local_env.reset(task, task_dir=tmp_path)
    assert obs.size == local_env.screen_size
    windows = await local_env.guest.execute(
        ["xdotool", "search", "--onlyvisible", "--class", "mousepad|xterm"]
    )
    assert windows.returncode == 0 and len(windows.output.split()) >= 2
    assert await local_env.guest.get_file("/home/user/notes.txt") == b"hello from the host\n"
    # /home/user in the guest is the env's throwaway HOME on the host
    assert (local_env.session.home / "notes.txt").read_text() == "hello from the host\n"


async def test_check_env_passes_on_remote_env_at_a_guest_server_started_here(desktop: Desktop) -> None:
    async with await RemoteEnv.open(desktop.url, desktop.token) as env:
        assert await check_env(env) == ["reset", "observe", "click", "typing (Unicode)"]
    async with GuestClient(desktop.url, "not-the-token") as wrong:
        with pytest.raises(GuestError, match="wrong token"):
            await wrong.screen_size()


async def test_processes_are_gone_after_close(local_env: LocalEnv) -> None:
    await local_env.guest.launch(["xterm", "-title", "left-running"])
    await local_env.guest.execute(["xdotool", "search", "--sync", "--onlyvisible", "--name", "left-running"])
    pids = local_env.pids()
    assert len(pids) >= 5
    await local_env.close()
    await local_env.close()  # twice is fine
    assert await gone_within(pids, 5) == set()


CHILD = """
import asyncio, json, sys
from osw_studio.envs.local import LocalProvider

async def main():
    env = await LocalProvider().create()
    await env.guest.launch(["xterm", "-title", "orphan"])
    await env.guest.execute(["xdotool", "search", "--sync", "--onlyvisible", "--name", "orphan"])
    print(json.dumps({"pids": sorted(env.pids()), "root": str(env.session.root)}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def start_parent(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)


# Without bwrap, AT-SPI's private bus (a grandchild) outlives a SIGKILLed parent: a known limit, so that
# case runs without accessibility.
@pytest.mark.parametrize(
    "options", ["sandbox=True", "sandbox=False, accessibility=False"], ids=["bwrap", "no-bwrap"]
)
async def test_processes_are_gone_after_the_parent_is_killed(options: str) -> None:
    code = CHILD.replace("LocalProvider()", f"LocalProvider({options})")
    parent = start_parent(code)
    try:
        assert parent.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 60)
        child = json.loads(line)
        pids = set(child["pids"])
        assert len(pids) >= 5
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        left = await gone_within(pids, 10)
        assert left == set(), f"still running after the parent died: {left}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    # A killed parent cannot delete the env's folder; nothing runs in it any more.
    shutil.rmtree(child["root"], ignore_errors=True)
