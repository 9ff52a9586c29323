"""The file-scoring engine: score a runs file against a gold file in flat memory, on one or more cores.

Reading files happens here and only here in the scorer (the scoring functions stay pure: records in,
results out). Nothing held grows with the number of cases. A first pass reads only the ids of both files
(each run's from its line without parsing the rest, when that is unambiguous; a large runs file's in a child
process, meanwhile), in lockstep: the runs of each gold case are expected next in the runs file, as they are
when the runs were produced by iterating the gold.
When every run was taken that way (cases without a run are fine), each worker then streams its slice of the
gold and the matching slice of the runs side by side, and there is no index at all. Otherwise (runs in
another order, runs for cases the gold lacks) the ids are joined on disk: (id hash, line) of the gold and
(id hash, where the line is) of the runs are spilled to temporary files partitioned by hash, joined one
partition at a time, and the (gold line, run) pairs spilled again by gold line, so each worker reads its
cases' runs from one sorted file. A gold id twice shows as a hash twice in the same partition. The
aggregates are bounded by the vocabulary (``ReportBuilder``, whose shards fold their counts before they are
sent back to be merged). Large gold files are split into line-aligned shards scored by worker processes;
the per-case results go to a temporary spool only when the caller wants every case (a JSON or JUnit report,
a saved run).

``toolgold score`` is a thin client of ``score_files``.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import os
import re
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from scorer.api import UNSCORED_EXAMPLES, score_trials
from scorer.compare import DEFAULT_MAX_TOOL_DROP, DEFAULT_MIN_TOOL_SUPPORT, Paired, compare
from scorer.errors import InvalidRecord, ScoringInterrupted
from scorer.formats import MAX_LINE_BYTES, iter_json_lines, parse_json_text, parse_record
from scorer.gates import check_gates
from scorer.judging import Judge
from scorer.model import GoldCase, RunRecord, ToolSpec
from scorer.report import Report, ReportBuilder, Unscored

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used: a small file scored in lockstep never needs it (a fifth of start-up).
Outcomes = tuple["np.ndarray[Any, Any]", "np.ndarray[Any, Any]"]
"""A baseline's pass/fail per (case, trial): sorted key hashes and whether each passed."""

PARALLEL_MIN_BYTES = 4 * 1024 * 1024
"""Below this gold size one process is as fast as starting workers. Measured with `bench_score`'s generated
cases (1.87 KB of gold each, 45% of runs failing) on a quiet 2-core machine (stop 31, load ~1.0, the two
choices taking turns, best of 3-4): 1,000 cases (1.9 MB) 0.38 s with one process, 0.36 s with two; 2,000
(3.7 MB) 0.51 / 0.44 s; 10,000 (18.7 MB) 1.53 / 1.03 s, for 1.52 / 1.57 CPU s (the workers' forking and
merging cost ~0.05 CPU s, not the 0.4 s an earlier estimate gave); 35,000 (65 MB) 4.60 / 2.79 s. The threshold
was 64 MB from measurements under load 3-7, where two workers ranged from 0.8x to 1.6x the time of one: on a
machine whose other core is busy, a second worker cannot help."""


def automatic_workers(gold_bytes: int, cores: int) -> int:
    """How many processes ``--workers 0`` scores a gold file of ``gold_bytes`` with: one per core, up to 4,
    from ``PARALLEL_MIN_BYTES`` on; one below it."""
    return min(max(cores, 1), 4) if gold_bytes >= PARALLEL_MIN_BYTES else 1


def key_hash(text: str) -> int:
    """A stable 64-bit hash (the same in every process and run)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _key_hash_of_utf8(data: bytes) -> int:
    """``key_hash`` of the text whose UTF-8 is ``data`` (an id read from a line as it is: no decoding and
    encoding back)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


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
_CASE_ID_PLAIN = re.compile(rb'"case_id"\s*:\s*"([^"\\\n]*)"')
"""``_CASE_ID`` for a value without an escape, tried first: the same match where the key occurs once (a
repetition of an alternation costs ``re`` several hundred instructions a character)."""


def _json_string(body: bytes) -> str | None:
    """The value of a JSON string's body (between its quotes), or None when it is not valid."""
    try:
        value = json.loads(b'"' + body + b'"') if body.find(b"\\") >= 0 else body.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def _quick_case_key(raw: bytes) -> tuple[str, int] | None:
    """The case id of a run line and its ``key_hash``, read without parsing all of the line, when that is
    unambiguous: the key occurs once and no key can be spelled with a ``\\u`` escape (a ``"case_id"`` inside a
    string has its quotes escaped). An id without an escape is hashed from the line's bytes.

    Anything odd returns None and the line is parsed in full; every line is fully validated later anyway,
    when its case is scored or, if no case claims it, when unknown runs are counted."""
    if raw.count(b'"case_id"') != 1 or raw.find(b"\\u") >= 0:  # (``find``: see ``_gold_key``)
        return None
    match = _CASE_ID_PLAIN.search(raw) or _CASE_ID.search(raw)
    return _id_and_hash(match.group(1)) if match is not None else None


def _id_and_hash(body: bytes) -> tuple[str, int] | None:
    """A JSON string's value (``_json_string`` of its body) and its ``key_hash``; None when it is not valid or
    empty. Without an escape the body is the id's UTF-8 (once it decodes), hashed as it is."""
    if body.find(b"\\") < 0:
        try:
            value = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return (value, _key_hash_of_utf8(body)) if value else None
    text = _json_string(body)
    return (text, key_hash(text)) if text else None


_LENGTH_BITS = 25
"""A line's length in the low bits of its span: up to 32 MiB, past ``MAX_LINE_BYTES`` (16 MiB), which is refused."""
MAX_RUNS_BYTES = 1 << (64 - _LENGTH_BITS)
"""The offset takes the other 39 bits: runs files up to 512 GiB."""
_NO_OFFSET = 1 << 64
"""Past any offset: no shard begins there."""


class RunIndex:
    """Where each run's line is, sorted by case-id hash: the runs of a case are a contiguous slice. Used by
    the judge step of ``toolgold score --judge`` (``labeler.cli.judge.case_runs``); scoring itself keeps no
    index (``score_files``).

    16 bytes per run (the hash, and the line's offset and length packed into one 64-bit span); line numbers
    are counted from the file only when an error needs one. Sorted one array at a time so the peak stays
    near 32 bytes per run."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = path
        if path.stat().st_size >= MAX_RUNS_BYTES:
            raise InvalidRecord(f"runs file is over {MAX_RUNS_BYTES >> 30} GiB; split it", source=str(path))
        hashes, spans = array("Q"), array("Q")
        for offset, _, length, _, digest in _run_keys(path):
            hashes.append(digest)
            spans.append(offset << _LENGTH_BITS | length)
        order = np.argsort(np.frombuffer(hashes, dtype=np.uint64), kind="stable")
        self.hashes = np.frombuffer(hashes, dtype=np.uint64)[order]
        del hashes
        self.spans = np.frombuffer(spans, dtype=np.uint64)[order]

    def __len__(self) -> int:
        return len(self.hashes)

    def slices(self, case_ids: list[str]) -> tuple[list[int], list[int], list[int]]:
        """The hash of each case id and the [start, stop) positions of its runs (empty when it has none),
        looked up for a whole batch at once."""
        import numpy as np

        hashes = [key_hash(c) for c in case_ids]
        wanted = np.array(hashes, dtype=np.uint64)
        starts = np.searchsorted(self.hashes, wanted, side="left")
        stops = np.searchsorted(self.hashes, wanted, side="right")
        return hashes, starts.tolist(), stops.tolist()

    def offset(self, position: int) -> int:
        return int(self.spans[position]) >> _LENGTH_BITS

    def line(self, position: int) -> int:
        """The line number of a run (errors only: it counts the line ends before it)."""
        return _line_at(self.path, self.offset(position))

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


_SPILL_BLOCK = 512
"""Pairs a partition buffers before they are written out (8 KiB)."""
_SPILL_MAX_PARTS = 256
"""At most this many partitions: 2 MiB of buffers, and a partition read back holds 1/256 of the pairs."""


class _Spill:
    """(key, value) pairs of 64-bit integers spilled to a temporary file, partitioned by key range, so each
    partition can be read back and sorted alone: an external sort whose memory is the partitions' buffers
    and one partition, not every pair. ``width`` is the key range of one partition."""

    def __init__(self, path: Path, parts: int, width: int) -> None:
        self.path, self.parts, self.width = path, parts, max(width, 1)
        self._fh = path.open("w+b")
        self._buffers = [array("Q") for _ in range(parts)]
        self._blocks: list[array[int]] = [array("Q") for _ in range(parts)]
        """Each partition's blocks in the file: offset and number of integers, in pairs."""

    @staticmethod
    def partitions_for(size: int) -> int:
        """A power of two for about ``size`` bytes of input: more partitions for more lines (a line is at
        least 16 bytes), so a partition stays near 32,768 pairs up to 256 partitions."""
        parts = 1
        while parts < _SPILL_MAX_PARTS and parts * 32768 * 16 < size:
            parts *= 2
        return parts

    def add(self, key: int, value: int) -> None:
        part = min(key // self.width, self.parts - 1)
        buffer = self._buffers[part]
        buffer.append(key)
        buffer.append(value)
        if len(buffer) >= 2 * _SPILL_BLOCK:
            self._flush(part)

    def add_many(self, keys: np.ndarray[Any, Any], values: np.ndarray[Any, Any]) -> None:
        for key, value in zip(keys.tolist(), values.tolist(), strict=True):
            self.add(key, value)

    def _flush(self, part: int) -> None:
        buffer = self._buffers[part]
        self._fh.seek(0, os.SEEK_END)
        self._blocks[part].extend((self._fh.tell(), len(buffer)))
        buffer.tofile(self._fh)
        self._buffers[part] = array("Q")

    def read_flat(self, part: int) -> array[int]:
        """The pairs of one partition, key and value interleaved, in the order they were added."""
        self._fh.flush()
        pairs = array("Q")
        blocks = self._blocks[part]
        for k in range(0, len(blocks), 2):
            pairs.frombytes(os.pread(self._fh.fileno(), blocks[k + 1] * 8, blocks[k]))
        pairs.extend(self._buffers[part])
        return pairs

    def read(self, part: int) -> np.ndarray[Any, Any]:
        """The pairs of one partition as an (n, 2) array, in the order they were added."""
        import numpy as np

        return np.frombuffer(self.read_flat(part), dtype=np.uint64).reshape(-1, 2)

    def hand_over(self) -> list[array[int]]:
        """Write out every pair still buffered and return the index of the file's blocks: for the process that
        made this spill (``take_over``), when another one (forked) added the pairs."""
        for part in range(self.parts):
            if self._buffers[part]:
                self._flush(part)
        self._fh.flush()
        return self._blocks

    def take_over(self, blocks: list[array[int]]) -> None:
        """The pairs a forked process added to this spill and handed over (``hand_over``)."""
        self._blocks = blocks
        self._buffers = [array("Q") for _ in range(self.parts)]

    def close(self) -> None:
        self._fh.close()


_GOLD_ID = re.compile(rb'"id"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_GOLD_ID_PLAIN = re.compile(rb'"id"\s*:\s*"([^"\\\n]*)"')
"""``_GOLD_ID`` for a value without an escape, tried first (as ``_CASE_ID_PLAIN``)."""


def _gold_key(raw: bytes, source: str, line: int) -> Any:
    """The id of a gold line with its ``key_hash``, ``(id, hash)``; ``_BLANK`` for a blank line, or None when the
    line has no readable id (it is bad input, which scoring reports in gold order). Taken from the bytes when
    the key occurs once and no key can be spelled with a ``\\u`` escape: for a valid record that is its id."""
    # ``find``, not ``in``: for bytes, ``in`` first tries its operand as an integer and raises and clears a
    # TypeError (~1.8k instructions a line). A line without a backslash has no \u escape (one memchr).
    if raw.count(b'"id"') == 1 and (raw.find(b"\\") < 0 or raw.find(b"\\u") < 0):
        match = _GOLD_ID_PLAIN.search(raw) or _GOLD_ID.search(raw)
        if match is not None:
            found = _id_and_hash(match.group(1))
            if found is not None:
                return found
    try:
        parsed = _parse_line(raw, source, line)
    except InvalidRecord:
        return None
    if parsed is _BLANK:
        return _BLANK
    case_id = parsed.get("id") if isinstance(parsed, dict) else None
    return (case_id, key_hash(case_id)) if isinstance(case_id, str) and case_id else None


def _run_keys(path: Path) -> Iterator[tuple[int, int, int, str, int]]:
    """Every non-blank run line with its case id and the id's ``key_hash``: ``(offset, line, length, case id,
    hash)``. A line too long, or whose case id cannot be read, is bad input here (every line is fully validated
    later, when its case is scored or unknown runs are counted)."""
    source = str(path)
    number = offset = 0
    with path.open("rb") as fh:
        for raw in fh:
            number += 1
            length = len(raw)
            found = _quick_case_key(raw) if number > 1 else None
            if found is None:
                value = _parse_line(raw, source, number)
                if value is _BLANK:
                    offset += length
                    continue
                case_id = value.get("case_id") if isinstance(value, dict) else None
                if not isinstance(case_id, str) or not case_id:
                    # Let the full validator say what is wrong with the record.
                    parse_record(value, expect=RunRecord, source=source, line=number)
                    raise InvalidRecord("a run record needs a case_id", source=source, line=number)
                found = (case_id, key_hash(case_id))
            if length > MAX_LINE_BYTES:
                raise InvalidRecord(f"record is {length / 1e6:.1f} MB; the limit is "
                                    f"{MAX_LINE_BYTES // (1024 * 1024)} MB per line", source=source, line=number)
            yield offset, number, length, found[0], found[1]
            offset += length


RUN_READER_MIN_BYTES = 4 * 1024 * 1024
"""From this size on, the id pass reads the runs' ids in a child process while this one reads the gold's: the
pass runs before any worker starts, and the runs were a third of it (``bench_score``'s cases: 8.6 µs a case,
serial, ~15% of scoring 1M cases on two cores)."""
_RUN_BLOCK = 4096
"""Runs a block of ``_run_blocks`` holds (128 KiB: four integers each)."""


def _run_blocks(runs: Path, spill: _Spill) -> Iterator[array[int]]:
    """Each run's (id hash, offset, line, length), four integers a run, in blocks of ``_RUN_BLOCK`` runs, in file
    order; every run is also spilled, (hash, span), into ``spill``."""
    block: array[int] = array("Q")
    add = spill.add
    for offset, number, length, _, digest in _run_keys(runs):
        add(digest, offset << _LENGTH_BITS | length)
        block.extend((digest, offset, number, length))
        if len(block) >= 4 * _RUN_BLOCK:
            yield block
            block = array("Q")
    if block:
        yield block


class _RunReader:
    """``_run_blocks`` of a runs file read by a forked child process, sent back a block at a time through a
    pipe (a few blocks ahead at most: the pipe's buffer), the spill written by the child into the file this
    process made. A bad run line is raised here as the child found it, when its block is reached."""

    def __init__(self, runs: Path, spill: _Spill) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self._spill = spill
        self._conn, child_end = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_read_runs, args=(runs, spill, child_end), daemon=True,
                                 name="toolgold-run-ids")
        self._proc.start()
        child_end.close()

    def blocks(self) -> Iterator[array[int]]:
        while True:
            try:
                kind, *rest = self._conn.recv()
            except EOFError:
                raise ScoringInterrupted("the process reading the runs' ids died (killed, or out of memory); "
                                         "nothing was scored: run it again") from None
            if kind == "runs":
                block: array[int] = array("Q")
                block.frombytes(rest[0])
                yield block
            elif kind == "end":
                self._spill.take_over(rest[0])
                return
            elif kind == "bad":
                cls, message, source, line = rest
                raise cls(message, source=source, line=line)
            else:
                raise RuntimeError(f"the reader of the runs' ids failed:\n{rest[0]}")

    def close(self) -> None:
        self._conn.close()
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join()


def _read_runs(runs: Path, spill: _Spill, conn: Any) -> None:
    """In the child: send ``_run_blocks`` of ``runs``, then the spill's index (or the first bad line)."""
    try:
        for block in _run_blocks(runs, spill):
            conn.send(("runs", block.tobytes()))
        conn.send(("end", spill.hand_over()))
    except InvalidRecord as exc:  # sent as its parts: an exception pickles by its args
        conn.send(("bad", type(exc), exc.message, exc.source, exc.line))
    except BaseException:  # a bug: shown by the scoring process
        import traceback

        conn.send(("crash", traceback.format_exc()))
    finally:
        conn.close()


@dataclass
class _Pairing:
    """What the id pass found: whether the runs follow the gold, and where each shard's runs begin."""

    lockstep: bool
    run_starts: list[tuple[int, int]]
    """For each shard, the offset and line number of the first run the lockstep gave its cases."""
    contested: frozenset[int]
    """Id hashes that more than one gold line has: a gold id twice (or, once in 2^64, two ids one hash)."""
    gold_lines: int
    """The last gold line with an id."""
    gold: _Spill
    runs: _Spill


def _read_pairing(gold: Path, runs: Path, jobs: list[Job], directory: Path) -> _Pairing:
    """Read the ids of both files once, in lockstep, spilling (hash, line) of gold and (hash, span) of runs; a
    runs file of ``RUN_READER_MIN_BYTES`` or more is read by a child process (``_RunReader``) meanwhile."""
    source = str(gold)
    gold_size, runs_size = gold.stat().st_size, runs.stat().st_size
    parts = _Spill.partitions_for(max(gold_size, runs_size))
    width = -(-(1 << 64) // parts)
    gold_spill = _Spill(directory / "gold-ids", parts, width)
    run_spill = _Spill(directory / "run-ids", parts, width)
    starts = [job.start for job in jobs]
    run_starts: list[tuple[int, int]] = []
    reader = _RunReader(runs, run_spill) if runs_size >= RUN_READER_MIN_BYTES else None
    try:
        blocks = reader.blocks() if reader is not None else _run_blocks(runs, run_spill)
        runs_left = (run for block in blocks for run in zip(*[iter(block)] * 4, strict=True))  # (hash, offset, line, length)
        # One loop, names bound once: this pass reads every line of the gold before any worker starts. Runs
        # are compared with gold ids by their hashes (64 bits: a mistaken match stops scoring, which compares
        # the ids themselves as it takes each run: ``_LockstepRuns``).
        gold_add = gold_spill.add
        pending = next(runs_left, None)  # the next run not taken
        last_line = pending[2] if pending is not None else 0
        gold_lines = 0
        boundary = starts[0] if starts else _NO_OFFSET  # where the next shard begins
        number = offset = 0
        with gold.open("rb") as fh:
            for raw in fh:
                number += 1
                if offset >= boundary:
                    while len(run_starts) < len(starts) and offset >= starts[len(run_starts)]:
                        run_starts.append((pending[1], pending[2]) if pending else (runs_size, last_line + 1))
                    boundary = starts[len(run_starts)] if len(run_starts) < len(starts) else _NO_OFFSET
                offset += len(raw)
                found = _gold_key(raw, source, number)
                if type(found) is not tuple:  # blank, or no readable id
                    continue
                digest = found[1]
                gold_add(digest, number)
                gold_lines = number
                while pending is not None and pending[0] == digest:
                    pending = next(runs_left, None)
                    if pending is not None:
                        last_line = pending[2]
        while len(run_starts) < len(starts):
            run_starts.append((pending[1], pending[2]) if pending else (runs_size, last_line + 1))
        lockstep = pending is None
        for _ in runs_left:  # the rest, spilled for the join (and any bad line in them raised)
            pass
    finally:
        if reader is not None:
            reader.close()
    contested: set[int] = set()
    for part in range(parts):
        hashes = gold_spill.read_flat(part)[0::2]
        if len(set(hashes)) < len(hashes):
            seen: set[int] = set()
            for h in hashes:
                if h in seen:
                    contested.add(h)
                seen.add(h)
    return _Pairing(lockstep, run_starts, frozenset(contested), gold_lines, gold_spill, run_spill)


@dataclass
class _Joined:
    """The runs of each gold line, sorted by gold line then file order (``pairs``: line, span), where each
    shard's pairs begin, and the runs no gold id has (spans by offset)."""

    pairs: Path
    pair_starts: list[int]
    unknown: _Spill


def _join(pairing: _Pairing, jobs: list[Job], gold_lines: int, runs_size: int, directory: Path) -> _Joined:
    """Join the spilled ids partition by partition and spill the pairs again, by gold line."""
    import numpy as np

    parts = pairing.gold.parts
    by_line = _Spill(directory / "pairs-by-line", parts, -(-(gold_lines + 1) // parts))
    unknown = _Spill(directory / "unknown-runs", parts, -(-(runs_size + 1) // parts))
    for part in range(parts):
        gold = pairing.gold.read(part)
        gold = gold[np.argsort(gold[:, 0], kind="stable")]
        runs = pairing.runs.read(part)
        runs = runs[np.argsort(runs[:, 0], kind="stable")]  # stable: a case's runs stay in file order
        lo = np.searchsorted(gold[:, 0], runs[:, 0], side="left")
        hi = np.searchsorted(gold[:, 0], runs[:, 0], side="right")
        count = hi - lo
        none = count == 0
        unknown.add_many(runs[none, 1] >> np.uint64(_LENGTH_BITS), runs[none, 1])
        one = count == 1
        by_line.add_many(gold[lo[one], 1], runs[one, 1])
        for k in np.flatnonzero(count > 1).tolist():  # a contested hash: every gold line with it gets the run
            for g in range(int(lo[k]), int(hi[k])):
                by_line.add(int(gold[g, 1]), int(runs[k, 1]))
    path = directory / "pairs"
    boundaries = np.array([job.first_line for job in jobs], dtype=np.uint64)
    before = np.zeros(len(jobs), dtype=np.int64)
    with path.open("wb") as fh:
        for part in range(parts):
            pairs = by_line.read(part)
            pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
            before += np.searchsorted(pairs[:, 0], boundaries, side="left")
            pairs.tofile(fh)
    by_line.close()
    return _Joined(path, before.tolist(), unknown)


@dataclass
class Shard:
    """What one worker did with one line-aligned slice of the gold file."""

    builder: ReportBuilder
    without_run: int = 0
    without_run_examples: list[str] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    """Offsets of runs joined to a case by hash whose case id is another (two ids, one 64-bit hash)."""
    claimed_contested: list[int] = field(default_factory=list)
    """Offsets of runs claimed by a case whose id hash is contested (what ``rejected`` is checked against)."""
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
    runs: Path | None = None
    run_start: int = 0
    """Lockstep: the byte range of the runs file this shard's cases take, and its first line number."""
    run_end: int = 0
    run_first_line: int = 1
    pairs: Path | None = None
    """Joined: the sorted (gold line, span) pairs, and this shard's range of them."""
    pair_start: int = 0
    pair_end: int = 0


_CONTESTED: frozenset[int] = frozenset()
"""Set before workers fork: the gold id hashes more than one gold line has."""
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
                # orjson's text of each tool: as exact a key as marshal's (1, 1.0 and true apart, keys in
                # order) and written in half the time
                keys = [orjson.dumps(t) for t in tools]
            except TypeError:  # an integer beyond 64 bits: not cached, validated as it is
                keys = None
            else:
                specs = self._specs
                known = []
                for key in keys:  # (not ``None in known``: that compares each spec with None in pydantic's __eq__)
                    spec = specs.get(key)
                    if spec is None:
                        break
                    known.append(spec)
                else:
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


def _line_at(path: Path, offset: int) -> int:
    """The line number at ``offset`` (errors only: it counts the line ends before it)."""
    end, count = offset, 0
    with path.open("rb") as fh:
        while end > 0:
            chunk = fh.read(min(end, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            end -= len(chunk)
    return count + 1


def _parse_run(raw: bytes, source: str, line: int) -> RunRecord:
    value = _parse_line(raw, source, line)
    record: RunRecord = parse_record(value, expect=RunRecord, source=source, line=line)
    return record


def _read_run(path: Path, fd: int, span: int) -> RunRecord:
    """The run whose line is at ``span`` (offset and length), its errors placed at its line."""
    offset = span >> _LENGTH_BITS
    raw = os.pread(fd, span & ((1 << _LENGTH_BITS) - 1), offset)
    source = str(path)
    try:
        return _parse_run(raw, source, 1 if offset == 0 else 2)
    except InvalidRecord as exc:
        raise type(exc)(exc.message, source=source, line=_line_at(path, offset)) from None


def _check_trials(case: GoldCase, runs: list[tuple[int, RunRecord]], source: str) -> None:
    """Two runs for one trial of a case are bad input, at the second's line (``runs``: line, run)."""
    trial_at: dict[int, int] = {}
    for line, run in runs:
        if run.trial in trial_at:
            first, second = sorted((trial_at[run.trial], line))
            raise InvalidRecord(f"a second run for case {case.id!r} trial {run.trial} (the first is at "
                                f"line {first})", source=source, line=second)
        trial_at[run.trial] = line


class _LockstepRuns:
    """The runs of a shard's cases when they come in gold order: each case takes the runs next in the file
    that name it. Nothing is indexed; at the end every run of the slice must have been taken."""

    def __init__(self, job: Job) -> None:
        if job.runs is None:
            raise RuntimeError("a lockstep job names its runs file")
        self.source = str(job.runs)
        self._lines = enumerate(_lines_with_offsets(job.runs, job.run_start, job.run_end), start=job.run_first_line)
        self._pending = self._next()

    def _next(self) -> tuple[int, RunRecord] | None:
        for number, (_, raw) in self._lines:
            value = _parse_line(raw, self.source, number)
            if value is not _BLANK:
                return number, parse_record(value, expect=RunRecord, source=self.source, line=number)
        return None

    def take(self, case: GoldCase, number: int, shard: Shard) -> list[RunRecord]:
        taken = []
        while self._pending is not None and self._pending[1].case_id == case.id:
            taken.append(self._pending)
            self._pending = self._next()
        _check_trials(case, taken, self.source)
        return [run for _, run in taken]

    def finish(self) -> None:
        if self._pending is not None:
            raise RuntimeError(f"{self.source}:{self._pending[0]}: the id pass and the scoring pass disagree "
                               "on which case this run is for")

    def close(self) -> None:
        pass


class _JoinedRuns:
    """The runs of a shard's cases from the joined pairs (gold line, span), read in order in chunks."""

    CHUNK = 4096

    def __init__(self, job: Job) -> None:
        if job.pairs is None or job.runs is None:
            raise RuntimeError("a joined job names its pairs file")
        self.path, self.source = job.runs, str(job.runs)
        self._fd = os.open(job.runs, os.O_RDONLY)
        self._pairs = job.pairs.open("rb")
        self._pairs.seek(job.pair_start * 16)
        self._left = job.pair_end - job.pair_start
        self._chunk: list[int] = []
        self._at = 0

    def _peek(self) -> tuple[int, int] | None:
        if self._at >= len(self._chunk):
            if self._left <= 0:
                return None
            count = min(self.CHUNK, self._left)
            chunk = array("Q")
            chunk.fromfile(self._pairs, 2 * count)
            self._chunk = chunk.tolist()
            self._left -= count
            self._at = 0
        return self._chunk[self._at], self._chunk[self._at + 1]

    def take(self, case: GoldCase, number: int, shard: Shard) -> list[RunRecord]:
        spans = []
        while (pair := self._peek()) is not None and pair[0] <= number:
            if pair[0] == number:
                spans.append(pair[1])
            self._at += 2
        contested = key_hash(case.id) in _CONTESTED if spans else False
        taken = []
        for span in spans:
            run = _read_run(self.path, self._fd, span)
            if run.case_id != case.id:
                shard.rejected.append(span >> _LENGTH_BITS)  # a different id with the same 64-bit hash
                continue
            if contested:
                shard.claimed_contested.append(span >> _LENGTH_BITS)
            taken.append((span, run))
        if len({run.trial for _, run in taken}) < len(taken):
            _check_trials(case, [(_line_at(self.path, span >> _LENGTH_BITS), run) for span, run in taken],
                          self.source)
        return [run for _, run in taken]

    def finish(self) -> None:
        pass

    def close(self) -> None:
        os.close(self._fd)
        self._pairs.close()


def _score_shard(job: Job) -> Shard:
    shard = Shard(builder=ReportBuilder())
    spool = job.spool.open("w", encoding="utf-8") if job.spool else None
    source: _LockstepRuns | _JoinedRuns = _LockstepRuns(job) if job.pairs is None else _JoinedRuns(job)
    try:
        for number, case in _gold_records(job):
            runs = source.take(case, number, shard)
            if not runs:
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
        source.finish()
    finally:
        source.close()
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


def _check_duplicates(gold: Path, contested: frozenset[int]) -> None:
    """Raise at the second line of a gold id that appears twice. The id pass found the hashes more than
    one gold line has; only ids with those hashes are remembered while the gold is read again."""
    if not contested:
        return
    first_line: dict[str, int] = {}
    with gold.open("rb") as fh:
        for number, value in iter_json_lines(fh, str(gold)):
            if not isinstance(value, dict):
                continue
            case_id = str(value.get("id"))
            if key_hash(case_id) not in contested:
                continue
            if case_id in first_line:
                raise InvalidRecord(f"gold case id {case_id!r} appears twice (first at line {first_line[case_id]})",
                                    source=str(gold), line=number)
            first_line[case_id] = number


def _unknown_runs(runs: Path, joined: _Joined | None, shards: list[Shard]) -> tuple[int, list[str]]:
    """Runs no gold case claimed, in file order: each is validated (bad input is still bad input) and
    counted. In lockstep every run was claimed."""
    if joined is None:
        return 0, []
    import numpy as np

    unknown = joined.unknown
    claimed = {o for s in shards for o in s.claimed_contested}
    # A run joined by hash to a case with another id (two ids, one 64-bit hash; once in 2^64) is unknown too.
    rejected = [_span_at(runs, o) for o in sorted({o for s in shards for o in s.rejected} - claimed)]
    spans = heapq.merge((span for part in range(unknown.parts) for span in np.sort(unknown.read(part)[:, 1]).tolist()),
                        rejected)
    count, examples = 0, list[str]()
    fd = os.open(runs, os.O_RDONLY)
    try:
        for span in spans:
            run = _read_run(runs, fd, span)
            count += 1
            if len(examples) < UNSCORED_EXAMPLES and run.case_id not in examples:
                examples.append(run.case_id)
    finally:
        os.close(fd)
        unknown.close()
    return count, examples


def _span_at(path: Path, offset: int) -> int:
    with path.open("rb") as fh:
        fh.seek(offset)
        return offset << _LENGTH_BITS | len(fh.readline())


def baseline_outcomes(cases: Iterator[dict[str, Any]]) -> Outcomes:
    import numpy as np

    keys, passed = [], []
    for case in cases:
        keys.append(key_hash(f"{case.get('case_id')}\0{case.get('trial') or 0}"))
        passed.append(case.get("status") == "pass")
    order = np.argsort(np.array(keys, dtype=np.uint64), kind="stable")
    return np.array(keys, dtype=np.uint64)[order], np.array(passed, dtype=bool)[order]


def _pair(baseline: Outcomes, shards: list[Shard]) -> Paired:
    import numpy as np

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
    global _CONTESTED, _JUDGE
    runs_size = runs.stat().st_size
    if runs_size >= MAX_RUNS_BYTES:
        raise InvalidRecord(f"runs file is over {MAX_RUNS_BYTES >> 30} GiB; split it", source=str(runs))
    size = gold.stat().st_size
    if workers <= 0:
        workers = automatic_workers(size, os.cpu_count() or 1)
    jobs = _shard_jobs(gold, workers, spool_dir, baseline is not None)
    with tempfile.TemporaryDirectory(prefix="toolgold-pairing-") as tmp:
        pairing = _read_pairing(gold, runs, jobs, Path(tmp))
        if size == 0 or (size <= 65536 and not gold.read_bytes().strip(b" \t\r\n\xef\xbb\xbf")):
            raise InvalidRecord("no gold cases in this file (it is empty)", source=str(gold))
        joined = None
        if pairing.lockstep and not pairing.contested:
            run_ends = [start for start, _ in pairing.run_starts[1:]] + [runs_size]
            jobs = [replace(job, runs=runs, run_start=start, run_first_line=line, run_end=end)
                    for job, (start, line), end in zip(jobs, pairing.run_starts, run_ends, strict=True)]
        else:
            joined = _join(pairing, jobs, pairing.gold_lines, runs_size, Path(tmp))
            pair_ends = [*joined.pair_starts[1:], joined.pairs.stat().st_size // 16]
            jobs = [replace(job, runs=runs, pairs=joined.pairs, pair_start=start, pair_end=end)
                    for job, start, end in zip(jobs, joined.pair_starts, pair_ends, strict=True)]
        pairing.gold.close()
        pairing.runs.close()
        _CONTESTED, _JUDGE = pairing.contested, judge
        try:
            if len(jobs) == 1:
                shards = [_score_shard(jobs[0])]
            else:
                import multiprocessing

                with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
                    shards = pool.map(_score_shard, jobs, chunksize=1)
        finally:
            _CONTESTED, _JUDGE = frozenset(), None
        _check_duplicates(gold, pairing.contested)
        builder = shards[0].builder
        for shard in shards[1:]:
            builder.merge(shard.builder)
        unknown, unknown_examples = _unknown_runs(runs, joined, shards)
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


def spooled_lines(spools: list[Path]) -> Iterator[str]:
    for path in spools:
        with path.open(encoding="utf-8") as fh:
            yield from fh


__all__ = ["Outcomes", "RunIndex", "Scored", "baseline_outcomes", "key_hash", "score_files", "spooled_lines"]
