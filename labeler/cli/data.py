"""Data commands: init, import, export, schema."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

import click
from pydantic import ValidationError

from labeler.cli.import_pool import (
    MIN_BYTES,
    WORKERS,
    ImportPool,
    Prepared,
    ReadHere,
    Repeated,
    head_items,
    importing_gc,
    iter_pooled,
    parallel_paths,
    schema_problems,
    usable_cores,
)
from labeler.cli.options import db_option
from labeler.demo import demo_dir
from labeler.files import OutputError, check_writable, describe_os_error, output_file, write_text
from labeler.store.base import StoreError
from labeler.store.staging import ImportItem, PreparedItem, StagedItem

if TYPE_CHECKING:
    from tqdm import tqdm

    from labeler.store import ImportResult, Store
from scorer import importers, strict_json
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error, json_schemas
from scorer.importers import Converted, ImportOptions
from scorer.importers.tools_file import tools_from_json
from scorer.model import GoldCase, Split, ToolSpec


class _NoBar:
    """What stands for the progress bar when stderr is not a terminal: nothing shown, tqdm not imported."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def _progress(*, desc: str, unit: str, total: int | None = None) -> tqdm[NoReturn] | _NoBar:
    """A progress bar on stderr, only when stderr is a terminal (CI logs stay clean; tqdm is imported only
    then: 40 ms of every import's start-up)."""
    if not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(file=sys.stderr, desc=desc, unit=unit, total=total)


def load_tools(path: Path) -> tuple[ToolSpec, ...]:
    """Tool schemas from a JSON file: an array of OpenAI, plain, Anthropic or MCP tool entries, an MCP
    ``tools/list`` result (bare or as its JSON-RPC response), or one MCP tool (see
    ``scorer.importers.tools_file``). Read by the strict reader; a problem is one ``InvalidRecord`` naming
    the file."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidRecord(f"cannot read tool schemas: {exc.strerror}", source=source) from None
    raw = strict_json.loads(data.removeprefix(b"\xef\xbb\xbf"), source=source)
    try:
        tools = tools_from_json(raw)
    except InvalidRecord as err:
        raise err.located(source, None) from None
    except ValidationError as exc:
        raise InvalidRecord(describe_validation_error(exc), source=source) from None
    names = [tool.name for tool in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidRecord(f"two tools are named {', '.join(map(repr, twice))}: tool names must be unique",
                            source=source)
    return tools


def convert_files(paths: list[Path], fmt: str | None, options: ImportOptions,
                  ) -> tuple[list[ImportItem], list[InvalidRecord]]:
    """Convert every file; return the good items and the bad records (with file and line)."""
    items: list[ImportItem] = []
    rejects: list[InvalidRecord] = []
    with _progress(desc="reading", unit=" records") as bar:
        for path in paths:
            seen = 0
            for item in importers.convert(path, fmt, options):
                seen += 1
                if isinstance(item, Converted):
                    items.append(ImportItem(item.record, str(path), item.line))
                else:
                    rejects.append(item)
                bar.update()
            if not seen:
                rejects.append(InvalidRecord("no records in this file (it is empty)", source=str(path)))
    return items, rejects


def iter_converted(paths: list[Path], fmt: str | None, options: ImportOptions, rejects: list[InvalidRecord], *,
                   raise_first: bool, warnings: GoldSchemaWarnings | None = None, pool: ImportPool | None = None,
                   pooled: Mapping[Path, str] | None = None) -> Iterator[ImportItem | PreparedItem | StagedItem]:
    """The good items of every file, one at a time; bad records are raised (``raise_first``) or collected
    into ``rejects``. Nothing is held: a million records take the memory of one. The files in ``pooled``
    (with the form of their chunks: ``parallel_paths``) are converted by ``pool``'s workers, which yield them
    already prepared."""
    with _progress(desc="reading", unit=" records") as bar:
        for path in paths:
            seen = 0
            converted: Iterator[Any] = (
                itertools.chain(head_items(path, pooled[path], options), iter_pooled(pool, path, pooled[path]))
                if pool is not None and pooled is not None and path in pooled
                else importers.convert(path, fmt, options))
            for item in converted:
                seen += 1
                bar.update()
                if isinstance(item, Prepared):
                    if warnings is not None and item.problems is not None:
                        warnings.note(str(path), item.line, str(item.case_id), item.problems)
                    if isinstance(item.item, Repeated):  # (``iter_pooled`` drops them)
                        raise RuntimeError(f"a repeated case reached the store: {item.item.id!r}")
                    yield item.item
                elif isinstance(item, Converted):
                    if warnings is not None and isinstance(item.record, GoldCase):
                        warnings.note(str(path), item.line, item.record.id, schema_problems(item.record))
                    yield ImportItem(item.record, str(path), item.line)
                elif raise_first:
                    raise item
                else:
                    rejects.append(item)
            if not seen:
                empty = InvalidRecord("no records in this file (it is empty)", source=str(path))
                if raise_first:
                    raise empty
                rejects.append(empty)


class GoldSchemaWarnings:
    """Notes, as the records stream past, the imported gold cases whose own values fail their tool schema
    (``toolgold lint`` lists every problem): scoring does not fail an agent for matching them, but the gold
    should be fixed. Keeps the first few, and a count."""

    def __init__(self, shown: int = 5) -> None:
        self.shown = shown
        self.gold = 0
        self.broken = 0
        self.examples: list[tuple[str, str, list[str]]] = []

    def note(self, source: str, line: int | None, case_id: str, problems: list[str]) -> None:
        self.gold += 1
        if problems:
            self.broken += 1
            if len(self.examples) < self.shown:
                self.examples.append((f"{source}:{line}" if line is not None else source, case_id, problems))

    def report(self) -> None:
        for where, case_id, problems in self.examples:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            click.echo(f"{where}: gold case {case_id}: {problems[0]}{more}; an agent matching these "
                       "values is not failed for them, but fix the gold (toolgold lint)", err=True)
        if self.broken:
            click.echo(f"{self.broken} of {self.gold} gold cases fail their own tool schema", err=True)


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--from", "fmt", type=click.Choice([i.NAME for i in importers.IMPORTERS]), default=None,
              help="Input format [default: detected from the file].")
@click.option("--tools", "tools_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Tool schemas (JSON array) for sources that do not carry them.")
@click.option("--split", type=click.Choice(["regression", "rolling"]), default="regression", show_default=True,
              help="Split for the gold cases this import creates.")
@click.option("--skip-invalid", is_flag=True, help="Import the valid records; list the bad ones in a rejects file.")
@click.option("--rejects", "rejects_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where --skip-invalid writes the rejected lines [default: toolgold-rejects.txt].")
@click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
              help="Who imports, as the audit log records it (an active user; attribution, not authentication).")
@db_option
def import_cmd(files: tuple[Path, ...], fmt: str | None, tools_file: Path | None, split: Split,
               skip_invalid: bool, rejects_file: Path | None, user: str | None, db: str | None) -> None:
    """Import transcripts and gold cases from FILES (OpenAI, Anthropic, tau-bench, tau2-bench, BFCL,
    ToolTalk, the seed format, or toolgold JSONL). All or nothing: a bad record aborts the import with
    FILE:LINE and nothing is written, unless --skip-invalid."""
    options = ImportOptions(tools=load_tools(tools_file) if tools_file else None, split=split)
    wanted = rejects_file or Path("toolgold-rejects.txt")
    target = _unused_name(wanted) if skip_invalid else None
    if target is not None:  # before anything is imported: a rejects file that cannot be written loses lines
        check_writable(target)
    paths = list(files)
    pooled = parallel_paths(paths, fmt)
    workers = min(WORKERS, usable_cores())
    big = sum(path.stat().st_size for path in pooled) >= MIN_BYTES
    # Forked first: before the store makes its stage file (the workers must not inherit its lock), and before
    # this process loads SQLAlchemy and the tables for the store (~0.3 s), which the workers never use: they
    # convert records meanwhile (tests/labeler/test_import_early_fork.py).
    with (ImportPool(workers, options) if pooled and big and workers > 1 else contextlib.nullcontext()) as pool:
        if pool is not None:
            first = next(path for path in paths if path in pooled)
            pool.prime(first, pooled[first])
        with importing_gc() as set_aside:
            from labeler.store import Store

            store = Store(db)
            set_aside()  # what loading the store made lives as long as the import: never walked again
            if user is not None and ((known := store.get_user(user)) is None or not known.active):
                raise StoreError(f"--user {user!r} is not an active user (toolgold users list)")
            actor = user or "import"
            if target is None:
                result, rejects = _import_here_if_need_be(store, paths, fmt, options, RejectList(), skip_invalid,
                                                          actor, pool, pooled)
            else:
                with output_file(target, exclusive=True) as fh:
                    # Each reject is on disk as it is found, before the import commits (the store reads the whole
                    # stream before its transaction): a full disk stops the import here, with nothing written.
                    result, rejects = _import_here_if_need_be(store, paths, fmt, options, RejectList(fh),
                                                              skip_invalid, actor, pool, pooled)
                    try:
                        for reject in result.rejects:  # conflicts the store found: known only after the commit
                            rejects.append(reject)
                    except OSError:  # the import has committed: keep those rejects on stderr instead
                        click.echo("".join(f"rejected: {r}\n" for r in result.rejects), err=True, nl=False)
                        raise
    result.rejects = list(rejects)
    click.echo(result.summary)
    if rejects and target is not None:
        moved = f" ({wanted} already exists)" if target != wanted else ""
        click.echo(f"{len(rejects)} rejected records listed in {target}{moved}", err=True)


class RejectList(list[InvalidRecord]):
    """The rejected records, each also written (and synced) to the rejects file the moment it is found."""

    def __init__(self, fh: IO[str] | None = None) -> None:
        super().__init__()
        self.fh = fh

    def restart(self) -> None:
        """Forget every reject, in the file too: the import is run again from its first record."""
        self.clear()
        if self.fh is not None:
            self.fh.seek(0)
            self.fh.truncate()

    def append(self, reject: InvalidRecord) -> None:
        if self.fh is not None:
            self.fh.write(f"{reject}\n")
            self.fh.flush()
            os.fsync(self.fh.fileno())
        super().append(reject)


def _import_here_if_need_be(store: Store, paths: list[Path], fmt: str | None, options: ImportOptions,
                            rejects: RejectList, skip_invalid: bool, actor: str, pool: ImportPool | None,
                            pooled: dict[Path, str]) -> tuple[ImportResult, RejectList]:
    """``_import``; run again with every file converted here when the workers find an array's items were not
    where its indentation said (``ReadHere``: the first run wrote nothing, its stage and bodies are gone)."""
    try:
        return _import(store, paths, fmt, options, rejects, skip_invalid, actor, pool, pooled)
    except ReadHere:
        assert pool is not None  # only a worker finds it
    pool.stop()  # (SQLite's import stopped them already; PostgreSQL's did not)
    rejects.restart()
    return _import(store, paths, fmt, options, rejects, skip_invalid, actor, None, {})


def _import(store: Store, paths: list[Path], fmt: str | None, options: ImportOptions, rejects: RejectList,
            skip_invalid: bool, actor: str, pool: ImportPool | None, pooled: dict[Path, str],
            ) -> tuple[ImportResult, RejectList]:
    schemas_before = store.stats()["tool_schemas"]
    # Streams: the store spools the items before it writes, so a bad record raised here (without
    # --skip-invalid) stops the import before anything is written.
    warnings = GoldSchemaWarnings()
    result = store.import_items(
        iter_converted(paths, fmt, options, rejects, raise_first=not skip_invalid, warnings=warnings,
                       pool=pool, pooled=pooled),
        skip_invalid=skip_invalid, actor=actor, on_stage=pool.use_stage if pool is not None else None,
        on_fail=pool.stop if pool is not None else None)
    # A tool schema arrived, or a stored transcript came with other tools: check the gold.
    if result.transcripts_retooled or store.stats()["tool_schemas"] > schemas_before:
        stale = store.check_schema_drift(actor=actor, **result.drift_scope())  # only what the import changed
        if stale:
            click.echo(f"{len(stale)} gold cases flagged for re-labeling: their tool schemas changed "
                       "(Review page, or toolgold drift)", err=True)
    warnings.report()
    return result, rejects


def _unused_name(path: Path) -> Path:
    """``path``, or ``NAME-2.txt``, ``NAME-3.txt``... beside it: an earlier rejects file is never overwritten."""
    candidate, n = path, 1
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


@click.command("schema")
@click.option("--write", "write_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write one <format>.schema.json per format into this directory.")
def schema_cmd(write_dir: Path | None) -> None:
    """Print (or write) the JSON Schemas of toolgold's formats (and of the score report)."""
    from scorer.render.report_json import report_json_schema
    from scorer.report import REPORT_FORMAT
    from scorer.synthesize.model import CANDIDATE_FORMAT
    from scorer.synthesize.saved import candidate_json_schema

    schemas = {**json_schemas(), REPORT_FORMAT: report_json_schema(), CANDIDATE_FORMAT: candidate_json_schema()}
    if write_dir is None:
        click.echo(json.dumps(schemas, indent=2, sort_keys=True))
        return
    try:
        write_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(describe_os_error(write_dir, exc, verb="cannot create")) from None
    for tag, schema in schemas.items():
        name = tag.replace("toolgold.", "").replace("/", "-v") + ".schema.json"
        write_text(write_dir / name, json.dumps(schema, indent=2, sort_keys=True) + "\n")
        click.echo(str(write_dir / name))


@click.command("init")
@click.option("--demo-if-empty", is_flag=True, help="Import the bundled demo transcripts when the store is empty.")
@db_option
def init_cmd(demo_if_empty: bool, db: str | None) -> None:
    """Create or migrate the database (and seed the demo); re-derive the review queue from the labels."""
    from labeler.store import Store

    store = Store(db)
    click.echo(f"database ready: {store.url} (schema version {store.schema_version()})")
    # Label writes keep the review queue in step as they commit; this re-derives it once for labels written
    # before they did (a database an older toolgold made) or changed outside toolgold.
    click.echo(f"review queue: {store.sync_review_queue()} open items, re-derived from the labels")
    if demo_if_empty and store.count_transcripts() == 0:
        files = sorted(demo_dir().glob("*.jsonl"))
        items, rejects = convert_files(files, None, ImportOptions())
        if rejects:
            raise rejects[0]
        click.echo("demo: " + store.import_items(items, actor="demo").summary)


COMMANDS = [init_cmd, import_cmd, schema_cmd]
