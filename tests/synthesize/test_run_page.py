"""The Run page breaks a saved run out by real vs synthetic and by transformation (AppTest, real store)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.store import Store, score_and_save
from labeler.store.history import RunMeta
from scorer.model import RunRecord
from scorer.synthesize import near_duplicate_tool, stale_context
from tests.history.test_dashboard_pages import open_page
from tests.synthesize.kit import demo, run_of

PARENTS = ("tooltalk/DeleteReminder-easy/turn-2", "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4")


def _cases_and_runs() -> tuple[list, list[RunRecord]]:  # type: ignore[type-arg]
    cases, runs = [], []
    for parent_id in PARENTS:
        parent = demo(parent_id)
        call = parent.expected.calls[0]
        decoyed = near_duplicate_tool(parent, seed=0).case
        decoy = next(t.name for t in decoyed.tools if t.name not in {x.name for x in parent.tools})
        switched = stale_context(parent, seed=0).case
        cases += [parent, decoyed, switched]
        runs += [run_of(parent, (call.name, call.arguments)), run_of(decoyed, (decoy, call.arguments)),
                 run_of(switched, (call.name, call.arguments))]  # kept the old value: stale
    return cases, runs


def test_the_run_page_shows_real_vs_synthetic_and_each_transformation(store: Store, app: AppTest) -> None:
    cases, runs = _cases_and_runs()
    score_and_save(store, cases, runs, RunMeta(run_id="synthetic-run"))
    open_page(app, "pages_/run.py", run="synthetic-run")
    origin = app.get_by_key("by-origin").table[0].value
    assert origin.to_dict("list")["Pass rate"] == ["100.0% (2/2)", "0.0% (0/4)"]
    assert origin.to_dict("list")["Results"] == [2, 4]
    per_transform = app.get_by_key("by-transformation").table[0].value.to_dict("list")
    assert per_transform["Transformation"] == ["near_duplicate_tool", "stale_context"]
    assert per_transform["Selection"] == ["0.0%", "100.0%"]
    assert per_transform["Arguments"] == ["—", "0.0%"]


def test_a_run_on_real_cases_only_has_no_synthetic_section(store: Store, app: AppTest) -> None:
    parent = demo(PARENTS[0])
    call = parent.expected.calls[0]
    score_and_save(store, [parent], [run_of(parent, (call.name, call.arguments))], RunMeta(run_id="real-run"))
    open_page(app, "pages_/run.py", run="real-run")
    assert app.get_by_key("by-tag")
    with pytest.raises(KeyError):
        app.get_by_key("by-origin")
