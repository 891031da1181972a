"""Settings (settings.json, profiles) and API keys in the OS keyring."""
