"""Run › Evaluate suite…: which suite, which agent, how many envs, where the results go.

The dialog builds a :class:`~osw_studio.runner.suite.SuiteRequest` and checks it with
:func:`~osw_studio.runner.suite.plan_suite`, the same code ``osw-studio eval run`` runs, and the batch's
own check of the output folder (it refuses a used one unless Resume is on). Anything wrong stays in the
dialog as a message with what to do; only a batch that is ready to run leaves it, through
:attr:`SuiteDialog.batch_ready`. The envs come from the settings' provider.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import OswError
from osw_studio.runner.suite import AGENTS, SuitePlan, SuiteRequest, plan_suite
from osw_studio.settings import Settings
from osw_studio.ui.errors import error_text

log = logging.getLogger(__name__)

BUNDLED_SUITE = Path(__file__).resolve().parents[2] / "tasks" / "test_small.json"
"""The small suite shipped beside the package (a source checkout): the dialog's default."""

MAX_ENVS = 32
REPLAY = "replay"


def default_out(results_root: Path, suite: str, now: float | None = None) -> Path:
    """A fresh output folder for a suite: ``<results_root>/<suite name>-<local time>``.

    >>> default_out(Path("/r"), "tasks/test_small.json", now=0).parent
    PosixPath('/r')
    >>> default_out(Path("/r"), "tasks/os/", now=0).name.startswith("os-")
    True
    """
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    return results_root / f"{Path(suite).stem or 'suite'}-{stamp}"


class SuiteDialog(QDialog):
    """Asks for a suite evaluation and plans it.

    Args:
        settings: The settings in force (profiles, provider, screen size, max steps).
        results_root: Where a new output folder goes by default.
        env_options: Extra options for every env (as the app's own env gets them).
        suite: The suite shown first (default: the bundled ``tasks/test_small.json``).

    Signals:
        batch_ready(object, object): The :class:`SuitePlan` and its :class:`Batch`, ready to run.
    """

    batch_ready = Signal(object, object)

    def __init__(
        self,
        settings: Settings,
        results_root: Path,
        *,
        env_options: dict[str, object] | None = None,
        suite: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Evaluate suite")
        self.setObjectName("suiteDialog")
        self.settings = settings
        self.results_root = results_root
        self.env_options = dict(env_options or {})
        self.plan: SuitePlan | None = None

        start = suite or (BUNDLED_SUITE if BUNDLED_SUITE.is_file() else None)
        self.suite = QLineEdit(str(start) if start else settings.evaluation.task_suite or "")
        self.suite.setPlaceholderText("an index JSON or a folder of task files")
        suite_file = QPushButton("File…")
        suite_file.clicked.connect(self._pick_suite_file)
        suite_folder = QPushButton("Folder…")
        suite_folder.clicked.connect(self._pick_suite_folder)

        self.agent = QComboBox()
        self.agent.addItem("replay: each task's reference solution (no model)", (None, REPLAY))
        for name in settings.profile_names:
            try:
                profile = settings.resolve_profile(name)
            except OswError:
                continue
            usable = profile.agent in AGENTS
            label = f"profile {name}: {profile.agent}, {profile.model}" + ("" if usable else " (needs you)")
            self.agent.addItem(label, (name, None))

        self.envs = QSpinBox()
        self.envs.setRange(1, MAX_ENVS)
        self.envs.setValue(2)
        if settings.environment.provider == "remote":  # one guest server URL: one env
            self.envs.setValue(1)
            self.envs.setEnabled(False)
        self.envs.setToolTip(f"envs side by side ({settings.environment.provider} provider, from Settings)")

        self.out = QLineEdit(str(default_out(results_root, self.suite.text())))
        out_pick = QPushButton("Folder…")
        out_pick.clicked.connect(self._pick_out)
        self.resume = QCheckBox("Resume: skip tasks that already have a score in the output folder")
        self.approve = QCheckBox("Approve: each step waits for a person (the Wall marks the tasks waiting)")
        self.approve.setObjectName("suiteApprove")
        self.retry_errors = QSpinBox()
        self.retry_errors.setRange(0, 10)
        self.retry_errors.setToolTip(
            "run a task that ended in an environment or model error again, this many times"
        )
        self.cost_budget = QDoubleSpinBox()
        self.cost_budget.setRange(0.0, 1_000_000.0)
        self.cost_budget.setDecimals(2)
        self.cost_budget.setSpecialValueText("none")
        self.cost_budget.setToolTip(
            "the most this suite's runs may cost together (needs the model's price in the settings); "
            "then no task starts and the runs in flight end as budget"
        )

        self.message = QLabel()
        self.message.setObjectName("suiteMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.start)
        buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Suite", _row(self.suite, suite_file, suite_folder))
        form.addRow("Agent", self.agent)
        form.addRow("Envs", self.envs)
        form.addRow("Output folder", _row(self.out, out_pick))
        form.addRow("", self.resume)
        form.addRow("", self.approve)
        form.addRow("Retry errors", self.retry_errors)
        form.addRow("Cost budget", self.cost_budget)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    # --- choosing -----------------------------------------------------------------------------------

    def _pick_suite_file(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Suite index", self.suite.text(), "JSON (*.json)")
        if chosen:
            self.set_suite(chosen)

    def _pick_suite_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Folder of task files", self.suite.text())
        if chosen:
            self.set_suite(chosen)

    def set_suite(self, suite: str) -> None:
        """Show ``suite``, and a fresh output folder named after it unless Resume is on."""
        self.suite.setText(suite)
        if not self.resume.isChecked():
            self.out.setText(str(default_out(self.results_root, suite)))

    def _pick_out(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Output folder", self.out.text())
        if chosen:
            self.out.setText(chosen)

    # --- planning -----------------------------------------------------------------------------------

    def request(self) -> SuiteRequest:
        """The request the fields make."""
        from osw_studio.envs.choice import choice_from_settings

        env = self.settings.environment
        profile, agent = self.agent.currentData() or (None, REPLAY)
        return SuiteRequest(
            suite=self.suite.text().strip(),
            profile=profile,
            agent=agent,
            provider=choice_from_settings(
                env.provider, env.url, env.docker_options, env.network, env.desktop
            ),
            envs=self.envs.value(),
            out=self.out.text().strip() or None,
            resume=self.resume.isChecked(),
            env_options=dict(self.env_options),
            retry_errors=self.retry_errors.value(),
            cost_budget=self.cost_budget.value() or None,
        )

    def start(self) -> None:
        """Plan the suite; a ready batch leaves through :attr:`batch_ready`, a problem stays shown here."""
        skipped: list[str] = []
        try:
            if not self.suite.text().strip():
                raise OswError("no suite chosen", hint="give an index JSON or a folder of task files")
            plan = plan_suite(self.settings, self.request(), report=skipped.append)
            if self.approve.isChecked():  # attended: a person on the Wall approves each step
                plan.config.episode.mode = "approve"
            batch = plan.batch()
            todo = batch.pending()  # a used output folder without Resume is refused now, not later
        except OswError as exc:
            _title, body = error_text(exc)
            self.message.setText(body)
            return
        if not todo:
            self.message.setText(f"Every task of the suite already has a score in {plan.out}.")
            return
        for line in skipped:
            log.warning("%s", line)
        self.plan = plan
        self.message.setText("")
        self.batch_ready.emit(plan, batch)
        self.accept()


def _row(*widgets: QWidget) -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for n, widget in enumerate(widgets):
        row.addWidget(widget, 1 if n == 0 else 0)
    return box
