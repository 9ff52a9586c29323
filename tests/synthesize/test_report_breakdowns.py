"""Reports break scores out by origin (real vs synthetic) and by transformation, so a team sees that its agent
holds up on real traffic but confuses near-duplicate tools."""

from __future__ import annotations

from scorer.render.html import render_html
from scorer.render.markdown import render_markdown
from scorer.render.table import render_table
from scorer.report import report_of
from scorer.synthesize import near_duplicate_tool, stale_context
from tests.synthesize.kit import demo, run_of

PARENTS = ("tooltalk/DeleteReminder-easy/turn-2", "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4")


def test_an_agent_that_holds_up_on_real_cases_but_takes_the_decoy_shows_it_per_transformation() -> None:
    from scorer.api import score_case

    results = []
    for parent_id in PARENTS:
        parent = demo(parent_id)
        call = parent.expected.calls[0]
        results.append([score_case(parent, run_of(parent, (call.name, call.arguments)))])
        decoyed = near_duplicate_tool(parent, seed=0).case
        decoy = next(t.name for t in decoyed.tools if t.name not in {x.name for x in parent.tools})
        results.append([score_case(decoyed, run_of(decoyed, (decoy, call.arguments)))])
        switched = stale_context(parent, seed=0).case
        new = switched.expected.calls[0]
        results.append([score_case(switched, run_of(switched, (new.name, new.arguments)))])
    report = report_of(results)
    origin = {k: (g.results, g.passed.count) for k, g in report.breakdowns["origin"].items()}
    assert origin == {"real": (2, 2), "synthetic": (4, 2)}
    transformation = {k: (g.results, g.passed.count, g.selection.count)
                      for k, g in report.breakdowns["transformation"].items()}
    assert transformation == {"near_duplicate_tool": (2, 0, 0), "stale_context": (2, 2, 2)}
    html = render_html(report)
    assert "<h2>Real vs synthetic</h2>" in html and "<h2>By transformation</h2>" in html
    assert "### Real vs synthetic" in render_markdown(report)
    assert "| synthetic: near_duplicate_tool | 2 | 0.0% (0/2) | 0.0% | — |" in render_markdown(report)
    table = render_table(report)
    assert [line.split()[:3] for line in table.splitlines() if line.startswith(("real ", "synthetic"))] == [
        ["real", "2", "100.0%"], ["synthetic", "4", "50.0%"], ["synthetic:", "near_duplicate_tool", "2"],
        ["synthetic:", "stale_context", "2"]]


def test_a_report_of_real_cases_only_has_one_origin_row_and_no_transformations() -> None:
    from scorer.api import score_case

    parent = demo(PARENTS[0])
    call = parent.expected.calls[0]
    report = report_of([[score_case(parent, run_of(parent, (call.name, call.arguments)))]])
    assert list(report.breakdowns["origin"]) == ["real"]
    assert report.breakdowns["transformation"] == {}
    assert "Real vs synthetic" not in render_markdown(report) + render_html(report)
    assert "synthetic" not in render_table(report)
