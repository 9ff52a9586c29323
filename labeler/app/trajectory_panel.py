"""The trajectory label of a whole transcript: the expected calls in order, how strictly the order counts,
which step needs which earlier ones, and which calls must not happen. Pre-filled from what the agent did.

Like the turn panel it is a fragment and every change is saved as a draft at once.
"""

from __future__ import annotations

import streamlit as st

from labeler.app import call_editor, decision_bar, editing, panel
from labeler.app.editing import Item, Work
from labeler.labels import ORDER_MODES, TrajectoryBody, observed_as_calls, trajectory_problems
from labeler.store import observed_calls
from labeler.tool_hints import is_destructive, is_read_only, proposed_forbidden
from scorer.model import Call, Dependency, ForbiddenCall, ToolSpec, Transcript


def agent_calls(tr: Transcript) -> tuple[Call, ...]:
    return observed_as_calls([c for m in tr.messages for c in observed_calls(m)])


def _body(work: Work) -> TrajectoryBody:
    assert isinstance(work.body, TrajectoryBody)
    return work.body


# -- callbacks -----------------------------------------------------------------------------------------


def _set_steps(item: Item, work: Work, calls: tuple[Call, ...], after: tuple[Dependency, ...],
               tools: dict[str, ToolSpec], moved: dict[int, int] | None = None) -> None:
    """Replace the steps; ``moved`` (old index -> new) when steps moved or went: a "comes from call k" rule
    then still names the call it named (a removed source is left for the problems to point out)."""
    also: dict[str, object] = {"after": after}
    if moved is not None:
        body = _body(work)
        also["arg_rules"] = {tool: {arg: rule.model_copy(update={"from_call": moved[rule.from_call]})
                                    if rule.match == "from_call" and rule.from_call in moved else rule
                                    for arg, rule in rules.items()}
                             for tool, rules in body.arg_rules.items()}
    call_editor.set_calls(item, work, calls, [], tools, regenerate=True, **also)


def _prefill(item: Item, work: Work, tr: Transcript) -> None:
    _set_steps(item, work, agent_calls(tr), (), {t.name: t for t in tr.tools})


def _renumber(after: tuple[Dependency, ...], mapping: dict[int, int]) -> tuple[Dependency, ...]:
    """Dependencies after steps moved: ``mapping`` old index -> new index (missing = removed)."""
    out = []
    for dep in after:
        if dep.step not in mapping:
            continue
        requires = tuple(sorted(mapping[r] for r in dep.requires if r in mapping and mapping[r] < mapping[dep.step]))
        if requires:
            out.append(Dependency(step=mapping[dep.step], requires=requires))
    return tuple(sorted(out, key=lambda d: d.step))


def _remove_step(item: Item, work: Work, n: int, tools: dict[str, ToolSpec]) -> None:
    body = _body(work)
    calls = body.calls[:n] + body.calls[n + 1:]
    mapping = {i: i - (i > n) for i in range(len(body.calls)) if i != n}
    _set_steps(item, work, calls, _renumber(body.after, mapping), tools, mapping)


def _move_up(item: Item, work: Work, n: int, tools: dict[str, ToolSpec]) -> None:
    body = _body(work)
    calls = list(body.calls)
    calls[n - 1], calls[n] = calls[n], calls[n - 1]
    mapping = {i: i for i in range(len(calls))} | {n: n - 1, n - 1: n}
    _set_steps(item, work, tuple(calls), _renumber(body.after, mapping), tools, mapping)


def _on_requires(item: Item, work: Work, n: int, key: str) -> None:
    body = _body(work)
    chosen = tuple(sorted(st.session_state[key] or ()))
    others = tuple(d for d in body.after if d.step != n)
    after = others + ((Dependency(step=n, requires=chosen),) if chosen else ())
    editing.change(item, work, after=tuple(sorted(after, key=lambda d: d.step)))


def _on_forbidden(item: Item, work: Work, key: str) -> None:
    """The forbidden tools chosen; one already forbidden keeps its reason and the arguments it is limited to."""
    body = _body(work)
    kept = {f.name: f for f in body.forbidden}
    chosen = st.session_state[key] or []
    editing.change(item, work, forbidden=tuple(kept.get(name) or ForbiddenCall(name=name) for name in chosen))


def _forbid_destructive(item: Item, work: Work, tools: dict[str, ToolSpec]) -> None:
    body = _body(work)
    editing.change(item, work, regenerate=True, forbidden=proposed_forbidden(
        list(tools.values()), (c.name for c in body.calls), body.forbidden))


def _on_plain(item: Item, work: Work, field: str, key: str) -> None:
    editing.change(item, work, **{field: st.session_state[key]})


def _submit(item: Item, work: Work) -> None:
    if editing.submit(item, work):
        st.toast("Trajectory submitted", icon=":material/check:")


# -- rendering -----------------------------------------------------------------------------------------


def _tool_hints(item: Item, work: Work, tools: dict[str, ToolSpec]) -> None:
    """The MCP annotations of the offered tools, and a one-click proposal of the forbidden list."""
    reads = [name for name, t in tools.items() if is_read_only(t)]
    destroys = [name for name, t in tools.items() if is_destructive(t)]
    if not reads and not destroys:
        return
    with st.container(key="tool-hints"):
        if reads:
            st.text(f"Read-only (MCP readOnlyHint): {', '.join(reads)}")
        if destroys:
            st.text(f"May destroy data (MCP destructiveHint): {', '.join(destroys)}")
        if proposed_forbidden(list(tools.values()), (c.name for c in _body(work).calls), _body(work).forbidden) \
                != _body(work).forbidden:
            st.button("Forbid the destructive tools no step uses", key=f"forbid-destructive-{item.key}",
                      icon=":material/block:", type="tertiary", on_click=_forbid_destructive,
                      args=(item, work, tools))


def _step(item: Item, work: Work, n: int, tools: dict[str, ToolSpec]) -> None:
    """Step ``n``: its place in the order, the call editor of labeling (the tool, a form from its JSON Schema,
    required keys, match rules) and the earlier steps it must come after."""
    body = _body(work)
    with st.container(key=f"step-{n}"):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.text(f"step {n}")
            if n > 0:
                st.button("", icon=":material/arrow_upward:", key=editing.widget_key(item, work, f"step{n}:up"),
                          help="Move up", type="tertiary", on_click=_move_up, args=(item, work, n, tools))
            st.button("", icon=":material/delete:", key=editing.widget_key(item, work, f"step{n}:rm"),
                      help="Remove this step", type="tertiary", on_click=_remove_step, args=(item, work, n, tools))
        call_editor.call_editor(item, work, n, tools, [], title=f"Tool (step {n})", removable=False)
        if n > 0:
            key = editing.widget_key(item, work, f"step{n}:after")
            st.multiselect("Only after steps", list(range(n)), default=list(body.requires(n)), key=key,
                           format_func=lambda i: f"step {i}: {body.calls[i].name}", on_change=_on_requires,
                           args=(item, work, n, key), placeholder="no dependency")


def steps_editor(item: Item, work: Work, tools: dict[str, ToolSpec]) -> None:
    """What a trajectory expects, editable: no action or the steps in order, how strictly the order counts,
    each step's dependencies, and the forbidden calls. The labeling panel and Review's edit-and-accept
    both show this; every change goes through ``editing.change`` (a draft save, or a reviewer's scratch copy)."""
    body = _body(work)
    key = editing.widget_key(item, work, "no_action")
    st.checkbox("No action expected", value=body.no_action, key=key, on_change=_on_plain,
                args=(item, work, "no_action", key))
    key = editing.widget_key(item, work, "order")
    st.selectbox("Order", list(ORDER_MODES), index=list(ORDER_MODES).index(body.order),
                 format_func=ORDER_MODES.__getitem__, key=key, on_change=_on_plain, args=(item, work, "order", key))
    for n in range(len(body.calls)):
        _step(item, work, n, tools)
    if tools:
        call_editor.tool_picker(item, work, tools, [], label="Add a step")
        key = editing.widget_key(item, work, "forbidden")
        st.multiselect("Forbidden calls (must not happen)", list(tools), default=[f.name for f in body.forbidden],
                       key=key, on_change=_on_forbidden, args=(item, work, key), placeholder="none")
        _tool_hints(item, work, tools)


@st.fragment
def trajectory_panel(item: Item, tr: Transcript, status_at_render: str | None) -> None:
    work = editing.load(item, tr)
    editing.retry_pending()  # an edit the database was too busy for (this session's, or restored after a reload)
    if work.status != status_at_render:
        st.rerun()
    body = _body(work)
    tools = {t.name: t for t in tr.tools}
    with st.container(key="trajectory-panel"):
        if work.conflict is not None:
            panel.conflict_box(item, work)
        panel.refused_box(item, work)
        st.subheader("Over the whole conversation: which calls, in what order?")
        if work.locked:
            panel.locked_view(item, work)
            panel.status_line(work)
            with st.container(key="retry-timer"):
                decision_bar.retry_timer(item_key=item.key, busy=work.busy is not None)
            return
        if work.editing:
            panel.editing_bar(item, work)
        st.button("Start from the agent's calls", key=f"prefill-{item.key}", icon=":material/content_copy:",
                  on_click=_prefill, args=(item, work, tr))
        steps_editor(item, work, tools)
        panel.details(item, work)
        panel.status_line(work)
        with st.container(key="retry-timer"):  # the bar's 2 s retry of a busy save (this panel has no bar)
            decision_bar.retry_timer(item_key=item.key, busy=work.busy is not None)
        blocking = work.problems or (trajectory_problems(body, tr.tools) if work.status else [])
        if blocking:
            with st.container(key="problems"):
                st.caption("Before submitting")
                for n, text in enumerate(blocking):
                    panel.problem(text, f"tproblem-{n}")
        st.button("Submit trajectory", key=f"submit-trajectory-{item.key}", type="primary", shortcut="Ctrl+Enter",
                  icon=":material/check:", on_click=_submit, args=(item, work))
