"""`toolgold synthesize` on a real store holding the demo: candidates enter the labeling queue with their
provenance and proposed label, are proposed once however often it runs, become gold only through an
annotator's submit; bad input is one line and exit 2, with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.candidates import proposed_label
from labeler.cli import cli
from labeler.labels import gold_case_id
from labeler.store import ImportItem, Store
from labeler.synthesis import waiting
from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.formats import dumps_record
from scorer.synthesize.saved import read_candidates
from tests.synthesize.kit import DEMO, demo, demo_gold, run_of


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def demo_store(store: Store) -> Store:
    code, _, err = run("import", *map(str, sorted(DEMO.glob("*.jsonl"))))
    assert code == 0, err
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    store.add_user("ann", "annotator", actor="root")
    return store


def synthetic_ids(store: Store) -> list[str]:
    return [t.id for t in store.list_transcripts(source="synthetic")]


def test_candidates_enter_the_queue_with_provenance_and_a_proposed_label(demo_store: Store) -> None:
    code, _, err = run("synthesize", "--user", "rita", "-n", "10", "--seed", "3")
    assert code == 0, err
    ids = synthetic_ids(demo_store)
    assert len(ids) == 10
    assert err.startswith("10 candidates added to the labeling queue (")
    assert "transformations did not apply (--show-skipped lists them)" in err
    for case_id in ids:
        transcript = demo_store.get_transcript(case_id).transcript
        synthesis = transcript.metadata["synthesis"]
        assert transcript.metadata["source"] == "synthetic" and transcript.awaiting_reply
        assert case_id == f"{synthesis['parent']}~{synthesis['transform']}{synthesis['variant']}"
        assert synthesis["seed"] == 3
        body = proposed_label(transcript)
        assert body is not None and {"synthetic", synthesis["transform"]} <= set(body.tags)
        assert body.rationale.startswith(f"Synthetic ({synthesis['transform']} of {synthesis['parent']})")
    assert waiting(demo_store).waiting == 10
    assert demo_store.count_gold(status="approved") == len(demo_gold())  # nothing became gold


def test_running_again_proposes_nothing_twice_whatever_the_seed(demo_store: Store) -> None:
    assert run("synthesize", "--user", "rita", "-n", "8", "--seed", "1")[0] == 0
    first = set(synthetic_ids(demo_store))
    code, _, err = run("synthesize", "--user", "rita", "-n", "8", "--seed", "2")
    assert code == 0, err
    second = set(synthetic_ids(demo_store)) - first
    assert len(second) == 8
    code, _, err = run("synthesize", "--user", "rita", "--transform", "stale_context")
    assert code == 0, err
    stale = {i for i in synthetic_ids(demo_store) if i.endswith("~stale_context")}
    assert len(stale) == 4
    code, _, err = run("synthesize", "--user", "rita", "--transform", "stale_context", "--seed", "9")
    assert (code, err.split(";")[0]) == (0, "0 candidates added to the labeling queue")
    assert "4 proposed before" in err


def test_an_admin_run_adds_the_transformations_to_the_vocabulary_as_adversarial(demo_store: Store) -> None:
    code, _, err = run("synthesize", "--user", "root", "--transform", "missing_information")
    assert code == 0, err
    assert "tags missing_information added to the vocabulary as adversarial" in err
    assert [(t.tag, t.adversarial) for t in demo_store.tags() if t.tag == "missing_information"] == [
        ("missing_information", True)]


def test_a_submitted_candidate_is_synthetic_gold_that_scores_the_stale_value(demo_store: Store) -> None:
    assert run("synthesize", "--user", "rita", "--transform", "stale_context")[0] == 0
    case_id = "tooltalk/DeleteReminder-easy/turn-2~stale_context"
    transcript = demo_store.get_transcript(case_id).transcript
    body = proposed_label(transcript)
    assert body is not None
    end = len(transcript.messages)
    demo_store.submit_label(case_id, end, "ann", body, version=0)
    gold = demo_store.get_gold(gold_case_id(case_id, end))
    assert gold.provenance.source == "synthetic" and gold.provenance.status == "submitted"
    assert {"synthetic", "stale_context"} <= set(gold.tags)
    old = demo("tooltalk/DeleteReminder-easy/turn-2").expected.calls[0]
    result = score_case(gold, run_of(gold, (old.name, old.arguments)))
    assert [e.code for e in result.errors] == [ErrorCode.STALE_VALUE]
    assert waiting(demo_store).waiting == 3


def test_o_writes_candidates_to_a_file_from_a_gold_file(tmp_path: Path, isolated_db: Path) -> None:
    out = tmp_path / "candidates.jsonl"
    code, _, err = run("synthesize", "--gold", str(DEMO / "tooltalk.jsonl"), "-o", str(out), "--seed", "5",
                       "--transform", "near_duplicate_tool", "--transform", "negative_branch")
    assert code == 0, err
    candidates = list(read_candidates(out.read_bytes().splitlines(), str(out)))
    assert {c.synthesis.transform for c in candidates} == {"near_duplicate_tool", "negative_branch"}
    assert err.startswith(f"{len(candidates)} candidates written to {out}; ")
    assert not isolated_db.exists() or not Store(isolated_db).list_transcripts(source="synthetic")


@pytest.mark.parametrize(("args", "message"), [
    (("synthesize",), "error: proposing synthetic cases needs --user NAME (a reviewer or admin), or TOOLGOLD_USER"),
    (("synthesize", "--user", "ann"), "error: only a reviewer or admin can propose synthetic cases ('ann' is annotator)"),
    (("synthesize", "--user", "nobody"), "error: 'nobody' is not an active user (an admin adds users on the Admin page)"),
    (("synthesize", "--user", "rita", "--gold", str(DEMO / "bfcl.jsonl")),
     "error: --gold reads the parents from a file and needs -o FILE for the candidates; the labeling queue takes "
     "its parents from the store's approved gold"),
])
def test_who_may_propose_and_what_is_refused(demo_store: Store, args: tuple[str, ...], message: str) -> None:
    code, _, err = run(*args)
    assert (code, err.strip()) == (2, message)
    assert synthetic_ids(demo_store) == []


def test_a_bad_gold_file_is_one_line_with_file_and_line_and_no_output(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    good = dumps_record(demo("tooltalk/DeleteReminder-easy/turn-2"))
    gold.write_text(good + "\n" + '{"format": "toolgold.gold/1", "id": "x"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code, _, err = run("synthesize", "--gold", str(gold), "-o", str(out))
    assert (code, err.strip()) == (2, f"error: {gold}:2: expected: Field required")
    assert not out.exists() and not (tmp_path / "out.jsonl.part").exists()


def test_synthesize_has_help_naming_every_transformation() -> None:
    code, out, _ = run("synthesize", "--help")
    assert code == 0
    for name in ("near_duplicate_tool", "missing_information", "toolkit_growth", "negative_branch", "stale_context"):
        assert name in out


def test_imported_synthetic_transcripts_are_not_parents_again(demo_store: Store) -> None:
    assert run("synthesize", "--user", "rita", "--transform", "near_duplicate_tool", "-n", "3")[0] == 0
    before = set(synthetic_ids(demo_store))
    # a synthetic candidate that made it into gold (approved) is never a parent itself
    from scorer.synthesize import near_duplicate_tool

    approved = near_duplicate_tool(demo("bfcl/simple_python_0"), seed=0).case.model_copy(
        update={"provenance": demo("bfcl/simple_python_0").provenance.model_copy(update={"source": "synthetic"})})
    demo_store.import_items([ImportItem(approved, source="synthetic")])
    assert demo_store.count_gold(status="approved") == len(demo_gold()) + 1
    assert run("synthesize", "--user", "rita", "--transform", "near_duplicate_tool")[0] == 0
    added = set(synthetic_ids(demo_store)) - before
    assert len(added) == 33 - 3  # the demo cases with a call and a conversation, less the three proposed
    assert not any(i.count("~") > 1 for i in added)
