"""Differential tests: VLC, os, vs_code, thunderbird and multi_apps metrics against OSWorld's own.

Every case writes real files (VLC status XML and vlcrc, CSV, JSON, zip, PDF, EPUB, filter rules) in
equal and near-miss variants and requires both sides to give the same score; where OSWorld's function
crashes on an input that ours scores, the case says so (a deliberate deviation).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfWriter

from tests.parity.guest_env import agree, both, stub_missing
from tests.parity.reference import Reference


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


# --- VLC -----------------------------------------------------------------------------------------


def status_xml(state: str, meta: dict[str, str], stream: dict[str, str] | None = None) -> str:
    infos = "".join(f'<info name="{k}">{v}</info>' for k, v in meta.items())
    streams = ""
    if stream:
        streams = (
            '<category name="Stream 0">'
            + "".join(f'<info name="{k}">{v}</info>' for k, v in stream.items())
            + "</category>"
        )
    return (
        f'<?xml version="1.0"?><root><state>{state}</state><information>'
        f'<category name="meta">{infos}</category>{streams}</information></root>'
    )


METAS = [
    {"filename": "Colorful-Flowers.mp3"},
    {"filename": "/home/user/Music/Colorful-Flowers.mp3"},
    {"title": "Colorful Flowers", "filename": "Colorful-Flowers.mp3"},
    {"filename": "Other-Flowers.mp3"},
    {"filename": "my-Colorful-Flowers.mp3"},
    {"uri": "file:///home/user/Colorful-Flowers.mp3"},
    {
        "url": "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8"
    },
    {"filename": "master.m3u8"},
    {
        "URI": "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/prog_index.m3u8"
    },
    {
        "location": "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8?x=1"
    },
    {},
]
VLC_RULES = [
    {"type": "file_name", "file_name": "Colorful-Flowers.mp3"},
    {
        "type": "url",
        "url": "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8",
    },
    {"type": "title", "title": "x"},
]


@pytest.mark.parametrize("state", ["playing", "paused"])
@pytest.mark.parametrize("meta", METAS)
def test_is_vlc_playing(ref: Reference, tmp_path: Path, state: str, meta: dict[str, str]) -> None:
    path = tmp_path / "status.xml"
    path.write_text(status_xml(state, meta, {"Codec": "H264 - MPEG-4 AVC (part 10) (avc1)", "Type": "Video"}))
    for rule in VLC_RULES:
        agree(ref, "vlc", "is_vlc_playing", str(path), rule)


VLCRC_KEYS = {
    "check_qt_bgcone": ("qt-bgcone", "expected_qt_bgcone", ["0", "1", 0]),
    "check_qt_max_volume": ("qt-max-volume", "expected_qt_max_volume", ["200", 200, "125"]),
    "check_qt_minimal_view": ("qt-minimal-view", "expected_qt_minimal_view", ["1", 1, "0"]),
    "check_one_instance_when_started_from_file": (
        "one-instance-when-started-from-file",
        "expected_one_instance_when_started_from_file",
        ["0", 0, "1"],
    ),
    "check_global_key_play_pause": ("global-key-play-pause", "expected_global_key_play_pause", ["1", 1, "0"]),
    "check_play_and_exit": ("play-and-exit", "expected_play_and_exit", ["1", 1, "0", 0]),
}
VLCRC_LINES = [
    [],
    ["#{key}=1"],
    ["#{key}=1", "{key}=0"],
    ["{key}=200"],
    ["{key}=1", "# a comment", "{key}= "],
    ["{key}=Ctrl+Space"],
    ["{key}="],
    ["[qt] # Qt interface", "#{key}=125", "{key}=125"],
]


@pytest.mark.parametrize("name", list(VLCRC_KEYS))
@pytest.mark.parametrize("lines", VLCRC_LINES)
def test_vlcrc_settings(ref: Reference, tmp_path: Path, name: str, lines: list[str]) -> None:
    key, option, values = VLCRC_KEYS[name]
    path = tmp_path / "vlcrc"
    path.write_text(
        "\n".join(["# VLC media player preferences", *(line.format(key=key) for line in lines)]) + "\n"
    )
    for value in values:
        agree(ref, "vlc", name, str(path), {option: value})


@pytest.mark.parametrize(
    "line",
    [
        None,
        "#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29",
        "qt-slider-colours=0;0;0;20;20;20;50;50;50;99;99;99",
        "qt-slider-colours=0;0;0;20;20;20;50;50;50;100;99;99",
        "qt-slider-colours=0;0;0;bad",
    ],
)
def test_qt_slider_colours(ref: Reference, tmp_path: Path, line: str | None) -> None:
    path = tmp_path / "vlcrc"
    path.write_text("[qt]\n" + (line + "\n" if line else ""))
    for rule in (
        {"type": "blackish"},
        {"type": "match", "expected_qt_slider_colours": "0;0;0;20;20;20;50;50;50;99;99;99"},
        {"type": "other"},
    ):
        agree(ref, "vlc", "check_qt_slider_colours", str(path), rule)


@pytest.mark.parametrize(
    "lines",
    [
        ["input-record-path=/home/user/Desktop"],
        ["#input-record-path=", "input-record-path=/home/user/Desktop"],
        ["input-record-path=/home/user/Videos", "input-record-path=/home/user/Desktop"],
        ["# input-record-path=/home/user/Desktop"],
        [],
    ],
)
def test_is_vlc_recordings_folder(ref: Reference, tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "vlcrc"
    path.write_text("\n".join(["[core]", "", *lines]) + "\n")
    agree(ref, "vlc", "is_vlc_recordings_folder", str(path), {"recording_file_path": "/home/user/Desktop"})


@pytest.mark.parametrize(
    ("window", "screen"),
    [
        ({"width": 1920, "height": 1080}, {"width": 1920, "height": 1080}),
        ({"width": 1920, "height": 1050}, {"width": 1920, "height": 1080}),
        (None, {"width": 1920, "height": 1080}),
        ({"width": 1, "height": 1}, None),
    ],
)
def test_is_vlc_fullscreen(ref: Reference, window: Any, screen: Any) -> None:
    agree(ref, "vlc", "is_vlc_fullscreen", window, screen)


# --- os ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "apps",
    [
        "['thunderbird.desktop', 'vim.desktop', 'google-chrome.desktop']\n",
        "['vim.desktop', 'google-chrome.desktop', 'thunderbird.desktop']",
        "['thunderbird.desktop', 'vim.desktop']",
        "['thunderbird.desktop', 'vim.desktop', 'vim.desktop']",
        "@as []",
    ],
)
def test_check_gnome_favorite_apps(ref: Reference, apps: str) -> None:
    rule = {"expected": ["thunderbird.desktop", "vim.desktop", "google-chrome.desktop"]}
    agree(ref, "basic_os", "check_gnome_favorite_apps", apps, rule)


TIMEDATECTL = (
    "               Local time: Thu 2024-01-25 12:56:06 {zone}\n"
    "           Universal time: Thu 2024-01-25 12:56:06 UTC\n"
    "                 RTC time: Thu 2024-01-25 12:56:05\n"
    "                Time zone: {name} ({zone}, {offset})\n"
)


@pytest.mark.parametrize(
    ("name", "zone", "offset"),
    [("Atlantic/Faroe", "WET", "+0000"), ("Etc/UTC", "UTC", "+0000"), ("Europe/Berlin", "CET", "+0100")],
)
def test_is_utc_0(ref: Reference, name: str, zone: str, offset: str) -> None:
    agree(ref, "basic_os", "is_utc_0", TIMEDATECTL.format(name=name, zone=zone, offset=offset))
    agree(ref, "basic_os", "is_utc_0", "Time zone: x (UTC, +0000)\n\n\n\n")


@pytest.mark.parametrize(
    "names",
    [["a.jpg", "b.jpg"], ["b.jpg", "a.jpg"], ["a.jpg"], ["a.jpg", "b.jpg", "c.png"], ["a.jpg", "a.jpg"]],
)
def test_check_moved_jpgs(ref: Reference, names: list[str]) -> None:
    tree = {"name": "photos", "type": "directory", "children": [{"name": n, "type": "file"} for n in names]}
    agree(ref, "basic_os", "check_moved_jpgs", tree, {"expected": ["a.jpg", "b.jpg"]})


@pytest.mark.parametrize("expected", ["hello world", ["hello", "world"], ["hello", "moon"], "moon"])
def test_is_in_vm_clickboard(ref: Reference, expected: Any) -> None:
    agree(ref, "basic_os", "is_in_vm_clickboard", {"expected": expected}, "hello world\n")


# --- general: CSV, Python text ------------------------------------------------------------------------

CSV_RULES = [
    {"expect": [{"Name": "Ann", "Age": "31"}]},
    {"expect": [{"Name": "Ann"}, {"Name": "Bob"}], "unexpect": [{"Name": "Eve"}]},
    {"expect": [{"Name": "Ann", "Age": "30"}]},
    {"unexpect": [{"Name": "Bob"}]},
    {"expect": [{"City": "Paris"}]},
    {},
]


@pytest.mark.parametrize(
    "rows", [[("Ann", "31"), ("Bob", "40")], [("Ann", "31")], [("Eve", "1"), ("Ann", "31"), ("Bob", "2")], []]
)
def test_check_csv(ref: Reference, tmp_path: Path, rows: list[tuple[str, str]]) -> None:
    path = tmp_path / "people.csv"
    path.write_text("Name,Age\n" + "".join(f"{n},{a}\n" for n, a in rows))
    for rules in CSV_RULES:
        agree(ref, "general", "check_csv", str(path), rules)


GOLD_PY = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\ndef f(x):\n    return x + 1\n\n\nprint(f(2))\n"
PY_VARIANTS = [
    GOLD_PY,
    "def f(x):\n    return x + 1\nprint(f(2))\n",
    "def f(x):\n\treturn x + 1\n\nprint(f(2))   \n",
    "```python\ndef f(x):\n    return x + 1\nprint(f(2))\n```\n",
    "def f(x):\n    return x + 2\nprint(f(2))\n",
    "# coding: utf-8\n\n#!/bin/sh\ndef f(x):\n    return x + 1\nprint(f(2))\n",
    "",
]


@pytest.mark.parametrize("text", PY_VARIANTS)
def test_compare_python_pure_text(ref: Reference, tmp_path: Path, text: str) -> None:
    (tmp_path / "gold.py").write_text(GOLD_PY)
    (tmp_path / "user.py").write_text(text)
    agree(ref, "general", "compare_python_pure_text", str(tmp_path / "user.py"), str(tmp_path / "gold.py"))
    agree(ref, "general", "compare_python_pure_text", None, str(tmp_path / "gold.py"))


# --- vs_code -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "gold"),
    [
        ("42", "42"),
        ("The answer is 42", "42"),
        ("42.00001", "42"),
        ("42.1", "42"),
        ("abc", "abc"),
        ("abc ", "abd"),
        ("x", "4e2"),
        ("400", "4e2"),
    ],
)
def test_compare_result_files(ref: Reference, tmp_path: Path, ours: str, gold: str) -> None:
    (tmp_path / "a.txt").write_text(ours + "\n")
    (tmp_path / "b.txt").write_text(gold)
    agree(ref, "vscode", "compare_result_files", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))


BINDING = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([BINDING]),
        "// Place your key bindings in this file\n" + json.dumps([BINDING, {"key": "x", "command": "y"}]),
        json.dumps([{**BINDING, "key": "ctrl+k"}]),
        json.dumps({"bindings": [BINDING]}),
        "// comment\n// another\n" + json.dumps([BINDING]),
        "[]",
        "not json",
    ],
)
def test_check_json_keybindings(ref: Reference, tmp_path: Path, text: str) -> None:
    path = tmp_path / "keybindings.json"
    path.write_text(text)
    agree(ref, "vscode", "check_json_keybindings", str(path), {"expected": BINDING})


def _pdf(text_pages: int) -> bytes:
    writer = PdfWriter()
    for _ in range(text_pages):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


@pytest.mark.parametrize(
    "members",
    [
        {"a.txt": b"one", "b/c.txt": b"two"},
        {"b/c.txt": b"two", "a.txt": b"one"},
        {"a.txt": b"one"},
        {"a.txt": b"one", "b/c.txt": b"TWO"},
        {"a.txt": b"one", "b/c.txt": b"two", "d.pdf": _pdf(1)},
    ],
)
def test_compare_zip_files(ref: Reference, tmp_path: Path, members: dict[str, bytes]) -> None:
    gold = _zip(tmp_path / "gold.zip", {"a.txt": b"one", "b/c.txt": b"two"})
    agree(ref, "vscode", "compare_zip_files", _zip(tmp_path / "ours.zip", members), gold)
    gold_pdf = _zip(tmp_path / "gold2.zip", {"a.txt": b"one", "b/c.txt": b"two", "d.pdf": _pdf(1)})
    agree(ref, "vscode", "compare_zip_files", _zip(tmp_path / "ours.zip", members), gold_pdf)


@pytest.mark.parametrize("pages", [1, 2, 3])
@pytest.mark.parametrize(("relation", "value"), [("eq", 2), ("gt", 1), ("lt", 3), ("ge", 2), ("ne", 2)])
def test_check_pdf_pages(ref: Reference, tmp_path: Path, pages: int, relation: str, value: int) -> None:
    path = tmp_path / "doc.pdf"
    path.write_bytes(_pdf(pages))
    agree(ref, "pdf", "check_pdf_pages", str(path), {"relation": relation, "ref_value": value})


# --- thunderbird filters -----------------------------------------------------------------------------


def filters_dat(*filters: dict[str, str]) -> str:
    out = 'version="9"\nlogging="no"\n'
    for f in filters:
        out += (
            f'name="{f["name"]}"\nenabled="{f.get("enabled", "yes")}"\ntype="17"\n'
            f'action="Move to folder"\nactionValue="mailbox://nobody@Local%20Folders/{f["folder"]}"\n'
            f'condition="{f["condition"]}"\n'
        )
    return out


FILTER_SETS = [
    [{"name": "Spam", "folder": "Spam", "condition": "AND (subject,contains,discount)"}],
    [
        {
            "name": "Spam",
            "folder": "Spam",
            "condition": 'AND (subject,contains,discount) OR (from,is,\\"a@b.c\\")',
        }
    ],
    [{"name": "Spam", "folder": "Junk", "condition": "AND (subject,contains,discount)"}],
    [{"name": "Other", "folder": "Spam", "condition": "ALL", "enabled": "no"}],
    [
        {"name": "Spam", "folder": "Spam", "condition": "AND (subject,contains,discount)"},
        {"name": "X", "folder": "Trash", "condition": "ALL"},
    ],
    [],
]
FILTER_RULES = [
    {
        "expect": [
            {
                "name": "Spam",
                "enabled": "yes",
                "action": "Move to folder",
                "actionValue": "mailbox://nobody@Local%20Folders/Spam",
                "condition": ["AND (subject,contains,discount)"],
            }
        ]
    },
    {
        "expect": [{"actionValue": "mailbox://nobody@Local%20Folders/Spam"}],
        "unexpect": [{"actionValue": "mailbox://nobody@Local%20Folders/Trash"}],
    },
    {"unexpect": [{"enabled": "no"}]},
    {"expect": [{"condition": ["AND (subject,contains,discount)", 'OR (from,is,"a@b.c")']}]},
]


@pytest.mark.parametrize("filters", FILTER_SETS)
def test_check_thunderbird_filter(ref: Reference, tmp_path: Path, filters: list[dict[str, str]]) -> None:
    path = tmp_path / "msgFilterRules.dat"
    path.write_text(filters_dat(*filters))
    for rules in FILTER_RULES:
        agree(ref, "thunderbird", "check_thunderbird_filter", str(path), rules)
    agree(ref, "thunderbird", "check_thunderbird_filter", None, FILTER_RULES[0])


# --- EPUB ----------------------------------------------------------------------------------------------


def epub(path: Path, title: str, chapters: dict[str, str], ident: str = "id-1") -> str:
    toc = f'<ncx>\n<docTitle><text>{title}</text></docTitle>\n<navPoint id="n1">\n</navPoint>\n</ncx>\n'
    opf = f"<package>\n<dc:title>{title}</dc:title>\n<dc:identifier>{ident}</dc:identifier>\n</package>\n"
    members = {"mimetype": "application/epub+zip", "toc.ncx": toc, "content.opf": opf}
    members.update(
        {
            name: f"<html><body>\n<h1>{name}</h1>\n<p>{text}</p></body></html>"
            for name, text in chapters.items()
        }
    )
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


EPUBS = [
    ("Book", {"ch1.html": "Once upon a time", "ch2.html": "The end"}, "id-2"),
    ("Book", {"ch1.html": "Once upon a time"}, "id-1"),
    ("Other", {"ch1.html": "Once upon a time", "ch2.html": "The end"}, "id-1"),
    ("Book", {"ch1.html": "Once upon a dime", "ch2.html": "The end", "ch3.html": "Epilogue"}, "id-1"),
]


@pytest.mark.parametrize(("title", "chapters", "ident"), EPUBS)
def test_compare_epub(
    ref: Reference, tmp_path: Path, title: str, chapters: dict[str, str], ident: str
) -> None:
    gold = epub(tmp_path / "gold.epub", "Book", {"ch1.html": "Once upon a time", "ch2.html": "The end"})
    ours = epub(tmp_path / "ours.epub", title, chapters, ident)
    ours_score, theirs = both(ref, "others", "compare_epub", ours, gold)
    assert ours_score == pytest.approx(theirs)
    (tmp_path / "broken.epub").write_bytes(b"not a zip")
    agree(ref, "others", "compare_epub", str(tmp_path / "broken.epub"), gold)


# --- spreadsheets and web pages ----------------------------------------------------------------------

CITIES = [
    "Scottsdale",
    "Atlanta",
    "Lake Tahoe",
    "Banff",
    "Beijing",
    "Montreal",
    "San Diego",
    "Lille",
    "Montreal",
    "San Juan",
    "New York",
    "Barcelona",
    "Toulon",
    "Sydney",
    "Long Beach",
    "Vancouver",
    "Stockholm",
    "Montréal",
    "New Orleans",
    "Long Beach",
    "Vancouver",
]


@pytest.mark.parametrize(
    "column",
    [
        CITIES,
        [f"{c}, somewhere" for c in CITIES],
        [*CITIES[:5], "Paris", *CITIES[6:]],
        [*CITIES[:20], None],
        CITIES[:10],
    ],
)
@pytest.mark.parametrize("expected", [CITIES, [*CITIES[:5], ["Beijing", "Peking"], *CITIES[6:]], CITIES[:15]])
def test_compare_conference_city_in_order(
    ref: Reference, tmp_path: Path, column: list[Any], expected: list[Any]
) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["Conference", "Year", "City"])
    for i, city in enumerate(column):
        sheet.append([f"C{i}", 2000 + i, city])
    workbook.save(tmp_path / "cities.xlsx")
    agree(
        ref,
        "table",
        "compare_conference_city_in_order",
        str(tmp_path / "cities.xlsx"),
        {"expected": expected},
    )


GOLD_HTML = (
    '<html><body><table><tr><td sdnum="1033;0;0.00" align="right">1.50</td><td>Total</td></tr></table>'
    "<p class='x'>Hello <b>world</b></p></body></html>"
)


@pytest.mark.parametrize(
    "html",
    [
        GOLD_HTML,
        GOLD_HTML.replace('sdnum="1033;0;0.00" ', ""),
        GOLD_HTML.replace('sdnum="1033;0;0.00"', 'sdnum="1033;0;0.000"'),
        GOLD_HTML.replace('align="right"', 'align="left"'),
        GOLD_HTML.replace("world", "moon"),
        GOLD_HTML.replace("<b>world</b>", "world"),
        GOLD_HTML.replace("</p>", "</p><p>more</p>"),
        "<html><body></body></html>",
    ],
)
@pytest.mark.parametrize("options", [{}, {"ignore_sdnum": True}])
def test_compare_htmls(ref: Reference, tmp_path: Path, html: str, options: dict[str, Any]) -> None:
    (tmp_path / "ours.html").write_text(html)
    (tmp_path / "gold.html").write_text(GOLD_HTML)
    agree(ref, "chrome", "compare_htmls", str(tmp_path / "ours.html"), str(tmp_path / "gold.html"), **options)


# --- MP3 tags ------------------------------------------------------------------------------------------


def _mp3(path: Path, tags: dict[str, str | list[str]]) -> str:
    from mutagen.easyid3 import EasyID3

    # A frame-less MPEG file that carries only an ID3 tag is enough for EasyID3.
    path.write_bytes(b"")
    id3 = EasyID3()
    for key, value in tags.items():
        id3[key] = value
    id3.save(str(path))
    return str(path)


MP3_RULES = [
    {"title": {"method": "eq", "ref": "Missing You"}, "artist": {"method": "eq", "ref": "Cheng Xiang"}},
    {"title": {"method": "eq", "ref": "Missing You"}},
    {"artist": {"method": "re", "ref": "^Cheng"}},
    {"album": {"method": "eq", "ref": ""}},
    {"artist": {"method": "eq", "ref": "Cheng Xiang,Guest"}},
]


@pytest.mark.parametrize(
    "tags",
    [
        {"title": "Missing You", "artist": "Cheng Xiang"},
        {"title": "Missing You"},
        {"title": "Missing Me", "artist": "Cheng Xiang"},
        {"title": "Missing You", "artist": ["Cheng Xiang", "Guest"]},
    ],
)
def test_check_mp3_meta(ref: Reference, tmp_path: Path, tags: dict[str, Any]) -> None:
    path = _mp3(tmp_path / "song.mp3", tags)
    for rules in MP3_RULES:
        agree(ref, "others", "check_mp3_meta", path, rules)
    agree(ref, "others", "check_mp3_meta", None, MP3_RULES[0])


FOLDERS = {
    "two": "FROM - a@b.c\nX-Mozilla-Status: 0001\nSubject: one\n\nhi\nFROM - d@e.f\nSubject: two\n",
    "other-two": "FROM - x@y.z\nX-Mozilla-Status: 0009\nSubject: gone\nFROM - d@e.f\nSubject: three\n",
    "adjacent": "FROM - a@b.c\nSubject: one\nFROM - FROM - FROM - d@e.f\n",
    "leading-text": "From nobody\nFROM - a@b.c\nSubject: one\n",
    "empty": "",
}


@pytest.mark.parametrize(
    "options",
    [{}, {"remove_duplicate": False}, {"ignore_status": True, "ignore_keys": True, "remove_deleted": False}],
)
def test_check_thunderbird_folder(ref: Reference, tmp_path: Path, options: dict[str, bool]) -> None:
    paths = {}
    for name, text in FOLDERS.items():
        paths[name] = str(tmp_path / name)
        Path(paths[name]).write_text(text)
    for a in FOLDERS:
        for b in FOLDERS:
            agree(ref, "thunderbird", "check_thunderbird_folder", paths[a], paths[b], **options)
    agree(
        ref,
        "thunderbird",
        "check_thunderbird_folder",
        [paths["two"], paths["empty"]],
        [paths["adjacent"], paths["empty"]],
        **options,
    )
    agree(
        ref,
        "thunderbird",
        "check_thunderbird_folder",
        [paths["two"], None],
        [paths["two"], paths["two"]],
        **options,
    )
    agree(ref, "thunderbird", "check_thunderbird_folder", None, paths["two"], **options)
