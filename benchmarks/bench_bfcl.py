"""The scoring core beside BFCL's own checker, on the same real BFCL items and the same outputs.

- Items: the 2,311 BFCL v4 items with a ground truth of calls (simple_python, multiple, parallel,
  parallel_multiple, live_simple, live_multiple) from ../shared/data/bfcl, imported with toolgold's BFCL
  importer.
- Outputs: correct (each call at BFCL's first acceptable values) and perturbed (every item wrong: a changed
  value, an unknown parameter or a dropped required argument, in turn), the same calls given to both.
- toolgold: ``score_case`` on pre-built run records, each call with no ``facts``: every pass builds each
  case's ``CaseFacts``, compiled checks (``arguments.CallPlan``) and compiled tool schemas afresh
  (``schemas.forget_compiled()`` before each pass: BFCL's items each bring their own functions, so
  ``toolgold score`` compiles every item's schema once), as ``toolgold score`` does for a case it reads, so
  nothing is carried from one pass to the next. Everything a report reads is made in
  the timed loop: every error with its code and its note (notes are written eagerly, none is rendered
  later), grounding, verdicts and partial credit; the loop counts the passes and the errors (printed as
  "diagnoses"), so a result that wrote fewer diagnoses would show.
  BFCL: ``ast_checker`` from ``bfcl-eval`` in a benchmark-only venv (benchmarks/bfcl_eval_env.py), in a
  subprocess, on the same outputs. Parsing is not timed on either side. The sides take turns (``--rounds``,
  BFCL then toolgold, ``--repeats`` passes each), each side in a fresh process every round, items per CPU second
  (the machine is shared: CPU time is what the checker itself costs). Each side's rate is its best pass of the
  run; the ratio is the **median of the rounds' ratios** (each round's two sides timed seconds apart, best pass
  against best pass), with the rounds' lowest and highest beside it. Until 2026-12-06 toolgold's side ran in
  this process for every round while BFCL's got a new process each round, and the ratio was best pass against
  best pass over the whole run: one run then printed 0.96× for perturbed outputs where the runs around it gave
  0.63–0.67×, `ast_checker` having run ~30% slower than usual in all three of its processes in that run. A
  process's speed varies with what it cannot choose (memory layout, hash seed), so both sides now sample it
  alike, and one slow process weighs one round.

Target: toolgold ≥ 1.0× BFCL on both output sets.

``--instructions`` counts instead of timing: each side runs in a subprocess under ``valgrind --tool=callgrind``
twice, with no measured pass and with one (both after one unmeasured pass over the same outputs), and the
difference divided by the items is that side's instructions per item, the same on a loaded machine as on a quiet
one (each run takes ~40 s). The ratio printed is BFCL's instructions per item over toolgold's: not a speed ratio
(instructions per cycle differ), but a figure a noisy window cannot move.

``--cache`` says why the two ratios differ: each side under ``valgrind --tool=cachegrind --cache-sim=yes``,
simulating this machine's level-1 data and instruction caches and its level-2 cache (read from
``/sys/devices/system/cpu/cpu0/cache``), two measured passes less none, per item: the instructions, the level-1
instruction misses, the level-1 data misses (reads and writes) and the level-2 misses. A miss costs cycles that
no instruction count shows (a level-1 data miss that hits level 2: ~15 cycles; one that misses level 2 too:
~50-100), so the side with more misses per item runs fewer instructions per cycle. Simulated, so repeatable
like the instruction count (~10 min for both output sets).

``--by-category`` adds, after the comparison, each side's µs of CPU per item in each category (best of
``--repeats`` passes over that category alone, in the same conditions) and BFCL's time over toolgold's: where
the gap is. A category timed alone runs faster than inside the full pass (toolgold 20–25% faster, stop 33, on
the same instruction counts), so compare the two sides within a row, not a row with the full-pass rates.

Run: ``.venv/bin/python -m benchmarks.bench_bfcl [--repeats N] [--rounds R] [--by-category] [--instructions]
[--cache]``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bfcl_eval_env import bfcl_python

REPO = Path(__file__).resolve().parent.parent
BFCL = Path(os.environ.get("TOOLGOLD_BFCL_DATA", REPO.parent / "shared" / "data" / "bfcl"))
if not BFCL.is_dir():
    BFCL = Path("/work/shared/data/bfcl")
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple")

Calls = list[tuple[str, dict[str, Any]]]

_BFCL_SIDE = r'''
import json, sys, time, types
# bfcl_eval.constants.model_config imports every model SDK; the checker only asks it whether a model
# writes dots in function names as underscores (not the case here).
config = types.ModuleType("bfcl_eval.constants.model_config")
class _Config:
    underscore_to_dot = False
config.MODEL_CONFIG_MAPPING = {"toolgold/bench": _Config()}
sys.modules["bfcl_eval.constants.model_config"] = config
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

items = json.load(open(sys.argv[1]))
repeats = int(sys.argv[2])
out = {}
for key in ("correct", "perturbed"):
    best = float("inf")
    for _ in range(repeats):
        valid = 0
        started = time.process_time()
        for item in items:
            result = ast_checker(item["function"], item[key], item["ground_truth"], Language.PYTHON,
                                 item["category"], "toolgold_bench")
            valid += bool(result["valid"])
        best = min(best, time.process_time() - started)
    out[key] = {"seconds": best, "valid": valid}
print(json.dumps(out))
'''


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return {v["id"]: v for v in map(json.loads, fh)}


def perturbed(calls: Calls, n: int, required: list[str]) -> Calls:
    """The calls with one mistake in the first: a changed value, an unknown parameter, or a dropped
    required argument, by turns (the next kind when one does not apply)."""
    name, args = calls[0]
    args = dict(args)
    for kind in range(n % 3, n % 3 + 3):
        kind %= 3
        if kind == 0 and args:
            key = sorted(args)[0]
            value = args[key]
            args[key] = (not value if isinstance(value, bool) else value + 7919 if isinstance(value, int)
                         else value + 7919.5 if isinstance(value, float) else f"{value} zz"
                         if isinstance(value, str) else None)
            break
        if kind == 1:
            args["zz_unknown_param"] = 1
            break
        if kind == 2 and (present := [k for k in required if k in args]):
            del args[present[0]]
            break
    return [(name, args), *calls[1:]]


def load_items(data: Path = BFCL) -> list[dict[str, Any]]:
    """Each item: its gold case, BFCL's function list and ground truth, and the two outputs (the BFCL data
    in ``data``)."""
    from scorer import importers
    from scorer.importers import Converted
    from scorer.model import GoldCase

    items: list[dict[str, Any]] = []
    for category in CATEGORIES:
        questions = _lines(data / f"BFCL_v4_{category}.json")
        answers = _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
        for converted in importers.convert(data / f"BFCL_v4_{category}.json", "bfcl"):
            if not isinstance(converted, Converted) or not isinstance(converted.record, GoldCase):
                continue
            case = converted.record
            bfcl_id = case.id.removeprefix("bfcl/")
            correct = [(c.name, dict(c.arguments)) for c in case.expected.calls]
            wrong = perturbed(correct, len(items), list(case.required_for(correct[0][0])))
            items.append({"case": case, "category": category, "function": questions[bfcl_id]["function"],
                          "ground_truth": answers[bfcl_id]["ground_truth"], "correct": correct,
                          "perturbed": wrong})
    return items


def toolgold_side(items: list[dict[str, Any]], repeats: int) -> dict[str, dict[str, float]]:
    import gc

    from scorer.api import score_case
    from scorer.model import RunCall, RunRecord
    from scorer.schemas import forget_compiled

    out = {}
    for key in ("correct", "perturbed"):
        pairs = [(item["case"], RunRecord(case_id=item["case"].id, calls=tuple(
            RunCall(name=n, arguments=a) for n, a in item[key]))) for item in items]
        gc.collect()
        best = float("inf")
        for _ in range(repeats):
            passed = diagnoses = 0
            forget_compiled()
            started = time.process_time()
            for case, run in pairs:
                result = score_case(case, run)
                passed += result.status == "pass"
                diagnoses += len(result.errors)
            best = min(best, time.process_time() - started)
        out[key] = {"seconds": best, "valid": passed, "diagnoses": diagnoses}
    return out


def by_category(items: list[dict[str, Any]], repeats: int, directory: Path) -> None:
    """Each category timed alone, toolgold (in this process, as ``toolgold_side`` times them all) and BFCL's
    ``ast_checker`` (in its venv's process, as ``bfcl_side``): µs of CPU per item, and BFCL's over toolgold's."""
    import gc

    from scorer.api import score_case
    from scorer.model import RunCall, RunRecord
    from scorer.schemas import forget_compiled

    print("\n| category (items) | correct µs/item: toolgold / BFCL | perturbed µs/item: toolgold / BFCL |"
          "\n|---|---|---|")
    for category in CATEGORIES:
        chosen = [item for item in items if item["category"] == category]
        ours = {}
        for key in ("correct", "perturbed"):
            pairs = [(item["case"], RunRecord(case_id=item["case"].id, calls=tuple(
                RunCall(name=n, arguments=a) for n, a in item[key]))) for item in chosen]
            gc.collect()
            best = float("inf")
            for _ in range(repeats + 1):  # the first pass warms what the whole run warmed
                forget_compiled()
                started = time.process_time()
                for case, run in pairs:
                    score_case(case, run)
                best = min(best, time.process_time() - started)
            ours[key] = best
        theirs = bfcl_side(chosen, repeats, directory)
        print(category_row(category, len(chosen), ours, {k: theirs[k]["seconds"] for k in ours}), flush=True)


def category_row(category: str, n: int, ours: dict[str, float], theirs: dict[str, float]) -> str:
    """A row of ``--by-category``: each side's best seconds per pass over the category's ``n`` items, as µs per
    item, correct then perturbed, with BFCL's time over toolgold's (above 1: toolgold is faster)."""
    cells = [f"{ours[key] / n * 1e6:.1f} / {theirs[key] / n * 1e6:.1f} ({theirs[key] / ours[key]:.2f}×)"
             for key in ("correct", "perturbed")]
    return f"| {category} ({n:,}) | {cells[0]} | {cells[1]} |"


def _bfcl_items(items: list[dict[str, Any]], directory: Path) -> Path:
    """The items as BFCL's checker takes them, in a JSON file for its venv's process."""
    path = directory / "items.json"
    path.write_text(json.dumps([{"function": i["function"], "ground_truth": i["ground_truth"],
                                 "category": i["category"],
                                 "correct": [{n: a} for n, a in i["correct"]],
                                 "perturbed": [{n: a} for n, a in i["perturbed"]]} for i in items]),
                    encoding="utf-8")
    return path


def bfcl_side(items: list[dict[str, Any]], repeats: int, directory: Path) -> dict[str, dict[str, float]]:
    path = _bfcl_items(items, directory)
    done = subprocess.run([str(bfcl_python()), "-c", _BFCL_SIDE, str(path), str(repeats)],
                          capture_output=True, text=True, check=True)
    result: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def load_counted_pairs(path: str) -> list[tuple[Any, Any]]:
    """The (gold case, run) pairs pickled at ``path``, as validation leaves them. Unpickled, a model's
    ``__dict__`` holds new strings for its field names, where validation (the timed side, and ``toolgold score``)
    leaves the interned names the code reads the fields by; every read of a field then compares the names'
    bytes (~2.6k more instructions per perturbed item). So the names are put back as validation leaves them.
    Runs in the counted process too (its source is part of ``_TOOLGOLD_COUNTED``)."""
    import pickle
    import sys

    from pydantic import BaseModel

    with open(path, "rb") as fh:
        pairs: list[tuple[Any, Any]] = pickle.load(fh)
    seen: set[int] = set()
    todo: list[Any] = [pairs]
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, BaseModel):
            fields = value.__dict__
            object.__setattr__(value, "__dict__", {sys.intern(name): field for name, field in fields.items()})
            todo += fields.values()
        elif isinstance(value, dict):
            todo += value.values()
        elif isinstance(value, (list, tuple)):
            todo += value
    return pairs


_TOOLGOLD_COUNTED = r'''
import gc, sys
from typing import Any
from scorer.api import score_case
from scorer.schemas import forget_compiled
''' + inspect.getsource(load_counted_pairs) + r'''
pairs = load_counted_pairs(sys.argv[1])
for case, run in pairs:  # unmeasured: lazy imports and first-use caches, in both runs alike
    score_case(case, run)
gc.collect()
for _ in range(int(sys.argv[2])):
    forget_compiled()
    for case, run in pairs:
        score_case(case, run)
'''

_BFCL_COUNTED = _BFCL_SIDE.split("items = json.load")[0] + r'''
import gc
items = json.load(open(sys.argv[1]))
key = sys.argv[2]
def one_pass():
    for item in items:
        ast_checker(item["function"], item[key], item["ground_truth"], Language.PYTHON, item["category"],
                    "toolgold_bench")
one_pass()
gc.collect()
for _ in range(int(sys.argv[3])):
    one_pass()
'''


def _instructions(command: list[str], directory: Path) -> int:
    """What ``valgrind --tool=callgrind`` counts for ``command`` (every instruction of the process)."""
    out = directory / "callgrind.out"
    # One hash seed for every run: with random ones, dict and set layouts (and so the counts) vary by ~1%.
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
                          capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    out.unlink(missing_ok=True)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1].strip())
    raise RuntimeError(f"valgrind printed no instruction count for {command[:3]}: {done.stderr[-300:]}")


CACHE_EVENTS = {"Ir": "instructions", "I1mr": "L1 instruction misses", "D1mr": "L1 data read misses",
                "D1mw": "L1 data write misses", "DLmr": "L2 read misses", "DLmw": "L2 write misses"}
"""The cachegrind events ``--cache`` prints per item (its "LL" is given this machine's level 2: see
``cache_geometry``)."""


def cache_geometry(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> dict[str, str]:
    """cachegrind's ``--I1``, ``--D1`` and ``--LL`` options for this machine's level-1 instruction and data caches
    and its level-2 cache (``size,associativity,line size``), from the kernel's description; empty where the
    kernel has none (cachegrind then asks the processor itself, and takes the last level as ``LL``)."""
    found: dict[str, str] = {}
    for index in sorted(root.glob("index*")):
        try:
            level, kind = (index / "level").read_text().strip(), (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
            ways = (index / "ways_of_associativity").read_text().strip()
            line = (index / "coherency_line_size").read_text().strip()
        except OSError:
            continue
        bytes_ = int(size[:-1]) * {"K": 1024, "M": 1 << 20}[size[-1]] if size[-1] in "KM" else int(size)
        option = {("1", "Instruction"): "--I1", ("1", "Data"): "--D1", ("2", "Unified"): "--LL"}.get((level, kind))
        if option is not None:
            found[option] = f"{bytes_},{ways},{line}"
    return found if len(found) == 3 else {}


def cachegrind_summary(text: str) -> dict[str, int]:
    """The totals of a cachegrind output file (its ``events:`` and ``summary:`` lines), by event."""
    events = summary = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(n) for n in line.split()[1:]]
    if events is None or summary is None or len(events) != len(summary):
        raise RuntimeError("cachegrind wrote no summary of its events")
    return dict(zip(events, summary, strict=True))


def _cache_counts(command: list[str], directory: Path, geometry: dict[str, str]) -> dict[str, int]:
    """What ``valgrind --tool=cachegrind --cache-sim=yes`` counts for ``command``, by event."""
    out = directory / "cachegrind.out"
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={out}",
                    *(f"{option}={value}" for option, value in geometry.items()), *command],
                   capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        return cachegrind_summary(out.read_text(encoding="utf-8", errors="replace"))
    finally:
        out.unlink(missing_ok=True)


def cache_misses_per_item(items: list[dict[str, Any]], directory: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Each side's instructions and cache misses for one pass over each output set, per item (two measured
    passes less none, halved: a pass's misses are fewer than the instructions, so two passes keep the
    difference well above the noise of the start-up's)."""
    import pickle

    from scorer.model import RunCall, RunRecord

    geometry = cache_geometry()
    shown = ", ".join(f"{o[2:]} {v}" for o, v in geometry.items()) or "as cachegrind detects them"
    print(f"caches simulated (size,ways,line; LL = level 2): {shown}", flush=True)
    bfcl_items = _bfcl_items(items, directory)
    found: dict[str, dict[str, dict[str, float]]] = {}
    for key in ("correct", "perturbed"):
        pairs = directory / f"{key}.pickle"
        pairs.write_bytes(pickle.dumps([(i["case"], RunRecord(case_id=i["case"].id, calls=tuple(
            RunCall(name=n, arguments=a) for n, a in i[key]))) for i in items]))
        sides = {"toolgold": [sys.executable, "-c", _TOOLGOLD_COUNTED, str(pairs)],
                 "bfcl": [str(bfcl_python()), "-c", _BFCL_COUNTED, str(bfcl_items), key]}
        found[key] = {}
        for side, command in sides.items():
            none, two = (_cache_counts([*command, str(n)], directory, geometry) for n in (0, 2))
            found[key][side] = {event: (two[event] - none[event]) / 2 / len(items) for event in CACHE_EVENTS}
        print(f"{key}: " + "; ".join(f"{CACHE_EVENTS[e]} {found[key]['toolgold'][e]:,.0f} / "
                                     f"{found[key]['bfcl'][e]:,.0f}" for e in CACHE_EVENTS)
              + " per item (toolgold / BFCL)", flush=True)
    return found


def instructions_per_item(items: list[dict[str, Any]], directory: Path) -> dict[str, dict[str, float]]:
    """Each side's instructions for one pass over each output set, per item (one pass less zero passes)."""
    import pickle

    from scorer.model import RunCall, RunRecord

    bfcl_items = _bfcl_items(items, directory)
    counted: dict[str, dict[str, float]] = {}
    for key in ("correct", "perturbed"):
        pairs = directory / f"{key}.pickle"
        pairs.write_bytes(pickle.dumps([(i["case"], RunRecord(case_id=i["case"].id, calls=tuple(
            RunCall(name=n, arguments=a) for n, a in i[key]))) for i in items]))
        ours = [_instructions([sys.executable, "-c", _TOOLGOLD_COUNTED, str(pairs), str(n)], directory)
                for n in (0, 1)]
        theirs = [_instructions([str(bfcl_python()), "-c", _BFCL_COUNTED, str(bfcl_items), key, str(n)], directory)
                  for n in (0, 1)]
        counted[key] = {"toolgold": (ours[1] - ours[0]) / len(items), "bfcl": (theirs[1] - theirs[0]) / len(items)}
        print(f"{key}: toolgold {counted[key]['toolgold'] / 1000:,.1f}k instructions per item, BFCL ast_checker "
              f"{counted[key]['bfcl'] / 1000:,.1f}k: {counted[key]['bfcl'] / counted[key]['toolgold']:.2f}×",
              flush=True)
    return counted


_TOOLGOLD_SIDE = r'''
import json, sys
from benchmarks.bench_bfcl import load_items, toolgold_side
print(json.dumps(toolgold_side(load_items(), int(sys.argv[1]))))
'''


def toolgold_process(repeats: int) -> dict[str, dict[str, float]]:
    """``toolgold_side`` in a fresh process (the items loaded there, untimed), as BFCL's side runs."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TOOLGOLD_BFCL_DATA": str(BFCL)}
    done = subprocess.run([sys.executable, "-c", _TOOLGOLD_SIDE, str(repeats)], capture_output=True, text=True,
                          check=True, cwd=REPO, env=env)
    result: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of_rounds(rounds: list[tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]], key: str,
                   ) -> tuple[dict[str, float], dict[str, float]]:
    """BFCL's and toolgold's fastest pass over the ``key`` outputs in any round (each round: BFCL's, toolgold's)."""
    theirs = min((r[0][key] for r in rounds), key=lambda found: found["seconds"])
    ours = min((r[1][key] for r in rounds), key=lambda found: found["seconds"])
    return theirs, ours


def round_ratios(rounds: list[tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]], key: str,
                 ) -> list[float]:
    """Each round's toolgold rate over BFCL's on the ``key`` outputs: BFCL's seconds over toolgold's, the two
    timed seconds apart (the main figure is their median)."""
    return [theirs[key]["seconds"] / ours[key]["seconds"] for theirs, ours in rounds]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_bfcl", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="passes per side per round (best kept)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="times the two sides take turns; the ratio is the median of the rounds' [default: 5]")
    parser.add_argument("--by-category", action="store_true",
                        help="also each side's µs per item, each category timed alone")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per item under valgrind instead of timing (load-independent)")
    parser.add_argument("--cache", action="store_true",
                        help="count simulated cache misses per item under cachegrind instead of timing")
    args = parser.parse_args(argv)
    if not BFCL.is_dir():
        print(f"skipped: the BFCL data is not at {BFCL} (set TOOLGOLD_BFCL_DATA)")
        return
    from scorer import native

    print(f"toolgold's core: {native.status()}", flush=True)
    items = load_items()
    if (args.instructions or args.cache) and shutil.which("valgrind") is None:
        print("skipped: --instructions and --cache need valgrind (Debian's valgrind package)")
        return
    if args.cache:
        with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
            misses = cache_misses_per_item(items, Path(tmp))
        print("\n| per item, simulated caches | toolgold correct | BFCL correct | toolgold perturbed | BFCL perturbed |"
              "\n|---|---|---|---|---|")
        for event, name in CACHE_EVENTS.items():
            cells = [f"{misses[key][side][event]:,.0f}" for key in ("correct", "perturbed")
                     for side in ("toolgold", "bfcl")]
            print(f"| {name} | " + " | ".join(cells) + " |")
        return
    if args.instructions:
        with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
            counted = instructions_per_item(items, Path(tmp))
        print("\n| measurement | toolgold | BFCL's `ast_checker`, same run | ratio |\n|---|---|---|---|")
        for key, found in counted.items():
            print(f"| instructions per item, {len(items):,} real BFCL items, {key} outputs | "
                  f"{found['toolgold'] / 1000:,.1f}k | {found['bfcl'] / 1000:,.1f}k | "
                  f"{found['bfcl'] / found['toolgold']:.2f}× |")
        return
    rounds: list[tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]] = []
    # The sides take turns (BFCL, toolgold, BFCL, toolgold, ...), each in a fresh process, so a burst of load
    # on the shared machine or one slow process falls on one round; the median of the rounds' ratios leaves it out.
    with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
        for _ in range(args.rounds):
            bfcl_round = bfcl_side(items, args.repeats, Path(tmp))  # BFCL first, then toolgold: the round's order
            rounds.append((bfcl_round, toolgold_process(args.repeats)))
    rows = []
    for key in ("correct", "perturbed"):
        theirs, ours = best_of_rounds(rounds, key)
        mine, bfcl = len(items) / ours["seconds"], len(items) / theirs["seconds"]
        ratios = round_ratios(rounds, key)
        ratio = statistics.median(ratios)
        spread = f"rounds {min(ratios):.2f}×–{max(ratios):.2f}×"
        print(f"{key}: toolgold {mine:,.0f} items/s ({ours['valid']:,} pass, "
              f"{ours['diagnoses']:,.0f} diagnoses written), BFCL ast_checker "
              f"{bfcl:,.0f}/s ({theirs['valid']:,} valid): {ratio:.2f}× (median of {len(ratios)} rounds; "
              f"{spread})", flush=True)
        rows.append((f"scoring core, {len(items):,} real BFCL items, {key} outputs",
                     f"{mine / 1000:,.1f}k items/s ({ratio:.2f}×, median of {len(ratios)} rounds; {spread})",
                     f"BFCL's `ast_checker` {bfcl / 1000:,.1f}k/s", "≥ 1.0×", "yes" if ratio >= 1.0 else "NO"))
    print("\n| measurement | result | floor or anchor, same run | target | met |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.by_category:
        with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
            by_category(items, args.repeats, Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
