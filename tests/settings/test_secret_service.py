"""A real Secret Service (gnome-keyring on a private D-Bus session, throwaway HOME) keeps the key.

The whole story runs in a subprocess inside ``dbus-run-session``: ``keys set`` from stdin, the key read
back, ``check-model`` authenticating with it against a real local server, ``keys delete``. Then every
file the run wrote (settings, the keyring's own files, logs) is scanned for the key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

KEY = "sk-secret-service-test-4242424242"

SCRIPT = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from osw_studio.cli import main
    from osw_studio.settings.secrets import backend_name, get_key

    config = sys.argv[1]
    out = {}

    def run(argv, stdin=""):
        sys.stdin = io.StringIO(stdin)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            code = main(["--config", config, *argv])
        return code, buf.getvalue()

    out["backend"] = backend_name()
    out["set"] = run(["keys", "set", "--profile", "local"], sys.argv[2] + "\\n")
    out["read_back"] = get_key("local") == sys.argv[2]
    out["list"] = run(["keys", "list"])
    out["check"] = run(["check-model", "--profile", "local"])
    out["delete"] = run(["keys", "delete", "--profile", "local"])
    out["after_delete"] = get_key("local")
    out["check_without_key"] = run(["check-model", "--profile", "local"])
    print(json.dumps(out))
    """
)


@pytest.mark.timeout(120)
def test_keys_live_in_a_real_secret_service_and_nowhere_else(tmp_path: Path) -> None:
    daemon = shutil.which("gnome-keyring-daemon")
    session = shutil.which("dbus-run-session")
    if daemon is None or session is None:
        pytest.skip(
            "gnome-keyring-daemon or dbus-run-session is not installed (apt package gnome-keyring, dbus)"
        )
    home = tmp_path / "home"
    runtime = tmp_path / "run"
    home.mkdir()
    runtime.mkdir(mode=0o700)
    config = tmp_path / "settings.json"
    (tmp_path / "story.py").write_text(SCRIPT)
    with FakeOpenAIServer(api_key=KEY, models=["local-model"]) as server:
        config.write_text(
            json.dumps({"profiles": {"local": {"base_url": server.base_url, "model": "local-model"}}})
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(runtime),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring",
        }
        inner = (
            f"echo -n pw | {daemon} --unlock --components=secrets >/dev/null && "
            f'exec "{sys.executable}" "{tmp_path / "story.py"}" "{config}" "{KEY}"'
        )
        proc = subprocess.run(
            [session, "--", "sh", "-c", inner],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        authorized = [r.authorization for r in server.chat_requests]

    assert result["backend"] == "SecretService Keyring"
    assert result["set"][0] == 0, result["set"]
    assert result["read_back"] is True
    assert "local" in result["list"][1] and "keyring" in result["list"][1]
    assert result["check"][0] == 0 and "OK: local-model answered" in result["check"][1], result["check"]
    assert result["delete"][0] == 0
    assert result["after_delete"] is None
    code, text = result["check_without_key"]
    assert code == 3 and "rejected the API key (401)" in text
    assert authorized[0] == f"Bearer {KEY}", "check-model sent the key it found in the keyring"

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".keyring") for p in written), "gnome-keyring stored its collection in HOME"
    leaks = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert KEY not in proc.stdout + proc.stderr
