"""``osw-studio keys``: API keys and guest tokens in the OS keyring (service ``osw-studio``).

One entry per profile (its API key) and one per remote guest server (``keys set --guest URL``: the
token that server printed at start; ``$OSW_GUEST_TOKEN`` is the fallback). A secret is read from a
hidden prompt, or from stdin when it is not a terminal (``printf %s "$KEY" | osw-studio keys set``);
never from the command line, where it would end up in the shell history and the process list.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from osw_studio.core.exit_codes import ExitCode


def register(subparsers: Any) -> None:
    """Add ``keys set``, ``keys delete``, ``keys list`` and ``keys import``."""
    keys = subparsers.add_parser(
        "keys",
        help="store, delete and list API keys and guest tokens in the OS keyring",
        description="API keys live in the OS keyring (service 'osw-studio', one entry per profile), never in "
        "settings.json. Without a keyring, set OSW_STUDIO_API_KEY, a profile's api_key_env variable, "
        "or OPENAI_API_KEY. Remote guest servers' tokens live there too (--guest URL), else in "
        "OSW_GUEST_TOKEN.",
    )
    sub = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)

    set_ = sub.add_parser(
        "set",
        help="store a profile's key (from a hidden prompt or stdin)",
        description="Store the key of a profile. The key is read from a hidden prompt, or from stdin when "
        "stdin is not a terminal; it is never accepted as an argument.",
    )
    _whose(set_)
    set_.set_defaults(handler=_set)

    delete = sub.add_parser("delete", help="delete a profile's key or a guest's token from the keyring")
    _whose(delete)
    delete.set_defaults(handler=_delete)

    listing = sub.add_parser(
        "list",
        help="show each profile and where its key comes from, and the remote guest's token (never a secret)",
    )
    listing.set_defaults(handler=_list)

    imp = sub.add_parser(
        "import",
        help="move keys written in settings.json into the keyring",
        description="Move every api_key found in the settings file into the keyring, then rewrite the "
        "file without them.",
    )
    imp.set_defaults(handler=_import)


def _whose(parser: Any) -> None:
    whose = parser.add_mutually_exclusive_group()
    whose.add_argument("--profile", help="profile name (default: the active profile, or 'default')")
    whose.add_argument(
        "--guest",
        metavar="URL",
        help="the token of the guest server at URL (as given to --provider remote), not an API key",
    )
    whose.add_argument(
        "--vnc",
        metavar="HOST:PORT",
        help="the password of the VNC server the viewer uses for a guest without a live stream "
        "(a PORT alone: on the host of the settings' guest URL)",
    )


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


def _vnc_address(args: argparse.Namespace) -> str:
    from osw_studio.core.errors import SettingsError
    from osw_studio.settings import load_settings
    from osw_studio.settings.vnc import format_vnc_address, vnc_address

    try:
        return format_vnc_address(*vnc_address(args.vnc, load_settings(args.config).environment.url))
    except ValueError as exc:
        raise SettingsError(f"--vnc {exc}", hint="give HOST:PORT, e.g. 10.0.0.5:5900") from None


def _set(args: argparse.Namespace) -> int:
    from osw_studio.settings.secrets import backend_name, set_guest_token, set_key, set_vnc_password

    if args.vnc:
        address = _vnc_address(args)
        set_vnc_password(address, read_secret(f"password of the VNC server at {address}: "))
        print(f"stored the password of the VNC server at {address} in the keyring ({backend_name()})")
        return ExitCode.OK
    if args.guest:
        set_guest_token(args.guest, read_secret(f"token of the guest server at {args.guest}: "))
        print(f"stored the token of the guest server at {args.guest} in the keyring ({backend_name()})")
        return ExitCode.OK
    profile = _profile(args)
    key = read_secret(f"API key for profile {profile!r}: ")
    set_key(profile, key)
    print(f"stored the key of profile {profile!r} in the keyring ({backend_name()})")
    return ExitCode.OK


def _delete(args: argparse.Namespace) -> int:
    from osw_studio.settings.secrets import delete_guest_token, delete_key, delete_vnc_password

    if args.vnc:
        address = _vnc_address(args)
        if delete_vnc_password(address):
            print(f"deleted the password of the VNC server at {address} from the keyring")
            return ExitCode.OK
        print(f"the VNC server at {address} has no password in the keyring")
        return ExitCode.FAILED
    if args.guest:
        if delete_guest_token(args.guest):
            print(f"deleted the token of the guest server at {args.guest} from the keyring")
            return ExitCode.OK
        print(f"the guest server at {args.guest} has no token in the keyring")
        return ExitCode.FAILED
    profile = _profile(args)
    if delete_key(profile):
        print(f"deleted the key of profile {profile!r} from the keyring")
        return ExitCode.OK
    print(f"profile {profile!r} has no key in the keyring")
    return ExitCode.FAILED


def _list(args: argparse.Namespace) -> int:
    from osw_studio.settings import load_settings
    from osw_studio.settings.secrets import find_api_key, find_guest_token

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
    guest = settings.environment.url if settings.environment.provider == "remote" else None
    if guest:
        token = find_guest_token(guest)
        keyring_error = keyring_error or token.keyring_error
        print(f"\nremote guest {guest}: token from {token.source}")
    if settings.environment.vnc:
        from osw_studio.settings.secrets import find_vnc_password
        from osw_studio.settings.vnc import format_vnc_address, vnc_address

        address = format_vnc_address(*vnc_address(settings.environment.vnc, settings.environment.url))
        password = find_vnc_password(address)
        keyring_error = keyring_error or password.keyring_error
        print(f"VNC {address}: password from {password.source}")
    if keyring_error:
        print(f"note: the OS keyring is unavailable ({keyring_error})", file=sys.stderr)
    return ExitCode.OK


def _import(args: argparse.Namespace) -> int:
    from osw_studio.settings import load_settings, save_settings

    settings = load_settings(args.config)
    moved = [n for n in settings.profile_names if settings.resolve_profile(n).file_api_key is not None]
    if not moved:
        print(f"no API keys in {settings.path}")
        return ExitCode.OK
    path = save_settings(settings)
    for name in moved:
        print(f"moved the key of profile {name!r} into the keyring")
    print(f"rewrote {path} without keys")
    return ExitCode.OK
