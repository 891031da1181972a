"""VNC viewer figures: frames per second the RFB client gets from x11vnc while the screen changes.

A private Xvfb (1920x1080) with x11vnc on 127.0.0.1; a painter process redraws part of the root window
60 times a second, alternating colours, so every frame differs. For each case the client
(``osw_studio.envs.vnc``, Raw encoding over loopback) reads frames for 3 s, 3 times; the table shows the
median fps and the client's CPU time per frame (reading, patching the framebuffer, copying the frame: the
work done on the app's event loop; scaling for the viewer runs in a worker thread). Cases: a 400x300
region changing (a window's worth) and the whole screen changing (the worst case for Raw), each with the
viewer's 30 fps cap and uncapped. x11vnc's own screen polling, not the client, limits the fps.

Prints a table and writes the figures under "vnc" in bench/results.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from osw_studio.envs.vnc import VncClient, VncTarget  # noqa: E402
from tests.fakes.vnc_server import x11vnc, xvfb  # noqa: E402

RESULTS = Path(__file__).with_name("results.json")
SCREEN = (1920, 1080)
SECONDS = 3.0
RUNS = 3

PAINTER = """
import sys, time
from Xlib import X, display
d = display.Display(sys.argv[1])
root = d.screen().root
w, h = int(sys.argv[2]), int(sys.argv[3])
gcs = [root.create_gc(foreground=c) for c in (0xff0000, 0x0000ff)]
n = 0
while True:
    root.fill_rectangle(gcs[n % 2], 50, 50, w, h)
    d.sync()
    n += 1
    time.sleep(1 / 60)
"""


async def measure(port: int, fps: float) -> tuple[float, float]:
    """Frames per second, and the client's CPU milliseconds per frame, over :data:`SECONDS`."""
    async with await VncClient.open(VncTarget("127.0.0.1", port)) as client:
        frames = 0
        start, cpu = time.monotonic(), time.process_time()
        async with contextlib.aclosing(client.frames(fps=fps)) as stream:
            async for _frame in stream:
                frames += 1
                if time.monotonic() - start >= SECONDS:
                    break
        elapsed, cpu = time.monotonic() - start, time.process_time() - cpu
    return frames / elapsed, cpu * 1000 / frames


def main() -> None:
    figures: dict[str, float] = {}
    with xvfb(SCREEN) as screen, x11vnc(screen) as port:
        for name, (w, h) in {"region": (400, 300), "full": (SCREEN[0] - 100, SCREEN[1] - 100)}.items():
            painter = subprocess.Popen([sys.executable, "-c", PAINTER, screen.display, str(w), str(h)])
            try:
                time.sleep(0.5)
                for cap_name, cap in (("30cap", 30.0), ("uncapped", 0.0)):
                    runs = [asyncio.run(measure(port, cap)) for _ in range(RUNS)]
                    figures[f"{name}_{cap_name}_fps"] = round(statistics.median(r[0] for r in runs), 1)
                    figures[f"{name}_{cap_name}_cpu_ms_per_frame"] = round(
                        statistics.median(r[1] for r in runs), 2
                    )
            finally:
                painter.kill()
                painter.wait()
    print(f"{'figure':<36}{'median':>10}")
    for key, value in figures.items():
        print(f"{key:<36}{value:>10}")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["vnc"] = {**figures, "screen": list(SCREEN), "seconds": SECONDS, "runs": RUNS, "server": "x11vnc"}
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
