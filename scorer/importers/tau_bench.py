"""tau-bench: historical trajectories (``historical_trajectories/<model>-<domain>.json``) and task files
(``converted/<domain>_tasks_<split>.json``).

A trajectories file is a JSON array of runs ``{"task_id", "trial", "reward", "info": {"task": {"user_id",
"actions", "instruction", "outputs"}}, "traj": [OpenAI chat messages]}``. Each run becomes a transcript:

- id ``tau-bench/<domain>/<model>/task-<task_id>/trial-<trial>``. The model is part of the id because
  tau-bench publishes runs of several models on the same tasks and trials.
- metadata: ``source: tau-bench``, domain, model, task_id, trial, reward, the user's instruction, and
  ``timestamp``: the in-world "now" the policy states (2024-05-15T15:00:00-05:00 for airline), so
  relative dates in the conversation resolve as the agent saw them.
- The domain and model come from the file name (``gpt-4o-airline.json``); the tools from
  ``ImportOptions.tools`` or else ``../converted/<domain>_tools.json`` beside the data (none if absent).
- Messages as in the OpenAI importer; the runs reuse tool-call ids, which are renamed ``<id>~2``...

Each distinct task also becomes one trajectory gold case, id ``tau-bench/<domain>/task-<task_id>``,
whose expected calls are the task's gold ``actions`` (see ``tau_gold`` for the order mode and the other
choices). A task file (a JSON array of tasks, the task id being the position) gives the same cases;
split ``test`` keeps the plain ids the trajectories use, other splits get ``.../<split>/task-<n>``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from scorer.errors import InvalidRecord
from scorer.formats import record_json_text
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import guard, need_dict, need_key, need_list, openai_messages, tool_specs
from scorer.importers.jsondoc import JsonDocument, array_items, starts_with
from scorer.importers.tau_gold import action_call, policy_time, string_list, trajectory_case
from scorer.model import GoldCase, ToolSpec, Transcript

NAME = "tau-bench"
DESCRIPTION = "tau-bench historical trajectories or task files (JSON array)"
SOURCE = "tau-bench"
DOMAINS = ("airline", "retail")

_TASK_FILE = re.compile(r"^(?P<domain>[a-z]+)_tasks_(?P<split>[a-z]+)")


def sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body.startswith(b"["):
        return False
    trajectories = b'"traj"' in body and b'"task_id"' in body
    tasks = b'"actions"' in body and b'"instruction"' in body and b'"evaluation_criteria"' not in body
    return trajectories or tasks


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    try:
        if not starts_with(path, b"["):  # said as the whole document says it (not UTF-8, empty, not an array)
            doc = JsonDocument.read(path)
            if doc.kind(doc.root()) != "array":
                raise InvalidRecord("expected a JSON array of tau-bench trajectories or tasks", source=str(path),
                                    line=1)
        items = array_items(path)  # a block at a time: memory for an item, not the file
        first = next(items, None)
        if first is None:
            return
        is_task_file = is_task(first[1])
        entries = _chain(first, items)
        if is_task_file:
            yield from _task_file(path, entries, options)
        else:
            yield from _trajectories(path, entries, options)
    except InvalidRecord as err:
        yield err.located(str(path), None)


def is_task(first: Any) -> bool:
    """Whether a file whose first item is ``first`` is a task file (else trajectories)."""
    return isinstance(first, dict) and "traj" not in first and "actions" in first


def _chain(first: tuple[int, Any], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield first
    yield from rest


def domain_and_model(path: Path) -> tuple[str, str]:
    """``gpt-4o-airline.json`` -> (``airline``, ``gpt-4o``); an unknown domain is ``unknown``."""
    stem = path.stem
    for domain in DOMAINS:
        if domain in stem.lower():
            model = re.sub(rf"[-_.]?{domain}[-_.]?", "-", stem, flags=re.IGNORECASE).strip("-") or "unknown"
            return domain, model
    return "unknown", stem


def find_tools(path: Path, domain: str, options: ImportOptions) -> tuple[ToolSpec, ...]:
    """``ImportOptions.tools``, else ``<domain>_tools.json`` in ``../converted/`` or beside the file."""
    if options.tools is not None:
        return options.tools
    for candidate in (path.parent.parent / "converted" / f"{domain}_tools.json",
                      path.parent / f"{domain}_tools.json"):
        if candidate.is_file():
            doc = JsonDocument.read(candidate)
            try:
                return tool_specs(doc.decode(doc.root())[0], candidate.name)
            except InvalidRecord as err:
                raise err.located(str(candidate), None) from None
    return ()


def trajectory_converter(path: Path, options: ImportOptions) -> Callable[[int, Any], list[Item]]:
    """What one trajectory of the trajectories file ``path`` becomes: ``convert(line, value)`` gives its transcript
    and its task's gold case (or the one error at its line). Each trajectory alone: an import may convert them in
    several processes; ``FirstCases`` then keeps each task's case once, where they come back in order."""
    source = str(path)
    domain, model = domain_and_model(path)
    tools = find_tools(path, domain, options)
    cases: dict[bytes, GoldCase] = {}

    def convert(line: int, value: Any) -> list[Item]:
        return guard(source, line, _trajectory_records, value, domain, model, tools, options, cases)

    return convert


CASES_KEPT = 512
"""Task cases a converter keeps to give again (``_trajectory_records``): tau-bench writes every task's first run, then
every task's second..., and a domain has 50 (airline) or 115 (retail) tasks. A case with its objects is ~7 KB."""


class FirstCases:
    """Every run of a task brings the task's gold case again, tools and all: the first is kept, a later one with
    the same content is dropped, one with other content is refused at its line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.cases: dict[str, tuple[int, str]] = {}  # case id -> (line, content hash) of its first trajectory

    def take(self, case_id: str, line: int, digest: str) -> bool | InvalidRecord:
        """Whether to keep the case at ``line`` (content hash ``digest``: the sha256 of the text the store writes,
        ``record_json_text``), or why it is refused."""
        first = self.cases.setdefault(case_id, (line, digest))
        if first[1] != digest:
            return InvalidRecord(f"task {case_id!r} has other gold actions than at line {first[0]}",
                                 source=self.source, line=line)
        return first[0] == line


def _trajectories(path: Path, entries: Iterator[tuple[int, Any]], options: ImportOptions) -> Iterator[Item]:
    convert = trajectory_converter(path, options)
    cases = FirstCases(str(path))
    hashed: dict[int, tuple[GoldCase, str]] = {}  # by the case object (kept alive here): an equal task's is the same
    for line, value in entries:
        for item in convert(line, value):
            if isinstance(item, Converted) and isinstance(item.record, GoldCase):
                known = hashed.get(id(item.record))
                if known is None:
                    if len(hashed) >= CASES_KEPT:
                        hashed.clear()
                    # Hashed as the store will write it (``record_json_text``: the tools' text kept from the run
                    # before), ~10x the reference encoder.
                    known = hashed[id(item.record)] = (
                        item.record, hashlib.sha256(record_json_text(item.record)[0].encode("utf-8")).hexdigest())
                digest = known[1]
                taken = cases.take(item.record.id, line, digest)
                if taken is True:
                    yield item
                elif taken is not False:
                    yield taken
            else:
                yield item


def _trajectory_records(value: Any, domain: str, model: str, tools: tuple[ToolSpec, ...],
                        options: ImportOptions, cases: dict[bytes, GoldCase] | None = None,
                        ) -> list[Transcript | GoldCase]:
    """A run's transcript and its task's case; the very case object made for an equal task before (``cases``,
    by the task's JSON: every run of a task brings it again), so what is learnt of it once holds for the runs
    after (``FirstCases`` drops them; an import's worker sends back only their content hash)."""
    run = need_dict(value, "trajectory")
    task_id = need_key(run, "task_id", "trajectory")
    trial = run.get("trial", 0)
    task = need_dict(need_dict(need_key(run, "info", "trajectory"), "info").get("task"), "info.task")
    messages = openai_messages(need_key(run, "traj", "trajectory"), "traj")
    metadata: dict[str, Any] = {"source": SOURCE, "domain": domain, "model": model, "task_id": task_id,
                                "trial": trial, "reward": run.get("reward")}
    if task.get("instruction"):
        metadata["instruction"] = task["instruction"]
    system = next((m.content for m in messages if m.role == "system"), None)
    now = policy_time(system)
    if now:
        metadata["timestamp"] = now
    transcript = Transcript(id=f"tau-bench/{domain}/{model}/task-{task_id}/trial-{trial}", messages=messages,
                            tools=tools, metadata=metadata)
    if cases is None:
        return [transcript, _case(task, domain, task_id, tools, options, split_name="test")]
    try:
        key = orjson.dumps([task_id, task])
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits: not kept
        return [transcript, _case(task, domain, task_id, tools, options, split_name="test")]
    case = cases.get(key)
    if case is None:
        if len(cases) >= CASES_KEPT:
            cases.clear()
        case = cases[key] = _case(task, domain, task_id, tools, options, split_name="test")
    return [transcript, case]


def _task_file(path: Path, entries: Iterator[tuple[int, Any]], options: ImportOptions) -> Iterator[Item]:
    match = _TASK_FILE.match(path.stem)
    domain = match.group("domain") if match else domain_and_model(path)[0]
    split_name = match.group("split") if match else "test"
    tools = find_tools(path, domain, options)
    for index, (line, value) in enumerate(entries):
        yield from guard(str(path), line, _case, value, domain, index, tools, options, split_name=split_name)


def _case(value: Any, domain: str, task_id: Any, tools: tuple[ToolSpec, ...], options: ImportOptions,
          *, split_name: str) -> GoldCase:
    task = need_dict(value, "task")
    actions = need_list(task.get("actions", []), "actions")
    calls = [action_call(a, f"actions[{i}]", args_key="kwargs") for i, a in enumerate(actions)]
    prefix = f"tau-bench/{domain}" if split_name == "test" else f"tau-bench/{domain}/{split_name}"
    instruction = task.get("instruction")
    return trajectory_case(
        case_id=f"{prefix}/task-{task_id}", benchmark=SOURCE, domain=domain, calls=calls, tools=tools,
        instruction=instruction if isinstance(instruction, str) else None, split=options.split,
        outputs=string_list(task.get("outputs"), "outputs"))
