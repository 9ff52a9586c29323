"""Issue 16 on the run-history pages: what the regression flag left out, labeled tool lines, charts."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from labeler.store import RunInfo
from tests.history.test_dashboard_pages import HISTORY, open_page, texts_in


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
    [spec] = [json.loads(c.proto.spec) for c in app.get("vega_lite_chart")
              if "Pass rate per tool" in c.proto.spec]
    [text] = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert text["encoding"]["text"]["field"] == "tool"
