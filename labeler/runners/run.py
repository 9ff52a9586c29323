"""Produce run records from a gold set: every turn case × trial, bounded concurrency, resumable.

Each finished record is appended to the output file and flushed at once, so an interrupted run loses at
most the calls in flight. Resuming reads the file, drops a torn last line, and only asks for the
``(case_id, trial)`` pairs not yet there: nothing lost, nothing counted twice. A case whose agent keeps
failing is reported and left out of the file, so the next resume tries it again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labeler.files import OutputError, describe_os_error
from labeler.llm.anthropic_gateway import LLMUnavailable, Usage
from labeler.runners.agents import AgentError, AgentFn, AgentTurn, coerce_output
from scorer import strict_json
from scorer.errors import InvalidRecord, ToolgoldError
from scorer.formats import dumps_record, parse_json_text, parse_record
from scorer.model import GoldCase, RunRecord


@dataclass
class RunSummary:
    run_id: str
    written: int = 0
    already_done: int = 0
    skipped_trajectories: int = 0
    failures: list[tuple[str, int, str]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def line(self) -> str:
        parts = [f"run {self.run_id}: {self.written} records written"]
        if self.already_done:
            parts.append(f"{self.already_done} already done (resumed)")
        if self.skipped_trajectories:
            parts.append(f"{self.skipped_trajectories} trajectory cases skipped (runs replay turn cases)")
        if self.usage.input_tokens or self.usage.output_tokens:
            parts.append(f"{self.usage.input_tokens} input / {self.usage.output_tokens} output tokens")
        if self.failures:
            parts.append(f"{len(self.failures)} failed — run the same command again to resume")
        return ", ".join(parts)


def read_finished(out: Path) -> tuple[set[tuple[str, int]], str | None]:
    """The ``(case_id, trial)`` pairs already in ``out`` and the run id they carry.

    A last line without its newline is what a kill mid-write leaves: it is cut off (never parsed as data).
    """
    if not out.exists():
        return set(), None
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with out.open("r+b") as fh:
            fh.truncate(keep)
        data = data[:keep]
    done: set[tuple[str, int]] = set()
    run_id = None
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = parse_record(parse_json_text(line, source=str(out), line=number), expect=RunRecord,
                              source=str(out), line=number)
        done.add((record.case_id, record.trial))
        run_id = run_id or record.run_id
    return done, run_id


def new_run_id() -> str:
    return datetime.now(UTC).strftime("run-%Y%m%dT%H%M%SZ")


def run_cases(
    cases: Iterable[GoldCase],
    agent: AgentFn,
    out: Path,
    *,
    trials: int = 1,
    concurrency: int = 4,
    model: str | None = None,
    run_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> RunSummary:
    if trials < 1:
        raise ToolgoldError("--trials must be at least 1")
    done, previous_run = read_finished(out)
    summary = RunSummary(run_id=run_id or previous_run or new_run_id())
    todo: list[tuple[GoldCase, int]] = []
    seen_ids: set[str] = set()
    for case in cases:
        if case.id in seen_ids:
            raise InvalidRecord(f"gold case id {case.id!r} appears twice")
        seen_ids.add(case.id)
        if case.kind != "turn":
            summary.skipped_trajectories += 1
            continue
        for trial in range(trials):
            if (case.id, trial) in done:
                summary.already_done += 1
            else:
                todo.append((case, trial))
    lock = threading.Lock()

    def one(case: GoldCase, trial: int) -> RunRecord:
        try:
            turn = coerce_output(agent(case.messages, case.tools))
            record = _record(case, trial, turn, summary.run_id, model, metadata)
        except (LLMUnavailable, AgentError):
            raise
        except Exception as exc:  # the agent under test is someone's code: one case fails, the run goes on
            raise AgentError(f"the agent raised {type(exc).__name__}: {_one_line(str(exc))}") from None
        with lock:
            summary.usage = summary.usage + turn.usage
        return record

    try:  # a full disk or a vanished folder: one line; the records written so far stay for the resume
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", encoding="utf-8", newline="\n") as fh, ThreadPoolExecutor(max_workers=concurrency) as pool:
            pending: dict[Future[RunRecord], tuple[str, int]] = {}
            queue = iter(todo)

            def refill() -> None:
                while len(pending) < concurrency * 2:
                    try:
                        case, trial = next(queue)
                    except StopIteration:
                        return
                    pending[pool.submit(one, case, trial)] = (case.id, trial)

            refill()
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        case_id, trial = pending.pop(future)
                        try:
                            record = future.result()
                        except (LLMUnavailable, AgentError) as exc:
                            summary.failures.append((case_id, trial, str(exc)))
                        else:
                            fh.write(dumps_record(record) + "\n")
                            fh.flush()
                            summary.written += 1
                        if on_progress:
                            on_progress(1)
                    refill()
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    except OSError as exc:
        raise OutputError(describe_os_error(out, exc)) from None
    return summary


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _record(case: GoldCase, trial: int, turn: AgentTurn, run_id: str, model: str | None,
            metadata: dict[str, Any] | None) -> RunRecord:
    for call in turn.calls:  # what an agent hands back must be writable as JSON and read back the same
        try:
            strict_json.check(call.arguments)
        except InvalidRecord as exc:
            raise AgentError(f"the agent's arguments for {call.name!r}: {exc.message}") from None
    if turn.text is not None:
        try:
            strict_json.check(turn.text)
        except InvalidRecord as exc:
            raise AgentError(f"the agent's text: {exc.message}") from None
    meta = dict(metadata or {})
    if turn.usage.input_tokens or turn.usage.output_tokens:
        meta["usage"] = {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens}
    return RunRecord(case_id=case.id, calls=turn.calls, text=turn.text, run_id=run_id,
                     model=turn.model or model, trial=trial, metadata=json.loads(json.dumps(meta)))
