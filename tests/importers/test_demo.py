"""The bundled demo: imports cleanly through `toolgold init --demo-if-empty`, with the documented counts,
and is exactly what build_demo makes of the real data."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from labeler.cli import cli
from labeler.demo import build_demo
from labeler.store import Store
from scorer.formats import iter_json_lines, parse_record
from tests.importers.helpers import SHARED, needs_shared

DEMO = build_demo.DEMO


def test_init_imports_the_demo_into_an_empty_database_once(isolated_db: Path) -> None:
    result = CliRunner().invoke(cli, ["init", "--demo-if-empty"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "demo: 42 transcripts added (208 decision points), 55 gold cases added"
    before = Store(isolated_db).dump()
    assert Store(isolated_db).stats()["transcripts"] == 42
    assert CliRunner().invoke(cli, ["init", "--demo-if-empty"], catch_exceptions=False).exit_code == 0
    assert Store(isolated_db).dump() == before


def test_each_demo_file_holds_what_its_readme_says() -> None:
    kinds: dict[str, Counter[str]] = {}
    for path in sorted(DEMO.glob("*.jsonl")):
        counts: Counter[str] = Counter()
        for n, value in iter_json_lines(path.read_bytes().splitlines(keepends=True), str(path)):
            record = parse_record(value, source=str(path), line=n)
            counts[record.format if record.format != "toolgold.gold/1" else f"gold:{record.kind}"] += 1
            if record.format == "toolgold.gold/1":
                counts[f"behavior:{record.expected.behavior}"] += 1
        kinds[path.name] = counts
    assert kinds == {
        "tau-bench-airline.jsonl": Counter({"toolgold.transcript/1": 12, "gold:trajectory": 12,
                                            "behavior:call": 11, "behavior:no_call": 1}),
        "tooltalk.jsonl": Counter({"toolgold.transcript/1": 10, "gold:turn": 23,
                                   "behavior:call": 18, "behavior:no_call": 5}),
        "bfcl.jsonl": Counter({"toolgold.transcript/1": 20, "gold:turn": 20,
                               "behavior:call": 15, "behavior:no_call": 5}),
    }
    assert sorted(p.name for p in DEMO.glob("LICENSE*")) == ["LICENSE-bfcl", "LICENSE-tau-bench", "LICENSE-tooltalk"]


@needs_shared
def test_the_demo_is_reproducible_from_the_real_data(tmp_path: Path) -> None:
    counts = build_demo.build(SHARED, tmp_path)
    assert counts == {"tau-bench-airline.jsonl": 24, "tooltalk.jsonl": 33, "bfcl.jsonl": 40}
    for name in [*counts, *build_demo.LICENSES]:
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name



def test_the_demo_s_create_event_takes_any_name_and_a_meeting_or_event_type() -> None:
    from scorer.model import GoldCase, Transcript
    from scorer.schemas import compiled

    path = DEMO / "tooltalk.jsonl"
    records = [parse_record(v) for _, v in iter_json_lines(path.read_bytes().splitlines(keepends=True), str(path))]
    found = [x for t in records if isinstance(t, Transcript) for x in t.tools if x.name == "CreateEvent"]
    create = found[0]
    assert all(x == create for x in found) and "enum" not in create.properties["name"]
    assert create.properties["event_type"]["enum"] == ["meeting", "event"]
    calls = [c for r in records if isinstance(r, GoldCase) for c in r.expected.calls if c.name == "CreateEvent"]
    assert calls and all(compiled(create.parameters).problems(c.arguments) == [] for c in calls)
