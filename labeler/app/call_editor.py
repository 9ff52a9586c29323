"""Editing one expected call: the tool, its arguments (a form generated from the JSON Schema, or raw
JSON), the keys it must carry, and how each argument is matched.

Every edit goes straight into the label body and is saved (``editing.change``). Values are checked
against the tool's schema on every render, and the errors are shown next to the argument they concern.
Names from tool schemas are untrusted text: they are escaped wherever Streamlit would read Markdown.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from labeler.app import editing, render
from labeler.app.editing import Item, Work
from labeler.labels import (
    LabelBody,
    RuleDraft,
    TrajectoryBody,
    argument_errors,
    same_as_observed,
    suggest_match,
)
from labeler.tool_hints import hint
from scorer.model import MATCH_KINDS, Call, ToolSpec

MATCH_LABELS = {
    "exact": "exact", "one_of": "one of (extra accepted values)", "any": "any value (key only)",
    "ci": "case-insensitive", "normalized": "normalized (BFCL: case, spaces, ,./-_*^)",
    "number": "number ± tolerance", "date": "date", "datetime": "date and time",
    "currency": "currency amount", "phone": "phone number", "regex": "regular expression",
    "semantic": "semantic (intent)", "from_call": "comes from call k",
}
NEEDS_PARAMETER = {"one_of", "regex", "semantic", "from_call"}


class _Unset:
    def __repr__(self) -> str:
        return "—"


UNSET = _Unset()


def suggested_rules(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, RuleDraft]:
    """Rules suggested by the schema for the arguments present, where they need no further input."""
    out = {}
    for arg in arguments:
        kind = suggest_match(arg, spec.properties.get(arg, {}))
        if kind != "exact" and kind not in NEEDS_PARAMETER:
            out[arg] = RuleDraft(match=kind)
    return out


def with_suggestions(rules: dict[str, dict[str, RuleDraft]], calls: tuple[Call, ...],
                     tools: dict[str, ToolSpec]) -> dict[str, dict[str, RuleDraft]]:
    """``rules`` plus schema suggestions for argument keys that have no rule yet."""
    merged = {tool: dict(r) for tool, r in rules.items()}
    for call in calls:
        spec = tools.get(call.name)
        if spec is None:
            continue
        for arg, rule in suggested_rules(spec, call.arguments).items():
            merged.setdefault(call.name, {}).setdefault(arg, rule)
    return {tool: r for tool, r in merged.items() if r}


# -- callbacks (they run before the fragment re-renders) --------------------------------------------------


def calls_body(work: Work) -> LabelBody | TrajectoryBody:
    """The body whose expected calls this editor edits: a turn label's calls or a trajectory's steps."""
    return work.body


def set_calls(item: Item, work: Work, calls: tuple[Call, ...], observed: list[dict[str, Any]],
              tools: dict[str, ToolSpec], *, regenerate: bool = False, **also: Any) -> None:
    """Replace the expected calls (with ``also``: other fields in the same save). "Same as observed" becomes
    "Different call" once they differ; a trajectory with steps expects action."""
    body = calls_body(work)
    rules = also.pop("arg_rules", body.arg_rules)
    fields: dict[str, Any] = {"calls": calls, "arg_rules": with_suggestions(rules, calls, tools)}
    if isinstance(body, LabelBody) and body.decision == "same" and not same_as_observed(observed, calls):
        fields["decision"] = "different"
    if isinstance(body, TrajectoryBody) and calls:
        fields["no_action"] = False
    editing.change(item, work, regenerate=regenerate, **fields, **also)


def _replace_call(work: Work, n: int, call: Call) -> tuple[Call, ...]:
    calls = list(calls_body(work).calls)
    calls[n] = call
    return tuple(calls)


def _on_tool(item: Item, work: Work, n: int, key: str, observed: list[dict[str, Any]],
             tools: dict[str, ToolSpec]) -> None:
    name = st.session_state[key]
    spec = tools[name]
    kept = {k: v for k, v in calls_body(work).calls[n].arguments.items() if k in spec.properties}
    set_calls(item, work, _replace_call(work, n, Call(name=name, arguments=kept)), observed, tools,
              regenerate=True)


def _on_arg(item: Item, work: Work, n: int, arg: str, key: str, kind: str, observed: list[dict[str, Any]],
            tools: dict[str, ToolSpec]) -> None:
    raw = st.session_state[key]
    errors = work_errors(work)
    errors.pop(f"{n}:{arg}", None)
    if raw is UNSET or raw is None or (kind in ("string", "json") and raw == ""):
        value: Any = UNSET
    elif kind == "json":
        try:
            value = editing.typed_json(raw)
        except ValueError as exc:
            errors[f"{n}:{arg}"] = f"not valid JSON: {exc}"
            return
    elif kind == "integer" and isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    else:
        value = raw
    args = dict(calls_body(work).calls[n].arguments)
    if (value is UNSET and arg not in args) or (type(args.get(arg, UNSET)) is type(value) and args.get(arg) == value):
        return  # no change (a widget can report its unchanged value): not touched, nothing to save
    work.touched.add(f"{n}:{arg}")
    if value is UNSET:
        args.pop(arg, None)
    else:
        args[arg] = value
    call = Call(name=calls_body(work).calls[n].name, arguments=args)
    set_calls(item, work, _replace_call(work, n, call), observed, tools)


def _on_raw(item: Item, work: Work, n: int, key: str, observed: list[dict[str, Any]],
            tools: dict[str, ToolSpec]) -> None:
    errors = work_errors(work)
    errors.pop(f"{n}:raw", None)
    work.touched.add(f"{n}:*")
    try:
        value = editing.typed_json(st.session_state[key] or "{}")
    except ValueError as exc:
        errors[f"{n}:raw"] = f"not valid JSON: {exc}"
        return
    if not isinstance(value, dict):
        errors[f"{n}:raw"] = "the arguments must be a JSON object ({...})"
        return
    call = Call(name=calls_body(work).calls[n].name, arguments=value)
    set_calls(item, work, _replace_call(work, n, call), observed, tools, regenerate=True)


def _on_required(item: Item, work: Work, tool: str, key: str) -> None:
    chosen = tuple(st.session_state[key] or ())
    editing.change(item, work, required_args={**calls_body(work).required_args, tool: chosen})


def _on_rule(item: Item, work: Work, tool: str, arg: str, key: str, field: str) -> None:
    raw = st.session_state[key]
    errors = work_errors(work)
    errors.pop(f"rule:{tool}:{arg}", None)
    if field == "accept":
        try:
            parsed = editing.typed_json(raw) if raw.strip().startswith("[") else [v.strip() for v in raw.split(",") if v.strip()]
        except ValueError as exc:
            errors[f"rule:{tool}:{arg}"] = f"not a JSON list: {exc}"
            return
        raw = tuple(parsed)
    elif field == "from_call" and raw is not None:
        raw = int(raw)
    elif isinstance(raw, str) and field != "match":
        raw = raw or None
    current = calls_body(work).rule(tool, arg) or RuleDraft()
    rule = RuleDraft.model_validate({**current.model_dump(), field: raw})
    tool_rules = {**calls_body(work).arg_rules.get(tool, {}), arg: rule}
    tool_rules = {a: r for a, r in tool_rules.items() if not r.is_default}
    rules = {**calls_body(work).arg_rules, tool: tool_rules}
    editing.change(item, work, arg_rules={t: r for t, r in rules.items() if r})


def _on_pick(item: Item, work: Work, key: str, observed: list[dict[str, Any]], tools: dict[str, ToolSpec]) -> None:
    name = st.session_state[key]
    if name in tools:
        set_calls(item, work, (*calls_body(work).calls, Call(name=name)), observed, tools, regenerate=True)


def _on_remove(item: Item, work: Work, n: int, observed: list[dict[str, Any]], tools: dict[str, ToolSpec]) -> None:
    calls = calls_body(work).calls[:n] + calls_body(work).calls[n + 1:]
    set_calls(item, work, calls, observed, tools, regenerate=True)


def work_errors(work: Work) -> dict[str, str]:
    return work.input_errors


# -- rendering -----------------------------------------------------------------------------------------


def tool_picker(item: Item, work: Work, tools: dict[str, ToolSpec], observed: list[dict[str, Any]],
                label: str | None = None) -> None:
    """Choose the tool of a new expected call by typing its name (nothing is preselected)."""
    if not tools:
        return
    key = editing.widget_key(item, work, f"pick{len(calls_body(work).calls)}")
    label = label or ("Which tool should the agent call?" if not calls_body(work).calls else "Add a parallel call")
    st.selectbox(label, list(tools), index=None, key=key, format_func=render.md_label,
                 placeholder=f"Type to search the {len(tools)} tools offered", on_change=_on_pick,
                 args=(item, work, key, observed, tools))


def _shown(work: Work, n: int, arg: str) -> bool:
    """Whether the schema errors of argument ``arg`` of call ``n`` are shown yet."""
    return work.tried_submit or f"{n}:{arg}" in work.touched or f"{n}:*" in work.touched


def value_preview(value: Any) -> str:
    """An argument's value in one line; an empty string (``""``) reads differently from a missing argument."""
    if value is UNSET:
        return "missing"
    return render.one_line(json.dumps(value, ensure_ascii=False), 60)


def _problem(text: str, key: str) -> None:
    with st.container(key=f"err-{key}"):
        st.text(text)


def _argument_input(item: Item, work: Work, n: int, arg: str, schema: dict[str, Any], required: bool,
                    value: Any, observed: list[dict[str, Any]], tools: dict[str, ToolSpec]) -> None:
    key = editing.widget_key(item, work, f"a{n}:{arg}")
    label = render.md_label(arg) + (" *" if required else "")
    hint = render.one_line(schema.get("description"), 90) or None
    kind = schema.get("type")
    cb = _on_arg

    def args(k: str) -> tuple[Any, ...]:
        return (item, work, n, arg, key, k, observed, tools)

    if "enum" in schema:
        options = [UNSET, *schema["enum"]]
        index = options.index(value) if value in schema["enum"] else 0
        st.selectbox(label, options, index=index, key=key, on_change=cb, args=args("enum"), format_func=str)
    elif kind == "boolean":
        options = [UNSET, True, False]
        index = options.index(value) if isinstance(value, bool) else 0
        st.selectbox(label, options, index=index, key=key, on_change=cb, args=args("boolean"), format_func=str)
    elif kind == "integer" and (value is UNSET or (isinstance(value, int) and not isinstance(value, bool))):
        st.number_input(label, value=None if isinstance(value, _Unset) else value, step=1, key=key, on_change=cb,
                        args=args("integer"), placeholder=hint)
    elif kind == "number" and (value is UNSET or (isinstance(value, (int, float)) and not isinstance(value, bool))):
        st.number_input(label, value=None if isinstance(value, _Unset) else float(value), key=key, on_change=cb,
                        args=args("number"), placeholder=hint, format="%g")
    elif kind == "string" and (value is UNSET or isinstance(value, str)):
        text = "" if isinstance(value, _Unset) else value
        shown_hint = "missing" + (f": {hint}" if hint else "")  # an empty field means the argument is left out
        if len(text) > 60 or suggest_match(arg, schema) == "semantic":  # free text: give it room
            st.text_area(label, value=text, key=key, on_change=cb, args=args("string"), placeholder=shown_hint,
                         height=90)
        else:
            st.text_input(label, value=text, key=key, on_change=cb, args=args("string"), placeholder=shown_hint)
        if value == "":
            with st.container(key=f"empty-string-{n}-{arg}"):
                st.caption('The value is an empty string `""` (not missing).')
    else:  # arrays, objects, untyped, or a value whose type does not fit the schema: edit it as JSON
        shown = "" if value is UNSET else json.dumps(value, ensure_ascii=False)
        st.text_input(label + " (JSON)", value=shown, key=key, on_change=cb, args=args("json"), placeholder=hint)
    _invisible_note(value, key)


def _invisible_note(value: Any, key: str) -> None:
    """A field shows a direction override as nothing (or reversed text): say what is really in the value."""
    text = value if isinstance(value, str) else "" if value is UNSET else json.dumps(value, ensure_ascii=False)
    if render.visible(text) != text:
        with st.container(key=f"err-invisible-{key}"):
            st.text(f"Holds invisible control characters: {render.visible(text)}")


def _rule_row(item: Item, work: Work, n: int, spec: ToolSpec, arg: str) -> None:
    """One argument's match rule. Rules are per tool, so parallel calls of one tool share them (each call's
    editor shows the same rule, under its own widget keys)."""
    tool = spec.name
    rule = calls_body(work).rule(tool, arg) or RuleDraft()
    suggestion = suggest_match(arg, spec.properties.get(arg, {}))
    call = calls_body(work).calls[n]
    with st.container(key=f"rule-row-{n}-{arg}"):  # the name on its own line: it is never cut
        st.text(f"{arg} = {value_preview(call.arguments.get(arg, UNSET))}")
    match_col = param_col = st.container()  # full width: "date (suggested)" is never cut
    key = editing.widget_key(item, work, f"r{n}:{tool}:{arg}")
    match_col.selectbox("match", MATCH_KINDS, index=MATCH_KINDS.index(rule.match), key=key,
                      format_func=lambda k: MATCH_LABELS[k] + (" (suggested)" if k == suggestion else ""),
                      on_change=_on_rule, args=(item, work, tool, arg, key, "match"), label_visibility="collapsed")
    pkey = f"{key}:{rule.match}"  # one key per kind: the input's type changes with the kind
    common: dict[str, Any] = {"key": pkey, "label_visibility": "collapsed", "on_change": _on_rule}
    if rule.match == "one_of":
        param_col.text_input("accepted values", value=json.dumps(list(rule.accept), ensure_ascii=False),
                           placeholder='["Economy", "economy class"]', args=(item, work, tool, arg, pkey, "accept"),
                           **common)
    elif rule.match in ("number", "currency"):
        param_col.number_input("tolerance", value=rule.tolerance, min_value=0.0, format="%g", placeholder="± tolerance",
                             args=(item, work, tool, arg, pkey, "tolerance"), **common)
    elif rule.match == "regex":
        param_col.text_input("pattern", value=rule.pattern or "", placeholder="regular expression (full match)",
                           args=(item, work, tool, arg, pkey, "pattern"), **common)
    elif rule.match == "semantic":
        param_col.text_input("intent", value=rule.intent or "", placeholder="what the value must say",
                           args=(item, work, tool, arg, pkey, "intent"), **common)
    elif rule.match == "from_call":
        param_col.number_input("call", value=rule.from_call, min_value=0, step=1, placeholder="call index (0 = first)",
                             args=(item, work, tool, arg, pkey, "from_call"), **common)
    elif rule.match == "phone":
        param_col.text_input("region", value=rule.region or "", placeholder="default region, e.g. US",
                           args=(item, work, tool, arg, pkey, "region"), **common)
    elif suggestion != rule.match:
        param_col.text(f"suggested: {MATCH_LABELS[suggestion]}")
    try:
        rule.to_rule()
    except ValueError as exc:
        _problem(str(exc), f"rule-{n}-{item.key}-{tool}-{arg}")
    error = work_errors(work).get(f"rule:{tool}:{arg}")
    if error:
        _problem(error, f"rule-input-{n}-{item.key}-{tool}-{arg}")


def call_editor(item: Item, work: Work, n: int, tools: dict[str, ToolSpec], observed: list[dict[str, Any]],
                *, title: str | None = None, removable: bool = True) -> None:
    """The editor of expected call ``n`` (``title``: the tool picker's label; ``removable`` False: the caller
    offers its own remove, as the trajectory steps do to renumber their dependencies)."""
    call = calls_body(work).calls[n]
    names = list(tools)
    with st.container(border=True, key=f"call-editor-{n}"):
        tool_key = editing.widget_key(item, work, f"tool{n}")
        st.selectbox(title or f"Tool (call {n + 1})", names if call.name in tools else [call.name, *names],
                     index=names.index(call.name) if call.name in tools else 0, key=tool_key,
                     on_change=_on_tool, args=(item, work, n, tool_key, observed, tools),
                     format_func=lambda name: f"{name} ({hint(tools[name])})" if name in tools and hint(tools[name])
                     else name)
        with st.container(horizontal=True, vertical_alignment="center"):
            raw = st.toggle("Edit as JSON", key=editing.widget_key(item, work, f"rawmode{n}"))
            if removable and len(calls_body(work).calls) > 1:
                st.button("Remove this call", key=editing.widget_key(item, work, f"rm{n}"), type="tertiary",
                          on_click=_on_remove, args=(item, work, n, observed, tools))
        spec = tools.get(call.name)
        if spec is None:
            _problem(f"{call.name} is not offered at this turn; pick one of the tools offered.", f"tool-{n}")
            return
        required = calls_body(work).required_for(spec)
        problems: dict[str, list[str]] = {}
        for arg, message in argument_errors(spec, call.arguments, required):
            problems.setdefault(arg, []).append(message)
        input_errors = work_errors(work)
        if raw:
            key = editing.widget_key(item, work, f"raw{n}")
            st.text_area("Arguments (JSON object)", value=json.dumps(call.arguments, indent=2, ensure_ascii=False),
                         key=key, on_change=_on_raw, args=(item, work, n, key, observed, tools), height=180)
            if f"{n}:raw" in input_errors:
                _problem(input_errors[f"{n}:raw"], f"raw-{n}")
            for arg, messages in problems.items():
                if _shown(work, n, arg):
                    _problem(f"{arg or 'arguments'}: {'; '.join(messages)}", f"arg-{n}-{arg}")
        else:
            props = spec.properties
            for arg, schema in props.items():
                _argument_input(item, work, n, arg, schema if isinstance(schema, dict) else {}, arg in required,
                                call.arguments.get(arg, UNSET), observed, tools)
                for message in problems.pop(arg, []):
                    if _shown(work, n, arg):
                        _problem(message, f"arg-{n}-{arg}")
                if f"{n}:{arg}" in input_errors:
                    _problem(input_errors[f"{n}:{arg}"], f"argjson-{n}-{arg}")
            extra = [a for a in call.arguments if a not in props]
            if extra:
                st.text("Not in the schema (edit in Raw JSON): " + ", ".join(extra))
            for arg, messages in problems.items():
                if _shown(work, n, arg):
                    _problem(f"{arg or 'arguments'}: {'; '.join(messages)}", f"arg-{n}-{arg or 'object'}")
        if spec.properties:
            req_key = editing.widget_key(item, work, f"req{n}")
            st.pills("Required keys", list(spec.properties), selection_mode="multi", default=list(required),
                     key=req_key, format_func=render.md_label, on_change=_on_required, args=(item, work, spec.name, req_key))
            # Keyed and tracked: it stays open across the reruns its own changes cause.
            with st.expander("Match rules", key=f"rules-open-{n}-{item.key}", on_change="rerun"):
                present = [a for a in spec.properties if a in call.arguments]
                for arg in present + [a for a in spec.properties if a not in call.arguments]:
                    _rule_row(item, work, n, spec, arg)
