"""``toolgold score GOLD RUNS``: score agent runs against the gold set, render the report, gate CI.

A thin client of ``scorer.engine.score_files``, which reads both files in flat memory and scores on one
or more cores (``--workers``); this module parses the options, renders the report and sets the exit code.

Exit codes: 0 pass; 1 a ``--fail-under`` gate, a per-tool regression against ``--baseline``, or unscored
input (without ``--allow-unscored``); 2 bad input, with ``FILE:LINE``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import click

from labeler.cli.runs import save_options
from labeler.files import check_writable, output_file
from scorer.compare import DEFAULT_MAX_TOOL_DROP, DEFAULT_MIN_TOOL_SUPPORT
from scorer.engine import Outcomes, Scored, baseline_outcomes, score_files, spooled_lines
from scorer.errors import InvalidReport
from scorer.gates import parse_threshold
from scorer.render import FORMATS
from scorer.report import Report

EXIT_GATE_FAILED = 1


def _render(fmt: str, scored: Scored, out: TextIO) -> None:
    import scorer.render as render  # each renderer loads on first use: only the one asked for

    report = scored.report
    if fmt == "json":
        render.write_json(report, out, spooled_lines(scored.spools))
    elif fmt == "junit":
        render.write_junit(report, out, (json.loads(line) for line in spooled_lines(scored.spools)))
    elif fmt == "markdown":
        out.write(render.render_markdown(report))
    elif fmt == "html":
        out.write(render.render_html(report))
    else:
        out.write(render.render_table(report))


def _load_baseline(path: Path) -> tuple[Report, Outcomes]:
    from scorer.render import load_report

    try:
        with path.open(encoding="utf-8") as fh:
            report, cases = load_report(fh, str(path))
            return report, baseline_outcomes(cases)
    except OSError as exc:
        raise InvalidReport(f"{path}: cannot read the baseline report: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InvalidReport(f"{path}: not a toolgold.report/1 report: not valid UTF-8 (byte {exc.start})") from None


@click.command("score")
@click.argument("gold", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("runs", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for the terminal, json (every case), markdown (PR comments), html, junit (CI).")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report here instead of standard output.")
@click.option("--fail-under", "fail_under", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 when METRIC is below VALUE, e.g. selection=0.9 arguments=95%. Repeatable. Metrics: "
                   "pass_rate, selection, macro_f1, micro_f1, arguments, sequencing, exact_sequence, "
                   "no_call_precision, no_call_recall, clarify_asked, pass^K, tool:NAME, tag:NAME.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="An earlier JSON report: show deltas, an exact McNemar test and per-tool regressions.")
@click.option("--max-tool-drop", type=click.FloatRange(0, 1), default=DEFAULT_MAX_TOOL_DROP, show_default=True,
              help="With --baseline: a tool whose pass rate drops by more than this fails the gate.")
@click.option("--min-tool-support", type=click.IntRange(1), default=DEFAULT_MIN_TOOL_SUPPORT, show_default=True,
              help="With --baseline: tools with fewer results than this are not alerted on.")
@click.option("--allow-unscored", is_flag=True,
              help="Do not fail when cases have no run or runs name unknown cases (they are still reported).")
@click.option("--workers", type=click.IntRange(0), default=0, show_default=True,
              help="Processes to score with; 0 picks one per core (up to 4) for large inputs.")
@click.option("--tools", "current_tools", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="The tool schemas the agent ran with (JSON array): gold cases labeled against "
                                 "schemas they no longer fit are stale, and scoring stops unless --allow-stale.")
@click.option("--allow-stale", is_flag=True, help="With --tools: score stale gold cases anyway (listed on stderr).")
@click.option("--judge", "use_judge", is_flag=True,
              help="Ask the LLM judge about semantic arguments and flagged mismatches (cached verdicts cost "
                   "nothing; without an API key the step is skipped and questions stay pending).")
@click.option("--judge-model", default=None,
              help="Judge model [default: $TOOLGOLD_JUDGE_MODEL, the app setting, or a current model].")
@save_options
def score_cmd(gold: Path, runs: Path, fmt: str, out: Path | None, fail_under: tuple[str, ...],
              baseline: Path | None, max_tool_drop: float, min_tool_support: int, allow_unscored: bool,
              workers: int, current_tools: Path | None, allow_stale: bool, use_judge: bool,
              judge_model: str | None, save: bool, **run_meta: str | None) -> None:
    """Score agent RUNS (toolgold.run/1) against GOLD cases (toolgold.gold/1)."""
    if current_tools is not None:
        from labeler.cli.gold import check_stale

        check_stale(gold, current_tools, allow_stale=allow_stale)
    if out is not None:
        check_writable(out)
    thresholds = [parse_threshold(t) for t in fail_under]
    base = _load_baseline(baseline) if baseline else None
    spooled = fmt in ("json", "junit") or save
    spool_dir = Path(tempfile.mkdtemp(prefix="toolgold-score-")) if spooled else None
    judged = None
    if use_judge:  # imported only here: the judge needs the store and the SDK
        from labeler.cli.judge import judge_for_scoring

        judged = judge_for_scoring(gold, runs, judge_model)
    try:
        scored = score_files(gold, runs, workers=workers, spool_dir=spool_dir, baseline=base,
                             thresholds=thresholds, max_tool_drop=max_tool_drop, min_tool_support=min_tool_support,
                             judge=judged.judge if judged else None)
        if judged is not None:
            scored.report = scored.report.model_copy(update={"judge": judged.usage})
        # Saved before the report is printed: a store that refuses the run (locked, read-only) leaves
        # nothing on stdout for a pipeline to take as the result of a saved run.
        if save:  # a run that fails its gates is history too
            from labeler.cli.runs import save_scored, saved_line

            info = save_scored(scored.report, lambda: spooled_lines(scored.spools), gold, runs, run_meta)
            click.echo(saved_line(info), err=True)
        if out is None:
            _render(fmt, scored, sys.stdout)
            sys.stdout.flush()
        else:
            with output_file(out) as fh:
                _render(fmt, scored, fh)
    finally:
        if spool_dir is not None:
            shutil.rmtree(spool_dir, ignore_errors=True)
    problems = _gate_problems(scored.report, allow_unscored)
    if out is not None:
        t = scored.report.totals
        click.echo(f"wrote {out}: {t.passed} pass, {t.failed} fail, {t.needs_review} need review", err=True)
    for problem in problems:
        click.echo(f"gate failed: {problem}", err=True)
    if problems:
        sys.exit(EXIT_GATE_FAILED)


def _gate_problems(report: Report, allow_unscored: bool) -> list[str]:
    problems = [f"{g.metric} is {'unmeasured' if g.value is None else f'{g.value:.4f}'}, below {g.threshold:g}"
                for g in report.gates if not g.passed]
    if report.comparison is not None:
        problems += [f"{r.tool} dropped from {r.baseline.value:.1%} to {r.current.value:.1%}"
                     for r in report.comparison.regressions if r.baseline.value is not None
                     and r.current.value is not None]
    if report.unscored.any and not allow_unscored:
        u = report.unscored
        problems.append(f"unscored input: {u.cases_without_run} case(s) without a run, "
                        f"{u.runs_for_unknown_cases} run(s) for unknown cases (--allow-unscored to accept)")
    return problems


COMMANDS = [score_cmd]
