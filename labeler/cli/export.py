"""``toolgold export``: the gold cases as toolgold.gold/1 JSON Lines (or a frozen version, or a datasets layout).

Its own module, light on purpose: exporting loads the store's engine and the one aggregate it reads, not the
importers, the worker pool or the progress bar (unless stderr is a terminal that shows it).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from labeler.cli.options import db_option
from labeler.files import check_writable, durable, output_file
from labeler.store import Store


@contextlib.contextmanager
def _progress(total: int) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal (tqdm is imported only then); otherwise nothing."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(file=sys.stderr, desc="export", unit=" cases", total=total) as bar:
        yield bar


def _write_blocks(fh: IO[str], blocks: Iterator[tuple[int, bytes]], bar: Any) -> None:
    """Write the store's blocks of UTF-8 lines to ``fh``: to the bytes under it when it has them (flushed
    first, so nothing written to it as text is left behind), else decoded (a test's captured output)."""
    raw: IO[bytes] | None = getattr(fh, "buffer", None)
    if raw is not None:
        fh.flush()
    for n, block in blocks:
        if raw is not None:
            raw.write(block)
        else:
            fh.write(block.decode("utf-8"))
        if bar is not None:
            bar.update(n)
    if raw is not None:
        raw.flush()


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
              help="Who exports (a reviewer or admin): needed for a frozen version and for approved regression "
                   "cases, the held-out set; audited.")
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
    # To a file, the export is recorded once every line is on disk, before the file takes its name: a full
    # disk or a lock held past the timeout leaves neither a file nor an audit event of an export not made.
    total = store.authorize_gold_export(split=split, status=status, tag=tag, actor=user,
                                        target=str(out) if out else "stdout", record=out is None)
    if store.read_only:
        click.echo("note: the database is read-only: this export is not in its audit log", err=True)
    blocks = store.iter_gold_blocks(split=split, status=status, tag=tag)
    if out is None:
        _write_blocks(sys.stdout, blocks, None)
        return
    with output_file(out) as fh, _progress(total) as bar:
        _write_blocks(fh, blocks, bar)
        durable(fh)
        store.authorize_gold_export(split=split, status=status, tag=tag, actor=user, target=str(out))
    click.echo(f"{total} gold cases written to {out}", err=True)


COMMANDS = [export_cmd]
