"""Write the small files the OSWorld desktop's bundled tasks start from (and the files they compare with).

The files are committed under tasks/assets/ (no task downloads anything from the internet); run this again
only to change them: `.venv/bin/python scripts/make_osworld_task_assets.py`. Office files are written with
openpyxl, python-docx and python-pptx, the picture with Pillow, the audio with ffmpeg (silence compresses
to a few kilobytes), and the Thunderbird profile is plain text.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from docx import Document
from openpyxl import Workbook
from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.util import Inches

ASSETS = Path(__file__).resolve().parent.parent / "tasks" / "assets"

DOMAINS = (
    "libreoffice_calc",
    "libreoffice_writer",
    "libreoffice_impress",
    "gimp",
    "vlc",
    "thunderbird",
    "chrome",
)

GROCERIES = [("Bread", 2.5), ("Milk", 1.2), ("Eggs", 3.75), ("Coffee", 6.4)]

NOTES = [
    "Team meeting notes",
    "Present: Ana, Ben, Chloe",
    "We agreed to move the launch to April.",
    "Ben will update the price list by Friday.",
]
NEXT_MEETING = "Next meeting: 11 March"

SLIDES = [("Garden Club", "Spring plans"), ("Agenda", "Seeds, tools, volunteers")]
NEW_TITLE = "Garden Club 2025"

SOFFICE = ("soffice", "--headless", "--convert-to", "pptx")
FFMPEG_SILENCE = ("ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono")

# A Local Folders account only (no mail server to reach), and none of the first-start questions.
THUNDERBIRD_PREFS = """\
user_pref("mail.accountmanager.accounts", "account1");
user_pref("mail.accountmanager.localfoldersserver", "server1");
user_pref("mail.account.account1.server", "server1");
user_pref("mail.server.server1.type", "none");
user_pref("mail.server.server1.hostname", "Local Folders");
user_pref("mail.server.server1.name", "Local Folders");
user_pref("mail.server.server1.userName", "nobody");
user_pref("mail.server.server1.directory-rel", "[ProfD]Mail/Local Folders");
user_pref("mail.provider.suppress_dialog_on_startup", true);
user_pref("mail.shell.checkDefaultClient", false);
user_pref("mailnews.start_page.enabled", false);
user_pref("mail.spotlight.firstRunDone", true);
user_pref("datareporting.policy.dataSubmissionPolicyBypassNotification", true);
user_pref("app.donation.eoy.version.viewed", 999);
"""

RECIPE = """\
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Lemon Pancakes</title></head>
<body>
<h1>Lemon Pancakes</h1>
<ol><li>Whisk 2 eggs, 250 ml milk and the zest of a lemon.</li><li>Fold in 150 g flour.</li>
<li>Fry small ladles in butter, two minutes a side.</li></ol>
</body>
</html>
"""


def calc() -> None:
    """A grocery list with prices and an empty total."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Groceries"
    sheet.append(["Item", "Price"])
    for item, price in GROCERIES:
        sheet.append([item, price])
    sheet.append(["Total"])
    book.save(ASSETS / "libreoffice_calc" / "groceries.xlsx")


def writer() -> None:
    """Meeting notes, and the same notes with the next meeting's date added."""
    for name, paragraphs in (
        ("meeting-notes.docx", NOTES),
        ("meeting-notes-expected.docx", [*NOTES, NEXT_MEETING]),
    ):
        document = Document()
        for text in paragraphs:
            document.add_paragraph(text)
        document.save(ASSETS / "libreoffice_writer" / name)


def impress() -> None:
    """A two-slide deck, and the same deck with the year in the first title, both as LibreOffice saves them.

    Both files go through LibreOffice once (``soffice --convert-to pptx``): its copy of a python-pptx
    deck differs in details (explicit alignment, background) that compare_pptx_files examines, and a
    second pass through LibreOffice changes nothing, so the deck a person saves from Impress compares
    equal to the expected one exactly when the text does.
    """
    folder = ASSETS / "libreoffice_impress"
    with tempfile.TemporaryDirectory() as scratch:
        drafts = Path(scratch)
        deck = Presentation()
        deck.slide_width, deck.slide_height = Inches(10), Inches(7.5)
        for title, subtitle in SLIDES:
            slide = deck.slides.add_slide(deck.slide_layouts[0])
            slide.shapes.title.text = title
            slide.placeholders[1].text = subtitle
        deck.save(drafts / "garden-club.pptx")
        _through_libreoffice(drafts / "garden-club.pptx", folder, drafts)
        edited = Presentation(str(folder / "garden-club.pptx"))
        title = edited.slides[0].shapes.title
        assert title is not None
        title.text_frame.paragraphs[0].runs[0].text = NEW_TITLE
        edited.save(str(drafts / "garden-club-expected.pptx"))
        _through_libreoffice(drafts / "garden-club-expected.pptx", folder, drafts)


def _through_libreoffice(source: Path, out: Path, scratch: Path) -> None:
    profile = (scratch / "profile").as_uri()
    subprocess.run(
        [*SOFFICE, f"-env:UserInstallation={profile}", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
    )


def gimp() -> None:
    """A small logo that is not symmetric, so a mirrored copy differs from it."""
    image = Image.new("RGB", (96, 64), (250, 250, 245))
    draw = ImageDraw.Draw(image)
    draw.rectangle((8, 8, 40, 56), fill=(200, 40, 40))
    draw.polygon([(50, 56), (88, 56), (88, 12)], fill=(30, 90, 200))
    image.save(ASSETS / "gimp" / "logo.png", optimize=True)


def vlc() -> None:
    """Ten minutes of quiet mono audio (long enough to still play when the task is scored)."""
    out = ASSETS / "vlc" / "episode-12.ogg"
    subprocess.run(
        [
            *FFMPEG_SILENCE,
            "-t",
            "600",
            "-c:a",
            "libvorbis",
            "-q:a",
            "0",
            "-metadata",
            "title=Episode 12",
            str(out),
        ],
        check=True,
    )


def thunderbird() -> None:
    """A profile with Local Folders only."""
    folder = ASSETS / "thunderbird"
    (folder / "prefs.js").write_text(THUNDERBIRD_PREFS, encoding="utf-8")


def chrome() -> None:
    """A saved recipe page."""
    (ASSETS / "chrome" / "lemon-pancakes.html").write_text(RECIPE, encoding="utf-8")


def main() -> None:
    """Write every asset."""
    for domain in DOMAINS:
        (ASSETS / domain).mkdir(parents=True, exist_ok=True)
    for make in (calc, writer, impress, gimp, vlc, thunderbird, chrome):
        make()


if __name__ == "__main__":
    main()
