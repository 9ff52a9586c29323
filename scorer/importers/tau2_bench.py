"""tau2-bench: simulation results files (``results/*.json``) and task files (``domains/<domain>/tasks.json``).

A results file is one object ``{"timestamp", "info", "tasks", "simulations"}``. Each simulation becomes a
transcript:

- id ``tau2-bench/<domain>/<agent model>/task-<task_id>/trial-<trial>``; runs where the agent works
  alone (``dummy_user``, tau2's "no-user" mode) get ``<domain>/solo/...``.
- The first message is the domain policy the agent was given (``info.environment_info.policy``, role
  ``system``); a solo agent also gets its task's ``ticket``, appended in ``<ticket>`` tags, since that is
  all it knows about the problem.
- Messages: ``tool_calls`` ``{id, name, arguments: {...}}`` get OpenAI's shape (arguments as a JSON
  string); tool results carry ``id``, which becomes ``tool_call_id``. Calls the *user simulator* makes
  on its own device (telecom's ``toggle_airplane_mode`` ...) and their results are left out: the agent
  never sees them, only what the user says afterwards. A user message left with no text is dropped.
  Bookkeeping fields (``turn_idx``, ``cost``, ``usage``, ``raw_data``, ``reasoning``) are not chat.
- metadata: ``source: tau2-bench``, domain, model, task_id, trial, reward, termination_reason,
  ``simulated_at`` (the wall-clock time of the run) and ``timestamp``, the in-world "now" the policy
  states, so relative dates resolve as the agent saw them.
- Tools come from ``ImportOptions.tools``; the files carry no tool schemas.

Each task in ``tasks`` becomes one trajectory gold case, id ``tau2-bench/<domain>/task-<id>`` (``solo``
as above), from ``evaluation_criteria.actions``: the actions the agent requests (``requestor:
assistant``); in solo runs the agent also performs the user's actions, so all of them. Arguments
outside an action's ``compare_args`` are matched with ``any``. See ``tau_gold`` for the order mode.
A task file (a JSON array of tasks) gives the same cases.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import (
    dumps_arguments,
    guard,
    need_dict,
    need_key,
    need_list,
    need_str,
    result_text,
    unique_call_ids,
)
from scorer.importers.jsondoc import JsonDocument, array_items, member_items, starts_with
from scorer.importers.tau_gold import action_call, policy_time, trajectory_case
from scorer.model import Call, FunctionCall, GoldCase, Message, ToolCallRef, Transcript

NAME = "tau2-bench"
DESCRIPTION = "tau2-bench simulation results (JSON object with simulations) or task files"
SOURCE = "tau2-bench"


def sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body.startswith(b"{"):
        return b'"simulations"' in body or b'"environment_info"' in body
    return body.startswith(b"[") and b'"evaluation_criteria"' in body and b'"user_scenario"' in body


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    try:
        tasks: Iterator[tuple[int, Any]]
        if starts_with(path, b"["):  # a block at a time: memory for a task, not the file
            tasks = array_items(path)
        else:
            streamed = (member_items(path, "simulations", ("info", "tasks"), listed=("tasks",))
                        if starts_with(path, b"{") else None)
            if streamed is not None:  # results: info and tasks first, then the simulations a block at a time
                head, simulations = streamed
                yield from _results(str(path), head["info"], head["tasks"], simulations, options)
                return
            doc = JsonDocument.read(path)
            root = doc.root()
            if doc.kind(root) == "object":
                members = {key: (pos, value) for key, pos, value in doc.members(root)}
                for key in ("info", "tasks", "simulations"):
                    if key not in members:
                        raise InvalidRecord(f"no {key!r}: expected a tau2-bench results file {{info, tasks, "
                                            "simulations}", line=1)
                yield from _results(str(path), members["info"][1],
                                    [(line, task) for line, _, task in doc.items(members["tasks"][0])],
                                    ((line, sim) for line, _, sim in doc.items(members["simulations"][0])), options)
                return
            if doc.kind(root) != "array":
                raise InvalidRecord("expected a tau2-bench results object or a JSON array of tasks", line=1)
            tasks = ((line, value) for line, _, value in doc.items(root))
        domain = path.parent.name
        for line, value in tasks:
            yield from guard(str(path), line, _case, value, domain, solo=False, options=options)
    except InvalidRecord as err:
        yield err.located(str(path), None)


class Results:
    """What a results file's ``info`` and ``tasks`` say: the task cases (``cases``, what the file yields before its
    simulations) and how each simulation converts (``convert(line, value)``, alone: an import may convert them
    in several processes)."""

    def __init__(self, source: str, info_value: Any, task_items: list[tuple[int, Any]], options: ImportOptions
                 ) -> None:
        info = need_dict(info_value, "info")
        environment = need_dict(info.get("environment_info"), "info.environment_info")
        self.source = source
        self.domain = need_str(environment.get("domain_name"), "info.environment_info.domain_name")
        self.policy = environment.get("policy") if isinstance(environment.get("policy"), str) else None
        self.solo = need_dict(info.get("user_info") or {}, "info.user_info").get("implementation") == "dummy_user"
        agent = need_dict(info.get("agent_info") or {}, "info.agent_info")
        self.model = str(agent.get("llm") or "unknown")
        self.options = options
        self.task_items = task_items
        self.tasks = {str(task["id"]): task for _, task in task_items if isinstance(task, dict) and "id" in task}

    def cases(self) -> Iterator[Item]:
        for line, task in self.task_items:
            yield from guard(self.source, line, _case, task, self.domain, solo=self.solo, options=self.options)

    def convert(self, line: int, simulation: Any) -> list[Item]:
        return guard(self.source, line, _transcript, simulation, domain=self.domain, model=self.model,
                     solo=self.solo, policy=self.policy, tasks=self.tasks, options=self.options)


def results_head(path: Path, options: ImportOptions) -> Results | None:
    """A results file's ``Results``, its info and tasks read a block at a time (``member_items``), or None when
    they do not come first as tau2-bench writes them or say no domain: ``convert`` reads the file then."""
    streamed = member_items(path, "simulations", ("info", "tasks"), listed=("tasks",))
    if streamed is None:
        return None
    try:
        return Results(str(path), streamed[0]["info"], streamed[0]["tasks"], options)
    except InvalidRecord:
        return None


def _results(source: str, info_value: Any, task_items: list[tuple[int, Any]],
             simulations: Iterable[tuple[int, Any]], options: ImportOptions) -> Iterator[Item]:
    results = Results(source, info_value, task_items, options)
    yield from results.cases()
    for line, simulation in simulations:
        yield from results.convert(line, simulation)


def _prefix(domain: str, solo: bool) -> str:
    return f"tau2-bench/{domain}/solo" if solo else f"tau2-bench/{domain}"


def _transcript(value: Any, *, domain: str, model: str, solo: bool, policy: str | None,
                tasks: dict[str, Any], options: ImportOptions) -> Transcript:
    sim = need_dict(value, "simulation")
    task_id = str(need_key(sim, "task_id", "simulation"))
    trial = sim.get("trial", 0)
    system = policy or ""
    ticket = (tasks.get(task_id) or {}).get("ticket") if solo else None
    if isinstance(ticket, str) and ticket:
        system = f"{system}\n\n<ticket>\n{ticket}\n</ticket>"
    messages = ([Message(role="system", content=system)] if system else []) + _messages(
        need_list(need_key(sim, "messages", "simulation"), "messages"))
    reward_info: dict[str, Any] = sim["reward_info"] if isinstance(sim.get("reward_info"), dict) else {}
    metadata: dict[str, Any] = {
        "source": SOURCE, "domain": domain, "model": model, "task_id": task_id, "trial": trial,
        "reward": reward_info.get("reward"), "termination_reason": sim.get("termination_reason"),
        "simulated_at": sim.get("start_time") or sim.get("timestamp"),
    }
    if solo:
        metadata["mode"] = "solo"
    now = policy_time(policy)
    if now:
        metadata["timestamp"] = now
    return Transcript(id=f"{_prefix(domain, solo)}/{model}/task-{task_id}/trial-{trial}",
                      messages=unique_call_ids(messages), tools=options.tools or (), metadata=metadata)


def _messages(raw: list[Any]) -> list[Message]:
    out: list[Message] = []
    for index, entry in enumerate(raw):
        where = f"messages[{index}]"
        entry = need_dict(entry, where)
        role = entry.get("role")
        content = entry.get("content")
        if content is not None and not isinstance(content, str):
            content = result_text(content)
        if role == "assistant":
            calls = []
            for k, call in enumerate(need_list(entry.get("tool_calls") or [], f"{where}.tool_calls")):
                call = need_dict(call, f"{where}.tool_calls[{k}]")
                calls.append(ToolCallRef(
                    id=need_str(call.get("id"), f"{where}.tool_calls[{k}].id"),
                    function=FunctionCall(name=need_str(call.get("name"), f"{where}.tool_calls[{k}].name"),
                                          arguments=dumps_arguments(call.get("arguments") or {}))))
            out.append(Message(role="assistant", content=content, tool_calls=tuple(calls)))
        elif role == "user":
            if content:  # the user simulator's own device calls are not part of the agent's conversation
                out.append(Message(role="user", content=content))
        elif role == "tool":
            if entry.get("requestor", "assistant") != "assistant":
                continue
            out.append(Message(role="tool", content=content or "",
                               tool_call_id=need_str(entry.get("id"), f"{where}.id")))
        elif role == "system":
            out.append(Message(role="system", content=content))
        else:
            raise InvalidRecord(f"{where}.role should be assistant, user, tool or system, got {role!r}")
    return out


def _case(value: Any, domain: str, *, solo: bool, options: ImportOptions) -> GoldCase:
    task = need_dict(value, "task")
    task_id = str(need_key(task, "id", "task"))
    criteria = need_dict(task.get("evaluation_criteria") or {}, "evaluation_criteria")
    calls: list[Call] = []
    uncompared: dict[str, frozenset[str]] = {}
    for i, raw in enumerate(need_list(criteria.get("actions") or [], "evaluation_criteria.actions")):
        where = f"evaluation_criteria.actions[{i}]"
        action = need_dict(raw, where)
        if not solo and action.get("requestor", "assistant") != "assistant":
            continue
        call = action_call(action, where, args_key="arguments")
        calls.append(call)
        compared = action.get("compare_args")
        if compared is not None:
            skipped = frozenset(call.arguments) - frozenset(need_list(compared, f"{where}.compare_args"))
            if skipped:
                uncompared[call.name] = uncompared.get(call.name, frozenset()) | skipped
    scenario: dict[str, Any] = task["user_scenario"] if isinstance(task.get("user_scenario"), dict) else {}
    instruction = _instruction(scenario.get("instructions"))
    basis = criteria.get("reward_basis")
    tags = [f"reward:{b.lower()}" for b in basis if isinstance(b, str)] if isinstance(basis, list) else []
    return trajectory_case(
        case_id=f"{_prefix(domain, solo)}/task-{task_id}", benchmark=SOURCE, domain=domain, calls=calls,
        tools=options.tools or (), instruction=instruction, split=options.split, uncompared=uncompared,
        extra_tags=(["solo"] if solo else []) + tags)


def _instruction(raw: Any) -> str | None:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        return None
    parts = [str(raw[key]).strip() for key in ("reason_for_call", "known_info", "task_instructions")
             if isinstance(raw.get(key), str) and raw[key].strip()]
    return "\n".join(parts) or None
