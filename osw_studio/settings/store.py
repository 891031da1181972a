"""Reading and writing ``settings.json``.

The file lives in the platform config dir (``~/.config/osw-studio/settings.json`` on Linux) unless
``--config`` names another. Writing is atomic (a temporary file, then a rename) and never includes an
API key: a key found in the file is moved into the keyring first.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from osw_studio.core.errors import SettingsError
from osw_studio.settings.model import DEFAULT_PROFILE, Settings

APP_NAME = "osw-studio"
FILE_NAME = "settings.json"


def default_settings_path() -> Path:
    """Where settings live when ``--config`` is not given."""
    import platformdirs

    return platformdirs.user_config_path(APP_NAME, appauthor=False) / FILE_NAME


def _json_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def parse_settings(data: Any, *, source: str = FILE_NAME) -> Settings:
    """Validate plain data as settings, turning every problem into one readable :class:`SettingsError`.

    >>> parse_settings({"agent": {"max_tokens": 0}}, source="s.json")
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.SettingsError: s.json: $.agent.max_tokens: Input should be greater than or \
equal to 1 (fix the value, or delete the key to use the default)
    """
    if not isinstance(data, dict):
        raise SettingsError("the settings file must hold a JSON object", where=source)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_json_path(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
        raise SettingsError(
            "; ".join(problems), where=source, hint="fix the value, or delete the key to use the default"
        ) from None
    for name in settings.profile_names:
        resolved = settings.resolve_profile(name)
        if resolved.preset_inferred:
            settings.notices.append(
                f"{source}: profile {name!r} runs model {resolved.model!r} with its preset "
                f"{resolved.preset!r} "
                '(as OSWorld runs it); name a "preset" or an "agent" in the profile to choose otherwise'
            )
        if resolved.file_api_key is not None:
            loc = (
                "$.model_provider.api_key"
                if name == DEFAULT_PROFILE and name not in settings.profiles
                else (f"$.profiles.{name}.api_key")
            )
            settings.notices.append(
                f"{source}: {loc}: an API key is stored in plain text; it is used for now, but move it into "
                "the OS keyring with `osw-studio keys import` (OSW Studio never writes keys to files)"
            )
    return settings


def load_settings(path: str | os.PathLike[str] | None = None, *, missing_ok: bool | None = None) -> Settings:
    """Read settings from ``path`` (default: :func:`default_settings_path`).

    Args:
        path: The settings file.
        missing_ok: Return defaults when the file does not exist. Default: True for the default path,
            False for a path the user named.

    Raises:
        SettingsError: If the file is unreadable, not JSON, or holds invalid values (naming the JSON path).
    """
    file = Path(path) if path is not None else default_settings_path()
    if missing_ok is None:
        missing_ok = path is None
    try:
        text = _read_text(file)
    except FileNotFoundError:
        if not missing_ok:
            raise SettingsError(
                "no such settings file", where=str(file), hint="check the --config path"
            ) from None
        settings = Settings()
        settings._path = file
        return settings
    except OSError as exc:
        raise SettingsError(f"cannot read the settings file: {exc.strerror}", where=str(file)) from None
    except UnicodeDecodeError as exc:
        raise SettingsError(
            f"not UTF-8 text (byte {exc.start})", where=str(file), hint="save the file as UTF-8"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"not valid JSON: {exc.msg}", where=f"{file}:{exc.lineno}:{exc.colno}", hint="fix the JSON syntax"
        ) from None
    except RecursionError:
        raise SettingsError(
            "JSON nested too deeply to be settings", where=str(file), hint="fix or remove the file"
        ) from None
    settings = parse_settings(data, source=str(file))
    settings._path = file
    return settings


MAX_SETTINGS_BYTES = 1024 * 1024
"""A settings file is a few kilobytes; anything past this is refused before it is parsed."""


def _read_text(file: Path) -> str:
    """The file's text, refusing what is not a regular file or is too large, without ever blocking.

    ``--config /dev/zero`` would otherwise read forever and a FIFO would wait for a writer.

    Raises:
        FileNotFoundError: If the file does not exist.
        SettingsError: If it is not a regular file or is too large.
        OSError: If it cannot be read.
        UnicodeDecodeError: If it is not UTF-8.
    """
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SettingsError(
                "not a regular file (a device, pipe or folder)",
                where=str(file),
                hint="give --config a settings.json file",
            )
        data = f.read(MAX_SETTINGS_BYTES + 1)
    if len(data) > MAX_SETTINGS_BYTES:
        raise SettingsError(
            f"the file is larger than {MAX_SETTINGS_BYTES // 1024} KiB; settings files are a few KiB",
            where=str(file),
            hint="give --config a settings.json file",
        )
    return data.decode("utf-8")


def dump_settings(settings: Settings) -> dict[str, Any]:
    """The settings as JSON data, without any API key.

    >>> s = parse_settings({"model_provider": {"api_key": "sk-1", "model": "m"}})
    >>> dump_settings(s)["model_provider"]
    {'base_url': 'https://api.openai.com/v1', 'model': 'm', 'timeout': 120.0, 'max_retries': 3}
    """
    data = settings.model_dump(mode="json", exclude_none=True)
    # exclude_none drops unknown keys whose value is null too; they belong to whoever wrote them.
    _restore_null_extras(data, settings)
    for name in ("model_provider", "evaluation", "agent"):
        _restore_null_extras(data.setdefault(name, {}), getattr(settings, name))
    for name, profile in settings.profiles.items():
        _restore_null_extras(data.setdefault("profiles", {}).setdefault(name, {}), profile)
    # Keys are excluded field by field; this is the belt to those braces, for extra keys.
    for section in [data.get("model_provider", {}), *data.get("profiles", {}).values()]:
        section.pop("api_key", None)
    return data


def _restore_null_extras(data: dict[str, Any], model: Any) -> None:
    for key, value in (model.model_extra or {}).items():
        if value is None:
            data.setdefault(key, None)
    # A null that overrides a non-null default (agent.top_p: null, "send no top_p") means something.
    for name, info in type(model).model_fields.items():
        if getattr(model, name) is None and info.default is not None and not info.exclude:
            data.setdefault(name, None)


def save_settings(settings: Settings, path: str | os.PathLike[str] | None = None) -> Path:
    """Write ``settings`` atomically to ``path`` (default: where they were loaded from) and return it.

    API keys are never written. A key that came from the file is first stored in the keyring under
    its profile, so saving never loses it.

    Raises:
        SettingsError: If the file cannot be written, or a key from the file cannot be moved to the keyring.
    """
    from osw_studio.settings.secrets import set_key

    file = Path(path) if path is not None else (settings.path or default_settings_path())
    for name in settings.profile_names:
        key = settings.resolve_profile(name).file_api_key
        if key is not None and key.get_secret_value().strip():  # a blank key is no key to keep
            set_key(name, key.get_secret_value())
    text = json.dumps(dump_settings(settings), indent=2, ensure_ascii=False) + "\n"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            Path(tmp).chmod(0o600)
            Path(tmp).replace(file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SettingsError(f"cannot write the settings file: {exc.strerror}", where=str(file)) from None
    settings._path = file
    settings.notices.clear()
    return file
