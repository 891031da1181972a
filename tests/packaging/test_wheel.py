"""``pip install osw-studio``: the sdist and wheel build, pass ``twine check``, and the wheel installed into a
fresh virtualenv gives a working ``osw-studio`` (version, task validation, resources, the window)."""

from __future__ import annotations

import sys
import venv
import zipfile
from pathlib import Path

import pytest

from osw_studio import __version__
from tests.packaging.conftest import ROOT, opens_and_closes_window, run, user_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    home = tmp_path_factory.mktemp("home")
    result = run([sys.executable, "-m", "build", "--outdir", out, ROOT], user_env(home), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="module")
def installed(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv (no system site-packages) with the wheel and its dependencies installed."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    home = tmp_path_factory.mktemp("home")
    # --no-compile: byte-compiling pandas and pyarrow is most of the time and proves nothing here.
    pip = [env_dir / "bin" / "python", "-m", "pip", "install", "--no-compile", "-q", dists["wheel"]]
    result = run(pip, user_env(home, PIP_DISABLE_PIP_VERSION_CHECK="1"), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return env_dir


def test_sdist_and_wheel_pass_twine_check(dists: dict[str, Path], tmp_path: Path) -> None:
    result = run([sys.executable, "-m", "twine", "check", "--strict", *dists.values()], user_env(tmp_path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_wheel_carries_the_resources_and_nothing_of_the_checkout(dists: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dists["wheel"]).namelist()

    assert "osw_studio/resources/prompts/osworld_step_a11y_tree.txt" in names
    assert "osw_studio/resources/icons/app/hicolor/256x256/apps/osw-studio.png" in names
    assert "osw_studio/resources/icons/actions/24/run.png" in names
    assert "osw_studio/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "scripts/", "osw_studio/tests"))]


def test_installed_wheel_prints_its_version(installed: Path, tmp_path: Path) -> None:
    result = run([installed / "bin" / "osw-studio", "--version"], user_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"osw-studio {__version__}"


def test_installed_wheel_validates_the_bundled_tasks(installed: Path, tmp_path: Path) -> None:
    result = run([installed / "bin" / "osw-studio", "tasks", "validate", "tasks/"], user_env(tmp_path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 invalid" in result.stdout


def test_installed_wheel_runs_from_its_own_files(installed: Path, tmp_path: Path) -> None:
    code = (
        "import osw_studio, osw_studio.agent.prompts as p, osw_studio.ui.icons as i;"
        "print(osw_studio.__file__); print(len(p.load_prompt('osworld_step_a11y_tree')) > 0);"
        "print(i.icons_dir())"
    )
    # Outside the checkout, so that `python -c` cannot import the source tree instead.
    result = run([installed / "bin" / "python", "-c", code], user_env(tmp_path), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    package, prompt_found, icons = result.stdout.split()
    assert Path(package).is_relative_to(installed)
    assert prompt_found == "True"
    assert Path(icons).is_relative_to(installed)


def test_installed_wheel_opens_the_window_and_exits_cleanly(installed: Path, tmp_path: Path) -> None:
    opens_and_closes_window([installed / "bin" / "osw-studio"], tmp_path)
