"""`toolgold import` converting toolgold JSON Lines in worker processes (labeler/cli/import_pool.py): the
same rows, warnings and summary as converting in the importing process, records stored in input order, and
the first bad line of the input is the one reported whichever chunk a worker finished first."""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import labeler.cli.data as data_cmd
from labeler.cli import cli, import_pool
from labeler.store import Store, transcripts
from scorer.formats import dumps_record
from scorer.importers import ImportOptions
from scorer.model import Message, ToolSpec
from tests.labeler.import_golden import REPO, digests
from tests.labeler.test_store import gold, transcript

DEMO = sorted((REPO / "data" / "demo").glob("*.jsonl"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _force_pool(monkeypatch: pytest.MonkeyPatch, sizes: list[int]) -> None:
    """Every toolgold JSON Lines input goes to two workers in chunks of 3 lines; the sizes of the chunks
    handed out are recorded in ``sizes``."""
    submit = import_pool.ImportPool.submit

    def recorded(self: import_pool.ImportPool, chunk: import_pool.Chunk) -> None:
        sizes.append(chunk.count)
        submit(self, chunk)

    monkeypatch.setattr(data_cmd, "MIN_BYTES", 0)
    monkeypatch.setattr(data_cmd, "WORKERS", 2)
    monkeypatch.setattr(data_cmd, "usable_cores", lambda: 2)
    monkeypatch.setattr(import_pool, "CHUNK_LINES", 3)
    monkeypatch.setattr(import_pool.ImportPool, "submit", recorded)


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    _force_pool(monkeypatch, sizes)
    return sizes


def _mixed_file(path: Path) -> Path:
    """The demo transcripts and gold cases interleaved with blank lines, a gold case failing its own schema,
    a BOM on line 1, CRLF line ends and a bare CR inside a record (JSON whitespace, not a line end): every
    kind of line the reader treats specially."""
    lines = [line for demo in DEMO for line in demo.read_text(encoding="utf-8").splitlines()][:60]
    broken = gold("bad-schema")
    broken = broken.model_copy(update={"expected": broken.expected.model_copy(update={"calls": (
        broken.expected.calls[0].model_copy(update={"arguments": {"no_such_parameter": 1}}),)})})
    lines[7:7] = ["", dumps_record(broken), "   ", dumps_record(transcript("bare-cr")).replace(",", ",\r", 1)]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    return path


@pytest.mark.parametrize("inputs", ["mixed", "demo"])
def test_the_workers_store_exactly_the_rows_warnings_and_summary_of_the_in_process_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inputs: str) -> None:
    files = [str(_mixed_file(tmp_path / "mixed.jsonl"))] if inputs == "mixed" else [str(p) for p in DEMO]
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)  # converted in this process
    alone = run("import", *files, "--db", str(tmp_path / "alone.db"))
    sizes: list[int] = []
    _force_pool(monkeypatch, sizes)
    both = run("import", *files, "--db", str(tmp_path / "pooled.db"))
    assert len(sizes) > 10  # the files went to the workers, in many chunks
    assert both == alone
    assert alone[0] == 0
    if inputs == "mixed":
        assert "gold case bad-schema" in alone[2]
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")
    assert Store(tmp_path / "pooled.db").stats()["transcripts"] > 0


def test_the_workers_read_their_lines_from_the_file_not_through_a_pipe(tmp_path: Path, pooled: list[int],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # What the importing process hands a worker is where its chunk lies (a few numbers), whatever the lines
    # weigh: the input is read once, by the worker, not read, pickled and piped by this process too.
    handed: list[int] = []
    put = import_pool.ImportPool.submit

    def measured(self: import_pool.ImportPool, chunk: import_pool.Chunk) -> None:
        handed.append(len(pickle.dumps(chunk)))
        put(self, chunk)

    monkeypatch.setattr(import_pool.ImportPool, "submit", measured)
    src = _numbered(tmp_path / "in.jsonl", 12, {})
    assert src.stat().st_size / 4 > 1000  # each chunk of 3 lines weighs over 1 KB
    code, out, err = run("import", str(src), "--db", str(tmp_path / "store.db"))
    assert (code, err) == (0, "")
    assert out.startswith("12 transcripts added")
    assert len(handed) == 4 and max(handed) < 200 + len(str(src))


def test_the_workers_write_the_rows_into_the_stage_and_send_back_only_what_stands_for_them(
        tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    # The rows (canonical bodies, turns, tags) go from the worker straight into the import's stage file; what
    # comes back through the pipe is each record's id, hash and line: a few bytes whatever the record weighs.
    back: list[tuple[int, int]] = []
    take = import_pool.ImportPool.next_result

    def measured(self: import_pool.ImportPool) -> list[Any]:
        got = take(self)
        back.append((len(got), len(pickle.dumps(got))))
        return got

    monkeypatch.setattr(import_pool.ImportPool, "next_result", measured)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(dumps_record(transcript(f"t{i}", answer="x" * 20_000)) + "\n" for i in range(9))
                   + "".join(dumps_record(gold(f"g{i}").model_copy(update={"messages": (
                       Message(role="user", content="y" * 20_000),)})) + "\n"
                             for i in range(3)), encoding="utf-8")
    code, out, err = run("import", str(src), "--db", str(tmp_path / "store.db"))
    assert (code, err) == (0, "")
    assert out.startswith("9 transcripts added") and "3 gold cases added" in out
    assert sum(n for n, _ in back) == 12
    assert max(size / n for n, size in back) < 1000  # each record is over 20 KB
    store = Store(tmp_path / "store.db")
    assert store.get_transcript("t8").transcript.messages[-1].content == "x" * 20_000
    assert store.get_gold("g2").messages[0].content == "y" * 20_000


def test_a_stored_transcript_coming_again_through_the_workers_with_other_tools_gets_them(
        tmp_path: Path, pooled: list[int]) -> None:
    # The importing process compares the stored conversation with the one a worker staged (read back from
    # the stage file the worker wrote) and takes the new tools from there.
    db = tmp_path / "store.db"
    first = tmp_path / "a.jsonl"
    first.write_text(dumps_record(transcript("t1")) + "\n", encoding="utf-8")
    assert run("import", str(first), "--db", str(db))[0] == 0
    retooled = transcript("t1").model_copy(update={"tools": (ToolSpec(name="find_orders", description="x"),)})
    again = tmp_path / "b.jsonl"
    again.write_text(dumps_record(retooled) + "\n" + dumps_record(transcript("t2")) + "\n", encoding="utf-8")
    code, out, err = run("import", str(again), "--db", str(db))
    assert code == 0, err
    assert out.startswith("1 transcripts added") and "1 transcripts' tools changed" in out
    assert [t.name for t in Store(db).get_transcript("t1").transcript.tools] == ["find_orders"]
    assert pooled == [1, 2]


def _bodies_in(db: Path) -> tuple[int, ...]:
    """Transcript bodies and pending rows, gold bodies and pending rows, in the store ``db``."""
    con = sqlite3.connect(db)
    try:
        return tuple(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                     for table in ("transcript_bodies", "pending_bodies", "gold_bodies", "pending_gold_bodies"))
    finally:
        con.close()


def test_the_workers_write_each_body_once_into_the_store_and_none_into_the_stage(
        tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    # The bodies are most of an import's bytes: a worker writes them straight into the store (pending until the
    # publish), not into the stage for the importing process to read back and copy. A body written for a record
    # the checks do not take (here the same transcript twice, in two chunks) is deleted; a re-import of what
    # the store holds writes none.
    staged: list[int] = []
    publish = transcripts._publish

    def counted(db: Any, stage: Any, *args: Any) -> None:
        staged.append(stage.conn.execute("SELECT (SELECT count(*) FROM rows_transcript_bodies) + "
                                         "(SELECT count(*) FROM rows_gold_bodies)").fetchone()[0])
        publish(db, stage, *args)

    monkeypatch.setattr(transcripts, "_publish", counted)
    src = tmp_path / "in.jsonl"
    lines = [dumps_record(transcript(f"t{i}", answer="x" * 5_000)) for i in range(9)]
    lines += [lines[0]] + [dumps_record(gold(f"g{i}")) for i in range(3)]
    src.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    db = tmp_path / "store.db"
    code, out, err = run("import", str(src), "--db", str(db))
    assert (code, err) == (0, "")
    assert out.startswith("9 transcripts added") and "3 gold cases added" in out
    assert staged == [0]
    assert _bodies_in(db) == (9, 0, 3, 0)
    assert Store(db).get_transcript("t0").transcript.messages[-1].content == "x" * 5_000
    code, out, err = run("import", str(src), "--db", str(db))
    assert (code, err) == (0, "")
    assert out.startswith("0 transcripts added")
    assert _bodies_in(db) == (9, 0, 3, 0)
    assert digests(db) == digests(_imported_alone(tmp_path, src, monkeypatch))


def _imported_alone(tmp_path: Path, src: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``src`` imported into a new store by the importing process alone (no workers)."""
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)
    db = tmp_path / "alone.db"
    assert run("import", str(src), "--db", str(db))[0] == 0
    return db


def test_an_import_that_fails_deletes_the_bodies_its_workers_wrote(tmp_path: Path, pooled: list[int]) -> None:
    # The workers have written the bodies of lines 1-11 when the importing process meets line 12: it stops them,
    # then deletes what they wrote, so nothing is left for the next import to sweep.
    src = _numbered(tmp_path / "in.jsonl", 12, {12: "{not json"})
    db = tmp_path / "store.db"
    code, _, err = run("import", str(src), "--db", str(db))
    assert code == 2 and f"{src}:12:" in err
    assert _bodies_in(db) == (0, 0, 0, 0)
    assert not list(tmp_path.glob("*.stage"))


def test_a_worker_that_cannot_get_the_write_lock_for_its_bodies_stops_the_import_in_one_line(
        tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.db"
    Store(db).migrate()
    monkeypatch.setattr(transcripts, "BUSY_TIMEOUT_MS", 200)  # the workers' wait (forked: they inherit it)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock throughout
    try:
        code, out, err = run("import", str(_numbered(tmp_path / "in.jsonl", 6, {})), "--db", str(db))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (code, out) == (2, "")
    assert err == (f"error: the database {db} is locked by another writer (waited 0.2 s); nothing was written: "
                   "try again\n")
    assert _bodies_in(db) == (0, 0, 0, 0)
    assert not list(tmp_path.glob("*.stage"))


def _numbered(path: Path, n: int, bad: dict[int, str]) -> Path:
    lines = [bad.get(i, dumps_record(transcript(f"t{i}"))) for i in range(1, n + 1)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_bad_record_in_an_earlier_chunk_wins_over_one_in_a_later_chunk(tmp_path: Path, pooled: list[int]) -> None:
    # Lines 1-3 and 4-6 are two chunks, one for each worker: the later chunk's bad line (4) is the first one either
    # worker meets, and a cheap one to find (not JSON), while line 3 (a bad record in the earlier chunk)
    # takes validating two records first.
    src = _numbered(tmp_path / "in.jsonl", 12, {3: '{"format": "toolgold.transcript/1", "id": ""}', 4: "{not json"})
    db = tmp_path / "store.db"
    code, out, err = run("import", str(src), "--db", str(db))
    assert code == 2
    assert err.splitlines() == [f"error: {src}:3: " + err.split(f"{src}:3: ", 1)[1].splitlines()[0]]
    assert out == ""
    assert Store(db).stats()["transcripts"] == 0
    assert not list(tmp_path.glob("*.stage"))
    assert pooled[:2] == [3, 3]


def test_skip_invalid_lists_the_rejects_in_input_order(tmp_path: Path, pooled: list[int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    src = _numbered(tmp_path / "in.jsonl", 14, {2: "[1]", 5: "{", 13: '{"format": "nope/1"}'})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("import", str(src), "--skip-invalid", "--db", str(tmp_path / "store.db"))
    assert code == 0
    assert out.startswith("11 transcripts added")
    rejects = (tmp_path / "toolgold-rejects.txt").read_text().splitlines()
    assert [line.split(":")[1] for line in rejects] == ["2", "5", "13"]
    assert [json.loads(dumps_record(Store(tmp_path / "store.db").get_transcript(f"t{i}").transcript))["id"]
            for i in (1, 14)] == ["t1", "t14"]


def test_an_empty_file_is_refused_through_the_workers_too(tmp_path: Path, pooled: list[int]) -> None:
    good = _numbered(tmp_path / "good.jsonl", 4, {})
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    code, _, err = run("import", "--from", "toolgold", str(good), str(empty), "--db", str(tmp_path / "s.db"))
    assert pooled == [3, 1, 2]
    assert (code, err) == (2, f"error: {empty}: no records in this file (it is empty)\n")
    assert Store(tmp_path / "s.db").stats()["transcripts"] == 0


CHILD = """
import sys
import labeler.cli.data as data_cmd
data_cmd.MIN_BYTES = 0
data_cmd.usable_cores = lambda: 2
sys.argv = ["toolgold", "import", sys.argv[1], "--db", sys.argv[2]]
from labeler.cli import main
main()
"""


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_leave_when_the_import_is_killed_and_the_next_import_cleans_up(tmp_path: Path) -> None:
    src = _numbered(tmp_path / "in.jsonl", 3000, {})
    db = tmp_path / "store.db"
    Store(db).migrate()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(src), str(db)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("*.stage")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(workers) >= 2, "the import finished before the kill, or started no workers"
    deadline = time.monotonic() + 3 * import_pool.POLL_SECONDS + 5
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()
                and Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert Store(db).stats()["transcripts"] == 0
    code, _, err = run("import", str(_numbered(tmp_path / "small.jsonl", 2, {})), "--db", str(db))
    assert code == 0, err
    assert not list(tmp_path.glob("*.stage"))
    assert Store(db).stats()["transcripts"] == 2
    assert _bodies_in(db) == (2, 0, 0, 0)  # what the killed import's workers wrote ahead was deleted


def _niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_workers_run_below_the_app_server_so_saves_keep_their_core() -> None:
    with import_pool.ImportPool(2, ImportOptions()) as pool:
        workers = [proc.pid for proc in pool.procs]
        deadline = time.monotonic() + import_pool.WORKER_NICENESS
        while (any(_niceness(w) < _niceness(os.getpid()) + import_pool.WORKER_NICENESS for w in workers)
               and time.monotonic() < deadline):
            time.sleep(0.02)
        assert [_niceness(w) for w in workers] == [_niceness(os.getpid()) + import_pool.WORKER_NICENESS] * 2


def _small_stage_keys(monkeypatch: pytest.MonkeyPatch, through_workers: bool) -> None:
    """Stage key ranges of 4 children (really ~a million), and chunks of 3 records, in this process or two workers."""
    from labeler.store import staging
    from labeler.store import transcripts as store_transcripts

    for module in (staging, store_transcripts):  # the rows are keyed in staging, published by transcripts
        monkeypatch.setattr(module, "CHILD_BITS", 2)
    monkeypatch.setattr(store_transcripts, "CHUNK", 3)
    if through_workers:
        _force_pool(monkeypatch, [])


@pytest.mark.parametrize("through_workers", [True, False])
def test_a_record_with_more_children_than_a_stage_key_numbers_is_refused_at_its_line_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through_workers: bool) -> None:
    # A record's children (turns, tags) are staged under one key range of 2**CHILD_BITS; one child more would
    # fall into the next record's range and never be published. The limit is ~a million; shrunk here to 4.
    _small_stage_keys(monkeypatch, through_workers)
    src = tmp_path / "in.jsonl"
    src.write_text(dumps_record(transcript("t1")) + "\n"
                   + dumps_record(gold("g1", tags=("a", "b", "c", "d", "e"))) + "\n", encoding="utf-8")
    code, out, err = run("import", str(src), "--db", str(tmp_path / "store.db"))
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and f"{src}:2:" in err and "5 tags" in err, err
    store = Store(tmp_path / "store.db")
    assert store.count_transcripts() == 0 and store.count_gold() == 0


@pytest.mark.parametrize("through_workers", [True, False])
def test_with_skip_invalid_a_record_with_too_many_children_is_set_aside_and_the_rest_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through_workers: bool) -> None:
    _small_stage_keys(monkeypatch, through_workers)
    src = tmp_path / "in.jsonl"
    src.write_text(dumps_record(transcript("t1")) + "\n"
                   + dumps_record(gold("g1", tags=("a", "b", "c", "d", "e"))) + "\n"
                   + dumps_record(gold("g2", tags=("a",))) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the rejects list is written in the working directory
    code, out, err = run("import", str(src), "--db", str(tmp_path / "store.db"), "--skip-invalid")
    assert code == 0, (out, err)
    assert "1 rejected" in out
    store = Store(tmp_path / "store.db")
    assert store.count_transcripts() == 1 and store.count_gold() == 1
    assert store.get_gold("g2").tags == ("a",)
    rejects = (tmp_path / "toolgold-rejects.txt").read_text(encoding="utf-8")
    assert f"{src}:2:" in rejects and "5 tags" in rejects, rejects


def test_a_worker_writing_after_the_import_gave_up_leaves_no_stage_file_behind(tmp_path: Path) -> None:
    # The importing process removes its stage file when it stops (a bad line, Ctrl-C) before its workers are
    # stopped; a worker that only then opens the stage must not create an empty one in its place.
    from labeler.store import StageFailed, StageWriter

    gone = tmp_path / "store.db-import-x.stage"
    with pytest.raises(StageFailed):
        StageWriter(gone)
    assert not gone.exists()


def test_a_worker_holds_one_line_of_its_chunk_at_a_time_not_the_chunk(tmp_path: Path) -> None:
    """A chunk of ~4 MB of long lines is read a line at a time: what the reading holds at its peak is about a
    line and the read buffer, not the chunk (read whole, split and each line copied again, it was ~3 chunks
    of fresh memory for every chunk a worker converted: ~2,000 page faults each on tau-bench transcripts)."""
    import tracemalloc

    line = b'{"pad": "' + b"x" * 40_000 + b'"}'
    source = tmp_path / "long.jsonl"
    source.write_bytes(b"\n".join([line] * 100) + b"\n" + line)  # the last line has no line end
    chunks = list(import_pool.iter_file_chunks(source))
    assert sum(c.count for c in chunks) == 101
    tracemalloc.start()
    try:
        seen = []
        for chunk in chunks:
            tracemalloc.reset_peak()
            for got in chunk.lines():
                seen.append(len(got))
                del got
            _, peak = tracemalloc.get_traced_memory()
            assert peak < chunk.size / 4, (peak, chunk.size)
    finally:
        tracemalloc.stop()
    assert seen == [len(line) + 1] * 100 + [len(line)]


def _greedy_chunks(data: bytes, max_lines: int, max_bytes: int) -> list[tuple[int, int, int, int]]:
    """The chunks ``iter_file_chunks`` promises, worked out from the file's lines: ``(first, count, offset, size)``,
    each chunk taking lines until it holds ``max_lines`` of them or at least ``max_bytes`` (a line never split;
    only a line feed ends a line, the last may have none)."""
    *ended, last = data.split(b"\n")
    lines = [part + b"\n" for part in ended] + ([last] if last else [])
    chunks, first, offset, count, size = [], 1, 0, 0, 0
    for line in lines:
        count, size = count + 1, size + len(line)
        if count == max_lines or size >= max_bytes:
            chunks.append((first, count, offset, size))
            first, offset, count, size = first + count, offset + size, 0, 0
    if count:
        chunks.append((first, count, offset, size))
    return chunks


@pytest.mark.parametrize(("max_lines", "max_bytes"), [(3, 1 << 20), (500, 64), (2, 10), (1, 1), (4, 7)])
def test_the_chunks_are_whole_lines_taken_greedily_whatever_the_sizes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_lines: int, max_bytes: int) -> None:
    """Line numbers, offsets and sizes of every chunk, against the lines themselves: across read blocks (a block
    of 5 bytes here), lines longer than a chunk's bytes, empty lines, a bare CR inside a line, and a last line
    with or without its line end."""
    import random

    monkeypatch.setattr(import_pool, "CHUNK_LINES", max_lines)
    monkeypatch.setattr(import_pool, "CHUNK_BYTES", max_bytes)
    monkeypatch.setattr(import_pool, "SCAN_BYTES", 5)
    rng = random.Random(max_lines * 1000 + max_bytes)
    samples = [b"", b"\n", b"\n\n", b"x", b"x\n", b'{"a": 1}\n{"b": 2}', b"a\rb\nc\r\n\rd"]
    for _ in range(40):
        lines = [bytes(rng.choice(b"ab \r{}") for _ in range(rng.choice([0, 1, 3, 9, 30]))) for _ in range(rng.randint(1, 12))]
        samples.append(b"\n".join(lines) + rng.choice([b"", b"\n"]))
    for data in samples:
        source = tmp_path / "lines.jsonl"
        source.write_bytes(data)
        got = [(c.first, c.count, c.offset, c.size) for c in import_pool.iter_file_chunks(source)]
        assert got == _greedy_chunks(data, max_lines, max_bytes), data
        assert all(c.source == str(source) for c in import_pool.iter_file_chunks(source))


def test_finding_the_chunks_holds_one_read_block_not_the_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The importing process only looks for line ends: it never gathers a chunk's bytes. What it holds at its peak is
    the one block it reads into (before, each block was appended to the unfinished chunk's bytes and the rest
    sliced off again: two to three chunks of copies, ~0.1 s of its CPU on 288 MB of transcripts)."""
    import tracemalloc

    monkeypatch.setattr(import_pool, "CHUNK_BYTES", 256 * 1024)
    monkeypatch.setattr(import_pool, "SCAN_BYTES", 16 * 1024)
    line = b'{"pad": "' + b"y" * 3_000 + b'"}\n'
    source = tmp_path / "many.jsonl"
    source.write_bytes(line * 1_000)
    tracemalloc.start()
    try:
        chunks = list(import_pool.iter_file_chunks(source))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(c.count for c in chunks) == 1_000 and len(chunks) > 10
    assert peak < 64 * 1024, peak


def _stage_beside(folder: Path) -> tuple[Path, Path]:
    """An empty stage file made as the import makes its own, and a new store's file beside it."""
    from labeler.store import staging

    stage, db = folder / "store.db-import-t.stage", folder / "store.db"
    with sqlite3.connect(stage, isolation_level=None) as conn:
        conn.executescript(staging.STAGE_PAGE_SIZE + staging.STAGE_PRAGMAS + staging.STAGE_SCHEMA)
    Store(db).engine.dispose()
    return stage, db


@pytest.mark.parametrize("stage_named", [True, False])
def test_chunks_handed_out_before_the_store_decides_its_stage_follow_that_decision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage_named: bool) -> None:
    # ``prime`` hands chunks out before the store is loaded; the store then names its stage (SQLite) or has none
    # (PostgreSQL, told by the first result asked for). Those chunks are written into the stage by the workers,
    # or come back as rows, exactly as the chunks handed out after.
    monkeypatch.setattr(import_pool, "CHUNK_LINES", 1)
    src = _numbered(tmp_path / "in.jsonl", 25, {})
    with import_pool.ImportPool(2, ImportOptions()) as pool:
        pool.prime(src)
        assert len(pool) == import_pool.PRIMED * 2 < 25  # 16 of the 25 chunks out before any decision
        if stage_named:
            stage, db = _stage_beside(tmp_path)
            pool.use_stage(stage, db)
        results = list(import_pool.iter_pooled(pool, src))
    assert [r.line for r in results] == list(range(1, 26))
    kinds = {type(r.item).__name__ for r in results}
    if stage_named:
        assert kinds == {"StagedItem"} and all(r.item.body_id is not None for r in results)
        with sqlite3.connect(tmp_path / "store.db") as conn:
            assert conn.execute("SELECT count(*) FROM transcript_bodies").fetchone() == (25,)
        with sqlite3.connect(stage) as conn:
            assert conn.execute("SELECT count(*) FROM rows_transcripts").fetchone() == (25,)
    else:
        assert kinds == {"PreparedItem"}
        assert [r.item.staged.id for r in results] == [f"t{i}" for i in range(1, 26)]


def test_an_import_stopped_before_the_store_decides_its_stage_leaves_no_worker_waiting(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                                       ) -> None:
    monkeypatch.setattr(import_pool, "CHUNK_LINES", 3)
    src = _numbered(tmp_path / "in.jsonl", 25, {})
    with import_pool.ImportPool(2, ImportOptions()) as pool:
        pool.prime(src)
        workers = list(pool.procs)
    assert not [w for w in workers if w.is_alive()]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_pooled_import_stores_every_record_on_either_backend(
        tmp_path: Path, pooled: list[int], backend: str, request: pytest.FixtureRequest) -> None:
    # Its first chunks go out before the store is loaded (``prime``); the store then names its stage (SQLite)
    # or has none (PostgreSQL, where the workers send the rows back): every record lands either way.
    db = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    src = _numbered(tmp_path / "in.jsonl", 40, {})
    code, out, err = run("import", str(src), "--db", db)
    assert code == 0, err
    assert len(pooled) == 14 and "40 transcripts added" in out.replace(",", ""), (pooled, out)
    store = Store(db)
    try:
        assert store.count_transcripts() == 40
        assert sorted(s.id for s in store.list_transcripts(limit=100)) == sorted(f"t{i}" for i in range(1, 41))
    finally:
        store.close()


_PRIMED_PROBE = r'''
import os, sys, time
source, events = sys.argv[1], sys.argv[2]
def hook(event, args):  # each chunk a worker converts, it reads from the file: one open a chunk
    if event == "open" and str(args[0]) == source and os.getpid() != main:
        with open(os.path.join(events, str(os.getpid())), "a") as fh:
            fh.write("open\n")
main = os.getpid()
sys.addaudithook(hook)
from pathlib import Path
from labeler.cli import import_pool
from scorer.importers import ImportOptions
import_pool.CHUNK_LINES = 3
with import_pool.ImportPool(2, ImportOptions()) as pool:
    pool.prime(Path(source))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the store is still loading: nothing decided yet
        converted = sum(len(open(os.path.join(events, f)).read().split()) for f in os.listdir(events))
        if converted == len(pool):
            break
        time.sleep(0.05)
    print(converted, len(pool))
    results = list(import_pool.iter_pooled(pool, Path(source)))  # decided now: no stage (rows sent back)
    print(len(results))
'''


def test_before_the_store_decides_the_workers_convert_every_primed_chunk(tmp_path: Path) -> None:
    # A worker does not stop at its first primed chunk to wait for the store: the workers convert all of them
    # while the importing process loads the store, then write them in order once told where.
    src = _numbered(tmp_path / "in.jsonl", 25, {})
    events = tmp_path / "events"
    events.mkdir()
    done = subprocess.run([sys.executable, "-c", _PRIMED_PROBE, str(src), str(events)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["9 9", "25"], done.stdout  # 25 lines, 3 a chunk: all 9 primed


def test_a_free_worker_takes_the_next_chunk_so_a_slow_one_holds_back_no_share_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One queue of chunks: a worker slowed down (a busy core, heavier records) takes fewer. Handed out round robin,
    # each worker had half of them to do whatever its pace, and the import's last second waited on the slower.
    monkeypatch.setattr(import_pool, "CHUNK_LINES", 1)
    src = _numbered(tmp_path / "in.jsonl", 40, {})
    log = tmp_path / "log"
    log.mkdir()
    converted = import_pool.ImportPool._converted

    def slow_for_the_first(self: import_pool.ImportPool, chunk: import_pool.Chunk, keep_rows: bool) -> Any:
        if self.index == 0:
            time.sleep(0.3)
        (log / str(chunk.first)).write_text(str(self.index))
        return converted(self, chunk, keep_rows)

    monkeypatch.setattr(import_pool.ImportPool, "_converted", slow_for_the_first)
    with import_pool.ImportPool(2, ImportOptions()) as pool:
        results = list(import_pool.iter_pooled(pool, src))
    assert [r.line for r in results] == list(range(1, 41))  # still taken back in input order
    by_worker = [path.read_text() for path in log.iterdir()]
    assert len(by_worker) == 40 and by_worker.count("1") >= 30, sorted(by_worker)


@pytest.mark.parametrize("stage_named", [True, False])
def test_with_a_stage_as_many_chunks_stay_out_as_were_primed_without_one_few(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage_named: bool) -> None:
    # With a stage a result is a few strings a record: the primed number of chunks stays out, so no worker runs
    # dry while this process works through the results before it hands out the next chunk (with two a worker
    # they did, ~0.1 s each in an import of 10,000 transcripts). Without one (PostgreSQL) a result holds the rows:
    # few chunks stay out, so memory stays flat.
    monkeypatch.setattr(import_pool, "CHUNK_LINES", 1)
    src = _numbered(tmp_path / "in.jsonl", 60, {})
    out: list[int] = []
    with import_pool.ImportPool(2, ImportOptions()) as pool:
        pool.prime(src)
        if stage_named:
            stage, db = _stage_beside(tmp_path)
            pool.use_stage(stage, db)
        for result in import_pool.iter_pooled(pool, src):
            out.append(len(pool))
            assert result.line == len(out)
    steady = out[16:40]  # after the primed chunks, before the file runs out
    if stage_named:
        assert min(steady) >= import_pool.PRIMED * 2 - 1, out
    else:
        assert max(steady) <= import_pool.AHEAD * 2, out


@pytest.mark.parametrize("good", [True, False])
def test_an_import_sets_aside_what_the_store_loaded_collects_seldom_and_then_restores_the_collector(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, good: bool) -> None:
    # The importing process's collector walked SQLAlchemy's and the tables' objects again and again while the
    # import ran (39 ms of its CPU for 10,000 transcripts, 78 ms for 20,000 gold cases): they are set aside
    # (frozen) once the store is loaded and young collections run less often; afterwards, however the
    # import ended, the collector is as it was (a test process, or a caller, runs many imports).
    src = _numbered(tmp_path / "in.jsonl", 5, {} if good else {3: "{not json"})
    during: list[tuple[int, int]] = []
    import_items = Store.import_items

    def watched(self: Store, *args: Any, **kwargs: Any) -> Any:
        during.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return import_items(self, *args, **kwargs)

    monkeypatch.setattr(Store, "import_items", watched)
    before = gc.get_threshold(), gc.get_freeze_count()
    code, _, err = run("import", str(src), "--db", str(tmp_path / "s.db"))
    assert code == (0 if good else 2), err
    threshold, frozen = during[0]
    assert threshold == import_pool.IMPORTING_GC_THRESHOLD
    assert frozen > before[1] + 10_000  # the modules, classes and tables loaded by then
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_worker_killed_mid_import_fails_it_in_one_line_with_nothing_imported(
        tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    # Whichever worker took the chunk of lines 4-6 is killed (out of memory, say) as it starts on it: that chunk
    # never comes back, and the import says so rather than waiting for it.
    converted = import_pool.ImportPool._converted

    def killed_at_line_4(self: import_pool.ImportPool, chunk: import_pool.Chunk, keep_rows: bool) -> Any:
        if chunk.first == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        return converted(self, chunk, keep_rows)

    monkeypatch.setattr(import_pool.ImportPool, "_converted", killed_at_line_4)
    src = _numbered(tmp_path / "in.jsonl", 12, {})
    db = tmp_path / "store.db"
    code, out, err = run("import", str(src), "--db", str(db))
    assert code != 0 and out == ""
    assert err.splitlines() == ["error: an import worker process died (killed, or out of memory); nothing was "
                                "imported: run the import again"], err
    store = Store(str(db))
    try:
        assert store.count_transcripts() == 0
    finally:
        store.close()
