"""Secret hygiene: an API key never reaches any file, log or export, even when the model repeats it.

A user runs ``osw-studio run`` with a key in the environment and (wrongly) in ``settings.json`` too; the
model, prompted into it, writes the key into its reply. Then every export format is written. Every byte
the tools wrote (run store, exports, HOME with config and data dirs, stdout and stderr) is scanned.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from osw_studio.trajectory.exporters import EXPORTERS
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.runner.conftest import ROOT, TASKS

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(240)]

KEY = "sk-proj-Reliab1lityCanaryKey0123456789abcdefABCDEF"


def shapes(secret: str) -> list[bytes]:
    """The key as it could be written: plain, JSON-escaped, base64 (images and data URLs)."""
    return [secret.encode(), json.dumps(secret).encode(), base64.b64encode(secret.encode())]


def leaks(root: Path, secret: str) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {shape!r}" for shape in shapes(secret) if shape in data]
    return found


def osw(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "OSW_STUDIO_API_KEY": KEY,
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_the_api_key_appears_in_no_file_log_or_export(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "runs"
    with FakeOpenAIServer(api_key=KEY) as server:
        server.queue(
            Reply(
                text=f"The key I was given is {KEY}; the terminal is open.\n"
                f"```python\npyautogui.click(500, 340)\n```"
            ),
            Reply(text=f"```python\npyautogui.write('echo hello > ~/Desktop/hello.txt  # {KEY}\\n')\n```"),
            Reply(text="DONE"),
        )
        config = tmp_path / "settings.json"
        config.write_text(
            json.dumps(
                {"model_provider": {"base_url": server.base_url, "model": "test-model", "api_key": KEY}}
            )
        )
        run = osw(
            "--config",
            str(config),
            "run",
            str(TASKS / "os" / "write-hello-file.json"),
            "--out",
            str(out),
            home=home,
        )
        # The key did its job: the model endpoint (which requires it) answered every step.
        assert [r.authorization for r in server.chat_requests] == [f"Bearer {KEY}"] * 3, run.stderr
    assert run.returncode in (0, 1), run.stderr
    assert "step  3" in run.stdout, run.stdout

    exports = tmp_path / "exports"
    outputs = [run.stdout, run.stderr]
    for name in EXPORTERS:
        done = osw("export", str(out), "--format", name, "--out", str(exports / name), "--quiet", home=home)
        assert done.returncode == 0, (name, done.stderr)
        outputs += [done.stdout, done.stderr]
    assert any((exports / name).rglob("*") for name in EXPORTERS)

    found = leaks(out, KEY) + leaks(exports, KEY) + leaks(home, KEY)
    found += [f"output {i}" for i, text in enumerate(outputs) if KEY in text]
    assert found == []
    # The settings file the user wrote is theirs: the tools never rewrote it with or without the key.
    assert KEY in config.read_text()
