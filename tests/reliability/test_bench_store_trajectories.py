"""``bench_store``'s tau-bench row imports trajectories in tau-bench's own format (one JSON array): each copy is a
trajectory of its own, new content under a task id of its own, with the tools beside it, so the row measures
N imports, not one and N - 1 unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.bench_store import INSPECT_LOG, write_inspect_log, write_tau2_results, write_tau_trajectories
from scorer import importers
from scorer.errors import InvalidRecord
from scorer.importers import Converted
from scorer.model import GoldCase, Transcript


def test_the_trajectories_are_tau_bench_s_own_format_each_new(tmp_path: Path) -> None:
    path, size = write_tau_trajectories(tmp_path, 14)
    assert size == path.stat().st_size
    assert path.read_text(encoding="utf-8").startswith("[\n  {")  # indented, as tau-bench writes it
    assert importers.detect(path).NAME == "tau-bench"
    items = list(importers.convert(path, "tau-bench"))
    assert not [item for item in items if isinstance(item, InvalidRecord)]
    records = [item.record for item in items if isinstance(item, Converted)]
    transcripts = [r for r in records if isinstance(r, Transcript)]
    assert len(transcripts) == 14
    assert len({t.id for t in transcripts}) == 14
    assert all(t.tools for t in transcripts)  # airline_tools.json beside the file was found
    assert len({json.dumps([m.model_dump() for m in t.messages]) for t in transcripts}) == 6  # the real ones
    assert [r for r in records if isinstance(r, GoldCase)]


def test_the_tau2_results_are_tau2_bench_s_own_format_each_simulation_new(tmp_path: Path) -> None:
    path, size = write_tau2_results(tmp_path, 7)
    assert size == path.stat().st_size
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["timestamp", "info", "tasks", "simulations"]  # the bulk last, as tau2-bench writes it
    assert importers.detect(path).NAME == "tau2-bench"
    items = list(importers.convert(path, "tau2-bench"))
    assert not [item for item in items if isinstance(item, InvalidRecord)]
    transcripts = [item.record for item in items if isinstance(item, Converted) and isinstance(item.record, Transcript)]
    assert len({t.id for t in transcripts}) == 7


def test_the_inspect_log_is_inspect_s_own_format_each_sample_new(tmp_path: Path) -> None:
    path, size = write_inspect_log(tmp_path, 3)
    assert size == path.stat().st_size
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == list(json.loads(INSPECT_LOG.read_text(encoding="utf-8")))  # inspect's order of members
    assert importers.detect(path).NAME == "inspect-ai"
    items = list(importers.convert(path, "inspect-ai"))
    assert not [item for item in items if isinstance(item, InvalidRecord)]
    transcripts = [item.record for item in items if isinstance(item, Converted)]
    assert sorted(t.id for t in transcripts) == [f"inspect/browser/bench-{i}/epoch-1" for i in range(3)]
