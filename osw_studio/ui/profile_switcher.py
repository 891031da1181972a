"""The toolbar's profile and agent switcher: pick the profile runs use, or its agent, without Settings.

A choice is saved to the settings file at once (as Settings › Save would), so the next launch starts
with it; it applies from the next run on. The agent ids are the agent registry's.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from osw_studio.agent.registry import AGENTS
from osw_studio.core.errors import OswError
from osw_studio.settings import DEFAULT_PROFILE, Profile, Settings, save_settings

log = logging.getLogger(__name__)


def agent_ids() -> list[str]:
    """The agents the switcher offers: every id in the agent registry."""
    return list(AGENTS)


class ProfileSwitcher(QWidget):
    """Two boxes: the active profile, and the agent of that profile.

    Signals:
        switched(str): What changed, in words (the window shows it in the status bar).
    """

    switched = Signal(str)

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.profile = QComboBox()
        self.profile.setObjectName("toolbarProfile")
        self.profile.setToolTip("The profile runs use (model, endpoint, agent); saved at once")
        self.agent = QComboBox()
        self.agent.setObjectName("toolbarAgent")
        self.agent.setToolTip("The agent of this profile; saved at once")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(" Profile "))
        layout.addWidget(self.profile)
        layout.addWidget(QLabel(" Agent "))
        layout.addWidget(self.agent)
        self._filling = False
        self.refresh()
        self.profile.currentTextChanged.connect(self._on_profile_chosen)
        self.agent.currentTextChanged.connect(self._on_agent_chosen)
        settings.changed.connect(self._on_settings_changed)

    def refresh(self) -> None:
        """Show the settings' profiles, the active one and its agent."""
        self._filling = True
        try:
            self.profile.clear()
            self.profile.addItems(self.settings.profile_names)
            self.profile.setCurrentText(self.settings.active_profile or DEFAULT_PROFILE)
            self.agent.clear()
            self.agent.addItems(agent_ids())
            try:
                self.agent.setCurrentText(self.settings.resolve_profile().agent)
            except OswError as exc:  # an active profile that is gone: Settings says so too
                log.warning("%s", exc)
        finally:
            self._filling = False

    def _on_settings_changed(self, field: str) -> None:
        if field in ("profiles", "active_profile") and not self._filling:
            self.refresh()

    def _on_profile_chosen(self, name: str) -> None:
        if self._filling or not name:
            return
        self._filling = True
        try:
            self.settings.active_profile = None if name == DEFAULT_PROFILE else name
            self.agent.setCurrentText(self.settings.resolve_profile().agent)
        finally:
            self._filling = False
        self._save(f"Profile {name}: the next run uses its model and agent")

    def _on_agent_chosen(self, agent: str) -> None:
        if self._filling or not agent:
            return
        s = self.settings
        name = s.active_profile or DEFAULT_PROFILE
        old = s.profiles.get(name, Profile())
        self._filling = True
        try:
            s.set_profile(
                name, Profile.model_validate({**old.model_dump(exclude_unset=True), "agent": agent})
            )
        finally:
            self._filling = False
        self._save(f"Agent {agent} for profile {name}: the next run uses it")

    def _save(self, what: str) -> None:
        if self.settings.path is None:
            self.switched.emit(f"{what} (this session only: no settings file)")
            return
        try:
            save_settings(self.settings, self.settings.path)
        except OswError as exc:
            self.switched.emit(f"{what}, but it could not be saved: {exc}")
            return
        self.switched.emit(what)
