"""settings.json: the common skeleton, profiles, validation messages, atomic saves without keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.core.errors import SettingsError
from osw_studio.settings import Profile, Settings, load_settings, save_settings
from osw_studio.settings.secrets import SERVICE, find_api_key
from tests.fakes.memory_keyring import MemoryKeyring

SKELETON = {
    "model_provider": {
        "base_url": "http://127.0.0.1:8000/v1/",
        "api_key": "sk-file-secret-0123456789",
        "model": "ui-tars-1.5-7b",
        "timeout": 60,
        "max_retries": 2,
    },
    "evaluation": {
        "benchmark": "osworld",
        "task_suite": "evaluation_examples/test_small.json",
        "max_steps": 30,
        "screen_resolution": "1920x1080",
        "action_space": "pyautogui",
        "save_screenshots": True,
        "output_dir": "./results",
    },
    "agent": {
        "observation_type": "screenshot_a11y_tree",
        "history_window": 5,
        "temperature": 0.0,
        "max_tokens": 2048,
    },
}


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def files_containing(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_the_common_skeleton_loads_verbatim(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path / "settings.json", SKELETON))
    assert settings.model_provider.base_url == "http://127.0.0.1:8000/v1"
    assert settings.model_provider.timeout == 60
    assert settings.evaluation.screen_resolution == (1920, 1080)
    assert settings.agent.observation_type == "screenshot_a11y_tree"
    profile = settings.resolve_profile()
    assert (profile.name, profile.model, profile.max_retries, profile.max_tokens) == (
        "default",
        "ui-tars-1.5-7b",
        2,
        500,  # the model's preset (uitars-1.5) sets it; the agent section fills what the preset leaves
    )
    assert (profile.preset, profile.preset_inferred, profile.observation_type) == (
        "uitars-1.5",
        True,
        "screenshot_a11y_tree",
    )


def test_a_key_in_the_file_is_used_and_the_user_told_to_move_it(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = write(tmp_path / "settings.json", SKELETON)
    settings = load_settings(path)
    keys = [n for n in settings.notices if "api_key" in n]  # the other says which preset the model got
    assert len(keys) == 1
    assert "$.model_provider.api_key" in keys[0]
    assert "osw-studio keys import" in keys[0]
    lookup = find_api_key(settings.resolve_profile(), environ={})
    assert lookup.key is not None and lookup.key.source == "settings file"
    assert lookup.value == "sk-file-secret-0123456789"
    assert "sk-file" not in repr(settings) and "sk-file" not in repr(settings.resolve_profile())


def test_saving_never_writes_the_key_but_keeps_it_in_the_keyring(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = write(tmp_path / "settings.json", {**SKELETON, "custom_tool": {"x": 1}})
    settings = load_settings(path)
    settings.agent = settings.agent.model_copy(update={"temperature": 0.7})
    save_settings(settings)
    data = json.loads(path.read_text())
    assert "api_key" not in data["model_provider"]
    assert data["agent"]["temperature"] == 0.7
    assert data["custom_tool"] == {"x": 1}, "keys of other tools survive a save"
    assert data["evaluation"]["screen_resolution"] == "1920x1080"
    assert memory_keyring.entries[(SERVICE, "default")] == "sk-file-secret-0123456789"
    assert files_containing(tmp_path, "sk-file-secret") == []
    again = load_settings(path)
    assert [n for n in again.notices if "api_key" in n] == []
    assert find_api_key(again.resolve_profile(), environ={}).key.source == "keyring"  # type: ignore[union-attr]


def test_saving_a_file_key_without_a_keyring_fails_and_leaves_the_file(
    tmp_path: Path, no_keyring: None
) -> None:
    path = write(tmp_path / "settings.json", SKELETON)
    before = path.read_text()
    settings = load_settings(path)
    with pytest.raises(SettingsError) as info:
        save_settings(settings)
    assert "OSW_STUDIO_API_KEY" in str(info.value)
    assert path.read_text() == before


def test_invalid_json_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{\n  "agent": {"max_tokens": 10,}\n}')
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert f"{path}:2:" in str(info.value)
    assert "not valid JSON" in str(info.value)


def test_invalid_values_name_their_json_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.json",
        {
            "agent": {"max_tokens": 0},
            "evaluation": {"screen_resolution": "big"},
            "profiles": {"x": {"agent": "gpt"}},
        },
    )
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    text = str(info.value)
    assert "$.agent.max_tokens" in text
    assert "$.evaluation.screen_resolution: write the resolution as WIDTHxHEIGHT" in text
    assert "$.profiles.x.agent" in text


def test_a_bad_base_url_is_explained(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(write(tmp_path / "s.json", {"model_provider": {"base_url": "localhost:8000"}}))
    assert "is not an http(s) URL" in str(info.value)


def test_a_missing_named_file_is_an_error_but_the_default_location_is_optional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SettingsError, match="no such settings file"):
        load_settings(tmp_path / "nope.json")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    settings = load_settings()
    assert settings.path == tmp_path / "config" / "osw-studio" / "settings.json"
    assert settings.model_provider.model == "gpt-4o"


def test_profiles_fill_in_from_the_top_level_sections(tmp_path: Path) -> None:
    data = {
        "model_provider": {"base_url": "https://gateway.example.com/v1", "model": "gpt-4o"},
        "agent": {"temperature": 0.2},
        "profiles": {
            "tars": {"base_url": "http://127.0.0.1:8000/v1/v1", "model": "ui-tars", "agent": "uitars"},
            "dart": {"model": "dart-gui-7b", "agent": "uitars", "coordinate_mode": "relative_1000"},
            "claude": {"model": "claude-sonnet", "temperature": 1.0, "api_key_env": "GATEWAY_KEY"},
        },
        "active_profile": "tars",
    }
    settings = load_settings(write(tmp_path / "s.json", data))
    tars = settings.resolve_profile()
    assert (tars.name, tars.base_url, tars.coordinate_mode, tars.action_space) == (
        "tars",
        "http://127.0.0.1:8000/v1",
        "smart",
        "uitars",
    )
    claude = settings.resolve_profile("claude")
    assert (claude.base_url, claude.temperature, claude.coordinate_mode) == (
        "https://gateway.example.com/v1",
        1.0,
        "abs",
    )
    with pytest.raises(SettingsError) as info:
        settings.resolve_profile("nope")
    assert "known profiles: default, tars, dart, claude" in str(info.value)
    dart = settings.resolve_profile("dart")
    assert (dart.coordinate_mode, dart.history_window) == ("rel1000", 5)


def test_views_hear_every_change() -> None:
    settings = Settings()
    seen: list[str] = []
    settings.changed.connect(seen.append)
    settings.agent = settings.agent.model_copy(update={"history_window": 1})
    settings.set_profile("local", Profile(model="m"))
    settings.active_profile = "local"
    settings.remove_profile("local")
    assert seen == ["agent", "profiles", "active_profile", "profiles", "active_profile"]
    assert settings.resolve_profile().name == "default"


def test_sections_cannot_be_changed_behind_the_signal() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="frozen"):
        settings.agent.temperature = 1.0  # type: ignore[misc]
