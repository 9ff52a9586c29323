"""The gold-set lifecycle through the real CLI: freeze, versions, export (exact, and a datasets layout),
diff, lint, drift; and the export/import round trip into an empty database."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.labels import LabelBody
from labeler.store import Store
from scorer.formats import dumps_record
from scorer.model import Call
from tests.review.kit import REFUND, gold, people, put, transcript
from tests.review.test_drift import RENAMED
from tests.store_reads import audit_events


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def labeled(store: Store) -> Store:
    """Two transcripts labeled by ann and bob; rita approved one case by choosing bob's label, one as is."""
    people(store)
    put(store, transcript("t1"), transcript("t2", "Orders for C-77 please", observed={"customer": "C-77"}))
    lookup = LabelBody(decision="same", calls=(Call(name="search_orders", arguments={"customer": "C-1042"}),),
                       tags=("happy_path",))
    store.submit_label("t1", 2, "ann", lookup.model_copy(update={"rationale": "as asked"}), version=0)
    store.submit_label("t1", 2, "bob", lookup.model_copy(update={"unsure": True}), version=0)
    store.submit_label("t2", 2, "ann", lookup.model_copy(update={"calls": (
        Call(name="search_orders", arguments={"customer": "C-77"}),)}), version=0)
    store.sync_review_queue()
    [item] = store.review_queue(actor="rita")
    store.accept_review(item.id, "label:bob", actor="rita", comment="fine")
    store.approve_cases(store.approvable_cases(), actor="rita")
    return store


def test_freeze_list_export_and_diff(labeled: Store, tmp_path: Path) -> None:
    code, out, _ = run("freeze", "regression", "--user", "rita", "--note", "first")
    version = labeled.get_version("regression-v1")
    assert (code, out) == (0, f"regression-v1: 2 cases, sha256 {version.content_hash}\n")
    code, out, _ = run("versions")
    assert code == 0 and out.startswith(f"regression-v1\t2 cases\t{version.content_hash[:12]}\t")
    code, _, err = run("export", "--version", "regression-v1", "-o", str(tmp_path / "v1.jsonl"), "--user", "rita")
    assert code == 0 and "regression-v1: 2 cases" in err
    assert hashlib.sha256((tmp_path / "v1.jsonl").read_bytes()).hexdigest() == version.content_hash
    assert run("export", "--version", "latest", "--split", "regression", "--user", "root")[1] == (
        tmp_path / "v1.jsonl").read_text()
    labeled.derive_version("regression-v1", [gold("t2#t2", customer="C-78")], actor="rita", note="",
                           provenance={})
    code, out, _ = run("diff", "regression-v1", "regression-v2")
    assert (code, out) == (0, "regression-v1 → regression-v2: 0 added, 0 removed, 1 changed\n~ t2#t2\n")
    assert json.loads(run("diff", "regression-v1", "regression-v2", "--json")[1])["changed"] == ["t2#t2"]
    exports = [e for e in audit_events(labeled, "regression-v1") if e["action"] == "version.export"]
    assert [(e["actor"], json.loads(e["after"])["target"]) for e in exports] == [
        ("rita", str(tmp_path / "v1.jsonl")), ("root", "stdout")]


@pytest.mark.parametrize(("args", "message"), [
    (["export", "--version", "regression-v1"], "error: exporting a frozen version needs --user NAME"),
    (["export", "--version", "regression-v1", "--user", "ann"],
     "error: only a reviewer or admin can export a frozen gold version ('ann' is annotator)"),
    (["export", "--version", "latest", "--user", "rita"], "error: --version latest needs --split"),
    (["export", "--version", "regression-v1", "--split", "rolling", "--user", "rita"],
     "error: regression-v1 is a version of the regression split, not rolling"),
    (["freeze", "regression", "--user", "ann"], "error: only a reviewer or admin can freeze a gold version"),
    (["diff", "regression-v1", "regression-v7"], "error: no gold version 'regression-v7'"),
])
def test_refusals_are_one_clear_line(labeled: Store, args: list[str], message: str) -> None:
    labeled.freeze("regression", actor="rita")
    code, out, err = run(*args)
    assert (code, out) == (2, "") and err.startswith(message)


def test_an_exported_version_restores_the_same_gold_set_in_an_empty_database(labeled: Store, tmp_path: Path) -> None:
    labeled.freeze("regression", actor="rita")
    exported = tmp_path / "v1.jsonl"
    assert run("export", "--version", "regression-v1", "-o", str(exported), "--user", "rita")[0] == 0
    empty = tmp_path / "restored.db"
    assert run("import", str(exported), "--db", str(empty))[0] == 0
    # The restored gold set is the same, byte for byte, with its provenance.
    assert run("users", "add", "eve", "--role", "admin", "--db", str(empty))[0] == 0  # held out: an admin exports
    assert run("export", "--db", str(empty), "--status", "approved", "--user", "eve")[1] == exported.read_text()
    restored = Store(empty)
    case = restored.get_gold("t1#t2")
    assert (case.provenance.annotators, case.provenance.reviewer, case.provenance.gold_version,
            case.provenance.status) == (("bob", "ann"), "rita", "regression-v1", "approved")
    # Freezing it there gives the same cases (its own version name aside).
    again = restored.freeze("regression", actor="eve")
    assert again.n_cases == 2
    assert [c.model_copy(update={"provenance": c.provenance.model_copy(update={"gold_version": None})})
            for c in restored.version_cases(again.id, actor="eve")] == [
        c.model_copy(update={"provenance": c.provenance.model_copy(update={"gold_version": None})})
        for c in labeled.version_cases("regression-v1", actor="rita")]


def test_a_hugging_face_layout_with_flat_rows_and_a_dataset_card(labeled: Store, tmp_path: Path) -> None:
    import pyarrow.json

    labeled.freeze("regression", actor="rita")
    target = tmp_path / "hf"
    assert run("export", "--hf", str(target), "--user", "rita")[0] == 0
    version = labeled.get_version("regression-v1")
    exact = (target / "toolgold" / "regression.jsonl").read_bytes()
    assert hashlib.sha256(exact).hexdigest() == version.content_hash
    rows = [json.loads(line) for line in (target / "data" / "regression.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["t1#t2", "t2#t2"]
    assert rows[0] == {
        "id": "t1#t2", "conversation_id": "t1", "turn": 2, "split": "regression", "kind": "turn",
        "behavior": "call", "expected_tools": ["search_orders"], "tags": ["happy_path"], "rationale": "",
        "annotators": ["bob", "ann"], "reviewer": "rita", "gold_version": "regression-v1",
        "record": exact.decode().splitlines()[0]}
    table = pyarrow.json.read_json(target / "data" / "regression.jsonl")  # what datasets' json loader uses
    assert table.num_rows == 2 and table.column_names == list(rows[0])
    card = (target / "README.md").read_text()
    assert card.startswith("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: regression\n"
                           "    path: data/regression.jsonl\n")
    assert f"| regression | regression-v1 | 2 | `{version.content_hash}` |" in card
    manifest = json.loads((target / "toolgold" / "manifest.json").read_text())
    assert manifest["splits"][0]["content_hash"] == version.content_hash


def test_lint_exit_codes(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_text(dumps_record(gold("a#t2")) + "\n")
    assert run("lint", str(clean)) == (0, "", "0 problems in 1 gold cases\n")
    suspect = tmp_path / "suspect.jsonl"
    suspect.write_text(dumps_record(gold("a#t2")) + "\n" + dumps_record(gold("b#t2", customer="  ",
                                                                             user_text="Where is my order? I'm C-1042.")) + "\n")
    code, out, _ = run("lint", str(suspect))
    assert code == 1
    assert out.splitlines() == [
        f'{suspect}: a#t2: conflicting_duplicate: the same context as `b#t2`, but expects search_orders('
        '{"customer":"C-1042"}) where `b#t2` expects search_orders({"customer":"  "})',
        f"{suspect}: b#t2: missing_required_value: required `search_orders.customer` is empty"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps_record(gold("a#t2")) + "\n{not json\n")
    code, out, err = run("lint", str(bad))
    assert (code, out) == (2, "") and err.startswith(f"error: {bad}:2: not valid JSON")


def test_drift_on_import_and_against_a_declared_toolset(store: Store, tmp_path: Path) -> None:
    people(store)
    put(store, transcript("t1"), gold("a#t2"))
    newer = tmp_path / "newer.jsonl"
    newer.write_text(dumps_record(transcript("t9", tools=(RENAMED, REFUND))) + "\n")
    code, _, err = run("import", str(newer))
    assert code == 0 and "1 gold cases flagged for re-labeling" in err
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([REFUND.model_dump()]))
    code, out, err = run("drift", "--tools", str(tools))
    assert (code, out) == (1, "a#t2: expected calls use `search_orders`, which the current tools no longer offer\n")
    assert err == "1 gold cases flagged for re-labeling (1 no longer fit the tools)\n"


def test_a_reimport_that_drops_a_tool_from_the_cases_own_transcript_is_checked(store: Store, tmp_path: Path) -> None:
    # No schema new to the store arrives (refund_order is known): the tool set of t1 still changed.
    people(store)
    put(store, transcript("t1"), gold("t1#t2"), transcript("t2"), gold("t2#t2"))
    again = tmp_path / "again.jsonl"
    again.write_text(dumps_record(transcript("t1", tools=(REFUND,))) + "\n")
    code, out, err = run("import", str(again))
    assert code == 0 and "1 transcripts' tools changed" in out
    assert "1 gold cases flagged for re-labeling" in err
    assert [i.case_id for i in store.relabel_queue(actor="rita")] == ["t1#t2"]


def test_drift_is_audited_under_the_user_who_ran_it(store: Store, tmp_path: Path) -> None:
    people(store)
    put(store, transcript("t1"), gold("a#t2"))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([REFUND.model_dump()]))
    assert run("drift", "--tools", str(tools), "--user", "nobody")[0] == 2  # not a user: refused, nothing flagged
    assert [e for e in audit_events(store, "a#t2") if e["action"] == "relabel.flag"] == []
    assert run("drift", "--tools", str(tools), "--user", "rita")[0] == 1
    [flagged] = [e for e in audit_events(store, "a#t2") if e["action"] == "relabel.flag"]
    assert flagged["actor"] == "rita"


def test_score_refuses_gold_that_no_longer_fits_the_agents_tools(tmp_path: Path) -> None:
    from scorer.model import RunCall, RunRecord

    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text(dumps_record(gold("a#t2")) + "\n" + dumps_record(gold("b#t2", customer="C-7")) + "\n")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(dumps_record(RunRecord(case_id=c, calls=(RunCall(
        name="search_orders", arguments={"customer_id": v}),))) + "\n" for c, v in (("a#t2", "C-1042"),
                                                                                      ("b#t2", "C-7"))))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([RENAMED.model_dump(), REFUND.model_dump()]))
    code, out, err = run("score", str(gold_file), str(runs), "--tools", str(tools))
    assert (code, out) == (2, "")
    assert err == ("error: 2 gold cases do not fit the current tool schemas (relabel them, or --allow-stale to "
                   "score them anyway):\n"
                   "  a#t2: expected args use `customer`, renamed to `customer_id` in `search_orders`\n"
                   "  b#t2: expected args use `customer`, renamed to `customer_id` in `search_orders`\n")
    code, out, err = run("score", str(gold_file), str(runs), "--tools", str(tools), "--allow-stale")
    assert code == 0 and "pass" in out
    assert err.startswith("warning: scoring 2 stale gold cases (their tools changed since they were labeled):\n"
                          "  stale a#t2: expected args use `customer`, renamed to `customer_id`")
    # Tools that still fit: scoring goes ahead without a word about staleness.
    tools.write_text(json.dumps([t.model_dump() for t in (gold("x").tools)]))
    code, _, err = run("score", str(gold_file), str(runs), "--tools", str(tools))
    assert "stale" not in err


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_lint_refuses_an_empty_file_as_score_does(tmp_path: Path, content: str) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content)
    message = f"error: {empty}: no gold cases in this file (it is empty)\n"
    assert run("lint", str(empty)) == (2, "", message)
    runs = tmp_path / "runs.jsonl"
    runs.write_text("")
    assert run("score", str(empty), str(runs))[::2] == (2, message)  # the same line, the same exit
