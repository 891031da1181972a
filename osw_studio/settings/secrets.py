"""API keys: in the OS keyring (service ``osw-studio``, one entry per profile), never in files.

A key is looked up in this order, and the first one found is used:

1. the keyring entry of the profile;
2. an ``api_key`` written in the settings file (used, but the user is told to move it);
3. the ``OSW_STUDIO_API_KEY`` environment variable;
4. the variable the profile names in ``api_key_env``;
5. ``OPENAI_API_KEY``.

Local servers (vLLM, SGLang) often need no key at all, so finding none is not an error until the
endpoint answers 401; :meth:`KeyLookup.require` turns it into one that names every alternative.

A remote guest server's token is kept the same way, in an entry named ``guest:`` and its URL (profile
names cannot hold a colon, so the two never meet); :func:`find_guest_token` reads ``OSW_GUEST_TOKEN``
first, then the keyring (bounded in time: a keyring that prompts must not hang a run). A guest's VNC
password likewise, under ``vnc:`` and its ``HOST:PORT``
(:func:`find_vnc_password`, falling back to ``OSW_VNC_PASSWORD``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from osw_studio.core.errors import SettingsError
from osw_studio.settings.model import ResolvedProfile

SERVICE = "osw-studio"
"""The keyring service name; the profile name is the entry's user name."""

ENV_KEY = "OSW_STUDIO_API_KEY"
OPENAI_ENV_KEY = "OPENAI_API_KEY"
GUEST_TOKEN_ENV = "OSW_GUEST_TOKEN"
GUEST_PREFIX = "guest:"
"""Keyring user names of guest tokens start with this, followed by the guest server's URL."""
VNC_PASSWORD_ENV = "OSW_VNC_PASSWORD"
VNC_PREFIX = "vnc:"
"""Keyring user names of VNC passwords start with this, followed by the server's ``HOST:PORT``."""


@dataclass(frozen=True)
class ApiKey:
    """A key and where it came from (``keyring``, ``settings file`` or ``$NAME``)."""

    value: str = field(repr=False)
    source: str


@dataclass(frozen=True)
class KeyLookup:
    """The result of looking for a profile's key."""

    profile: str
    key: ApiKey | None
    keyring_error: str | None = None

    @property
    def value(self) -> str | None:
        """The key, or None."""
        return self.key.value if self.key else None

    def require(self) -> str:
        """The key, or a :class:`SettingsError` that says where keys can come from.

        Raises:
            SettingsError: If no key was found.
        """
        if self.key is not None:
            return self.key.value
        raise SettingsError(f"no API key for profile {self.profile!r}", hint=alternatives(self.keyring_error))


def alternatives(keyring_error: str | None = None) -> str:
    """What a user can do to give a key, mentioning why the keyring failed when it did."""
    ways = (
        f"store it with `osw-studio keys set --profile NAME`, or set {ENV_KEY}, "
        f"the variable named by the profile's api_key_env, or {OPENAI_ENV_KEY}"
    )
    if keyring_error:
        return (
            f"the OS keyring is unavailable ({keyring_error}); set {ENV_KEY}, the variable named by "
            f"the profile's api_key_env, or {OPENAI_ENV_KEY} instead, or start a Secret Service "
            "(gnome-keyring, KWallet)"
        )
    return ways


def _backend() -> Any:
    import keyring

    return keyring.get_keyring()


def _fail(action: str, exc: BaseException) -> SettingsError:
    return SettingsError(
        f"could not {action} the OS keyring: {_describe(exc)}",
        where=f"keyring service {SERVICE!r}",
        hint=alternatives(_describe(exc)),
    )


def _describe(exc: BaseException) -> str:
    import keyring.errors

    if isinstance(exc, keyring.errors.NoKeyringError):
        return "no keyring backend is installed or running"
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def backend_name() -> str:
    """A readable name of the keyring backend in use (``SecretService Keyring``, ``fail Keyring``)."""
    backend = _backend()
    return f"{type(backend).__module__.rsplit('.', 1)[-1]} {type(backend).__name__}"


def get_key(profile: str) -> str | None:
    """The key stored in the keyring for ``profile``, or None.

    Raises:
        SettingsError: If the keyring cannot be used (no backend, locked, D-Bus error).
    """
    try:
        value = _backend().get_password(SERVICE, profile)
    # The keyring reports problems through many exception types (its own, secretstorage's,
    # jeepney's, D-Bus errors); every one of them means the same thing to the user.
    except Exception as exc:
        raise _fail("read", exc) from exc
    return value if isinstance(value, str) and value else None


def set_key(profile: str, key: str) -> None:
    """Store ``key`` for ``profile`` in the keyring, replacing any previous one.

    Raises:
        SettingsError: If the key is empty or the keyring cannot be used.
    """
    key = key.strip()
    if not key:
        raise SettingsError("the API key is empty", hint="paste the key at the prompt, or pipe it on stdin")
    if any(ch.isspace() for ch in key):
        raise SettingsError("the API key contains whitespace", hint="check that only the key was pasted")
    try:
        _backend().set_password(SERVICE, profile, key)
    except Exception as exc:  # see get_key
        raise _fail("write to", exc) from exc


def delete_key(profile: str) -> bool:
    """Delete the keyring entry of ``profile``; False when there was none.

    Raises:
        SettingsError: If the keyring cannot be used.
    """
    import keyring.errors

    try:
        if _backend().get_password(SERVICE, profile) is None:
            return False
        _backend().delete_password(SERVICE, profile)
    except keyring.errors.PasswordDeleteError:
        return False
    except Exception as exc:  # see get_key
        raise _fail("delete from", exc) from exc
    return True


def find_api_key(profile: ResolvedProfile, environ: Mapping[str, str] | None = None) -> KeyLookup:
    """Look for ``profile``'s key in the keyring, the settings file and the environment (in that order)."""
    env = os.environ if environ is None else environ
    keyring_error: str | None = None
    try:
        stored = get_key(profile.name)
    except SettingsError as exc:
        stored = None
        keyring_error = _describe(exc.__cause__) if exc.__cause__ else exc.message
    if stored:
        return KeyLookup(profile.name, ApiKey(stored, "keyring"))
    if profile.file_api_key is not None and profile.file_api_key.get_secret_value():
        return KeyLookup(profile.name, ApiKey(profile.file_api_key.get_secret_value(), "settings file"))
    names = [ENV_KEY, profile.api_key_env, OPENAI_ENV_KEY]
    for name in names:
        if name and env.get(name, "").strip():
            return KeyLookup(profile.name, ApiKey(env[name].strip(), f"${name}"), keyring_error)
    return KeyLookup(profile.name, None, keyring_error)


# --- guest server tokens ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenLookup:
    """The result of looking for a guest server's token.

    Attributes:
        url: The guest server.
        value: The token, or None (OSWorld's guest servers and ``--no-token`` ones need none).
        source: ``keyring``, ``$OSW_GUEST_TOKEN`` or ``none``.
        keyring_error: Why the keyring could not be read, when it could not.
    """

    url: str
    value: str | None = field(repr=False)
    source: str
    keyring_error: str | None = None


def guest_entry(url: str) -> str:
    """The keyring user name of the token of the guest server at ``url``.

    >>> guest_entry(" http://10.0.0.5:5000/ ")
    'guest:http://10.0.0.5:5000'
    """
    return GUEST_PREFIX + url.strip().rstrip("/")


def _require_url(url: str) -> str:
    if not url.strip().rstrip("/"):
        raise SettingsError(
            "a guest token needs the guest server's URL", hint="give the URL, e.g. http://10.0.0.5:5000"
        )
    return guest_entry(url)


def get_guest_token(url: str) -> str | None:
    """The token stored in the keyring for the guest server at ``url``, or None.

    Raises:
        SettingsError: If the URL is empty or the keyring cannot be used.
    """
    return get_key(_require_url(url))


def set_guest_token(url: str, token: str) -> None:
    """Store the token of the guest server at ``url`` in the keyring, replacing any previous one.

    Raises:
        SettingsError: If the URL or token is empty, the token holds whitespace, or the keyring fails.
    """
    entry = _require_url(url)
    token = token.strip()
    if not token:
        raise SettingsError(
            "the guest token is empty", hint="paste the token the guest server printed (token=...)"
        )
    if any(ch.isspace() for ch in token):
        raise SettingsError(
            "the guest token contains whitespace", hint="check that only the token was pasted"
        )
    _store(entry, token)


def _store(entry: str, secret: str) -> None:
    try:
        _backend().set_password(SERVICE, entry, secret)
    except Exception as exc:  # see get_key
        raise _fail("write to", exc) from exc


def delete_guest_token(url: str) -> bool:
    """Delete the stored token of the guest server at ``url``; False when there was none.

    Raises:
        SettingsError: If the URL is empty or the keyring cannot be used.
    """
    return delete_key(_require_url(url))


KEYRING_TIMEOUT_S = 10.0
"""The longest a token lookup waits for the keyring (a Secret Service that prompts may never answer)."""


def find_guest_token(url: str, environ: Mapping[str, str] | None = None) -> TokenLookup:
    """Look for the token of the guest server at ``url``: ``$OSW_GUEST_TOKEN``, then the keyring.

    The variable comes first, so setting it always works, even where the keyring would hang; the
    keyring is given :data:`KEYRING_TIMEOUT_S`. A keyring that cannot be read (or does not answer) is
    not an error here (OSWorld guests need no token); the lookup says why it failed.
    """
    return _find(url, lambda: get_guest_token(url), GUEST_TOKEN_ENV, environ, env_first=True)


def _find(
    where: str,
    stored_secret: Callable[[], str | None],
    variable: str,
    environ: Mapping[str, str] | None,
    *,
    env_first: bool = False,
) -> TokenLookup:
    env = os.environ if environ is None else environ
    value = env.get(variable, "").strip()
    if value and env_first:
        return TokenLookup(where, value, f"${variable}")
    keyring_error: str | None = None
    try:
        stored = _bounded(stored_secret, KEYRING_TIMEOUT_S)
    except SettingsError as exc:
        stored = None
        keyring_error = _describe(exc.__cause__) if exc.__cause__ else exc.message
    except TimeoutError:
        stored = None
        keyring_error = (
            f"the keyring did not answer within {KEYRING_TIMEOUT_S:g} s (is it waiting for a password "
            f"prompt?); set ${variable} instead"
        )
    if stored:
        return TokenLookup(where, stored, "keyring")
    if value:
        return TokenLookup(where, value, f"${variable}", keyring_error)
    return TokenLookup(where, None, "none", keyring_error)


def _bounded(call: Callable[[], str | None], seconds: float) -> str | None:
    """``call()`` in a daemon thread, waited for at most ``seconds``.

    Raises:
        TimeoutError: If it has not returned by then (the thread is left to finish on its own).
        Exception: Whatever ``call`` raises.
    """
    done = threading.Event()
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))
        done.set()

    threading.Thread(target=run, name="keyring-lookup", daemon=True).start()
    if not done.wait(seconds):
        raise TimeoutError(f"no answer within {seconds:g} s")
    ok, result = outcome[0]
    if not ok:
        raise result
    return cast(str | None, result)


def guest_token(url: str) -> str | None:
    """The token of the guest server at ``url`` (:func:`find_guest_token`'s value), or None."""
    return find_guest_token(url).value


# --- VNC passwords ---------------------------------------------------------------------------------


def vnc_entry(address: str) -> str:
    """The keyring user name of the password of the VNC server at ``address`` (``HOST:PORT``).

    >>> vnc_entry(" 10.0.0.5:5900 ")
    'vnc:10.0.0.5:5900'
    """
    return VNC_PREFIX + address.strip()


def set_vnc_password(address: str, password: str) -> None:
    """Store the password of the VNC server at ``address``, replacing any previous one.

    VNC Authentication uses only the first 8 characters; longer passwords are kept whole (the server
    compares the same 8).

    Raises:
        SettingsError: If the address or password is empty, or the keyring fails.
    """
    if not address.strip():
        raise SettingsError(
            "a VNC password needs the server's address", hint="give HOST:PORT, e.g. 10.0.0.5:5900"
        )
    if not password:
        raise SettingsError("the VNC password is empty", hint="type the password the VNC server was given")
    _store(vnc_entry(address), password)


def delete_vnc_password(address: str) -> bool:
    """Delete the stored password of the VNC server at ``address``; False when there was none.

    Raises:
        SettingsError: If the keyring cannot be used.
    """
    return delete_key(vnc_entry(address))


def find_vnc_password(address: str, environ: Mapping[str, str] | None = None) -> TokenLookup:
    """Look for the password of the VNC server at ``address``: the keyring, then ``$OSW_VNC_PASSWORD``.

    None found is not an error: many VNC servers ask for none, and one that does says so.
    """
    return _find(address, lambda: get_key(vnc_entry(address)), VNC_PASSWORD_ENV, environ)
