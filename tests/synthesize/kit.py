"""Real gold for the synthesis tests: the bundled demo and, when present, tau2-bench retail from shared/."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from scorer.formats import iter_json_lines, parse_record
from scorer.importers import convert
from scorer.model import GoldCase, RunCall, RunRecord
from tests.conftest import REPO
from tests.importers.helpers import SHARED

DEMO = REPO / "data" / "demo"
# shared/ sits beside a clone (CI) or beside the directory of worktrees (a git worktree checkout).
DATA = next((p for p in (SHARED, REPO.parent.parent / "shared" / "data") if p.is_dir()), SHARED)
TAU2_RETAIL_TASKS = DATA / "tau2-bench" / "domains" / "retail" / "tasks.json"
needs_data = pytest.mark.skipif(not TAU2_RETAIL_TASKS.is_file(), reason=f"the benchmark data is not at {DATA}")


@cache
def demo_gold() -> dict[str, GoldCase]:
    cases: dict[str, GoldCase] = {}
    for path in sorted(DEMO.glob("*.jsonl")):
        for n, value in iter_json_lines(path.read_bytes().splitlines(), str(path)):
            record = parse_record(value, source=str(path), line=n)
            if isinstance(record, GoldCase):
                cases[record.id] = record
    return cases


def demo(case_id: str) -> GoldCase:
    return demo_gold()[case_id]


@cache
def tau2_retail() -> dict[str, GoldCase]:
    return {i.record.id: i.record for i in convert(Path(TAU2_RETAIL_TASKS)) if isinstance(i.record, GoldCase)}


def run_of(case: GoldCase, *calls: tuple[str, dict[str, object]]) -> RunRecord:
    return RunRecord(case_id=case.id, calls=tuple(RunCall(name=n, arguments=a) for n, a in calls))
