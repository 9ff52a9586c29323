"""``toolgold synthesize``: adversarial candidates from approved gold, into the labeling queue (or a file)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from labeler.cli.options import db_option
from labeler.store import Store, StoreError
from labeler.synthesis import approved_gold, synthesize
from scorer.errors import InvalidRecord
from scorer.formats import iter_json_lines, parse_record
from scorer.model import GoldCase, Split
from scorer.synthesize import (
    ALL_TRANSFORMS,
    JUDGE_TRANSFORMS,
    TRANSFORM_DESCRIPTION,
    TRANSFORMS,
    Proposal,
    ToolPool,
    Transform,
    propose,
)
from scorer.synthesize.saved import dumps_candidate

_TRANSFORM_HELP = "; ".join(f"{name}: {TRANSFORM_DESCRIPTION[name]}" for name in ALL_TRANSFORMS)


def _write(out: Path, proposal: Proposal) -> None:
    """All candidates or none: written beside ``out`` and renamed at the end."""
    tmp = out.with_name(out.name + ".part")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for candidate in proposal.candidates:
            fh.write(dumps_candidate(candidate) + "\n")
    os.replace(tmp, out)


@click.command("synthesize")
@click.option("--transform", "transforms", multiple=True, type=click.Choice(ALL_TRANSFORMS),
              help=f"A transformation to apply (repeat for several) [default: the five deterministic ones; "
                   f"paraphrase and tool_shaped_no_intent are written by the judge's model, need a key and run "
                   f"only when named]. {_TRANSFORM_HELP}.")
@click.option("--judge-model", "judge_model_flag", default=None,
              help="The model that writes paraphrase / tool_shaped_no_intent [default: as for toolgold judge].")
@click.option("-n", "--n", "n", type=click.IntRange(min=1), default=None,
              help="At most this many new candidates, the transformations taking turns [default: every one that "
                   "applies].")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Decides every choice (which value, decoy, extra tools, parents first); the same seed gives "
                   "the same candidates. Never part of a candidate's id: a parent's transformation is proposed "
                   "once, whatever the seed.")
@click.option("--split", type=click.Choice(["regression", "rolling"]), default=None,
              help="The split the candidates go to [default: the parent's].")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the candidates (toolgold.candidate/1) to this file instead of the labeling queue.")
@click.option("--gold", "gold_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="With -o: take the parents from the approved gold cases in this toolgold JSON Lines file instead "
                   "of the store.")
@click.option("--show-skipped", is_flag=True, help="List each transformation that did not apply, and why.")
@click.option("--user", envvar="TOOLGOLD_USER", show_envvar=True, default=None,
              help="Who proposes (a reviewer or admin); needed to write into the labeling queue.")
@db_option
def synthesize_cmd(transforms: tuple[Transform, ...], judge_model_flag: str | None, n: int | None, seed: int,
                   split: Split | None, out: Path | None, gold_file: Path | None, show_skipped: bool,
                   user: str | None, db: str | None) -> None:
    """Propose adversarial cases made from approved gold: near-duplicate tools, missing information, toolkit
    growth, negative branches of ordered tasks, stale context. Each candidate enters the labeling queue as a
    draft (source: synthetic, with the transformation, parent case and seed); it becomes gold only when an
    annotator submits it and review passes. Running again proposes nothing already proposed."""
    chosen = transforms or TRANSFORMS
    if gold_file is not None and out is None:
        raise StoreError("--gold reads the parents from a file and needs -o FILE for the candidates; the labeling "
                         "queue takes its parents from the store's approved gold")
    if out is not None and any(t in JUDGE_TRANSFORMS for t in chosen):
        raise StoreError("paraphrase and tool_shaped_no_intent go into the labeling queue (each is asked of the "
                         "model once, ever); drop -o to run them")
    if out is not None:
        if gold_file is not None:
            with gold_file.open("rb") as fh:  # toolgold JSON Lines may mix transcripts in: only gold counts
                parents = [r for n, v in iter_json_lines(fh, str(gold_file))
                           if isinstance(r := parse_record(v, source=str(gold_file), line=n), GoldCase)]
            if not parents:  # as lint and score say of the same file: no parents is bad input, not 0 candidates
                raise InvalidRecord("no gold cases in this file", source=str(gold_file))
        else:
            parents = list(approved_gold(Store(db)))
        proposal = propose(parents, transforms=chosen, seed=seed, n=n, split=split, pool=ToolPool.of_cases(parents))
        _write(out, proposal)
        summary = f"{len(proposal.candidates)} candidates written to {out}"
    else:
        store = Store(db)
        done = synthesize(store, actor=user or "", transforms=chosen, n=n, seed=seed, split=split,
                          judge_model_flag=judge_model_flag)
        proposal, summary = done.proposal, done.summary
        if done.tags_added:
            summary += f"; tags {', '.join(done.tags_added)} added to the vocabulary as adversarial"
    if proposal.skipped:
        summary += f"; {len(proposal.skipped)} transformations did not apply"
    if show_skipped:
        for skipped in proposal.skipped:
            click.echo(f"skipped {skipped.transform}{skipped.variant}: {skipped.reason}", err=True)
    elif proposal.skipped:
        summary += " (--show-skipped lists them)"
    click.echo(summary, err=True)
