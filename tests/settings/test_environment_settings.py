"""The ``environment`` section: the app's provider and guest URL, typed, saved and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.core.errors import SettingsError
from osw_studio.settings import EnvironmentSettings, Settings, load_settings, save_settings
from tests.fakes.memory_keyring import MemoryKeyring


def test_provider_url_and_screen_survive_a_save_and_a_load(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings()
    settings.environment = EnvironmentSettings(provider="remote", url="http://10.0.0.5:5000/")
    settings.evaluation = settings.evaluation.model_copy(update={"screen_resolution": (1280, 720)})
    path = save_settings(settings, tmp_path / "settings.json")

    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["environment"] == {
        "provider": "remote",
        "url": "http://10.0.0.5:5000",
        "network": "none",
        "desktop": "studio",
    }
    again = load_settings(path)
    assert (again.environment.provider, again.environment.url) == ("remote", "http://10.0.0.5:5000")
    assert again.evaluation.screen_resolution == (1280, 720)


def test_files_written_when_environment_was_an_untyped_key_still_load(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    old = {"environment": {"provider": "remote", "url": "http://h:5000", "note": "lab VM"}}
    path.write_text(json.dumps(old), encoding="utf-8")
    settings = load_settings(path)
    assert settings.environment == EnvironmentSettings(provider="remote", url="http://h:5000", note="lab VM")
    path.write_text(json.dumps({"environment": {"provider": None, "url": None}}), encoding="utf-8")
    assert load_settings(path).environment.provider == "local"
    assert Settings().environment.provider == "local"  # no section at all


def test_an_unknown_provider_names_the_key_and_the_choices(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"environment": {"provider": "vmware"}}), encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert "$.environment.provider" in str(caught.value)
    assert "'local', 'remote' or 'docker'" in str(caught.value)


def test_changing_the_environment_tells_listeners() -> None:
    settings = Settings()
    seen: list[str] = []
    settings.changed.connect(seen.append)
    settings.environment = EnvironmentSettings(provider="docker")
    assert seen == ["environment"]
