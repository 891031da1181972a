"""Parse throughput of the action parsers, per format, on the test corpus's replies.

Prints a table of medians (replies per second) and writes them to bench/results.json under "actions".
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from osw_studio.actions import (  # noqa: E402
    CoordinateSpace,
    parse_computer13,
    parse_pyautogui,
    parse_uitars,
    render_computer13,
    render_pyautogui,
    render_uitars,
)
from osw_studio.core.actions import Action  # noqa: E402
from osw_studio.core.errors import ActionParseError  # noqa: E402

CORPUS = ROOT / "tests" / "actions" / "corpus"
RESULTS = ROOT / "bench" / "results.json"
TRIALS = 7
MIN_SECONDS = 0.2
SPACE = CoordinateSpace(mode="smart")


def replies(fmt: str) -> tuple[list[str], list[str]]:
    """The corpus's replies that parse, and those that must fail (uitars: those in the default space)."""
    good: list[str] = []
    bad: list[str] = []
    for chunk in (CORPUS / f"{fmt}.txt").read_text(encoding="utf-8").split("\n### ")[0:]:
        if "--- space" in chunk:
            continue
        reply = chunk.split("--- reply\n", 1)[1].split("\n--- ", 1)[0]
        (bad if "\n--- error" in chunk else good).append(reply)
    return good, bad


PARSERS: dict[str, Callable[[str], list[Action]]] = {
    "pyautogui": parse_pyautogui,
    "computer13": parse_computer13,
    "uitars": lambda text: parse_uitars(text, SPACE).actions,
}
RENDERERS: dict[str, Callable[[list[Action]], str]] = {
    "pyautogui": render_pyautogui,
    "computer13": render_computer13,
    "uitars": lambda actions: render_uitars(actions, SPACE),
}


def rate(func: Callable[[Any], object], items: list[Any]) -> float:
    """Median items per second over TRIALS trials of at least MIN_SECONDS each."""
    rates = []
    for _ in range(TRIALS):
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < MIN_SECONDS:
            for item in items:
                with contextlib.suppress(ActionParseError):
                    func(item)
            count += len(items)
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> int:
    figures: dict[str, dict[str, float | int]] = {}
    print(f"{'format':<12}{'replies':>9}{'parse ok /s':>14}{'parse error /s':>16}{'render /s':>12}")
    for fmt, parse in PARSERS.items():
        good, bad = replies(fmt)
        parsed = [parse(text) for text in good]
        render = RENDERERS[fmt]
        row = {
            "replies": len(good) + len(bad),
            "parse_ok_per_s": round(rate(parse, good)),
            "parse_error_per_s": round(rate(parse, bad)),
            "render_per_s": round(rate(render, parsed)),
        }
        figures[fmt] = row
        print(
            f"{fmt:<12}{row['replies']:>9}{row['parse_ok_per_s']:>14}{row['parse_error_per_s']:>16}"
            f"{row['render_per_s']:>12}"
        )
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["actions"] = {"trials": TRIALS, "statistic": "median", "formats": figures}
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
