"""The CI recipe (docs/ci.md) runs as written: the script end to end with a Python agent, twice, as the main
line and then as a pull request that breaks one tool; and the PR comment stays PR-sized."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from labeler.store import Store
from scorer.api import score
from scorer.compare import compare, pair_outcomes
from scorer.formats import dumps_record
from scorer.model import Answer, Call, GoldCase, Message, RunCall, RunRecord, ToolSpec
from scorer.render import render_markdown
from tests.history.kit import gold_cases

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docs" / "ci" / "toolgold-eval.sh"
WORKFLOW = REPO / "docs" / "ci" / "toolgold.yml"
GITHUB_COMMENT_LIMIT = 65_536


def eval_script(tmp_path: Path, faults: str, **env: str) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    full = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
            "GOLD": str(tmp_path / "gold.jsonl"), "AGENT": "python:tests.history.ci_agent:answer",
            "TOOLGOLD_TEST_FAULTS": faults, "GATES": "--fail-under selection=0.9 --max-tool-drop 0.05",
            "OUT": str(tmp_path / f"out-{faults}"), **env}
    full.pop("MODEL", None)
    return subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=full, capture_output=True, text=True,
                          timeout=300)


def test_the_script_gates_a_pull_request_against_the_main_lines_last_run(tmp_path: Path, isolated_db: Path) -> None:
    (tmp_path / "gold.jsonl").write_text("".join(dumps_record(c) + "\n" for c in gold_cases()), encoding="utf-8")

    main = eval_script(tmp_path, "v2", SAVE="1", LABEL="main@abc", GIT_COMMIT="abc", PROMPT_VERSION="p2")
    assert main.returncode == 0, main.stderr
    assert "no saved run on gold version sha256:" in main.stderr  # the first run has no baseline
    out = tmp_path / "out-v2"
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "report.json", "runs.jsonl", "summary.md"]
    store = Store(isolated_db)
    [saved] = store.list_runs()
    assert (saved.label, saved.git_commit, saved.prompt_version, saved.results, saved.passed) == (
        "main@abc", "abc", "p2", 74, 70)

    pr = eval_script(tmp_path, "v3")
    assert pr.returncode == 1, pr.stderr
    assert "gate failed: search_orders dropped from 91.7% to 66.7%" in pr.stderr
    summary = (tmp_path / "out-v3" / "summary.md").read_text()
    assert "- REGRESSION search_orders: 91.7% → 66.7% (−25.0 pts, more than 5.0)" in summary
    assert "- McNemar (exact, 74 paired results): 3 fixed, 3 broken, p = 1 — could be noise" in summary
    assert "- PASS selection ≥ 0.9: 97.3%" in summary
    suite = ET.parse(tmp_path / "out-v3" / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("74", "4")
    assert [r.run_id for r in store.list_runs()] == [saved.run_id]  # a pull request is not history
    store.close()


def test_the_docs_show_the_workflow_as_it_is() -> None:
    doc = (REPO / "docs" / "ci.md").read_text()
    [snippet] = re.findall(r"```yaml\n(.*?)```", doc, flags=re.S)
    assert snippet in WORKFLOW.read_text()
    assert "bash docs/ci/toolgold-eval.sh" in WORKFLOW.read_text()
    for command in ("toolgold runs baseline", "toolgold run ", "--format junit", "--format markdown", "--save"):
        assert command in SCRIPT.read_text(), command


def test_the_markdown_summary_stays_pr_sized_with_thousands_of_tools() -> None:
    tools = [ToolSpec(name=f"tool_{n:04d}", parameters={"type": "object", "properties": {"q": {"type": "string"}},
                                                        "required": ["q"]}) for n in range(1500)]
    cases = [GoldCase(id=f"case-{n:05d}", messages=(Message(role="user", content=f"q{n}"),), tools=(tools[n % 1500],),
                      expected=Answer(behavior="call", calls=(Call(name=tools[n % 1500].name,
                                                                   arguments={"q": f"q{n}"}),)))
             for n in range(6000)]
    good = [RunRecord(case_id=c.id, calls=(RunCall(name=c.expected.calls[0].name, arguments=c.expected.calls[0].arguments),))
            for c in cases]
    # Tool n loses n % 4 of its 4 cases: the worst drop (75 pts) belongs to tools 3, 7, 11, ...
    bad = [RunRecord(case_id=c.id, calls=(RunCall(name=c.expected.calls[0].name,
                                                  arguments={"q": "x" * 400, "extra": "y" * 400}),))
           if (n // 1500) < (n % 1500) % 4 else good[n] for n, c in enumerate(cases)]
    before, after = score(cases, good), score(cases, bad)
    paired = pair_outcomes({(c.case_id, c.trial): c.status == "pass" for c in before.cases},
                           [(c.case_id, c.trial, c.status == "pass") for c in after.cases])
    report = after.model_copy(update={"comparison": compare(after, before, paired, min_tool_support=1)})
    assert len(report.comparison.regressions) == 1125  # type: ignore[union-attr]
    text = render_markdown(report)
    assert len(text) < GITHUB_COMMENT_LIMIT * 0.7
    lines = text.splitlines()
    regressions = [line for line in lines if line.startswith("- REGRESSION ")]
    assert len(regressions) == 25
    assert all("(−75.0 pts" in line for line in regressions)
    assert "- (+1100 more tool regressions in the JSON report)" in lines
