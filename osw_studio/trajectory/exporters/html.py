"""``html``: a self-contained report per run (timeline, screens with the actions drawn, thoughts, score).

Each run becomes ``<run-id>.html`` with its screenshots embedded as data URLs, so the file can be mailed
or attached to an issue on its own; ``index.html`` lists the runs. Both are written as the steps stream
by, never held whole in memory.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO
from urllib.parse import quote

from osw_studio.core.actions import Action, DragTo, Scroll
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, data_url, step_kind
from osw_studio.trajectory.exporters.describe import describe_action

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430;background:#f6f7f9}
h1{font-size:20px;margin:0 0 4px} .meta{color:#5b6575;margin-bottom:16px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;background:#e3e7ee}
.ok{background:#d5f2dc;color:#145c2a} .bad{background:#f8dada;color:#7a1b1b} .warn{background:#fdf0cc}
.step{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:12px 16px;margin:14px 0}
.step h2{font-size:15px;margin:0 0 8px} .screen{position:relative;max-width:100%}
.screen img,.screen svg{width:100%;display:block} .screen svg{position:absolute;top:0;left:0;height:100%}
.thought{white-space:pre-wrap;color:#344} .err{color:#a11} table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #dde2ea;padding:4px 8px;text-align:left} pre{white-space:pre-wrap}
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _marks(actions: Sequence[Action], color: str, width: int) -> str:
    """SVG shapes for where actions act: a ring per point, a line per drag, an arrow per scroll."""
    r = max(6, width // 120)
    out = []
    for a in actions:
        if isinstance(a, DragTo) and a.start_x is not None and a.start_y is not None:
            out.append(
                f'<line x1="{a.start_x}" y1="{a.start_y}" x2="{a.x}" y2="{a.y}" stroke="{color}" '
                f'stroke-width="{r // 2}" marker-end="url(#arrow)"/>'
            )
        point = a.point
        if point is None:
            continue
        out.append(
            f'<circle cx="{point[0]}" cy="{point[1]}" r="{r}" fill="none" stroke="{color}" '
            f'stroke-width="{max(2, r // 3)}"/>'
        )
        if isinstance(a, Scroll) and a.dy:
            tip = point[1] - 4 * r if a.dy > 0 else point[1] + 4 * r
            out.append(
                f'<line x1="{point[0]}" y1="{point[1]}" x2="{point[0]}" y2="{tip}" stroke="{color}" '
                f'stroke-width="{r // 2}" marker-end="url(#arrow)"/>'
            )
    return "".join(out)


class HtmlExporter(Exporter):
    """Writes one self-contained HTML report per run and an ``index.html``."""

    name = "html"
    reads_requests = False

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self._index: IO[str] = open(self.staged("index.html"), "w", encoding="utf-8")  # noqa: SIM115
        self._index.write(
            f"<!doctype html><meta charset=utf-8><title>OSW Studio runs</title><style>{_STYLE}</style>"
            "<h1>Runs</h1><table><tr><th>run</th><th>task</th><th>domain</th><th>model</th>"
            "<th>status</th><th>score</th><th>steps</th><th>help</th></tr>\n"
        )

    def add_run(self, run: ExportRun) -> int:
        """Write ``<run-id>.html`` and its row in the index."""
        steps = 0
        with open(self.out / f"{run.run_id}.html", "w", encoding="utf-8") as f:
            self._write_head(f, run)
            for step in run.steps(requests=False):
                steps += 1
                self.count_step(step)
                self._write_step(f, run, step)
            f.write("</body></html>\n")
        score = "" if run.score is None else f"{run.score:g}"
        # "./" and percent-encoding: a folder named "javascript:..." is a path here, never a scheme.
        href = f"./{quote(run.run_id)}.html"
        helped = "a person helped" if run.result is not None and run.result.assisted else ""
        self._index.write(
            f'<tr><td><a href="{_esc(href)}">{_esc(run.run_id)}</a></td><td>{_esc(run.task_id)}'
            f"</td><td>{_esc(run.domain)}</td><td>{_esc(run.model)}</td><td>{_esc(run.status)}</td>"
            f"<td>{score}</td><td>{steps}</td><td>{helped}</td></tr>\n"
        )
        return 1

    def _write_head(self, f: IO[str], run: ExportRun) -> None:
        meta = run.meta
        if run.status == "interrupted":
            badge = '<span class="badge warn">interrupted</span>'
        elif run.success:
            badge = '<span class="badge ok">success</span>'
        else:
            badge = f'<span class="badge bad">{_esc(run.status)}</span>'
        if run.result is not None and run.result.assisted:  # the score is not the agent's alone
            badge += ' <span class="badge warn">a person helped</span>'
        score = "none" if run.score is None else f"{run.score:g}"
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(meta.started_at))
        f.write(
            f"<!doctype html><html><head><meta charset=utf-8><title>{_esc(run.task_id)} · {_esc(run.run_id)}"
            f"</title><style>{_STYLE}</style></head><body>"
            f"<h1>{_esc(meta.instruction or run.task_id)}</h1>"
            f'<div class="meta">task <b>{_esc(run.task_id)}</b> · domain {_esc(run.domain)} · model '
            f"{_esc(run.model)} · started {started} · score <b>{score}</b> {badge}</div>"
        )
        if run.result is not None and run.result.error:
            f.write(f'<p class="err">{_esc(run.result.error)}</p>')

    def _write_step(self, f: IO[str], run: ExportRun, step: StepRecord) -> None:
        kind = step_kind(step)
        f.write(
            f'<div class="step" id="step-{step.index}"><h2>Step {step.index} '
            f'<span class="badge">{kind}</span> <span class="badge">{_esc(step.verdict)}</span></h2>'
        )
        if step.thought:
            f.write(f'<div class="thought">{_esc(step.thought)}</div>')
        if step.executed:
            items = "".join(f"<li>{_esc(describe_action(a))}</li>" for a in step.executed)
            f.write(f"<ul>{items}</ul>")
        if kind == "edited" and step.proposed:
            items = "".join(f"<li>{_esc(describe_action(a))}</li>" for a in step.proposed)
            f.write(f"<details><summary>the model proposed</summary><ul>{items}</ul></details>")
        if step.error:
            f.write(f'<p class="err">{_esc(step.error)}</p>')
        path = run.screenshot_path(step)
        size = run.screen_size(step)
        if path is not None:
            f.write(f'<div class="screen"><img alt="screen of step {step.index}" src="{data_url(path)}">')
            if size is not None:
                w, h = size
                f.write(
                    f'<svg viewBox="0 0 {w} {h}" preserveAspectRatio="none"><defs><marker id="arrow" '
                    'viewBox="0 0 10 10" refX="5" refY="5" markerWidth="4" markerHeight="4" '
                    'orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#e0245e"/></marker></defs>'
                    f"{_marks(step.proposed, '#f5a623', w) if kind == 'edited' else ''}"
                    f"{_marks(step.executed, '#e0245e', w)}</svg>"
                )
            f.write("</div>")
        if step.response:
            f.write(f"<details><summary>model output</summary><pre>{_esc(step.response)}</pre></details>")
        if step.timings:
            timings = ", ".join(f"{k} {v:.2f} s" for k, v in step.timings.items())
            f.write(f'<div class="meta">{_esc(timings)}</div>')
        f.write("</div>\n")

    def close(self) -> None:
        """Finish ``index.html``."""
        self._index.write("</table>\n")
        self._index.close()
