"""Guest server speed at 1920x1080: screenshot round trips, input latency, live stream rate.

Starts its own Xvfb, openbox and guest server (127.0.0.1, free port), prints medians of 20 beside the
raw mss grab (the floor any screenshot pays) and writes them to bench/results.json under "guest".

    .venv/bin/python bench/guest.py
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from osw_studio.guest.screen import Screen, encode  # noqa: E402
from tests.fakes.desktop import start, start_guest, start_xvfb, stop, wait_ready  # noqa: E402

RESULTS = ROOT / "bench" / "results.json"
RUNS = 20
TARGETS = {"png_ms": 60.0, "jpeg_1280_ms": 20.0, "click_ms": 10.0, "stream_fps": 25.0}

# Repaints a window with a new colour every 10 ms, so every grab differs (a "changing screen").
ANIMATOR = """
import sys, time
from Xlib import X, display
d = display.Display(sys.argv[1])
s = d.screen()
w = s.root.create_window(100, 100, 800, 600, 0, s.root_depth, X.InputOutput, X.CopyFromParent,
                         background_pixel=s.black_pixel)
w.map()
gc = w.create_gc()
i = 0
while True:
    i += 1
    gc.change(foreground=(i * 2654435761) & 0xFFFFFF)
    w.fill_rectangle(gc, 0, 0, 800, 600)
    d.sync()
    time.sleep(0.01)
"""


def median_ms(call: object, runs: int = RUNS) -> float:
    assert callable(call)
    call()  # warm up (connections, thread-local grabbers)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def stream_fps(client: httpx.Client, seconds: float = 3.0) -> float:
    parts = 0
    with client.stream("GET", "/stream", params={"fps": 30, "quality": 70, "max_width": 1280}) as response:
        started = None
        for chunk in response.iter_bytes():
            parts += chunk.count(b"--frame\r\n")
            if started is None and parts:
                started, parts = time.perf_counter(), 0
            if started is not None and time.perf_counter() - started >= seconds:
                return parts / (time.perf_counter() - started)
    return 0.0


def main() -> int:
    processes: list[subprocess.Popen[bytes]] = []
    try:
        xvfb, display = start_xvfb()
        processes.append(xvfb)
        env = {**os.environ, "DISPLAY": display}
        processes.append(start(["openbox"], env=env, stderr=subprocess.DEVNULL))
        token = secrets.token_urlsafe(16)
        ready = Path(tempfile.mkdtemp()) / "ready"
        server = start_guest(display, ready, env={**env, "OSW_GUEST_TOKEN": token}, stdout=subprocess.DEVNULL)
        processes.append(server)
        url, _ = wait_ready(server, ready)
        screen = Screen(display)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            figures = {
                "raw_grab_ms": median_ms(lambda: screen.grab(cursor=True)),
                "png_ms": median_ms(lambda: client.get("/screenshot").raise_for_status()),
                "png_local_encode_ms": median_ms(lambda: encode(screen.grab(), "png")),
                "jpeg_1280_ms": median_ms(
                    lambda: client.get(
                        "/screenshot", params={"format": "jpeg", "quality": 80, "max_width": 1280}
                    ).raise_for_status()
                ),
                "jpeg_1280_local_encode_ms": median_ms(
                    lambda: encode(screen.grab(), "jpeg", quality=80, max_width=1280)
                ),
                "click_ms": median_ms(
                    lambda: client.post(
                        "/input", json={"actions": [{"kind": "click", "x": 1800, "y": 1000}]}
                    ).raise_for_status()
                ),
            }
            animator = start([sys.executable, "-c", ANIMATOR, display], env=env)
            processes.append(animator)
            time.sleep(0.5)
            figures["stream_fps"] = stream_fps(client)
    finally:
        for process in reversed(processes):
            stop(process)

    rows = [
        ("raw mss grab (with cursor)", "raw_grab_ms", "ms", None),
        ("/screenshot PNG round trip", "png_ms", "ms", "png_ms"),
        ("  grab + PNG encode in-process", "png_local_encode_ms", "ms", None),
        ("/screenshot JPEG 1280 wide", "jpeg_1280_ms", "ms", "jpeg_1280_ms"),
        ("  grab + JPEG 1280 in-process", "jpeg_1280_local_encode_ms", "ms", None),
        ("/input click round trip", "click_ms", "ms", "click_ms"),
        ("/stream on a changing screen", "stream_fps", "fps", "stream_fps"),
    ]
    print(f"guest server at 1920x1080, medians of {RUNS} (load average {os.getloadavg()[0]:.2f})")
    print(f"{'measure':<34} {'value':>9}  {'target':>8}  ok")
    failed = False
    for label, key, unit, target_key in rows:
        value = figures[key]
        target = TARGETS.get(target_key or "")
        ok = ""
        if target is not None:
            good = value >= target if unit == "fps" else value <= target
            failed |= not good
            bound = ">=" if unit == "fps" else "<="
            ok = "yes" if good else "NO"
            print(f"{label:<34} {value:>6.1f} {unit:<3} {bound}{target:>5.0f}  {ok}")
        else:
            print(f"{label:<34} {value:>6.1f} {unit:<3}")

    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["guest"] = {
        **{key: round(value, 2) for key, value in figures.items()},
        "runs": RUNS,
        "screen": [1920, 1080],
        "load_average_1min": round(os.getloadavg()[0], 2),
        "targets": TARGETS,
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
