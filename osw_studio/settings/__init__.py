"""Settings (settings.json, profiles) and API keys in the OS keyring.

Examples:
    >>> from osw_studio.settings import Settings
    >>> Settings().resolve_profile().base_url
    'https://api.openai.com/v1'
"""

from osw_studio.settings.model import (
    DEFAULT_PROFILE,
    AgentSettings,
    EnvironmentSettings,
    Evaluation,
    ModelProvider,
    Profile,
    ResolvedProfile,
    Settings,
)
from osw_studio.settings.store import default_settings_path, dump_settings, load_settings, save_settings
from osw_studio.settings.url import normalize_base_url, url_variants

__all__ = [
    "DEFAULT_PROFILE",
    "AgentSettings",
    "EnvironmentSettings",
    "Evaluation",
    "ModelProvider",
    "Profile",
    "ResolvedProfile",
    "Settings",
    "default_settings_path",
    "dump_settings",
    "load_settings",
    "normalize_base_url",
    "save_settings",
    "url_variants",
]
