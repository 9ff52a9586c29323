"""Issue 16 on the run-history pages: what the regression flag left out, labeled tool lines, charts."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from labeler.store import RunInfo, Store, score_and_save
from labeler.store.history import RunMeta
from tests.history.kit import agent_runs, gold_cases
from tests.history.test_dashboard_pages import COMPARE, HISTORY, chart_data, open_page, texts_in


def test_the_regression_flag_says_which_tool_it_left_out_for_too_few_results(three_runs: list[RunInfo],
                                                                             app: AppTest) -> None:
    open_page(app, HISTORY)
    app.number_input(key="support").set_value(13).run()  # search_orders has 12 results per run
    assert texts_in(app, "tool-summary") == [
        "No tool flagged: none dropped by more than 5 points since the run before with at least 13 results in "
        "both runs.",
        "Left out for too few results (fewer than 13 in one of the two runs): search_orders 91.7% → 66.7% "
        "(12 and 12 results). Lower the minimum above to flag them."]


def test_each_tool_line_is_labeled_with_its_name(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, HISTORY)
    [spec] = [spec for spec in (json.loads(c.proto.spec) for c in app.get("vega_lite_chart"))
              if any(layer.get("title") == "Pass rate per tool" for layer in spec.get("layer", []))]
    [text] = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert text["encoding"]["text"]["field"] == "tool"


def test_run_history_draws_a_tool_by_run_heatmap(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, HISTORY)
    cells = chart_data(app, "Pass rate per tool and run")
    search = cells[cells.tool == "search_orders"]
    assert search.run.tolist() == ["1 · prompt v1", "2 · prompt v2", "3 · prompt v3"]
    assert [round(v, 3) for v in search["pass rate"]] == [1.0, 0.917, 0.667]


def test_compare_draws_before_after_slopes_per_metric_and_per_tool(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, COMPARE)
    metrics = chart_data(app, "Before → after, per metric")
    fabricated = metrics[metrics.name == "fabricated"]
    assert fabricated.side.tolist() == ["before", "after"]
    assert [round(v, 3) for v in fabricated.value] == [0.167, 0.0]
    tools = chart_data(app, "Before → after, pass rate per tool")
    assert [round(v, 3) for v in tools[tools.name == "search_orders"].value] == [0.917, 0.667]


def test_compare_defaults_to_the_two_latest_runs_that_can_be_compared(three_runs: list[RunInfo], store: Store,
                                                                     app: AppTest) -> None:
    other = gold_cases(changed="get_order-05")  # the newest run is on another gold version
    score_and_save(store, other, agent_runs(other, {}, run_id="run-new-gold", model="m"),
                   RunMeta(created_at="2025-06-09T10:00:00.000Z"))
    open_page(app, COMPARE)
    assert not app.warning  # not "these runs were scored on different gold versions"
    assert (app.query_params.get("a"), app.query_params.get("b")) in ((None, None), ("run-v2", "run-v3"))
    assert [m.value for m in app.metric] == ["3", "3", "1", "1"]  # run-v2 → run-v3, as with three runs
