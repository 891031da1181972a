"""OSWorld's ``evaluate()``: run ``postconfig``, fetch the states, apply the metrics, combine the scores.

The semantics are OSWorld's (``DesktopEnv.evaluate``):

- ``postconfig`` steps run first, through the env's setup-step executor;
- ``func == "infeasible"``: 1 when the last action is FAIL, else 0; on any other task a final FAIL scores 0;
- a single ``func``: the metric's score; ``metric(result, expected, **options)`` when the expected getter
  gave a value, else ``metric(result, **options)``;
- a list of ``func`` with ``conj`` (default ``and``) and parallel ``result``/``expected``/``options``
  lists (``null`` entries allowed): ``and`` stops at the first 0 (score 0), else averages; ``or`` stops
  at the first 1 (score 1), else takes the maximum;
- a result file that does not exist scores that metric 0;
- a guest that answers a command with HTTP 5xx gives the getter no value (OSWorld's getters return
  None): the metric is called with None and scores it (0 for every metric here); a metric that cannot
  take None scores 0 (OSWorld's run scores such a task 0);
- what points at the environment rather than the agent (a guest that failed a command, a missing
  ``cache_file`` or expected file) is listed in the result's ``environment``, beside the score;
- a metric may score in [-1, 1] (SSIM can be negative) and is combined as is; a negative task score
  is reported as 0, with OSWorld's value in the reason.

An unknown ``func`` or getter raises :class:`EvaluationError` before anything runs; a metric that crashes
raises it too, naming the metric: no score is ever invented.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from osw_studio.core.actions import Action, Fail
from osw_studio.core.errors import EvaluationError, OswError
from osw_studio.core.paths import check_name
from osw_studio.core.task import Evaluator, GetterSpec, SetupStep, Task
from osw_studio.evaluation.getters.files import FileMissing
from osw_studio.evaluation.registry import GETTERS, METRICS, GetterContext, NoValue, Verdict
from osw_studio.evaluation.result import EvaluationResult, GetterOutcome, MetricOutcome, summarize

if TYPE_CHECKING:
    from osw_studio.envs.base import Env

T = TypeVar("T")

StepRunner = Callable[[Sequence[SetupStep]], Awaitable[None]]
"""Runs ``postconfig`` steps on the guest."""


class MetricScorer(Protocol):
    """Scores a metric by name instead of our registry (``--evaluator osworld``)."""

    async def score(
        self, metric: str, args: list[Any], options: dict[str, Any], *, files: Path | None = None
    ) -> float:
        """The score of ``metric(*args, **options)``; ``files`` is the folder the fetched files are in."""
        ...

    async def reference(self) -> dict[str, str]:
        """Which code scores: ``evaluator``, ``version`` and what else tells it apart."""
        ...


def ended_with_fail(actions: Sequence[Action]) -> bool:
    """Whether the agent's last action was FAIL (OSWorld's ``action_history[-1] == "FAIL"``).

    >>> from osw_studio.core.actions import Done
    >>> ended_with_fail([Done(), Fail()]), ended_with_fail([Fail(), Done()]), ended_with_fail([])
    (True, False, False)
    """
    return bool(actions) and isinstance(actions[-1], Fail)


def check_names(evaluator: Evaluator, *, metrics: bool = True) -> None:
    """Raise :class:`EvaluationError` naming the first func, getter or option that is not implemented.

    With ``metrics=False`` only the getters are checked (OSWorld's own functions score the metrics).
    """
    options = _per_metric(evaluator.options, len(evaluator.funcs))
    for i, name in enumerate(evaluator.funcs):
        if name == "infeasible" or not metrics:
            continue
        missing = METRICS.entry(name).missing_features(options[i])
        if missing:
            raise EvaluationError(
                f"metric {name!r} is given options OSW Studio does not implement: {', '.join(missing)}",
                where=f"evaluator.options[{i}]" if isinstance(evaluator.func, list) else "evaluator.options",
                hint="scoring without them could differ from OSWorld's score",
            )
    for spec in _specs(evaluator.result) + _specs(evaluator.expected):
        if spec is not None:
            GETTERS.entry(spec.type)


async def evaluate(
    env: Env,
    task: Task,
    actions: Sequence[Action],
    *,
    cache_dir: Path | None = None,
    task_dir: Path | None = None,
    run_steps: StepRunner | None = None,
    metrics: MetricScorer | None = None,
) -> EvaluationResult:
    """Score the guest's end state for ``task`` after the agent performed ``actions``.

    Args:
        env: The env whose guest is scored (getters use ``env.guest``).
        task: The task; its ``evaluator`` says what to fetch and how to compare.
        actions: Every action of the episode, in order (only whether the last is FAIL matters).
        cache_dir: The asset cache folder the task's setup used (OSWorld's ``cache/``): files are
            fetched into ``<cache_dir>/<task id>/``, where ``cache_file`` finds what setup steps wrote
            and ``cloud_file`` finds pre-seeded expected files. Default: the env's asset cache, else a
            temporary folder.
        task_dir: The task file's folder, for ``cloud_file`` URLs that are relative paths (default: the
            folder the env was last reset with).
        run_steps: Runs the ``postconfig`` steps (default: the setup-step executor on ``env.guest``).
        metrics: Scores the metrics instead of ours (``--evaluator osworld``:
            :class:`osw_studio.evaluation.osworld.OSWorldMetrics`); the getters stay ours.

    Raises:
        EvaluationError: An unknown func or getter, an option it does not implement, a malformed
            evaluator, or a metric that crashed.
        GuestError: The guest failed while running postconfig or fetching a state.
    """
    check_names(task.evaluator, metrics=metrics is None)
    task_dir = task_dir or env.task_dir
    cache_dir = cache_dir or env.asset_cache
    if cache_dir is None:
        with tempfile.TemporaryDirectory(prefix="osw-eval-") as tmp:
            result = await _evaluate(env, task, actions, Path(tmp), task_dir, run_steps, metrics)
    else:
        result = await _evaluate(env, task, actions, cache_dir, task_dir, run_steps, metrics)
    return result.model_copy(update={"scored_by": await scored_by(metrics)})


async def scored_by(metrics: MetricScorer | None) -> dict[str, str]:
    """What ``result.json`` records of who scored: ours (with OSW Studio's version) or ``metrics``'."""
    if metrics is not None:
        return await metrics.reference()
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("osw-studio")
    except PackageNotFoundError:  # run from a checkout that is not installed
        ours = "unknown"
    return {"evaluator": "osw-studio", "version": ours}


async def _evaluate(
    env: Env,
    task: Task,
    actions: Sequence[Action],
    cache_root: Path,
    task_dir: Path | None,
    run_steps: StepRunner | None,
    metrics: MetricScorer | None,
) -> EvaluationResult:
    evaluator = task.evaluator
    if evaluator.postconfig:
        runner = run_steps or _default_step_runner(env, task, cache_root, task_dir)
        await runner(evaluator.postconfig)

    failed = ended_with_fail(actions)
    if evaluator.func == "infeasible":
        score = 1.0 if failed else 0.0
        reason = "the agent answered FAIL" if failed else "the task is infeasible but the agent did not FAIL"
        return EvaluationResult(task_id=task.id, score=score, reason=reason)
    if failed:
        return EvaluationResult(
            task_id=task.id, score=0.0, reason="the agent answered FAIL on a feasible task"
        )

    task_cache = cache_root / check_name(task.id, where="$.id")
    task_cache.mkdir(parents=True, exist_ok=True)
    ctx = GetterContext(
        guest=env.guest,
        cache_dir=task_cache,
        task_dir=task_dir,
        assets=env.asset_store,
        port_url=env.guest_port_url,
    )
    return await score_evaluator(ctx, task.id, evaluator, metrics=metrics)


async def score_evaluator(
    ctx: GetterContext, task_id: str, evaluator: Evaluator, *, metrics: MetricScorer | None = None
) -> EvaluationResult:
    """Fetch the states and combine the metrics' scores (everything after postconfig and FAIL).

    ``metrics`` scores the metrics instead of our registry (see :func:`evaluate`).
    """
    funcs = evaluator.funcs
    n = len(funcs)
    results = _per_metric(evaluator.result, n)
    expecteds = _per_metric(evaluator.expected, n)
    options = _per_metric(evaluator.options, n)
    single = not isinstance(evaluator.func, list)
    conj = None if single else (evaluator.conj or "and")

    outcomes: list[MetricOutcome] = []
    scores: list[float] = []
    for i, name in enumerate(funcs):
        outcome = await _score_one(ctx, i, name, results[i], expecteds[i], options[i] or {}, metrics)
        outcomes.append(outcome)
        assert outcome.score is not None
        scores.append(outcome.score)
        if conj == "and" and outcome.score == 0.0:
            return _result(task_id, 0.0, conj, f"{name} scored 0", outcomes, funcs)
        if conj == "or" and outcome.score == 1.0:
            return _result(task_id, 1.0, conj, f"{name} scored 1", outcomes, funcs)
    if single:
        return _result(task_id, scores[0], conj, outcomes[0].reason, outcomes, funcs)
    if conj == "and":
        return _result(task_id, sum(scores) / n, conj, "mean of the metrics", outcomes, funcs)
    return _result(task_id, max(scores), conj, "best of the metrics", outcomes, funcs)


def _result(
    task_id: str, score: float, conj: str | None, reason: str, outcomes: list[MetricOutcome], funcs: list[str]
) -> EvaluationResult:
    # Metrics after a short-circuit are listed as not reached, so the UI shows all of them.
    for i in range(len(outcomes), len(funcs)):
        outcomes.append(MetricOutcome(index=i, func=funcs[i], reason="not reached"))
    if score < 0.0:
        # OSWorld would report the negative value; a task's score is a success rate in [0, 1].
        reason = f"{reason} (OSWorld reports {score:g}; a task scores at least 0)"
        score = 0.0
    environment = [f"func[{m.index}] {m.func}: {m.environment}" for m in outcomes if m.environment]
    return EvaluationResult(
        task_id=task_id, score=score, conj=conj, reason=reason, metrics=outcomes, environment=environment
    )


async def _score_one(
    ctx: GetterContext,
    index: int,
    name: str,
    result_spec: GetterSpec | None,
    expected_spec: GetterSpec | None,
    options: dict[str, Any],
    metrics: MetricScorer | None = None,
) -> MetricOutcome:
    outcome = MetricOutcome(index=index, func=name, options=options)
    try:
        result = await _fetch(ctx, "result", result_spec, outcome)
        expected = await _fetch(ctx, "expected", expected_spec, outcome)
    except FileMissing as missing:
        outcome.score = 0.0
        outcome.reason = f"{missing.role} file missing: {missing.path}"
        spec = expected_spec if missing.role == "expected" else result_spec
        if missing.role == "expected" or (spec is not None and spec.type == "cache_file"):
            outcome.environment = (
                f"the {missing.role} file {missing.path} is missing (a setup or cache problem)"
            )
        return outcome
    guest_failed = bool(outcome.environment)  # set by _fetch: a getter got no value from the guest

    if metrics is not None:
        args = [result, expected] if expected is not None else [result]
        score = await metrics.score(name, args, options, files=ctx.cache_dir)
        return _scored(outcome, name, index, score, f"OSWorld's {name} scored {score:g}")
    func = METRICS.get(name)
    try:
        if expected is not None:
            verdict = await asyncio.to_thread(func, result, expected, **options)
        else:
            verdict = await asyncio.to_thread(func, result, **options)
    except OswError:
        raise
    except Exception as exc:
        if guest_failed:
            return _scored(outcome, name, index, 0.0, f"no state to score (the guest failed): {exc}")
        raise EvaluationError(
            f"metric {name!r} failed: {type(exc).__name__}: {exc}",
            where=f"evaluator.func[{index}]",
            hint="check the task's options for this metric and the fetched files",
        ) from exc
    score, reason = (verdict.score, verdict.reason) if isinstance(verdict, Verdict) else (verdict, "")
    return _scored(outcome, name, index, float(score), reason)


def _scored(outcome: MetricOutcome, name: str, index: int, score: float, reason: str) -> MetricOutcome:
    # SSIM-based metrics (compare_images) may be negative, as in OSWorld; nothing goes below -1.
    if not -1.0 <= score <= 1.0:
        raise EvaluationError(
            f"metric {name!r} gave {score}, outside [-1, 1]", where=f"evaluator.func[{index}]"
        )
    outcome.score = score
    outcome.reason = reason or (
        "match" if score == 1.0 else "no match" if score == 0.0 else f"partial {score:g}"
    )
    return outcome


async def _fetch(ctx: GetterContext, role: str, spec: GetterSpec | None, outcome: MetricOutcome) -> Any:
    if spec is None:
        return None
    try:
        value = await GETTERS.get(spec.type)(ctx, spec.args)
    except NoValue as none:
        outcome.getters.append(GetterOutcome(role=role, type=spec.type, summary=f"None: {none}"))
        outcome.environment = f"the {role} getter {spec.type} got no value: {none}"
        return None
    except FileMissing as missing:
        missing.role = role
        outcome.getters.append(GetterOutcome(role=role, type=spec.type, summary=str(missing), missing=True))
        raise
    outcome.getters.append(GetterOutcome(role=role, type=spec.type, summary=summarize(value)))
    return value


def _specs(value: GetterSpec | list[GetterSpec | None] | None) -> list[GetterSpec | None]:
    if isinstance(value, list):
        return value
    return [value]


def _per_metric(value: T | list[T | None] | None, n: int) -> list[T | None]:
    if isinstance(value, list):
        return value
    return [value] * n


def _default_step_runner(env: Env, task: Task, cache_root: Path, task_dir: Path | None) -> StepRunner:
    from osw_studio.envs.setup import SetupOptions, SetupRunner

    options = SetupOptions(
        cache_dir=cache_root, task_dir=task_dir, assets=env.asset_store, port_url=env.guest_port_url
    )
    runner = SetupRunner(env.guest, options)

    async def run(steps: Sequence[SetupStep]) -> None:
        await runner.run(steps, task_id=task.id, label="evaluator.postconfig")

    return run
