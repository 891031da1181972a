"""The environment of a fresh machine, for ``osw-studio`` run as a subprocess the way a new user runs it."""

from __future__ import annotations

import os
from pathlib import Path


def fresh_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment with an empty HOME and config dir in ``home`` and no key anywhere, then ``extra``.

    API key variables and DISPLAY are dropped, and the keyring is one that fails, so no key is found
    unless ``extra`` gives one.
    """
    env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY") and k != "DISPLAY"}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    env.update(extra)
    return env
