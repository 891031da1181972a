"""Our metrics against ``--evaluator osworld`` (OSWorld's own functions in the side environment).

Scores the same generated files (a workbook with sheet_data and freeze rules, a docx, a pptx, a CSV,
two images) with both, in one run: medians of the time per metric call, their ratio, and the side
worker's first call (its start and imports). Prints a table and writes bench/results.json "evaluator".
Needs the side environment (``make setup``); without it, says so and exits 0.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from osw_studio.evaluation.osworld import OSWorldMetrics, reference_python  # noqa: E402
from osw_studio.evaluation.registry import METRICS, Verdict  # noqa: E402
from tests.parity.metric_check import FACTORIES, File, resolve  # noqa: E402
from tests.parity.test_metrics_docs import _doc  # noqa: E402
from tests.parity.test_metrics_files import _img  # noqa: E402
from tests.parity.test_metrics_slides import _pptx  # noqa: E402
from tests.parity.test_metrics_table import OWN_RULES, _book  # noqa: E402

RESULTS = ROOT / "bench" / "results.json"
TRIALS = 7

CALLS: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    "compare_table": ("compare_table", (_book("value"), _book("base")), {"rules": OWN_RULES["mixed"]}),
    "compare_docx_files": ("compare_docx_files", (_doc("typo"), _doc("base")), {}),
    "compare_pptx_files": ("compare_pptx_files", (_pptx("color"), _pptx("base")), {}),
    "compare_images": ("compare_images", (_img("moved"), _img("base")), {}),
}


def _median(func: Callable[[], object]) -> float:
    times = []
    for _ in range(TRIALS):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ours(metric: str, args: tuple[Any, ...], options: dict[str, Any]) -> float:
    value = METRICS.get(metric)(*args, **options)
    return float(value.score if isinstance(value, Verdict) else value)


def main() -> int:
    python = reference_python()
    if not python.is_file():
        print(f"no side environment at {python}; run make setup")
        return 0
    assert FACTORIES and File
    folder = Path(tempfile.mkdtemp(prefix="osw-bench-eval-"))
    worker = OSWorldMetrics(python)
    try:
        t0 = time.perf_counter()
        first_name, (metric, args, options) = next(iter(CALLS.items()))
        worker.score_sync(metric, list(resolve(args, folder)), resolve(options, folder))
        first = time.perf_counter() - t0
        figures: dict[str, Any] = {"osworld_first_call_s": round(first, 3), "metrics": {}}
        print(f"{'metric':<22}{'ours ms':>10}{'osworld ms':>12}{'ratio':>8}")
        for name, (metric, args, options) in CALLS.items():
            a, o = resolve(args, folder), resolve(options, folder)
            assert abs(ours(metric, a, o) - worker.score_sync(metric, list(a), o)) <= 1e-9, name
            mine = _median(lambda m=metric, a=a, o=o: ours(m, a, o))
            theirs = _median(lambda m=metric, a=a, o=o: worker.score_sync(m, list(a), o))
            figures["metrics"][name] = {
                "ours_ms": round(mine * 1000, 2),
                "osworld_ms": round(theirs * 1000, 2),
                "ratio": round(theirs / mine, 2),
            }
            print(f"{name:<22}{mine * 1000:>10.1f}{theirs * 1000:>12.1f}{theirs / mine:>8.2f}")
        print(f"osworld worker's first call ({first_name}, start and imports): {first:.2f} s")
    finally:
        worker.close()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["evaluator"] = {"trials": TRIALS, "statistic": "median", **figures}
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
