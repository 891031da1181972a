"""API keys: keyring first, then the file, then the environment; clear messages without a keyring."""

from __future__ import annotations

import pytest

from osw_studio.core.errors import SettingsError
from osw_studio.settings import Settings
from osw_studio.settings.secrets import SERVICE, delete_key, find_api_key, get_key, set_key
from tests.fakes.memory_keyring import MemoryKeyring


def profile(**fields: object):  # type: ignore[no-untyped-def]
    settings = Settings.model_validate({"profiles": {"p": {"model": "m", **fields}}})
    return settings.resolve_profile("p")


def test_set_get_delete_one_entry_per_profile(memory_keyring: MemoryKeyring) -> None:
    set_key("p", "  sk-one  ")
    set_key("q", "sk-two")
    assert memory_keyring.entries == {(SERVICE, "p"): "sk-one", (SERVICE, "q"): "sk-two"}
    assert get_key("p") == "sk-one"
    assert delete_key("p") is True
    assert delete_key("p") is False
    assert get_key("p") is None


def test_empty_or_spaced_keys_are_refused(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(SettingsError, match="empty"):
        set_key("p", "   ")
    with pytest.raises(SettingsError, match="whitespace"):
        set_key("p", "sk one")
    assert memory_keyring.entries == {}


def test_lookup_order(memory_keyring: MemoryKeyring) -> None:
    env = {"OPENAI_API_KEY": "from-openai", "MY_KEY": "from-profile-env", "OSW_STUDIO_API_KEY": "from-osw"}
    p = profile(api_key_env="MY_KEY", api_key="from-file")
    memory_keyring.entries[(SERVICE, "p")] = "from-keyring"
    assert find_api_key(p, env).key.source == "keyring"  # type: ignore[union-attr]
    del memory_keyring.entries[(SERVICE, "p")]
    assert find_api_key(p, env).value == "from-file"
    p = profile(api_key_env="MY_KEY")
    assert find_api_key(p, env).value == "from-osw"
    del env["OSW_STUDIO_API_KEY"]
    lookup = find_api_key(p, env)
    assert (lookup.value, lookup.key.source) == ("from-profile-env", "$MY_KEY")  # type: ignore[union-attr]
    del env["MY_KEY"]
    assert find_api_key(p, env).value == "from-openai"
    assert find_api_key(p, {}).key is None


def test_without_a_keyring_backend_the_message_names_the_alternatives(no_keyring: None) -> None:
    with pytest.raises(SettingsError) as info:
        set_key("p", "sk-x")
    text = str(info.value)
    assert "no keyring backend" in text
    for alternative in ("OSW_STUDIO_API_KEY", "api_key_env", "OPENAI_API_KEY"):
        assert alternative in text
    lookup = find_api_key(profile(), {"OPENAI_API_KEY": "sk-env"})
    assert lookup.value == "sk-env", "the environment still works without a keyring"
    lookup = find_api_key(profile(), {})
    assert lookup.keyring_error == "no keyring backend is installed or running"
    with pytest.raises(SettingsError) as info:
        lookup.require()
    assert "no API key for profile 'p'" in str(info.value)
    assert "OSW_STUDIO_API_KEY" in str(info.value)
