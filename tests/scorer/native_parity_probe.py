"""Scores a fixed, seeded workload and prints every result: run once with the compiled core and once with
``TOOLGOLD_PURE=1`` by tests/scorer/test_native_core.py, which compares the two outputs line by line.

Compiled code checks its declared types at run time where Python would not, so the workload leans on inputs whose
types a run file does not promise: every gold case the core tests use (BFCL's real items when the shared data is
here, the bundled demo, every rule kind) against its right outputs, the tests' perturbed ones, and seeded random
arguments of every JSON type. Each line is one result as JSON, or the exception a case raised; the first line
says which core ran.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from scorer import native
from scorer.api import score, score_case
from scorer.model import GoldCase, RunCall, RunRecord
from tests.conftest import SHARED_DATA
from tests.scorer.test_compiled_checks import _rule_cases, _rule_outputs
from tests.scorer.test_core_speed_parity import _perturbed
from tests.scorer.test_trusted_results import _cases

VALUES: tuple[Any, ...] = (0, 1, -7, 2**63, 1.5, -0.0, 1e308, True, False, None, "", "0", "true", " Boston ",
                           "ünï 漢字", "2026-03-10", "+1 415 555 0123", [], [1, "a", None], {}, {"k": [1.5]},
                           {"a": {"b": [None, {"c": "d"}]}}, [[[]]], "x" * 300,
                           {0: None}, [{1: "a"}])  # keys no JSON has: the Python API passes them
KEYS = ("", "zz_unknown", "ключ", "0")
SHARED_BFCL = SHARED_DATA / "bfcl"


def _random_arguments(rng: random.Random, gold: dict[str, Any]) -> dict[str, Any] | str:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(("{not json", "[]", "null", '{"a": 1}', ""))
    args = dict(gold)
    for key in list(args):
        if rng.random() < 0.4:
            args[key] = rng.choice(VALUES)
        elif rng.random() < 0.15:
            del args[key]
    for _ in range(rng.randint(0, 2)):
        args[rng.choice((*KEYS, *gold))] = rng.choice(VALUES)
    return args


def _random_runs(rng: random.Random, gold: GoldCase, count: int) -> list[tuple[RunCall, ...]]:
    names = [t.name for t in gold.tools] or ["f"]
    found = []
    for _ in range(count):
        made = []
        for want in gold.expected.calls or ():
            if rng.random() < 0.1:
                continue
            name = want.name if rng.random() < 0.8 else rng.choice((*names, "not_offered", ""))
            made.append(RunCall(name=name, arguments=_random_arguments(rng, dict(want.arguments))))
        if rng.random() < 0.2:
            made.append(RunCall(name=rng.choice(names), arguments=_random_arguments(rng, {})))
        rng.shuffle(made)
        found.append(tuple(made))
    return found


def _line(gold: GoldCase, made: tuple[RunCall, ...]) -> str:
    try:
        return score_case(gold, RunRecord(case_id=gold.id, calls=made)).model_dump_json()
    except Exception as exc:  # the exception is the output to compare
        return f"raised {type(exc).__name__}: {exc}"


def main() -> None:
    rng = random.Random(24)
    out = sys.stdout
    out.write(f"core: {'compiled' if native.status().compiled else 'pure'}\n")
    cases: list[tuple[GoldCase, list[tuple[RunCall, ...]]]] = []
    for gold in _cases():
        cases.append((gold, [*_perturbed(gold), *_random_runs(rng, gold, 6)]))
    if SHARED_BFCL.is_dir():  # all 2,311 real items the benchmark scores, beside the bundled sample
        from benchmarks.bench_bfcl import load_items

        for item in load_items(SHARED_BFCL):
            gold = item["case"]
            given = [tuple(RunCall(name=n, arguments=a) for n, a in item[key]) for key in ("correct", "perturbed")]
            cases.append((gold, [*given, *_random_runs(rng, gold, 3)]))
    for gold in _rule_cases():
        cases.append((gold, [*_rule_outputs(gold), *_random_runs(rng, gold, 12)]))
    reported: dict[str, tuple[GoldCase, RunRecord]] = {}
    for gold, outputs in cases:
        for made in outputs:
            out.write(_line(gold, made) + "\n")
        reported.setdefault(gold.id, (gold, RunRecord(case_id=gold.id, calls=outputs[-1])))
    # and the whole report over one run per case, as `toolgold score` writes it
    report = score([gold for gold, _ in reported.values()], [run for _, run in reported.values()])
    out.write(json.dumps(report.model_dump(mode="json"), sort_keys=True, default=str) + "\n")


if __name__ == "__main__":
    main()
