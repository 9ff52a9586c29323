"""A fuzz pass over every importer and every command that reads files: bad input never gets past toolgold.

Each case takes a real sample (tests/data/real/, tests/golden/), applies one mutation (a truncated line, a
dropped or duplicated key, a value of another type, NaN / Infinity / 1e400 / -0.0 / a huge integer, deep
nesting, bytes that are not UTF-8, a BOM, CRLF, an empty file, blank lines, lines <-> an array, tool-call
arguments that are not JSON, duplicate ids, the wrong ``--from``) and runs the real command on a fresh
SQLite file. Whatever the input, the rule (README, "Formats"):

- the exit code is 0 or 2 (1 only where a command means "found": drift, lint), never a crash;
- no traceback is printed;
- an exit-2 message is one line, ``error: FILE:LINE: what`` (the line where the mutation put the problem,
  for JSON Lines files);
- after exit 2 the database holds exactly the rows it held before, and no output file was left;
- after exit 0 a value the mutation put where the unmutated sample's value was stored is stored too (never
  silently ``null`` or dropped), and a NaN / Infinity where a stored value was is never accepted.

Deterministic: every case draws from its own seeded ``random.Random``; a few hundred cases in all
(``TOOLGOLD_FUZZ_ROUND=N`` draws another set, for a wider sweep by hand).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import sqlite3
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from scorer import importers
from scorer.errors import InvalidRecord
from tests.conftest import TEST_DATA

GOLDEN = TEST_DATA.parent / "golden"
ROUND = f"/{os.environ['TOOLGOLD_FUZZ_ROUND']}" if os.environ.get("TOOLGOLD_FUZZ_ROUND", "0") != "0" else ""
"""Other draws of the same cases (``TOOLGOLD_FUZZ_ROUND=1 ...``) for a wider sweep by hand; 0 (the default)
is the set CI runs."""
REAL = TEST_DATA / "real"

# --------------------------------------------------------------------------------------------------
# The seeds: real samples in every supported format. ``copy`` is the folder copied with the file (a
# format that reads files beside it: BFCL's possible_answer/ and multi_turn_func_doc/).
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    name: str
    path: Path
    fmt: str
    copy: Path | None = None
    extra: tuple[str, ...] = ()

    @property
    def lines(self) -> bool:
        """Whether each line of the file is one record (so a mutated line is the line an error names): JSON
        Lines, whatever the file is called (BFCL's ``.json`` files are)."""
        if self.path.suffix == ".eval":
            return False
        try:
            json.loads(self.path.read_bytes())
        except ValueError:
            return True
        return False


SEEDS = (
    Seed("toolgold-gold", GOLDEN / "valid" / "gold-v1.jsonl", "toolgold"),
    Seed("toolgold-transcript", GOLDEN / "valid" / "transcript-v1.jsonl", "toolgold"),
    Seed("openai-chat", GOLDEN / "importers" / "openai-chat-pairs" / "chat.jsonl", "openai"),
    Seed("anthropic", GOLDEN / "importers" / "anthropic-pairs" / "messages.jsonl", "anthropic"),
    Seed("gemini", GOLDEN / "importers" / "gemini-parallel-no-ids" / "generate_content.jsonl", "gemini"),
    Seed("responses-pairs", GOLDEN / "importers" / "openai-responses-pairs" / "responses.jsonl", "openai-responses"),
    Seed("responses-runstate", REAL / "traces/openai-responses/openai-agents-python/v1_13_pending_tool_approval.json",
         "openai-responses"),
    Seed("otel-span", GOLDEN / "importers" / "otel-genai-chat-span" / "span.json", "otel"),
    Seed("otel-otlp", GOLDEN / "importers" / "otel-otlp-bad-part" / "traces.jsonl", "otel"),
    Seed("otel-genai", REAL / "traces/otel-genai/openinference-genai/otel_genai_client_span_tool_calls.json", "otel"),
    Seed("openinference", REAL / "traces/openinference/openinference_client_span_tool_calls.json", "otel"),
    Seed("langfuse", REAL / "traces/langfuse/openai-agents-2025-09-30.json", "langfuse"),
    Seed("inspect-json", REAL / "traces/inspect-ai/2025-05-12T20-27-36-04-00_browser.json", "inspect-ai"),
    Seed("inspect-eval", REAL / "traces/inspect-ai/log_message_deduplication.eval", "inspect-ai"),
    Seed("adk-evalset", REAL / "traces/adk-evalset/order_query.test.json", "adk"),
    Seed("adk-session", REAL / "traces/adk-evalset/sample.session.json", "adk"),
    Seed("vercel-ai", REAL / "traces/vercel-ai-sdk/react-agent-tool-calling.json", "vercel-ai"),
    Seed("vercel-ai-lines", GOLDEN / "importers" / "vercel-ai-model-messages" / "messages.jsonl", "vercel-ai"),
    Seed("mcp", GOLDEN / "importers" / "mcp-tools-call-log" / "session.jsonl", "mcp"),
    Seed("tau-bench", REAL / "tau-bench/historical_trajectories/gpt-4o-airline.json", "tau-bench"),
    Seed("tau-bench-tasks", REAL / "tau-bench/converted/airline_tasks_test.json", "tau-bench"),
    Seed("tau2-bench", REAL / "tau2-bench/results/gpt-4.1_telecom_no-user_gpt-4.1_1trials.json", "tau2-bench"),
    Seed("bfcl", REAL / "bfcl/BFCL_v4_parallel.json", "bfcl", copy=REAL / "bfcl"),
    Seed("bfcl-live", REAL / "bfcl/BFCL_v4_live_multiple.json", "bfcl", copy=REAL / "bfcl"),
    Seed("bfcl-multi-turn", REAL / "bfcl/BFCL_v4_multi_turn_base.json", "bfcl", copy=REAL / "bfcl"),
    Seed("tooltalk", REAL / "tooltalk/data/tooltalk/golden_conversation_2.json", "tooltalk"),
)
FORMATS = sorted({s.fmt for s in SEEDS} | {"seed"})


# --------------------------------------------------------------------------------------------------
# JSON written by hand, so that a mutation can put in what ``json.dumps`` will not: a token (NaN, 1e400,
# a lone surrogate escape) or a key twice.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is."""

    text: str


@dataclass
class Pairs:
    """An object that may hold a key twice."""

    items: list[tuple[str, Any]] = field(default_factory=list)


def dump(value: Any, indent: int | None = None, level: int = 0) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        value = Pairs(list(value.items()))
    if isinstance(value, Pairs):
        parts = [f"{json.dumps(k)}: {dump(v, indent, level + 1)}" for k, v in value.items]
        return _join("{", "}", parts, indent, level)
    if isinstance(value, list):
        return _join("[", "]", [dump(v, indent, level + 1) for v in value], indent, level)
    return json.dumps(value)


def _join(open_: str, close: str, parts: list[str], indent: int | None, level: int) -> str:
    if not parts:
        return open_ + close
    if indent is None:
        return open_ + ", ".join(parts) + close
    pad, inner = "\n" + " " * (indent * level), "\n" + " " * (indent * (level + 1))
    return open_ + inner + ("," + inner).join(parts) + pad + close


Path_ = tuple[str | int, ...]


def nodes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every (path, value) in ``value``, the root first."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nodes(v, (*path, i))


def replaced(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {k: (replaced(v, tuple(rest), new) if k == head else v) for k, v in value.items()}
    return [replaced(v, tuple(rest), new) if i == head else v for i, v in enumerate(value)]


def get(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value


# --------------------------------------------------------------------------------------------------
# A sample opened for mutation: its records (JSON Lines: one per line; a document: one), or a zip
# (inspect_ai's .eval) whose JSON members are the records.
# --------------------------------------------------------------------------------------------------


SENTINEL_TEXT = "fzsentinel7731"
SENTINEL_NUMBER = 987654.125
CARRIED = re.compile(r"[A-Za-z][A-Za-z0-9 _.-]{5,}")


@dataclass
class Mutant:
    data: bytes
    line: int | None = None
    """The line of a JSON Lines file the mutation broke: the line an error must name."""
    replaced_text: str | None = None
    """The stored text of the value the mutation replaced, when the unmutated import stored it."""
    new_value: Any = None
    """What replaced it."""
    fmt: str | None = None
    """A --from other than the seed's (the wrong-format mutation)."""
    must_fail: bool = False
    """Only exit 2 is right (an empty file, a NaN where a stored value was)."""
    token: str | None = None
    """The NaN / Infinity / 1e400 put in (as a value, or inside JSON text)."""
    probe: bytes | None = None
    """The same file with a sentinel where ``token`` is: if importing it stores the sentinel, the place is
    stored, and ``token`` there must be refused, or (inside JSON text kept as text) stored as written."""


_CLEAN: dict[str, bytes] = {}


def seed_bytes(seed: Seed) -> bytes:
    """The seed's bytes; a JSON Lines golden input to import loses the lines it keeps to be rejected (its
    golden test's)."""
    if seed.name not in _CLEAN:
        data = seed.path.read_bytes()
        if seed.lines and seed in SEEDS:
            bad = {item.line for item in importers.convert(seed.path, seed.fmt) if isinstance(item, InvalidRecord)}
            data = b"".join(line for n, line in enumerate(data.splitlines(keepends=True), 1) if n not in bad)
        _CLEAN[seed.name] = data
    return _CLEAN[seed.name]


class Sample:
    def __init__(self, seed: Seed) -> None:
        self.seed = seed
        self.data = seed_bytes(seed)
        self.zip = seed.path.suffix == ".eval"
        if self.zip:
            with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
                self.members = {n: archive.read(n) for n in archive.namelist()}
            self.json_members = [n for n in self.members if n.endswith(".json")]
        self.text = "" if self.zip else self.data.decode("utf-8")

    def records(self) -> list[tuple[int | None, Any]]:
        """(line, value) of each record; the line is None for a document."""
        if self.seed.lines:
            return [(n, json.loads(t)) for n, t in enumerate(self.text.splitlines(), 1) if t.strip()]
        return [(None, json.loads(self.text))]

    def with_record(self, line: int | None, value: Any) -> bytes:
        if self.seed.lines:
            lines = self.text.splitlines()
            lines[line - 1] = dump(value)  # type: ignore[index]
            return ("\n".join(lines) + "\n").encode("utf-8")
        return (dump(value, indent=1) + "\n").encode("utf-8")


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return out.getvalue()


def carried(value: Any, sample_text: str, stored: str) -> str | None:
    """The text of ``value`` if the unmutated import stored it, recognisably (distinctive and once in the input)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str) and _json_text((), value):  # JSON text stored as this very text
        escaped = json.dumps(value)[1:-1]
        return value if sample_text.count(escaped) == 1 and escaped in stored else None
    if isinstance(value, str):
        text = value
        if not CARRIED.fullmatch(text):
            return None
    elif isinstance(value, (int, float)):
        text = json.dumps(value)
        if len(text) < 4:
            return None
    else:
        return None
    return text if sample_text.count(text) == 1 and text in stored else None


# --------------------------------------------------------------------------------------------------
# Mutations: each takes the sample, a random source and what the unmutated import stored; returns a
# mutant, or None where it does not apply to this sample.
# --------------------------------------------------------------------------------------------------

Mutation = Callable[[Sample, random.Random, str], Mutant | None]


def _in_zip(sample: Sample, rng: random.Random, change: Callable[[Any], Any]) -> bytes:
    name = rng.choice(sample.json_members)
    members = dict(sample.members)
    members[name] = dump(change(json.loads(members[name]))).encode("utf-8")
    return zipped(members)


def _value_mutation(pick: Callable[[Path_, Any], bool], make: Callable[[random.Random, Any], Any], *,
                    check_carried: bool = True, nonfinite: bool = False,
                    probe_make: Callable[[random.Random, Any], Any] | None = None) -> Mutation:
    """Replace one node that ``pick`` accepts with ``make(rng, old)``."""

    def mutate(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
        if sample.zip:
            def change(value: Any) -> Any:
                choices = [(p, v) for p, v in nodes(value) if p and pick(p, v)]
                if not choices:
                    return value
                path, old = rng.choice(choices)
                return replaced(value, path, make(rng, old))
            return Mutant(_in_zip(sample, rng, change))
        choices = [(line, path, v) for line, record in sample.records() for path, v in nodes(record)
                   if path and pick(path, v)]
        if not choices:
            return None
        line, path, old = rng.choice(choices)
        record = dict(sample.records())[line]
        state = rng.getstate()
        new = make(rng, old)
        text = carried(old, sample.text, stored) if check_carried or nonfinite else None
        data = sample.with_record(line, replaced(record, path, new))
        if nonfinite:  # whether the value there is stored at all: the same place given a sentinel
            token = re.search(r"NaN|-?Infinity|-?1e400", dump(new))
            probe: Any = SENTINEL_NUMBER
            if probe_make is not None:  # the same draws, a sentinel instead of the token
                again = random.Random()
                again.setstate(state)
                probe = probe_make(again, old)
            return Mutant(data, line=line, token=token and token[0],
                          probe=sample.with_record(line, replaced(record, path, probe)))
        probe_value = SENTINEL_TEXT if isinstance(old, str) else SENTINEL_NUMBER  # the same type, recognisable
        return Mutant(data, line=line, replaced_text=text, new_value=new,
                      probe=sample.with_record(line, replaced(record, path, probe_value)) if text else None)

    return mutate


def _leaf(path: Path_, value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _number(path: Path_, value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _any(path: Path_, value: Any) -> bool:
    return True


def swap_type(rng: random.Random, old: Any) -> Any:
    others = [SENTINEL_TEXT, SENTINEL_NUMBER, None, [SENTINEL_TEXT], {"fz": SENTINEL_TEXT}, True]
    return rng.choice([o for o in others if type(o) is not type(old)])


def non_finite(rng: random.Random, old: Any) -> Any:
    return Raw(rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]))


def sentinel_number(rng: random.Random, old: Any) -> Any:
    rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])  # the draw non_finite makes
    return SENTINEL_NUMBER


def odd_number(rng: random.Random, old: Any) -> Any:
    return Raw(rng.choice(["-0.0", "1" + "0" * 40, "-" + "9" * 25, "1e-400", "9" * 5000]))


def deep(rng: random.Random, old: Any) -> Any:
    return Raw("[" * 250 + "1" + "]" * 250)


def lone_surrogate(rng: random.Random, old: Any) -> Any:
    return Raw('"a\\ud800b"')


def _json_text(path: Path_, value: Any) -> bool:
    """A string that holds JSON text (an OTel attribute, a Langfuse input, tool-call arguments)."""
    if not isinstance(value, str) or value[:1] not in ("[", "{"):
        return False
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _inside(make: Callable[[random.Random, Any], Any], pick: Callable[[Path_, Any], bool]
            ) -> Callable[[random.Random, Any], Any]:
    """``make`` applied to one node inside the JSON text ``old``, written back as text."""
    def inner(rng: random.Random, old: Any) -> Any:
        value = json.loads(old)
        choices = [(p, v) for p, v in nodes(value) if p and pick(p, v)]
        if not choices:  # an empty container: give it one member
            return dump([make(rng, None)] if isinstance(value, list) else Pairs([("fz", make(rng, None))]))
        path, leaf = rng.choice(choices)
        return dump(replaced(value, path, make(rng, leaf)))
    return inner


def drop_key(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    def change(value: Any) -> Any:
        choices = [(p, v) for p, v in nodes(value) if p and isinstance(p[-1], str)]
        if not choices:
            return value
        path, _ = rng.choice(choices)
        parent = get(value, path[:-1])
        return replaced(value, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})

    if sample.zip:
        return Mutant(_in_zip(sample, rng, change))
    line, record = rng.choice(sample.records())
    return Mutant(sample.with_record(line, change(record)), line=line)


def duplicate_key(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    """A key twice in one object, the second with another value (JSON parsers keep the last)."""
    def change(value: Any) -> Any:
        choices = [(p, v) for p, v in nodes(value) if isinstance(v, dict) and v]
        path, obj = rng.choice(choices)
        key = rng.choice(list(obj))
        return replaced(value, path, Pairs([*obj.items(), (key, swap_type(rng, obj[key]))]))

    if sample.zip:
        return Mutant(_in_zip(sample, rng, change))
    line, record = rng.choice(sample.records())
    return Mutant(sample.with_record(line, change(record)), line=line)


def bad_arguments(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    """Tool-call arguments that are a JSON string of invalid JSON (kept, never dropped)."""
    names = ("arguments", "args", "input", "kwargs", "functionCall", "tool_input")
    mutate = _value_mutation(lambda p, v: isinstance(p[-1], str) and p[-1] in names and isinstance(v, (str, dict)),
                             lambda rng, old: '{"city": "Par', check_carried=False)
    return mutate(sample, rng, stored)


def duplicate_ids(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    """Two ids made the same: a record id, a call id."""
    def is_id(p: Path_, v: Any) -> bool:
        return isinstance(p[-1], str) and (p[-1] in ("id", "call_id", "tool_call_id", "toolCallId", "tool_use_id",
                                                     "spanId", "turn", "case_id", "task_id")) and _leaf(p, v)
    records = [] if sample.zip else sample.records()
    ids = [(line, path, v) for line, r in records for path, v in nodes(r) if path and is_id(path, v)]
    if len(ids) < 2:
        return None
    (line, path, _), (_, _, other) = rng.sample(ids, 2)
    record = dict(records)[line]
    return Mutant(sample.with_record(line, replaced(record, path, other)), line=line)


def duplicate_record(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    """A JSON Lines record twice; re-importing the same content adds nothing, so this imports."""
    if not sample.seed.lines:
        return None
    lines = sample.text.splitlines()
    n = rng.randrange(len(lines))
    return Mutant(("\n".join([*lines[:n + 1], lines[n], *lines[n + 1:]]) + "\n").encode("utf-8"))


def truncate(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    if sample.seed.lines:
        lines = sample.text.splitlines()
        n = rng.randrange(len(lines))
        cut = rng.randrange(1, max(2, len(lines[n]) - 1))
        lines[n] = lines[n][:cut]
        return Mutant(("\n".join(lines) + "\n").encode("utf-8"), line=n + 1)
    return Mutant(sample.data[:rng.randrange(1, len(sample.data) - 1)])


def not_utf8(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    quotes = [m.start() for m in re.finditer(b'"[A-Za-z]', sample.data)] if not sample.zip else []
    if not quotes:
        return None
    at = rng.choice(quotes) + 1
    data = sample.data[:at] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80"]) + sample.data[at:]
    line = sample.data.count(b"\n", 0, at) + 1 if sample.seed.lines else None
    return Mutant(data, line=line)


def bom(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    return None if sample.zip else Mutant(b"\xef\xbb\xbf" + sample.data)


def crlf(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    return None if sample.zip else Mutant(sample.data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def empty(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    return Mutant(b"", must_fail=True)


def blank_lines(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    return Mutant(rng.choice([b"\n\n\n", b"  \n\t\n\r\n", b"\n \n"]), must_fail=True)


def reshape(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    """JSON Lines written as one JSON array, or a document's array written as lines."""
    if sample.zip:
        return None
    if sample.seed.lines:
        return Mutant(("[\n" + ",\n".join(t for t in sample.text.splitlines() if t.strip()) + "\n]\n").encode())
    value = json.loads(sample.text)
    if isinstance(value, list):
        return Mutant(("\n".join(dump(v) for v in value) + "\n").encode())
    return Mutant((dump(value) + "\n" + dump(value) + "\n").encode())  # one document, twice, as lines


def wrong_format(sample: Sample, rng: random.Random, stored: str) -> Mutant | None:
    return Mutant(sample.data, fmt=rng.choice([f for f in FORMATS if f != sample.seed.fmt]))


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "drop_key": drop_key,
    "duplicate_key": duplicate_key,
    "swap_type": _value_mutation(_leaf, swap_type),
    "swap_type_node": _value_mutation(_any, swap_type),
    "non_finite": _value_mutation(_number, non_finite, nonfinite=True),
    "non_finite_anywhere": _value_mutation(_leaf, non_finite, nonfinite=True),
    "non_finite_in_json_text": _value_mutation(_json_text, _inside(non_finite, _leaf), nonfinite=True,
                                               probe_make=_inside(sentinel_number, _leaf)),
    "swap_type_in_json_text": _value_mutation(_json_text, _inside(swap_type, _leaf), check_carried=False),
    "odd_number": _value_mutation(_number, odd_number, check_carried=False),
    "deep": _value_mutation(_any, deep, check_carried=False),
    "lone_surrogate": _value_mutation(_leaf, lone_surrogate, check_carried=False),
    "bad_arguments": bad_arguments,
    "duplicate_ids": duplicate_ids,
    "duplicate_record": duplicate_record,
    "not_utf8": not_utf8,
    "bom": bom,
    "crlf": crlf,
    "empty": empty,
    "blank_lines": blank_lines,
    "reshape": reshape,
    "wrong_format": wrong_format,
}


# --------------------------------------------------------------------------------------------------
# Running a command on a fresh database and reading what it holds
# --------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    exception: BaseException | None


def invoke(*args: str) -> Outcome:
    result = CliRunner().invoke(cli, list(args))
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Outcome(result.exit_code, result.stdout, result.stderr, exception)


def row_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def stored_text(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        conn.text_factory = lambda b: b.decode("utf-8", "replace")
        return "\n".join(conn.iterdump())


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("fuzz-template") / "template.db"
    outcome = invoke("init", "--db", str(db))
    assert outcome.code == 0, outcome.stderr
    checkpointed(db)
    return db


def checkpointed(db: Path) -> None:
    """Everything of ``db`` in its main file (its WAL checkpointed), so that copying that one file copies it."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert row_counts(db), f"{db} has no tables after the checkpoint"


def fresh_db(template: Path, where: Path) -> Path:
    db = where / "toolgold.db"
    shutil.copy(template, db)
    return db


def placed(seed: Seed, where: Path) -> Path:
    """The seed copied into ``where`` (with the folder it needs), ready to be overwritten by a mutant."""
    if seed.copy is not None:
        shutil.copytree(seed.copy, where / seed.copy.name)
        target = where / seed.copy.name / seed.path.relative_to(seed.copy)
        target.write_bytes(seed_bytes(seed))
        return target
    target = where / seed.path.name
    target.write_bytes(seed_bytes(seed))
    return target


_BASELINES: dict[str, str] = {}


def baseline(seed: Seed, template: Path, tmp: Path) -> str:
    """What importing the unmutated seed stores (it must import)."""
    if seed.name not in _BASELINES:
        where = tmp / "baseline"
        where.mkdir()
        db = fresh_db(template, where)
        path = placed(seed, where)
        outcome = invoke("import", "--db", str(db), "--from", seed.fmt, *seed.extra, str(path))
        assert outcome.code == 0 and outcome.exception is None, (seed.name, outcome.stderr)
        _BASELINES[seed.name] = stored_text(db)
    return _BASELINES[seed.name]


def check_rule(outcome: Outcome, path: Path, *, allowed: tuple[int, ...] = (0, 2)) -> None:
    """What every command owes bad input: a known exit code, no traceback, one ``FILE...`` line on exit 2."""
    assert outcome.exception is None, f"crashed: {outcome.exception!r}"
    assert outcome.code in allowed, (outcome.code, outcome.stderr)
    assert "Traceback" not in outcome.stderr + outcome.stdout
    if outcome.code == 2:
        lines = outcome.stderr.strip().splitlines()
        assert len(lines) == 1, outcome.stderr
        assert lines[0].startswith(f"error: {path}"), lines[0]


def assert_names_line(stderr: str, path: Path, line: int) -> None:
    """The error names a line of ``path``: the broken line, or a later one it left without its partner (a
    response whose request's id was dropped). In the formats where several lines make one conversation (a
    trace's spans, a thread of logged calls, a JSON-RPC session) too: an error found in one record names that
    record's line, not the line its conversation starts on (tests/importers/test_grouped_lines.py)."""
    named = re.match(rf"error: {re.escape(str(path))}:(\d+): ", stderr)
    assert named and int(named[1]) >= line, (line, stderr)


CASES = [(seed, name) for seed in SEEDS for name in MUTATIONS]


@pytest.mark.parametrize(("seed", "mutation"), CASES, ids=[f"{s.name}-{m}" for s, m in CASES])
def test_import_survives_mutation(seed: Seed, mutation: str, template: Path, tmp_path: Path) -> None:
    stored = baseline(seed, template, tmp_path)
    rng = random.Random(f"{seed.name}/{mutation}{ROUND}")
    mutant = MUTATIONS[mutation](Sample(seed), rng, stored)
    if mutant is None:
        pytest.skip(f"{mutation} does not apply to {seed.name}")
    where = tmp_path / "case"
    where.mkdir()
    path = placed(seed, where)
    path.write_bytes(mutant.data)
    db = fresh_db(template, where)
    before, files_before = row_counts(db), sorted(p.name for p in where.iterdir())
    outcome = invoke("import", "--db", str(db), "--from", mutant.fmt or seed.fmt, *seed.extra, str(path))
    check_rule(outcome, path)
    if outcome.code == 2:
        assert row_counts(db) == before, "exit 2, but the database changed"
        assert sorted(p.name for p in where.iterdir()) == files_before, "exit 2 left a file behind"
        if mutant.line is not None and mutant.fmt is None:
            assert_names_line(outcome.stderr, path, mutant.line)
        return
    assert not mutant.must_fail, f"exit 0 for {mutation}: {outcome.stdout}"
    if mutant.token is not None and mutant.probe is not None and mutant.token not in stored_text(db):
        assert not stores_probe(seed, mutant.probe, template, tmp_path), (
            f"{mutant.token} was accepted where a value is stored, and is not stored as written")
    if mutant.replaced_text is not None and isinstance(mutant.new_value, (str, float, list, dict)) \
            and not isinstance(mutant.new_value, Raw):
        after = stored_text(db)
        if SENTINEL_TEXT not in after and json.dumps(SENTINEL_NUMBER) not in after:
            assert mutant.probe is None or not stores_probe(seed, mutant.probe, template, tmp_path), (
                f"{mutant.replaced_text!r} was stored; {mutant.new_value!r} in its place was dropped")


def stores_probe(seed: Seed, probe: bytes, template: Path, tmp_path: Path) -> bool:
    """Whether importing ``probe`` (the sample with a sentinel where the mutation put its value) stores the
    sentinel: whether that place is stored at all, and not only a look-alike of its value elsewhere."""
    probe_dir = tmp_path / "probe"
    probe_dir.mkdir()
    probe_path = placed(seed, probe_dir)
    probe_path.write_bytes(probe)
    probe_db = fresh_db(template, probe_dir)
    invoke("import", "--db", str(probe_db), "--from", seed.fmt, *seed.extra, str(probe_path))
    stored = stored_text(probe_db)
    return SENTINEL_TEXT in stored or json.dumps(SENTINEL_NUMBER) in stored


# --------------------------------------------------------------------------------------------------
# The other commands that read files: score (gold and runs), lint, sample, synthesize --gold, drift --tools,
# import --tools
# --------------------------------------------------------------------------------------------------

GOLD = Seed("gold", GOLDEN / "valid" / "gold-v1.jsonl", "toolgold")
RUNS = Seed("runs", GOLDEN / "valid" / "run-v1.jsonl", "toolgold")
TOOLS = Seed("tools", REAL / "tau-bench/converted/airline_tools.json", "")
TASKS = REAL / "tau-bench/converted/airline_tasks_test.json"
TRAJECTORIES = REAL / "tau-bench/historical_trajectories/gpt-4o-airline.json"


@dataclass(frozen=True)
class Command:
    name: str
    mutated: Seed
    found: bool = False
    """Whether exit 1 means "found something" here (lint's problems, drift's cases that no longer fit)."""
    output: bool = False
    """Whether the command writes -o OUT (which must not exist after exit 2)."""
    detects: bool = False
    """Whether the command detects the format (no --from): a line so broken that no importer claims the file
    is ``FILE:N: cannot tell which format this is: why; pass --from``, N the first line that is not blank."""
    empty_ok: bool = False
    """An empty file is not bad input here: a RUNS file without runs leaves the cases unscored, a gate
    (exit 1; exit 0 with --allow-unscored), as tests/reliability/test_fault_matrix.py's NOT_BAD says."""

    def args(self, path: Path, where: Path, db: Path) -> list[str]:
        out = str(where / "out.jsonl")
        gold, runs = (path, where / "runs.jsonl") if self.mutated is GOLD else (where / "gold.jsonl", path)
        return {
            # --allow-unscored: a case left without its run (its case_id dropped) is a gate, exit 1, not input
            "score-gold": ["score", str(gold), str(runs), "--allow-unscored"],
            "score-runs": ["score", str(gold), str(runs), "--allow-unscored"],
            "lint": ["lint", str(path)],
            "sample": ["sample", str(path), "-n", "2", "-o", out, "--db", str(db)],
            "sample-openai": ["sample", str(path), "-n", "2", "-o", out, "--db", str(db)],
            "synthesize": ["synthesize", "--gold", str(path), "-o", out, "--db", str(db)],
            "drift": ["drift", "--tools", str(path), "--db", str(db)],
            "import-tools": ["import", "--tools", str(path), str(TRAJECTORIES), "--db", str(db)],
        }[self.name]


COMMANDS = (
    Command("score-gold", GOLD),
    Command("score-runs", RUNS, empty_ok=True),
    Command("lint", GOLD, found=True),
    Command("sample", Seed("transcripts", GOLDEN / "valid" / "transcript-v1.jsonl", "toolgold"), output=True,
            detects=True),
    Command("sample-openai", SEEDS[2], output=True, detects=True),
    Command("synthesize", GOLD, output=True),
    Command("drift", TOOLS, found=True),
    Command("import-tools", TOOLS),
)
DETECTION_FAILED = "cannot tell which format this is"
COMMAND_MUTATIONS = [m for m in MUTATIONS if m not in ("wrong_format", "duplicate_record")]
COMMAND_CASES = [(c, m) for c in COMMANDS for m in COMMAND_MUTATIONS]


@pytest.fixture(scope="module")
def drift_template(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding tau-bench's airline gold cases, for drift to check against a tools file."""
    db = tmp_path_factory.mktemp("fuzz-drift") / "drift.db"
    shutil.copy(template, db)
    outcome = invoke("import", "--db", str(db), str(TASKS))
    assert outcome.code == 0, outcome.stderr
    checkpointed(db)
    return db


@pytest.mark.parametrize(("command", "mutation"), COMMAND_CASES, ids=[f"{c.name}-{m}" for c, m in COMMAND_CASES])
def test_command_survives_mutation(command: Command, mutation: str, template: Path, drift_template: Path,
                                   tmp_path: Path) -> None:
    rng = random.Random(f"{command.name}/{mutation}{ROUND}")
    mutant = MUTATIONS[mutation](Sample(command.mutated), rng, "")
    if mutant is None:
        pytest.skip(f"{mutation} does not apply to {command.mutated.name}")
    where = tmp_path / "case"
    where.mkdir()
    for seed, name in ((GOLD, "gold.jsonl"), (RUNS, "runs.jsonl")):
        shutil.copy(seed.path, where / name)
    path = where / f"mutated{command.mutated.path.suffix}"
    path.write_bytes(mutant.data)
    db = where / "toolgold.db"
    shutil.copy(drift_template if command.name == "drift" else template, db)
    before = row_counts(db)
    outcome = invoke(*command.args(path, where, db))
    check_rule(outcome, path, allowed=(0, 1, 2) if command.found else (0, 2))
    if outcome.code == 2:
        assert row_counts(db) == before, "exit 2, but the database changed"
        assert not (where / "out.jsonl").exists(), "exit 2, but an output file was written"
        if mutant.line is not None and command.detects and DETECTION_FAILED in outcome.stderr:
            # named at the line the formats are told by (the first not blank), not always the mutated one
            assert re.search(rf"{re.escape(str(path))}:\d+: {DETECTION_FAILED}: ", outcome.stderr), outcome.stderr
        elif mutant.line is not None:
            assert_names_line(outcome.stderr, path, mutant.line)
    else:
        assert not mutant.must_fail or command.empty_ok, f"exit {outcome.code} for {mutation}"
