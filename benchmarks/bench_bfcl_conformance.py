"""Conformance with BFCL's own checker: toolgold and ``bfcl-eval``'s ``ast_checker`` on the same real items.

For every BFCL v4 AST item with an answer (simple_python, multiple, parallel, parallel_multiple and the live
ones; the irrelevance and relevance categories are not judged by ``ast_checker``), imported with
``scorer.importers.bfcl``, model outputs are built from the answer and systematically perturbed:

- ``first`` / ``last``: every argument at BFCL's first / last acceptable value (omissible ones left out);
- ``upper``, ``squeezed``: every string upper-cased / with its spaces dropped (BFCL's string leniency);
- ``wrong_tool``, ``drop_required``, ``unknown_param``, ``wrong_value``, ``wrong_type``: one error each;
- ``reversed``: parallel calls in the reverse order;
- ``int_floats``: integral floats inside arrays written as integers.

Both checkers judge each output; every disagreement is put in a documented class (docs/scoring.md,
"Differences from BFCL's checker") or listed as unexplained. Target: nothing unexplained.

BFCL's checker runs in its own virtualenv (``benchmarks/bfcl_eval_env.py``; created on first run).
Run: ``.venv/bin/python -m benchmarks.bench_bfcl_conformance [--data ../shared/data/bfcl] [--show 5]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.bfcl_eval_env import check
from scorer import importers
from scorer.api import score_case
from scorer.grounding import is_identifier_key
from scorer.importers import Converted
from scorer.model import ArgRule, GoldCase, RunCall, RunRecord
from scorer.results import CaseResult

REPO = Path(__file__).resolve().parent.parent
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
              "live_parallel", "live_parallel_multiple")
Calls = list[tuple[str, dict[str, Any]]]


def rules_of(case: GoldCase, index: int) -> dict[str, ArgRule]:
    call = case.expected.calls[index]
    return {**case.arg_rules.get(call.name, {}), **call.arg_rules}


def first(case: GoldCase) -> Calls:
    return [(c.name, json.loads(json.dumps(c.arguments))) for c in case.expected.calls]


def last(case: GoldCase) -> Calls:
    out = []
    for i, c in enumerate(case.expected.calls):
        rules, required = rules_of(case, i), case.required_for(c.name)
        args = {}
        for key, value in c.arguments.items():
            rule = rules.get(key, ArgRule())
            if rule.optional and key not in required:
                continue
            args[key] = rule.accept[-1] if rule.accept else value
        out.append((c.name, args))
    return out


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    if isinstance(value, dict):
        return {k: _strings(v, change) for k, v in value.items()}
    return value


def upper(case: GoldCase) -> Calls | None:
    calls = [(n, _strings(a, str.upper)) for n, a in first(case)]
    return calls if calls != first(case) else None


def squeezed(case: GoldCase) -> Calls | None:
    calls = [(n, _strings(a, lambda s: s.replace(" ", ""))) for n, a in first(case)]
    return calls if calls != first(case) else None


def wrong_tool(case: GoldCase) -> Calls | None:
    calls = first(case)
    others = [t.name for t in case.tools if t.name not in {c.name for c in case.expected.calls}]
    if len(calls) > 1:
        return None
    calls[0] = (others[0] if others else "zz_not_offered", calls[0][1])
    return calls


def drop_required(case: GoldCase) -> Calls | None:
    calls = first(case)
    name, args = calls[0]
    present = [k for k in case.required_for(name) if k in args]
    if not present or len(calls) > 1:
        return None
    del args[present[0]]
    return calls


def unknown_param(case: GoldCase) -> Calls | None:
    calls = first(case)
    calls[0][1]["zz_unknown_param"] = 1
    return calls


def wrong_value(case: GoldCase) -> Calls | None:
    calls = first(case)
    if len(calls) > 1:
        return None
    args = calls[0][1]
    for key, value in sorted(args.items()):
        if is_identifier_key(key):
            continue
        if isinstance(value, bool):
            args[key] = not value
        elif isinstance(value, int | float):
            args[key] = value + 7919
        elif isinstance(value, str):
            args[key] = value + " zz"
        else:
            continue
        return calls
    return None


def wrong_type(case: GoldCase) -> Calls | None:
    calls = first(case)
    if len(calls) > 1:
        return None
    args = calls[0][1]
    for key, value in sorted(args.items()):
        if isinstance(value, str):
            args[key] = [value]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            args[key] = str(value)
        else:
            continue
        return calls
    return None


def reversed_calls(case: GoldCase) -> Calls | None:
    calls = first(case)
    return calls[::-1] if len(calls) > 1 else None


def _int_floats(value: Any, inside: bool = False) -> Any:
    if isinstance(value, float) and inside and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_int_floats(v, True) for v in value]
    if isinstance(value, dict):
        return {k: _int_floats(v, False) for k, v in value.items()}
    return value


def int_floats(case: GoldCase) -> Calls | None:
    calls = [(n, _int_floats(a)) for n, a in first(case)]
    return calls if json.dumps(calls) != json.dumps(first(case)) else None


VARIANTS: dict[str, Callable[[GoldCase], Calls | None]] = {
    "first": first, "last": last, "upper": upper, "squeezed": squeezed, "wrong_tool": wrong_tool,
    "drop_required": drop_required, "unknown_param": unknown_param, "wrong_value": wrong_value,
    "wrong_type": wrong_type, "reversed": reversed_calls, "int_floats": int_floats,
}


def _has_int_in_float_array(calls: Calls) -> bool:
    def walk(value: Any, inside: bool) -> bool:
        if isinstance(value, list):
            return any(walk(v, True) for v in value)
        if isinstance(value, dict):
            return any(walk(v, False) for v in value.values())
        return inside and isinstance(value, int) and not isinstance(value, bool)
    return any(walk(a, False) for _, a in calls)


def classify(variant: str, case: GoldCase, calls: Calls, ours: CaseResult, bfcl: dict[str, Any]) -> str:
    """The documented reason toolgold and BFCL disagree, or ``unexplained``."""
    codes = {e.code.value for e in ours.errors}
    bfcl_error = bfcl["error_type"]
    if ours.status == "pass":  # BFCL refused what toolgold accepted
        if "type_error" in bfcl_error and _has_int_in_float_array(calls):
            return "int inside an array of floats (BFCL rejects it: only a top-level int becomes a float)"
        if len(calls) > 1 and ("parallel" in bfcl_error or "no_order" in bfcl_error or variant == "reversed"):
            return "parallel calls paired greedily by BFCL, optimally by toolgold"
        if "unexpected_param" in bfcl_error and any(
                k not in (case.tool(c.name).properties if case.tool(c.name) else {}) for c in case.expected.calls
                for k in c.arguments):
            return "BFCL's answer itself uses a parameter its function does not declare (toolgold follows the " \
                   "gold, and lint flags it)"
        if "unexpected_param" in bfcl_error:
            return "extra argument at its schema default (toolgold accepts it)"
        if "missing_required" in bfcl_error and any(
                k not in c.arguments for c in case.expected.calls for k in case.required_for(c.name)):
            return "BFCL's answer itself leaves out a required parameter (BFCL fails its own answer; toolgold " \
                   "follows the gold, and lint flags it)"
        if bfcl_error == "value_error:dict_value" and variant in ("upper", "squeezed"):
            return "strings in a list inside a dict value: BFCL compares them exactly, toolgold normalizes them"
        if "type_error" in bfcl_error:
            return "integral float for an integer, or a BFCL pseudo-type toolgold maps to JSON Schema"
        return "unexplained"
    if bfcl["valid"]:  # toolgold refused what BFCL accepted
        if codes <= {"ungrounded_value"}:
            return "grounding: an identifier-like value found neither in the question nor in the gold"
        if codes & {"schema_type_error", "hallucinated_param", "missing_required_arg"} and (
                codes <= {"schema_type_error", "hallucinated_param", "missing_required_arg", "ungrounded_value"}):
            return "the JSON Schema is enforced, enums included (BFCL checks Python types only)"
        if "wrong_tool" in codes and not case.tool(calls[0][0]):
            return "a call to a tool that was never offered"
        return "unexplained"
    return "unexplained"


def items(data: Path) -> Iterator[tuple[str, GoldCase, dict[str, Any], list[Any]]]:
    for category in CATEGORIES:
        path = data / f"BFCL_v4_{category}.json"
        questions = {q["id"]: q for q in map(json.loads, path.read_text().splitlines())}
        answers = {a["id"]: a["ground_truth"] for a in
                   map(json.loads, (data / "possible_answer" / path.name).read_text().splitlines())}
        for item in importers.convert(path, "bfcl"):
            if isinstance(item, Converted) and isinstance(item.record, GoldCase):
                raw_id = item.record.id.removeprefix("bfcl/")
                yield category, item.record, questions[raw_id], answers[raw_id]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_bfcl_conformance")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "bfcl")
    parser.add_argument("--show", type=int, default=5, help="unexplained disagreements to print")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: the BFCL data is not at {args.data}")
        return
    started = time.perf_counter()
    jobs: list[tuple[str, str, GoldCase, Calls, dict[str, Any]]] = []
    for category, case, question, answer in items(args.data):
        for variant, build in VARIANTS.items():
            calls = build(case)
            if calls is not None:
                jobs.append((variant, category, case, calls, {
                    "functions": question["function"], "output": [{n: a} for n, a in calls], "answer": answer,
                    "category": category}))
    verdicts = check([job[4] for job in jobs])
    per_variant: Counter[tuple[str, str]] = Counter()
    classes: Counter[str] = Counter()
    unexplained: list[str] = []
    for (variant, _category, case, calls, _), bfcl in zip(jobs, verdicts, strict=True):
        ours = score_case(case, RunRecord(case_id=case.id, calls=tuple(
            RunCall(name=n, arguments=json.dumps(a)) for n, a in calls)))
        agree = (ours.status == "pass") == bfcl["valid"]
        per_variant[variant, "agree" if agree else "differ"] += 1
        if not agree:
            reason = classify(variant, case, calls, ours, bfcl)
            classes[reason] += 1
            if reason == "unexplained" and len(unexplained) < args.show:
                unexplained.append(f"{variant} {case.id}: toolgold {ours.status} {[e.note for e in ours.errors]}; "
                                   f"BFCL {bfcl}")
    total = len(jobs)
    differ = sum(classes.values())
    print("| variant | outputs | agree | differ |\n|---|---|---|---|")
    for variant in VARIANTS:
        a, d = per_variant[variant, "agree"], per_variant[variant, "differ"]
        if a + d:
            print(f"| {variant} | {a + d} | {a} | {d} |")
    print(f"| **all** | {total} | {total - differ} ({(total - differ) / total:.1%}) | {differ} |")
    print("\n| disagreement class (documented) | outputs |\n|---|---|")
    for reason, n in classes.most_common():
        print(f"| {reason} | {n} |")
    print(f"\nanchor: {total} outputs of {len({j[2].id for j in jobs})} BFCL items, "
          f"{time.perf_counter() - started:.1f} s; unexplained: {classes['unexplained']} (target 0)")
    for line in unexplained:
        print("  unexplained:", line[:400])


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
