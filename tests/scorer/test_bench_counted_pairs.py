"""``bench_bfcl --instructions`` counts toolgold's side on pairs it unpickles; pickle gives a model's ``__dict__``
new strings for its field names, where validation leaves the interned names the code reads fields by, so
every field read compared bytes and the count came out ~2.6k instructions per perturbed item too high."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks.bench_bfcl import load_counted_pairs
from scorer.model import GoldCase, RunRecord

CASE = {"format": "toolgold.gold/1", "id": "c1", "split": "regression",
        "tools": [{"name": "get_order", "parameters": {"type": "object",
                                                       "properties": {"order_id": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "Where is O-1?"}],
        "expected": {"behavior": "call", "calls": [{"name": "get_order", "arguments": {"order_id": "O-1"}}]}}
RUN = {"format": "toolgold.run/1", "case_id": "c1", "calls": [{"name": "get_order", "arguments": {"order_id": "O-2"}}]}


def _models(value: Any) -> list[BaseModel]:
    found, todo = [], [value]
    while todo:
        value = todo.pop()
        if isinstance(value, BaseModel):
            found.append(value)
            todo += value.__dict__.values()
        elif isinstance(value, (list, tuple)):
            todo += value
        elif isinstance(value, dict):
            todo += value.values()
    return found


def _uninterned(pairs: Any) -> list[str]:
    return [f"{type(m).__name__}.{name}" for m in _models(pairs) for name in m.__dict__ if name is not sys.intern(name)]


def test_counted_pairs_carry_the_field_names_validation_leaves(tmp_path: Path) -> None:
    pairs = [(GoldCase.model_validate(CASE), RunRecord.model_validate(RUN))]
    assert len(_models(pairs)) >= 6 and not _uninterned(pairs)  # what the timed side scores
    path = tmp_path / "pairs.pickle"
    path.write_bytes(pickle.dumps(pairs))
    assert _uninterned(pickle.loads(path.read_bytes()))  # the artefact: plain unpickling
    loaded = load_counted_pairs(str(path))
    assert not _uninterned(loaded)
    assert loaded == pairs
