"""``toolgold judge``: ask pending judge questions; ``toolgold judge stats``: judge-versus-reviewer agreement.

Also the judge step of ``toolgold score --judge`` (``judge_for_scoring``): it reads the gold and run files,
asks what the verdict cache lacks, and hands the scorer a judge that only reads the cache. Without an API
key the step is skipped with one clear line, the questions stay pending, and the exit code is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from scorer.judging import Judge, JudgeUsage
from scorer.model import GoldCase, RunRecord
from scorer.render.common import judge_lines

if TYPE_CHECKING:
    from labeler.judge.anthropic_judge import AnthropicJudge


def case_runs(gold: Path, runs: Path) -> Iterator[tuple[GoldCase, list[RunRecord]]]:
    """Each gold case with its runs (cases without a run are left out; scoring counts them)."""
    from scorer.engine import RunIndex
    from scorer.formats import read_records

    index = RunIndex(runs)
    fd = os.open(runs, os.O_RDONLY)
    try:
        with gold.open("rb") as fh:
            for _, case in read_records(fh, str(gold), expect=GoldCase):
                _, starts, stops = index.slices([case.id])
                found = [index.read(fd, p) for p in range(starts[0], stops[0])]
                found = [r for r in found if r.case_id == case.id]
                if found:
                    yield case, found
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Judged:
    judge: Judge
    usage: JudgeUsage


def _asker(model: str, concurrency: int) -> tuple[AnthropicJudge | None, str | None]:
    """The judge to ask with, or None and why not (no key)."""
    from labeler.judge.anthropic_judge import AnthropicJudge
    from labeler.judge.config import open_gateway
    from labeler.llm.anthropic_gateway import MissingAPIKey

    try:
        return AnthropicJudge(open_gateway(), model, concurrency=concurrency), None
    except MissingAPIKey:
        return None, "no Anthropic API key (set ANTHROPIC_API_KEY); questions stay pending for `toolgold judge`"


def _echo_usage(usage: JudgeUsage) -> None:
    for line in judge_lines(usage):
        click.echo(f"judge: {line}", err=True)


def judge_for_scoring(gold: Path, runs: Path, model_flag: str | None, *, concurrency: int = 4) -> Judged:
    """The judge step before ``toolgold score`` scores: returns the cache judge and what the step did."""
    from labeler.judge.config import judge_model
    from labeler.judge.step import JudgeStep
    from labeler.store import Store

    store = Store()
    try:
        model, _ = judge_model(model_flag, store.judge_model_setting())
        asker, skipped = _asker(model, concurrency)
        if skipped:
            click.echo(f"judge: skipped: {skipped}", err=True)
        step = JudgeStep(store, model, asker, skipped=skipped)
        usage = step.run(lambda: case_runs(gold, runs))
        _echo_usage(usage)
        return Judged(step.scoring_judge(), usage)
    finally:
        store.close()


@click.group("judge", invoke_without_command=True)
@click.option("--model", default=None,
              help="Only questions posed to this model [default: every pending question, each to its own model].")
@click.option("--limit", type=click.IntRange(1), default=None, help="Ask at most this many (oldest first).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True)
@click.pass_context
def judge_cmd(ctx: click.Context, model: str | None, limit: int | None, concurrency: int) -> None:
    """Ask the judge's pending questions (from `toolgold score --judge` runs without a key, or that kept
    failing), store the verdicts and queue what needs a reviewer."""
    if ctx.invoked_subcommand is not None:
        return
    from labeler.judge.anthropic_judge import AnthropicJudge
    from labeler.judge.config import judge_model, open_gateway
    from labeler.judge.step import JudgeStep
    from labeler.store import Store

    store = Store()
    try:
        pending = store.pending_judge_questions(model=model, limit=limit)
        if not pending:
            click.echo("judge: nothing pending" + (f" for {model}" if model else ""))
            return
        default, _ = judge_model(None, store.judge_model_setting())
        asker = AnthropicJudge(open_gateway(), model or default, concurrency=concurrency)  # MissingAPIKey: exit 2
        click.echo(f"judge: asking {len(pending)} pending question(s)…", err=True)
        usage = JudgeStep(store, model or default, asker).resume(model=model, limit=limit)
        _echo_usage(usage)
        left = sum(store.judge_status().pending.values())
        click.echo(f"judge: {usage.answered} answered, {usage.pending} still pending here, {left} pending in all")
        if usage.pending:
            sys.exit(1)
    finally:
        store.close()


@judge_cmd.command("stats")
@click.option("--period", type=click.Choice(["week", "month"]), default="month", show_default=True)
def stats_cmd(period: Literal["week", "month"]) -> None:
    """Judge-versus-reviewer agreement (accuracy, Cohen's kappa) per question type and prompt version."""
    from labeler.judge.calibration import calibration, calibration_lines
    from labeler.store import Store

    store = Store()
    try:
        status = store.judge_status()
        adjudications = store.judge_adjudications()
    finally:
        store.close()
    pending = sum(status.pending.values())
    answered = sum(status.answered.values())
    click.echo(f"verdicts: {answered} answered, {pending} pending; {status.input_tokens:,} input + "
               f"{status.output_tokens:,} output tokens, ≈ ${status.cost_usd:.4f} (estimate)")
    for line in calibration_lines(calibration(adjudications, period=period)):
        click.echo(line)


COMMANDS = [judge_cmd]
