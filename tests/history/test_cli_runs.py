"""`toolgold score --save` and `toolgold runs ...` through the real CLI, on the database in TOOLGOLD_DB."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store, score_and_save
from labeler.store.history import RunMeta
from scorer.formats import dumps_record
from scorer.model import GoldCase, RunRecord
from tests.history.kit import FAULTS, agent_runs, gold_cases
from tests.store_reads import audit_events


def toolgold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, records: list[GoldCase] | list[RunRecord]) -> Path:
    path.write_text("".join(dumps_record(r) + "\n" for r in records), encoding="utf-8")
    return path


def agent_files(tmp_path: Path, version: str, cases: list[GoldCase] | None = None) -> tuple[Path, Path]:
    cases = cases if cases is not None else gold_cases()
    runs = agent_runs(cases, FAULTS[version], run_id=f"run-{version}", model="model-a")
    # The run file comes in another order than the gold: the saved run must not depend on it.
    return write(tmp_path / "gold.jsonl", list(reversed(cases))), write(tmp_path / f"{version}.jsonl", runs[::-1])


def test_score_save_stores_the_run_the_python_api_would(tmp_path: Path, store: Store) -> None:
    gold, runs = agent_files(tmp_path, "v1")
    code, out, err = toolgold("score", str(gold), str(runs), "--save", "--label", "prompt v1",
                              "--prompt-version", "v1", "--git-commit", "0a1b2c", "--schema-version", "tools-7")
    assert code == 0, err
    assert "toolgold score: 74 results from 74 cases — 69 pass, 5 fail" in out
    [info] = store.list_runs()
    assert err.strip() == f"saved run run-v1 (74 results, 69 pass) on gold version {info.gold_version}"
    assert (info.run_id, info.model, info.label, info.prompt_version, info.git_commit, info.schema_version,
            info.source) == ("run-v1", "model-a", "prompt v1", "v1", "0a1b2c", "tools-7", "cli")
    # The same agent scored through the API and saved into another database gives the same rows.
    twin = Store(tmp_path / "twin.db")
    cases = gold_cases()
    score_and_save(twin, cases, agent_runs(cases, FAULTS["v1"], run_id="run-v1", model="model-a"), RunMeta())
    ours, theirs = store.history(), twin.history()
    assert sorted((m.metric, m.value, m.count, m.total) for m in ours.metrics) == sorted(
        (m.metric, m.value, m.count, m.total) for m in theirs.metrics)
    assert ours.groups == theirs.groups
    assert (info.gold_version, info.gold_digest, info.schema_hash) == (
        theirs.runs[0].gold_version, theirs.runs[0].gold_digest, theirs.runs[0].schema_hash)
    for case_id in ("update_user_profile-00", "book-00", "thanks-00"):
        assert store.case_detail("run-v1", case_id) == twin.case_detail("run-v1", case_id)
    assert store.failing_cases("run-v1") == twin.failing_cases("run-v1")
    twin.close()


def test_a_run_that_fails_its_gate_is_still_saved(tmp_path: Path, store: Store) -> None:
    gold, runs = agent_files(tmp_path, "v3")
    code, _, err = toolgold("score", str(gold), str(runs), "--save", "--fail-under", "pass_rate=0.99",
                            "--format", "junit", "--out", str(tmp_path / "junit.xml"))
    assert code == 1
    assert "gate failed: pass_rate is 0.9459, below 0.99" in err
    assert [r.run_id for r in store.list_runs()] == ["run-v3"]
    assert "<testsuites" in (tmp_path / "junit.xml").read_text()


def test_runs_list_show_and_diff(tmp_path: Path, store: Store) -> None:
    for version in ("v2", "v3"):
        gold, runs = agent_files(tmp_path, version)
        code, _, err = toolgold("score", str(gold), str(runs), "--save", "--label", f"prompt {version}")
        assert code == 0, err
    code, out, _ = toolgold("runs", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "saved", "label", "model", "prompt", "gold", "version", "pass", "rate",
                                "results"]
    assert [line.split()[0] for line in lines[2:]] == ["run-v3", "run-v2"]
    assert "94.6%" in lines[2] and "prompt v3" in lines[2]
    code, out, _ = toolgold("runs", "show", "run-v3", "--format", "markdown")
    assert code == 0
    assert out.startswith("_run run-v3 · saved ")
    assert "## toolgold score" in out and "### Failure patterns" in out
    code, out, _ = toolgold("runs", "diff", "run-v2", "run-v3")
    assert code == 0
    assert out.splitlines()[1:3] == ["fixed 3, broken 3, still failing 1, both pass 67",
                                     "McNemar exact p = 1 (could be noise)"]
    assert "  search_orders-03: pass → wrong_tool" in out
    code, out, _ = toolgold("runs", "show", "run-v3", "--format", "json")
    assert json.loads(out)["totals"]["passed"] == 70


def test_comparing_runs_on_different_gold_versions_is_a_clear_error(tmp_path: Path, store: Store) -> None:
    gold, runs = agent_files(tmp_path, "v2")
    assert toolgold("score", str(gold), str(runs), "--save")[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    gold, runs = agent_files(other, "v3", gold_cases(changed="get_order-05"))
    assert toolgold("score", str(gold), str(runs), "--save")[0] == 0
    code, _, err = toolgold("runs", "diff", "run-v2", "run-v3")
    assert code == 2
    assert err.startswith("error: runs are only compared on the same gold version: run-v2 on sha256:")
    code, _, err = toolgold("score", str(gold), str(runs), "--save")
    assert (code, err.strip()) == (2, "error: run 'run-v3' is already saved; give this one another id (--run-id)")
    code, _, err = toolgold("runs", "show", "nope")
    assert (code, err.strip()) == (2, "error: no saved run with id 'nope' (toolgold runs list shows the saved runs)")
    assert toolgold("runs", "delete", "run-v3", "--yes")[::2] == (
        2, "error: deleting a saved run needs --user NAME (a reviewer or admin), or TOOLGOLD_USER\n")
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    assert toolgold("runs", "delete", "run-v3", "--yes", "--user", "ann")[::2] == (
        2, "error: only a reviewer or admin can delete saved runs ('ann' is annotator)\n")
    assert toolgold("runs", "delete", "run-v3", "--yes", "--user", "root")[:2] == (0, "deleted run run-v3\n")
    assert [r.run_id for r in store.list_runs()] == ["run-v2"]
    assert [(e["actor"], e["action"], e["entity_id"]) for e in audit_events(store, "run-v3")] == [
        ("root", "run.delete", "run-v3")]


def test_a_saved_run_is_a_baseline_as_good_as_its_json_report(tmp_path: Path, store: Store) -> None:
    gold, before = agent_files(tmp_path, "v2")
    report = tmp_path / "v2-report.json"
    assert toolgold("score", str(gold), str(before), "--save", "--format", "json", "--out", str(report))[0] == 0
    code, _, err = toolgold("runs", "baseline", "--gold", str(gold), "--out", str(tmp_path / "last.json"))
    assert code == 0, err
    assert err.startswith("wrote ") and "run run-v2 (run-v2, saved " in err
    _, after = agent_files(tmp_path, "v3")
    from_history = toolgold("score", str(gold), str(after), "--baseline", str(tmp_path / "last.json"),
                            "--format", "json", "--out", str(tmp_path / "a.json"))
    from_file = toolgold("score", str(gold), str(after), "--baseline", str(report), "--format", "json",
                         "--out", str(tmp_path / "b.json"))
    assert from_history[0] == from_file[0] == 1  # search_orders fell from 91.7% to 66.7%
    ours = json.loads((tmp_path / "a.json").read_text())["comparison"]
    assert ours == json.loads((tmp_path / "b.json").read_text())["comparison"]
    assert (ours["mcnemar"]["only_current"], ours["mcnemar"]["only_baseline"]) == (3, 3)
    assert [r["tool"] for r in ours["regressions"]] == ["search_orders"]


def test_baseline_refuses_another_gold_version_and_may_be_missing(tmp_path: Path, store: Store) -> None:
    out = tmp_path / "last.json"
    code, _, err = toolgold("runs", "baseline", "--gold-version", "regression-v9", "--out", str(out))
    assert (code, err.strip()) == (2, "error: no saved run on gold version regression-v9 (toolgold score ... "
                                      "--save saves one)")
    code, _, err = toolgold("runs", "baseline", "--out", str(out), "--allow-missing")
    assert (code, err.strip(), out.exists()) == (0, "no saved run: no baseline written", False)
    gold, runs = agent_files(tmp_path, "v2")
    assert toolgold("score", str(gold), str(runs), "--save")[0] == 0
    other = write(tmp_path / "other.jsonl", gold_cases(changed="get_order-05"))
    code, _, err = toolgold("runs", "baseline", "run-v2", "--gold", str(other), "--out", str(out))
    assert code == 2 and err.startswith("error: runs are only compared on the same gold version: run-v2 on sha256:")
    assert not out.exists()
