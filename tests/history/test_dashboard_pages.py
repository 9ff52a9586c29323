"""The run-history pages under AppTest: the real app script on a store holding runs scored and saved through
the Python API (tests/history/kit.py)."""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.store import ImportItem, RunInfo, Store, score_and_save
from labeler.store.history import RunMeta
from scorer.formats import dumps_record
from tests.app.conftest import APP_MAIN
from tests.history.kit import FAULTS, agent_runs, gold_cases

HISTORY, RUN, COMPARE = "pages_/runs.py", "pages_/run.py", "pages_/compare.py"


def open_page(app: AppTest, page: str, **params: str) -> AppTest:
    # Who is signed in is what the sidebar picker sets (the URL has no say); by default the admin root.
    app.session_state["user"] = params.pop("user", None) or signed_in_admin()
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page(page)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def signed_in_admin() -> str:
    store = Store(os.environ["TOOLGOLD_DB"])
    if store.get_user("root") is None:
        store.add_user("root", "admin")
    store.close()
    return "root"


def texts_in(app: AppTest, key: str) -> list[str]:
    return [t.value for t in app.get_by_key(key).text] if app.get_by_key(key) else []


def container(app: AppTest, key: str) -> Any:
    found = [c for c in app.get("flex_container") if getattr(c, "key", None) == key]
    assert found, f"no container {key!r}"
    return found[0]


def links(node: Any) -> list[tuple[str, str, dict[str, str]]]:
    """(page, label, query params) of every page link under ``node``."""
    out = []
    for link in node.get("page_link"):
        params = {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}
        out.append((link.proto.page, link.proto.label, params))
    return out


def chart_data(app: AppTest, title: str) -> pd.DataFrame:
    for chart in app.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        layers = spec.get("layer", [spec])
        if any(layer.get("title") == title for layer in layers) or spec.get("title") == title:
            return pa.ipc.open_stream(chart.proto.datasets[0].data.data).read_pandas()
    raise AssertionError(f"no chart titled {title!r}")


def all_texts(node: Any) -> list[str]:
    return [t.value for t in node.get("text")]


# -- Run history ----------------------------------------------------------------------------------


def test_with_no_saved_runs_the_pages_say_how_to_save_one(store: Store, app: AppTest) -> None:
    for page in (HISTORY, RUN, COMPARE):
        open_page(app, page)
        assert "toolgold score GOLD.jsonl RUNS.jsonl --save" in app.info[0].value


def test_history_lists_the_runs_and_draws_the_dimensions_over_time(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, HISTORY)
    table = app.table[0].value
    assert table["Run"].tolist() == ["run-v1", "run-v2", "run-v3"]
    assert table["Pass rate"].tolist() == ["93.2%", "94.6%", "94.6%"]
    assert table["Commit"].tolist() == ["abc0", "abc1", "abc2"]
    dims = chart_data(app, "Pass rate and dimensions")
    pass_rate = dims[dims.metric == "pass_rate"]
    assert pass_rate.run.tolist() == ["1 · prompt v1", "2 · prompt v2", "3 · prompt v3"]
    assert pass_rate["count"].tolist() == ["69/74", "70/74", "70/74"]
    risks = chart_data(app, "Redundancy, ungrounded values and fabrication (lower is better)")
    fabricated = risks[risks.metric == "fabricated"]
    assert fabricated["count"].tolist() == ["1/6", "1/6", "0/6"]
    assert set(risks.metric) == {"redundancy", "ungrounded", "fabricated"}
    assert links(app.main)[:2] == [
        ("run", "Open the latest run \\(prompt v3\\)", {"run": "run-v3"}),
        ("compare", "Compare the last two runs", {"a": "run-v2", "b": "run-v3"})]


def test_the_tool_that_dropped_stands_out_and_links_to_its_failing_cases(three_runs: list[RunInfo],
                                                                          app: AppTest) -> None:
    open_page(app, HISTORY)
    assert texts_in(app, "tool-summary") == [
        "1 tool(s) dropped by more than 5 points since the run before: search_orders 91.7% → 66.7%"]
    flagged = container(app, "tool-flagged-0")
    assert all_texts(flagged) == ["search_orders", "100.0%", "91.7%", "66.7%", "12 results"]
    assert [m.value for m in flagged.get("markdown")] == [":red-badge[:material/trending_down: -25.0 pts]"]
    assert links(flagged) == [("run", "4 failing", {"run": "run-v3", "tool": "search_orders"})]
    calm = container(app, "tool-row-4")
    assert all_texts(calm) == ["get_shipping_estimate", "100.0%", "100.0%", "100.0%", "+0.0 pts", "none failing",
                               "12 results"]
    lines = chart_data(app, "Pass rate per tool")
    assert lines[lines.flagged]["tool"].unique().tolist() == ["search_orders"]
    # A higher threshold: 25 points is not beyond 30.
    app.number_input(key="drop").set_value(30.0).run()
    assert texts_in(app, "tool-summary") == ["No tool dropped by more than 30 points since the run before."]


def test_runs_on_another_gold_version_are_kept_out_of_the_lines(three_runs: list[RunInfo], store: Store,
                                                                app: AppTest) -> None:
    other = gold_cases(changed="get_order-05")
    runs = agent_runs(other, FAULTS["v1"], run_id="run-new-gold", model="model-b")
    _, moved = score_and_save(store, other, runs, RunMeta(created_at="2025-06-09T10:00:00.000Z"))
    open_page(app, HISTORY)
    assert app.table[0].value["Run"].tolist() == ["run-new-gold"]
    caption = [c.value for c in app.get_by_key("other-versions").caption]
    assert caption == ["3 run(s) on 1 other gold version(s) are not in these lines: runs are only compared on "
                       "the same gold version."]
    app.selectbox(key="pick-gold").select(three_runs[0].gold_version).run()
    assert app.query_params["gold"] == three_runs[0].gold_version
    assert app.table[0].value["Run"].tolist() == ["run-v1", "run-v2", "run-v3"]
    assert moved.gold_version != three_runs[0].gold_version


# -- One run --------------------------------------------------------------------------------------


def test_a_tool_link_lands_on_its_failing_cases(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, RUN, run="run-v3", tool="search_orders")
    assert all_texts(container(app, "case-filter")) == ["4 failing: expecting search_orders"]
    rows = [all_texts(container(app, f"case-row-{n}")) for n in range(4)]
    assert rows == [["search_orders-00", "missing_required_arg", "search_orders → search_orders"],
                    ["search_orders-01", "missing_required_arg", "search_orders → search_orders"],
                    ["search_orders-02", "missing_call", "search_orders → no call"],
                    ["search_orders-03", "wrong_tool", "search_orders → get_order"]]
    assert links(container(app, "case-row-3")) == [
        ("run", "Open", {"run": "run-v3", "tool": "search_orders", "case": "search_orders-03", "trial": "0"})]


def test_an_opened_case_shows_the_gold_and_the_actual_call_side_by_side(three_runs: list[RunInfo],
                                                                      app: AppTest) -> None:
    open_page(app, RUN, run="run-v3", tool="search_orders", case="search_orders-03", trial="0")
    view = container(app, "case-view")
    assert all_texts(view)[:2] == ["search_orders-03 · fail",
                                   "wrong_tool: called get_order where search_orders was expected"]
    gold, actual = container(app, "gold-side"), container(app, "actual-side")
    assert all_texts(gold) == ["Call", "search_orders"]
    assert [c.value for c in gold.get("code")] == ['{\n  "customer_id": "C-1003"\n}']
    assert all_texts(actual) == ["1 call(s)", "get_order"]
    assert [c.value for c in actual.get("code")] == ['{\n  "customer_id": "C-1003"\n}']
    assert "Show me the orders of customer C-1003." in all_texts(container(app, "case-context"))
    assert links(container(app, "case-row-3"))[0][1] == "Shown"


def test_failure_patterns_are_ranked_and_open_their_cases(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, RUN, run="run-v1")
    assert all_texts(container(app, "pattern-1")) == [
        "1. 2 of 5 failures: update_user called where update_user_profile expected  [wrong_tool]"]
    [(page, label, params)] = links(container(app, "pattern-1"))
    assert (page, label, params) == ("run", "Open 2", {
        "run": "run-v1", "code": "wrong_tool", "pattern": "update_user called where update_user_profile expected"})
    open_page(app, RUN, **params)
    assert all_texts(container(app, "case-filter")) == [
        "2 failing: update_user called where update_user_profile expected"]
    assert [all_texts(container(app, f"case-row-{n}"))[0] for n in range(2)] == [
        "update_user_profile-00", "update_user_profile-01"]


def test_the_confusion_heatmap_has_no_call_and_the_breakdowns_by_toolkit_size_and_tag(
        three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, RUN, run="run-v1")
    cells = [c for c in app.get("vega_lite_chart") if "share of row" in c.proto.spec]
    frame = pa.ipc.open_stream(cells[0].proto.datasets[0].data.data).read_pandas()
    as_rows = {(r.gold, r.actual): r["count"] for _, r in frame.iterrows()}
    assert as_rows[("NO_CALL", "book_table")] == 1  # asked to clarify, booked with invented values
    assert as_rows[("NO_CALL", "get_order")] == 1  # no call needed, called anyway
    assert as_rows[("NO_CALL", "NO_CALL")] == 12
    assert as_rows[("update_user_profile", "update_user")] == 2
    sizes = app.get_by_key("by-toolkit_size").table[0].value
    assert sizes.to_dict("list") == {"Toolkit size": ["2-5", "6-10"], "Results": [52, 22],
                                     "Pass rate": ["90.4% (47/52)", "100.0% (22/22)"],
                                     "Selection": ["92.3%", "100.0%"], "Arguments": ["97.4%", "100.0%"]}
    tags = app.get_by_key("by-tag").table[0].value
    assert dict(zip(tags["Tag"], tags["Pass rate"], strict=True))["happy_path"] == "85.0% (17/20)"


def test_picking_another_run_forgets_the_case_and_an_unknown_run_is_reported(three_runs: list[RunInfo],
                                                                            app: AppTest) -> None:
    open_page(app, RUN, run="run-v3", tool="search_orders", case="search_orders-03")
    app.selectbox(key="pick-run").select("run-v1").run()
    assert dict(app.query_params) == {"run": "run-v1"}
    assert all_texts(container(app, "case-filter")) == ["5 failing (all)"]
    app2 = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    open_page(app2, RUN, run="nope")
    assert app2.error[0].value == md_escape("no saved run with id 'nope' (toolgold runs list shows the saved runs)")


# -- Compare --------------------------------------------------------------------------------------


def test_compare_shows_fixed_broken_still_failing_and_mcnemar(three_runs: list[RunInfo], app: AppTest) -> None:
    open_page(app, COMPARE)
    assert [m.value for m in app.metric] == ["3", "3", "1", "1"]
    assert all_texts(container(app, "mcnemar")) == [
        "74 paired results; 3 fixed vs 3 broken — not significant at 0.05: could be noise."]
    assert [all_texts(container(app, f"broken-{n}")) for n in range(3)] == [
        ["search_orders-01", "pass → missing_required_arg"], ["search_orders-02", "pass → missing_call"],
        ["search_orders-03", "pass → wrong_tool"]]
    assert links(container(app, "fixed-0")) == [("run", "Open", {"run": "run-v2", "case": "book-00", "trial": "0"})]
    tools = app.get_by_key("tool-deltas").table[0].value
    assert tools[tools.Tool == "search_orders"].iloc[0].tolist() == ["search_orders", "91.7%", "66.7%",
                                                                     "-25.0 pts"]
    dims = app.get_by_key("dimension-deltas").table[0].value
    assert dims[dims.Metric == "fabricated"].iloc[0].tolist() == ["fabricated", "16.7%", "0.0%", "-16.7 pts"]


def test_runs_on_different_gold_versions_are_not_compared(three_runs: list[RunInfo], store: Store,
                                                          app: AppTest) -> None:
    other = gold_cases(changed="get_order-05")
    _, moved = score_and_save(store, other, agent_runs(other, {}, run_id="run-new-gold", model="m"),
                              RunMeta(created_at="2025-06-09T10:00:00.000Z"))
    open_page(app, COMPARE, a="run-v3", b="run-new-gold")
    [warning] = app.get_by_key("version-mismatch").warning
    assert warning.value == md_escape(
        f"These runs were scored on different gold versions, so they are not compared: run-v3 on "
        f"{three_runs[2].gold_version}, run-new-gold on {moved.gold_version}. Pick two runs on the same gold "
        "version.")
    assert not app.metric


# -- Scoring from the app -------------------------------------------------------------------------


def frozen_gold(store: Store, *users: tuple[str, str]) -> str:
    """The kit's gold set imported, approved and frozen as a version; ``users`` are added (root is admin)."""
    store.add_user("root", "admin")
    for name, role in users:
        store.add_user(name, role, actor="root")
    store.import_items([ImportItem(case, "gold.jsonl", n) for n, case in enumerate(gold_cases(), start=1)])
    return store.freeze("regression", actor="root").id


def upload_and_submit(app: AppTest, name: str, content: bytes) -> None:
    app.get("file_uploader")[0].upload(name, content)
    app.get("form_submit_button")[0].click().run()
    assert not app.exception, [e.value for e in app.exception]


def test_a_reviewer_scores_uploaded_runs_against_a_frozen_version(store: Store, app: AppTest) -> None:
    version = frozen_gold(store, ("rita", "reviewer"))
    runs = agent_runs(gold_cases(), FAULTS["v3"], run_id="uploaded", model="model-z")
    open_page(app, HISTORY, user="rita")
    assert "toolgold score GOLD.jsonl RUNS.jsonl --save" in app.info[0].value  # nothing saved yet
    app.selectbox(key="score-version").select(version)
    app.text_input(key="score-label").input("prompt v3")
    upload_and_submit(app, "v3.jsonl", "".join(dumps_record(r) + "\n" for r in runs).encode())
    [saved] = app.get_by_key("score-saved").success
    assert saved.value == md_escape(f"Saved run uploaded on {version}: 70 pass, 4 fail, 0 need review of 74 results")
    assert links(container(app, "score-saved")) == [("run", "Open prompt v3", {"run": "uploaded"})]
    [info] = store.list_runs()
    assert (info.run_id, info.gold_version, info.label, info.model, info.source) == (
        "uploaded", version, "prompt v3", "model-z", "app")
    assert app.table[0].value["Run"].tolist() == ["uploaded"]


def test_annotators_cannot_score_and_a_bad_file_names_its_line(store: Store, app: AppTest) -> None:
    frozen_gold(store, ("ann", "annotator"))
    open_page(app, HISTORY, user="ann")
    assert not app.get("file_uploader")
    assert [t.value for t in app.main.text] == ["Run history is for reviewers and admins; you are signed in as ann "
                                                "(annotator)."]
    admin = open_page(AppTest.from_file(str(APP_MAIN), default_timeout=30), HISTORY, user="root")
    upload_and_submit(admin, "bad.jsonl", b'{"format": "toolgold.run/1", "case_id": "a"}\n{"nope": 1}\n')
    [error] = admin.get_by_key("score-error").error
    assert error.value == md_escape(
        "bad.jsonl:2: missing 'format' (one of: toolgold.transcript/1, toolgold.gold/1, toolgold.run/1)")
    assert store.list_runs() == []
