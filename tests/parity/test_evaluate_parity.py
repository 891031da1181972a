"""Task-level parity: a guest that fails a command, and negative SSIM, scored as OSWorld scores them.

A small OSWorld-style guest on 127.0.0.1 answers ``/execute`` with HTTP 500 and OSWorld's JSON error
body. OSWorld's own ``get_vm_command_line`` gets None from it; ours must too, and the metric then
scores 0 with the reason, where it used to raise and leave no score. A guest that cannot be reached
stays an error in both (OSWorld's raises a connection error).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from osw_studio.core.errors import GuestError
from osw_studio.core.task import Evaluator
from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.local import free_port
from osw_studio.evaluation.evaluate import score_evaluator
from osw_studio.evaluation.registry import GetterContext
from tests.parity.reference import Reference, ReferenceError


class _FailingGuest(BaseHTTPRequestHandler):
    """Answers every POST as OSWorld's server does when a command cannot run: 500 and a JSON error."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"status": "error", "message": "the command failed"}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_guest() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingGuest)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


ENV = "class Env:\n    vm_ip = '127.0.0.1'\n    vm_machine = 'x86_64'\n    server_port = {port}\n"


def test_osworld_getter_gives_none_on_http_500(metric_reference: Reference, failing_guest: int) -> None:
    value = metric_reference.exec(
        ENV.format(port=failing_guest) + "result = m0.get_vm_command_line(Env(), {'command': 'true'})",
        modules=("desktop_env.evaluators.getters.general",),
    )
    assert value is None
    score = metric_reference.call(
        "desktop_env.evaluators.metrics.general", "exact_match", None, {"expected": ""}
    )
    assert score == 0.0


async def test_our_getter_gives_none_and_the_metric_scores_0(failing_guest: int, tmp_path: Path) -> None:
    evaluator = Evaluator.model_validate(
        {
            "func": ["check_include_exclude", "exact_match"],
            "conj": "or",
            "result": [
                {"type": "vm_command_line", "command": "echo hi"},
                {"type": "vm_command_error", "command": "echo hi"},
            ],
            "expected": [
                {"type": "rule", "rules": {"include": ["hi"]}},
                {"type": "rule", "rules": {"expected": "hi"}},
            ],
        }
    )
    async with GuestClient(f"http://127.0.0.1:{failing_guest}") as guest:
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        result = await score_evaluator(ctx, "t1", evaluator)
    assert result.score == 0.0
    assert [m.score for m in result.metrics] == [0.0, 0.0]
    summaries = [g.summary for m in result.metrics for g in m.getters if g.role == "result"]
    assert all("HTTP 500" in s and s.startswith("None") for s in summaries), summaries


async def test_an_unreachable_guest_stays_an_error(metric_reference: Reference, tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(ReferenceError, match="ConnectionError"):
        metric_reference.exec(
            ENV.format(port=port) + "result = m0.get_vm_command_line(Env(), {'command': 'true'})",
            modules=("desktop_env.evaluators.getters.general",),
        )
    evaluator = Evaluator.model_validate(
        {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": "true"},
            "expected": {"type": "rule", "rules": {"expected": ""}},
        }
    )
    async with GuestClient(f"http://127.0.0.1:{port}") as guest:
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        with pytest.raises(GuestError, match="cannot connect"):
            await score_evaluator(ctx, "t1", evaluator)


async def test_negative_ssim_lowers_an_and_mean_and_a_task_scores_at_least_0(tmp_path: Path) -> None:
    from tests.parity.test_metrics_files import inverted_pair

    a, b = inverted_pair(tmp_path)
    image, inverted = {"type": "cache_file", "path": a.name}, {"type": "cache_file", "path": b.name}
    evaluator = Evaluator.model_validate(
        {
            "func": ["compare_images", "exact_match"],
            "result": [image, {"type": "rule", "rules": "x"}],
            "expected": [inverted, {"type": "rule", "rules": {"expected": "x"}}],
        }
    )
    async with GuestClient("http://127.0.0.1:9") as guest:  # never contacted: cache and rule getters only
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        result = await score_evaluator(ctx, "t1", evaluator)
    ssim = result.metrics[0].score
    assert ssim is not None and ssim < 0  # OSWorld's and-mean: (ssim + 1) / 2, not an early 0
    assert result.score == pytest.approx((ssim + 1.0) / 2)
    single = Evaluator.model_validate({"func": "compare_images", "result": image, "expected": inverted})
    async with GuestClient("http://127.0.0.1:9") as guest:
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        alone = await score_evaluator(ctx, "t1", single)
    assert alone.score == 0.0 and "OSWorld reports" in alone.reason


async def test_a_metric_that_cannot_take_the_guests_none_scores_0_flagged(
    metric_reference: Reference, failing_guest: int, tmp_path: Path
) -> None:
    # OSWorld's is_in_list raises on the None its getter gives; its run scores the task 0, as we do.
    with pytest.raises(ReferenceError, match="TypeError"):
        metric_reference.call("desktop_env.evaluators.metrics.general", "is_in_list", None, {"expected": "x"})
    evaluator = Evaluator.model_validate(
        {
            "func": "is_in_list",
            "result": {"type": "vm_command_line", "command": "echo x"},
            "expected": {"type": "rule", "rules": {"expected": "x"}},
        }
    )
    async with GuestClient(f"http://127.0.0.1:{failing_guest}") as guest:
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        result = await score_evaluator(ctx, "t1", evaluator)
    assert result.score == 0.0 and "the guest failed" in result.metrics[0].reason
    # The cause points at the environment: it is said beside the score, not instead of it.
    assert len(result.environment) == 1 and "HTTP 500" in result.environment[0]
    assert result.environment[0].startswith("func[0] is_in_list:")


async def test_missing_expected_and_cache_files_are_flagged_beside_the_score(tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("x\n")
    evaluator = Evaluator.model_validate(
        {
            "func": ["compare_text_file", "compare_text_file", "exact_match"],
            "conj": "or",
            "result": [
                {"type": "cache_file", "path": "gone.txt"},
                {"type": "cache_file", "path": "here.txt"},
                {"type": "rule", "rules": "a"},
            ],
            "expected": [
                {"type": "cache_file", "path": "here.txt"},
                {"type": "cache_file", "path": "also-gone.txt"},
                {"type": "rule", "rules": {"expected": "b"}},
            ],
        }
    )
    async with GuestClient("http://127.0.0.1:9") as guest:  # never contacted: cache and rule getters only
        ctx = GetterContext(guest=guest, cache_dir=tmp_path, task_dir=tmp_path)
        result = await score_evaluator(ctx, "t1", evaluator)
    assert result.score == 0.0 and [m.score for m in result.metrics] == [0.0, 0.0, 0.0]
    assert [e.split(":")[0] for e in result.environment] == [
        "func[0] compare_text_file",
        "func[1] compare_text_file",
    ]
    assert "gone.txt" in result.environment[0] and "also-gone.txt" in result.environment[1]
