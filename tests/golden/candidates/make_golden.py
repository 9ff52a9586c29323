"""Writes valid/candidate-v1.jsonl from the demo gold (run by hand when the format changes on purpose):
    .venv/bin/python -m tests.golden.candidates.make_golden
"""

from __future__ import annotations

from pathlib import Path

from scorer.synthesize import (
    ToolPool,
    missing_information,
    near_duplicate_tool,
    negative_branch,
    stale_context,
    toolkit_growth,
)
from scorer.synthesize.saved import dumps_candidate
from tests.synthesize.kit import demo, demo_gold

HERE = Path(__file__).resolve().parent
SEED = 17


def golden_candidates() -> list[str]:
    pool = ToolPool.of_cases(demo_gold().values())
    made = [
        near_duplicate_tool(demo("tooltalk/Calendar-Messages-Reminder-CreateEvent-1/turn-7"), seed=SEED),
        missing_information(demo("tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4"), seed=SEED),
        toolkit_growth(demo("bfcl/live_simple_0-0-0"), pool, size=5, seed=SEED),
        negative_branch(demo("tooltalk/golden_conversation_2/turn-5"), seed=SEED),
        stale_context(demo("tooltalk/DeleteReminder-easy/turn-2"), seed=SEED),
    ]
    return [dumps_candidate(c) for c in made]


if __name__ == "__main__":
    (HERE / "valid" / "candidate-v1.jsonl").write_text("\n".join(golden_candidates()) + "\n", encoding="utf-8")
