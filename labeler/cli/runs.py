"""Run history on the command line: ``toolgold score --save`` and ``toolgold runs list/show/diff/delete``.

``--save`` stores the scored report with its metadata and one row per result in the database
(``TOOLGOLD_DB``), where the dashboards read it. The store and the files are only touched when asked:
``toolgold score`` without ``--save`` pays nothing for this module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from labeler.files import check_writable, output_file
from scorer.report import Report

if TYPE_CHECKING:
    from labeler.store import RunDiff, RunInfo, Store

F = TypeVar("F", bound=Callable[..., Any])
DIFF_SHOWN = 20

META_OPTIONS = ("save", "run_id", "label", "model", "prompt_version", "schema_version", "gold_version", "git_commit")


def save_options(fn: F) -> F:
    """The options of ``toolgold score`` that save the run to the history."""
    options = [
        click.option("--save", is_flag=True,
                     help="Save the scored run to the run history (the database in TOOLGOLD_DB) for the dashboards."),
        click.option("--run-id", default=None, help="With --save: the run's id [default: the runs' run_id, or new]."),
        click.option("--label", default=None, help="With --save: a short name for charts, e.g. 'prompt v7'."),
        click.option("--model", default=None, help="With --save: the model under test [default: the runs' model]."),
        click.option("--prompt-version", default=None, help="With --save: the prompt or agent version."),
        click.option("--schema-version", default=None, help="With --save: the tool-schema version."),
        click.option("--gold-version", default=None,
                     help="With --save: name the gold version [default: the frozen version the cases carry, "
                          "else a digest of the gold]. Runs are only compared on the same gold version."),
        click.option("--git-commit", default=None, help="With --save: the commit the run was made from."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def save_scored(report: Report, result_lines: Callable[[], Iterable[str]], gold: Path, runs: Path,
                options: dict[str, Any]) -> RunInfo:
    """Save what ``toolgold score`` scored (``labeler.store.save_scored``, which the app's Run page uses too)."""
    from labeler.store import Store
    from labeler.store import save_scored as save
    from labeler.store.history import RunMeta

    meta = RunMeta(run_id=options.get("run_id"), label=options.get("label"), model=options.get("model"),
                   prompt_version=options.get("prompt_version"), gold_version=options.get("gold_version"),
                   schema_version=options.get("schema_version"), git_commit=options.get("git_commit"),
                   source="cli")
    store = Store()
    try:
        return save(store, report, result_lines, gold, runs, meta)
    finally:
        store.close()


def saved_line(info: RunInfo) -> str:
    return (f"saved run {info.run_id} ({info.results} results, {info.passed} pass) on gold version "
            f"{info.gold_version}")


# --------------------------------------------------------------------------------------------------
# toolgold runs ...
# --------------------------------------------------------------------------------------------------


def _store() -> Store:
    from labeler.store import Store

    return Store()


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _grid(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    from scorer.render.table import grid

    return grid(header, rows)


@click.group("runs")
def runs_cmd() -> None:
    """The run history: runs saved with `toolgold score --save`."""


@runs_cmd.command("list")
@click.option("--gold-version", default=None, help="Only runs on this gold version.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1))
def list_cmd(gold_version: str | None, limit: int) -> None:
    """Saved runs, newest first."""
    store = _store()
    try:
        runs = store.list_runs(gold_version=gold_version, limit=limit)
    finally:
        store.close()
    if not runs:
        click.echo("no saved runs yet: toolgold score GOLD RUNS --save")
        return
    click.echo(_grid(("run", "saved", "label", "model", "prompt", "gold version", "pass rate", "results"),
                     [(r.run_id, r.created_at[:19].replace("T", " "), r.label or "", r.model or "",
                       r.prompt_version or "", r.gold_version, _percent(r.pass_rate), str(r.results))
                      for r in runs]))


@runs_cmd.command("show")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True)
def show_cmd(run_id: str, fmt: str) -> None:
    """A saved run's report (the summary; failing cases are in the dashboard)."""
    from scorer.render import render_markdown, render_table

    store = _store()
    try:
        info = store.get_run(run_id)
        report = store.run_report(run_id)
    finally:
        store.close()
    if fmt == "json":
        click.echo(report.model_dump_json(indent=2, exclude={"cases"}))
        return
    meta = [f"run {info.run_id}", f"saved {info.created_at}", f"gold version {info.gold_version}"]
    meta += [f"{name} {value}" for name, value in (("label", info.label), ("model", info.model),
                                                  ("prompt", info.prompt_version), ("commit", info.git_commit))
             if value]
    click.echo(("_" if fmt == "markdown" else "") + " · ".join(meta) + ("_\n" if fmt == "markdown" else "\n"))
    click.echo(render_markdown(report) if fmt == "markdown" else render_table(report), nl=False)


def diff_lines(diff: RunDiff, shown: int = DIFF_SHOWN) -> list[str]:
    m = diff.mcnemar
    verdict = "significant at 0.05" if m.p_value < 0.05 else "could be noise"
    out = [f"{diff.before.name} → {diff.after.name} (gold version {diff.after.gold_version}): "
           f"{m.pairs} paired results",
           f"fixed {m.only_current}, broken {m.only_baseline}, still failing {m.both_fail}, both pass {m.both_pass}",
           f"McNemar exact p = {m.p_value:.4g} ({verdict})"]
    if diff.only_before or diff.only_after:
        out.append(f"unpaired: {diff.only_before} result(s) only in {diff.before.name}, "
                   f"{diff.only_after} only in {diff.after.name}")
    for title, items in (("broken", diff.broken), ("fixed", diff.fixed), ("still failing", diff.still_failing)):
        if items:
            out.append(f"{title}:")
            for d in items[:shown]:
                trial = f" (trial {d.trial})" if d.trial else ""
                out.append(f"  {d.case_id}{trial}: {', '.join(d.before_codes) or d.before} → "
                           f"{', '.join(d.after_codes) or d.after}")
            if len(items) > shown:
                out.append(f"  (+{len(items) - shown} more)")
    return out


@runs_cmd.command("diff")
@click.argument("before")
@click.argument("after")
def diff_cmd(before: str, after: str) -> None:
    """Compare two saved runs on the same gold version: fixed, broken, still failing, McNemar."""
    store = _store()
    try:
        diff = store.diff_runs(before, after)
    finally:
        store.close()
    click.echo("\n".join(diff_lines(diff)))


@runs_cmd.command("baseline")
@click.argument("run_id", required=False)
@click.option("--gold", "gold", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Take the latest saved run on this gold file's version (the one --baseline may be compared with).")
@click.option("--gold-version", default=None, help="Take the latest saved run on this gold version.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the JSON report.")
@click.option("--allow-missing", is_flag=True, help="No saved run to take: write nothing and exit 0.")
def baseline_cmd(run_id: str | None, gold: Path | None, gold_version: str | None, out: Path,
                 allow_missing: bool) -> None:
    """Write a saved run as a JSON report for `toolgold score --baseline`: RUN_ID, or the latest run on a gold
    version (runs are only compared on the same gold version)."""
    from scorer.render import write_json

    check_writable(out)
    if gold is not None and gold_version is None:
        from labeler.store import gold_file_fingerprint

        gold_version = gold_file_fingerprint(gold).version
    store = _store()
    try:
        if run_id is None:
            found = store.list_runs(gold_version=gold_version, limit=1)
            if not found:
                where = f" on gold version {gold_version}" if gold_version else ""
                if allow_missing:
                    click.echo(f"no saved run{where}: no baseline written", err=True)
                    return
                from labeler.store import RunNotFound

                raise RunNotFound(f"no saved run{where} (toolgold score ... --save saves one)")
            run_id = found[0].run_id
        info = store.get_run(run_id)
        if gold_version is not None and info.gold_version != gold_version:
            from labeler.store import GoldVersionMismatch

            raise GoldVersionMismatch([(run_id, info.gold_version), (str(gold or "--gold-version"), gold_version)])
        report = store.run_report(run_id)
        with output_file(out) as fh:
            write_json(report, fh, store.result_lines(run_id))
    finally:
        store.close()
    click.echo(f"wrote {out}: run {info.run_id} ({info.name}, saved {info.created_at}) on gold version "
               f"{info.gold_version}", err=True)


@runs_cmd.command("delete")
@click.argument("run_id")
@click.option("--yes", is_flag=True, help="Do not ask.")
@click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
              help="Who deletes (a reviewer or admin); the store checks the role and audits it.")
def delete_cmd(run_id: str, yes: bool, user: str | None) -> None:
    """Remove a saved run from the history (reviewers and admins; audited)."""
    from labeler.store import StoreError

    if not user:
        raise StoreError("deleting a saved run needs --user NAME (a reviewer or admin), or TOOLGOLD_USER")
    store = _store()
    try:
        store.get_run(run_id)
        if not yes and not click.confirm(f"delete run {run_id}?", err=True):
            sys.exit(1)
        store.delete_run(run_id, actor=user)
    finally:
        store.close()
    click.echo(f"deleted run {run_id}")


COMMANDS = [runs_cmd]
