r"""The one host path policy: which host files a task, a run store or a model reply may name.

Task files, run stores and model replies are untrusted. Every host path they name goes through this
module; paths inside the guest are the guest's business and stay as OSWorld writes them.

- **Sources** (a ``download`` URL that is not ``http(s)://``, an ``upload_file`` ``local_path``, a
  ``cloud_file`` path) are relative paths into the task's own folder, or into the suite's shared
  ``assets/`` folder beside it (``../assets/...``, the layout of a suite with a domain folder per
  task). ``file://`` URLs, ``~``, absolute paths, other URL schemes and ``..`` that leaves those
  folders are refused, and so is a symlink that points out of them.
- **Destinations** (a getter's ``dest``, a ``cache_file`` path, a command's ``stdout``/``stderr`` file)
  are relative paths that stay inside the folder they are meant for (the task's cache folder).
- **Names** (task ids, domains, run ids) are single path segments: letters, digits, ``.``, ``_``,
  ``-``, starting with a letter or digit.

The ``*_problem`` functions only look at the text (for ``tasks validate``); :func:`task_source`,
:func:`task_dest` and :func:`contained` also resolve symlinks on the host.

Examples:
    >>> name_problem("0bf05a7d-b28b-44d2-955a-50b41e24012a") is None
    True
    >>> name_problem("../x")
    "'../x' is not a plain name (letters, digits, '.', '_', '-', starting with a letter or digit)"
    >>> source_problem("assets/a.txt") is None, source_problem("../assets/gimp/a.png") is None
    (True, True)
    >>> source_problem("file:///home/u/.ssh/id_rsa")
    "file:// URLs are refused: name a file in the task's folder by a relative path"
    >>> source_problem("~/.ssh/id_rsa")
    "'~' paths are refused: name a file in the task's folder by a relative path"
    >>> source_problem("/etc/passwd")
    "absolute host paths are refused: name a file in the task's folder by a relative path"
    >>> source_problem("../../.ssh/id_rsa")
    "'../../.ssh/id_rsa' leaves the task's folder"
    >>> dest_problem("out/result.xlsx") is None, dest_problem("../../.bashrc")
    (True, "'../../.bashrc' leaves the folder it must be written in")
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from osw_studio.core.errors import TaskError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""A task id, domain or run id: one path segment that is safe on every file system."""

SUITE_ASSETS = "assets"
"""The suite folder's shared files, beside its domain folders: tasks name them as ``../assets/...``."""

_NETWORK = re.compile(r"(?i)^https?://")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_DRIVE = re.compile(r"^[A-Za-z]:")
_RELATIVE_HINT = "name a file in the task's folder by a relative path"


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a task id, domain or run id (a folder or file name), or None."""
    if NAME.fullmatch(name):
        return None
    return f"{name!r} is not a plain name (letters, digits, '.', '_', '-', starting with a letter or digit)"


def check_name(name: str, *, what: str = "id", where: str | None = None) -> str:
    """``name`` when it is a plain name (see :func:`name_problem`).

    Raises:
        TaskError: Saying why, at ``where``.
    """
    problem = name_problem(name)
    if problem is not None:
        raise TaskError(f"the {what} {problem}", where=where, hint="rename it")
    return name


def is_network_url(text: str) -> bool:
    """Whether ``text`` is an ``http(s)://`` URL (fetched from the network, not read from the host).

    >>> is_network_url("HTTPS://h/a"), is_network_url("file:///a"), is_network_url("a/b")
    (True, False, False)
    """
    return bool(_NETWORK.match(text))


def _normal(text: str) -> str | None:
    """The relative POSIX form of ``text``, or None when it is absolute, ``~`` or otherwise not relative."""
    if not text or "\x00" in text:
        return None
    posix = text.replace("\\", "/")
    if posix.startswith(("/", "~")) or _DRIVE.match(posix):
        return None
    return posixpath.normpath(posix)


def _form_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a path with a NUL byte is refused"
    if not text.strip():
        return "an empty path is refused"
    if text.lower().startswith("file:"):
        return f"file:// URLs are refused: {_RELATIVE_HINT}"
    if _SCHEME.match(text):
        return f"{text.split(':', 1)[0]}:// URLs are refused: use http(s):// or {_RELATIVE_HINT}"
    posix = text.replace("\\", "/")
    if posix.startswith("~"):
        return f"'~' paths are refused: {_RELATIVE_HINT}"
    if posix.startswith("/") or _DRIVE.match(posix):
        return f"absolute host paths are refused: {_RELATIVE_HINT}"
    return None


def source_problem(text: str) -> str | None:
    """Why a task may not read the host file ``text`` names (judged on the text alone), or None.

    ``http(s)://`` URLs are no host path: they are fine here.
    """
    if is_network_url(text):
        return None
    problem = _form_problem(text)
    if problem is not None:
        return problem
    norm = _normal(text)
    if norm is None or norm == ".":
        return f"{text!r} names no file"
    # normpath leaves ``..`` only at the front: ``../assets/x`` is the one way up.
    if (norm == ".." or norm.startswith("../")) and not norm[3:].startswith(f"{SUITE_ASSETS}/"):
        return f"{text!r} leaves the task's folder"
    return None


def dest_problem(text: str) -> str | None:
    """Why a task may not write the host file ``text`` names (relative to its folder), or None."""
    problem = _form_problem(text)
    if problem is not None:
        return problem.replace("name a file in the task's folder by", "use")
    norm = _normal(text)
    if norm is None or norm == ".":
        return f"{text!r} names no file"
    if norm == ".." or norm.startswith("../"):
        return f"{text!r} leaves the folder it must be written in"
    return None


def contained(root: Path, relative: str) -> Path | None:
    """``root/relative`` when it stays inside ``root`` once symlinks are resolved, else None.

    The path returned keeps ``root``'s spelling (not the resolved one); nothing needs to exist.
    """
    norm = _normal(relative)
    if norm is None or norm == "." or norm == ".." or norm.startswith("../"):
        return None
    path = root / norm
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return None
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return path


def task_source(text: str, task_dir: Path | None, *, where: str) -> Path:
    """The host file a task may read for the source ``text`` (not an ``http(s)://`` URL).

    Args:
        text: The path as the task wrote it.
        task_dir: The task file's folder.
        where: The JSON path that names it, for the error.

    Raises:
        TaskError: If the path is refused by :func:`source_problem`, points out of the task's folders
            through a symlink, or there is no task folder to resolve it against.
    """
    problem = source_problem(text)
    if problem is None and is_network_url(text):
        problem = "a URL is not a host file"
    if problem is not None:
        raise TaskError(problem, where=where, hint="task files may read only their own folder's files")
    if task_dir is None:
        raise TaskError(
            f"{text!r} is relative to the task's folder, which is not known here",
            where=where,
            hint="load the task from its file",
        )
    norm = _normal(text) or ""
    if norm.startswith("../"):
        path = contained(task_dir.parent / SUITE_ASSETS, norm[len(f"../{SUITE_ASSETS}/") :])
    else:
        path = contained(task_dir, norm)
    if path is None:
        raise TaskError(
            f"{text!r} leads out of the task's folder (through a symlink)",
            where=where,
            hint="task files may read only their own folder's files",
        )
    return path


def task_dest(root: Path, text: str, *, where: str) -> Path:
    """The host file a task may write for the destination ``text``, inside ``root``.

    Raises:
        TaskError: If the path is refused by :func:`dest_problem` or leads out of ``root`` through a
            symlink.
    """
    problem = dest_problem(text)
    path = contained(root, text) if problem is None else None
    if path is None:
        raise TaskError(
            problem or f"{text!r} leads out of the folder it must be written in (through a symlink)",
            where=where,
            hint=f"task files may write only inside {root}",
        )
    return path


def plain_file_name(name: str) -> bool:
    """Whether ``name`` is one file name: no separator, not ``.`` or ``..``, no NUL.

    >>> plain_file_name("Report 2.xlsx"), plain_file_name(".."), plain_file_name("a/b")
    (True, False, False)
    """
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\x00")
