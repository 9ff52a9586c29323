"""The file-scoring engine: score a runs file against a gold file in flat memory, on one or more cores.

Reading files happens here and only here in the scorer (the scoring functions stay pure: records in,
results out). The cases themselves never accumulate: the runs file is indexed first (20 bytes per run: a
hash of its case id and where its line is), then the gold file streams, each case fetching its runs by
offset, so runs may come in any order; the aggregates are bounded by the vocabulary (``ReportBuilder``,
whose shards fold their counts before they are sent back to be merged). What still grows with the input is
that index (16 bytes per run, about 32 at its peak while it is sorted) and one byte of "claimed" per run per
worker; a gold id twice is caught by a run claimed twice, so only cases without a run keep a hash. Large
gold files are split into line-aligned shards scored by worker processes; the per-case results go to a
temporary spool only when the caller wants every case (a JSON or JUnit report, a saved run).

``toolgold score`` is a thin client of ``score_files``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import marshal
import multiprocessing
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from scorer.api import UNSCORED_EXAMPLES, score_trials
from scorer.compare import DEFAULT_MAX_TOOL_DROP, DEFAULT_MIN_TOOL_SUPPORT, Paired, compare
from scorer.errors import InvalidRecord
from scorer.formats import MAX_LINE_BYTES, iter_json_lines, parse_json_text, parse_record
from scorer.gates import check_gates
from scorer.judging import Judge
from scorer.model import MARSHAL_VALUE_VERSION, GoldCase, RunRecord, ToolSpec
from scorer.report import Report, ReportBuilder, Unscored

Outcomes = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]
"""A baseline's pass/fail per (case, trial): sorted key hashes and whether each passed."""

LOOKUP_BATCH = 4
"""Gold cases whose runs are looked up together (one vectorized search per batch). Kept small on purpose:
parsed cases held across a long batch outlive the young GC generations, and the full collections they then
trigger cost more than the batching saves (1,024 made scoring twice as slow)."""
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
"""Below this gold size one process is faster than starting workers: forking, copying the pages each worker
writes and merging cost about 0.4 CPU seconds for two workers, so a worker pays only past a few seconds of
scoring. Measured on this 2-core machine with `bench_score`'s generated cases (1.87 KB of gold each, 45% of
runs failing): 10,000 cases (18.7 MB) scored 1.28x slower with two workers than with one (best of 3, load
7); at 30,000 and 60,000 cases (56 and 112 MB) two workers ranged from 0.8x to 1.6x the time of one under
load 3-7, no size below 64 MB (about 35,000 such cases) was reliably faster with two. The automatic choice
is therefore one process up to 64 MB, so 10,000 cases are never slower than without workers (they were
1.37x slower when the threshold was 8 MB)."""


def key_hash(text: str) -> int:
    """A stable 64-bit hash (the same in every process and run)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _lines_with_offsets(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if end is not None and offset >= end:
                return
            yield offset, raw
            offset += len(raw)


def _decode(raw: bytes, source: str, line: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRecord(f"not valid UTF-8 (byte {exc.start})", source=source, line=line) from None
    return text.removeprefix("\ufeff") if line == 1 else text


_BLANK = object()


def _parse_line(raw: bytes, source: str, line: int) -> Any:
    """The JSON value of one line, parsed from its bytes (no decoding first: the strict reader's fast path
    takes bytes), or ``_BLANK`` for a line of white space. A UTF-8 byte-order mark may open line 1."""
    if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return parse_json_text(raw, source=source, line=line)
    except InvalidRecord:
        if not raw.strip() or not _decode(raw, source, line).strip():  # Unicode white space is blank too
            return _BLANK
        raise


_CASE_ID = re.compile(rb'"case_id"\s*:\s*"((?:[^"\\\n]|\\.)*)"')


def _quick_case_id(raw: bytes) -> str | None:
    """The case id of a run line without parsing all of it, when that is unambiguous (the key occurs once).

    Anything odd returns None and the line is parsed in full; every line is fully validated later anyway,
    when its case is scored or, if no case claims it, when unknown runs are counted."""
    if raw.count(b'"case_id"') != 1:
        return None
    match = _CASE_ID.search(raw)
    if match is None:
        return None
    body = match.group(1)
    try:
        value = json.loads(b'"' + body + b'"') if b"\\" in body else body.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) and value else None


_LENGTH_BITS = 25
"""A line's length in the low bits of its span: up to 32 MiB, past ``MAX_LINE_BYTES`` (16 MiB), which is refused."""
MAX_RUNS_BYTES = 1 << (64 - _LENGTH_BITS)
"""The offset takes the other 39 bits: runs files up to 512 GiB."""


class RunIndex:
    """Where each run's line is, sorted by case-id hash: the runs of a case are a contiguous slice.

    16 bytes per run (the hash, and the line's offset and length packed into one 64-bit span); line numbers
    are counted from the file only when an error needs one. Sorted one array at a time so the peak stays
    near 32 bytes per run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.stat().st_size >= MAX_RUNS_BYTES:
            raise InvalidRecord(f"runs file is over {MAX_RUNS_BYTES >> 30} GiB; split it", source=str(path))
        hashes, spans = array("Q"), array("Q")
        source = str(path)
        for number, (offset, raw) in enumerate(_lines_with_offsets(path), start=1):
            case_id = _quick_case_id(raw) if number > 1 else None
            if case_id is None:
                value = _parse_line(raw, source, number)
                if value is _BLANK:
                    continue
                case_id = value.get("case_id") if isinstance(value, dict) else None
                if not isinstance(case_id, str) or not case_id:
                    # Let the full validator say what is wrong with the record.
                    parse_record(value, expect=RunRecord, source=source, line=number)
                    raise InvalidRecord("a run record needs a case_id", source=source, line=number)
            if len(raw) > MAX_LINE_BYTES:
                raise InvalidRecord(f"record is {len(raw) / 1e6:.1f} MB; the limit is "
                                    f"{MAX_LINE_BYTES // (1024 * 1024)} MB per line", source=source, line=number)
            hashes.append(key_hash(case_id))
            spans.append(offset << _LENGTH_BITS | len(raw))
        order = np.argsort(np.frombuffer(hashes, dtype=np.uint64), kind="stable")
        self.hashes = np.frombuffer(hashes, dtype=np.uint64)[order]
        del hashes
        self.spans = np.frombuffer(spans, dtype=np.uint64)[order]

    def __len__(self) -> int:
        return len(self.hashes)

    def slices(self, case_ids: list[str]) -> tuple[list[int], list[int], list[int]]:
        """The hash of each case id and the [start, stop) positions of its runs (empty when it has none),
        looked up for a whole batch at once."""
        hashes = [key_hash(c) for c in case_ids]
        wanted = np.array(hashes, dtype=np.uint64)
        starts = np.searchsorted(self.hashes, wanted, side="left")
        stops = np.searchsorted(self.hashes, wanted, side="right")
        return hashes, starts.tolist(), stops.tolist()

    def offset(self, position: int) -> int:
        return int(self.spans[position]) >> _LENGTH_BITS

    def line(self, position: int) -> int:
        """The line number of a run (errors only: it counts the line ends before it)."""
        end, count = self.offset(position), 0
        with self.path.open("rb") as fh:
            while end > 0:
                chunk = fh.read(min(end, 1 << 20))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                end -= len(chunk)
        return count + 1

    def read(self, fd: int, position: int) -> RunRecord:
        span = int(self.spans[position])
        offset = span >> _LENGTH_BITS
        raw = os.pread(fd, span & ((1 << _LENGTH_BITS) - 1), offset)
        source = str(self.path)
        try:
            value = _parse_line(raw, source, 1 if offset == 0 else 2)
            record: RunRecord = parse_record(value, expect=RunRecord, source=source)
        except InvalidRecord as exc:
            raise type(exc)(exc.message, source=source, line=self.line(position)) from None
        return record


@dataclass
class Shard:
    """What one worker did with one line-aligned slice of the gold file."""

    builder: ReportBuilder
    used: np.ndarray[Any, Any]
    """Which runs a gold case claimed. A run claimed twice means a gold id twice (runs are claimed only by
    the exact id they name), so duplicates among cases with runs need no per-case memory."""
    reclaimed: bool = False
    """A case here claimed a run an earlier case of this shard had claimed: some gold id appears twice."""
    unrun_hashes: array[int] = field(default_factory=lambda: array("Q"))
    """The id hash of each case without a run: the only gold cases whose duplicates ``used`` cannot show."""
    without_run: int = 0
    without_run_examples: list[str] = field(default_factory=list)
    outcome_keys: array[int] = field(default_factory=lambda: array("Q"))
    outcome_passed: array[int] = field(default_factory=lambda: array("b"))


@dataclass(frozen=True)
class Job:
    gold: Path
    start: int
    end: int
    first_line: int
    spool: Path | None
    pair_outcomes: bool


_INDEX: RunIndex | None = None
"""Set before workers fork, so each shares the index instead of pickling it."""
_JUDGE: Judge | None = None
"""The judge semantic arguments go to (``--judge``: verdicts already in the store), shared the same way."""


class ToolCache:
    """Validated tool specs by their JSON value: the same toolkit recurs in every gold case, and checking
    its schemas again for each case was most of the cost of reading gold.

    A case whose tools are all known gets the validated specs in place of the raw ones (pydantic takes a
    model instance as it is); any other case is validated in full, so errors read exactly as without the
    cache, and its tools are remembered once the case is valid.
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._specs: dict[bytes, ToolSpec] = {}

    def parse(self, value: Any, *, source: str, line: int) -> GoldCase:
        tools = value.get("tools") if isinstance(value, dict) else None
        keys = None
        if isinstance(tools, list) and tools:
            try:
                keys = [marshal.dumps(t, MARSHAL_VALUE_VERSION) for t in tools]
            except ValueError:  # not plain JSON values: let the validator say so
                keys = None
            else:
                known = [self._specs.get(k) for k in keys]
                if None not in known:
                    value = {**value, "tools": known}
                    keys = None
        case: GoldCase = parse_record(value, expect=GoldCase, source=source, line=line)
        if keys is not None and len(keys) == len(case.tools):
            if len(self._specs) + len(keys) > self.LIMIT:
                self._specs.clear()
            self._specs.update(zip(keys, case.tools, strict=True))
        return case


def _gold_records(job: Job) -> Iterator[tuple[int, GoldCase]]:
    source = str(job.gold)
    tools = ToolCache()
    for number, (_, raw) in enumerate(_lines_with_offsets(job.gold, job.start, job.end), start=job.first_line):
        value = _parse_line(raw, source, number)
        if value is not _BLANK:
            yield number, tools.parse(value, source=source, line=number)


def _runs_of(case: GoldCase, positions: range, index: RunIndex, fd: int, shard: Shard) -> list[RunRecord]:
    runs = []
    used = shard.used
    trial_at: dict[int, int] = {}
    for position in positions:
        run = index.read(fd, position)
        if run.case_id != case.id:
            continue  # a different id with the same 64-bit hash
        if run.trial in trial_at:
            first, second = sorted((index.line(trial_at[run.trial]), index.line(position)))
            raise InvalidRecord(f"a second run for case {case.id!r} trial {run.trial} (the first is at "
                                f"line {first})", source=str(index.path), line=second)
        trial_at[run.trial] = position
        if used[position]:
            shard.reclaimed = True
        used[position] = True
        runs.append(run)
    return runs


def _score_shard(job: Job) -> Shard:
    index = _INDEX
    if index is None:
        raise RuntimeError("score_files sets the run index before scoring shards")
    shard = Shard(builder=ReportBuilder(), used=np.zeros(len(index), dtype=bool))
    spool = job.spool.open("w", encoding="utf-8") if job.spool else None
    fd = os.open(index.path, os.O_RDONLY)
    records = _gold_records(job)
    try:
        while batch := list(islice(records, LOOKUP_BATCH)):
            hashes, starts, stops = index.slices([case.id for _, case in batch])
            for (_, case), hashed, start, stop in zip(batch, hashes, starts, stops, strict=True):
                runs = _runs_of(case, range(start, stop), index, fd, shard)
                if not runs:
                    shard.unrun_hashes.append(hashed)
                    shard.without_run += 1
                    if len(shard.without_run_examples) < UNSCORED_EXAMPLES:
                        shard.without_run_examples.append(case.id)
                    continue
                results = score_trials(case, runs, judge=_JUDGE)
                shard.builder.add(results)
                if spool is not None:
                    for result in results:
                        spool.write(result.model_dump_json())
                        spool.write("\n")
                if job.pair_outcomes:
                    for result in results:
                        shard.outcome_keys.append(key_hash(f"{result.case_id}\0{result.trial}"))
                        shard.outcome_passed.append(result.status == "pass")
    finally:
        os.close(fd)
        if spool is not None:
            spool.close()
    shard.builder.compact()
    return shard


def _shard_jobs(gold: Path, workers: int, spool_dir: Path | None, pair: bool) -> list[Job]:
    """Split ``gold`` into ``workers`` line-aligned byte ranges, each knowing its first line number."""
    size = gold.stat().st_size
    bounds = [0]
    with gold.open("rb") as fh:
        for k in range(1, workers):
            fh.seek(max(size * k // workers, bounds[-1]))
            fh.readline()
            bounds.append(min(fh.tell(), size))
    bounds.append(size)
    bounds = sorted(set(bounds))
    jobs = []
    line = 1
    with gold.open("rb") as fh:
        for k, (start, end) in enumerate(itertools.pairwise(bounds)):
            spool = spool_dir / f"shard-{k:03d}.jsonl" if spool_dir else None
            jobs.append(Job(gold, start, end, line, spool, pair))
            fh.seek(start)
            remaining = end - start
            while remaining > 0:
                chunk = fh.read(min(remaining, 1 << 20))
                line += chunk.count(b"\n")
                remaining -= len(chunk)
    return jobs


def _merge_used(shards: list[Shard]) -> tuple[np.ndarray[Any, Any], bool]:
    """The runs any shard claimed, and whether two cases claimed the same run (a gold id twice)."""
    used = shards[0].used
    reclaimed = shards[0].reclaimed
    for shard in shards[1:]:
        reclaimed = reclaimed or shard.reclaimed or bool(np.any(used & shard.used))
        used |= shard.used
    return used, reclaimed


def _check_duplicates(gold: Path, shards: list[Shard], reclaimed: bool) -> None:
    """Raise at the second line of a gold id that appears twice. Cases with runs show it by a run claimed
    twice (``reclaimed``); cases without, by their id hashes (kept only for them)."""
    hashes = np.concatenate([np.frombuffer(s.unrun_hashes, dtype=np.uint64) for s in shards])
    if not reclaimed and len(np.unique(hashes)) == len(hashes):
        return
    # Rare: find the pair by reading the ids again (the hashes alone do not say where they were).
    first_line: dict[str, int] = {}
    with gold.open("rb") as fh:
        for number, value in iter_json_lines(fh, str(gold)):
            if not isinstance(value, dict):
                continue
            case_id = str(value.get("id"))
            if case_id in first_line:
                raise InvalidRecord(f"gold case id {case_id!r} appears twice (first at line {first_line[case_id]})",
                                    source=str(gold), line=number)
            first_line[case_id] = number


def _unknown_runs(index: RunIndex, used: np.ndarray[Any, Any]) -> tuple[int, list[str]]:
    """Runs no gold case claimed: each is validated (bad input is still bad input) and counted."""
    unused = np.flatnonzero(~used)
    examples: list[str] = []
    fd = os.open(index.path, os.O_RDONLY)
    try:
        for position in sorted(unused.tolist(), key=index.offset):
            run = index.read(fd, position)
            if len(examples) < UNSCORED_EXAMPLES and run.case_id not in examples:
                examples.append(run.case_id)
    finally:
        os.close(fd)
    return len(unused), examples


def baseline_outcomes(cases: Iterator[dict[str, Any]]) -> Outcomes:
    keys, passed = [], []
    for case in cases:
        keys.append(key_hash(f"{case.get('case_id')}\0{case.get('trial') or 0}"))
        passed.append(case.get("status") == "pass")
    order = np.argsort(np.array(keys, dtype=np.uint64), kind="stable")
    return np.array(keys, dtype=np.uint64)[order], np.array(passed, dtype=bool)[order]


def _pair(baseline: Outcomes, shards: list[Shard]) -> Paired:
    base_keys, base_passed = baseline
    keys = np.concatenate([np.frombuffer(s.outcome_keys, dtype=np.uint64) for s in shards])
    now = np.concatenate([np.frombuffer(s.outcome_passed, dtype=np.int8) for s in shards]).astype(bool)
    if not len(keys) or not len(base_keys):
        return Paired()
    at = np.minimum(np.searchsorted(base_keys, keys), len(base_keys) - 1)
    found = base_keys[at] == keys
    before, after = base_passed[at][found], now[found]
    return Paired(both_pass=int(np.sum(before & after)), only_baseline=int(np.sum(before & ~after)),
                  only_current=int(np.sum(~before & after)), both_fail=int(np.sum(~before & ~after)))


@dataclass
class Scored:
    report: Report
    spools: list[Path]


def score_files(gold: Path, runs: Path, *, workers: int = 0, spool_dir: Path | None = None,
                baseline: tuple[Report, Outcomes] | None = None,
                thresholds: Sequence[tuple[str, float]] = (), max_tool_drop: float = DEFAULT_MAX_TOOL_DROP,
                min_tool_support: int = DEFAULT_MIN_TOOL_SUPPORT, judge: Judge | None = None,
                names: tuple[str, str] | None = None) -> Scored:
    """Score the runs file against the gold file (both JSON Lines): the report, gated and compared with
    ``baseline`` when given; with ``spool_dir``, every result is also written there (``Scored.spools``).
    ``names`` are what errors call the gold and runs files (an upload saved to a temporary file keeps
    its own name), by default their paths.

    ``workers`` 0 picks one process per core (up to 4) for large gold files, one otherwise. Raises
    ``InvalidRecord`` (with file and line) for bad input and ``ScoringInputError`` for inputs that do
    not fit together (a gold id twice, two runs for one trial).
    """
    try:
        return _score_files(gold, runs, workers=workers, spool_dir=spool_dir, baseline=baseline,
                            thresholds=thresholds, max_tool_drop=max_tool_drop, min_tool_support=min_tool_support,
                            judge=judge)
    except InvalidRecord as exc:
        shown = dict(zip((str(gold), str(runs)), names, strict=True)) if names else {}
        if exc.source not in shown:
            raise
        raise type(exc)(exc.message, source=shown[exc.source], line=exc.line) from None


def _score_files(gold: Path, runs: Path, *, workers: int, spool_dir: Path | None,
                 baseline: tuple[Report, Outcomes] | None, thresholds: Sequence[tuple[str, float]],
                 max_tool_drop: float, min_tool_support: int, judge: Judge | None) -> Scored:
    global _INDEX, _JUDGE
    _INDEX = index = RunIndex(runs)
    _JUDGE = judge
    try:
        size = gold.stat().st_size
        if size == 0 or (size <= 65536 and not gold.read_bytes().strip(b" \t\r\n\xef\xbb\xbf")):
            raise InvalidRecord("no gold cases in this file (it is empty)", source=str(gold))
        if workers <= 0:
            big = gold.stat().st_size >= PARALLEL_MIN_BYTES
            workers = min(os.cpu_count() or 1, 4) if big else 1
        jobs = _shard_jobs(gold, workers, spool_dir, baseline is not None)
        if len(jobs) == 1:
            shards = [_score_shard(jobs[0])]
        else:
            with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
                shards = pool.map(_score_shard, jobs, chunksize=1)
        used, reclaimed = _merge_used(shards)
        _check_duplicates(gold, shards, reclaimed)
        builder = shards[0].builder
        for shard in shards[1:]:
            builder.merge(shard.builder)
        unknown, unknown_examples = _unknown_runs(index, used)
        without_examples = [c for s in shards for c in s.without_run_examples][:UNSCORED_EXAMPLES]
        report = builder.finish(Unscored(
            cases_without_run=sum(s.without_run for s in shards), examples_without_run=tuple(without_examples),
            runs_for_unknown_cases=unknown, examples_unknown=tuple(unknown_examples)))
        update: dict[str, Any] = {"gates": check_gates(report, thresholds)}
        if baseline is not None:
            update["comparison"] = compare(report, baseline[0], _pair(baseline[1], shards),
                                           max_tool_drop=max_tool_drop, min_tool_support=min_tool_support)
        spools = [j.spool for j in jobs if j.spool is not None]
        return Scored(report.model_copy(update=update), spools)
    finally:
        _INDEX = _JUDGE = None


def spooled_lines(spools: list[Path]) -> Iterator[str]:
    for path in spools:
        with path.open(encoding="utf-8") as fh:
            yield from fh


__all__ = ["Outcomes", "RunIndex", "Scored", "baseline_outcomes", "key_hash", "score_files", "spooled_lines"]
