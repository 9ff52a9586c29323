"""The app's Run page and `toolgold score --save` score with one engine (scorer/engine.py): the same gold and
run files give the same saved run, whichever of the two scored them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from labeler.cli import cli
from labeler.store import Store
from scorer.formats import dumps_record
from scorer.model import RunRecord
from tests.history.kit import FAULTS, agent_runs, gold_cases
from tests.history.test_dashboard_pages import HISTORY, frozen_gold, open_page, upload_and_submit


def _runs_file(path: Path, run_id: str) -> bytes:
    runs = agent_runs(gold_cases(), FAULTS["v1"], run_id=run_id, model="model-a")
    # What makes two scoring paths differ: runs in another order than the gold, several trials of a case
    # in between, runs for cases the gold does not have (named in file order, not sorted), a case with no run.
    extra = [RunRecord(case_id=f"gone-{name}", calls=()) for name in ("zulu", "alpha", "mike")]
    second = runs[3].model_copy(update={"trial": 1, "calls": ()})
    kept = [r for r in runs if r.case_id != runs[5].case_id]
    records = [*kept[::-1][:10], extra[0], second, *kept[::-1][10:], extra[1], extra[2]]
    content = "".join(dumps_record(r) + "\n" for r in records).encode()
    path.write_bytes(content)
    return content


def _saved(store: Store, run_id: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    report = store.run_report(run_id).model_dump(mode="json")
    return report, [json.loads(line) for line in store.result_lines(run_id)]


def test_the_app_saves_the_very_run_the_cli_saves_from_the_same_files(store: Store, app: AppTest,
                                                                      tmp_path: Path) -> None:
    version = frozen_gold(store, ("rita", "reviewer"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(line + "\n" for line in store.iter_version_lines(version, actor="root")),
                    encoding="utf-8")
    content = _runs_file(tmp_path / "runs.jsonl", "from-cli")
    result = CliRunner().invoke(cli, ["score", str(gold), str(tmp_path / "runs.jsonl"), "--save",
                                      "--allow-unscored"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr

    open_page(app, HISTORY, user="rita")
    app.selectbox(key="score-version").select(version)
    upload_and_submit(app, "runs.jsonl", content.replace(b'"from-cli"', b'"from-app"'))
    assert app.get_by_key("score-saved").success, [e.value for e in app.error]

    cli_report, cli_results = _saved(store, "from-cli")
    app_report, app_results = _saved(store, "from-app")
    assert cli_report["unscored"]["examples_unknown"] == ["gone-zulu", "gone-alpha", "gone-mike"]
    assert cli_report["unscored"]["cases_without_run"] == 1
    assert app_report == cli_report
    assert app_results == cli_results
    assert {r.run_id: r.gold_version for r in store.list_runs()} == {"from-cli": version, "from-app": version}
