"""``environment.vnc`` and VNC passwords: the address typed and checked, the password in the keyring."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import SettingsError
from osw_studio.settings import EnvironmentSettings, Settings, load_settings, save_settings
from osw_studio.settings.secrets import SERVICE, find_vnc_password, set_vnc_password
from osw_studio.ui.services import Services
from tests.fakes.memory_keyring import MemoryKeyring


def test_the_address_is_normalised_saved_and_read_back(tmp_path: Path, memory_keyring: MemoryKeyring) -> None:
    settings = Settings()
    settings.environment = EnvironmentSettings(provider="remote", url="http://10.0.0.5:5000", vnc=" 5901 ")
    path = save_settings(settings, tmp_path / "settings.json")
    assert json.loads(path.read_text(encoding="utf-8"))["environment"]["vnc"] == "5901"
    assert load_settings(path).environment.vnc == "5901"
    assert EnvironmentSettings(vnc="vnc://[::1]:5902").vnc == "[::1]:5902"
    assert EnvironmentSettings(vnc=5900).vnc == "5900"  # a number in the file is a port
    assert EnvironmentSettings(vnc="  ").vnc is None


def test_a_wrong_address_in_the_file_says_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"environment": {"vnc": "10.0.0.5:99999"}}), encoding="utf-8")
    with pytest.raises(SettingsError, match="port must be 1 to 65535") as caught:
        load_settings(path)
    assert "environment.vnc" in str(caught.value)


def test_the_viewer_gets_the_guest_host_and_the_stored_password(
    tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OSW_VNC_PASSWORD", raising=False)
    settings = Settings()
    services = Services(settings, tmp_path / "runs")
    assert services.vnc_target("http://10.0.0.5:5000") is None  # no port given: screenshots
    settings.environment = EnvironmentSettings(provider="remote", url="http://10.0.0.5:5000", vnc="5900")
    target = services.vnc_target("http://10.0.0.5:5000")
    assert target is not None and (str(target), target.password) == ("10.0.0.5:5900", None)

    set_vnc_password("10.0.0.5:5900", "s3cret")
    assert memory_keyring.entries == {(SERVICE, "vnc:10.0.0.5:5900"): "s3cret"}
    target = services.vnc_target("http://10.0.0.5:5000")
    assert target is not None and target.password == "s3cret" and "s3cret" not in repr(target)

    monkeypatch.setenv("OSW_VNC_PASSWORD", "from-env")
    assert find_vnc_password("10.0.0.6:5900").source == "$OSW_VNC_PASSWORD"
    assert find_vnc_password("10.0.0.5:5900").source == "keyring"


def test_keys_set_vnc_stores_under_the_guest_host(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OSW_VNC_PASSWORD", raising=False)
    config = tmp_path / "settings.json"
    env = {"provider": "remote", "url": "http://10.0.0.5:5000", "vnc": "5900"}
    config.write_text(json.dumps({"environment": env}), encoding="utf-8")
    base = ["--config", str(config), "keys"]
    monkeypatch.setattr("sys.stdin", io.StringIO("pa ss\n"))
    assert main([*base, "set", "--vnc", "5900"]) == 0
    assert memory_keyring.entries == {(SERVICE, "vnc:10.0.0.5:5900"): "pa ss"}
    assert main([*base, "list"]) == 0
    out = capsys.readouterr().out
    assert "VNC 10.0.0.5:5900: password from keyring" in out and "pa ss" not in out
    assert main([*base, "delete", "--vnc", "10.0.0.5:5900"]) == 0
    assert main([*base, "delete", "--vnc", "10.0.0.5:5900"]) == 1
    assert main([*base, "set", "--vnc", "host:port"]) == 2
    assert "--vnc 'host:port' is not HOST:PORT" in capsys.readouterr().err
