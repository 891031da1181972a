"""The settings editor: profiles, endpoint, model, key (in the keyring), sampling, screen and provider.

The key field is masked and empty by default: the stored key is read from the keyring only when the
person asks to see it. The remote guest's token is kept the same way, in the keyring under the guest
URL. *Test connection* runs the same diagnosis as ``osw-studio check-model`` and shows its findings
(what failed, what to do, a base URL that answers, the models the endpoint serves).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, get_args

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from osw_studio.agent.check import CheckResult, check_model
from osw_studio.agent.faithful import faithfulness
from osw_studio.core import agent_specs
from osw_studio.core.errors import OswError, SettingsError
from osw_studio.core.price import Price
from osw_studio.envs.choice import DOCKER_OPTIONS, choice_from_settings
from osw_studio.settings import (
    DEFAULT_PROFILE,
    EnvironmentSettings,
    Profile,
    ResolvedProfile,
    Settings,
    save_settings,
)
from osw_studio.settings.model import (
    DesktopName,
    EvaluatorKind,
    NetworkMode,
    ObservationType,
    ProviderKind,
)
from osw_studio.settings.secrets import (
    delete_key,
    find_api_key,
    find_guest_token,
    find_vnc_password,
    get_guest_token,
    get_key,
    set_guest_token,
    set_key,
    set_vnc_password,
)
from osw_studio.settings.vnc import format_vnc_address, vnc_address
from osw_studio.tasks import load_tasks

log = logging.getLogger(__name__)


def describe_check(result: CheckResult) -> str:
    """The findings of a connection test, as the dialog shows them.

    >>> describe_check(CheckResult(ok=True, base_url="http://h/v1", model="m", reply="OK", latency=0.25))
    'OK: m at http://h/v1 answered "OK" in 250 ms.'
    """
    if result.ok:
        ms = f" in {result.latency * 1000:.0f} ms" if result.latency is not None else ""
        return f'OK: {result.model} at {result.base_url} answered "{result.reply}"{ms}.'
    lines = [f"Failed ({result.reason}): {result.message}"]
    if result.hint:
        lines.append(f"What to do: {result.hint}")
    if result.key_source:
        lines.append(f"Key from: {result.key_source}")
    return "\n".join(lines)


class SettingsDialog(QDialog):
    """Edits a :class:`Settings` in place; *Save* writes the file and stores a typed key in the keyring."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self.settings = settings
        self._key_dirty = False
        self._token_dirty = False
        self._check_task: asyncio.Task[CheckResult] | None = None
        self.session_key: str | None = None
        """A key typed while no keyring can keep it: the app uses it until it quits."""
        self._shown: str | None = None
        self._drafts: dict[str, dict[str, Any]] = {}
        """The form of each profile edited in this session but not shown now, written by *Save*."""

        self.profile = QComboBox()
        self.profile.setObjectName("profile")
        add = QPushButton("New…")
        add.clicked.connect(self._new_profile)
        remove = QPushButton("Delete")
        remove.clicked.connect(self._delete_profile)
        row = QHBoxLayout()
        row.addWidget(self.profile, 1)
        row.addWidget(add)
        row.addWidget(remove)

        self.base_url = QLineEdit()
        self.base_url.setObjectName("baseUrl")
        self.model = QLineEdit()
        self.model.setObjectName("model")
        self.agent = QComboBox()
        self.agent.addItems(list(agent_specs.AGENT_IDS))
        self.key = QLineEdit()
        self.key.setObjectName("apiKey")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.textEdited.connect(self._on_key_edited)
        self.show_key = QPushButton("Show")
        self.show_key.setCheckable(True)
        self.show_key.toggled.connect(self._on_show_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        key_row.addWidget(self.show_key)
        self.key_source = QLabel("")
        self.key_source.setObjectName("keySource")
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.check_label = QLabel("")
        self.check_label.setObjectName("checkResult")
        self.check_label.setWordWrap(True)
        self.faithful = QLabel("")
        self.faithful.setObjectName("faithful")
        self.faithful.setWordWrap(True)

        endpoint = QGroupBox("Model endpoint")
        form = QFormLayout(endpoint)
        form.addRow("Profile", row)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("Agent", self.agent)
        form.addRow("API key", key_row)
        form.addRow("", self.key_source)
        form.addRow(self.test_button, self.check_label)
        form.addRow("Leaderboard", self.faithful)
        self.prices = {
            part: QLineEdit(placeholderText="unknown") for part in ("input", "cached_input", "output")
        }
        price_row = QHBoxLayout()
        for part, label in (("input", "input"), ("cached_input", "cached input"), ("output", "output")):
            self.prices[part].setObjectName(f"price_{part}")
            price_row.addWidget(QLabel(label))
            price_row.addWidget(self.prices[part], 1)
        form.addRow("Price / 1M tokens", price_row)

        self.temperature = QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, decimals=2)
        self.top_p = QDoubleSpinBox(minimum=0.01, maximum=1.0, singleStep=0.05, decimals=2)
        self.max_tokens = QSpinBox(minimum=1, maximum=200_000)
        self.observation = QComboBox()
        self.observation.addItems(list(get_args(ObservationType)))
        self.max_steps = QSpinBox(minimum=1, maximum=1000)
        self.evaluator = QComboBox()
        self.evaluator.addItems(list(get_args(EvaluatorKind)))
        self.evaluator.setToolTip(
            "osw-studio: our metrics (fast, light). osworld: OSWorld's own metric functions in the side "
            "environment (.venv-ref), over the files our getters fetched"
        )
        self.reference_osworld = QLineEdit(placeholderText="the desktop-env package of .venv-ref")
        self.reference_osworld.setObjectName("referenceOsworld")
        self.reference_osworld.setToolTip(
            "For the osworld evaluator: an OSWorld checkout (the folder holding desktop_env/) whose metric "
            "code scores instead of the side environment's desktop-env package"
        )
        self.task_suite = QLineEdit(placeholderText="the bundled tasks only")
        self.task_suite.setObjectName("taskSuite")
        self.task_suite.setToolTip(
            "Tasks the task list shows besides the bundled ones: a folder of task JSON files, or an "
            "index file (OSWorld's test_all.json beside its examples/ folder)"
        )
        browse_folder = QPushButton("Folder…")
        browse_folder.setObjectName("browseSuiteFolder")
        browse_folder.clicked.connect(self.browse_suite_folder)
        browse_index = QPushButton("Index file…")
        browse_index.setObjectName("browseSuiteIndex")
        browse_index.clicked.connect(self.browse_suite_index)
        suite_row = QHBoxLayout()
        suite_row.addWidget(self.task_suite, 1)
        suite_row.addWidget(browse_folder)
        suite_row.addWidget(browse_index)
        agent_box = QGroupBox("Sampling and observation")
        form2 = QFormLayout(agent_box)
        form2.addRow("Temperature", self.temperature)
        form2.addRow("Top p", self.top_p)
        form2.addRow("Max tokens", self.max_tokens)
        form2.addRow("Observation", self.observation)
        form2.addRow("Max steps", self.max_steps)
        form2.addRow("Evaluator", self.evaluator)
        form2.addRow("OSWorld checkout", self.reference_osworld)
        form2.addRow("Task suite", suite_row)

        self.width_box = QSpinBox(minimum=320, maximum=7680)
        self.height_box = QSpinBox(minimum=200, maximum=4320)
        size_row = QHBoxLayout()
        size_row.addWidget(self.width_box)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_box)
        self.provider = QComboBox()
        self.provider.setObjectName("provider")
        self.provider.addItems(list(get_args(ProviderKind)))
        self.provider.setToolTip(
            "local: a sandboxed desktop on this machine; remote: a running guest server at the URL; "
            "docker: a container on this machine"
        )
        self.remote_url = QLineEdit(placeholderText="http://host:5000 (remote guest server)")
        self.remote_url.setObjectName("guestUrl")
        self.remote_url.editingFinished.connect(self._describe_token)
        self.guest_token = QLineEdit()
        self.guest_token.setObjectName("guestToken")
        self.guest_token.setEchoMode(QLineEdit.EchoMode.Password)
        self.guest_token.textEdited.connect(self._on_token_edited)
        self.show_token = QPushButton("Show")
        self.show_token.setObjectName("showGuestToken")
        self.show_token.setCheckable(True)
        self.show_token.toggled.connect(self._on_show_token)
        token_row = QHBoxLayout()
        token_row.addWidget(self.guest_token, 1)
        token_row.addWidget(self.show_token)
        self.docker_options = QLineEdit(placeholderText="studio (default) or osworld qcow2=~/vm/Ubuntu.qcow2")
        self.docker_options.setObjectName("dockerOptions")
        self.docker_options.setToolTip(
            "The words after `--provider docker` on the command line: [studio|osworld] KEY=VALUE...\n"
            + "\n".join(f"{k}: {what} ({'/'.join(modes)})" for k, (modes, what) in DOCKER_OPTIONS.items())
        )
        self.vnc = QLineEdit(placeholderText="HOST:PORT or PORT: the viewer of a guest without a stream")
        self.vnc.setObjectName("vncAddress")
        self.vnc_password = QLineEdit()
        self.vnc_password.setObjectName("vncPassword")
        self.vnc_password.setEchoMode(QLineEdit.EchoMode.Password)
        self.network = QComboBox()
        self.network.setObjectName("guestNetwork")
        self.network.addItems(list(get_args(NetworkMode)))
        self.network.setToolTip(
            "What the local sandbox's guest may reach. none: nothing, not even this machine. "
            "outbound: the internet, for tasks that browse (never this machine's own services)."
        )
        self.desktop = QComboBox()
        self.desktop.setObjectName("guestDesktop")
        self.desktop.addItems(list(get_args(DesktopName)))
        self.desktop.setToolTip(
            "The guest's applications (local sandbox or docker container). studio: the bundled tasks' "
            "(mousepad, gnumeric, galculator). osworld: OSWorld's (LibreOffice, GIMP, VLC, Thunderbird, "
            "Chromium as google-chrome), arranged as OSWorld's image arranges them (make setup-osworld "
            "installs them here; packaging/guest-image/build.sh --desktop osworld builds the image)."
        )
        self.provider.currentTextChanged.connect(self._on_provider_changed)
        env_box = QGroupBox("Environment")
        form3 = QFormLayout(env_box)
        form3.addRow("Screen size", size_row)
        form3.addRow("Provider", self.provider)
        form3.addRow("Guest network", self.network)
        form3.addRow("Guest desktop", self.desktop)
        form3.addRow("Guest URL", self.remote_url)
        form3.addRow("Guest token", token_row)
        form3.addRow("Docker options", self.docker_options)
        form3.addRow("VNC", self.vnc)
        form3.addRow("VNC password", self.vnc_password)
        self.keep_desktop = QCheckBox("Keep the desktop between runs (chained manual work)")
        self.keep_desktop.setObjectName("keepDesktop")
        self.keep_desktop.setToolTip(
            "Off (the default): each run starts on a fresh desktop, so no task sees another's leftovers"
        )
        form3.addRow("", self.keep_desktop)

        self.error = QLabel("")
        self.error.setObjectName("settingsError")
        self.error.setStyleSheet("color: #ff6b6b;")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(endpoint)
        layout.addWidget(agent_box)
        layout.addWidget(env_box)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

        self.profile.addItems(settings.profile_names)
        self.profile.setCurrentText(settings.active_profile or DEFAULT_PROFILE)
        self.profile.currentTextChanged.connect(self._load_profile)
        self._load_profile(self.profile.currentText())
        ev = settings.evaluation
        self.width_box.setValue(ev.screen_resolution[0])
        self.height_box.setValue(ev.screen_resolution[1])
        self.max_steps.setValue(ev.max_steps)
        self.evaluator.setCurrentText(ev.evaluator)
        self.task_suite.setText(ev.task_suite or "")
        self.reference_osworld.setText(ev.reference_osworld or "")
        env = settings.environment
        self.provider.setCurrentText(env.provider)
        self.remote_url.setText(env.url or "")
        self.docker_options.setText(env.docker_options or "")
        self.network.setCurrentText(env.network)
        self.desktop.setCurrentText(env.desktop)
        self.vnc.setText(env.vnc or "")
        self.keep_desktop.setChecked(bool(env.keep_desktop))
        self._describe_vnc_password(env.vnc, env.url)
        self._on_provider_changed(env.provider)
        self._describe_token()

    # --- profiles -----------------------------------------------------------------------------------

    def _load_profile(self, name: str) -> None:
        if not name:
            return
        if self._shown is not None and self._shown != name and self.profile.findText(self._shown) >= 0:
            self._drafts[self._shown] = self._form_fields()
        previous, self._shown = self._shown, name
        draft = self._drafts.pop(name, None)
        if draft is None and name not in self.settings.profile_names and previous is not None:
            # a new profile starts as a copy of the form it was made from, with no key of its own
            draft = {**self._form_fields(), "key": None}
        if draft is not None:
            self._show_fields(draft)
            base = self.settings.resolve_profile(self._existing_name())
            self._describe_key(base.model_copy(update={"name": name}), draft["key"])
            return
        try:
            p = self.settings.resolve_profile(name)
        except SettingsError as exc:
            self.error.setText(str(exc))
            return
        self._show_fields(
            {
                "base_url": p.base_url,
                "model": p.model,
                "agent": p.agent,
                "temperature": p.temperature,
                "top_p": p.top_p or 1.0,
                "max_tokens": p.max_tokens,
                "observation_type": p.observation_type,
            }
        )
        price = self.settings.prices.get(p.model)
        for part, field in self.prices.items():
            value = getattr(price, part) if price is not None else None
            field.setText("" if value is None else f"{value:g}")
        self._describe_key(p, None)

    def _form_fields(self) -> dict[str, Any]:
        """The profile's fields as the form shows them, with a key typed for it (or None)."""
        return {
            "base_url": self.base_url.text(),
            "model": self.model.text(),
            "agent": self.agent.currentText(),
            **self._agent_fields(),
            "key": self.key.text().strip() if self._key_dirty and self.key.text().strip() else None,
        }

    def _show_fields(self, fields: dict[str, Any]) -> None:
        self.base_url.setText(fields["base_url"])
        self.model.setText(fields["model"])
        self.agent.setCurrentText(fields["agent"])
        self.temperature.setValue(fields["temperature"])
        self.top_p.setValue(fields["top_p"])
        self.max_tokens.setValue(fields["max_tokens"])
        self.observation.setCurrentText(fields["observation_type"])

    def _describe_key(self, p: ResolvedProfile, typed: str | None) -> None:
        self.key.clear()
        self._key_dirty = False
        self.show_key.setChecked(False)
        self.check_label.clear()
        verdict = faithfulness(p)
        self.faithful.setText(
            verdict.text + (f". To be faithful: {verdict.change}" if verdict.change else "")
        )
        if typed:
            self.key.setText(typed)
            self._key_dirty = True
            self.key_source.setText("Key typed in this dialog; saved with the profile.")
            return
        lookup = find_api_key(p)
        if lookup.key is not None:
            self.key.setPlaceholderText(f"stored ({lookup.key.source}); Show to reveal, type to replace")
            self.key_source.setText(f"Key from {lookup.key.source}.")
        else:
            self.key.setPlaceholderText("no key yet: paste one (kept in the system keyring)")
            self.key_source.setText(
                f"No key found. {lookup.keyring_error}" if lookup.keyring_error else "No key found."
            )

    def _new_profile(self) -> None:
        name, ok = QInputDialog.getText(self, "New profile", "Profile name (letters, digits, . _ -):")
        if ok and name.strip():
            if self.profile.findText(name.strip()) < 0:
                self.profile.addItem(name.strip())
            self.profile.setCurrentText(name.strip())

    def _delete_profile(self) -> None:
        name = self.profile.currentText()
        if name == DEFAULT_PROFILE:
            self.error.setText("The default profile cannot be deleted; edit it instead.")
            return
        self.settings.remove_profile(name)
        self._drafts.pop(name, None)
        try:
            delete_key(name)
        except SettingsError as exc:
            self.error.setText(str(exc))
        self._shown = None  # the deleted profile's form is not kept as a draft
        self.profile.removeItem(self.profile.currentIndex())

    # --- the key ------------------------------------------------------------------------------------

    def _on_key_edited(self, _text: str) -> None:
        self._key_dirty = True

    def _on_show_key(self, on: bool) -> None:
        if on and not self._key_dirty and not self.key.text():
            try:
                stored = get_key(self.profile.currentText())
            except SettingsError as exc:
                self.error.setText(str(exc))
                stored = None
            if stored:
                self.key.setText(stored)
        self.key.setEchoMode(QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password)
        self.show_key.setText("Hide" if on else "Show")
        if not on and not self._key_dirty:
            self.key.clear()  # a revealed key is not kept in the widget longer than needed

    # --- the environment and the guest token --------------------------------------------------------

    def _on_provider_changed(self, provider: str) -> None:
        for widget in (self.remote_url, self.guest_token, self.show_token):
            widget.setEnabled(provider == "remote")
        self.docker_options.setEnabled(provider == "docker")
        self.network.setEnabled(provider == "local")
        self.desktop.setEnabled(provider in ("local", "docker"))
        for widget in (self.vnc, self.vnc_password):
            widget.setEnabled(provider != "local")  # the local sandbox streams its screen

    def _describe_vnc_password(self, vnc: str | None, url: str | None) -> None:
        stored = vnc and find_vnc_password(format_vnc_address(*vnc_address(vnc, url))).value
        self.vnc_password.setPlaceholderText(
            "stored; type to replace" if stored else "none stored: type it if the VNC server asks for one"
        )

    def _describe_token(self) -> None:
        """Say in the empty token field whether the guest URL has a token, and from where."""
        url = self.remote_url.text().strip()
        if not url:
            self.guest_token.setPlaceholderText("give the guest URL first")
            return
        lookup = find_guest_token(url)
        if lookup.value is not None:
            text = f"stored ({lookup.source}); Show to reveal, type to replace"
        else:
            text = "none (OSWorld guests need none): paste the token the guest server printed"
        self.guest_token.setPlaceholderText(text)

    def _on_token_edited(self, _text: str) -> None:
        self._token_dirty = True

    def _on_show_token(self, on: bool) -> None:
        url = self.remote_url.text().strip()
        if on and not self._token_dirty and not self.guest_token.text() and url:
            try:
                stored = get_guest_token(url)
            except SettingsError as exc:
                self.error.setText(str(exc))
                stored = None
            if stored:
                self.guest_token.setText(stored)
        self.guest_token.setEchoMode(QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password)
        self.show_token.setText("Hide" if on else "Show")
        if not on and not self._token_dirty:
            self.guest_token.clear()  # as with the key: a revealed token is not kept in the widget

    # --- test connection ----------------------------------------------------------------------------

    def form_profile(self) -> ResolvedProfile:
        """The profile as the form shows it now (unsaved)."""
        base = self.settings.resolve_profile(self._existing_name())
        return base.model_copy(
            update={
                "name": self.profile.currentText() or DEFAULT_PROFILE,
                "base_url": self.base_url.text().strip() or base.base_url,
                "model": self.model.text().strip() or base.model,
            }
        )

    def _existing_name(self) -> str | None:
        name = self.profile.currentText()
        return name if name in self.settings.profile_names else None

    def test_connection(self) -> asyncio.Task[CheckResult]:
        """Probe the endpoint in the background; the findings appear under the button."""
        self.check_label.setText("Testing…")
        self.test_button.setEnabled(False)
        self._check_task = asyncio.ensure_future(self._run_check())
        return self._check_task

    async def _run_check(self) -> CheckResult:
        try:
            profile = self.form_profile()
            if self._key_dirty and self.key.text().strip():
                key: str | None = self.key.text().strip()
                source: str | None = "typed in this dialog"
            else:
                lookup = find_api_key(profile)
                key, source = lookup.value, lookup.key.source if lookup.key else None
            result = await check_model(profile, api_key=key, key_source=source)
        except OswError as exc:
            result = CheckResult(
                ok=False, base_url=self.base_url.text(), model=self.model.text(), message=str(exc)
            )
        finally:
            self.test_button.setEnabled(True)
        self.check_label.setText(describe_check(result))
        self.check_label.setStyleSheet("color: #4caf50;" if result.ok else "color: #ff6b6b;")
        return result

    # --- save ---------------------------------------------------------------------------------------

    def apply(self) -> None:
        """Write the form into the settings object (views listening to ``changed`` update).

        Raises:
            OswError: If a value is invalid or the key cannot be stored.
        """
        name = self.profile.currentText() or DEFAULT_PROFILE
        s = self.settings
        try:
            for other, fields in self._drafts.items():
                self._write_profile(other, fields)
            self._write_profile(name, self._form_fields())
            s.active_profile = None if name == DEFAULT_PROFILE else name
            self._apply_price(self.model.text().strip() or s.resolve_profile(name).model)
            s.evaluation = s.evaluation.model_copy(
                update={
                    "screen_resolution": (self.width_box.value(), self.height_box.value()),
                    "max_steps": self.max_steps.value(),
                    "evaluator": self.evaluator.currentText(),
                    "task_suite": self._checked_task_suite(),
                    "reference_osworld": self._checked_reference_osworld(),
                }
            )
            environment = EnvironmentSettings.model_validate(
                {
                    **s.environment.model_dump(),
                    "provider": self.provider.currentText(),
                    "url": self.remote_url.text(),
                    "docker_options": self.docker_options.text(),
                    "network": self.network.currentText(),
                    "desktop": self.desktop.currentText(),
                    "vnc": self.vnc.text(),
                    "keep_desktop": self.keep_desktop.isChecked() or None,  # unset: fresh desktops
                }
            )
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise SettingsError(f"invalid setting: {exc}", hint="correct the field and save again") from None
        if environment.provider == "docker":
            choice_from_settings("docker", docker_options=environment.docker_options)  # says what is wrong
        token = self.guest_token.text().strip() if self._token_dirty else ""
        if token and not environment.url:
            raise SettingsError("a guest token needs the guest URL", hint="fill in Guest URL, then save")
        vnc_password = self.vnc_password.text()
        if vnc_password and not environment.vnc:
            raise SettingsError("a VNC password needs the VNC address", hint="fill in VNC, then save")
        s.environment = environment
        if vnc_password and environment.vnc:
            set_vnc_password(format_vnc_address(*vnc_address(environment.vnc, environment.url)), vnc_password)
            self.vnc_password.clear()
        for other, fields in list(self._drafts.items()):
            if fields["key"]:
                set_key(other, fields["key"])
            del self._drafts[other]
        if self._key_dirty and self.key.text().strip():
            try:
                set_key(name, self.key.text())
            except SettingsError as exc:
                # no keyring to keep it: the key still works, for this session only
                self.session_key = self.key.text().strip()
                self.key_source.setText(
                    f"No keyring ({exc.message}): the key is used for this session only and not "
                    "stored. Set $OSW_STUDIO_API_KEY or install a keyring to keep it."
                )
            self._key_dirty = False
        if token and environment.url:
            set_guest_token(environment.url, token)
            self._token_dirty = False

    def _write_profile(self, name: str, fields: dict[str, Any]) -> None:
        """Write one profile's form fields into the settings (the implicit default into the sections)."""
        s = self.settings
        sampling = {k: fields[k] for k in ("temperature", "top_p", "max_tokens", "observation_type")}
        if name == DEFAULT_PROFILE and DEFAULT_PROFILE not in s.profiles:
            s.model_provider = s.model_provider.model_copy(
                update={"base_url": fields["base_url"].strip(), "model": fields["model"].strip()}
            )
            s.agent = s.agent.model_copy(update=sampling)
            if fields["agent"] != "osworld":
                s.set_profile(DEFAULT_PROFILE, Profile.model_validate({"agent": fields["agent"]}))
            return
        old = s.profiles.get(name, Profile())
        own = {
            "base_url": fields["base_url"].strip() or None,
            "model": fields["model"].strip() or None,
            "agent": fields["agent"],
            **sampling,
        }
        s.set_profile(name, Profile.model_validate({**old.model_dump(exclude_none=True), **own}))

    def _apply_price(self, model: str) -> None:
        """The model's price from the three fields (all empty: no price, unknown)."""
        text = {part: field.text().strip() for part, field in self.prices.items()}
        others = {k: v for k, v in self.settings.prices.items() if k != model}
        if not any(text.values()):
            if model in self.settings.prices:
                self.settings.prices = others
            return
        values: dict[str, float] = {}
        for part, value in text.items():
            if value:
                try:
                    values[part] = float(value)
                except ValueError:
                    raise ValueError(
                        f"the {part.replace('_', ' ')} price {value!r} is not a number"
                    ) from None
        self.settings.prices = {**others, model: Price.model_validate(values)}

    def browse_suite_folder(self) -> None:
        """Task suite › Folder…: pick a folder of task files."""
        name = QFileDialog.getExistingDirectory(self, "Task suite folder", self.task_suite.text())
        if name:
            self.task_suite.setText(name)

    def browse_suite_index(self) -> None:
        """Task suite › Index file…: pick an index file (``{"domain": ["task-id", ...]}``)."""
        name, _ = QFileDialog.getOpenFileName(
            self, "Task suite index file", self.task_suite.text(), "Index files (*.json)"
        )
        if name:
            self.task_suite.setText(name)

    def _checked_task_suite(self) -> str | None:
        """The task suite field, checked: a path with at least one loadable task, or None when empty.

        Raises:
            SettingsError: If the path does not exist or holds no task that loads.
        """
        text = self.task_suite.text().strip()
        if not text:
            return None
        path = Path(text).expanduser()
        if not path.exists():
            raise SettingsError(
                f"the task suite {text} does not exist",
                hint="pick a folder of task files or an index file, or leave it empty",
            )
        found = load_tasks([path])
        if not found.entries:
            first = f": {found.errors[0]}" if found.errors else ""
            raise SettingsError(
                f"no task could be loaded from the task suite {text}{first}",
                hint="pick a folder of task JSON files or an index file",
            )
        return text

    def _checked_reference_osworld(self) -> str | None:
        """The OSWorld checkout field: a folder holding ``desktop_env/evaluators``, or None when empty.

        Raises:
            SettingsError: If the folder holds no OSWorld evaluators.
        """
        text = self.reference_osworld.text().strip()
        if not text:
            return None
        if not (Path(text).expanduser() / "desktop_env" / "evaluators").is_dir():
            raise SettingsError(
                f"no OSWorld checkout at {text}: it has no desktop_env/evaluators folder",
                hint="pick the folder that holds OSWorld's desktop_env/, or leave it empty",
            )
        return text

    def _agent_fields(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature.value(),
            "top_p": self.top_p.value(),
            "max_tokens": self.max_tokens.value(),
            "observation_type": self.observation.currentText(),
        }

    def save(self) -> None:
        """Apply the form, write the settings file, and close; errors stay in the dialog."""
        self.error.clear()
        try:
            self.apply()
            save_settings(self.settings, self.settings.path)
        except OswError as exc:
            self.error.setText(str(exc))
            return
        self.accept()
