"""Terminal escape sequences from a model, a task or a guest are shown, never obeyed.

A model's thought that moves the cursor up and erases lines could hide the real ``proposed:`` line of
``osw-studio run --approve`` and print another action in its place; a task's instruction could do the
same to ``tasks list``; a log line could be forged with a newline.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from osw_studio.cli import main
from tests.fakes.machine import fresh_env
from tests.fakes.openai_server import FakeOpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tasks" / "os" / "write-hello-file.json"

SPOOF = "\x1b[1A\x1b[2K\r\x1b[1A\x1b[2Kstep  1  proposed: typing('echo safe')\x1b]52;c;cm0gLXJmIH4=\x07\u202e"
"""Up a line, erase it (twice), print a harmless-looking proposal, write the clipboard (OSC 52), flip text."""

CONTROL_BYTES = ("\x1b", "\r", "\x07", "\u202e", "\x9b")


def no_controls(text: str) -> bool:
    return not any(c in text for c in CONTROL_BYTES)


@pytest.mark.xvfb
@pytest.mark.timeout(240)
def test_approve_shows_a_hostile_thought_with_its_escapes_visible(tmp_path: Path) -> None:
    reply = f"I will press the button.{SPOOF}\n```python\npyautogui.click(500, 340)\n```"
    with FakeOpenAIServer() as server:
        server.queue(Reply(text=reply))
        config = tmp_path / "settings.json"
        config.write_text(
            json.dumps({"model_provider": {"base_url": server.base_url, "model": "test-model"}})
        )
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "osw_studio",
                "--config",
                str(config),
                "run",
                str(HELLO),
                "--agent",
                "osworld",
                "--approve",
                "--max-steps",
                "1",
                "--out",
                str(tmp_path / "runs"),
            ],
            cwd=ROOT,
            env=fresh_env(tmp_path, OSW_STUDIO_API_KEY="sk-test"),
            input="q\n",
            capture_output=True,
            text=True,
            timeout=200,
            check=False,
        )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert no_controls(proc.stdout) and no_controls(proc.stderr), proc.stdout
    lines = proc.stdout.splitlines()
    proposed = [line for line in lines if "proposed:" in line]
    assert proposed[0].startswith("step  1  proposed: click(500, 340)"), lines
    thought = next(line for line in lines if line.strip().startswith("thought:"))
    # The thought is shortened to one line of 100 characters; its escapes show as text.
    assert "press the button.\\x1b[1A\\x1b[2K" in thought, thought


def test_tasks_list_shows_escapes_in_an_instruction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = json.loads(HELLO.read_text())
    task["id"] = "spoof"
    task["instruction"] = f"Harmless{SPOOF}"
    (tmp_path / "os").mkdir()
    (tmp_path / "os" / "spoof.json").write_text(json.dumps(task))
    broken = dict(task, id="broken", config=[{"type": f"nope{SPOOF}", "parameters": {}}])
    (tmp_path / "os" / "broken.json").write_text(json.dumps(broken))
    assert main(["tasks", "list", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert no_controls(out) and no_controls(err), (out, err)
    assert "Harmless\\x1b[1A" in out
    assert main(["tasks", "validate", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert no_controls(out) and "broken.json" in out


def test_the_app_log_shows_escapes_and_keeps_one_record_per_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osw_studio import app

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = logging.getLogger()
    before = list(root.handlers)
    level = root.level
    path = app._setup_logging()
    try:
        logging.getLogger("osw_studio.test").warning(
            "model thought: %s", f"ok\n2026-01-01 ERROR forged{SPOOF}"
        )
    finally:
        for handler in root.handlers[:]:
            if handler not in before:
                handler.close()
                root.removeHandler(handler)
        root.setLevel(level)
    text = path.read_text(encoding="utf-8")
    assert no_controls(text), text
    assert len(text.splitlines()) == 1 and "ok\\n2026-01-01 ERROR forged\\x1b[1A" in text
