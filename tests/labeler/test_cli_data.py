"""`toolgold import / export / schema / init` through the real CLI on temp databases."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete

from labeler.cli import cli
from labeler.labels import LabelBody
from labeler.store import Store
from labeler.store import tables as t
from scorer.formats import dumps_record
from tests.labeler.test_store import gold, transcript
from tests.review.kit import people, put
from tests.review.kit import transcript as review_transcript


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [dumps_record(transcript()), dumps_record(gold("g2")),
                                              dumps_record(gold("g1", tags=("underspecified", "stale_context")))])
    first_db, second_db = tmp_path / "one.db", tmp_path / "two.db"
    assert run("import", str(src), "--db", str(first_db))[0] == 0
    for db in (first_db, second_db):  # approved regression cases are held out: a reviewer exports them
        assert run("users", "add", "rita", "--role", "reviewer", "--db", str(db))[0] == 0
    assert run("export", "--db", str(first_db), "-o", str(tmp_path / "a.jsonl"), "--user", "rita")[0] == 0
    assert run("import", str(tmp_path / "a.jsonl"), "--db", str(second_db))[0] == 0
    assert run("export", "--db", str(second_db), "-o", str(tmp_path / "b.jsonl"), "--user", "rita")[0] == 0
    a, b = (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "b.jsonl").read_bytes()
    assert a == b
    assert [json.loads(x)["id"] for x in a.decode().splitlines()] == ["g1", "g2"]


def test_a_bad_line_aborts_with_file_and_line_and_writes_nothing(tmp_path: Path, isolated_db: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [dumps_record(transcript("t0"))])
    assert run("import", str(good))[0] == 0
    before = Store(isolated_db).dump()
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        dumps_record(transcript("t1")),
        '{"format": "toolgold.transcript/1", "id": "t2", "messages": [{"role": "wizard", "content": "hi"}]}',
    ])
    code, _, err = run("import", str(bad))
    assert code == 2
    assert err.startswith(f"error: {bad}:2: messages.0.role: Input should be 'system', 'user', 'assistant' or 'tool'")
    assert Store(isolated_db).dump() == before


def test_skip_invalid_imports_the_rest_and_writes_the_rejects(tmp_path: Path, isolated_db: Path) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        '{"format": "toolgold.gold/2", "id": "x"}',
        dumps_record(transcript("t1")),
        "[1, 2]",
    ])
    rejects = tmp_path / "rejects.txt"
    code, out, _ = run("import", str(bad), "--skip-invalid", "--rejects", str(rejects))
    assert code == 0
    assert "1 transcripts added" in out
    assert rejects.read_text().splitlines() == [
        f"{bad}:1: unknown format 'toolgold.gold/2' (a newer version than this toolgold reads: upgrade toolgold); "
        "this toolgold reads toolgold.transcript/1, toolgold.gold/1, toolgold.run/1",
        f"{bad}:3: expected a JSON object, got an array",
    ]
    assert Store(isolated_db).stats()["transcripts"] == 1


def test_export_filters_by_split_and_tag_to_stdout(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [dumps_record(gold("a", split="rolling")),
                                              dumps_record(gold("b", tags=("missing_info",)))])
    run("import", str(src))
    assert [json.loads(x)["id"] for x in run("export", "--split", "rolling")[1].splitlines()] == ["a"]
    run("users", "add", "rita", "--role", "reviewer")  # b is an approved regression case: held out
    assert [json.loads(x)["id"] for x in run("export", "--tag", "missing_info", "--user", "rita")[1].splitlines()] == [
        "b"]


def test_published_schemas_match_the_models(tmp_path: Path) -> None:
    assert run("schema", "--write", str(tmp_path))[0] == 0
    published = Path(__file__).resolve().parents[2] / "docs" / "schema"
    for generated in tmp_path.iterdir():
        assert (published / generated.name).read_text() == generated.read_text(), (
            f"docs/schema/{generated.name} is stale: run `make schema`")


def test_unrecognized_file_names_the_choices(tmp_path: Path) -> None:
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\n")
    code, _, err = run("import", str(odd))
    assert code == 2
    assert err.startswith(f"error: {odd}:1: cannot tell which format this is: line 1 is not JSON (Expecting value); "
                          "pass --from (one of: toolgold")


def test_init_re_derives_review_items_for_labels_written_outside_the_label_path(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store = Store(db)
    people(store)
    put(store, review_transcript("t3", "Hi"))
    store.submit_label("t3", 2, "cat", LabelBody(decision="clarify", unsure=True, rationale="which?"), version=0)
    with store.write() as conn:  # as an older toolgold left it: the unsure label, no item for it
        conn.execute(delete(t.ReviewItemRow))
    assert store.review_queue(actor="rita") == []
    store.close()
    code, out, _ = run("init", "--db", str(db))
    assert code == 0 and "review queue: 1 open items, re-derived from the labels" in out
    store = Store(db)
    try:
        assert [(i.kind, i.ref) for i in store.review_queue(actor="rita")] == [("unsure", "t3#t2")]
    finally:
        store.close()


def test_the_same_conversation_under_two_ids_in_one_import_is_two_transcripts(tmp_path: Path) -> None:
    # Issue 12 reported a raw unique-constraint error at the publish for this. An id is a record's identity
    # (docs/importers.md) and the stored body and content hash include it, so the two are distinct records:
    # both are stored, and importing the file again adds nothing.
    db = str(tmp_path / "t.db")
    src = write_jsonl(tmp_path / "two.jsonl", [dumps_record(transcript("a")), dumps_record(transcript("b")),
                                               dumps_record(gold("g-a")), dumps_record(gold("g-b"))])
    code, out, err = run("import", str(src), "--db", db)
    assert (code, err) == (0, "")
    assert "2 transcripts added" in out and "2 gold cases added" in out
    code, out, _ = run("import", str(src), "--db", db)
    assert code == 0 and "4 already present" in out
    store = Store(db)
    assert [s.id for s in store.list_transcripts()] == ["a", "b"]
