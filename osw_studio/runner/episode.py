"""One episode: one task, one agent, one env, with a person able to step in at any moment.

The episode is a state machine driven by :meth:`Episode.run`::

    idle ─▶ resetting ─▶ observing ─▶ predicting ─▶ gating ─▶ executing ─┐
                              ▲                                          │ (next step)
                              └──────────────────────────────────────────┘
                         ─▶ evaluating ─▶ finished | failed        (or stopped | error at any point)

A person steers it with plain methods (pause, resume, step once, stop, approve, override, skip, takeover),
callable from the loop thread at any time; the episode tells about itself through psygnal signals. Every
step is written to the run store (flushed and fsynced) before the next one starts, so a crash loses at
most the step in flight. The contract shared with the UI is :data:`EPISODE_SIGNALS` (every signal, by name).

Pause takes effect between phases: a model call in flight finishes (its proposal is then held at the
gate), an action in flight completes. ``stop`` cancels the model call, the setup and the evaluation in
flight; an action or an observation in flight gets ``STOP_GRACE_S`` to complete. In approve mode each
proposal waits at the gate for :meth:`Episode.approve` (as proposed, or a list of actions to run instead)
or :meth:`Episode.skip`; a verdict given while paused runs that one step and stays paused.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from psygnal import Signal

from osw_studio.core.actions import Action, CallUser, Fail, Wait
from osw_studio.core.budget import LoopGuard, screen_key
from osw_studio.core.errors import GuestError, ModelError, OswError
from osw_studio.core.limits import STEP_WAITS_S, STOP_GRACE_S
from osw_studio.core.observation import Observation
from osw_studio.core.outcome import OutcomeKind, error_kind, outcome_kind
from osw_studio.core.price import total_cost
from osw_studio.core.step import EpisodeResult, StepRecord, StepSource, Verdict
from osw_studio.core.task import Task
from osw_studio.runner.episode_config import (
    DEFAULT_PHASE_TIMEOUTS,
    EpisodeConfig,
    EpisodeState,
    Proposal,
)
from osw_studio.runner.settle import SettlePolicy, SettleReport, settle

if TYPE_CHECKING:
    from osw_studio.agent.base import Agent, Prediction
    from osw_studio.envs.base import Env
    from osw_studio.runner.store import RunStoreWriter

__all__ = [
    "DEFAULT_PHASE_TIMEOUTS",
    "EPISODE_SIGNALS",
    "Episode",
    "EpisodeConfig",
    "EpisodeState",
    "Proposal",
    "SettlePolicy",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

EvaluateFunc = Callable[["Env", Task, Sequence[Action]], Awaitable[Any]]
"""``await evaluate(env, task, actions)``: a score in [0, 1], or an object with a ``score``."""


@dataclass(frozen=True)
class _Decision:
    verdict: Verdict
    actions: list[Action]
    note: str | None = None
    answer: str | None = None  # to a safety check: acknowledged, approved, edited, skipped, failed


class _Stopped(Exception):
    """Raised inside :meth:`Episode.run` when a person pressed stop."""


class _OverBudget(Exception):
    """Raised inside :meth:`Episode.run` when the wall-time budget ran out during a model call."""


class Episode:
    """Runs one task with one agent on one env; see the module docstring.

    Args:
        task: The task to run.
        agent: The agent that proposes actions.
        env: The env to act on (already started; the episode resets it but does not close it).
        config: Limits and modes (defaults: 30 steps, auto mode).
        store: Where steps and the result are written; None keeps them in memory only.
        evaluate: Scores the end state; default: :func:`osw_studio.evaluation.evaluate.evaluate`.
        domain: The task's domain, for the result.
        task_dir: The task file's folder, handed to ``env.reset`` with the task (relative paths in its
            setup steps and evaluator resolve there).
    """

    state_changed = Signal(str, str)
    paused_changed = Signal(bool)
    mode_changed = Signal(str)
    model_token = Signal(str)
    step_proposed = Signal(object)
    step_finished = Signal(object)
    observation_taken = Signal(object)
    takeover_changed = Signal(bool)
    episode_finished = Signal(object)
    error_raised = Signal(object)
    help_requested = Signal(str)

    def __init__(
        self,
        task: Task,
        agent: Agent,
        env: Env,
        *,
        config: EpisodeConfig | None = None,
        store: RunStoreWriter | None = None,
        evaluate: EvaluateFunc | None = None,
        domain: str | None = None,
        task_dir: Path | None = None,
    ) -> None:
        self.task = task
        self.task_dir = task_dir
        self.agent = agent
        self.env = env
        self.config = config or EpisodeConfig()
        self.store = store
        self.domain = domain
        self._evaluate = evaluate
        self.state = EpisodeState.IDLE
        self.mode: str = self.config.mode
        self.paused = False
        self.in_takeover = False
        self.step_index = 0
        self.proposal: Proposal | None = None
        self.steps: list[StepRecord] = []
        self.result: EpisodeResult | None = None
        self._agent_steps = 0
        self._stopping = False
        self._step_once = False
        self._decision: _Decision | None = None
        self._takeovers = 0
        self._wake = asyncio.Event()
        self._predict_task: asyncio.Task[Any] | None = None
        self._evaluation: dict[str, Any] | None = None
        self._env_lock = asyncio.Lock()
        self.model_error: ModelError | None = None
        """The failed model call the episode holds at (``hold_on_model_error``), until a retry."""
        self._retry = False
        self._call_users = 0
        self._error_kind: OutcomeKind | None = None
        self._step_limit = False
        self._guard = LoopGuard(self.config.loop_repeats, self.config.loop_still_steps)
        self._ended_by: Literal["budget", "stuck"] | None = None
        self._limit: str | None = None
        self._budget_request: str | None = None
        self._run_started = time.time()

    # --- read-only state ----------------------------------------------------------------------------

    @property
    def max_steps(self) -> int:
        """The most agent steps this episode takes."""
        return self.config.max_steps

    @property
    def run_dir(self) -> Path | None:
        """The run store folder, when there is a store."""
        return self.store.path if self.store is not None else None

    @property
    def model_name(self) -> str | None:
        """The model that acts, as the agent names it."""
        name = getattr(self.agent, "model_name", None)
        return str(name) if name is not None else None

    def spent(self) -> dict[str, Any]:
        """The run's tokens and cost so far: ``{"usage": Usage | None, "cost": float | None}``.

        The cost is None unless every model call that reported tokens has a known cost.
        """
        used = [s for s in self.steps if s.usage is not None]
        usage = None
        for step in used:
            assert step.usage is not None
            usage = step.usage if usage is None else usage + step.usage
        return {"usage": usage, "cost": total_cost([s.cost for s in used])}

    # --- controls -----------------------------------------------------------------------------------

    def pause(self) -> None:
        """Hold the episode at the next phase boundary."""
        self._step_once = False
        self._set_paused(True)

    def resume(self) -> None:
        """Go on running steps (held at a failed model call: call it again)."""
        self._step_once = False
        if self.model_error is not None:
            self._retry = True
        self._set_paused(False)

    def step_once(self) -> None:
        """When paused: run one step, then pause again."""
        if self.state.is_final:
            return
        self._step_once = True
        self._set_paused(False)

    def stop(self) -> None:
        """End the episode now: the model call in flight is cancelled; the result's status is ``stopped``."""
        if self.state.is_final or self._stopping:
            return
        self._stopping = True
        if self._predict_task is not None:
            self._predict_task.cancel()
        self._wake.set()

    def set_mode(self, mode: str) -> None:
        """Switch between ``auto`` and ``approve``; a proposal waiting at the gate follows the new mode."""
        if mode not in ("auto", "approve"):
            raise ValueError(f"mode must be 'auto' or 'approve', not {mode!r}")
        if mode != self.mode:
            self.mode = mode
            self.mode_changed.emit(mode)
            self._wake.set()

    def approve(self, actions: list[Action] | None = None) -> None:
        """Let the held proposal run: as proposed (None), or these actions instead (an override).

        An override keeps what the model proposed and records what actually ran (verdict ``edited``).
        Without a proposal at the gate this does nothing.
        """
        if self.proposal is None or self._decision is not None:
            return
        if actions is None:
            self._decision = _Decision(
                "approved" if self.mode == "approve" or self.proposal.confirm else "auto",
                self.proposal.actions,
            )
        else:
            self._decision = _Decision("edited", list(actions))
        self._wake.set()

    def end_for_budget(self, reason: str) -> None:
        """End the run at the next step boundary as over budget (a suite's budget ran out): it is scored."""
        if self._budget_request is None:
            self._budget_request = reason
            self._wake.set()

    def retry_model_call(self) -> None:
        """Call the model again for the step whose model call failed (see ``hold_on_model_error``)."""
        if self.model_error is not None:
            self._retry = True
            self._wake.set()

    def skip(self) -> None:
        """Drop the held proposal (recorded with verdict ``skipped``) and go on to the next step."""
        if self.proposal is None or self._decision is not None:
            return
        self._decision = _Decision("skipped", [])
        self._wake.set()

    def begin_takeover(self) -> None:
        """Hold the agent so a person can act (through :meth:`human_act`); a held proposal is dropped."""
        if self.in_takeover or self.state.is_final:
            return
        self.in_takeover = True
        self._takeovers += 1
        self.takeover_changed.emit(True)
        self._wake.set()

    def end_takeover(self) -> None:
        """Give control back: the agent goes on from the current screen."""
        if not self.in_takeover:
            return
        self.in_takeover = False
        self.takeover_changed.emit(False)
        self._wake.set()

    async def human_act(self, actions: list[Action]) -> StepRecord:
        """During a takeover, perform a person's actions now and record them as a human step.

        Raises:
            OswError: If no takeover is in progress or the episode is over.
            GuestError: If the guest fails the actions (the step is recorded with the error).
        """
        if not self.in_takeover or self.state.is_final:
            raise OswError(
                "actions by hand are only taken during a takeover",
                where=f"step {self.step_index + 1}",
                hint="begin a takeover first",
            )
        async with self._env_lock:
            started = time.time()
            t0 = time.perf_counter()
            observation = await self._timed("observe", self._observe(), stoppable=False)
            timings = {"observe": time.perf_counter() - t0}
            self.observation_taken.emit(observation)
            self.step_index += 1
            record = StepRecord(
                index=self.step_index,
                source="human",
                verdict="human",
                executed=list(actions),
                started_at=started,
            )
            try:
                await self._execute(actions, timings)
            except OswError as exc:
                record.error = str(exc)
                self._record(record, observation, timings)
                raise
            return self._record(record, observation, timings)

    # --- the run ------------------------------------------------------------------------------------

    async def run(self) -> EpisodeResult:
        """Reset, take steps until done, fail, stop or ``max_steps``, evaluate, and write the result.

        Errors a user can cause (an unreachable guest, a failing model endpoint, a broken evaluator)
        end the episode with status ``error``; they are emitted on ``error_raised``, not raised.
        """
        started = self._run_started = time.time()
        status: Literal["finished", "failed", "stopped", "error", "budget", "stuck"] = "error"
        score: float | None = None
        error: str | None = None
        try:
            try:
                score = await self._run_steps()
                status = "finished" if score >= 1.0 else "failed"
                if self._ended_by is not None and score < 1.0:
                    status = self._ended_by
            except _Stopped:
                status = "stopped"
            except OswError as exc:
                error = self._step_error(exc)
                self._error_kind = error_kind(exc, evaluating=self.state == EpisodeState.EVALUATING)
                self.error_raised.emit(exc)
        except BaseException as exc:  # a bug or a cancelled task: still leave a readable result behind
            error = f"internal error: {exc!r}" if not isinstance(exc, asyncio.CancelledError) else "cancelled"
            self._finish(status, score, error, started)
            raise
        return self._finish(status, score, error, started)

    def _step_error(self, exc: OswError) -> str:
        """The error as the result keeps it, naming the step it ended.

        The model's and the guest's own errors name a URL, not the step they happened at.
        """
        text = str(exc)
        in_step = (EpisodeState.OBSERVING, EpisodeState.PREDICTING, EpisodeState.GATING)
        if text.startswith("step ") or self.state not in (*in_step, EpisodeState.EXECUTING):
            return text
        step = self.step_index if self.state == EpisodeState.EXECUTING else self.step_index + 1
        return f"step {step} ({self.state.value}): {text}"

    def _finish(
        self,
        status: Literal["finished", "failed", "stopped", "error", "budget", "stuck"],
        score: float | None,
        error: str | None,
        started: float,
    ) -> EpisodeResult:
        self.proposal = None
        result = EpisodeResult(
            success=score is not None and score >= 1.0,
            score=score,
            steps=self.step_index,
            error=error,
            domain=self.domain,
            task_id=self.task.id,
            model=self.model_name,
            status=status,
            assisted=any(s.source == "human" or s.verdict == "edited" for s in self.steps),
            started_at=started,
            finished_at=time.time(),
            kind=self._outcome_kind(status, score, error),
            limit=self._limit,
            **self.spent(),
        )
        if self._evaluation is not None:
            result.evaluation = self._evaluation  # type: ignore[attr-defined]  # kept as an extra key
        self.result = result
        if self.store is not None:
            try:
                self.store.finish(result)
            except OswError as exc:
                self.error_raised.emit(exc)
        self._set_state(EpisodeState(status))
        self.episode_finished.emit(result)
        return result

    def _over_budget(self) -> bool:
        """Whether the run's budget (or its suite's) ran out; the run then ends ``budget``, scored."""
        reason = self._budget_request
        budget = self.config.budget
        if reason is None and budget is not None:
            spent = self.spent()
            usage = spent["usage"]
            reason = budget.exceeded(
                tokens=usage.total_tokens if usage is not None else 0,
                cost=spent["cost"],
                seconds=time.time() - self._run_started,
            )
        if reason is None:
            return False
        self._ended_by, self._limit = "budget", reason
        return True

    def _outcome_kind(self, status: str, score: float | None, error: str | None) -> OutcomeKind:
        if status == "error" and self._error_kind is not None:
            return self._error_kind
        infeasible = "infeasible" in self.task.evaluator.funcs
        return outcome_kind(status, score, error=error, infeasible=infeasible, step_limit=self._step_limit)

    async def _run_steps(self) -> float:
        self._set_state(EpisodeState.RESETTING)
        self.agent.reset(self.task)
        first = await self._timed("reset", self.env.reset(self.task, task_dir=self.task_dir))
        self._set_state(EpisodeState.OBSERVING)  # the reset ends with an observation
        self.observation_taken.emit(first)
        observation: Observation | None = first
        if self._wants_tree and first.accessibility_tree is None:
            observation = None  # the reset's observation has no tree: step 1 observes again with one
        while self._agent_steps < self.config.max_steps:
            if await self._hold():
                observation = None  # the screen may have changed while the episode was held
                self._guard.forget()  # a person was there: count afresh
            if self._over_budget():
                break
            timings: dict[str, float] = {}
            if observation is None:
                self._set_state(EpisodeState.OBSERVING)
                t0 = time.perf_counter()
                observation = await self._timed("observe", self._observe())
                timings["observe"] = time.perf_counter() - t0
                self.observation_taken.emit(observation)
            screen = screen_key(observation.screenshot) if self._guard.enabled else ""
            stuck = self._guard.check(screen) if self._guard.enabled else None
            if stuck is not None:
                if not self.config.is_attended:
                    self._ended_by, self._limit = "stuck", f"loop guard: {stuck}"
                    break
                self._guard.forget()  # held for the person; the run goes on when they resume it
                self._set_paused(True)
                self.help_requested.emit(f"The run looks stuck: {stuck}.")
                continue
            try:
                ended = await self._agent_step(observation, timings)
            except _OverBudget:
                assert self.config.budget is not None and self.config.budget.seconds is not None
                self.proposal = None
                self._ended_by = "budget"
                self._limit = (
                    f"wall-time budget of {self.config.budget.seconds:g} s used up during a model call"
                )
                break
            if self._guard.enabled and self.steps:
                self._guard.record(screen, self.steps[-1].executed)
            observation = None
            if ended:
                break
        else:
            self._step_limit = True
        if self._stopping:
            raise _Stopped
        self._set_state(EpisodeState.EVALUATING)
        await self._save_final_screen()
        return await self._score()

    async def _save_final_screen(self) -> None:
        if self.store is None:
            return
        try:
            final = await self._timed("observe", self.env.observe())
            self.store.write_final_screen(final.screenshot, final.image_format)
        except OswError as exc:  # the end state is still scored; only the picture of it is missing
            log.warning("final screen not saved: %s", exc)

    async def _agent_step(self, observation: Observation, timings: dict[str, float]) -> bool:
        """One predict-gate-execute-record cycle on ``observation``; True when the agent ended."""
        started = time.time()
        await self._hold()
        self._set_state(EpisodeState.PREDICTING)
        takeovers = self._takeovers
        t0 = time.perf_counter()
        try:
            prediction = await self._predict(observation)
        except ModelError as exc:
            self._record_refused(exc, observation, started, timings)
            raise
        timings["predict"] = time.perf_counter() - t0
        timings.update({k: v for k, v in (prediction.timings or {}).items() if k not in timings})
        proposal = Proposal(
            index=self.step_index + 1,
            response=prediction.response,
            thought=prediction.thought,
            actions=list(prediction.actions),
            error=prediction.error,
            observation=observation,
            confirm=prediction.confirm,
        )
        self.proposal = proposal
        self._decision = None
        self._set_state(EpisodeState.GATING)
        self.step_proposed.emit(proposal)
        t0 = time.perf_counter()
        decision = self._safety_check(proposal, self._hand_back(await self._gate(proposal, takeovers)))
        timings["gate"] = time.perf_counter() - t0
        self.step_index += 1
        self._agent_steps += 1
        source = self._agent_source()
        record = StepRecord(
            index=self.step_index,
            source=source,
            # The human agent's own steps passed no gate: they are a person's, like a takeover's.
            verdict="human" if source == "human" and decision.verdict == "auto" else decision.verdict,
            response=prediction.response,
            thought=prediction.thought,
            proposed=proposal.actions,
            executed=decision.actions,
            coordinate_mode=prediction.coordinate_mode,
            error=prediction.error if decision.verdict == "error" else None,
            usage=prediction.usage,
            cost=self.config.price.cost(prediction.usage) if self.config.price else None,
            logprobs=prediction.logprobs,
            entropy=prediction.entropy,
            attempts=list(prediction.attempts),
            request=prediction.request,
            started_at=started,
        )
        if decision.note:
            record.note = decision.note  # type: ignore[attr-defined]  # StepRecord keeps extra keys
        if proposal.confirm is not None:  # the question and its answer, with the step
            answer = decision.answer or decision.verdict
            record.safety_check = {"message": proposal.confirm, "answer": answer}  # type: ignore[attr-defined]
        self.proposal = None
        try:
            if decision.actions:
                self._set_state(EpisodeState.EXECUTING)
                async with self._env_lock:
                    await self._execute(decision.actions, timings)
        except OswError as exc:
            record.error = str(exc)
            record.verdict = "error"
            self._record(record, observation, timings)
            raise
        except _Stopped as stop:  # stopped during a wait: what ran before it is kept
            if str(stop):
                record.error = str(stop)
            self._record(record, observation, timings)
            raise
        self._record(record, observation, timings)
        if self._step_once:
            self._step_once = False
            self._set_paused(True)
        hand_back = next((a for a in decision.actions if isinstance(a, CallUser)), None)
        if hand_back is not None:  # only attended episodes keep a call_user (see _hand_back)
            self._set_paused(True)
            self.help_requested.emit(hand_back.message or "")
        return any(a.is_terminal for a in decision.actions)

    def _safety_check(self, proposal: Proposal, decision: _Decision) -> _Decision:
        """An unattended step to confirm runs (``acknowledge``) or fails the task (``fail``): never a hang."""
        if proposal.confirm is None or self.config.is_attended or decision.verdict != "auto":
            return decision
        if self.agent.safety_checks == "fail":
            note = f"safety check: {proposal.confirm}; the task fails, as no one attends this run"
            return _Decision("auto", [Fail(message=note)], note=note, answer="failed")
        return _Decision("auto", decision.actions, note=decision.note, answer="acknowledged")

    def _record_refused(
        self, exc: ModelError, observation: Observation, started: float, timings: dict[str, float]
    ) -> None:
        """A reply refused for its length is kept as a step: its start (the store cuts it) and the error."""
        partial = getattr(exc, "partial", None)
        if not isinstance(partial, str):
            return
        self.step_index += 1
        record = StepRecord(
            index=self.step_index,
            source=self._agent_source(),
            verdict="error",
            response=partial,
            error=str(exc),
            started_at=started,
        )
        record.response_chars = getattr(exc, "length", len(partial))  # type: ignore[attr-defined]
        self._record(record, observation, timings)

    def _hand_back(self, decision: _Decision) -> _Decision:
        """An unattended ``call_user`` becomes a wait, or after the agent's tries a fail: never a hang."""
        if self.config.is_attended or not any(isinstance(a, CallUser) for a in decision.actions):
            return decision
        tries = self.config.call_user_tries
        tries = self.agent.call_user_tries if tries is None else tries
        self._call_users += 1
        if self._call_users <= tries:
            note = f"call_user {self._call_users} of {tries} taken as a wait: no one attends this run"
            replacement: Action = Wait()
        else:
            note = f"call_user after {tries} allowed: the task fails, as no one attends this run"
            replacement = Fail(message="the agent asked for help; no one attends this run")
        actions = [replacement if isinstance(a, CallUser) else a for a in decision.actions]
        if isinstance(replacement, Fail):
            actions = actions[: actions.index(replacement) + 1]
        return _Decision(
            decision.verdict, actions, note=note if decision.note is None else f"{decision.note}; {note}"
        )

    @property
    def _wants_tree(self) -> bool:
        return self.config.observe_accessibility or self.agent.wants_accessibility_tree

    def _agent_source(self) -> StepSource:
        return "human" if getattr(self.agent, "kind", None) == "human" else "agent"

    async def _predict(self, observation: Observation) -> Prediction:
        """The model's prediction; with ``hold_on_model_error`` a failure waits for a retry or a stop."""
        while True:
            try:
                return await self._predict_once(observation)
            except ModelError as exc:
                if not self.config.hold_on_model_error:
                    raise
                self.model_error = exc
                self._retry = False
                self.error_raised.emit(exc)
                self._set_paused(True)
                try:
                    while not self._retry:
                        if self._stopping:
                            raise _Stopped from None
                        await self._wait_for_wake()
                finally:
                    self.model_error = None
                self._set_paused(False)

    async def _predict_once(self, observation: Observation) -> Prediction:
        call = self.agent.predict(self.task.instruction, observation, on_token=self.model_token.emit)
        self._predict_task = asyncio.ensure_future(call)
        try:
            budget = self.config.budget
            if budget is not None and budget.seconds is not None:
                left = budget.seconds - (time.time() - self._run_started)
                if left < self.config.timeout("predict"):
                    # the model call may not outlast the run's wall-time budget (a stop still cancels it)
                    done, _ = await asyncio.wait({self._predict_task}, timeout=max(0.0, left))
                    if not done and not self._stopping:
                        self._predict_task.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await self._predict_task
                        raise _OverBudget
            return await self._timed("predict", self._predict_task)
        finally:
            self._predict_task = None

    async def _gate(self, proposal: Proposal, takeovers: int) -> _Decision:
        """Wait for the verdict on ``proposal``: at once in auto mode, from a person otherwise."""
        while True:
            if self._stopping:
                raise _Stopped
            if self._takeovers != takeovers:
                return _Decision("skipped", [], note="dropped: a person took over")
            if self._decision is not None:
                return self._decision
            held = self.paused or self.in_takeover
            # a step the model asks a person to confirm waits for the person when one attends
            asks = proposal.confirm is not None and self.config.is_attended
            if not held and self.mode == "auto" and not asks:
                if proposal.error is not None:
                    return _Decision("error", [])
                return _Decision("auto", proposal.actions)
            await self._wait_for_wake()

    async def _hold(self) -> bool:
        """Wait while paused or in a takeover; True if it waited. Raise :class:`_Stopped` when stopped."""
        waited = False
        while True:
            if self._stopping:
                raise _Stopped
            if not (self.paused or self.in_takeover):
                return waited
            waited = True
            await self._wait_for_wake()

    async def _wait_for_wake(self) -> None:
        self._wake.clear()
        await self._wake.wait()

    async def _observe(self) -> Observation:
        return await self.env.observe(accessibility_tree=self._wants_tree)

    async def _execute(self, actions: Sequence[Action], timings: dict[str, float]) -> None:
        """Run ``actions`` in order (``wait`` sleeps here), then wait for the screen to settle."""
        t0 = time.perf_counter()
        batch: list[Action] = []
        # The waits of one step share one budget: 200 time.sleep calls cannot make a step last hours.
        waits = min(STEP_WAITS_S, self.config.timeout("execute"))
        for action in [*actions, None]:
            if action is None or isinstance(action, Wait):
                if batch:
                    await self._timed("execute", self.env.execute(batch), stoppable=False)
                    batch = []
                if action is not None:
                    seconds = min(action.seconds, waits)
                    waits -= seconds
                    await self._pause(seconds)
            elif not action.is_terminal and not isinstance(action, CallUser):
                batch.append(action)
        timings["execute"] = time.perf_counter() - t0
        if any(not (a.is_terminal or isinstance(a, CallUser | Wait)) for a in actions):
            report = await self._settle()
            timings["settle"] = report.waited

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds`` (an agent's ``wait``); a stop ends the sleep at once."""
        if seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped(), seconds)
        if self._stopping:
            raise _Stopped

    async def _settle(self) -> SettleReport:
        async def grab() -> bytes:
            # A small JPEG is enough to see whether anything still moves, and far cheaper than a PNG.
            return await self.env.guest.screenshot(format="jpeg", quality=60, max_width=640)

        try:
            return await settle(grab, self.config.settle)
        except OswError as exc:  # a failed grab only ends the wait; the next observe reports real trouble
            log.warning("settle wait ended early: %s", exc)
            return SettleReport(waited=0.0, frames=0, stable=False)

    def _record(self, record: StepRecord, observation: Observation, timings: dict[str, float]) -> StepRecord:
        """Write the step (fsynced) before anything else happens, then tell the agent and listeners."""
        t0 = time.perf_counter()
        record.timings = dict(timings)
        record.finished_at = time.time()
        if self.store is not None:
            record = self.store.write_step(
                record,
                observation.screenshot,
                image_format=observation.image_format,
                accessibility_tree=observation.accessibility_tree,
            )
        else:  # the request's images are only worth keeping compact, in a store
            record.request = None
        # The time to write the step is known only once it is written; it stays in memory, not on disk.
        record.timings["record"] = time.perf_counter() - t0
        self.steps.append(record)
        self.agent.record(record)
        self.step_finished.emit(record)
        return record

    async def _score(self) -> float:
        evaluate = self._evaluate or _default_evaluate(self.config)
        actions = [a for step in self.steps for a in step.executed]
        # A stop abandons the evaluation: a getter or a metric that never ends cannot hold Ctrl+C.
        outcome = await self._timed("evaluate", evaluate(self.env, self.task, actions))
        score = float(getattr(outcome, "score", outcome))
        if hasattr(outcome, "model_dump"):
            self._evaluation = outcome.model_dump(mode="json")
        return score

    async def _timed(self, phase: str, awaitable: Awaitable[T], *, stoppable: bool = True) -> T:
        """Await ``awaitable`` within the phase's timeout; a stop cancels it when ``stoppable``.

        When not ``stoppable`` (an action or an observation in flight) it may still complete after a
        stop, within :data:`STOP_GRACE_S`.
        """
        limit = self.config.timeout(phase)
        task = asyncio.ensure_future(awaitable)
        stopper = asyncio.ensure_future(self._stopped())
        try:
            done, _ = await asyncio.wait({task, stopper}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
            if not stoppable and task not in done and stopper in done:
                done, _ = await asyncio.wait({task}, timeout=STOP_GRACE_S)
        finally:
            stopper.cancel()
        if task in done:
            if task.cancelled() and self._stopping:
                raise _Stopped
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if self._stopping:
            if stoppable:
                raise _Stopped
            raise _Stopped(
                f"stopped: the guest had not finished the {phase} {STOP_GRACE_S:g} s after the stop"
            )
        error = ModelError if phase == "predict" else GuestError
        culprit = "model endpoint" if phase == "predict" else "guest"
        raise error(
            f"{phase} took longer than {limit:g} s",
            where=f"step {self.step_index + 1}" if phase != "reset" else f"task {self.task.id}",
            hint=f"raise the {phase} timeout or check the {culprit}",
        )

    async def _stopped(self) -> None:
        while not self._stopping:
            await self._wait_for_wake()

    # --- plumbing -----------------------------------------------------------------------------------

    def _set_state(self, state: EpisodeState) -> None:
        if state != self.state:
            old, self.state = self.state, state
            self.state_changed.emit(state.value, old.value)

    def _set_paused(self, paused: bool) -> None:
        if paused != self.paused:
            self.paused = paused
            self.paused_changed.emit(paused)
        self._wake.set()


EPISODE_SIGNALS: tuple[str, ...] = tuple(
    name for name, value in vars(Episode).items() if isinstance(value, Signal)
)
"""The names of the episode's signals, in declaration order: the one list views relay and listen to."""


def _default_evaluate(config: EpisodeConfig) -> EvaluateFunc:
    from osw_studio.evaluation.evaluate import evaluate

    if config.evaluator == "osworld":
        from osw_studio.evaluation.osworld import shared_metrics

        metrics = shared_metrics(config.reference_python, config.reference_osworld)
        return functools.partial(evaluate, metrics=metrics)
    return evaluate
