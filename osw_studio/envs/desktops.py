"""Desktop profiles: which applications a local or container guest offers, arranged how tasks expect.

``studio`` is the light desktop of the bundled tasks (mousepad, gnumeric, galculator). ``osworld``
arranges Debian's packages the way OSWorld's Ubuntu image arranges its applications, so OSWorld's task
files run unchanged: LibreOffice (Calc, Writer, Impress), GIMP, VLC with its HTTP interface on port
8080 (password ``password``, as OSWorld's VLC getters expect), Thunderbird, Chromium answering to
``google-chrome`` with its profile in ``~/.config/google-chrome`` (where OSWorld's Chrome getters read
it), ``socat``, ``python`` as Python 3, and VS Code (``code``) when the host has it installed.

A profile prepares the throwaway HOME at ``/home/user`` (folders, application settings) and a ``bin``
folder of small launchers put first on the guest's PATH; it never changes the host. The same code
arranges the Docker guest image's HOME when ``packaging/guest-image/build.sh --desktop osworld`` builds
it (``python -m osw_studio.envs.desktops osworld --home /home/user``, run in the image), so the sandbox
and the container offer one desktop.
"""

from __future__ import annotations

import argparse
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args

from osw_studio.core.errors import GuestError
from osw_studio.settings.model import DesktopName

DESKTOPS: tuple[str, ...] = get_args(DesktopName)

HOME_FOLDERS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Public", "Templates", "Videos")
"""The folders of an Ubuntu user's HOME (OSWorld's tasks write to several of them)."""

_CHROME = """#!/bin/sh
# google-chrome, as OSWorld's tasks start it: Debian's Chromium with the profile where Chrome keeps it.
# Chromium's own sandbox needs a user namespace of its own; where it cannot have one (as root, or inside
# a sandbox that allows no nested namespace) it runs without, and --test-type keeps the warning bar
# about that flag off the screen the agent sees.
set --  --user-data-dir="$HOME/.config/google-chrome" --no-first-run --no-default-browser-check \\
  --password-store=basic --disable-dev-shm-usage "$@"
if [ "$(id -u)" = 0 ] || ! unshare --user true 2>/dev/null; then
  set -- --no-sandbox --test-type "$@"
fi
exec {chromium} "$@"
"""

_PYTHON = """#!/bin/sh
exec {python3} "$@"
"""

# LibreOffice: no start centre tips, first-start wizard or "what's new" bar, and saving in a non-ODF
# format (.xlsx, .docx, .pptx: every OSWorld office task) does not stop to ask "Use Excel 2007-365!".
_LIBREOFFICE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" oor:op="fuse">
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse">
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse">
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="ooSetupInstCompleted" oor:op="fuse">
<value>true</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="LastTimeDonateShown" oor:op="fuse">
<value>9999999999</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse">
<value>99.0</value></prop></item>
</oor:items>
"""

# VLC: the HTTP interface OSWorld's VLC getters query (status.xml on 8080, password "password"), and no
# privacy question on the first start. The keys are VLC's own names in their own sections (http-host and
# http-port are core options, http-password the Lua interface's): VLC ignores others, and its HTTP
# interface with no password answers every request with 404.
_VLCRC = """[core]
extraintf=http
http-host=127.0.0.1
http-port=8080
[lua]
http-password=password
[qt]
qt-privacy-ask=0
"""

_CHROME_LOCAL_STATE = '{"browser": {"has_seen_welcome_page": true}}\n'


@dataclass(frozen=True)
class DesktopProfile:
    """One desktop's applications and arrangement.

    Attributes:
        name: ``studio`` or ``osworld``.
        commands: Programs the desktop needs, each with the Debian package that has it.
        optional: Programs used when present (``code``); tasks that need a missing one are skipped.
        installed: The programs a built guest image holds (see :meth:`in_image`); ``None``: the
            programs of this machine, looked up on its PATH.
    """

    name: DesktopName
    commands: dict[str, str] = field(default_factory=dict)
    optional: dict[str, str] = field(default_factory=dict)
    installed: frozenset[str] | None = None

    def in_image(self) -> DesktopProfile:
        """This desktop as the guest image built for it has it: every required program, no optional one.

        The image build fails when a required program is missing (:func:`main` checks), and it installs
        no optional one (VS Code is not in Debian).

        >>> sorted(PROFILES["osworld"].in_image().unavailable(["code", "gimp", "google-chrome"]))
        ['code']
        """
        return replace(self, installed=frozenset(self.commands) | set(self._launchers()))

    def missing(self) -> list[str]:
        """The Debian packages of required programs this host lacks."""
        return sorted({pkg for cmd, pkg in self.commands.items() if shutil.which(cmd) is None})

    def check(self) -> None:
        """Fail with the install command when a required program is missing.

        Raises:
            GuestError: Naming the packages and ``make setup-osworld``.
        """
        missing = self.missing()
        if missing:
            raise GuestError(
                f"the {self.name} desktop needs programs this machine lacks ({', '.join(missing)})",
                where=f"desktop {self.name}",
                hint="install them: make setup-osworld (or apt-get install " + " ".join(missing) + ")",
            )

    def unavailable(self, commands: list[str]) -> list[str]:
        """Which of ``commands`` (as tasks start them) this desktop cannot run here."""
        known = {**self.commands, **self.optional}
        if self.installed is not None:
            return [c for c in commands if c in known and c not in self.installed]
        return [c for c in commands if c in known and shutil.which(c) is None and c not in self._launchers()]

    def describe(self, command: str) -> str:
        """Where ``command`` comes from (its package), for messages."""
        return {**self.commands, **self.optional}.get(command, command)

    def _launchers(self) -> tuple[str, ...]:
        """The commands :meth:`prepare` writes a launcher for."""
        return ("google-chrome", "python") if self.name == "osworld" else ()

    def prepare(self, home: Path, bin_dir: Path, *, python: str | None = None) -> None:
        """Arrange a fresh HOME and write the launchers into ``bin_dir`` (put first on the guest's PATH).

        Args:
            home: The HOME to arrange.
            bin_dir: Where the launchers go (``~/.local/bin``).
            python: What ``python`` runs when this machine has no ``python`` (default: ``python3``).
        """
        for folder in HOME_FOLDERS:
            (home / folder).mkdir(parents=True, exist_ok=True)
        if self.name != "osworld":
            return
        bin_dir.mkdir(parents=True, exist_ok=True)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
        _write_exec(bin_dir / "google-chrome", _CHROME.format(chromium=chromium))
        if python is not None or shutil.which("python") is None:
            python = python or shutil.which("python3") or "python3"
            _write_exec(bin_dir / "python", _PYTHON.format(python3=python))
        _write(home / ".config/libreoffice/4/user/registrymodifications.xcu", _LIBREOFFICE)
        _write(home / ".config/vlc/vlcrc", _VLCRC)
        _write(home / ".config/google-chrome/Local State", _CHROME_LOCAL_STATE)
        (home / ".config/google-chrome/Default").mkdir(parents=True, exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_exec(path: Path, text: str) -> None:
    _write(path, text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


PROFILES: dict[str, DesktopProfile] = {
    "studio": DesktopProfile(
        "studio",
        optional={"mousepad": "mousepad", "gnumeric": "gnumeric", "galculator": "galculator"},
    ),
    "osworld": DesktopProfile(
        "osworld",
        commands={
            "libreoffice": "libreoffice-calc libreoffice-writer libreoffice-impress",
            "gimp": "gimp",
            "vlc": "vlc",
            "thunderbird": "thunderbird",
            "chromium": "chromium",
            "socat": "socat",
        },
        optional={"code": "code (VS Code, from Microsoft's packages)"},
    ),
}


def get_profile(name: str) -> DesktopProfile:
    """The profile called ``name``.

    Raises:
        GuestError: For an unknown name, listing the known ones.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise GuestError(f"unknown desktop {name!r}", hint=f"choose one of: {', '.join(DESKTOPS)}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Arrange a desktop's HOME inside a guest image (``build.sh --desktop osworld`` runs this).

    ``python -m osw_studio.envs.desktops osworld --home /home/user --python /opt/osw-studio/venv/bin/python``
    checks that the image holds the desktop's programs and writes what :meth:`DesktopProfile.prepare`
    writes for a sandbox, with the launchers in ``HOME/.local/bin``.
    """
    parser = argparse.ArgumentParser(prog="python -m osw_studio.envs.desktops", description=main.__doc__)
    parser.add_argument("desktop", choices=DESKTOPS)
    parser.add_argument("--home", type=Path, required=True, help="the HOME to arrange")
    parser.add_argument("--python", help="what `python` runs (default: python3)")
    args = parser.parse_args(argv)
    profile = get_profile(args.desktop)
    try:
        profile.check()
    except GuestError as exc:
        print(f"desktops: {exc}")
        return 1
    profile.prepare(args.home, args.home / ".local" / "bin", python=args.python)
    print(f"arranged the {profile.name} desktop in {args.home}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
