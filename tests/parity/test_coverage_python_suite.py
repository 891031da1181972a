"""Differential test: ``check_python_file_by_test_suite`` (in bubblewrap) against OSWorld's (in-process),
on test suites that pass, fail, score in between, crash, do not load or lack their function; and the
sandbox itself: the task's code cannot write outside its folder or reach the network."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from tests.parity.guest_env import agree, stub_missing
from tests.parity.reference import Reference

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

GAME = "SPEED = 3\n\ndef step(x):\n    return x + SPEED\n"
SUITES = {
    "passes": "from game import step\n\ndef test():\n    return step(1) == 4\n",
    "fails": "from game import step\n\ndef test():\n    return step(1) == 5\n",
    "half": "def test():\n    return 0.5\n",
    "too-much": "def test():\n    return 7\n",
    "negative": "def test():\n    return -2\n",
    "truthy": "def test():\n    return [1]\n",
    "empty": "def test():\n    return ''\n",
    "raises": "def test():\n    raise RuntimeError('broken')\n",
    "syntax": "def test(:\n    return True\n",
    "import-error": "import no_such_module_here\n\ndef test():\n    return True\n",
    "no-function": "def check():\n    return True\n",
    "not-callable": "test = True\n",
    "reads-cwd": "import os\n\ndef test():\n    return os.path.exists('game.py')\n",
    "prints": "def test():\n    print('OSW-TEST-SCORE-ish noise')\n    return True\n",
}


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("options", [{}, {"test_function_name": "check"}])
def test_check_python_file_by_test_suite(
    ref: Reference, tmp_path: Path, suite: str, options: dict[str, str]
) -> None:
    (tmp_path / "game.py").write_text(GAME)
    (tmp_path / "test_suite.py").write_text(SUITES[suite])
    agree(
        ref,
        "vscode",
        "check_python_file_by_test_suite",
        [str(tmp_path / "game.py")],
        str(tmp_path / "test_suite.py"),
        **options,
    )


def test_missing_test_file(ref: Reference, tmp_path: Path) -> None:
    agree(ref, "vscode", "check_python_file_by_test_suite", [], str(tmp_path / "absent.py"))
    agree(ref, "vscode", "check_python_file_by_test_suite", [], None)


def test_the_test_code_is_confined(tmp_path: Path) -> None:
    from osw_studio.evaluation.registry import METRICS

    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "cache"
    folder.mkdir()
    probe = (
        "import socket\n\ndef test():\n"
        f"    open({str(outside / 'x')!r}, 'w').write('escaped')\n"
        "    return True\n"
    )
    (folder / "suite.py").write_text(probe)
    assert METRICS.get("check_python_file_by_test_suite")([], str(folder / "suite.py")) == 0.0
    assert not (outside / "x").exists()
    with socket.socket() as server:  # a port that answers on the host's loopback, not in the sandbox's
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        connect = f"socket.create_connection(('127.0.0.1', {port}), timeout=2)"
        network = f"import socket\n\ndef test():\n    {connect}\n    return True\n"
        (folder / "net.py").write_text(network)
        assert METRICS.get("check_python_file_by_test_suite")([], str(folder / "net.py")) == 0.0
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # the host itself reaches it
    own = "def test():\n    open('written.txt', 'w').write('ok')\n    return True\n"
    (folder / "own.py").write_text(own)
    assert METRICS.get("check_python_file_by_test_suite")([], str(folder / "own.py")) == 1.0
    assert (folder / "written.txt").read_text() == "ok"
