"""Gold-set lifecycle commands: versions, freeze, diff, drift, lint, and exporting frozen versions.

Who acts is ``--user`` (or ``TOOLGOLD_USER``): the store checks that user's role, as the app does, so an
annotator cannot freeze or export the held-out regression split from the command line either.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click

from labeler.cli.data import load_tools
from labeler.cli.options import db_option
from labeler.files import OutputError, describe_os_error, durable, output_file, write_text
from labeler.hf_export import WrittenSplit, dataset_card, write_manifest, write_split
from labeler.store import SPLITS, GoldVersion, Store, StoreError
from scorer.drift import StaleGold, stale_cases
from scorer.errors import InvalidRecord
from scorer.formats import read_records
from scorer.hygiene import lint
from scorer.model import GoldCase

EXIT_FOUND = 1

user_option = click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
                           help="Who acts (a reviewer or admin); the store checks the role.")


def _need_user(user: str | None, what: str) -> str:
    if not user:
        raise StoreError(f"{what} needs --user NAME (a reviewer or admin), or TOOLGOLD_USER")
    return user


def _started(lines: Iterator[str]) -> Iterator[str]:
    """``lines`` with its first item already read, so whatever the generator checks first (the actor's
    role) fails now, before a caller creates folders or files."""
    first = next(lines, None)
    return lines if first is None else itertools.chain([first], lines)


def resolve_version(store: Store, version: str, split: str | None) -> GoldVersion:
    """``version`` by id, or the newest of ``split`` for ``latest``; a given split must be the version's."""
    if version == "latest":
        if split is None:
            raise StoreError("--version latest needs --split (regression or rolling)")
        found = store.latest_version(split)
        if found is None:
            raise StoreError(f"the {split} split has no frozen version yet (toolgold freeze {split})")
        return found
    found = store.get_version(version)
    if split is not None and found.split != split:
        raise StoreError(f"{found.id} is a version of the {found.split} split, not {split}")
    return found


def export_frozen(store: Store, *, version: str | None, split: str | None, out: Path | None,
                  hf_dir: Path | None, user: str | None) -> None:
    """``toolgold export --version`` / ``--hf``: a frozen version exactly as frozen, or a datasets layout."""
    actor = _need_user(user, "exporting a frozen version")
    if hf_dir is not None:
        if version is not None:
            chosen = [resolve_version(store, version, split)]
        else:
            chosen = [v for s in ([split] if split else SPLITS) if (v := store.latest_version(s)) is not None]
            if not chosen:
                raise StoreError("nothing is frozen yet (toolgold freeze regression)")
        # Started before anything is written: the first line is where the store checks the actor's role.
        streams = [_started(store.iter_version_lines(v.id, actor=actor)) for v in chosen]
        written = _export_hf(store, hf_dir, chosen, streams, actor=actor)
        for w in written:
            click.echo(f"{w.version.id}: {w.n_cases} cases in {hf_dir / 'data' / (w.version.split + '.jsonl')} "
                       f"(sha256 {w.sha256})", err=True)
        return
    assert version is not None
    chosen_version = resolve_version(store, version, split)
    lines = _started(store.iter_version_lines(chosen_version.id, actor=actor))
    if out is None:
        # Spooled, recorded, then printed: a lock held past the timeout (the audit cannot be written) or a
        # failure while reading prints nothing, instead of the start of an export the store never recorded.
        with tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n") as spool:
            try:
                for line in lines:
                    spool.write(line + "\n")
                spool.flush()
            except OSError as exc:
                raise OutputError(describe_os_error(Path(tempfile.gettempdir()), exc,
                                                    verb="cannot buffer the export in")) from None
            store.note_export(chosen_version.id, actor=actor, target="stdout")
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout)
    else:
        with output_file(out) as fh:
            for line in lines:  # the content hash is checked after the last line: a mismatch leaves no file
                fh.write(line + "\n")
            # Audited once every line is on disk, before the file takes its name: a full disk leaves no
            # audit event of an export not made, and an export the store cannot record (a lock held past
            # the timeout) leaves no file, as its error line says.
            durable(fh)
            store.note_export(chosen_version.id, actor=actor, target=str(out))
    click.echo(f"{chosen_version.id}: {chosen_version.n_cases} cases (sha256 {chosen_version.content_hash})",
               err=True)


def _export_hf(store: Store, hf_dir: Path, chosen: list[GoldVersion], streams: list[Iterator[str]], *,
               actor: str) -> list[WrittenSplit]:
    """Write the datasets layout, then record the export: every file is renamed into place and fsync'd (its
    folder too) before the audit event is written, in one transaction for all versions, so a crash in between
    leaves no claim of an export that did not happen. When anything fails, the store could not record it
    included (a lock held past the timeout), the files this export put in place are removed again: an export
    is either written and recorded, or neither."""
    folders = [f for f in (hf_dir / "toolgold", hf_dir / "data", hf_dir) if not f.exists()]  # this export's
    placed: list[Path] = []
    try:
        written = []
        for v, lines in zip(chosen, streams, strict=True):
            placed += [hf_dir / "toolgold" / f"{v.split}.jsonl", hf_dir / "data" / f"{v.split}.jsonl"]
            written.append(write_split(hf_dir, v, lines))
        placed.append(hf_dir / "README.md")
        write_text(hf_dir / "README.md", dataset_card(written))
        placed.append(hf_dir / "toolgold" / "manifest.json")
        write_manifest(hf_dir, written)
        store.note_export([w.version.id for w in written], actor=actor, target=str(hf_dir))
    except BaseException:
        for path in placed:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        for folder in folders:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
        raise
    return written


def check_stale(gold: Path, tools_file: Path, *, allow_stale: bool) -> None:
    """``toolgold score --tools``: refuse gold that no longer fits the tools the agent ran with (raises
    ``StaleGold``), or with ``allow_stale`` list it on stderr and go on."""
    tools = load_tools(tools_file)
    with gold.open("rb") as fh:
        stale = [s for s in stale_cases((c for _, c in read_records(fh, str(gold), expect=GoldCase)), tools,
                                        added_tools=False) if s.blocking]
    if not stale:
        return
    if not allow_stale:
        raise StaleGold(stale)
    click.echo(f"warning: scoring {len(stale)} stale gold cases (their tools changed since they were labeled):",
               err=True)
    for s in stale:
        click.echo(f"  stale {s.case_id}: {s.summary}", err=True)


@click.command("versions")
@click.option("--split", type=click.Choice(SPLITS), default=None)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per version.")
@db_option
def versions_cmd(split: str | None, as_json: bool, db: str | None) -> None:
    """List the frozen gold versions, newest first."""
    for v in Store(db).list_versions(split):
        if as_json:
            click.echo(json.dumps({"id": v.id, "split": v.split, "parent": v.parent, "n_cases": v.n_cases,
                                   "content_hash": v.content_hash, "created_by": v.created_by,
                                   "created_at": v.created_at, "note": v.note,
                                   "provenance": dict(v.provenance)}, sort_keys=True))
        else:
            click.echo(f"{v.id}\t{v.n_cases} cases\t{v.content_hash[:12]}\t{v.created_at}\t{v.created_by}"
                       + (f"\t{v.note}" if v.note else ""))


@click.command("freeze")
@click.argument("split", type=click.Choice(SPLITS))
@click.option("--note", default="", help="Why this version (shown in the version list and the audit log).")
@user_option
@db_option
def freeze_cmd(split: str, note: str, user: str | None, db: str | None) -> None:
    """Freeze the approved gold cases of SPLIT as a new immutable version."""
    version = Store(db).freeze(split, actor=_need_user(user, "freezing"), note=note)
    click.echo(f"{version.id}: {version.n_cases} cases, sha256 {version.content_hash}")


@click.command("diff")
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@db_option
def diff_cmd(a: str, b: str, as_json: bool, db: str | None) -> None:
    """Cases added, removed and changed from version A to version B."""
    diff = Store(db).diff_versions(a, b)
    if as_json:
        click.echo(json.dumps({"a": a, "b": b, "added": list(diff.added), "removed": list(diff.removed),
                               "changed": list(diff.changed)}, indent=2))
        return
    click.echo(f"{a} → {b}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed")
    for sign, ids in (("+", diff.added), ("-", diff.removed), ("~", diff.changed)):
        for case_id in ids:
            click.echo(f"{sign} {case_id}")


@click.command("drift")
@click.option("--tools", "tools_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="One declared toolset (JSON array) to check every case against; without it, each case is "
                   "checked against the tools its own transcript offers now.")
@click.option("--source", default=None, help="Only gold cases from this source.")
@click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
              help="Who checks, as the audit log records it (an active user; attribution, not authentication).")
@db_option
def drift_cmd(tools_file: Path | None, source: str | None, user: str | None, db: str | None) -> None:
    """Flag gold cases whose tool schemas changed into the re-labeling queue. Exit 1 when a case no longer
    fits (a removed tool or parameter, a rename, a new required field, a changed type)."""
    tools = load_tools(tools_file) if tools_file else None
    store = Store(db)
    if user is not None and ((known := store.get_user(user)) is None or not known.active):
        raise StoreError(f"--user {user!r} is not an active user (toolgold users list)")
    stale = store.check_schema_drift(tools=tools, source=source, actor=user or "drift")
    for case in stale:
        click.echo(f"{case.case_id}: {case.summary}")
    blocking = sum(s.blocking for s in stale)
    click.echo(f"{len(stale)} gold cases flagged for re-labeling ({blocking} no longer fit the tools)", err=True)
    if blocking:
        sys.exit(EXIT_FOUND)


@click.command("lint")
@click.argument("gold", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem.")
def lint_cmd(gold: Path, as_json: bool) -> None:
    """Find suspect gold in GOLD (toolgold.gold/1): conflicting duplicates, calls that fail their own schema,
    required arguments without a value, expected values that appear nowhere in the context. Exit 1 when
    there are problems, 2 when GOLD cannot be read or holds no gold cases."""
    read = [0]

    def cases() -> Iterator[GoldCase]:  # read as linted, not held: a file of any size lints in flat memory
        for _, case in read_records(fh, str(gold), expect=GoldCase):
            read[0] += 1
            yield case

    with gold.open("rb") as fh:
        problems = lint(cases())
    if not read[0]:  # as `score` says of the same file: nothing to check is not a clean gold set
        raise InvalidRecord("no gold cases in this file (it is empty)", source=str(gold))
    for p in problems:
        if as_json:
            click.echo(json.dumps(p.model_dump(mode="json"), sort_keys=True))
        else:
            click.echo(f"{gold}: {p.case_id}: {p.code}: {p.message}")
    click.echo(f"{len(problems)} problems in {read[0]} gold cases", err=True)
    if problems:
        sys.exit(EXIT_FOUND)


COMMANDS = [versions_cmd, freeze_cmd, diff_cmd, drift_cmd, lint_cmd]
