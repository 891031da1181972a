"""``osw-studio assets``: fetch, list, verify and import the files a task suite downloads."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from osw_studio.core.errors import TaskError
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible


def register(subparsers: Any) -> None:
    """Add ``assets fetch``, ``assets list``, ``assets verify`` and ``assets import``."""
    assets = subparsers.add_parser(
        "assets",
        help="the asset cache: files that tasks download, fetched once",
        description="Tasks download files (download steps, cloud_file getters). `assets fetch SUITE` "
        "stores every file a suite needs in the asset cache, so runs never need the network for them.",
    )
    sub = assets.add_subparsers(dest="assets_command", metavar="ACTION", required=True)

    def common(parser: argparse.ArgumentParser, *, suite: str = "+") -> None:
        parser.add_argument("paths", nargs=suite, metavar="SUITE", help="task files, folders or index files")
        parser.add_argument("--cache", metavar="DIR", help="the asset cache (default: the user cache dir)")

    fetch = sub.add_parser(
        "fetch",
        help="download every file a suite needs (parallel, resumable)",
        description="Download every file the suite's tasks need into the asset cache, JOBS at a time. "
        "A cut download resumes where it stopped when the command runs again. Exit 1 if any failed.",
    )
    common(fetch)
    fetch.add_argument("-j", "--jobs", type=int, default=4, help="downloads at once (default 4)")
    fetch.add_argument(
        "--mirror",
        metavar="PREFIX",
        help="fetch URL host/path from under this prefix instead (e.g. http://files.lan/osworld/)",
    )
    fetch.add_argument("--timeout", type=float, default=300.0, help="seconds without progress (default 300)")
    fetch.set_defaults(handler=_fetch)

    listing = sub.add_parser("list", help="the suite's files and whether each is cached")
    common(listing, suite="*")
    listing.add_argument("--json", action="store_true", help="JSON (url, size, sha256): a lock file")
    listing.set_defaults(handler=_list)

    verify = sub.add_parser(
        "verify",
        help="re-hash cached files (exit 1 on a missing or damaged one)",
        description="Re-hash the cached files of a suite (or all, with no SUITE) against the sizes and "
        "SHA-256 recorded when they were fetched, and against --lock. A damaged file is removed so the "
        "next fetch gets it again.",
    )
    common(verify, suite="*")
    verify.add_argument("--lock", metavar="FILE", help="expected hashes: `assets list --json` output")
    verify.set_defaults(handler=_verify)

    importing = sub.add_parser(
        "import",
        help="store files from a folder (e.g. an OSWorld cache/) for a suite's URLs",
        description="Look for the suite's files in DIR, in OSWorld's cache layout "
        "(<task id>/<uuid>_<name>) or by file name, and store those found.",
    )
    importing.add_argument("folder", metavar="DIR")
    common(importing)
    importing.set_defaults(handler=_import)


def _store(args: argparse.Namespace) -> Any:
    """The asset cache: ``--cache`` and ``--mirror``, else the settings' ``assets`` section."""
    from osw_studio.envs.setup import asset_store
    from osw_studio.settings import load_settings
    from osw_studio.tasks.assets import AssetStore

    store = asset_store(load_settings(args.config))
    mirror = getattr(args, "mirror", None) or store.mirror
    return AssetStore(Path(args.cache) if args.cache else store.root, mirror, store.policy)


def _refs(args: argparse.Namespace) -> list[Any]:
    from osw_studio.tasks.assets import suite_assets
    from osw_studio.tasks.load import load_tasks

    report = load_tasks(args.paths)
    for error in report.errors:
        print(f"invalid: {visible(str(error))}", file=sys.stderr)
    if not report.entries and report.errors:
        raise TaskError("no task loaded", where=" ".join(args.paths))
    return suite_assets(entry.task for entry in report.entries)


class _Progress:
    """One status line on a terminal (files done, bytes, rate); plain lines elsewhere."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.bytes = total, 0, 0
        self.start = time.monotonic()
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def chunk(self, size: int) -> None:
        self.bytes += size
        now = time.monotonic()
        if self.tty and now - self._last > 0.2:
            self._last = now
            self._draw()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        rate = self.bytes / max(time.monotonic() - self.start, 1e-6) / 1e6
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(
            f"\r[{bar}] {self.done}/{self.total} files, {self.bytes / 1e6:.1f} MB, {rate:.1f} MB/s"
        )
        sys.stderr.flush()

    def finished(self, url: str, problem: str | None) -> None:
        self.done += 1
        if self.tty:
            if problem:
                sys.stderr.write("\r\033[K")
                print(f"FAIL {visible(url)}: {visible(problem)}", file=sys.stderr)
            self._draw()
        elif problem:
            print(f"FAIL {visible(url)}: {visible(problem)}", file=sys.stderr)
        else:
            print(f"ok   {visible(url)}", file=sys.stderr)

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def _fetch(args: argparse.Namespace) -> int:
    import asyncio

    from osw_studio.tasks.assets import fetch_all

    store = _store(args)
    refs = _refs(args)
    progress = _Progress(sum(1 for ref in refs if store.get(ref.url) is None))
    try:
        report = asyncio.run(
            fetch_all(
                store,
                refs,
                jobs=args.jobs,
                stall=args.timeout,
                on_progress=progress.chunk,
                on_done=progress.finished,
            )
        )
    finally:
        progress.close()
    print(
        f"{len(report.fetched)} fetched, {len(report.present)} already cached, "
        f"{len(report.failed)} failed ({store.root})"
    )
    return ExitCode.for_outcome(failed=bool(report.failed))


def _list(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.paths:
        urls = [ref.url for ref in _refs(args)]
        metas = [(url, store.meta(url) if store.get(url) else None) for url in urls]
    else:
        metas = [(meta.url, meta) for meta in store.entries()]
    if args.json:
        rows = [{"url": url, "size": m.size, "sha256": m.sha256} for url, m in metas if m is not None]
        print(json.dumps(rows, indent=1))
    else:
        for url, meta in metas:
            state = f"{meta.size:>12}  {meta.sha256[:12]}" if meta else f"{'missing':>12}  {'':12}"
            print(f"{state}  {visible(url)}")
        cached = sum(1 for _, meta in metas if meta is not None)
        print(f"{cached} of {len(metas)} cached ({store.root})")
    return ExitCode.OK


def _verify(args: argparse.Namespace) -> int:
    from osw_studio.tasks.assets import read_lock

    store = _store(args)
    lock = read_lock(Path(args.lock)) if args.lock else {}
    urls = [ref.url for ref in _refs(args)] if args.paths else [m.url for m in store.entries()]
    bad = 0
    for url in urls:
        problem = store.verify(url, lock.get(url))
        if problem:
            bad += 1
            print(f"{'MISSING' if problem == 'missing' else 'BAD'} {visible(url)}: {problem}")
            if problem != "missing":
                store.remove(url)
    print(f"{len(urls) - bad} ok, {bad} missing or damaged")
    return ExitCode.for_outcome(failed=bool(bad))


def _import(args: argparse.Namespace) -> int:
    store = _store(args)
    folder = Path(args.folder)
    if not folder.is_dir():
        raise TaskError("not a folder", where=args.folder)
    refs = _refs(args)
    imported = store.import_folder(folder, refs)
    for ref, path in imported:
        print(f"stored {visible(ref.url)} from {visible(str(path))}")
    missing = sum(1 for ref in refs if store.get(ref.url) is None)
    print(f"{len(imported)} imported, {missing} still missing ({store.root})")
    return ExitCode.OK
