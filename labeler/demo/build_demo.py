"""Build the bundled demo data (``data/demo/*.jsonl``) from the real benchmark files, with toolgold's
own importers, so the demo is exactly what ``toolgold import`` makes of them::

    .venv/bin/python -m labeler.demo.build_demo [--data ../shared/data]

The same data always gives the same bytes. ``toolgold init --demo-if-empty`` imports every
``data/demo/*.jsonl``; the licenses and attribution of the sources sit beside them. The script stays code in
the package (it is toolgold's importers at work, tested like them); only its output is data.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from scorer import importers
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record
from scorer.model import GoldCase, Transcript

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
DEFAULT_DATA = REPO.parent / "shared" / "data"

TAU_TASKS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12)
"""Trial 0 of these airline tasks: rewarded and failed runs, one task whose gold changes nothing (12)."""

TOOLTALK = (
    "easy/AddAlarm-easy", "easy/CurrentWeather-easy", "easy/SendEmail-easy", "easy/DeleteReminder-easy",
    "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0", "tooltalk/Alarm-Reminder-Weather-AddReminder-1",
    "tooltalk/Calendar-Messages-Reminder-CreateEvent-1", "tooltalk/Email-Messages-Reminder-SendEmail-2",
    "tooltalk/Messages-Reminder-Weather-ForecastWeather-1", "tooltalk/golden_conversation_2",
)

BFCL = {
    "simple_python": ("simple_python_0", "simple_python_1", "simple_python_2", "simple_python_3"),
    "multiple": ("multiple_0", "multiple_1", "multiple_2"),
    "parallel": ("parallel_0", "parallel_2"),
    "parallel_multiple": ("parallel_multiple_0", "parallel_multiple_1"),
    "live_simple": ("live_simple_0-0-0",),
    "live_multiple": ("live_multiple_0-0-0",),
    "live_parallel": ("live_parallel_0-0-0",),
    "irrelevance": ("irrelevance_0", "irrelevance_1", "irrelevance_2"),
    "live_irrelevance": ("live_irrelevance_0-0-0", "live_irrelevance_1-0-1"),
    "live_relevance": ("live_relevance_0-0-0",),
}

LICENSES = {"LICENSE-tau-bench": "tau-bench/LICENSE", "LICENSE-tooltalk": "tooltalk/LICENSE",
            "LICENSE-bfcl": "bfcl/LICENSE"}


def converted(path: Path) -> list[Transcript | GoldCase]:
    """Every record the importer makes of ``path``; the demo is built only from files that convert cleanly."""
    records = []
    for item in importers.convert(path):
        if isinstance(item, InvalidRecord):
            raise item
        records.append(item.record)
    return records


def tau_bench(data: Path) -> list[Transcript | GoldCase]:
    wanted_runs = {f"tau-bench/airline/gpt-4o/task-{n}/trial-0" for n in TAU_TASKS}
    wanted_cases = {f"tau-bench/airline/task-{n}" for n in TAU_TASKS}
    records = converted(data / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json")
    return [r for r in records if r.id in (wanted_runs if isinstance(r, Transcript) else wanted_cases)]


def tooltalk(data: Path) -> list[Transcript | GoldCase]:
    return [r for name in TOOLTALK for r in converted(data / "tooltalk" / "data" / f"{name}.json")]


def bfcl(data: Path) -> list[Transcript | GoldCase]:
    out = []
    for category, ids in BFCL.items():
        wanted = {f"bfcl/{i}" for i in ids}
        out += [r for r in converted(data / "bfcl" / f"BFCL_v4_{category}.json") if r.id in wanted]
    return out


def write(path: Path, records: Iterable[Transcript | GoldCase]) -> int:
    lines = [dumps_record(r) + "\n" for r in records]
    path.write_text("".join(lines), encoding="utf-8", newline="\n")
    return len(lines)


def build(data: Path, out: Path = DEMO) -> dict[str, int]:
    """Write the demo files into ``out``; return the number of records per file."""
    counts = {
        "tau-bench-airline.jsonl": write(out / "tau-bench-airline.jsonl", tau_bench(data)),
        "tooltalk.jsonl": write(out / "tooltalk.jsonl", tooltalk(data)),
        "bfcl.jsonl": write(out / "bfcl.jsonl", bfcl(data)),
    }
    for target, source in LICENSES.items():
        shutil.copyfile(data / source, out / target)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"the benchmark data [default: {DEFAULT_DATA}]")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"error: no benchmark data at {args.data} (pass --data)", file=sys.stderr)
        return 2
    for name, count in build(args.data).items():
        print(f"{DEMO / name}: {count} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
