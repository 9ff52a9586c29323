"""The child process the kill -9 tests kill: it drives the real store or CLI on one database until it is killed.

``python -m tests.reliability.fault_child OP DB SEED [ARGS...]`` prints ``ready`` once its imports are done
and it is about to write, then works (seeded, so a seed always drives the same sequence of actions):

- ``save``: annotators claim transcripts, save drafts, submit (some unsure, some disagreeing), reopen;
- ``trajectory``: annotators save, submit and reopen trajectory labels (the whole transcript's calls, some
  disagreeing, some "no action"), each submit writing or withdrawing the trajectory's gold case;
- ``review``: annotators keep submitting, the reviewer syncs the queue and decides each item (accept, edit
  and accept, reject and requeue, escalate), approves what is approvable and adjudicates judge items;
- ``cli ARGS...``: the toolgold CLI (``import FILE``, ``judge``), in this process.

Every loop stops by itself after ``LIMIT_S`` seconds, so a test that fails to kill it leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time

LIMIT_S = 60.0
ANNOTATORS = ("ann", "bob", "cat")


def _ready() -> None:
    sys.stdout.write("ready\n")
    sys.stdout.flush()


def body(rng: random.Random):  # type: ignore[no-untyped-def]
    from labeler.labels import LabelBody
    from scorer.model import Call

    roll = rng.random()
    if roll < 0.15:
        return LabelBody(decision="clarify", unsure=True, rationale="which order?")
    customer = "C-1042" if roll < 0.7 else "C-1024"  # a third of the labels disagree with the rest
    return LabelBody(decision="same" if customer == "C-1042" else "different",
                     calls=(Call(name="search_orders", arguments={"customer": customer}),),
                     tags=("happy_path",), rationale=f"r{rng.randrange(1000)}")


def label_once(store, rng: random.Random, transcripts: list[str]) -> None:  # type: ignore[no-untyped-def]
    """One annotator's action: claim, save a draft, submit, or reopen a submitted label."""
    from labeler.labels import LabelBody
    from labeler.store import StoreError

    who = rng.choice(ANNOTATORS)
    tid = store.claim_next(who) if rng.random() < 0.3 else None
    tid = tid or rng.choice(transcripts)
    current = store.get_label(tid, 2, who)
    version = current.version if current else 0
    try:
        if current is not None and current.status == "submitted" and rng.random() < 0.3:
            store.save_label(tid, 2, who, LabelBody(**{**current.body.model_dump(), "rationale": "reopened"}),
                             version=version)
        elif rng.random() < 0.3:
            store.save_label(tid, 2, who, body(rng), version=version)
        else:
            store.submit_label(tid, 2, who, body(rng), version=version)
    except StoreError:
        pass  # e.g. the case was decided meanwhile: a refusal is an answer too


def trajectory_once(store, rng: random.Random, transcripts: list[str]) -> None:  # type: ignore[no-untyped-def]
    """One annotator's trajectory action: save a draft, submit, or reopen a submitted trajectory label."""
    from labeler.labels import TrajectoryBody
    from labeler.store import StoreError
    from scorer.model import Call

    who, tid = rng.choice(ANNOTATORS), rng.choice(transcripts)
    current = store.get_trajectory_label(tid, who)
    version = current.version if current else 0
    roll = rng.random()
    if roll < 0.15:
        label = TrajectoryBody(no_action=True, rationale="nothing to do")
    else:
        customer = "C-1042" if roll < 0.7 else "C-1024"  # some disagree with the rest
        label = TrajectoryBody(calls=(Call(name="search_orders", arguments={"customer": customer}),),
                               rationale=f"r{rng.randrange(1000)}")
    try:
        if current is not None and current.status == "submitted" and rng.random() < 0.3:
            store.save_trajectory_label(tid, who, current.body.model_copy(update={"rationale": "reopened"}),
                                        version=version)
        else:
            store.save_trajectory_label(tid, who, label, version=version, submit=rng.random() < 0.6)
    except StoreError:
        pass  # a refusal is an answer too


def review_once(store, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    from labeler.store import REVIEW_KIND, StoreError

    store.sync_review_queue()
    for item in store.review_queue(actor="rita")[:3]:
        roll = rng.random()
        try:
            if item.kind == REVIEW_KIND:
                continue  # judge items are adjudicated below
            if roll < 0.3:
                store.accept_review(item.id, f"label:{_an_annotator(store, item.ref)}", actor="rita")
            elif roll < 0.5:
                case = store.get_gold(item.ref)
                store.edit_and_accept(item.id, case.model_copy(update={"rationale": "edited"}), actor="rita",
                                      comment="the id in the message")
            elif roll < 0.85:
                store.reject_review(item.id, actor="rita", comment="label again")
            else:
                store.escalate_review(item.id, actor="rita", comment="ask the team")
        except StoreError:
            pass
    try:
        approvable = store.approvable_cases()
        if approvable:
            store.approve_cases(approvable[:5], actor="rita")
    except StoreError:
        pass
    for item in store.adjudication_queue(actor="rita")[:1]:
        with contextlib.suppress(StoreError):
            store.adjudicate(item.item_id, rng.choice(["confirm_defect", "accept_alternative", "judge_wrong"]),
                             actor="rita", note="seeded")


def _an_annotator(store, ref: str) -> str:  # type: ignore[no-untyped-def]
    tid, _, turn = ref.partition("#t")
    labels = [r for r in store.labels_for_turn(tid, int(turn)) if r.status == "submitted"]
    return labels[0].annotator if labels else "ann"


def main(argv: list[str]) -> int:
    op, db, seed = argv[0], argv[1], int(argv[2])
    rng = random.Random(seed)
    if op == "cli":
        from labeler.cli import cli

        _ready()
        return cli.main(argv[3:], prog_name="toolgold", standalone_mode=True)  # type: ignore[no-any-return]
    from labeler.store import Store

    store = Store(db)
    transcripts = sorted(t.id for t in store.list_transcripts(limit=1000))
    _ready()
    stop = time.monotonic() + LIMIT_S
    while time.monotonic() < stop:
        if op == "trajectory":
            trajectory_once(store, rng, transcripts)
            continue
        label_once(store, rng, transcripts)
        if op == "review" and rng.random() < 0.4:
            review_once(store, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
