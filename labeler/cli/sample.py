"""``toolgold sample``: pick the conversations worth labeling from logs larger than memory."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

from labeler.cli.options import db_option
from labeler.store import Store
from scorer import importers
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record
from scorer.importers import Converted
from scorer.model import Transcript
from scorer.sampling import StratifiedSampler, argument_shapes


def _transcripts(paths: tuple[Path, ...], fmt: str | None) -> Iterator[Transcript]:
    for path in paths:
        for item in importers.convert(path, fmt):
            if isinstance(item, InvalidRecord):
                raise item
            if isinstance(item, Converted) and isinstance(item.record, Transcript):
                yield item.record


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-n", "size", default=100, show_default=True, type=click.IntRange(min=1), help="How many to pick.")
@click.option("--seed", default=0, show_default=True, type=int, help="The same seed and input give the same sample.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the chosen transcripts (toolgold JSON Lines, ready for toolgold import).")
@click.option("--from", "fmt", default=None, help="Input format (detected when omitted).")
@click.option("--favor-failed", "failed_run", default=None, metavar="RUN",
              help="Favour conversations with a case that failed in this saved run.")
@click.option("--favor-ids", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Favour the conversation ids listed in this file, one per line (e.g. what the judge flagged).")
@click.option("--favor-uncovered", is_flag=True,
              help="Favour conversations calling a tool, or a tool with argument names, the gold set lacks.")
@click.option("--weight", default=4.0, show_default=True, type=click.FloatRange(min=1.0),
              help="How much more likely a favoured conversation is, per reason.")
@db_option
def sample_cmd(files: tuple[Path, ...], size: int, seed: int, output: Path, fmt: str | None,
               failed_run: str | None, favor_ids: Path | None, favor_uncovered: bool, weight: float,
               db: str | None) -> None:
    """Stratified (by source and first tool), seeded, streaming sample of the conversations in FILES."""
    favoured: set[str] = set()
    covered_tools: set[str] = set()
    covered_shapes: set[tuple[str, tuple[str, ...]]] = set()
    if failed_run or favor_uncovered:
        store = Store(db)
        if failed_run:
            failing, _ = store.failing_cases(failed_run, limit=1_000_000)
            for failed in failing:  # the case's conversation: from the gold set, else its id's <conversation>#<turn>
                gold = store.get_gold(failed.case_id) if store.gold_case_known(failed.case_id) else None
                favoured.add(gold.conversation_id if gold and gold.conversation_id else failed.case_id.split("#")[0])
        if favor_uncovered:
            for case in store.gold_cases():
                for answer in (case.expected, *case.alternatives):
                    for call in answer.calls:
                        covered_tools.add(call.name)
                        covered_shapes.add((call.name, tuple(sorted(call.arguments))))
    if favor_ids:
        favoured |= {line.strip() for line in favor_ids.read_text(encoding="utf-8").splitlines() if line.strip()}

    def worth(transcript: Transcript) -> float:
        w = weight if transcript.id in favoured else 1.0
        if favor_uncovered:
            shapes = argument_shapes(transcript)
            if any(tool not in covered_tools for tool, _ in shapes) or not shapes <= covered_shapes:
                w *= weight
        return w

    sampler = StratifiedSampler(size, seed, worth)
    sampler.offer_all(_transcripts(files, fmt))
    chosen = sampler.sample()
    # second pass: only the chosen conversations are ever held, however large the input
    wanted = {ordinal for _, ordinal in chosen}
    kept = {n: t for n, t in enumerate(_transcripts(files, fmt), start=1) if n in wanted}
    tmp = output.with_name(output.name + ".part")
    with tmp.open("w", encoding="utf-8") as fh:
        for _, ordinal in chosen:
            fh.write(dumps_record(kept[ordinal]) + "\n")
    tmp.replace(output)
    for (source, tool), n in sampler.strata.items():
        picked = sum(1 for s, _ in chosen if s == (source, tool))
        click.echo(f"  {source or '-'} / {tool}: {picked} of {n} kept", err=True)
    click.echo(f"{len(chosen)} of {sampler.seen} conversations written to {output}", err=True)
    sys.stdout.flush()
