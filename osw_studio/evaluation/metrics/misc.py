"""Smaller metrics of OSWorld's os, vs_code, thunderbird and multi_apps tasks.

Desktop settings (favourite apps, time zone, a folder's files, the clipboard), CSV records, result
files, VS Code key bindings, zip archives, PDF page counts, Thunderbird message filters and EPUB books.
Each scores what OSWorld's function of the same name scores on the same input.
"""

from __future__ import annotations

import ast
import csv
import difflib
import json
import operator
import re
import zipfile
from collections.abc import Callable
from typing import Any

import lxml.html

from osw_studio.evaluation.registry import metric
from osw_studio.evaluation.rules import match_value_to_rule


def match_record(pattern: dict[str, Any], record: dict[str, Any]) -> bool:
    """Every key of ``pattern`` is in ``record`` with an equal value.

    >>> match_record({"a": "1"}, {"a": "1", "b": "2"}), match_record({"a": "1"}, {"b": "1"})
    (True, False)
    """
    return all(key in record and record[key] == value for key, value in pattern.items())


def _expect_unexpect(records: list[dict[str, Any]], rules: dict[str, Any]) -> float:
    expect: list[dict[str, Any]] = rules.get("expect", [])
    unexpect: list[dict[str, Any]] = rules.get("unexpect", [])
    found = [any(match_record(r, rec) for rec in records) for r in expect]
    clean = not any(match_record(r, rec) for rec in records for r in unexpect)
    return float(all(found) and clean)


@metric("check_gnome_favorite_apps")
def check_gnome_favorite_apps(apps_text: str, rule: dict[str, Any]) -> float:
    """GNOME's favourite apps (``gsettings get`` output, a Python list literal) are ``rule["expected"]``.

    The list is read as a literal, never evaluated as code (OSWorld evaluates it).

    >>> check_gnome_favorite_apps("['vim.desktop', 'a.desktop']", {"expected": ["a.desktop", "vim.desktop"]})
    1.0
    """
    apps = ast.literal_eval(apps_text.strip())
    expected = rule["expected"]
    return float(len(apps) == len(expected) and set(apps) == set(expected))


@metric("is_utc_0")
def is_utc_0(timedatectl_output: str) -> float:
    """The fourth line of ``timedatectl`` (``Time zone: ...``) ends with ``+0000)``."""
    return float(timedatectl_output.split("\n")[3].endswith("+0000)"))


@metric("check_moved_jpgs")
def check_moved_jpgs(directory: dict[str, Any], rule: dict[str, Any]) -> float:
    """The folder's entries are exactly ``rule["expected"]`` (as many, same names)."""
    names = [node["name"] for node in directory["children"]]
    expected = rule["expected"]
    return float(len(names) == len(expected) and set(names) == set(expected))


@metric("is_in_vm_clickboard")
def is_in_vm_clickboard(config: dict[str, Any], clipboard: str) -> float:
    """Every expected string (one or a list) is in the clipboard's text."""
    expected = config["expected"]
    if not isinstance(expected, list):
        return float(expected in clipboard)
    return float(all(item in clipboard for item in expected))


@metric("check_csv")
def check_csv(result: str | None, rules: dict[str, Any]) -> float:
    """Some CSV record matches each ``expect`` pattern and none matches an ``unexpect`` pattern."""
    if result is None:
        return 0.0
    with open(result) as f:
        records = list(csv.DictReader(f))
    return _expect_unexpect(records, rules)


_CODING = ("#!", "# -*- coding:", "# coding:", "# coding=")


def _python_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = 0
    while start < min(len(lines), 3) and lines[start].strip().startswith(_CODING):
        start += 1
    return [line.expandtabs(4).rstrip() for line in lines[start:] if line.strip()]


@metric("compare_python_pure_text")
def compare_python_pure_text(result: str | None, expected: str | None) -> float:
    """Two Python files are the same text once normalised.

    Blank lines and trailing blanks are ignored, tabs count as 4 spaces, and a shebang or coding line
    among the first three lines is skipped.
    """
    if not result or not expected:
        return 0.0
    try:
        with open(result, encoding="utf-8") as f:
            ours = f.read()
        with open(expected, encoding="utf-8") as f:
            gold = f.read()
    except (OSError, UnicodeDecodeError):
        return 0.0
    return float(_python_lines(ours) == _python_lines(gold))


@metric("compare_result_files")
def compare_result_files(result: str | None, expected: str | None) -> float:
    """The result file holds the expected number (within 1e-4, or its text anywhere), or the same text."""
    if not result or not expected:
        return 0.0
    with open(result) as f:
        ours = f.read().strip()
    with open(expected) as f:
        gold = f.read().strip()
    try:
        number = float(gold)
        if gold in ours:
            return 1.0
        return float(abs(float(ours) - number) < 1e-4)
    except ValueError:
        return float(ours == gold)


def _json_list(path: str) -> list[Any] | None:
    """A JSON list from the file, or from the file without its first line (a comment), else None."""
    for skip in (False, True):
        try:
            with open(path) as f:
                if skip:
                    f.readline()
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, list):
            return data
    return None


@metric("check_json_keybindings")
def check_json_keybindings(result: str, expected: dict[str, Any], **options: Any) -> float:
    """VS Code's ``keybindings.json`` (a list, maybe after a comment line) has ``expected["expected"]``."""
    bindings = _json_list(result)
    if bindings is None:
        return 0.0
    return float(expected["expected"] in bindings)


def _pdf_text(content: bytes) -> str:
    import io

    from pypdf import PdfReader

    return "".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


@metric("compare_zip_files")
def compare_zip_files(result: str | None, expected: str, **options: Any) -> float:
    """Two zip archives hold the same names with the same bytes (PDFs: 95 % similar text)."""
    if not result:
        return 0.0
    with zipfile.ZipFile(result) as ours, zipfile.ZipFile(expected) as gold:
        names = set(ours.namelist())
        if names != set(gold.namelist()):
            return 0.0
        for name in names:
            a, b = ours.read(name), gold.read(name)
            if name.lower().endswith(".pdf"):
                if difflib.SequenceMatcher(None, _pdf_text(a), _pdf_text(b)).ratio() < 0.95:
                    return 0.0
            elif a != b:
                return 0.0
    return 1.0


_RELATIONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


@metric("check_pdf_pages")
def check_pdf_pages(result: str | None, rules: dict[str, Any]) -> float:
    """The PDF's page count stands in ``relation`` (``eq``, ``lt``, ``ge`` ...) to ``ref_value``."""
    if result is None:
        return 0.0
    from pypdf import PdfReader

    pages = len(PdfReader(result).pages)
    return float(_RELATIONS[rules["relation"]](pages, rules["ref_value"]))


# --- Thunderbird message filters ----------------------------------------------------------------------

_CONDITION = re.compile(
    r"\b(?:AND|OR) \((?:[\w ]+),(?:[\w ']+),(?:\"(?:(?:[^\"]|\")+)\"|(?:[^)]+))\)|\bALL\b"
)
_FILTER_FIELDS = {
    "name=": "name",
    "enabled=": "enabled",
    "type=": "type",
    "action=": "action",
    "actionValue=": "actionValue",
}


def _unquote(value: str) -> str:
    return value.replace('\\"', '"').replace("\\\\", "\\")


def read_filters(text: str) -> list[dict[str, Any]]:
    r"""Thunderbird's ``msgFilterRules.dat``: one dict per filter, complete once its ``condition`` is read.

    >>> text = 'name="Spam"\nenabled="yes"\naction="Move to folder"\ncondition="AND (subject,contains,win)"\n'
    >>> read_filters(text)[0]["condition"]
    ['AND (subject,contains,win)']
    """
    filters: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in text.splitlines(keepends=True):
        for prefix, field in _FILTER_FIELDS.items():
            if line.startswith(prefix):
                if field == "name":
                    current = {}
                current[field] = _unquote(line[len(prefix) + 1 : -2])
                break
        else:
            if line.startswith("condition="):
                current["condition"] = _CONDITION.findall(_unquote(line[11:-2]))
                filters.append(current)
    return filters


@metric("check_thunderbird_filter")
def check_thunderbird_filter(result: str | None, rules: dict[str, Any]) -> float:
    """Some filter matches each ``expect`` pattern and none matches an ``unexpect`` pattern."""
    if result is None:
        return 0.0
    with open(result) as f:
        filters = read_filters(f.read())
    return _expect_unexpect(filters, rules)


def _blank_pieces(path: str, remove_duplicate: bool) -> int:
    """How many blank pieces a folder file has between its ``FROM - `` separators (see below)."""
    with open(path) as f:
        pieces = f.read().strip().split("FROM - ")
    blank = sum(1 for piece in pieces if not piece.strip())
    return min(blank, 1) if remove_duplicate else blank


@metric("check_thunderbird_folder")
def check_thunderbird_folder(result: Any, expected: Any, **options: Any) -> float:
    """Each exported Thunderbird folder file (or list of them) reads like its expected one.

    OSWorld at the tasks' commit splits a folder file into messages at ``FROM - `` but skips every piece
    that has text in it, so what it compares is only the blank pieces: whether the file starts with (or
    holds two adjacent) separators, or is empty; with ``remove_duplicate: false``, how many such pieces.
    The message options (``ignore_status``, ``ignore_keys``, ``remove_deleted``) cannot change a blank
    piece. A missing result scores 0. This is OSWorld's score, so it is ours.
    """
    results, expecteds = (result, expected) if isinstance(expected, list) else ([result], [expected])
    remove_duplicate = options.get("remove_duplicate", True)
    for ours, theirs in zip(results, expecteds, strict=False):
        if ours is None:
            return 0.0
        if _blank_pieces(ours, remove_duplicate) != _blank_pieces(theirs, remove_duplicate):
            return 0.0
    return 1.0


# --- EPUB ------------------------------------------------------------------------------------------


def epub_parts(path: str) -> list[tuple[str, list[str]]]:
    """The comparable parts of an EPUB, by name (``[]`` for a broken archive).

    They are ``toc.ncx`` without ``navPoint`` lines, ``content.opf`` without ``dc:identifier`` lines, and
    each ``.html`` page re-indented.
    """
    parts: list[tuple[str, list[str]]] = []
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            for name, drop in (("toc.ncx", "navPoint"), ("content.opf", "dc:identifier")):
                if name in names:
                    lines = archive.read(name).decode().splitlines()
                    parts.append((name, [line for line in lines if drop not in line]))
            for name in names:
                if name.endswith(".html"):
                    raw = "".join(ch for ch in archive.read(name).decode() if ch not in "\r\n")
                    page = lxml.html.tostring(
                        lxml.html.fromstring(raw.encode()), pretty_print=True, encoding="unicode"
                    )
                    parts.append((name, page.splitlines()))
    except zipfile.BadZipFile:
        return []
    return sorted(parts, key=lambda part: part[0])


@metric("compare_epub")
def compare_epub(result: str | None, expected: str) -> float:
    """The mean line-wise similarity of the two books' parts, paired in name order."""
    if result is None:
        return 0.0
    ours, gold = epub_parts(result), epub_parts(expected)
    total = sum(difflib.SequenceMatcher(a=a, b=b).ratio() for (_, a), (_, b) in zip(ours, gold, strict=False))
    return total / len(ours) if ours else total


# --- spreadsheets and web pages ---------------------------------------------------------------------


@metric("compare_conference_city_in_order")
def compare_conference_city_in_order(result: str, expected: dict[str, Any]) -> float:
    """Cells C2:C22 of the active sheet contain the expected cities in order (a list: any of them)."""
    import openpyxl

    cities = expected["expected"]
    workbook = openpyxl.load_workbook(result)
    try:
        values = [cell.value for row in workbook.active["C2:C22"] for cell in row]
    finally:
        workbook.close()
    try:
        for i, value in enumerate(values):
            wanted = cities[i]
            if isinstance(wanted, str):
                if wanted not in value:
                    return 0.0
            elif isinstance(wanted, list):
                if not any(choice in value for choice in wanted):
                    return 0.0
            else:
                return 0.0
    except Exception:  # a blank cell, or fewer cities than cells: OSWorld scores these 0 too
        return 0.0
    return 1.0


@metric("compare_htmls")
def compare_htmls(result: str, expected: str, **options: Any) -> float:
    """Two HTML files have the same elements in the same order (names, texts, attributes).

    Nodes are walked in document order side by side (as long as the shorter document lasts);
    ``ignore_sdnum`` ignores LibreOffice's ``sdnum`` number-format attributes.
    """
    from bs4 import BeautifulSoup, Tag

    with open(result, encoding="utf-8") as f:
        ours = BeautifulSoup(f, "lxml")
    with open(expected, encoding="utf-8") as f:
        gold = BeautifulSoup(f, "lxml")
    ignore_sdnum = options.get("ignore_sdnum")
    for a, b in zip(ours.descendants, gold.descendants, strict=False):
        if not (isinstance(a, Tag) and isinstance(b, Tag)):
            if a != b:
                return 0.0
            continue
        if a.name != b.name or a.text.strip() != b.text.strip():
            return 0.0
        if a.attrs != b.attrs:
            if not ignore_sdnum:
                return 0.0
            same = {k: v for k, v in a.attrs.items() if k != "sdnum"} == {
                k: v for k, v in b.attrs.items() if k != "sdnum"
            }
            if not same:
                return 0.0
    return 1.0


@metric("check_mp3_meta")
def check_mp3_meta(result: str | None, meta: dict[str, Any]) -> float:
    """Every ID3 tag named in ``meta`` (``title``, ``artist`` ...) matches its value rule.

    A tag with several values is read as them joined by commas; a missing tag as ``""``.
    """
    if result is None:
        return 0.0
    from mutagen.easyid3 import EasyID3

    tags: Any = EasyID3(result)  # type: ignore[no-untyped-call]
    for key, rule in meta.items():
        value = tags.get(key, "")
        if isinstance(value, list):
            value = ",".join(value)
        if not match_value_to_rule(value, rule):
            return 0.0
    return 1.0
