"""`toolgold score` through the real CLI: formats, exit codes, FILE:LINE errors, baselines, shards."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from scorer.formats import dumps_record
from scorer.model import GoldCase, RunRecord
from scorer.render import load_report
from tests.scorer.kit import NO_CALL, call, calls, case, run, user


def toolgold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, records: list[GoldCase] | list[RunRecord] | list[str]) -> Path:
    lines = [r if isinstance(r, str) else dumps_record(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def support_desk(n: int = 12) -> tuple[list[GoldCase], list[RunRecord]]:
    """Every third agent run confuses update_user with update_user_profile; one no-call case."""
    cases: list[GoldCase] = []
    runs: list[RunRecord] = []
    for i in range(n):
        cid = f"case-{i:02d}"
        cases.append(case(calls(call("update_user_profile", user_id="U-1", display_name="Ana")), id=cid,
                          messages=(user("I'm U-1; call me Ana"),), tags=("profile",)))
        made = ("update_user", {"user_id": "U-1"}) if i % 3 == 0 else (
            "update_user_profile", '{"user_id": "U-1", "display_name": "Ana"}')
        runs.append(run(made, case_id=cid))
    cases.append(case(NO_CALL, id="thanks", messages=(user("Thanks!"),)))
    runs.append(run(case_id="thanks"))
    return cases, runs


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cases, runs = support_desk()
    return write(tmp_path / "gold.jsonl", cases), write(tmp_path / "runs.jsonl", runs)


def test_the_default_table_reports_the_dimensions_apart(files: tuple[Path, Path]) -> None:
    code, out, err = toolgold("score", str(files[0]), str(files[1]))
    assert code == 0, err
    assert "toolgold score: 13 results from 13 cases — 9 pass, 4 fail, 0 need review" in out
    for row in ("selection   accuracy", "arguments   accuracy (right tool)", "abstention  no-call precision",
                "4 of 4 failures: update_user called where update_user_profile expected"):
        assert row in out


def test_json_lists_every_case_and_reads_back(files: tuple[Path, Path], tmp_path: Path) -> None:
    code, out, _ = toolgold("score", *map(str, files), "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "toolgold.report/1"
    assert [c["case_id"] for c in document["cases"]] == [f"case-{i:02d}" for i in range(12)] + ["thanks"]
    first = document["cases"][0]
    assert (first["status"], first["matched"], [e["code"] for e in first["errors"]]) == ("fail", None, ["wrong_tool"])
    assert document["cases"][1]["matched"] == "expected"
    report, cases = load_report(out.splitlines(keepends=True))
    assert report.totals.results == 13 and len(list(cases)) == 13
    pretty, _ = load_report(json.dumps(document, indent=4).splitlines(keepends=True))
    assert pretty == report


def test_junit_is_xml_with_one_testcase_per_case(files: tuple[Path, Path]) -> None:
    code, out, _ = toolgold("score", *map(str, files), "--format", "junit")
    assert code == 0
    root = ET.fromstring(out)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "13" and suite.get("failures") == "4"
    testcases = suite.findall("testcase")
    assert len(testcases) == 13
    failure = testcases[0].find("failure")
    assert failure is not None and failure.get("type") == "wrong_tool"
    assert failure.get("message") == "called update_user where update_user_profile was expected"


def test_html_is_self_contained_with_the_confusion_heatmap(files: tuple[Path, Path], tmp_path: Path) -> None:
    out_file = tmp_path / "report.html"
    code, _, err = toolgold("score", *map(str, files), "--format", "html", "--out", str(out_file))
    assert code == 0 and f"wrote {out_file}" in err
    html = out_file.read_text(encoding="utf-8")
    assert 'data-testid="confusion-heatmap"' in html
    assert 'title="gold update_user_profile → update_user: 4"' in html
    assert "<script" not in html and "http://" not in html and "https://" not in html


def test_markdown_for_pull_requests(files: tuple[Path, Path]) -> None:
    code, out, _ = toolgold("score", *map(str, files), "--format", "markdown")
    assert code == 0
    assert out.startswith("## toolgold score")
    assert "| selection | accuracy | 69.2% | 9/13 |" in out


def test_a_threshold_below_the_score_fails_the_gate(files: tuple[Path, Path]) -> None:
    code, out, err = toolgold("score", *map(str, files), "--fail-under", "selection=0.9", "--fail-under",
                              "no_call_recall=1")
    assert code == 1
    assert "gate failed: selection is 0.6923, below 0.9" in err
    assert "FAIL selection ≥ 0.9: 69.2%" in out and "PASS no_call_recall ≥ 1: 100.0%" in out
    assert toolgold("score", *map(str, files), "--fail-under", "selection=0.5")[0] == 0


@pytest.mark.parametrize(("gate", "message"), [
    ("selection", "write METRIC=VALUE"), ("bogus=0.5", "unknown metric"), ("selection=abc", "is not a number"),
    ("selection=1.5", "between 0 and 1"), ("over_call=0.1", "lower is better"),
])
def test_a_bad_threshold_is_bad_input(files: tuple[Path, Path], gate: str, message: str) -> None:
    code, _, err = toolgold("score", *map(str, files), "--fail-under", gate)
    assert code == 2 and message in err


def test_a_bad_gold_line_is_bad_input_with_file_and_line(tmp_path: Path) -> None:
    cases, runs = support_desk(2)
    gold = write(tmp_path / "gold.jsonl", [dumps_record(cases[0]), '{"format": "toolgold.gold/1", "id": "x"}'])
    code, _, err = toolgold("score", str(gold), str(write(tmp_path / "runs.jsonl", runs)))
    assert code == 2
    assert err.startswith(f"error: {gold}:2: expected: Field required")


def test_a_bad_run_line_is_bad_input_with_file_and_line(tmp_path: Path) -> None:
    cases, runs = support_desk(2)
    gold = write(tmp_path / "gold.jsonl", cases)
    bad = write(tmp_path / "runs.jsonl", [dumps_record(runs[0]), "{not json", dumps_record(runs[1])])
    code, _, err = toolgold("score", str(gold), str(bad))
    assert (code, err.strip()) == (2, f"error: {bad}:2: not valid JSON: Expecting property name enclosed in "
                                      "double quotes (column 2)")
    no_id = write(tmp_path / "runs2.jsonl", [dumps_record(runs[0]), '{"format": "toolgold.run/1", "calls": []}'])
    code, _, err = toolgold("score", str(gold), str(no_id))
    assert code == 2 and f"{no_id}:2: case_id: Field required" in err


def test_duplicate_case_ids_and_trials_are_bad_input(tmp_path: Path) -> None:
    cases, runs = support_desk(2)
    gold = write(tmp_path / "gold.jsonl", [cases[0], cases[1], cases[0]])
    code, _, err = toolgold("score", str(gold), str(write(tmp_path / "runs.jsonl", runs)))
    assert (code, err.strip()) == (2, f"error: {gold}:3: gold case id 'case-00' appears twice (first at line 1)")
    twice = write(tmp_path / "twice.jsonl", [runs[0], runs[1], runs[0]])
    code, _, err = toolgold("score", str(write(tmp_path / "g.jsonl", cases[:2])), str(twice))
    assert (code, err.strip()) == (2, f"error: {twice}:3: a second run for case 'case-00' trial 0 (the first is "
                                      "at line 1)")


def test_unscored_input_fails_unless_allowed(tmp_path: Path) -> None:
    cases, runs = support_desk(3)
    gold = write(tmp_path / "gold.jsonl", cases)
    stray = write(tmp_path / "runs.jsonl", [*runs[1:], run(case_id="ghost")])
    code, out, err = toolgold("score", str(gold), str(stray))
    assert code == 1
    assert "UNSCORED: 1 gold case(s) have no run (e.g. case-00)" in out
    assert "UNSCORED: 1 run(s) reference unknown case ids (e.g. ghost)" in out
    assert "gate failed: unscored input: 1 case(s) without a run, 1 run(s) for unknown cases" in err
    assert toolgold("score", str(gold), str(stray), "--allow-unscored")[0] == 0


def test_runs_in_any_order_and_any_number_of_workers_give_the_same_report(tmp_path: Path) -> None:
    cases, runs = support_desk(40)
    gold = write(tmp_path / "gold.jsonl", cases)
    in_order = write(tmp_path / "runs.jsonl", runs)
    shuffled_runs = list(runs)
    random.Random(3).shuffle(shuffled_runs)
    shuffled = write(tmp_path / "shuffled.jsonl", shuffled_runs)
    one = toolgold("score", str(gold), str(in_order), "--format", "json", "--workers", "1")
    two = toolgold("score", str(gold), str(shuffled), "--format", "json", "--workers", "2")
    assert one[0] == two[0] == 0
    assert one[1] == two[1]


def baseline_files(tmp_path: Path, name: str, passes: dict[str, int]) -> tuple[Path, Path]:
    cases: list[GoldCase] = []
    runs: list[RunRecord] = []
    for tool, n_pass in passes.items():
        for i in range(100):
            cid = f"{tool}-{i}"
            cases.append(case(calls(call(tool, user_id="U-1")), id=cid, messages=(user("I'm U-1"),)))
            args: dict[str, Any] = {"user_id": "U-1"} if i < n_pass else {"user_id": "U-1", "email": "x@y.z"}
            runs.append(run((tool, args), case_id=cid))
    return write(tmp_path / f"{name}-gold.jsonl", cases), write(tmp_path / f"{name}-runs.jsonl", runs)


def test_a_baseline_regression_on_one_tool_fails_even_when_the_average_holds(tmp_path: Path) -> None:
    before = baseline_files(tmp_path, "before", {"update_user": 98, "update_user_profile": 90})
    baseline = tmp_path / "baseline.json"
    assert toolgold("score", *map(str, before), "--format", "json", "-o", str(baseline))[0] == 0
    after = baseline_files(tmp_path, "after", {"update_user": 91, "update_user_profile": 97})
    code, out, err = toolgold("score", *map(str, after), "--baseline", str(baseline), "--fail-under",
                              "pass_rate=0.9")
    assert code == 1
    assert "gate failed: update_user dropped from 98.0% to 91.0%" in err
    assert "pass_rate: 94.0% → 94.0% (+0.0 pts)" in out
    assert "McNemar (exact, 200 paired results): 7 fixed, 7 broken, p = 1 — could be noise" in out
    assert "REGRESSION update_user: 98.0% → 91.0% (−7.0 pts, more than 5.0)" in out
    relaxed = toolgold("score", *map(str, after), "--baseline", str(baseline), "--max-tool-drop", "0.1")
    assert relaxed[0] == 0


def test_a_baseline_that_is_not_a_report_is_bad_input(files: tuple[Path, Path], tmp_path: Path) -> None:
    code, _, err = toolgold("score", *map(str, files), "--baseline", str(files[0]))
    assert code == 2 and "not a toolgold.report/1 report" in err
