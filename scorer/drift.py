"""Schema drift: gold cases labeled against tool schemas that have since changed.

A gold case carries the tools as they were when it was labeled (``GoldCase.tools``). When the current tools
differ in a way that touches what the case expects, the case is *stale*: scoring an agent that sees the new
tools against it would blame the agent for the schema's change. ``stale_cases`` says which cases and why:

- ``tool_removed``: an expected call uses a tool that is no longer offered;
- ``param_renamed`` / ``param_removed``: an expected argument's parameter is gone (renamed when a new
  parameter of the same type with a related name took its place: ``customer`` → ``customer_id``);
- ``new_required``: the tool now requires a parameter the expected call does not set;
- ``type_changed``: an expected value no longer fits the parameter's schema;
- ``tool_added`` (not blocking): a tool the case did not offer is now there; it may be the better call.

``migrate_case`` repairs what can be repaired mechanically (renamed parameters, new schemas) and returns
None when a person must decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any, Final, Literal

from pydantic import ValidationError

from scorer import canonical
from scorer.errors import ToolgoldError
from scorer.model import Answer, ArgRule, Call, Frozen, GoldCase, ToolSpec
from scorer.schemas import compiled

DriftKind = Literal["tool_removed", "param_renamed", "param_removed", "new_required", "type_changed",
                    "tool_added"]
RENAME_SIMILARITY: Final = 0.6
"""How alike two parameter names must be (difflib ratio) to call one a rename of the other, when neither
name contains the other."""


class StaleGold(ToolgoldError):
    """Gold cases do not fit the tool schemas they would be scored against (``stale`` lists them)."""

    def __init__(self, stale: Sequence[StaleCase], shown: int = 5) -> None:
        self.stale = tuple(stale)
        lines = [f"{s.case_id}: {s.summary}" for s in self.stale[:shown]]
        more = len(self.stale) - shown
        super().__init__(
            f"{len(self.stale)} gold cases do not fit the current tool schemas (relabel them, or --allow-stale "
            "to score them anyway):\n  " + "\n  ".join(lines) + (f"\n  … and {more} more" if more > 0 else ""))


class DriftReason(Frozen):
    kind: DriftKind
    tool: str
    message: str
    param: str | None = None
    renamed_to: str | None = None
    blocking: bool = True
    """True when the gold no longer fits the tools (scoring against them would be wrong)."""


class StaleCase(Frozen):
    case_id: str
    reasons: tuple[DriftReason, ...]

    @property
    def blocking(self) -> bool:
        return any(r.blocking for r in self.reasons)

    @property
    def summary(self) -> str:
        return "; ".join(r.message for r in self.reasons)


def _answers(case: GoldCase) -> tuple[Answer, ...]:
    return (case.expected, *case.alternatives)


def _used_arguments(case: GoldCase, tool: str) -> list[dict[str, Any]]:
    """The argument objects of every expected or alternative call to ``tool``."""
    return [c.arguments for a in _answers(case) if not a.tool_only for c in a.calls if c.name == tool]


def _json_type(schema: Any) -> Any:
    return canonical.dumps(schema.get("type")) if isinstance(schema, dict) else None


def _rename_target(param: str, old: ToolSpec, added: Sequence[str], new: ToolSpec) -> str | None:
    """The new parameter that most plausibly replaced ``param``: same JSON type, and one name contains the
    other or they are alike."""
    kind = _json_type(old.properties.get(param))
    best: tuple[float, str] | None = None
    for candidate in added:
        if _json_type(new.properties.get(candidate)) != kind:
            continue
        a, b = param.lower(), candidate.lower()
        score = 1.0 if (a in b or b in a) else SequenceMatcher(None, a, b).ratio()
        if score >= RENAME_SIMILARITY and (best is None or score > best[0]):
            best = (score, candidate)
    return best[1] if best else None


def _tool_drift(case: GoldCase, old: ToolSpec | None, new: ToolSpec) -> list[DriftReason]:
    if old is not None and canonical.equal(old.parameters, new.parameters):
        return []
    tool = new.name
    uses = _used_arguments(case, tool)
    used = sorted({k for args in uses for k in args} | set(case.arg_rules.get(tool, {}))
                  | set((case.required_args or {}).get(tool, ())))
    reasons: list[DriftReason] = []
    moved: set[str] = set()
    if old is not None:
        added = sorted(set(new.properties) - set(old.properties))
        for param in used:
            if param in old.properties and param not in new.properties and not new.parameters.get(
                    "additionalProperties", False):
                target = _rename_target(param, old, added, new)
                if target is not None:
                    moved.add(target)
                    reasons.append(DriftReason(
                        kind="param_renamed", tool=tool, param=param, renamed_to=target,
                        message=f"expected args use `{param}`, renamed to `{target}` in `{tool}`"))
                else:
                    reasons.append(DriftReason(
                        kind="param_removed", tool=tool, param=param,
                        message=f"expected args use `{param}`, which `{tool}` no longer has"))
    was_required = set(old.required) if old is not None else set()
    for param in new.required:
        if param in was_required or param in moved:
            continue
        if uses and any(param not in args for args in uses):
            reasons.append(DriftReason(
                kind="new_required", tool=tool, param=param,
                message=f"`{tool}` now requires `{param}`, which the expected call does not set"))
    schema = compiled(new.parameters)
    for args in uses:
        for problem in schema.problems({k: v for k, v in args.items() if k in new.properties}):
            if problem.arg is None or any(r.param == problem.arg and r.kind == "type_changed" for r in reasons):
                continue
            reasons.append(DriftReason(
                kind="type_changed", tool=tool, param=problem.arg,
                message=f"`{tool}.{problem.arg}` no longer accepts the expected value "
                        f"{canonical.dumps(args[problem.arg])}: {problem.message}"))
    return reasons


def case_drift(case: GoldCase, current_tools: Sequence[ToolSpec], *, added_tools: bool = True) -> StaleCase | None:
    """Why ``case`` no longer fits ``current_tools`` (None when it still does)."""
    current = {t.name: t for t in current_tools}
    labeled = {t.name: t for t in case.tools}
    reasons: list[DriftReason] = []
    used = sorted({c.name for a in _answers(case) for c in a.calls} | {f.name for f in case.forbidden})
    for tool in used:
        new = current.get(tool)
        if new is None:
            reasons.append(DriftReason(kind="tool_removed", tool=tool,
                                       message=f"expected calls use `{tool}`, which the current tools no "
                                               "longer offer"))
            continue
        reasons += _tool_drift(case, labeled.get(tool), new)
    if added_tools and labeled:
        for tool in sorted(set(current) - set(labeled)):
            reasons.append(DriftReason(kind="tool_added", tool=tool, blocking=False,
                                       message=f"a new tool `{tool}` is offered: check whether it is now the "
                                               "better call"))
    return StaleCase(case_id=case.id, reasons=tuple(reasons)) if reasons else None


def stale_cases(cases: Iterable[GoldCase], current_tools: Sequence[ToolSpec], *,
                added_tools: bool = True) -> list[StaleCase]:
    """Every case whose expectations the current tool schemas no longer fit, with the reasons, in input
    order. ``added_tools=False`` leaves out the (non-blocking) note about newly offered tools."""
    found = []
    for case in cases:
        drift = case_drift(case, current_tools, added_tools=added_tools)
        if drift is not None:
            found.append(drift)
    return found


def _renamed(args: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    return {renames.get(k, k): v for k, v in args.items()}


def migrate_case(case: GoldCase, current_tools: Sequence[ToolSpec]) -> GoldCase | None:
    """The case moved onto ``current_tools``: renamed parameters renamed in the expected calls, alternatives,
    rules and required keys, and the current schemas offered. None when the drift needs a person (a removed
    tool or parameter, a new required value, a value of the wrong type)."""
    drift = case_drift(case, current_tools, added_tools=False)
    if drift is None:
        return case if tuple(current_tools) == case.tools else case.model_copy(update={"tools": tuple(current_tools)})
    if any(r.kind != "param_renamed" for r in drift.reasons):
        return None
    renames: dict[str, dict[str, str]] = {}
    for r in drift.reasons:
        assert r.param is not None and r.renamed_to is not None  # param_renamed always names both
        renames.setdefault(r.tool, {})[r.param] = r.renamed_to

    def answer(a: Answer) -> Answer:
        return a.model_copy(update={"calls": tuple(
            Call(name=c.name, arguments=_renamed(c.arguments, renames.get(c.name, {}))) for c in a.calls)})

    rules: dict[str, dict[str, ArgRule]] = {
        tool: {renames.get(tool, {}).get(k, k): rule for k, rule in per.items()} for tool, per in case.arg_rules.items()}
    required = None if case.required_args is None else {
        tool: tuple(renames.get(tool, {}).get(k, k) for k in keys) for tool, keys in case.required_args.items()}
    try:
        moved = GoldCase.model_validate({
            **case.model_dump(), "tools": [t.model_dump() for t in current_tools],
            "expected": answer(case.expected).model_dump(),
            "alternatives": [answer(a).model_dump() for a in case.alternatives],
            "arg_rules": {t: {k: r.model_dump() for k, r in per.items()} for t, per in rules.items()},
            "required_args": required})
    except ValidationError:
        return None
    again = case_drift(moved, current_tools, added_tools=False)
    return moved if again is None else None


__all__ = ["DriftKind", "DriftReason", "StaleCase", "StaleGold", "case_drift", "migrate_case", "stale_cases"]
