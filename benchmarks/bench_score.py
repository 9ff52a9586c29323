"""Scoring throughput: the scoring core on one core, and `toolgold score` end to end.

- Generates N turn cases (default 1,000,000) and one run per case: toolkits of 3–12 tools with JSON Schemas
  (near-duplicate tools among them), a system prompt and a user message carrying the ids, single and
  parallel calls, no-call and ask-the-user cases, alternatives. Runs are written as agents write them:
  correct arguments in any key order and spacing, parallel calls in either order, and 45% of runs with an
  error (a fifth with two): the near-duplicate tool, a near-miss value, a required argument left out, a
  parameter the tool lacks, the wrong JSON type, unparseable arguments, no call, a repeated or dropped call,
  a call where none was needed. No run is a byte copy of its gold.
- Anchor, same run: ``json.loads`` of every line of both files on one core (reading alone, no validation).
- End to end: `toolgold score GOLD RUNS` at 100,000 cases (the first 100,000 lines of both files) and at N,
  automatic workers: wall time, the largest single process's peak RSS and the whole process tree's sampled
  proportional set size; memory growth per case is the difference of the two peaks over the cases added.
  Targets: ≤ 60 s and flat memory (no growth per case) from 100,000 to 1,000,000.
- Workers at 10,000 cases: one worker against two, best of 3 each, alternating (two must not be slower;
  the automatic choice, ``engine.automatic_workers``, must not be the slower).
- The id pass alone (the first pass over both files' ids, before any worker starts) at 100,000 cases, best of 3
  each way, taking turns: with the runs' ids read by a child process (what ``toolgold score`` does for a runs file
  of ``engine.RUN_READER_MIN_BYTES`` or more) and read in one process.
- Core: parses a sample of cases and runs into objects first (not timed), then times `score_trials` +
  `ReportBuilder.add` on one core, best of 5 passes.

- With ``--shuffled``: the same at 100,000 and N with the runs shuffled, so they are joined to the gold on
  disk instead of streamed beside it (the fallback's time and memory; flat too).

Run: ``.venv/bin/python -m benchmarks.bench_score [--cases N] [--data DIR] [--json] [--shuffled] [--core-sample M]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bytecode import cache_bytecode
from scorer.engine import automatic_workers

REPO = Path(__file__).resolve().parent.parent
TOOLGOLD = Path(sys.executable).parent / "toolgold"

_TOOL_POOL = [
    ("search_orders", {"customer_id": {"type": "string"}, "status": {"type": "string",
                                                                      "enum": ["open", "shipped", "closed"]},
                       "limit": {"type": "integer", "default": 10}}, ["customer_id"]),
    ("get_order", {"order_id": {"type": "string"}}, ["order_id"]),
    ("issue_refund", {"order_id": {"type": "string"}, "amount": {"type": "number"},
                      "reason": {"type": "string"}}, ["order_id", "amount"]),
    ("get_refund_policy", {"region": {"type": "string"}}, []),
    ("update_user", {"user_id": {"type": "string"}, "email": {"type": "string"}}, ["user_id"]),
    ("update_user_profile", {"user_id": {"type": "string"}, "display_name": {"type": "string"},
                             "bio": {"type": "string"}}, ["user_id"]),
    ("cancel_subscription", {"subscription_id": {"type": "string"}, "at_period_end": {"type": "boolean"}},
     ["subscription_id"]),
    ("pause_subscription", {"subscription_id": {"type": "string"}, "weeks": {"type": "integer"}},
     ["subscription_id", "weeks"]),
    ("check_inventory", {"sku": {"type": "string"}, "warehouse": {"type": "string"}}, ["sku"]),
    ("place_order", {"sku": {"type": "string"}, "quantity": {"type": "integer"},
                     "shipping": {"type": "object", "properties": {"zip": {"type": "string"},
                                                                   "express": {"type": "boolean"}}}},
     ["sku", "quantity"]),
    ("get_shipping_estimate", {"zip_code": {"type": "string"}, "weight_kg": {"type": "number"}},
     ["zip_code"]),
    ("search_web", {"query": {"type": "string"}, "max_results": {"type": "integer"}}, ["query"]),
    ("get_account_balance", {"account_id": {"type": "string"}}, ["account_id"]),
    ("send_email", {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
     ["to", "subject"]),
    ("book_table", {"restaurant": {"type": "string"}, "date": {"type": "string"}, "party_size": {"type": "integer"}},
     ["restaurant", "date", "party_size"]),
]


def _tool(name: str, props: dict, required: list[str]) -> dict:
    return {"name": name, "description": f"{name.replace('_', ' ')}.",
            "parameters": {"type": "object", "properties": props, "required": required}}


def _arguments(name: str, props: dict, required: list[str], n: int, rng: random.Random) -> dict:
    args = {}
    for key in required + [k for k in props if k not in required and rng.random() < 0.3]:
        kind = props[key].get("type")
        if "enum" in props[key]:
            args[key] = props[key]["enum"][n % len(props[key]["enum"])]
        elif kind == "string":
            args[key] = f"{key[:3].upper()}-{n % 100000}"
        elif kind == "integer":
            args[key] = 1 + n % 9
        elif kind == "number":
            args[key] = round(10 + (n % 500) / 4, 2)
        elif kind == "boolean":
            args[key] = bool(n % 2)
        else:
            args[key] = {"zip": f"{10000 + n % 89999}", "express": False}
    return args


_NEAR = {"update_user": "update_user_profile", "update_user_profile": "update_user",
         "cancel_subscription": "pause_subscription", "pause_subscription": "cancel_subscription",
         "search_orders": "get_order", "get_order": "search_orders", "get_refund_policy": "issue_refund",
         "check_inventory": "place_order", "get_shipping_estimate": "place_order"}
"""The tool an agent confuses a tool with, when both are offered (near-duplicate names and purposes)."""

FAIL_RATE = 0.45
"""Share of runs with at least one error (a fifth of them with two): a mid-table model on a hard tool set."""


def _near_miss(value: object, rng: random.Random) -> object:
    """A value an agent gets almost right: a transposed or dropped digit, another case, an off-by-one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((-1, 1))
    if isinstance(value, float):
        return round(value * rng.choice((0.9, 1.1)), 2)
    if isinstance(value, str) and len(value) > 2:
        kind = rng.randrange(3)
        if kind == 0:
            return value[:-2] + value[-1] + value[-2]
        if kind == 1:
            return value.lower()
        return value[:-1]
    return "X"


def _mistake(calls: list[dict], tools: list[dict], rng: random.Random) -> list[dict]:
    """One agent error of a random kind, on one of the calls (a parallel answer may go wrong in either)."""
    at = rng.randrange(len(calls))
    call = dict(calls[at])
    try:
        args = dict(json.loads(call["arguments"]))
    except ValueError:  # an earlier mistake left it unparseable
        return calls
    offered = {t["name"]: t for t in tools}
    kind = rng.choices(range(9), weights=(14, 22, 12, 10, 10, 5, 10, 7, 10))[0]
    if kind == 0:  # wrong tool: the near duplicate when offered, else any other
        near = _NEAR.get(call["name"])
        others = [t for t in offered if t != call["name"]]
        call["name"] = near if near in offered else rng.choice(others)
    elif kind == 1 and args:  # a near-miss value
        key = rng.choice(list(args))
        args[key] = _near_miss(args[key], rng)
    elif kind == 2 and args:  # a required argument left out
        args.pop(rng.choice(list(args)))
    elif kind == 3:  # a parameter the tool does not have
        args[rng.choice(("discount_code", "customer_name", "notes", "priority"))] = "high"
    elif kind == 4 and args:  # the wrong JSON type: a number as a string, a value wrapped in a list
        key = rng.choice(list(args))
        args[key] = str(args[key]) if isinstance(args[key], int | float) else [args[key]]
    elif kind == 5:  # arguments that are not JSON
        call["arguments"] = json.dumps(args)[:-1]
        return [*calls[:at], call, *calls[at + 1:]]
    elif kind == 6:  # no call where one was needed
        return []
    elif kind == 7:  # the call repeated
        return [*calls, dict(calls[at])]
    else:  # one of several calls dropped, or an extra lookup first
        if len(calls) > 1:
            return [c for k, c in enumerate(calls) if k != at]
        extra = rng.choice(list(offered))
        return [{"name": extra, "arguments": "{}"}, *calls]
    call["arguments"] = json.dumps(args)
    return [*calls[:at], call, *calls[at + 1:]]


def _as_agent_writes(arguments: dict, rng: random.Random) -> str:
    """Correct arguments as agents write them: keys in any order, with or without spaces."""
    items = list(arguments.items())
    rng.shuffle(items)
    return json.dumps(dict(items), separators=rng.choice(((",", ":"), (", ", ": "))))


def generate(directory: Path, n: int, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    specs = [_tool(*t) for t in _TOOL_POOL]
    gold_path, runs_path = directory / "gold.jsonl", directory / "runs.jsonl"
    with gold_path.open("w", encoding="utf-8") as gold, runs_path.open("w", encoding="utf-8") as runs:
        for i in range(n):
            size = 3 + i % 10
            offered = rng.sample(range(len(specs)), min(size, len(specs)))
            tools = [specs[k] for k in offered]
            roll = rng.random()
            case: dict = {"format": "toolgold.gold/1", "id": f"bench-{i:07d}", "split": "regression"
                          if i % 4 else "rolling", "tools": tools, "tags": [f"t{i % 5}"]}
            if roll < 0.08:
                expected = {"behavior": "no_call"}
                calls = []
                text = "Thanks, that is all."
            elif roll < 0.12:
                expected = {"behavior": "clarify"}
                calls = []
                text = "Cancel my order please."
            else:
                parallel = 2 if roll > 0.92 else 1
                picked = [_TOOL_POOL[k] for k in offered[:parallel]]
                gold_calls = [{"name": p[0], "arguments": _arguments(*p, i + j, rng)} for j, p in enumerate(picked)]
                expected = {"behavior": "call", "calls": gold_calls}
                calls = [{"name": c["name"], "arguments": _as_agent_writes(c["arguments"], rng)} for c in gold_calls]
                if parallel > 1 and rng.random() < 0.5:
                    calls.reverse()
                ids = " ".join(str(v) for c in gold_calls for v in c["arguments"].values())
                text = f"Please help. My details: {ids}."
            case["messages"] = [{"role": "system", "content": "You are a careful support agent."},
                                {"role": "user", "content": text}]
            case["expected"] = expected
            if i % 17 == 0:
                case["alternatives"] = [{"behavior": "clarify"}]
            if rng.random() < FAIL_RATE:
                if not calls:  # over-calling: a lookup where none was needed, or made-up values
                    calls = [{"name": tools[0]["name"], "arguments": "{}"}]
                else:
                    for _ in range(2 if rng.random() < 0.2 else 1):
                        calls = _mistake(calls, tools, rng) if calls else calls
            gold.write(json.dumps(case, separators=(",", ":")) + "\n")
            runs.write(json.dumps({"format": "toolgold.run/1", "case_id": case["id"], "calls": calls},
                                  separators=(",", ":")) + "\n")
    return gold_path, runs_path


def core_throughput(gold: Path, runs: Path, sample: int, repeats: int = 5) -> tuple[int, float, float]:
    """Cases per second of score_trials + ReportBuilder.add over ``sample`` pre-parsed cases on one core,
    the best of ``repeats`` passes (as timeit does: other work on the machine only ever slows a pass down),
    by wall clock and by this process's CPU time."""
    import gc

    from scorer.api import score_trials
    from scorer.formats import read_records
    from scorer.model import GoldCase, RunRecord
    from scorer.report import ReportBuilder

    with gold.open("rb") as g, runs.open("rb") as r:
        cases = [c for _, (_, c) in zip(range(sample), read_records(g, str(gold), expect=GoldCase), strict=False)]
        records = [c for _, (_, c) in zip(range(sample), read_records(r, str(runs), expect=RunRecord), strict=False)]
    gc.freeze()  # the parsed sample is input, not work: keep the collector from rescanning it
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        builder = ReportBuilder()
        started, cpu_started = time.perf_counter(), time.process_time()
        for case, run in zip(cases, records, strict=True):
            builder.add(score_trials(case, [run]))
        best_wall = min(best_wall, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu_started)
        builder.finish()
    gc.unfreeze()
    return len(cases), len(cases) / best_wall, len(cases) / best_cpu


_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "sys.stderr.write(code.stderr.decode())\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'code': code.returncode, 'peak_kb': peak}))\n"
)
"""Runs the command from a small process, so the largest-process peak it reports is toolgold's (or one of
its workers'), not a fork of this benchmark's own memory."""


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except OSError:
            children = []
        found += children
        frontier += children
    return found


def _tree_pss_mb(pid: int) -> float:
    """Proportional set size of the process tree under ``pid``: memory shared by forked workers counts once."""
    total = 0
    for p in _descendants(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def end_to_end(gold: Path, runs: Path, fmt: str, workers: int, out: Path) -> tuple[float, float, float, int]:
    """(seconds, peak RSS of the largest process MB, peak sampled PSS of the whole tree MB, exit code)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER, str(TOOLGOLD), "score", str(gold), str(runs),
                             "--format", fmt, "-o", str(out), "--workers", str(workers), "--allow-unscored"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak_tree = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not done.is_set():
            peak_tree = max(peak_tree, _tree_pss_mb(proc.pid))
            time.sleep(0.1)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, err = proc.communicate()
    done.set()
    sampler.join()
    elapsed = time.perf_counter() - started
    measured = json.loads(stdout.decode().strip().splitlines()[-1])
    if measured["code"] not in (0, 1):
        sys.stderr.write(err.decode())
    return elapsed, measured["peak_kb"] / 1024, peak_tree, measured["code"]


def id_pass(gold: Path, runs: Path, directory: Path, *, child: bool, workers: int = 2) -> float:
    """Wall seconds of the id pass (``engine._read_pairing``, before any worker starts) on these files, in this
    process: with a large runs file's ids read by a child process (``child``, as ``toolgold score`` does from
    ``engine.RUN_READER_MIN_BYTES`` on), or read here, by the pass itself."""
    from scorer import engine

    saved = engine.RUN_READER_MIN_BYTES
    engine.RUN_READER_MIN_BYTES = 0 if child else 1 << 62
    try:
        with tempfile.TemporaryDirectory(dir=directory) as spill:
            started = time.perf_counter()
            pairing = engine._read_pairing(gold, runs, engine._shard_jobs(gold, workers, None, False), Path(spill))
            seconds = time.perf_counter() - started
            pairing.gold.close()
            pairing.runs.close()
    finally:
        engine.RUN_READER_MIN_BYTES = saved
    return seconds


def json_anchor(paths: list[Path]) -> float:
    """Seconds to ``json.loads`` every line of ``paths`` on one core: the floor any reader pays."""
    started = time.perf_counter()
    for path in paths:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
    return time.perf_counter() - started


def _prefix(src: Path, dst: Path, n: int) -> Path:
    with src.open("rb") as fh, dst.open("wb") as out:
        for _, line in zip(range(n), fh, strict=False):
            out.write(line)
    return dst


def _shuffled(src: Path, dst: Path, seed: int = 5) -> Path:
    """The runs in another order than the gold: what the engine joins on disk instead of streaming."""
    with src.open("rb") as fh:
        lines = fh.readlines()
    random.Random(seed).shuffle(lines)
    with dst.open("wb") as out:
        out.writelines(lines)
    return dst


def _data(directory: Path, n: int, given: Path | None) -> tuple[Path, Path]:
    if given is not None and (given / "gold.jsonl").exists():
        with (given / "gold.jsonl").open("rb") as fh:
            if sum(1 for _ in fh) == n:
                print(f"reusing {given}", flush=True)
                return given / "gold.jsonl", given / "runs.jsonl"
    target = given or directory
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    gold, runs = generate(target, n)
    size_mb = (gold.stat().st_size + runs.stat().st_size) / 1e6
    print(f"generated {n:,} cases + runs ({size_mb:,.0f} MB) in {time.perf_counter() - started:.0f} s", flush=True)
    return gold, runs


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_score", description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--data", type=Path, default=None,
                        help="keep the generated files here (and reuse them when they have --cases lines)")
    parser.add_argument("--json", action="store_true", help="also time --format json (every case) at --cases")
    parser.add_argument("--shuffled", action="store_true",
                        help="also score the runs shuffled (joined on disk, not streamed) at 100,000 and --cases")
    parser.add_argument("--core-sample", type=int, default=100_000,
                        help="cases parsed into memory for the core measurement")
    args = parser.parse_args(argv)
    cache_bytecode()  # the timed processes read the project's bytecode, as a user's second run does
    small_n = min(100_000, args.cases)
    rows = []
    with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
        directory = Path(tmp)
        gold, runs = _data(directory, args.cases, args.data)
        anchor = json_anchor([gold, runs])
        print(f"anchor: json.loads of both files, one core: {anchor:.1f} s", flush=True)
        small = (_prefix(gold, directory / "gold-small.jsonl", small_n),
                 _prefix(runs, directory / "runs-small.jsonl", small_n))
        measured = {}
        for n, (g, r) in ((small_n, small), (args.cases, (gold, runs))):
            seconds, largest, tree, code = end_to_end(g, r, "table", 0, directory / "report.txt")
            measured[n] = (seconds, largest, tree)
            print(f"toolgold score, {n:,} cases, auto workers: {seconds:.1f} s, peak RSS {largest:.0f} MB largest "
                  f"process, {tree:.0f} MB tree PSS (exit {code})", flush=True)
        (s_sec, s_rss, s_pss), (b_sec, b_rss, b_pss) = measured[small_n], measured[args.cases]
        added = max(args.cases - small_n, 1)
        growth, tree_growth = (b_rss - s_rss) * 2**20 / added, (b_pss - s_pss) * 2**20 / added
        print(f"memory growth: {growth:.1f} B/case largest process, {tree_growth:.1f} B/case tree PSS", flush=True)
        rows.append((f"`toolgold score`, auto workers, {args.cases:,} cases",
                     f"{b_sec:.1f} s ({b_sec / anchor:.1f}x the anchor); peak RSS {b_rss:.0f} MB largest "
                     f"process, {b_pss:.0f} MB tree PSS",
                     f"json.loads of both files {anchor:.1f} s", "≤ 60 s", "yes" if b_sec <= 60 else "NO"))
        rows.append((f"`toolgold score`, auto workers, {small_n:,} cases", f"{s_sec:.1f} s; peak RSS {s_rss:.0f} MB "
                     f"largest process, {s_pss:.0f} MB tree PSS", "", "", ""))
        rows.append((f"memory growth {small_n:,} → {args.cases:,} cases",
                     f"{growth:.1f} B/case largest process, {tree_growth:.1f} B/case tree PSS", "", "flat",
                     "yes" if growth * added < 5 * 2**20 else "NO"))
        if args.shuffled:
            shuffled = {}
            for n, (g, r) in ((small_n, small), (args.cases, (gold, runs))):
                mixed = _shuffled(r, directory / f"runs-shuffled-{n}.jsonl")
                shuffled[n] = end_to_end(g, mixed, "table", 0, directory / "report.txt")[:3]
                mixed.unlink()
                print(f"toolgold score, {n:,} cases, runs shuffled: {shuffled[n][0]:.1f} s, peak RSS "
                      f"{shuffled[n][1]:.0f} MB largest process, {shuffled[n][2]:.0f} MB tree PSS", flush=True)
            (x_sec, x_rss, x_pss), (y_sec, y_rss, y_pss) = shuffled[small_n], shuffled[args.cases]
            x_growth, x_tree = (y_rss - x_rss) * 2**20 / added, (y_pss - x_pss) * 2**20 / added
            print(f"runs shuffled, memory growth: {x_growth:.1f} B/case largest process, {x_tree:.1f} B/case "
                  f"tree PSS", flush=True)
            rows.append((f"`toolgold score`, runs shuffled (joined on disk), {args.cases:,} / {small_n:,} cases",
                         f"{y_sec:.1f} s / {x_sec:.1f} s; peak RSS {y_rss:.0f} / {x_rss:.0f} MB largest process; "
                         f"growth {x_growth:.1f} B/case ({x_tree:.1f} tree PSS)",
                         f"runs in gold order: {b_sec:.1f} s / {s_sec:.1f} s", "flat",
                         "yes" if x_growth * added < 5 * 2**20 else "NO"))
        if args.json:
            seconds, largest, tree, code = end_to_end(gold, runs, "json", 0, directory / "report.json")
            (directory / "report.json").unlink(missing_ok=True)
            print(f"toolgold score --format json, {args.cases:,} cases: {seconds:.1f} s, {largest:.0f} MB", flush=True)
            rows.append((f"`toolgold score --format json`, {args.cases:,} cases",
                         f"{seconds:.1f} s; peak RSS {largest:.0f} MB, {tree:.0f} MB tree PSS",
                         f"json.loads of both files {anchor:.1f} s", "≤ 60 s", "yes" if seconds <= 60 else "NO"))
        # The id pass alone, both ways, taking turns (best of 3 each): what the child reader of the runs saves.
        passes = {True: float("inf"), False: float("inf")}
        for _ in range(3):
            for child in (True, False):
                passes[child] = min(passes[child], id_pass(*small, directory, child=child))
        print(f"id pass, {small_n:,} cases: {passes[True]:.2f} s with the runs' ids read by a child process, "
              f"{passes[False]:.2f} s reading them in one process", flush=True)
        rows.append((f"id pass of `toolgold score` (before any worker starts), {small_n:,} cases",
                     f"{passes[True]:.2f} s, the runs' ids read by a child process, best of 3",
                     f"read in one process: {passes[False]:.2f} s", "", ""))
        ten = min(10_000, args.cases)
        tg, tr = _prefix(gold, directory / "gold-10k.jsonl", ten), _prefix(runs, directory / "runs-10k.jsonl", ten)
        best = {1: float("inf"), 2: float("inf")}
        for _ in range(3):
            for workers in (1, 2):
                best[workers] = min(best[workers], end_to_end(tg, tr, "table", workers, directory / "r.txt")[0])
        auto = min(automatic_workers(tg.stat().st_size, os.cpu_count() or 1), 2)
        print(f"{ten:,} cases: 1 worker {best[1]:.2f} s, 2 workers {best[2]:.2f} s (automatic: {auto})", flush=True)
        # the automatic choice against the faster of the two, in this run (within 5%: the runs' own spread)
        rows.append((f"`toolgold score`, {ten:,} cases, 2 workers", f"{best[2]:.2f} s, best of 3 "
                     f"({best[2] / best[1]:.2f}x one)", f"1 worker {best[1]:.2f} s",
                     f"automatic ({auto}) not slower than the other choice",
                     "yes" if best[auto] <= 1.05 * min(best.values()) else "NO"))
        # Last: the sample parsed into memory here would otherwise inflate the forks above.
        sampled, rate, cpu_rate = core_throughput(gold, runs, min(args.core_sample, args.cases))
        rows.append(("scoring core, one core", f"{rate:,.0f} cases/s wall clock, best of 5 "
                     f"({cpu_rate:,.0f} per CPU second), {sampled:,} cases", "", "", ""))
        print(f"core: {rate:,.0f} cases/s wall clock, {cpu_rate:,.0f} cases per CPU second", flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("\n| measurement | result | anchor or floor, same run | target | met |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
