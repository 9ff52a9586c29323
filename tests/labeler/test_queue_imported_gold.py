"""Imported gold is a candidate, not a person's label: its transcripts wait in the "unlabeled" queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from labeler.cli.data import convert_files
from labeler.labels import LabelBody
from labeler.store import QueueFilter, Store
from scorer.importers import ImportOptions

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
EMAIL = "tooltalk/SendEmail-easy"


@pytest.fixture
def tooltalk(store: Store) -> Store:
    items, rejects = convert_files([DEMO / "tooltalk.jsonl"], None, ImportOptions())
    assert not rejects
    store.import_items(items)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    return store


def test_transcripts_with_only_imported_gold_are_in_the_unlabeled_queue(tooltalk: Store) -> None:
    queued = tooltalk.queue("ann", QueueFilter(status="unlabeled"))
    assert len(queued) == 10 and EMAIL in [q.transcript_id for q in queued]
    [email] = [q for q in queued if q.transcript_id == EMAIL]
    assert (email.n_turns, email.n_done, email.n_labeled) == (3, 3, 0)  # all gold, none labeled by a person
    assert tooltalk.claim_next("ann") == "tooltalk/AddAlarm-easy"


def test_a_transcript_leaves_the_unlabeled_queue_once_a_person_labeled_every_turn(tooltalk: Store) -> None:
    for index in (2, 4):
        tooltalk.submit_label(EMAIL, index, "ann", LabelBody(decision="clarify"), version=0)
    [email] = tooltalk.queue("ann", QueueFilter(status="unlabeled", search="SendEmail-easy"))
    assert email.n_labeled == 2
    tooltalk.submit_label(EMAIL, 6, "ann", LabelBody(decision="no_call"), version=0)
    assert tooltalk.queue("ann", QueueFilter(status="unlabeled", search="SendEmail-easy")) == []
