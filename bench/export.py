"""Export speed and memory: 10,000 synthetic steps into every format.

Writes 200 runs of 50 steps (1280x720 screenshots of about 60 KB, one of its own per step) through the
real RunStoreWriter, each model step with its recorded request as an OSWorld-style agent sends it (system
prompt, three history rounds with their screenshots, the current one), so the chat formats take the
recorded-request path. Each format is exported once per round in a fresh subprocess, so its peak RSS is
its own, with image files referenced (``--images copy``). Prints medians of 3 and the peak RSS; then
sft-messages with data URLs (its default, for hosted fine-tuning; for information), and two formats at
twice the steps, to show memory does not grow with the number of runs. Writes the figures to
bench/results.json under "export" and exits 1 when a target is missed (JSONL formats >= 2,000 steps/s,
peak RSS <= 400 MB).

    .venv/bin/python bench/export.py [FORMAT ...]   # default: every format
    .venv/bin/python bench/export.py --long [STEPS [FORMAT ...]]   # one run of 300,000 steps

``--long`` writes one run of STEPS step lines (default 300,000; each with a 1280x720 screenshot of its
own, hard links of a few files) and exports it once per format (default sft-messages) with image files
referenced, in a fresh subprocess: its peak RSS must stay <= 400 MB however long the run is. Writes
the figures to bench/results.json under "export_long_run".

Each figure also says the CPU seconds the export took (user + system, its copying process's included,
median of 3) and the load average
around the run: on a shared machine the wall-clock rate falls with the load, the CPU time much less.

Every format but ``preference`` writes one image file per step, and creating a file is the kernel's work:
its cost depends on the file system and on what happened on it lately. On ext4 without a journal (this
machine's disk) the kernel does not reuse an inode freed less than a minute ago (six while its inode
table block is unwritten): each new file's inode search steps over every such inode in its block group,
one cache lookup each. After 10,000 files were deleted, creating one in that group costs several hundred
microseconds of CPU instead of about 20 (``perf``: ``ext4_create`` -> ``find_inode_bit`` ->
``recently_deleted``). So the bench deletes nothing between rounds: a round's output is emptied (its
blocks freed, its files truncated, their inodes still in use) and moved aside, and everything goes at
the end. Others deleting files near the scratch folder still slow it down; the bench measures the cost
of creating a file there before each format and prints it beside the figures (the system's temporary
folder; set ``TMPDIR`` to choose another).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results.json"
STEPS_PER_RUN = 50
RUNS = 200
REPEATS = 3
JSONL_FORMATS = ("osworld", "sft-messages", "sft-sharegpt", "agentnet", "preference")
TARGETS = {"jsonl_steps_per_s": 2000.0, "peak_rss_mb": 400.0}
DOMAINS = ("os", "chrome", "gimp", "libreoffice_calc", "vs_code")


def make_store(root: Path, runs: int) -> None:
    """One run through the writer, then hard-linked clones with their own ids, domains and scores."""
    from tests.fakes.runs import SyntheticRun, tiny_png, write_run

    png = tiny_png(1280, 720, noise=1)
    template = write_run(
        root / "template",
        SyntheticRun(
            "bench",
            steps=STEPS_PER_RUN,
            edited=(5, 17),
            human=(9,),
            screen=(1280, 720),
            png=png,
            requests=True,
        ),
    )
    store = root / "runs"
    for i in range(runs):
        run_id = f"20250101T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-task{i}-{i:06x}"
        dest = store / run_id
        shutil.copytree(template, dest, copy_function=_link)
        meta = json.loads((template / "run.json").read_text())
        meta.update(run_id=run_id, task_id=f"task-{i % 60}", domain=DOMAINS[i % len(DOMAINS)])
        (dest / "run.json").unlink()
        (dest / "run.json").write_text(json.dumps(meta))
        result = json.loads((template / "result.json").read_text())
        success = i % 3 != 0
        result.update(task_id=meta["task_id"], domain=meta["domain"], success=success, score=float(success))
        (dest / "result.json").unlink()
        (dest / "result.json").write_text(json.dumps(result))


def make_long_run(root: Path, steps: int) -> Path:
    """One run of ``steps`` step lines: a short run's steps repeated, each naming a screenshot of its own."""
    from tests.fakes.runs import SyntheticRun, tiny_png, write_run

    run = write_run(
        root / "runs", SyntheticRun("long", steps=8, screen=(1280, 720), png=tiny_png(1280, 720, noise=1))
    )
    lines = [json.loads(line) for line in (run / "steps.jsonl").read_text().splitlines()]
    screens = run / "screens"
    source = screens / lines[0]["screenshot"]
    with open(run / "steps.jsonl", "w", encoding="utf-8") as f:
        for i in range(1, steps + 1):
            line = {**lines[(i - 1) % 7], "index": i, "screenshot": f"step_{i:06d}.png"}
            if i % 60_000 == 0:  # a file takes at most 65,000 hard links on ext4
                source = screens / f"base_{i}.png"
                source.write_bytes((screens / lines[0]["screenshot"]).read_bytes())
            (screens / line["screenshot"]).hardlink_to(source)
            f.write(json.dumps(line) + "\n")
    return run


def long_run(steps: int, formats: list[str]) -> int:
    """Export one run of ``steps`` steps to each format; fail if a peak RSS passes the target."""
    with tempfile.TemporaryDirectory(prefix="osw-bench-long-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        make_long_run(root, steps)
        print(f"store: 1 run x {steps} steps written in {time.perf_counter() - t0:.1f} s")
        figures: dict[str, dict[str, float]] = {}
        for fmt in formats:
            r = run_child(fmt, root / "runs", root / "out")
            figures[fmt] = {k: round(v, 1) for k, v in r.items()}
            print(f"{fmt:<14}{steps:>8} steps {r['seconds']:>8.1f} s  peak RSS {r['peak_rss_mb']:.1f} MB")
    missed = [f for f, v in figures.items() if v["peak_rss_mb"] > TARGETS["peak_rss_mb"]]
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results["export_long_run"] = {"steps": steps, "formats": figures, "target_peak_rss_mb": 400.0}
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    if missed:
        print(f"missed targets: {', '.join(missed)}")
        return 1
    return 0


def file_create_us(folder: Path, files: int = 1000) -> float:
    """CPU microseconds to create one empty file in fresh subfolders of ``folder`` (50 a subfolder).

    The files stay (deleting them would slow down the creations measured next, see above).
    """
    probe = Path(tempfile.mkdtemp(prefix="probe-", dir=folder))
    c0 = time.process_time()
    for i in range(files):
        if i % 50 == 0:
            (probe / str(i // 50)).mkdir()
        os.close(os.open(probe / str(i // 50) / f"{i}.png", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    cpu = time.process_time() - c0
    return cpu / files * 1e6


def set_aside(out: Path, spent: Path) -> None:
    """Move an export aside without deleting a file: each one truncated (blocks freed), kept till the end."""
    if not out.exists():
        return
    for folder, _dirs, names in os.walk(out):
        for name in names:
            os.truncate(os.path.join(folder, name), 0)
    spent.mkdir(exist_ok=True)
    out.rename(spent / f"{len(os.listdir(spent))}")


def _link(src: str, dst: str) -> None:
    Path(dst).hardlink_to(src)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(fmt: str, store: str, out: str, images: str = "copy") -> None:
    """Export in this process and print seconds and peak RSS as JSON."""
    from osw_studio.trajectory.export import export_runs
    from osw_studio.trajectory.exporters import exporter_class
    from osw_studio.trajectory.exporters.base import COPY_WORKERS, ExportOptions

    exporter_class(fmt)  # the format's module is imported before the clock starts (compiled, without .pyc)
    options = ExportOptions(history=3, images=images, copy_workers=COPY_WORKERS)  # type: ignore[arg-type]
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    summary = export_runs([store], fmt, out, options)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0 + _children_cpu() - k0  # the copying process's share included
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mb": rss_mb, "samples": summary.samples}
        )
    )


def run_child(fmt: str, store: Path, out: Path, images: str = "copy") -> dict[str, float]:
    set_aside(out, out.parent / "spent")
    # Write back what earlier rounds left dirty, so no round pays for another's disk traffic.
    os.sync()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", fmt, str(store), str(out), images],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def main(formats: list[str] | None = None) -> int:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="osw-bench-export-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        make_store(root / "a", RUNS)
        if formats is None:
            make_store(root / "b", RUNS * 2)
        print(f"store: {RUNS} runs x {STEPS_PER_RUN} steps written in {time.perf_counter() - t0:.1f} s")
        from osw_studio.trajectory.exporters import EXPORTERS

        steps = RUNS * STEPS_PER_RUN
        figures: dict[str, dict[str, float]] = {}
        print(f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
        create_us = file_create_us(root)
        print(f"creating a file in {tmp}: {create_us:.0f} us of CPU (the kernel's share of each image copy)")
        head = f"{'format':<14}{'steps':>8}{'median s':>10}{'steps/s':>10}{'CPU s':>8}{'steps/CPU s':>13}"
        print(f"{head}{'peak RSS MB':>13}{'create us':>11}")
        for fmt in formats or EXPORTERS:
            fmt_create_us = file_create_us(root)
            rounds = [run_child(fmt, root / "a" / "runs", root / "out") for _ in range(REPEATS)]
            seconds = statistics.median(r["seconds"] for r in rounds)
            cpu = statistics.median(r["cpu_seconds"] for r in rounds)
            rss = max(r["peak_rss_mb"] for r in rounds)
            figures[fmt] = {
                "seconds": round(seconds, 3),
                "steps_per_s": round(steps / seconds),
                "cpu_seconds": round(cpu, 3),
                "steps_per_cpu_s": round(steps / cpu),
                "peak_rss_mb": round(rss, 1),
                "file_create_us": round(fmt_create_us, 1),
            }
            print(
                f"{fmt:<14}{steps:>8}{seconds:>10.2f}{steps / seconds:>10.0f}{cpu:>8.2f}{steps / cpu:>13.0f}"
                f"{rss:>13.1f}{fmt_create_us:>11.0f}"
            )
        embedded: dict[str, float] = {}
        double: dict[str, float] = {}
        if formats is None:  # the extras of a full run
            rounds = [
                run_child("sft-messages", root / "a" / "runs", root / "out", "embed") for _ in range(REPEATS)
            ]
            seconds = statistics.median(r["seconds"] for r in rounds)
            embed_rss = max(r["peak_rss_mb"] for r in rounds)
            embedded = {
                "seconds": round(seconds, 3),
                "steps_per_s": round(steps / seconds),
                "peak_rss_mb": embed_rss,
            }
            print(f"{'(embed)':<14}{steps:>8}{seconds:>10.2f}{steps / seconds:>10.0f}{embed_rss:>13.1f}")
            for fmt in ("sft-messages", "parquet"):
                rounds = [run_child(fmt, root / "b" / "runs", root / "out") for _ in range(REPEATS)]
                seconds = statistics.median(r["seconds"] for r in rounds)
                rss = max(r["peak_rss_mb"] for r in rounds)
                double[fmt] = round(rss, 1)
                print(f"{fmt:<14}{steps * 2:>8}{seconds:>10.2f}{steps * 2 / seconds:>10.0f}{rss:>13.1f}")
    # The scratch folder's files are deleted now: written back, the kernel stops stepping over their
    # inodes after a minute instead of six, for whatever creates files there next (another run of this).
    os.sync()

    missed = [
        f for f in JSONL_FORMATS if f in figures and figures[f]["steps_per_s"] < TARGETS["jsonl_steps_per_s"]
    ]
    missed += [f for f, v in figures.items() if v["peak_rss_mb"] > TARGETS["peak_rss_mb"]]
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results["export"] = {
        "steps": steps,
        "screenshot": "1280x720 PNG, about 60 KB",
        "formats": figures,
        "sft_messages_embed": embedded,
        "peak_rss_mb_at_double_steps": double,
        "targets": TARGETS,
        "missed": missed,
        "load_average": {
            "before": [round(x, 2) for x in load],
            "after": [round(x, 2) for x in os.getloadavg()],
        },
        "cores": os.cpu_count(),
        "file_create_us": round(create_us, 1),
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    if missed:
        print(f"missed targets: {', '.join(missed)}")
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(*sys.argv[2:])
        sys.exit(0)
    if sys.argv[1:2] == ["--long"]:
        rest = sys.argv[2:]
        count = int(rest.pop(0)) if rest and rest[0].isdigit() else 300_000
        sys.exit(long_run(count, rest or ["sft-messages"]))
    sys.exit(main(sys.argv[1:] or None))
