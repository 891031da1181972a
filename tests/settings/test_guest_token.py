"""A remote guest's token: in the keyring under its URL, else ``OSW_GUEST_TOKEN``; never in a file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import SettingsError
from osw_studio.settings import EnvironmentSettings, Settings, load_settings, save_settings
from osw_studio.settings.secrets import (
    SERVICE,
    delete_guest_token,
    find_guest_token,
    get_guest_token,
    set_guest_token,
)
from tests.fakes.memory_keyring import MemoryKeyring

TOKEN = "guest-token-5f2c9a71e3"
URL = "http://10.0.0.5:5000"


def test_a_token_is_kept_per_guest_url(memory_keyring: MemoryKeyring) -> None:
    set_guest_token(URL + "/", f"  {TOKEN}\n")
    assert memory_keyring.entries == {(SERVICE, f"guest:{URL}"): TOKEN}
    assert get_guest_token(URL) == TOKEN
    assert get_guest_token("http://10.0.0.6:5000") is None
    found = find_guest_token(URL, environ={})
    assert (found.value, found.source, found.keyring_error) == (TOKEN, "keyring", None)
    assert TOKEN not in repr(found)
    assert delete_guest_token(URL) and not delete_guest_token(URL)
    assert memory_keyring.entries == {}


def test_the_variable_comes_first_then_the_keyring(memory_keyring: MemoryKeyring) -> None:
    environ = {"OSW_GUEST_TOKEN": " from-env "}
    found = find_guest_token(URL, environ=environ)
    assert (found.value, found.source) == ("from-env", "$OSW_GUEST_TOKEN")
    set_guest_token(URL, TOKEN)
    assert find_guest_token(URL, environ=environ).value == "from-env"
    assert find_guest_token(URL, environ={}).value == TOKEN
    nothing = find_guest_token("http://other:5000", environ={})
    assert (nothing.value, nothing.source) == (None, "none")


@pytest.mark.usefixtures("no_keyring")
def test_without_a_keyring_the_variable_still_works_and_the_reason_is_kept() -> None:
    found = find_guest_token(URL, environ={"OSW_GUEST_TOKEN": TOKEN})
    assert (found.value, found.source) == (TOKEN, "$OSW_GUEST_TOKEN")
    missing = find_guest_token(URL, environ={})
    assert (missing.value, missing.keyring_error) == (None, "no keyring backend is installed or running")
    with pytest.raises(SettingsError, match="could not write to the OS keyring"):
        set_guest_token(URL, TOKEN)


@pytest.mark.parametrize(
    ("url", "token", "says"),
    [
        (URL, "  ", "the guest token is empty"),
        (URL, "two words", "the guest token contains whitespace"),
        (" / ", TOKEN, "a guest token needs the guest server's URL"),
    ],
)
def test_bad_input_is_refused(memory_keyring: MemoryKeyring, url: str, token: str, says: str) -> None:
    with pytest.raises(SettingsError, match=says):
        set_guest_token(url, token)
    assert memory_keyring.entries == {}


def test_saved_settings_never_hold_the_token(tmp_path: Path, memory_keyring: MemoryKeyring) -> None:
    settings = Settings()
    settings.environment = EnvironmentSettings(provider="remote", url=URL)
    set_guest_token(URL, TOKEN)
    path = save_settings(settings, tmp_path / "settings.json")
    assert TOKEN not in path.read_text(encoding="utf-8")
    assert load_settings(path).environment.url == URL


def test_keys_set_guest_reads_stdin_lists_and_deletes_without_printing_it(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OSW_GUEST_TOKEN", raising=False)
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"environment": {"provider": "remote", "url": URL}}), encoding="utf-8")
    base = ["--config", str(config), "keys"]

    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))
    assert main([*base, "set", "--guest", URL]) == 0
    assert memory_keyring.entries == {(SERVICE, f"guest:{URL}"): TOKEN}
    assert main([*base, "list"]) == 0
    assert main([*base, "delete", "--guest", URL]) == 0
    assert main([*base, "delete", "--guest", URL]) == 1
    assert main([*base, "list"]) == 0
    out = capsys.readouterr()
    assert f"stored the token of the guest server at {URL} in the keyring" in out.out
    assert f"remote guest {URL}: token from keyring" in out.out
    assert f"deleted the token of the guest server at {URL} from the keyring" in out.out
    assert f"the guest server at {URL} has no token in the keyring" in out.out
    assert f"remote guest {URL}: token from none" in out.out
    assert TOKEN not in out.out + out.err + config.read_text(encoding="utf-8")


def test_keys_set_takes_a_profile_or_a_guest_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["keys", "set", "--profile", "work", "--guest", URL])
    assert caught.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_keyring_that_never_answers_does_not_hang_the_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Secret Service waiting on a password prompt: the variable is read without asking it, and
    without the variable the lookup gives up after the bound, saying why."""
    import threading

    from osw_studio.settings import secrets as module

    release = threading.Event()
    asked: list[str] = []

    def prompting(url: str) -> str | None:
        asked.append(url)
        release.wait(30)
        return None

    monkeypatch.setattr(module, "get_guest_token", prompting)
    monkeypatch.setattr(module, "KEYRING_TIMEOUT_S", 0.5)
    try:
        found = find_guest_token(URL, environ={"OSW_GUEST_TOKEN": TOKEN})
        assert (found.value, asked) == (TOKEN, [])
        missing = find_guest_token(URL, environ={})
        assert missing.value is None and "did not answer within 0.5 s" in (missing.keyring_error or "")
    finally:
        release.set()
