"""How long a local env takes to be ready (Xvfb, openbox, D-Bus + AT-SPI, guest server), and to close.

Rows: the sandbox (bwrap, no network), the sandbox with ``network="outbound"`` (slirp4netns, when
installed) and no sandbox, measured in the same run.

Prints a table of medians and writes them into bench/results.json under "env_ready".
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import time
from pathlib import Path

from osw_studio.envs.local import LocalProvider

RUNS = 10
TARGET_S = 3.0
RESULTS = Path(__file__).with_name("results.json")


async def measure(provider: LocalProvider) -> tuple[float, float]:
    start = time.perf_counter()
    env = await provider.create()
    ready = time.perf_counter() - start
    await env.observe()
    start = time.perf_counter()
    await env.close()
    return ready, time.perf_counter() - start


async def main() -> None:
    rows = {}
    configs = [("bwrap", LocalProvider(sandbox=True)), ("no bwrap", LocalProvider(sandbox=False))]
    if shutil.which("slirp4netns"):
        configs.insert(1, ("outbound", LocalProvider(sandbox=True, network="outbound")))
    for label, provider in configs:
        await measure(provider)  # warm the page cache
        samples = [await measure(provider) for _ in range(RUNS)]
        rows[label] = {
            "ready_median_s": round(statistics.median(s[0] for s in samples), 3),
            "ready_max_s": round(max(s[0] for s in samples), 3),
            "close_median_s": round(statistics.median(s[1] for s in samples), 3),
        }
    print(f"local env ready, median of {RUNS} at 1920x1080 (target <= {TARGET_S} s)")
    print(f"{'sandbox':<10} {'ready median':>13} {'ready max':>10} {'close median':>13}")
    for label, row in rows.items():
        ready, worst, close = row["ready_median_s"], row["ready_max_s"], row["close_median_s"]
        print(f"{label:<10} {ready:>12.3f}s {worst:>9.3f}s {close:>12.3f}s")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["env_ready"] = {"runs": RUNS, "target_s": TARGET_S, "screen": [1920, 1080], **rows}
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
