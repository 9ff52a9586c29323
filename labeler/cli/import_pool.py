"""Converting an import's records on the machine's other cores, and writing their rows from there.

``toolgold import`` spends most of its time converting records (parse, validate, canonical JSON, hash), not
writing them. For files whose every line is a record of its own (the toolgold JSON Lines format: what
``toolgold export`` and ``toolgold sample`` write), this process finds where the chunks of lines lie in the
file and puts them in one queue for forked worker processes, each taking the next when it is free, that read
those bytes themselves (the lines never pass through a pipe) and turn them into the rows they become
(``prepare_item``). Once the store names the import's stage file (``ImportPool.use_stage``; SQLite), each
worker writes its chunk's rows into it, and their bodies (most of the bytes) straight into the store, pending
until the publish, and sends back only what stands
for each record (``StagedItem``: id, content hash, line, body id), so neither rows nor bodies pass through this
process, and no body is written twice; otherwise (PostgreSQL) it sends the rows. When the import fails this
process stops the workers (``ImportPool.stop``) before it deletes the bodies they wrote. This process takes the
results back in the order it handed the chunks out, so the records are checked and stored in input order and the
first bad line of the input is the one reported, whichever worker finished first. Few chunks are out at a time
(``PRIMED`` per worker with a stage, when a result is a few strings a record; ``AHEAD`` without, when it holds
the rows), so memory stays flat however large the input.

tau-bench's trajectories file (one JSON array, written indented), tau2-bench's results file (its
``simulations``) and inspect_ai's ``.json`` eval log (its ``samples``) go to the workers too: this process finds
where their items lie from the indentation alone (``iter_array_chunks``), each worker checks that its chunk is
whole items (else the import runs again in this process: ``ReadHere``), and this process keeps each tau-bench
task's gold case once, as the importer does (``iter_pooled``), and converts a results file's task cases itself
(``head_items``). Other formats (whole-file documents, logs whose lines merge into one transcript) are converted
here, in this process, as before; so are small inputs (``MIN_BYTES``), for which starting workers costs more than
it saves. The workers are forked before the import makes its stage file (they must not inherit its lock), open it
by name when told to, and leave when this process does (killed or not). They are forked before this process
loads the store (SQLAlchemy, its tables) too, and handed their first chunks at once (``ImportPool.prime``): they
convert those while it loads, then learn where to write them (the stage, or nowhere: PostgreSQL).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import multiprocessing
import os
import queue
import re
import signal
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from labeler.store.base import StoreError
from labeler.store.staging import (
    BodyWriteFailed,
    ImportItem,
    PreparedItem,
    StagedItem,
    StageFailed,
    StageWriter,
    prepare_item,
)
from scorer import importers, strict_json
from scorer.errors import InvalidRecord, ToolgoldError
from scorer.hygiene import schema_violations
from scorer.importers import Converted, ImportOptions, Item
from scorer.importers.native import convert_line
from scorer.model import GoldCase

WORKERS = 2
"""Worker processes at most (one per usable core, and this process writes meanwhile)."""
CHUNK_LINES = 500
"""Lines per chunk handed to a worker (fewer when they are long: ``CHUNK_BYTES``)."""
CHUNK_BYTES = 4 * 1024 * 1024
SCAN_BYTES = 256 * 1024
"""The block this process reads at a time to find where chunks end."""
AHEAD = 2
"""Chunks out per worker when the results carry the rows (no stage: PostgreSQL): one to work on while the next
waits, so no worker idles while this process writes."""
PRIMED = 8
"""Chunks out per worker from the moment they are forked (``ImportPool.prime``), before this process has loaded the
store (SQLAlchemy, the tables: ~0.25 s) and made its stage file: the workers convert them meanwhile (~35 ms a chunk
of tau-bench transcripts or gold cases) and write them once the store names its stage. With 3, both workers sat
idle for the last ~0.1 s of that wait (their converted chunks held). With a stage as many stay out to the end
(``ImportPool.full``): a result is then a few strings a record, and with two a chunk the workers ran dry while
this process worked through the primed ones before it handed out the next."""
DEFERRED: Final = "deferred"
"""The stage of a chunk handed out before the store named one (or said it has none): the worker asks once."""
MIN_BYTES = 4 * 1024 * 1024
"""Inputs smaller than this (in the line-per-record format) are converted in this process: forking two workers
costs ~0.05 s of CPU, about what they save on 2-4 MB (~300 gold cases or ~100 tau-bench transcripts, measured
at stop 21 under load 5: in-process and pooled imports of 2.1 MB took the same CPU, 1.0 s with start-up)."""
POLL_SECONDS = 1.0
HELD_POLL_SECONDS = 0.01
"""How long a worker holding chunks converted before the store's decision waits for another before it waits for
the decision instead (the chunks ``prime`` hands out are in its queue already)."""
LINE_BUFFER = 256 * 1024
"""A worker's read buffer: a tau-bench transcript's line (~29 KB) is copied out of it whole, not pieced together."""
WORKER_NICENESS = 10


def schema_problems(case: GoldCase) -> list[str]:
    """The messages of the problems that make a gold case fail its own tool schema (what import warns of)."""
    return [p.message for p in schema_violations(case)]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A record converted by a worker: its rows (or, once the import has a stage file, where the worker wrote
    them), and for a gold case the schema problems to warn of."""

    item: PreparedItem | StagedItem | Repeated
    line: int | None
    case_id: str | None
    problems: list[str] | None

    def __reduce__(self) -> tuple[Any, ...]:  # a frozen dataclass pickles through fields(): slow
        return Prepared, (self.item, self.line, self.case_id, self.problems)


LINES: Final = "lines"
"""A chunk of a file whose every line is a record (the toolgold JSON Lines format)."""
TAU_TRAJECTORIES: Final = "tau-bench"
"""A chunk of whole items of a tau-bench trajectories file (one indented JSON array: ``iter_array_chunks``)."""
TAU2_SIMULATIONS: Final = "tau2-bench"
"""A chunk of whole simulations of a tau2-bench results file (an indented object, ``simulations`` a member)."""
INSPECT_SAMPLES: Final = "inspect-ai"
"""A chunk of whole samples of an inspect_ai ``.json`` eval log (an indented object, ``samples`` among its members)."""
MEMBERS: Final = {TAU_TRAJECTORIES: None, TAU2_SIMULATIONS: "simulations", INSPECT_SAMPLES: "samples"}
"""The array each form's chunks are items of: the file itself (None), or the member of the file's object named."""


class ReadHere(Exception):
    """A chunk of a JSON array's items that is not whole items after all (the file's indentation misled the split,
    or the file is not what it looked like): the import is run again with every file converted in the importing
    process, which reads the array as a whole and reports what it finds as it always has."""


REPEATED_KEPT: Final = 512
"""The tau-bench cases a worker remembers having prepared (``Repeated``): as many as its converter gives again
(``tau_bench.CASES_KEPT``)."""


@dataclass(frozen=True, slots=True)
class Repeated:
    """A tau-bench task's case a worker converted before in this import (the same object: the converter gives an
    equal task's again): the earlier one comes back first, so ``FirstCases`` drops this one; only its content
    hash is sent back, its rows are not written."""

    id: str
    digest: str

    def __reduce__(self) -> tuple[Any, ...]:
        return Repeated, (self.id, self.digest)


@dataclass(frozen=True, slots=True)
class Chunk:
    """Where a chunk of a file's records lies: ``count`` records from line ``first``, ``size`` bytes at
    ``offset``: lines (``form`` ``LINES``), or whole items of a JSON array, the first of the file if ``lead``.
    A worker reads them itself, so the importing process never copies them into a pipe."""

    source: str
    first: int
    count: int
    offset: int
    size: int
    form: str = LINES
    lead: bool = False
    separator: bytes = b""
    """Between two items of an array chunk: ``},`` and ``{`` each opening a line at the items' indentation."""
    last: bool = False
    """The array's last chunk: the array's ``]`` follows it."""

    def __reduce__(self) -> tuple[Any, ...]:
        return Chunk, (self.source, self.first, self.count, self.offset, self.size, self.form, self.lead,
                       self.separator, self.last)

    def lines(self) -> Iterator[bytes]:
        """The chunk's lines, each with its line end, as iterating the file in binary gives them (only
        a line feed ends a line: a bare CR is JSON whitespace; the file's last line may have none).

        One line at a time, each copied once out of the file's buffer: reading the whole chunk first and
        splitting it made three copies of its ~4 MB, fresh memory each chunk (a worker took ~2,000 page
        faults a chunk of tau-bench transcripts)."""
        with open(self.source, "rb", buffering=LINE_BUFFER) as fh:
            fh.seek(self.offset)
            left = self.size
            while left > 0:
                line = fh.readline(left)
                if not line:  # the file shrank under the import: what is left is not there to convert
                    return
                left -= len(line)
                yield line

    def items(self) -> Iterator[tuple[int, Any]]:
        """``(line, value)`` of each item of an array chunk, as ``jsondoc.array_items`` gives them: the chunk must be
        ``count`` whole values between the separators that split it (``strict_json.loads`` of each: orjson's
        speed), ``ReadHere`` if not. A separator cutting an item leaves a piece whose first brace is not closed:
        no cut goes unnoticed."""
        if self.lead and MEMBERS[self.form] is not None:
            self._check_head()
        with open(self.source, "rb") as fh:
            fh.seek(self.offset)
            raw = fh.read(self.size)
            rest = fh.read() if self.last else b""
        if len(raw) != self.size:  # the file changed under the import
            raise ReadHere(f"{self.source}: shorter than when the import began")
        if self.last:
            self._check_tail(rest)
        separator = self.separator
        closed = (len(separator) - 1) // 2  # from a separator's start to just past its ``}``
        pos, line, given = 0, self.first, 0
        while True:
            at = raw.find(separator, pos)
            end = len(raw) if at < 0 else at + closed
            try:
                value = strict_json.loads(raw[pos:end], source=self.source, line=line)
            except InvalidRecord:
                raise ReadHere(f"{self.source}: not whole items from line {line}") from None
            yield line, value
            given += 1
            if at < 0:
                break
            line += raw.count(b"\n", pos, at + len(separator) - 1)
            pos = at + len(separator) - 1
        if given != self.count:
            raise ReadHere(f"{self.source}: not {self.count} whole items from line {self.first}")

    def _check_tail(self, rest: bytes) -> None:
        """That what follows the last chunk (``rest``) closes the array and then the document: only white space
        (the file is the array), or the object's other members and its ``}``; ``ReadHere`` if not."""
        member = MEMBERS[self.form]
        try:
            if member is None:
                if rest.rstrip(b" \t\r\n") != b"]":
                    raise ValueError
            elif not isinstance(strict_json.loads(b'{"":[' + rest, source=self.source), dict):
                raise ValueError
        except (ValueError, InvalidRecord):
            raise ReadHere(f"{self.source}: the {member or 'array'} do not end where its layout says") from None

    def _check_head(self) -> None:
        """That the file before the first chunk of a member's items is the file's object up to that member's array,
        open (the chunks then being whole items, they are that array's, and nothing else's); ``ReadHere`` if not.
        What comes before is read whole: a results file's info and tasks, an eval log's eval and stats."""
        with open(self.source, "rb") as fh:
            raw = fh.read(self.offset)
        try:
            text = raw.decode("utf-8").removeprefix("\ufeff").rstrip(" \t\r\n")
            if not text.endswith("["):
                raise ValueError
            head = strict_json.loads(text + "]}", source=self.source)
        except (ValueError, InvalidRecord):  # (UnicodeDecodeError is a ValueError)
            raise ReadHere(f"{self.source}: the {MEMBERS[self.form]} do not start at line {self.first}") from None
        if not isinstance(head, dict) or list(head)[-1:] != [MEMBERS[self.form]]:
            raise ReadHere(f"{self.source}: the {MEMBERS[self.form]} do not start at line {self.first}")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def parallel_paths(paths: list[Path], fmt: str | None) -> dict[Path, str]:
    """The files whose records workers can convert, each with its chunks' form: every line a record of its own
    (``LINES``), or a tau-bench trajectories file, a tau2-bench results file or an inspect_ai ``.json`` eval log
    laid out an item a line (the forms of ``MEMBERS``: ``iter_array_chunks`` finds where their items lie).
    Unreadable or unrecognized files, and any other, are left to the in-process path, which reports them where
    they come."""
    found = {}
    for path in paths:
        try:
            importer = importers.importer_named(fmt) if fmt else importers.detect(path)
            if importer.NAME == "toolgold":
                found[path] = LINES
            elif importer.NAME in MEMBERS and iter_array_chunks(path, importer.NAME) is not None and (
                    importer.NAME != TAU_TRAJECTORIES or _has_runs(path)):
                found[path] = importer.NAME
        except (ToolgoldError, OSError):
            continue
    return found


def _has_runs(path: Path) -> bool:
    """Whether a tau-bench file's first MB names a run's messages (``"traj"``): a task file has none, and the workers
    convert runs only (the first chunk's worker would send a task file back: ``ReadHere``)."""
    with path.open("rb") as fh:
        return b'"traj"' in fh.read(1 << 20)


class ImportPool:
    """Worker processes converting chunks of lines, taken back in the order they were handed out."""

    def __init__(self, workers: int, options: ImportOptions) -> None:
        self.options = options
        self.parent = os.getpid()
        self.stage: tuple[str, str] | None = None  # the stage file, and the store's
        self.writers: dict[tuple[str, str], StageWriter] = {}  # in a worker: its connections to them
        ctx = multiprocessing.get_context("fork")
        # Taken by a worker around its write into the stage file: the workers write one at a time and wake the
        # moment the other is done (SQLite's own wait for a file lock polls, sleeping up to 100 ms a time).
        self.stage_lock = ctx.Lock()
        self.store_lock = ctx.Lock()  # likewise around a worker's write of bodies into the store
        # One queue of chunks for all the workers, each taking the next when it is free: a worker given the
        # heavier chunks is not left with a queue of its own while the other idles (the import's last
        # second). The results come back in one queue, each under its chunk's number, and are taken back in
        # the order the chunks were handed out (``next_result``).
        self.tasks: Any = ctx.Queue()
        self.results: Any = ctx.Queue()
        # What the store decided about its stage, told once to each worker that got chunks before (``prime``).
        self.stage_notes: list[Any] = [ctx.Queue() for _ in range(workers)]
        self.decided = False
        self.primed: dict[Path, Iterator[Chunk]] = {}
        self.converters: dict[str, Callable[[int, Any], list[Item]]] = {}  # in a worker: each array file's
        self.repeated: dict[int, tuple[GoldCase, Repeated]] = {}  # in a worker: the tau-bench cases prepared
        self.told: tuple[str, str] | str | None = DEFERRED  # in a worker: the decision, once told
        self.procs = [ctx.Process(target=self._work, args=(i,), daemon=True, name=f"toolgold-import-{i}")
                      for i in range(workers)]
        # Out of the collector's sight while forking: a worker's collections would otherwise touch (and so
        # copy) every page of the heap it shares with this process.
        gc.freeze()
        try:
            for proc in self.procs:
                proc.start()
        finally:
            gc.unfreeze()
        self.sent = 0
        self.out: deque[int] = deque()  # the numbers of the chunks handed out and not yet taken back, oldest first
        self.early: dict[int, tuple[str, Any]] = {}  # results that came back before an older chunk's

    def use_stage(self, path: Path, store: Path) -> None:
        """From now on the workers write the rows of the records they convert into the import's stage file
        ``path``, and their bodies into the store's file ``store``, themselves (``StageWriter``) and send back
        only what stands for each (``StagedItem``); so do they for the chunks handed out before (``prime``)."""
        self.stage = (str(path), str(store))
        self._decide()

    def _decide(self) -> None:
        """The stage is settled (``use_stage``, or none: PostgreSQL): tell the workers (read only by those that
        got chunks before it was: ``prime``)."""
        if self.decided:
            return
        self.decided = True
        for notes in self.stage_notes:
            notes.put(self.stage)

    def prime(self, path: Path, form: str = LINES) -> None:
        """Hand out ``path``'s first chunks now, ``PRIMED`` per worker, before the store is loaded: the workers
        convert them while it loads, and ``iter_pooled`` takes the file up from there."""
        chunks = chunks_of(path, form)
        try:
            while len(self.out) < PRIMED * len(self.procs) and (chunk := next(chunks, None)) is not None:
                self.submit(chunk)
        except (OSError, ReadHere) as exc:  # raised where the import reads the file, as it would have been
            chunks = _raising(exc)
        self.primed[path] = chunks

    def stop(self) -> None:
        """Kill the workers now (the import failed): none writes into the stage or the store after this returns."""
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join()

    # -- in the worker

    def _work(self, index: int) -> None:
        self.index = index
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the importing process's to handle
        _die_with(self.parent)
        # Below the app server: on a small machine the workers take every core, and annotators' saves and
        # page runs must still get theirs while an import converts.
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICENESS)
        worker_gc()
        tasks, results = self.tasks, self.results
        # Chunks handed out before the store decided where rows go (``prime``), converted, their rows held: all
        # of them are converted while the importing process loads the store, then written in the order given.
        held: list[tuple[int, tuple[str, Any]]] = []

        def write_held() -> None:
            stage = self._stage_decided()
            for number, (status, body) in held:
                results.put((number, *(self._outcome(self._written, *body, stage, number) if status == "ok"
                                       else (status, body))))
            held.clear()

        while True:
            if held and (self.told != DEFERRED or self._heard()):
                write_held()
            try:
                task = tasks.get(timeout=HELD_POLL_SECONDS if held else POLL_SECONDS)
            except queue.Empty:
                if held:  # nothing more to convert meanwhile: wait for the store's word
                    write_held()
                elif os.getppid() != self.parent:  # the import died (kill -9): nobody waits for these rows
                    os._exit(0)  # not a normal exit, which would wait to flush results nobody reads
                continue
            if task is None:
                return
            chunk, stage, number = task
            if stage == DEFERRED and self.told == DEFERRED:
                held.append((number, self._outcome(self._converted, chunk, True)))
                continue
            if held:  # a chunk sent after the decision: those before it go first
                write_held()
            results.put((number, *self._outcome(self._convert, chunk, stage, number)))

    @staticmethod
    def _outcome(work: Callable[..., Any], *args: Any) -> tuple[str, Any]:
        """What the importing process hears of a chunk (``work(*args)``): its results, or the one line of why
        there are none."""
        try:
            return ("ok", work(*args))
        except BodyWriteFailed as exc:  # the store (a full disk, its lock held too long): as below
            return ("store", str(exc))
        except StageFailed as exc:  # the stage file (a full disk, say): one line, from the importing process
            return ("stage", str(exc))
        except ReadHere as exc:  # not whole items: the importing process reads the file itself
            return ("read here", str(exc))
        except BaseException:  # a bug: shown by the importing process
            return ("crash", traceback.format_exc())

    def _heard(self) -> bool:
        """Whether the store's decision on the stage has come (without waiting for it)."""
        try:
            self.told = self.stage_notes[self.index].get_nowait()
        except queue.Empty:
            return False
        return True

    def _stage_decided(self) -> tuple[str, str] | None:
        """The stage the store named for the chunks handed out before it had (``prime``): waited for once."""
        while self.told == DEFERRED:
            try:
                self.told = self.stage_notes[self.index].get(timeout=POLL_SECONDS)
            except queue.Empty:
                if os.getppid() != self.parent:  # the import died before it loaded the store
                    os._exit(0)
        assert not isinstance(self.told, str)
        return self.told

    def _convert(self, chunk: Chunk, stage: tuple[str, str] | str | None, chunk_number: int,
                 ) -> list[Prepared | tuple[Any, ...]]:
        """A chunk's results: its records converted, and their rows written into ``stage`` (or, None, kept
        in the results; ``DEFERRED``: where the store decides)."""
        out, rows, gold_in_store = self._converted(chunk, stage is not None)
        if stage == DEFERRED:
            stage = self._stage_decided()
        assert not isinstance(stage, str)
        return self._written(out, rows, gold_in_store, stage, chunk_number)

    def _converted(self, chunk: Chunk, keep_rows: bool,
                   ) -> tuple[list[Prepared | tuple[Any, ...]], list[PreparedItem], bool]:
        """A chunk's records converted and prepared, the rows to write (all, with ``keep_rows``), and whether its
        gold cases' bodies go into the store: not an array's, whose cases the importing process takes or drops
        (``iter_pooled``), so a dropped one is never written there."""
        out: list[Prepared | tuple[Any, ...]] = []
        source = chunk.source
        rows: list[PreparedItem] = []
        for item in self._items(chunk):
            if isinstance(item, InvalidRecord):  # sent as its parts: an exception pickles by its args
                out.append((type(item), item.message, item.source, item.line))
                continue
            record = item.record
            repeated = self.repeated.get(id(record)) if chunk.form == TAU_TRAJECTORIES else None
            if repeated is not None:
                out.append(Prepared(repeated[1], item.line, repeated[1].id, None))
                continue
            try:
                prepared = prepare_item(ImportItem(record, source, item.line))
            except InvalidRecord as exc:  # more children than a stage key numbers
                out.append((type(exc), exc.message, exc.source, exc.line))
                continue
            if keep_rows:
                rows.append(prepared)
            if isinstance(record, GoldCase):
                if chunk.form == TAU_TRAJECTORIES:
                    if len(self.repeated) >= REPEATED_KEPT:
                        self.repeated.clear()
                    self.repeated[id(record)] = (record, Repeated(record.id, prepared.staged.digest))
                out.append(Prepared(prepared, item.line, record.id, schema_problems(record)))
            else:
                out.append(Prepared(prepared, item.line, None, None))
        return out, rows, chunk.form == LINES

    def _items(self, chunk: Chunk) -> Iterator[Converted | InvalidRecord]:
        """The items a chunk's records convert to, in order."""
        source = chunk.source
        if chunk.form == LINES:
            for number, raw in enumerate(chunk.lines(), start=chunk.first):
                item = convert_line(number, raw, source, self.options)
                if item is not None:
                    yield item
            return
        convert = self.converters.get(source)
        if convert is None:  # what converting the file's items needs, read once a worker (tools; info and tasks)
            convert = self.converters[source] = _item_converter(Path(source), chunk.form, self.options)
        from scorer.importers import tau_bench  # only here: a toolgold file loads no other importer

        for line, value in chunk.items():
            if chunk.form == TAU_TRAJECTORIES and chunk.lead and line == chunk.first and tau_bench.is_task(value):
                raise ReadHere(f"{source}: a tau-bench task file, not trajectories")
            for item in convert(line, value):
                if isinstance(item, (Converted, InvalidRecord)):
                    yield item

    def _written(self, out: list[Prepared | tuple[Any, ...]], rows: list[PreparedItem], gold_in_store: bool,
                 stage: tuple[str, str] | None, chunk_number: int) -> list[Prepared | tuple[Any, ...]]:
        """``out`` with each record's rows written into ``stage`` (its bodies into the store): what stands for
        it instead (``StagedItem``). No stage (PostgreSQL): ``out`` as it is, the rows in it."""
        if stage is None or not rows:
            return out
        writer = self.writers.get(stage)
        if writer is None:
            writer = self.writers[stage] = StageWriter(*stage)
        # committed before the importing process hears of them
        written = iter(writer.write(chunk_number, rows, store_turn=self.store_lock, stage_turn=self.stage_lock,
                                    gold_in_store=gold_in_store))
        return [Prepared(next(written), entry.line, entry.case_id, entry.problems)
                if isinstance(entry, Prepared) and not isinstance(entry.item, Repeated) else entry for entry in out]

    # -- in the importing process

    def submit(self, chunk: Chunk) -> None:
        self.tasks.put((chunk, self.stage if self.decided else DEFERRED, self.sent))
        self.out.append(self.sent)
        self.sent += 1

    @property
    def full(self) -> bool:
        # Writing into a stage, a worker sends back a few short strings a record: as many chunks stay out as
        # ``prime`` handed out, so no worker runs dry while this process works through the results before
        # its next chunk. Without one (PostgreSQL) results carry the rows: few out, memory flat.
        ahead = PRIMED if self.stage is not None else AHEAD  # a stage is only ever named by ``use_stage``
        return len(self.out) >= ahead * len(self.procs)

    def __len__(self) -> int:
        return len(self.out)

    def next_result(self) -> list[Prepared | InvalidRecord]:
        """The results of the oldest chunk out, in line order."""
        # The store makes its stage file (``use_stage``) before it reads the first record: none by now is none.
        self._decide()
        number = self.out.popleft()
        while number not in self.early:
            try:
                done, status, body = self.results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                # A worker leaves only when told to (``close``): one gone now took its chunk with it.
                if not all(proc.is_alive() for proc in self.procs):
                    raise StoreError("an import worker process died (killed, or out of memory); nothing was "
                                     "imported: run the import again") from None
                continue
            self.early[done] = (status, body)
        status, body = self.early.pop(number)
        if status == "stage":
            raise StageFailed(body)
        if status == "store":
            raise BodyWriteFailed(body)
        if status == "crash":
            raise RuntimeError(f"an import worker failed:\n{body}")
        if status == "read here":
            raise ReadHere(body)
        return [entry if isinstance(entry, Prepared) else entry[0](entry[1], source=entry[2], line=entry[3])
                for entry in body]

    def close(self) -> None:
        if self.out:  # the import stopped early (a bad record): the chunks still out are nobody's
            for proc in self.procs:
                proc.kill()
        for proc in self.procs:
            if proc.is_alive():
                self.tasks.put(None)  # one each: a worker takes one and leaves
        for proc in self.procs:
            proc.join(timeout=POLL_SECONDS)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for q in (self.tasks, self.results, *self.stage_notes):
            q.close()
            q.cancel_join_thread()

    def __enter__(self) -> ImportPool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


WORKER_GC_THRESHOLD = 50_000
"""Allocations between a worker's young-generation collections (Python's default is 700)."""


def worker_gc() -> None:
    """A worker's garbage collector: collecting less often. What a worker makes of a record (parsed values,
    validated models, rows) is freed by reference counting as soon as the record is done, so the collector
    mostly walks live objects: with the default thresholds that was ~7% of a worker's CPU (perf on
    bench_import_convert's transcripts). The rare cycle (a caught error's traceback) waits for the next
    collection."""
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


IMPORTING_GC_THRESHOLD = 5_000
"""Allocations between the importing process's young-generation collections during an import (Python's default
is 700). Not a worker's 50,000: the importing process holds on to some of what each chunk makes for a while (the
checks' statements and results), and what that leaves in cycles waited for a full collection; at 50,000 its peak
RSS grew with the input (93 MB at 300,000 gold cases and 146 MB at 1,000,000, against 78-80 MB at 300,000 with
the default or this), where at 5,000 it stays as before."""


@contextlib.contextmanager
def importing_gc() -> Iterator[Callable[[], None]]:
    """The importing process's collector while it imports: what it has loaded set aside (the function yielded,
    called once the store is loaded: SQLAlchemy, the tables, pydantic's models), never walked again, and
    young collections less often (``IMPORTING_GC_THRESHOLD``). With the defaults its collector walked the
    store's objects again and again, on the path every result takes: 39 ms of its CPU for 10,000 transcripts,
    78 ms for 20,000 gold cases (``gc.callbacks``), 42 ms now, most of it before the import (loading the
    modules). Restored as it was when the import ends, however it ends (a test process runs many imports)."""
    threshold = gc.get_threshold()
    gc.set_threshold(IMPORTING_GC_THRESHOLD, *threshold[1:])
    try:
        yield gc.freeze
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _die_with(parent: int) -> None:
    """Linux: have the kernel kill this worker when the importing process dies (even half-way through handing
    it a chunk, which a poll cannot notice). Elsewhere the worker notices within ``POLL_SECONDS``."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # died before the request was made
        os._exit(0)


PR_SET_PDEATHSIG = 1


def iter_file_chunks(path: Path) -> Iterator[Chunk]:
    """The chunks of ``path``, each at most ``CHUNK_LINES`` lines or about ``CHUNK_BYTES`` (a line is never
    split). This process only finds the line ends, a block of ``SCAN_BYTES`` at a time into one buffer: a chunk
    is where its lines lie, so no chunk's bytes are ever gathered (the workers read them), and memory stays one
    block however large the file."""
    source = str(path)
    buffer = bytearray(SCAN_BYTES)
    start, first, count = 0, 1, 0  # the chunk being found: its offset, first line and lines so far
    at = line_end = 0  # the file offset of buffer[0]; the offset just past the last line end found
    with path.open("rb", buffering=0) as fh:
        while read := fh.readinto(buffer):
            pos = 0
            while (newline := buffer.find(b"\n", pos, read)) >= 0:
                pos = newline + 1
                count += 1
                line_end = at + pos
                if count >= CHUNK_LINES or line_end - start >= CHUNK_BYTES:
                    yield Chunk(source, first, count, start, line_end - start)
                    start, first, count = line_end, first + count, 0
            at += read
    if at > line_end:  # the file's last line, without a line end: the chunk being found has room for it
        count += 1
    if count:
        yield Chunk(source, first, count, start, at - start)


def _item_converter(path: Path, form: str, options: ImportOptions) -> Callable[[int, Any], list[Item]]:
    """How one item of an array file of ``form`` converts (in a worker); ``ReadHere`` when the file says something
    the importing process must report (its tools cannot be read, a results file's info is not what it must be)."""
    from scorer.importers import inspect_ai, tau2_bench, tau_bench  # only here: as the registry loads them

    if form == TAU_TRAJECTORIES:
        try:
            return tau_bench.trajectory_converter(path, options)
        except InvalidRecord as exc:
            raise ReadHere(str(exc)) from None
    if form == INSPECT_SAMPLES:
        converter = inspect_ai.sample_converter(path, options)
        if converter is None:
            raise ReadHere(f"{path}: its eval is not read here")
        return converter
    results = tau2_bench.results_head(path, options)
    if results is None:
        raise ReadHere(f"{path}: its info and tasks are not read here")
    return results.convert


def head_items(path: Path, form: str, options: ImportOptions) -> Iterator[Item]:
    """What the importing process converts of an array file before the workers' items: a tau2-bench results
    file's task cases (its ``tasks``), as the importer yields them first."""
    if form != TAU2_SIMULATIONS:
        return iter(())
    from scorer.importers import tau2_bench  # only here: as the registry loads it

    results = tau2_bench.results_head(path, options)
    if results is None:
        raise ReadHere(f"{path}: its info and tasks are not read here")
    return results.cases()


def chunks_of(path: Path, form: str) -> Iterator[Chunk]:
    """Where the chunks of ``path`` lie, by its form (``parallel_paths``)."""
    if form == LINES:
        return iter_file_chunks(path)
    chunks = iter_array_chunks(path, form)
    if chunks is None:  # the file changed since ``parallel_paths`` looked: read here
        raise ReadHere(f"{path}: no longer laid out an item a line")
    return chunks


def iter_pooled(pool: ImportPool, path: Path, form: str = LINES) -> Iterator[Prepared | InvalidRecord]:
    """The converted records of ``path`` (a line-per-record file, or an array's items), in input order; chunks
    are handed out ahead of what is taken back, ``AHEAD`` per worker. Nothing of the file is out when it returns.
    Of a tau-bench trajectories file, each task's gold case is kept once (``tau_bench.FirstCases``), as the
    importer keeps it: the workers wrote none of them."""
    converted = _pooled(pool, path, form)
    if form != TAU_TRAJECTORIES:
        return converted
    return _first_cases(converted, str(path))


def _pooled(pool: ImportPool, path: Path, form: str) -> Iterator[Prepared | InvalidRecord]:
    chunks = pool.primed.pop(path, None)  # the first chunks may be out already (``ImportPool.prime``)
    for chunk in chunks if chunks is not None else chunks_of(path, form):
        while pool.full:
            yield from pool.next_result()
        pool.submit(chunk)
    while len(pool):
        yield from pool.next_result()


def _first_cases(converted: Iterator[Prepared | InvalidRecord], source: str) -> Iterator[Prepared | InvalidRecord]:
    from scorer.importers import tau_bench  # only here: as the registry loads it

    cases = tau_bench.FirstCases(source)
    for entry in converted:
        if isinstance(entry, Prepared) and entry.case_id is not None and entry.line is not None:
            item = entry.item
            taken = cases.take(entry.case_id, entry.line,
                               item.staged.digest if isinstance(item, PreparedItem) else item.digest)
            if taken is True:
                if isinstance(item, Repeated):  # its worker converted an equal task before: never the first
                    raise RuntimeError(f"an import worker sent back a case it had sent before as the first: "
                                       f"{item.id!r} at line {entry.line}")
                yield entry
            elif taken is not False:
                yield taken
        else:
            yield entry


def _raising(exc: Exception) -> Iterator[Chunk]:
    raise exc
    yield  # a generator: raises when first asked for a chunk


ARRAY_HEAD: Final = re.compile(rb"[ \t\r\n]*\[[ \t\r\n]*?(\r?\n)([ \t]+)\{")
"""An array's opening: ``[``, white space, and the first item ``{`` at the start of a line after its indentation."""
HEAD_BYTES: Final = 64 * 1024 * 1024
"""How far into a file the opening of a member's array is looked for (a results file's info and tasks, an eval
log's eval, plan, results and stats)."""


def iter_array_chunks(path: Path, form: str = TAU_TRAJECTORIES, items: int | None = None) -> Iterator[Chunk] | None:
    """The chunks of the JSON array that is the file ``path`` (or, for a form whose ``MEMBERS`` names a member,
    that member of the object that is the file), each ``items`` (``CHUNK_LINES``) whole items or about
    ``CHUNK_BYTES``, or None when the file is not laid out an item a line: the array's first item must open a line
    after ``[`` and the next one must follow within ``CHUNK_BYTES``, as ``json.dump(..., indent=N)`` writes them.

    The items are told apart without parsing: one ends where a line holding only the first's indentation and
    ``},`` is followed by a line opening the next (``{`` at that indentation); the last, where such a ``}`` is
    followed by a line closing the array (``]`` at the indentation of the array's key, or none). A pretty-printer
    puts nothing deeper at those indentations, but any writer may: so each worker checks that its chunk is whole
    items, the first chunk's that the array opens where it starts and the last chunk's that what follows it ends
    the document (``Chunk.items``), and says ``ReadHere`` when not; the import then converts the file in the
    importing process instead. (The pieces being whole values separated by commas, they are the array's items:
    JSON reads one way only.)"""
    member = MEMBERS[form]
    with path.open("rb") as fh:
        head = fh.read(CHUNK_BYTES)
        if member is None:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 4096))
            if not fh.read().rstrip(b" \t\r\n").endswith(b"]"):
                return None
            opening = ARRAY_HEAD.match(head, 3 if head.startswith(b"\xef\xbb\xbf") else 0)
            outer = b""
        else:  # the member's key at the start of a line, then its array's first item at the start of the next
            pattern = re.compile(rb"\n([ \t]*)" + re.escape(json.dumps(member).encode("utf-8"))
                                 + rb"[ \t]*:[ \t]*\[[ \t\r\n]*?(\r?\n)([ \t]+)\{")
            opening = pattern.search(head)
            if opening is None and len(head) == CHUNK_BYTES:
                head += fh.read(HEAD_BYTES - CHUNK_BYTES)
                opening = pattern.search(head)
            outer = b"" if opening is None else opening.group(1)
    if opening is None:
        return None
    newline, indent = opening.groups()[-2:]
    start = opening.end() - 1
    separator = newline + indent + b"}," + newline + indent + b"{"
    if head.find(separator, start, start + CHUNK_BYTES) < 0:
        return None
    return _array_chunks(path, start, 1 + head.count(b"\n", 0, start), separator,
                         newline + indent + b"}" + newline + outer + b"]", items or CHUNK_LINES, form)


def _array_chunks(path: Path, start: int, line: int, separator: bytes, closer: bytes, per_chunk: int, form: str,
                  ) -> Iterator[Chunk]:
    """``iter_array_chunks``' chunks: the file scanned a block at a time for ``separator`` (an item's ``}`` is
    ``closed`` bytes after a separator's start, the next item's ``{`` is its last byte) up to ``closer`` (the
    last item's ``}`` and the array's ``]``; the file's end if there is none: the last chunk's worker refuses it)."""
    source = str(path)
    closed = (len(separator) - 1) // 2
    chunk_start, chunk_line, count, lead = start, line, 1, True  # the chunk being found
    counted = start  # ``line`` is the line of this offset
    end = None  # the array's ``]``, once found
    with path.open("rb", buffering=0) as fh:
        fh.seek(start)
        base, data = start, b""  # ``data`` holds the file from offset ``base``
        while end is None and (block := fh.read(SCAN_BYTES)):
            data += block
            pos = 0
            stop = data.find(closer)
            if stop >= 0:
                end = base + stop + len(closer) - 1
            while (at := data.find(separator, pos, len(data) if stop < 0 else stop + closed)) >= 0:
                item_end, next_start = base + at + closed, base + at + len(separator) - 1
                line += data.count(b"\n", counted - base, next_start - base)
                counted = next_start
                if count >= per_chunk or item_end - chunk_start >= CHUNK_BYTES:
                    yield Chunk(source, chunk_line, count, chunk_start, item_end - chunk_start, form, lead, separator)
                    chunk_start, chunk_line, count, lead = next_start, line, 1, False
                else:
                    count += 1
                pos = at + len(separator) - 1
            # what may still hold the start of a separator or of the closer is kept
            cut = max(pos, len(data) - max(len(separator), len(closer)) + 1)
            line += data.count(b"\n", counted - base, cut)
            counted = base + cut
            data, base = data[cut:], base + cut
        if end is None:
            end = fh.seek(0, os.SEEK_END)
    yield Chunk(source, chunk_line, count, chunk_start, end - chunk_start, form, lead, separator, last=True)
