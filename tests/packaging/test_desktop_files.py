"""The Linux desktop integration: a valid .desktop file and AppStream metadata, installed the XDG way."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from osw_studio import __version__

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
DESKTOP = LINUX / "osw-studio.desktop"
METAINFO = LINUX / "io.github.oswstudio.OSWStudio.metainfo.xml"
INSTALL = LINUX / "install-desktop.sh"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (packaging/apt-packages.txt lists it)")
    return path


def _problems(output: str) -> list[str]:
    """Lines of a validator's output that are errors or warnings (hints, infos and pedantic notes pass)."""
    return [
        line
        for line in output.splitlines()
        if line.startswith(("E:", "W:")) or ": error:" in line or ": warning:" in line
    ]


def test_desktop_file_passes_desktop_file_validate() -> None:
    result = subprocess.run(
        [_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert _problems(result.stdout + result.stderr) == []


def test_metainfo_passes_appstreamcli_validate() -> None:
    result = subprocess.run(
        [_tool("appstreamcli"), "validate", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert _problems(result.stdout + result.stderr) == []


def test_metainfo_names_this_release_the_launcher_and_the_icon() -> None:
    root = ET.parse(METAINFO).getroot()
    newest = root.find("releases/release")
    assert newest is not None and newest.get("version") == __version__
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "osw-studio"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(DESKTOP, encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert root.findtext("icon") == desktop["Icon"] == "osw-studio"
    assert root.findtext("name") == desktop["Name"] == "OSW Studio"
    assert desktop["Exec"] == "osw-studio"
    assert (ROOT / "resources" / "icons" / "app" / f"{desktop['Icon']}.svg").is_file()


def _install(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, env=env, timeout=60)


def test_install_desktop_puts_launcher_metadata_and_icons_under_xdg_data_home(tmp_path: Path) -> None:
    program = tmp_path / "bin" / "osw-studio"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    data = tmp_path / "share"

    result = _install(data, "--exec", str(program))

    assert result.returncode == 0, result.stderr
    assert "applications menu" in result.stdout
    launcher = (data / "applications" / "osw-studio.desktop").read_text()
    assert f"Exec={program}\n" in launcher and f"TryExec={program}\n" in launcher
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    icons = data / "icons" / "hicolor"
    assert (icons / "scalable" / "apps" / "osw-studio.svg").is_file()
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        assert (icons / f"{size}x{size}" / "apps" / "osw-studio.png").is_file()
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(
            ["desktop-file-validate", str(data / "applications" / "osw-studio.desktop")],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert check.returncode == 0, check.stdout

    removed = _install(data, "--uninstall")

    assert removed.returncode == 0, removed.stderr
    left = [p for p in data.rglob("*") if p.is_file() and "osw" in p.name.lower()]
    assert left == []


def test_install_desktop_says_what_to_do_when_the_program_is_missing(tmp_path: Path) -> None:
    result = _install(tmp_path / "share", "--exec", str(tmp_path / "nowhere" / "osw-studio"))

    assert result.returncode != 0
    assert "--exec" in result.stderr
    assert not (tmp_path / "share" / "applications" / "osw-studio.desktop").exists()
