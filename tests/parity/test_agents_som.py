"""Differential test: set-of-marks (``som``), our ``osworld`` agent against OSWorld's PromptAgent.

The same scripted episode runs through OSWorld's ``PromptAgent(observation_type="som")`` (its
``tag_screenshot`` and ``heuristic_retrieve.draw_bounding_boxes`` in the side environment) and through ours
with ``prompts: reference`` against the OpenAI-compatible test server on 127.0.0.1. The trees hold the cases
the tagging treats specially: a box over a single colour (not tagged), a nameless node marked as an image
(tagged), a position that is not two integers (not tagged), a hidden node, a text with quotes.

Compared: every message's text (whitespace collapsed; the tag tables included) and sampling; every image's
format, size and ``detail``, and its pixels within :data:`TOLERANCE`. The numbers' glyphs come from
Pillow's default font, which another Pillow could rasterise differently; the side environment's Pillow (11)
and ours (13) give identical images, so the tolerance is none. And the actions: the reference's code, with
the ``tag_N`` assignments it puts above it, read by our parser, against ours; ``tag_N`` must land on box
N's centre.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image, ImageChops

from osw_studio.actions import canonical_actions, parse_pyautogui
from osw_studio.agent.osworld import OSWorldAgent
from osw_studio.agent.som import tag_screenshot
from osw_studio.core.actions import Action, Click, Done, DoubleClick, Typing
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.parity.episodes import (
    FAKE_TIKTOKEN,
    NS,
    SHOWN,
    STUBS,
    observations,
    play,
    run_ours,
    sampling,
    screen,
    settings_for,
    site_packages,
)
from tests.parity.reference import Reference
from tests.parity.test_agents_osworld import INSTRUCTION, REFERENCE_EPISODE

pytestmark = pytest.mark.timeout(120)

TOLERANCE = 0.0
"""Largest share of an image's pixels that may differ (measured: none with Pillow 11 against 13)."""
WINDOW = 2
SAMPLE: dict[str, Any] = {"temperature": 0.5, "top_p": 0.9, "max_tokens": 1500}
REPLIES = [
    "The Save button is tagged 1.\n```python\npyautogui.click(tag_1)\n```",
    "```python\npyautogui.doubleClick(tag_2)\npyautogui.write('report')\n```",
    "The image is tag 3; done.\n```DONE```",
]


def som_tree(step: int) -> str:
    """Nodes over the screen of :func:`tests.parity.episodes.screen` (window, blue button, step text)."""
    able = f'{SHOWN} st:enabled="true"'
    nodes = [
        f'<push-button name="Save {step}" {able} cp:screencoord="(880, 500)" cp:size="(160, 80)"/>',
        f'<label name="Status" {able} cp:screencoord="(230, 120)" cp:size="(300, {40 + step})">'
        'Saved "report.odt"</label>',
        f'<image {able} image="true" cp:screencoord="(100, 100)" cp:size="(200, 100)"/>',
        # inside the plain grey window: a single colour, not tagged
        f'<push-button name="Flat" {able} cp:screencoord="(600, 700)" cp:size="(50, 50)"/>',
        # not two integers: OSWorld's int() fails and the node is skipped
        f'<push-button name="Float" {able} cp:screencoord="(700.5, 300)" cp:size="(40, 40)"/>',
        '<push-button name="Hidden" st:showing="false" st:visible="true" st:enabled="true" '
        'cp:screencoord="(10, 10)" cp:size="(30, 30)"/>',
    ]
    return f"<desktop-frame {NS}>{''.join(nodes)}</desktop-frame>"


def reference_episode(reference: Reference) -> dict[str, Any]:
    reference.stub(*STUBS)
    reference.exec(FAKE_TIKTOKEN)
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, len(REPLIES) + 1)]
    code = (
        f"obs, space, window = 'som', 'pyautogui', {WINDOW}\nsample = {SAMPLE!r}\n"
        f"instruction = {INSTRUCTION!r}\nshots = {shots!r}\n"
        f"a11ys = {[som_tree(i) for i in range(1, len(REPLIES) + 1)]!r}\nreplies = {REPLIES!r}\n"
        + REFERENCE_EPISODE
    )
    return reference.exec(code, modules=("mm_agents.agent", "mm_agents.prompts"))  # type: ignore[no-any-return]


def _image(part: dict[str, Any]) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1])))


def differing_share(a: Image.Image, b: Image.Image) -> float:
    """The share of pixels that differ between two images of one size."""
    diff = (
        ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
        .convert("L")
        .point(lambda v: 255 if v else 0)
    )
    histogram = diff.histogram()
    return histogram[255] / (a.size[0] * a.size[1])


def compare_messages(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], step: int) -> float:
    """Assert the messages equal (images within tolerance); return the largest image difference."""
    assert [m["role"] for m in ours] == [m["role"] for m in theirs], f"step {step}"
    worst = 0.0
    for mine, sent in zip(ours, theirs, strict=True):
        assert len(mine["content"]) == len(sent["content"]), f"step {step}"
        for a, b in zip(mine["content"], sent["content"], strict=True):
            assert a["type"] == b["type"], f"step {step}"
            if a["type"] == "text":
                assert " ".join(a["text"].split()) == " ".join(b["text"].split()), f"step {step}"
                continue
            assert a["image_url"]["url"].split(",")[0] == b["image_url"]["url"].split(",")[0]
            assert a["image_url"].get("detail") == b["image_url"].get("detail")
            with _image(a) as x, _image(b) as y:
                assert (x.format, x.size) == (y.format, y.size), f"step {step}"
                worst = max(worst, differing_share(x, y))
    return worst


def reference_actions(produced: list[str]) -> list[Action]:
    actions: list[Action] = []
    for item in produced:
        actions += [Done()] if item == "DONE" else parse_pyautogui(f"```python\n{item}\n```")
    return actions


async def test_set_of_marks_matches_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    theirs = reference_episode(reference)
    steps = observations(len(REPLIES), trees=[som_tree(i) for i in range(1, len(REPLIES) + 1)])
    predictions, requests = await run_ours(
        OSWorldAgent, "gpt-4o", "osworld", INSTRUCTION, REPLIES, steps,
        observation_type="som", action_space="pyautogui", history_window=WINDOW, **SAMPLE,
    )  # fmt: skip
    assert len(requests) == len(theirs["payloads"]) == len(REPLIES)
    ours = [p.actions for p in predictions]
    worst = 0.0
    for step, (mine, payload) in enumerate(zip(requests, theirs["payloads"], strict=True), 1):
        worst = max(worst, compare_messages(mine["messages"], payload["messages"], step))
        assert sampling(mine) == sampling(payload), f"step {step}"
    assert worst <= TOLERANCE, f"tagged images differ in {worst:.4%} of their pixels"
    # The table tags the three nodes worth tagging, in order, and the image node has no name.
    current = requests[0]["messages"][-1]["content"][0]["text"]
    assert '1\tpush-button\tSave 1\t""' in current and '2\tlabel\tStatus\t"Saved ""report.odt"""' in current
    assert "3\timage\t\t" in current and "Flat" not in current and "Float" not in current
    for step, (mine_actions, produced) in enumerate(zip(ours, theirs["actions"], strict=True), 1):
        assert canonical_actions(mine_actions) == canonical_actions(reference_actions(produced)), (
            f"step {step}"
        )
    # tag_N is the centre of box N: (880 + 160 // 2, 500 + 80 // 2), then (230 + 150, 120 + 42 // 2).
    assert ours[0] == [Click(x=960, y=540)]
    assert ours[1] == [DoubleClick(x=380, y=141), Typing(text="report")]


async def test_tags_are_read_in_the_frame_of_a_resized_screenshot() -> None:
    marks = tag_screenshot(screen(1), som_tree(1))
    assert marks.boxes[0] == (880, 500, 160, 80)
    with FakeOpenAIServer(models=["gpt-4o"]) as server:
        server.queue("```python\npyautogui.click(tag_1)\n```")
        settings = settings_for(
            server, "osworld", observation_type="som", action_space="pyautogui", prompts="own",
            screenshot_size="1280x720",
        )  # fmt: skip
        agent = OSWorldAgent(settings.resolve_profile("p"), api_key="sk-test")
        [prediction] = await play(agent, INSTRUCTION, observations(1, trees=[som_tree(1)]))
        sent = server.chat_requests[0].json["messages"][-1]["content"]
    with _image(sent[1]) as image:
        assert image.size == (1280, 720)
    assert "tag_N" in server.chat_requests[0].json["messages"][0]["content"][0]["text"]
    assert prediction.actions == [Click(x=960, y=540)]


def test_set_of_marks_refuses_computer_13() -> None:
    from osw_studio.core.errors import SettingsError

    settings = Settings.model_validate(
        {"profiles": {"p": {"preset": "osworld", "observation_type": "som", "action_space": "computer_13"}}}
    )
    with pytest.raises(SettingsError, match="pyautogui"):
        OSWorldAgent(settings.resolve_profile("p"), api_key="k")
