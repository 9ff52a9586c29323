"""`toolgold import` of tau-bench's own trajectories file (one indented JSON array) converted in worker processes
(labeler/cli/import_pool.py, ``iter_array_chunks``): the same rows, errors, rejects and summary as converting it in
the importing process; a file whose indentation the split cannot trust is read in this process after all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import MethodType, SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import labeler.cli.data as data_cmd
from labeler.cli import cli, import_pool
from labeler.store import Store
from labeler.store import transcripts as store_transcripts
from scorer.importers import ImportOptions
from tests.labeler.import_golden import REPO, digests
from tests.labeler.test_import_pool import _bodies_in, _force_pool

TAU = REPO / "tests" / "data" / "real" / "tau-bench"
REAL = json.loads((TAU / "historical_trajectories" / "gpt-4o-airline.json").read_text(encoding="utf-8"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def trajectories(n: int) -> list[dict[str, Any]]:
    """``n`` real trajectories, the 6 repeated under new task ids (each task's trials kept together as in the
    real file: trials 0 and 1 of tasks 0 and 1, so a task's case comes again and is stored once)."""
    out = []
    for i in range(n):
        item = json.loads(json.dumps(REAL[i % len(REAL)]))
        item["task_id"] = (i // len(REAL)) * 1000 + item["task_id"]
        out.append(item)
    return out


def write(folder: Path, items: list[dict[str, Any]], *, text: str | None = None) -> Path:
    """The items as tau-bench writes them (``json.dump(results, indent=2)``), its tools beside them."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gpt-4o-airline.json"
    path.write_text(json.dumps(items, indent=2) if text is None else text, encoding="utf-8")
    shutil.copy(TAU / "converted" / "airline_tools.json", folder / "airline_tools.json")
    return path


SUBMIT = import_pool.ImportPool.submit
RUNS: list[str] = []
"""How each import run converted its files, in order: "workers" or "here" (an import read again here after
``ReadHere`` runs twice)."""


def force_pool(monkeypatch: pytest.MonkeyPatch) -> list[import_pool.Chunk]:
    """From now on the imports go through two workers in chunks of 3 items; the chunks handed out are recorded
    in the list returned, and each run of an import in ``RUNS``."""
    chunks: list[import_pool.Chunk] = []
    run_import = getattr(data_cmd._import, "original", data_cmd._import)  # (not counted twice if forced again)

    def counted(*args: Any) -> Any:
        RUNS.append("here" if args[7] is None else "workers")
        return run_import(*args)

    counted.original = run_import  # type: ignore[attr-defined]

    RUNS.clear()
    monkeypatch.setattr(data_cmd, "_import", counted)

    def recorded(self: import_pool.ImportPool, chunk: import_pool.Chunk) -> None:
        chunks.append(chunk)
        SUBMIT(self, chunk)

    _force_pool(monkeypatch, [])  # two workers, chunks of 3 records
    monkeypatch.setattr(import_pool.ImportPool, "submit", recorded)
    return chunks


def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path,
         ) -> tuple[tuple[int, str, str], tuple[int, str, str], list[import_pool.Chunk]]:
    """The import of ``path`` converted in this process, then through the workers: both outcomes, and the chunks
    the workers were handed."""
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)  # converted in this process
    alone = run("import", str(path), "--db", str(tmp_path / "alone.db"))
    chunks = force_pool(monkeypatch)
    return alone, run("import", str(path), "--db", str(tmp_path / "pooled.db")), chunks


def trapped(text: str, item: dict[str, Any], key: str = "traj", indent: str = "  ") -> str:
    """``text`` (the items at ``indent``) with ``item``'s ``key`` list (its messages) written at the items' own
    indentation: still the same JSON, but a split at the items' "},\\n{" would cut that item in pieces."""
    plain = json.dumps(item, indent=2).replace("\n", "\n" + indent)
    inner = indent + "  "
    messages = ",\n".join(f"{indent}{{\n{inner}" + json.dumps(m)[1:-1] + f"\n{indent}}}" for m in item[key])
    odd = json.dumps({**item, key: "@LIST@"}, indent=2).replace("\n", "\n" + indent).replace(
        '"@LIST@"', "[\n" + messages + "\n" + inner + "]")
    assert text.count(plain) == 1 and json.loads(text.replace(plain, odd)) == json.loads(text)
    return text.replace(plain, odd)


def test_the_workers_store_exactly_what_converting_the_trajectories_here_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "in", trajectories(40))
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0
    assert alone[1].startswith("40 transcripts added")
    assert len(chunks) == 14  # 40 items, 3 a chunk: the file went to the workers
    assert RUNS == ["workers"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")


def test_a_trajectory_body_goes_once_into_the_store_and_each_task_case_stays_in_the_stage_until_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every trajectory brings its task's case again: the workers leave the cases' bodies in the stage, so the one
    # the importing process keeps is copied from there and the copies it drops never reach the store.
    staged: list[tuple[int, int]] = []
    publish = store_transcripts._publish

    def counted(db: Any, stage: Any, *args: Any) -> None:
        staged.append(stage.conn.execute("SELECT (SELECT count(*) FROM rows_transcript_bodies), "
                                         "(SELECT count(*) FROM rows_gold_bodies)").fetchone())
        publish(db, stage, *args)

    monkeypatch.setattr(store_transcripts, "_publish", counted)
    force_pool(monkeypatch)
    path = write(tmp_path / "in", trajectories(24))
    code, out, err = run("import", str(path), "--db", str(tmp_path / "store.db"))
    assert (code, err) == (0, "")
    assert out.startswith("24 transcripts added") and "16 gold cases added" in out
    assert len(staged) == 1 and staged[0][0] == 0
    assert 16 <= staged[0][1] <= 24  # each task's case once at least; once a worker, at most (see below)
    assert _bodies_in(tmp_path / "store.db") == (24, 0, 16, 0)


def test_a_worker_sends_back_only_the_content_hash_of_a_task_case_it_converted_before(tmp_path: Path) -> None:
    path = write(tmp_path / "in", trajectories(12))  # tasks 0 and 1 come twice in each 6
    worker = SimpleNamespace(options=ImportOptions(), converters={}, repeated={})
    for name in ("_converted", "_items"):
        setattr(worker, name, MethodType(getattr(import_pool.ImportPool, name), worker))
    chunks = list(import_pool.iter_array_chunks(path, items=12) or ())
    assert len(chunks) == 1
    out, rows, gold_in_store = worker._converted(chunks[0], True)
    assert not gold_in_store
    cases = [entry for entry in out if entry.case_id is not None]
    repeated = [entry for entry in cases if isinstance(entry.item, import_pool.Repeated)]
    assert [entry.line for entry in repeated] == [cases[4].line, cases[5].line, cases[10].line, cases[11].line]
    first = {entry.case_id: entry.item.staged.digest for entry in cases if entry not in repeated}
    assert len(first) == 8 and all(entry.item.digest == first[entry.case_id] for entry in repeated)
    assert len(rows) == 12 + 8  # every transcript, each task's case once


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_on_either_backend_the_workers_store_each_trajectory_and_each_task_case_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, request: pytest.FixtureRequest) -> None:
    # SQLite: the workers write into the stage. PostgreSQL: no stage, the rows come back to the importing process.
    db = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    items = trajectories(24)
    path = write(tmp_path / "in", items)
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)
    alone = run("import", str(path), "--db", str(tmp_path / "alone.db"))
    chunks = force_pool(monkeypatch)
    assert run("import", str(path), "--db", db) == alone
    assert len(chunks) == 8 and RUNS == ["workers"]
    store, reference = Store(db), Store(tmp_path / "alone.db")
    try:
        assert store.count_transcripts() == reference.count_transcripts() == 24
        assert [c.model_dump() for c in store.iter_gold_cases()] == \
            [c.model_dump() for c in reference.iter_gold_cases()]
        assert len({f"{item['task_id']}" for item in items}) == len(list(store.iter_gold_cases())) == 16
    finally:
        store.close()
        reference.close()


def test_each_chunk_is_whole_items_at_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "in", trajectories(7))
    text = path.read_text(encoding="utf-8")
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "  {"]
    chunks = list(import_pool.iter_array_chunks(path, items=3))
    assert [(c.first, c.count) for c in chunks] == [(starts[0], 3), (starts[3], 3), (starts[6], 1)]
    raw = path.read_bytes()
    for chunk in chunks:
        piece = raw[chunk.offset:chunk.offset + chunk.size].decode("utf-8")
        assert piece.startswith("{") and piece.rstrip().endswith("}")
        assert [line for line, _ in chunk.items()] == [s for s in starts if chunk.first <= s][:chunk.count]
    assert [v for c in chunks for _, v in c.items()] == json.loads(text)


@pytest.mark.parametrize("head", [b"", b"\xef\xbb\xbf"])
def test_any_indentation_is_split_and_a_file_not_laid_out_an_item_a_line_is_not(tmp_path: Path, head: bytes) -> None:
    items = trajectories(4)
    for indent in (1, 2, 4, "\t"):
        path = tmp_path / "in.json"
        path.write_bytes(head + json.dumps(items, indent=indent).encode("utf-8") + b"\n")
        chunks = list(import_pool.iter_array_chunks(path, items=1))
        assert [v for c in chunks for _, v in c.items()] == items
        assert len(chunks) == 4
    path.write_bytes(head + json.dumps(items).encode("utf-8"))  # one line: no split to find
    assert import_pool.iter_array_chunks(path, items=1) is None
    path.write_bytes(head + json.dumps(items, indent=2).encode("utf-8")[:-1])  # no closing bracket
    assert import_pool.iter_array_chunks(path, items=1) is None


def test_a_split_that_cuts_an_item_is_noticed_and_the_file_read_here_instead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = trajectories(12)
    text = trapped(json.dumps(items, indent=2), items[7])
    assert json.loads(text) == items
    path = write(tmp_path / "in", items, text=text)
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0 and alone[1].startswith("12 transcripts added")
    assert chunks  # handed out, found cut, then read in this process
    assert RUNS == ["workers", "here"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")
    assert not list(tmp_path.glob("*.stage"))


def test_on_postgresql_a_split_that_cuts_an_item_is_read_here_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str) -> None:
    items = trajectories(12)
    path = write(tmp_path / "in", items, text=trapped(json.dumps(items, indent=2), items[7]))
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)
    alone = run("import", str(path), "--db", str(tmp_path / "alone.db"))
    force_pool(monkeypatch)
    assert run("import", str(path), "--db", postgres_url) == alone
    assert RUNS == ["workers", "here"]
    store = Store(postgres_url)
    try:
        assert store.count_transcripts() == 12
    finally:
        store.close()


def test_a_task_file_is_converted_as_tasks_whichever_way_it_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  ) -> None:
    # tau-bench's importer reads a file whose first item has actions and no messages as tasks: the workers
    # convert trajectories only, so the first chunk's worker sends such a file back to be read here.
    tasks = json.loads((TAU / "converted" / "airline_tasks_test.json").read_text(encoding="utf-8"))
    folder = tmp_path / "converted"
    folder.mkdir()
    path = folder / "airline_tasks_test.json"
    path.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    shutil.copy(TAU / "converted" / "airline_tools.json", folder / "airline_tools.json")
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0 and f"{len(tasks)} gold cases added" in alone[1]
    assert not chunks and RUNS == ["here"]  # no run's messages in it: not handed to the workers
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")
    # One with "traj" as a value: handed out, then sent back by the first chunk's worker.
    tasks[0]["user_id"] = "traj"
    path.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    (tmp_path / "again").mkdir()
    alone, pooled, chunks = both(tmp_path / "again", monkeypatch, path)
    assert alone[0] == 0 and chunks and RUNS == ["workers", "here"]
    assert pooled == alone
    assert digests(tmp_path / "again" / "pooled.db") == digests(tmp_path / "again" / "alone.db")


def test_a_file_broken_half_way_is_refused_at_the_same_line_with_nothing_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(trajectories(20), indent=2)
    cut = text.index('"task_id": 2006')
    path = write(tmp_path / "in", [], text=text[:cut] + '"task_id": 2006 2,' + text[cut + len('"task_id": 2006,'):])
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 2 and alone[2].startswith(f"error: {path}:")
    assert chunks and RUNS == ["workers", "here"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")


def test_a_task_whose_trials_disagree_is_refused_at_the_later_trial_as_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = trajectories(30)
    later = next(i for i, item in enumerate(items) if item["task_id"] == 2000 and item["trial"] == 1)
    items[later]["info"]["task"]["actions"][0]["kwargs"]["user_id"] = "someone_else"
    path = write(tmp_path / "in", items)
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 2 and "has other gold actions than at line" in alone[2]
    assert chunks and RUNS == ["workers"]  # found by the importing process as the workers' results come back
    assert pooled == alone


def test_with_skip_invalid_each_reject_is_listed_once_even_when_the_file_is_read_again_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = trajectories(12)
    del items[4]["traj"]  # a bad trajectory, in a chunk before the one the split cuts
    path = write(tmp_path / "in", [], text=trapped(json.dumps(items, indent=2), items[11]))
    for folder in ("alone", "pooled"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "alone")
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)
    alone = run("import", str(path), "--db", str(tmp_path / "alone.db"), "--skip-invalid")
    monkeypatch.chdir(tmp_path / "pooled")
    chunks = force_pool(monkeypatch)
    pooled = run("import", str(path), "--db", str(tmp_path / "pooled.db"), "--skip-invalid")
    assert alone[0] == 0 and "1 rejected records listed in toolgold-rejects.txt" in alone[2]
    assert len(chunks) >= 4  # the chunk the split cut came after the reject's
    assert RUNS == ["workers", "here"]
    assert pooled == alone
    listed = (tmp_path / "pooled" / "toolgold-rejects.txt").read_text(encoding="utf-8")
    assert listed == (tmp_path / "alone" / "toolgold-rejects.txt").read_text(encoding="utf-8")
    assert listed.count("\n") == 1
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")


TAU2 = REPO / "tests" / "data" / "real" / "tau2-bench" / "results" / "gpt-4.1_airline_default_gpt-4.1_1trials.json"


def results(n: int, *, tasks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A tau2-bench results file with ``n`` real airline simulations, each under an id and trial of its own."""
    base = json.loads(TAU2.read_text(encoding="utf-8"))
    sims = base.pop("simulations")
    if tasks is not None:
        base["tasks"] = tasks
    return {**base, "simulations": [{**sims[i % len(sims)], "id": f"sim-{i}", "trial": i // len(sims)}
                                    for i in range(n)]}


def write_results(folder: Path, text: str) -> Path:
    path = folder / "airline" / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tau2_results_file_s_simulations_go_to_the_workers_and_store_what_converting_here_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = results(20)
    path = write_results(tmp_path / "in", json.dumps(doc, indent=2))
    alone, pooled, chunks = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0 and alone[1].startswith("20 transcripts added")
    assert f"{len(doc['tasks'])} gold cases added" in alone[1]
    assert len(chunks) == 7 and RUNS == ["workers"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")


def test_a_tau2_results_file_s_chunks_are_whole_simulations_at_their_lines(tmp_path: Path) -> None:
    doc = results(7)
    text = json.dumps(doc, indent=2)
    path = write_results(tmp_path, text)
    lines = text.splitlines()
    opened = lines.index('  "simulations": [') + 1
    starts = [n for n, line in enumerate(lines, start=1) if line == "    {" and n > opened]
    chunks = list(import_pool.iter_array_chunks(path, import_pool.TAU2_SIMULATIONS, items=3) or ())
    assert [(c.first, c.count, c.lead) for c in chunks] == [(starts[0], 3, True), (starts[3], 3, False),
                                                            (starts[6], 1, False)]
    assert [v for c in chunks for _, v in c.items()] == doc["simulations"]
    assert import_pool.iter_array_chunks(path, items=3) is None  # the file is an object, not an array
    # other members after the simulations: their end is where the last one's "}" meets the array's "]"
    moved = {"simulations": doc["simulations"], **{k: v for k, v in doc.items() if k != "simulations"}}
    path.write_text(json.dumps(moved, indent=2), encoding="utf-8")
    chunks = list(import_pool.iter_array_chunks(path, import_pool.TAU2_SIMULATIONS, items=3) or ())
    assert [c.last for c in chunks] == [False, False, True]
    assert [v for c in chunks for _, v in c.items()] == doc["simulations"]
    # what follows the last chunk must end the document: a truncated file is refused by the last chunk's worker
    path.write_text(json.dumps(moved, indent=2)[:-40], encoding="utf-8")
    chunks = list(import_pool.iter_array_chunks(path, import_pool.TAU2_SIMULATIONS, items=3) or ())
    assert chunks[-1].last
    with pytest.raises(import_pool.ReadHere):
        list(chunks[-1].items())


def test_a_simulations_key_inside_a_task_that_misleads_the_split_is_noticed_and_the_file_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = json.loads(TAU2.read_text(encoding="utf-8"))
    tasks = base["tasks"]
    tasks[0] = {**tasks[0], "simulations": [{"note": "a"}, {"note": "b"}]}
    path = write_results(tmp_path / "in", json.dumps(results(9, tasks=tasks), indent=2))
    chunks = list(import_pool.iter_array_chunks(path, import_pool.TAU2_SIMULATIONS, items=3) or ())
    assert chunks and chunks[0].lead  # the task's own list taken for the simulations
    with pytest.raises(import_pool.ReadHere):
        list(chunks[0].items())
    alone, pooled, handed = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0 and alone[1].startswith("9 transcripts added")
    assert handed and RUNS == ["workers", "here"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")


def test_a_tau2_results_file_with_a_simulation_cut_by_the_split_or_a_bad_info_is_reported_as_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = results(12)
    text = json.dumps(doc, indent=2)
    path = write_results(tmp_path / "cut", trapped(text, doc["simulations"][7], "messages", "    "))
    alone, pooled, _ = both(tmp_path / "cut", monkeypatch, path)
    assert alone[0] == 0 and RUNS == ["workers", "here"]
    assert pooled == alone
    bad = {**doc, "info": {**doc["info"], "environment_info": "airline"}}
    path = write_results(tmp_path / "bad", json.dumps(bad, indent=2))
    alone, pooled, _ = both(tmp_path / "bad", monkeypatch, path)
    assert alone[0] == 2 and "environment_info" in alone[2]
    assert RUNS == ["workers", "here"]
    assert pooled == alone


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_on_either_backend_the_workers_store_every_simulation_and_each_task_case_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, request: pytest.FixtureRequest) -> None:
    db = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    doc = results(20)
    path = write_results(tmp_path / "in", json.dumps(doc, indent=2))
    monkeypatch.setattr(data_cmd, "MIN_BYTES", 1 << 60)
    alone = run("import", str(path), "--db", str(tmp_path / "alone.db"))
    force_pool(monkeypatch)
    assert run("import", str(path), "--db", db) == alone
    assert RUNS == ["workers"]
    store, reference = Store(db), Store(tmp_path / "alone.db")
    try:
        assert store.count_transcripts() == reference.count_transcripts() == 20
        assert [c.model_dump() for c in store.iter_gold_cases()] == \
            [c.model_dump() for c in reference.iter_gold_cases()]
    finally:
        store.close()
        reference.close()


INSPECT = REPO / "tests" / "data" / "real" / "traces" / "inspect-ai" / "2025-05-12T20-27-36-04-00_browser.json"


def test_an_inspect_log_s_samples_go_to_the_workers_and_store_what_converting_here_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As inspect writes it: eval, plan, results and stats, then the samples, then the reductions.
    base = json.loads(INSPECT.read_text(encoding="utf-8"))
    assert list(base)[-2:] == ["samples", "reductions"]
    sample = base["samples"][0]
    base["samples"] = [{**sample, "id": f"s-{i}", "epoch": 1 + i % 2} for i in range(7)]
    path = tmp_path / "in" / "log.json"
    path.parent.mkdir()
    path.write_text(json.dumps(base, indent=2), encoding="utf-8")
    chunks = list(import_pool.iter_array_chunks(path, import_pool.INSPECT_SAMPLES, items=3) or ())
    assert [(c.count, c.lead, c.last) for c in chunks] == [(3, True, False), (3, False, False), (1, False, True)]
    alone, pooled, handed = both(tmp_path, monkeypatch, path)
    assert alone[0] == 0 and alone[1].startswith("7 transcripts added")
    assert len(handed) == 3 and RUNS == ["workers"]
    assert pooled == alone
    assert digests(tmp_path / "pooled.db") == digests(tmp_path / "alone.db")
    # Broken after the samples (the reductions cut short): the workers' file is read here, refused as here.
    path.write_text(json.dumps(base, indent=2)[:-200], encoding="utf-8")
    (tmp_path / "cut").mkdir()
    alone, pooled, _ = both(tmp_path / "cut", monkeypatch, path)
    assert alone[0] == 2 and alone[2].startswith(f"error: {path}:")
    assert RUNS == ["workers", "here"]
    assert pooled == alone
