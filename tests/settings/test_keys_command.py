"""``osw-studio keys``: the key comes from stdin or a hidden prompt, never argv, and is never printed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from osw_studio.cli import build_parser, main
from osw_studio.settings.secrets import SERVICE
from tests.fakes.memory_keyring import MemoryKeyring

KEY = "sk-cli-secret-9876543210"


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(argv)


def test_keys_set_reads_stdin_and_never_prints_the_key(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"profiles": {"tars": {"model": "ui-tars"}}, "active_profile": "tars"}))
    assert run(["--config", str(config), "keys", "set"], monkeypatch, KEY + "\n") == 0
    assert memory_keyring.entries[(SERVICE, "tars")] == KEY
    assert run(["--config", str(config), "keys", "list"], monkeypatch) == 0
    out = capsys.readouterr()
    assert "stored the key of profile 'tars'" in out.out
    assert "tars" in out.out and "keyring" in out.out
    assert KEY not in out.out + out.err
    assert run(["--config", str(config), "keys", "delete", "--profile", "tars"], monkeypatch) == 0
    assert run(["--config", str(config), "keys", "delete", "--profile", "tars"], monkeypatch) == 1
    assert memory_keyring.entries == {}


def test_keys_set_uses_a_hidden_prompt_on_a_terminal(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prompts: list[str] = []

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty())
    monkeypatch.setattr("getpass.getpass", lambda prompt: prompts.append(prompt) or KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert main(["keys", "set", "--profile", "work"]) == 0
    assert prompts == ["API key for profile 'work': "]
    assert memory_keyring.entries[(SERVICE, "work")] == KEY


def test_the_key_is_not_an_argument() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["keys", "set", "--profile", "p", KEY])


def test_keys_import_moves_file_keys_into_the_keyring(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "settings.json"
    data = {
        "model_provider": {"model": "m", "api_key": KEY},
        "profiles": {"local": {"base_url": "http://127.0.0.1:8000/v1", "api_key": KEY + "-local"}},
    }
    config.write_text(json.dumps(data))
    assert run(["--config", str(config), "keys", "import"], monkeypatch) == 0
    assert memory_keyring.entries == {(SERVICE, "default"): KEY, (SERVICE, "local"): KEY + "-local"}
    assert KEY not in config.read_text()
    out = capsys.readouterr().out
    assert "moved the key of profile 'default'" in out and "moved the key of profile 'local'" in out
    assert KEY not in out
    assert run(["--config", str(config), "keys", "import"], monkeypatch) == 0
    assert "no API keys in" in capsys.readouterr().out


def test_keys_set_without_a_keyring_says_what_to_do(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert run(["keys", "set"], monkeypatch, KEY) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert "OSW_STUDIO_API_KEY" in err and KEY not in err
