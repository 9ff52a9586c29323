"""Data commands: init, import, export, schema, app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from pydantic import ValidationError
from tqdm import tqdm

from labeler.files import OutputError, check_writable, describe_os_error, output_file, write_text
from labeler.store import ImportItem, Store

if TYPE_CHECKING:
    from labeler.store import ImportResult
from scorer import importers, strict_json
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error, json_schemas
from scorer.importers import Converted, ImportOptions
from scorer.model import ToolSpec

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"

db_option = click.option(
    "--db", "db", envvar="TOOLGOLD_DB", default=None, show_envvar=True,
    help="Database file or SQLAlchemy URL [default: data/toolgold.db].",
)


def _progress(**kwargs: object) -> tqdm:  # type: ignore[type-arg]
    """A progress bar on stderr, hidden when stderr is not a terminal (CI logs stay clean)."""
    return tqdm(file=sys.stderr, disable=not sys.stderr.isatty(), **kwargs)  # type: ignore[call-overload]


def load_tools(path: Path) -> tuple[ToolSpec, ...]:
    """Tool schemas from a JSON file: a list of ``{name, description, parameters}`` or OpenAI
    ``{"type": "function", "function": {...}}`` entries. A problem is one ``InvalidRecord`` naming the file."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidRecord(f"cannot read tool schemas: {exc.strerror}", source=source) from None
    raw = strict_json.loads(data.removeprefix(b"\xef\xbb\xbf"), source=source)
    if not isinstance(raw, list):
        raise InvalidRecord("expected a JSON array of tool schemas", source=source)
    tools = []
    for i, entry in enumerate(raw):
        spec = entry.get("function", entry) if isinstance(entry, dict) else entry
        try:
            tools.append(ToolSpec.model_validate(spec))
        except ValidationError as exc:
            raise InvalidRecord(f"tool {i}: {describe_validation_error(exc)}", source=source) from None
    return tuple(tools)


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
@db_option
def import_cmd(files: tuple[Path, ...], fmt: str | None, tools_file: Path | None, split: str,
               skip_invalid: bool, rejects_file: Path | None, db: str | None) -> None:
    """Import transcripts and gold cases from FILES (OpenAI, Anthropic, tau-bench, tau2-bench, BFCL,
    ToolTalk, the seed format, or toolgold JSONL). All or nothing: a bad record aborts the import with
    FILE:LINE and nothing is written, unless --skip-invalid."""
    options = ImportOptions(tools=load_tools(tools_file) if tools_file else None, split=split)  # type: ignore[arg-type]
    wanted = rejects_file or Path("toolgold-rejects.txt")
    target = _unused_name(wanted) if skip_invalid else None
    if target is not None:  # before anything is imported: a rejects file that cannot be written loses lines
        check_writable(target)
    items, rejects = convert_files(list(files), fmt, options)
    if rejects and not skip_invalid:
        raise rejects[0]
    store = Store(db)
    if target is not None and rejects:
        # The rejects known so far are on disk before the import commits: a full disk stops it here.
        with output_file(target, exclusive=True) as fh:
            fh.write("".join(f"{r}\n" for r in rejects))
            fh.flush()
            os.fsync(fh.fileno())
            result = _import(store, items, skip_invalid)
            fh.write("".join(f"{r}\n" for r in result.rejects))
    else:
        result = _import(store, items, skip_invalid)
        if target is not None and result.rejects:
            try:
                write_text(target, "".join(f"{r}\n" for r in result.rejects), exclusive=True)
            except OutputError:  # the import has committed: keep the rejects on stderr instead
                click.echo("".join(f"rejected: {r}\n" for r in result.rejects), err=True, nl=False)
                raise
    rejects += result.rejects
    result.rejects = rejects
    click.echo(result.summary)
    if rejects and target is not None:
        moved = f" ({wanted} already exists)" if target != wanted else ""
        click.echo(f"{len(rejects)} rejected records listed in {target}{moved}", err=True)


def _import(store: Store, items: list[ImportItem], skip_invalid: bool) -> ImportResult:
    schemas_before = store.stats()["tool_schemas"]
    result = store.import_items(items, skip_invalid=skip_invalid)
    if store.stats()["tool_schemas"] > schemas_before:  # a tool schema changed or arrived: check the gold
        stale = store.check_schema_drift(actor="import")
        if stale:
            click.echo(f"{len(stale)} gold cases flagged for re-labeling: their tool schemas changed "
                       "(Review page, or toolgold drift)", err=True)
    return result


def _unused_name(path: Path) -> Path:
    """``path``, or ``NAME-2.txt``, ``NAME-3.txt``... beside it: an earlier rejects file is never overwritten."""
    candidate, n = path, 1
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


@click.command("export")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file [default: standard output].")
@click.option("--split", type=click.Choice(["regression", "rolling"]), default=None)
@click.option("--status", type=click.Choice(["draft", "submitted", "approved", "rejected"]), default=None)
@click.option("--tag", default=None, help="Only cases carrying this tag.")
@click.option("--version", "version", default=None,
              help="A frozen gold version (e.g. regression-v3, or 'latest' with --split), exactly as frozen.")
@click.option("--hf", "hf_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write a Hugging Face datasets layout (JSONL per split and a dataset card) of the latest "
                   "frozen versions (or --version) into this directory.")
@click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
              help="Who exports a frozen version (a reviewer or admin).")
@db_option
def export_cmd(out: Path | None, split: str | None, status: str | None, tag: str | None, version: str | None,
               hf_dir: Path | None, user: str | None, db: str | None) -> None:
    """Export gold cases as toolgold.gold/1 JSON Lines, ordered by id (the same store gives the same bytes).
    With --version or --hf: a frozen version, byte for byte as frozen."""
    if out is not None:
        check_writable(out)
    store = Store(db)
    if version is not None or hf_dir is not None:
        from labeler.cli.gold import export_frozen

        export_frozen(store, version=version, split=split, out=out, hf_dir=hf_dir, user=user)
        return
    total = store.count_gold(split=split, status=status, tag=tag)
    lines = store.iter_gold_lines(split=split, status=status, tag=tag)
    if out is None:
        for line in lines:
            sys.stdout.write(line + "\n")
        return
    with output_file(out) as fh, _progress(total=total, desc="export", unit=" cases") as bar:
        for line in lines:
            fh.write(line + "\n")
            bar.update()
    click.echo(f"{total} gold cases written to {out}", err=True)


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
    """Create or migrate the database (and seed the demo)."""
    store = Store(db)
    click.echo(f"database ready: {store.url} (schema version {store.schema_version()})")
    if demo_if_empty and store.count_transcripts() == 0:
        files = sorted(DEMO_DIR.glob("*.jsonl"))
        items, rejects = convert_files(files, None, ImportOptions())
        if rejects:
            raise rejects[0]
        click.echo("demo: " + store.import_items(items, actor="demo").summary)


@click.command("app")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Keep 127.0.0.1 unless a proxy with authentication stands in front.")
@click.option("--port", default=8501, show_default=True, type=int)
@db_option
def app_cmd(host: str, port: int, db: str | None) -> None:
    """Start the labeling app (Streamlit)."""
    env = dict(os.environ)
    if db:
        env["TOOLGOLD_DB"] = db
    entry = Path(__file__).resolve().parent.parent / "app" / "main.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(entry), "--server.address", host,
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    raise SystemExit(subprocess.call(cmd, env=env))


COMMANDS = [init_cmd, import_cmd, export_cmd, schema_cmd, app_cmd]
