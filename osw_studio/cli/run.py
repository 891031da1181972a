"""``osw-studio run``: run one task with one agent on one env, printing each step as it happens.

Exit codes: 0 when the task is solved (score 1.0), 1 when it was scored lower or stopped, 2 on an error
(a guest, model, settings or task problem; the message says what to do).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from osw_studio.cli.eval_run import EVALUATOR_HELP, EVALUATORS, add_budget_arguments, budget_from
from osw_studio.core.agent_specs import AGENT_IDS
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible

if TYPE_CHECKING:
    from osw_studio.core.actions import Action
    from osw_studio.core.errors import OswError
    from osw_studio.core.step import EpisodeResult, StepRecord
    from osw_studio.runner.episode import Episode, Proposal

AGENTS = AGENT_IDS
TIMINGS_SHOWN = ("observe", "predict", "gate", "execute", "settle")
"""The phases whose time each step line shows."""


def register(subparsers: Any) -> None:
    """Add ``run``."""
    run = subparsers.add_parser(
        "run",
        help="run one task with an agent and print each step",
        description="Run one task: reset a guest, let the agent act step by step (printing each step's "
        "number, thought, actions and timings), evaluate, and store everything under --out. "
        "Exit 0 when the task is solved, 1 when it is not, 2 on an error.",
    )
    run.add_argument(
        "task",
        metavar="TASK",
        nargs="?",
        help="a task file (OSWorld JSON), e.g. tasks/os/write-hello-file.json (or give --instruction)",
    )
    run.add_argument(
        "--instruction",
        metavar="TEXT",
        help="run this instruction instead of a task file: no setup, no evaluator (the score says only "
        "whether the agent said DONE); recorded like any run, as the app's instruction box does",
    )
    run.add_argument("--profile", metavar="P", help="settings profile to use (default: the active one)")
    run.add_argument(
        "--agent",
        choices=AGENTS,
        help="who acts: a model through a prompt agent (osworld, uitars, qwen3vl, opencua), the task's "
        "reference solution (replay; needs no key), or you on this terminal (human). Default: the profile's "
        "agent",
    )
    run.add_argument(
        "--provider",
        nargs="+",
        metavar="WORD",
        default=["local"],
        help="where the desktop is: `local` (a sandbox on a virtual display, the default), `remote URL` "
        "(a guest server, e.g. an OSWorld VM at http://HOST:5000; its token from the keyring, "
        "`osw-studio keys set --guest URL`, else $OSW_GUEST_TOKEN) or `docker [studio|osworld] "
        "[KEY=VALUE...]` (a container: studio is our guest image; osworld needs qcow2=PATH)",
    )
    run.add_argument(
        "--desktop",
        choices=["studio", "osworld"],
        help="the guest's applications: studio (the bundled tasks') or osworld (OSWorld's; make "
        "setup-osworld for local, build.sh --desktop osworld for docker). A task that names its desktop "
        "runs there. Default: the settings' "
        "environment.desktop",
    )
    run.add_argument("--approve", action="store_true", help="ask on the terminal before each action runs")
    run.add_argument("--max-steps", type=int, metavar="N", help="most agent steps (default: from settings)")
    run.add_argument("--out", metavar="DIR", help="runs folder (default: settings output_dir, else ./runs)")
    run.add_argument("--evaluator", choices=EVALUATORS, help=EVALUATOR_HELP)
    add_budget_arguments(run)
    run.add_argument(
        "--task-timeout",
        type=float,
        metavar="S",
        help="seconds the task may take, its setup, steps and evaluation included; then it is stopped "
        "(the run is kept, its result says it timed out) and the exit code is 2 (default: no limit but "
        "each phase's own)",
    )
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_session(args))


async def _session(args: argparse.Namespace) -> int:
    from pathlib import Path

    from osw_studio.core.errors import GuestError, TaskError
    from osw_studio.envs.choice import parse_provider, with_desktop
    from osw_studio.envs.registry import make_env
    from osw_studio.runner.instruction import instruction_entry, score_instruction
    from osw_studio.runner.plan import plan_env_options, plan_episode, plan_recipe
    from osw_studio.settings import load_settings
    from osw_studio.settings.secrets import guest_token
    from osw_studio.tasks.load import load_task

    settings = load_settings(args.config)
    out = Path(args.out or settings.evaluation.output_dir or "runs")
    if (args.task is None) == (args.instruction is None):
        raise TaskError(
            "give a task file or --instruction TEXT (one of the two)",
            hint="osw-studio run tasks/os/write-hello-file.json, or --instruction 'Open the terminal'",
        )
    entry = (
        load_task(args.task) if args.instruction is None else instruction_entry(args.instruction, folder=out)
    )
    # A task that names its desktop ("desktop": "osworld") runs there, as `tasks check` runs it.
    desktop = entry.task.desktop or args.desktop or settings.environment.desktop
    choice = parse_provider(with_desktop(args.provider, desktop))
    provider = choice.provider
    if len(choice.urls) > 1:
        raise GuestError(
            f"`osw-studio run` uses one guest, not {len(choice.urls)}",
            hint="give one URL (`osw-studio eval run` runs a suite on several)",
        )
    (options,) = plan_env_options(settings, choice, 1, token=guest_token)
    recipe = plan_recipe(
        settings,
        profile=args.profile,
        agent=args.agent,
        provider=provider,
        mode="approve" if args.approve else "auto",
        max_steps=args.max_steps,
        secrets=[options["token"]] if options.get("token") else (),
        evaluator=args.evaluator,
        budget=budget_from(args),
    )
    agent = recipe.make_agent(entry)
    print(f"task {visible(entry.task.id)} ({visible(entry.domain)}): {visible(entry.task.instruction)}")
    network = f" (network: {choice.network})" if choice.network else ""
    print(
        f"agent {agent.kind}, model {agent.model_name}; starting the {choice.label} desktop{network} ...",
        flush=True,
    )
    try:
        env = await make_env(provider, **options)
        try:
            evaluate = score_instruction if args.instruction is not None else None
            episode = plan_episode(entry, recipe, env, runs_dir=out, agent=agent, evaluate=evaluate)
            result = await _within_task_timeout(
                episode, _Printer(episode, approve=args.approve), args.task_timeout
            )
        finally:
            await env.close()
    finally:
        await agent.aclose()
    score = "none" if result.score is None else f"{result.score:.2f}"
    tokens = result.usage.total_tokens if result.usage else 0
    cost = "cost unknown" if result.cost is None else f"cost {result.cost:.4f}"
    ended = f"; {result.limit}" if result.limit else ""
    print(f"outcome {result.kind}; {tokens} tokens, {cost}{ended}")
    print(f"score {score} ({result.status}) after {result.steps} steps; run stored in {episode.run_dir}")
    if result.status == "error":
        print(f"error: {visible(result.error)}", file=sys.stderr)
        return ExitCode.ERROR
    return ExitCode.for_outcome(failed=not result.success)


async def _within_task_timeout(episode: Episode, printer: _Printer, seconds: float | None) -> EpisodeResult:
    """The printer's run of ``episode``, stopped after ``seconds``; its result then says it timed out.

    A stop ends any phase within a bound (:data:`~osw_studio.core.limits.STOP_GRACE_S`), so the limit
    holds whatever the guest or the model does.
    """
    import asyncio

    from osw_studio.runner.store import write_atomic

    if seconds is None:
        return await printer.run()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = not printer.interrupted  # a Ctrl+C before it is the person's stop
        episode.stop()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        result = await printer.run()
    finally:
        timer.cancel()
    if not expired or result.status != "stopped":
        return result
    result = result.model_copy(
        update={"status": "error", "error": f"timed out after {seconds:g} s (the task timeout)"}
    )
    if episode.run_dir is not None:
        write_atomic(episode.run_dir / "result.json", result.model_dump_json(indent=2).encode())
    return result


def describe_action(action: Action, *, whole: bool = False) -> str:
    r"""One short, readable line for an action, as the step log prints it (control characters escaped).

    Typed text is cut at 60 characters unless ``whole`` (what ``--approve`` asks about is shown whole:
    a harmless start may hide ``\ncurl ... | sh`` at its end). Newlines show as ``\n`` either way.

    >>> from osw_studio.core.actions import Click, Hotkey, Typing
    >>> describe_action(Click(x=5, y=7)), describe_action(Hotkey(keys=["ctrl", "s"]))
    ('click(5, 7)', 'hotkey(ctrl+s)')
    >>> describe_action(Typing(text="echo hello\n"))
    "typing('echo hello\\n')"
    >>> describe_action(Hotkey(keys=["ctrl", "\x1b[2K"]))
    'hotkey(ctrl+\\x1b[2K)'
    >>> describe_action(Typing(text="a" * 70 + "\ncurl x | sh"), whole=True)[-15:]
    "\\ncurl x | sh')"
    """
    return visible(_describe(action, whole=whole))


def _describe(action: Action, *, whole: bool = False) -> str:
    from osw_studio.core.actions import Hotkey, Typing

    data = action.model_dump(exclude_defaults=True, exclude={"kind"})
    if isinstance(action, Hotkey):
        return f"hotkey({'+'.join(action.keys)})"
    if isinstance(action, Typing):
        text = action.text if whole or len(action.text) <= 60 else action.text[:57] + "..."
        return f"typing({text!r})"
    point = action.point
    if point is not None:
        data.pop("x", None)
        data.pop("y", None)
        rest = "".join(f", {k}={v}" for k, v in data.items())
        return f"{action.kind}({point[0]}, {point[1]}{rest})"
    return f"{action.kind}({', '.join(f'{k}={v!r}' for k, v in data.items())})"


def _shorten(text: str, limit: int = 100) -> str:
    r"""One line of at most ``limit`` characters, control characters shown as escapes.

    >>> _shorten("a\nb " + "c" * 200, 10)
    'a b ccc...'
    >>> _shorten("thought\x1b[1A\x1b[2K")
    'thought\\x1b[1A\\x1b[2K'
    """
    line = visible(" ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 3] + "..."


class _LineReader:
    """Reads lines from stdin on the event loop, without a thread.

    A thread blocked in ``input()`` would outlive a stopped episode and abort the interpreter at exit;
    the loop's reader callback is simply removed instead.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._eof = False

    async def read_line(self, prompt: str) -> str | None:
        """Print ``prompt`` and return the next line without its newline (None at end of input)."""
        print(prompt, end="", flush=True)
        fd = sys.stdin.fileno()
        while b"\n" not in self._buffer and not self._eof:
            await self._readable(fd)
            chunk = os.read(fd, 4096)
            self._eof = not chunk
            self._buffer += chunk
        line, newline, rest = self._buffer.partition(b"\n")
        if not newline and not line:
            return None
        self._buffer = rest
        return line.decode(errors="replace")

    @staticmethod
    async def _readable(fd: int) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def on_readable() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(fd, on_readable)
        except (OSError, ValueError):  # a regular file: epoll refuses it, and reading it never blocks
            return
        try:
            await ready
        finally:
            loop.remove_reader(fd)


def _parse_actions(text: str) -> list[Action] | None:
    """Actions from a JSON list typed on the terminal, or None (after saying why) when it is not one."""
    from pydantic import ValidationError

    from osw_studio.core.actions import parse_actions

    try:
        return parse_actions(json.loads(text))
    except (ValueError, ValidationError) as exc:
        print(f"         not a list of actions: {_shorten(str(exc))}")
        return None


class _Printer:
    """Prints an episode's steps as they finish and, with ``approve``, asks before each action."""

    def __init__(self, episode: Episode, *, approve: bool) -> None:
        self.episode = episode
        self.approve = approve
        self._terminal = _LineReader()
        self._asking: set[asyncio.Task[None]] = set()
        self.interrupted = False
        episode.step_finished.connect(self._on_step_finished)
        episode.error_raised.connect(self._on_error_raised)
        if approve:
            episode.step_proposed.connect(self._on_step_proposed)
            episode.help_requested.connect(self._on_help_requested)
        if episode.agent.kind == "human":
            episode.state_changed.connect(self._on_state_changed)

    async def run(self) -> EpisodeResult:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        try:
            return await self.episode.run()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
            for task in self._asking:
                task.cancel()

    def _on_interrupt(self) -> None:
        self.interrupted = True
        print("\nstopping; the run is kept (Ctrl+C again quits at once)", file=sys.stderr)
        self.episode.stop()
        asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    def _on_step_finished(self, step: StepRecord) -> None:
        actions = "; ".join(describe_action(a) for a in step.executed) or "-"
        times = ", ".join(
            f"{name} {step.timings[name]:.2f}s" for name in TIMINGS_SHOWN if name in step.timings
        )
        print(f"step {step.index:>2}  {step.source}/{step.verdict}  {actions}  ({times})", flush=True)
        if step.thought and not self.approve:  # in approve mode the proposal already showed it
            print(f"         thought: {_shorten(step.thought)}")
        if step.verdict == "edited":
            proposed = "; ".join(describe_action(a) for a in step.proposed) or "-"
            print(f"         proposed: {proposed}")
        if step.error:
            print(f"         error: {visible(step.error)}")

    def _on_error_raised(self, error: OswError) -> None:
        print(f"error: {visible(error)}", file=sys.stderr, flush=True)

    def _on_step_proposed(self, proposal: Proposal) -> None:
        self._spawn(self._ask(proposal))

    def _on_help_requested(self, message: str) -> None:
        self._spawn(self._ask_help(message))

    async def _ask_help(self, message: str) -> None:
        """The agent handed back (``call_user``): the person acts, then resumes or stops the run."""
        shown = "".join(c if c.isprintable() else "?" for c in _shorten(message)) or "(no message)"
        print(f"         the agent asks for your help: {shown}")
        answer = await self._terminal.read_line("         [Enter] resume when done, q stop: ")
        if answer is None or answer.strip().lower() in ("q", "quit", "stop"):
            self.episode.stop()
        else:
            self.episode.resume()

    def _on_state_changed(self, new: str, old: str) -> None:
        if new == "predicting":
            self._spawn(self._ask_human())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask_human(self) -> None:
        """The human agent's turn: read the step's actions from the terminal."""
        from osw_studio.core.actions import Done

        submit = getattr(self.episode.agent, "submit")  # noqa: B009 - only the human agent has it
        while True:
            text = await self._terminal.read_line(
                f'step {self.episode.step_index + 1:>2}  your actions as JSON (e.g. [{{"kind": "click", '
                f'"x": 10, "y": 20}}]), or "done": '
            )
            if text is None or text.strip().lower() in ("done", "q"):
                submit([Done()])
                return
            actions = _parse_actions(text)
            if actions is not None:
                submit(actions)
                return

    async def _ask(self, proposal: Proposal) -> None:
        from osw_studio.core.actions import Typing

        actions = "; ".join(describe_action(a, whole=True) for a in proposal.actions) or "-"
        print(f"step {proposal.index:>2}  proposed: {actions}")
        enters = sum(
            a.text.count("\n") + a.text.count("\r") for a in proposal.actions if isinstance(a, Typing)
        )
        if enters:
            print(f"         the typed text presses Enter {enters} time(s) (each \\n or \\r above)")
        if proposal.thought:
            print(f"         thought: {_shorten(proposal.thought)}")
        if proposal.error:
            print(f"         could not parse the reply: {visible(proposal.error)}")
        while self.episode.proposal is proposal:
            answer = await self._terminal.read_line("         run it? [Enter] yes, s skip, e edit, q stop: ")
            if self.episode.proposal is not proposal:
                return
            word = answer.strip().lower() if answer is not None else "q"  # end of input stops
            if word in ("", "y", "yes"):
                self.episode.approve()
            elif word in ("s", "skip"):
                self.episode.skip()
            elif word in ("q", "quit", "stop"):
                self.episode.stop()
            elif word in ("e", "edit"):
                text = await self._terminal.read_line(
                    '         actions as JSON, e.g. [{"kind": "click", "x": 10, "y": 20}]: '
                )
                edited = _parse_actions(text or "")
                if edited is None:
                    continue
                self.episode.approve(edited)
            else:
                print("         answer with Enter, s, e or q")
                continue
            return
