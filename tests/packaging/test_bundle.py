"""``make package``: the PyInstaller one-folder app starts, serves the guest API and exits cleanly.

Builds the bundle once for the module (about 1.5 minutes on 2 cores), into a temporary folder; set
``OSW_STUDIO_TEST_BUNDLE=dist/osw-studio/osw-studio`` to test a bundle built before instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from osw_studio import __version__
from tests.fakes.desktop import start_xvfb, stop
from tests.packaging.conftest import ROOT, opens_and_closes_window, run, user_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle's program, built by ``make package`` (or ``$OSW_STUDIO_TEST_BUNDLE``, one built before)."""
    if prebuilt := os.environ.get("OSW_STUDIO_TEST_BUNDLE"):
        return Path(prebuilt).resolve()
    out = tmp_path_factory.mktemp("package")
    home = tmp_path_factory.mktemp("home")
    make = [
        "make", "--no-print-directory", "-o", ".venv/.installed", "package",
        f"PACKAGE_DIST={out / 'dist'}", f"PACKAGE_WORK={out / 'work'}",
        f"BIN={Path(sys.executable).parent}",
    ]  # fmt: skip
    result = run(make, user_env(home), timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    program = out / "dist" / "osw-studio" / "osw-studio"
    assert os.access(program, os.X_OK), result.stdout
    return program


def test_bundle_prints_its_version(bundle: Path, tmp_path: Path) -> None:
    result = run([bundle, "--version"], user_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"osw-studio {__version__}"


def test_bundle_validates_tasks(bundle: Path, tmp_path: Path) -> None:
    result = run([bundle, "tasks", "validate", "tasks/"], user_env(tmp_path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 invalid" in result.stdout


def test_bundle_opens_the_window_offscreen_and_exits_cleanly(bundle: Path, tmp_path: Path) -> None:
    opens_and_closes_window([bundle], tmp_path)


def test_bundle_finds_its_resources_and_writes_parquet(bundle: Path, tmp_path: Path) -> None:
    # A script run by the bundle's own interpreter, as the guest's /run_python does.
    script = tmp_path / "check.py"
    script.write_text(
        "import sys\n"
        "import pyarrow as pa, pyarrow.parquet as pq\n"
        "from osw_studio.agent.prompts import load_prompt\n"
        "from osw_studio.ui.icons import icons_dir\n"
        "pq.write_table(pa.table({'step': [1, 2]}), sys.argv[1])\n"
        "print(pq.read_table(sys.argv[1]).num_rows, bool(load_prompt('osworld_step_a11y_tree')))\n"
        "print(icons_dir())\n"
    )
    result = run([bundle, script, tmp_path / "steps.parquet"], user_env(tmp_path), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    rows_and_prompt, icons = result.stdout.splitlines()
    assert rows_and_prompt == "2 True"
    assert Path(icons).is_relative_to(bundle.parent)
    assert (Path(icons) / "actions" / "24" / "run.png").is_file()


@pytest.fixture
def display() -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    xvfb, display = start_xvfb((1280, 720))
    try:
        yield display
    finally:
        stop(xvfb)


# The two ways a guest server is started: by a person, and by the local provider (`<python> -m ...`).
@pytest.mark.parametrize("command", [["guest", "serve"], ["-m", "osw_studio.guest"]])
def test_bundle_serves_the_guest_api(bundle: Path, display: str, tmp_path: Path, command: list[str]) -> None:
    ready = tmp_path / "ready"
    env = user_env(tmp_path, OSW_GUEST_TOKEN="secret-token")
    argv = [str(bundle), *command, "--display", display, "--port", "0", "--ready-file", str(ready)]
    server = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().strip()  # blocks until the server accepts connections
        assert line.startswith("osw-studio guest ready on http://127.0.0.1:"), server.stderr
        base = line.split()[4]
        headers = {"Authorization": "Bearer secret-token"}
        with httpx.Client(base_url=base, headers=headers, timeout=20) as client:
            assert client.get("/platform").text.strip('"') == "Linux"
            screenshot = client.get("/screenshot")
            assert screenshot.status_code == 200
            assert screenshot.content.startswith(b"\x89PNG")
            assert client.get("/platform", headers={"Authorization": "Bearer wrong"}).status_code == 401
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, errors = server.communicate(timeout=20)
    assert server.returncode in (0, -signal.SIGTERM)
    assert "Traceback" not in errors


def test_bundle_holds_the_desktop_icon_for_the_launcher(bundle: Path) -> None:
    icon = bundle.parent / "_internal" / "osw_studio" / "resources" / "icons" / "app" / "osw-studio.svg"
    assert icon.read_bytes() == (ROOT / "resources" / "icons" / "app" / "osw-studio.svg").read_bytes()
