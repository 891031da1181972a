"""``osw-studio keys``: API keys in the OS keyring (service ``osw-studio``, one entry per profile).

A key is read from a hidden prompt, or from stdin when it is not a terminal
(``printf %s "$KEY" | osw-studio keys set``); never from the command line, where it would end up in
the shell history and the process list.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``keys set``, ``keys delete``, ``keys list`` and ``keys import``."""
    keys = subparsers.add_parser(
        "keys",
        help="store, delete and list API keys in the OS keyring",
        description="API keys live in the OS keyring (service 'osw-studio', one entry per profile), never in "
        "settings.json. Without a keyring, set OSW_STUDIO_API_KEY, a profile's api_key_env variable, "
        "or OPENAI_API_KEY.",
    )
    sub = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)

    set_ = sub.add_parser(
        "set",
        help="store a profile's key (from a hidden prompt or stdin)",
        description="Store the key of a profile. The key is read from a hidden prompt, or from stdin when "
        "stdin is not a terminal; it is never accepted as an argument.",
    )
    set_.add_argument("--profile", help="profile name (default: the active profile, or 'default')")
    set_.set_defaults(handler=_set)

    delete = sub.add_parser("delete", help="delete a profile's key from the keyring")
    delete.add_argument("--profile", help="profile name (default: the active profile, or 'default')")
    delete.set_defaults(handler=_delete)

    listing = sub.add_parser("list", help="show each profile and where its key comes from (never the key)")
    listing.set_defaults(handler=_list)

    imp = sub.add_parser(
        "import",
        help="move keys written in settings.json into the keyring",
        description="Move every api_key found in the settings file into the keyring, then rewrite the "
        "file without them.",
    )
    imp.set_defaults(handler=_import)


def _profile(args: argparse.Namespace) -> str:
    from osw_studio.settings import load_settings

    if args.profile:
        return str(args.profile)
    settings = load_settings(args.config)
    return settings.resolve_profile().name


def read_secret(prompt: str) -> str:
    """Read a secret from a hidden prompt, or the first line of stdin when it is not a terminal."""
    import getpass

    if sys.stdin is not None and sys.stdin.isatty():
        return getpass.getpass(prompt)
    line = sys.stdin.readline() if sys.stdin is not None else ""
    return line.strip()


def _set(args: argparse.Namespace) -> int:
    from osw_studio.settings.secrets import backend_name, set_key

    profile = _profile(args)
    key = read_secret(f"API key for profile {profile!r}: ")
    set_key(profile, key)
    print(f"stored the key of profile {profile!r} in the keyring ({backend_name()})")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from osw_studio.settings.secrets import delete_key

    profile = _profile(args)
    if delete_key(profile):
        print(f"deleted the key of profile {profile!r} from the keyring")
        return 0
    print(f"profile {profile!r} has no key in the keyring")
    return 1


def _list(args: argparse.Namespace) -> int:
    from osw_studio.settings import load_settings
    from osw_studio.settings.secrets import find_api_key

    settings = load_settings(args.config)
    for notice in settings.notices:
        print(f"note: {notice}", file=sys.stderr)
    rows = []
    keyring_error = None
    for name in settings.profile_names:
        profile = settings.resolve_profile(name)
        lookup = find_api_key(profile)
        keyring_error = keyring_error or lookup.keyring_error
        source = lookup.key.source if lookup.key else "none"
        rows.append((name, source, profile.model, profile.base_url))
    width = max(len(r[0]) for r in rows)
    print(f"{'PROFILE':<{width}}  {'KEY FROM':<20}  {'MODEL':<30}  BASE URL")
    for name, source, model, url in rows:
        print(f"{name:<{width}}  {source:<20}  {model:<30}  {url}")
    if keyring_error:
        print(f"note: the OS keyring is unavailable ({keyring_error})", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from osw_studio.settings import load_settings, save_settings

    settings = load_settings(args.config)
    moved = [n for n in settings.profile_names if settings.resolve_profile(n).file_api_key is not None]
    if not moved:
        print(f"no API keys in {settings.path}")
        return 0
    path = save_settings(settings)
    for name in moved:
        print(f"moved the key of profile {name!r} into the keyring")
    print(f"rewrote {path} without keys")
    return 0
