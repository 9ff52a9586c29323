"""Gold hygiene: gold cases that are probably wrong, found without running an agent.

- ``conflicting_duplicate`` / ``conflicting_near_duplicate``: two cases whose contexts are the same (or
  nearly: word 3-gram Jaccard similarity at or above ``NEAR_DUPLICATE``) but whose expected answers differ,
  and neither accepts the other's answer as an alternative;
- ``unknown_tool``: an expected call to a tool the case does not offer;
- ``schema_violation``: an expected call, or a value its rule accepts, that fails its own tool's schema (a
  wrong type, an enum it breaks, a parameter the tool does not have). An agent matching such a value is not
  failed for the schema (the annotator vouched for it), so the gold should be fixed;
- ``missing_required_value``: a required argument the expected call leaves out, sets to null or leaves
  empty;
- ``ungrounded_value``: in a case labeled *call*, an identifier-like expected value (an id, an email, a
  phone number, …) that appears nowhere in the context: the gold itself may be made up.

Cases with one context are one group, and a group whose cases conflict is one problem naming them all (k
cases with one context are compared as the few kinds of answers they expect, not as k² pairs). Near
duplicates are found between contexts with a bottom-k sketch: each context keeps its ``SKETCH``
lowest-hashing 3-grams (ignoring 3-grams most contexts share), contexts that share one are compared exactly,
and a pair of near contexts whose cases conflict across them is one problem. Pure: cases in, problems out;
the cases are read once and not kept.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any, Final

from scorer import canonical
from scorer.grounding import Context, is_identifier_key, is_phone_key, scalar_texts
from scorer.hygiene_problems import HygieneProblem, ProblemCode
from scorer.matchers import show
from scorer.model import Answer, ArgRule, Call, GoldCase
from scorer.schemas import ArgumentSchema, compiled

NEAR_DUPLICATE: Final = 0.8
SKETCH: Final = 8
COMMON_SHARE: Final = 0.05
"""A 3-gram in more than this share of contexts (and more than 20) says nothing about duplication."""


# -- one case at a time ------------------------------------------------------------------------------------


_EXACT = ArgRule()


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def case_problems(case: GoldCase) -> list[HygieneProblem]:
    """What is suspect in one case on its own (schema, required values, grounding)."""
    found: list[HygieneProblem] = []
    offered = {t.name: t for t in case.tools}
    context: Context | None = None
    for call in case.expected.calls:
        spec = offered.get(call.name)
        if spec is None:
            if offered:
                found.append(HygieneProblem(code="unknown_tool", case_id=case.id, tool=call.name,
                                            message=f"expected call to `{call.name}`, which the case does not offer"))
            continue
        schema = compiled(spec.parameters)
        rules = {**case.arg_rules.get(call.name, {}), **call.arg_rules}
        found += _argument_violations(case, call, schema)
        for key in case.required_for(call.name):
            if rules.get(key, _EXACT).optional:
                continue
            if key not in call.arguments:
                found.append(HygieneProblem(code="missing_required_value", case_id=case.id, tool=call.name, arg=key,
                                            message=f"required `{call.name}.{key}` has no value"))
            elif _empty(call.arguments[key]):
                found.append(HygieneProblem(code="missing_required_value", case_id=case.id, tool=call.name, arg=key,
                                            message=f"required `{call.name}.{key}` is empty"))
        found += _accepted_violations(case, call, schema, rules)
        if case.expected.behavior == "call":
            enums = {k: v.get("enum", ()) for k, v in spec.properties.items() if isinstance(v, dict)}
            for key, value in call.arguments.items():
                rule = rules.get(key, _EXACT)
                if rule.grounded is False or rule.match in ("from_call", "any", "semantic", "regex"):
                    continue
                if not (rule.grounded or is_identifier_key(key)):
                    continue
                if context is None:
                    context = Context(case.messages)
                for text in scalar_texts(value):
                    if text in enums.get(key, ()) or context.contains(text, phone=is_phone_key(key)):
                        continue
                    found.append(HygieneProblem(
                        code="ungrounded_value", case_id=case.id, tool=call.name, arg=key,
                        message=f"expected `{call.name}.{key}` = {canonical.dumps(text)} appears nowhere in the "
                                "context"))
    return found


def schema_violations(case: GoldCase) -> list[HygieneProblem]:
    """The ``schema_violation`` problems of ``case_problems(case)``, in its order, without its other checks
    (the grounding one reads the whole context): what ``toolgold import`` warns of for every case it imports."""
    found: list[HygieneProblem] = []
    offered = {t.name: t for t in case.tools}
    for call in case.expected.calls:
        spec = offered.get(call.name)
        if spec is None:
            continue
        schema = compiled(spec.parameters)
        found += _argument_violations(case, call, schema)
        found += _accepted_violations(case, call, schema, {**case.arg_rules.get(call.name, {}), **call.arg_rules})
    return found


def _argument_violations(case: GoldCase, call: Call, schema: ArgumentSchema) -> list[HygieneProblem]:
    found = [HygieneProblem(code="schema_violation", case_id=case.id, tool=call.name, arg=key,
                            message=f"`{call.name}` has no parameter `{key}`")
             for key in call.arguments if not schema.is_known(key)]
    for problem in schema.problems(call.arguments):
        where = f"{call.name}.{problem.arg}" if problem.arg else call.name
        found.append(HygieneProblem(code="schema_violation", case_id=case.id, tool=call.name, arg=problem.arg,
                                    message=f"`{where}`: {problem.message}"))
    return found


def _accepted_violations(case: GoldCase, call: Call, schema: ArgumentSchema, rules: dict[str, ArgRule]) -> list[HygieneProblem]:
    found = []
    for key, rule in sorted(rules.items()):
        if rule.match not in ("exact", "one_of", "normalized"):
            continue  # other kinds accept phrasings ("NYC" for a ci rule), not literal arguments
        for value in rule.accept:
            for problem in schema.problems({key: value}):
                found.append(HygieneProblem(
                    code="schema_violation", case_id=case.id, tool=call.name, arg=key,
                    message=f"`{call.name}.{key}` accepts {show(value)}: {problem.message}"))
    return found


# -- across cases ------------------------------------------------------------------------------------------


def _context_text(case: GoldCase) -> str:
    """What the agent saw besides the system prompt (shared by whole domains), normalized."""
    parts = []
    for m in case.messages:
        if m.role == "system":
            continue
        if m.content:
            parts.append(m.content)
        parts += [f"{c.function.name} {c.function.arguments}" for c in m.tool_calls]
    return " ".join(" ".join(parts).casefold().split())


def _shingles(text: str) -> frozenset[int]:
    words = text.split()
    grams = [" ".join(words[i:i + 3]) for i in range(max(len(words) - 2, 1))]
    return frozenset(int.from_bytes(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest(), "little")
                     for g in grams if g)


def _answer_key(answer: Answer) -> str:
    return canonical.dumps(answer.model_dump(mode="json"))


def _describe(answer: Answer) -> str:
    if answer.behavior != "call":
        return "no call" if answer.behavior == "no_call" else "ask the user"
    return " + ".join(f"{c.name}({canonical.dumps(c.arguments)})" for c in answer.calls)


class _Doc:
    """What duplicate detection keeps of a gold case: its id, its expected answer's key and the keys of every
    answer it accepts, the keys shared by the cases that have them (``_Duplicates.add``): not its context,
    tools or answer objects."""

    __slots__ = ("accepted", "case_id", "expected")

    def __init__(self, case_id: str, expected: str, accepted: frozenset[str] | None) -> None:
        self.case_id = case_id
        self.expected = expected
        self.accepted = accepted
        """None: the expected answer alone (most cases have no alternative)."""


def _jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _involved(sides: Sequence[Sequence[_Doc]]) -> list[_Doc]:
    """The cases of ``sides`` in some conflicting pair (different expected answers, neither case accepting the
    other's): any pair when there is one side, only pairs across the two sides when there are two. Cases
    that expect and accept the same answers are compared once, as a kind, so a group of k cases with a few
    kinds of answers costs k, not k²."""
    kinds: dict[tuple[int, str, frozenset[str]], list[_Doc]] = {}
    for side, docs in enumerate(sides):
        for doc in docs:
            accepted = doc.accepted if doc.accepted is not None else frozenset((doc.expected,))
            kinds.setdefault((side, doc.expected, accepted), []).append(doc)
    keys = list(kinds)
    involved: set[tuple[int, str, frozenset[str]]] = set()
    for x, (side_x, expected_x, accepted_x) in enumerate(keys):
        for side_y, expected_y, accepted_y in keys[x + 1:]:
            if len(sides) > 1 and side_x == side_y:
                continue
            if expected_x not in accepted_y and expected_y not in accepted_x:
                involved.add((side_x, expected_x, accepted_x))
                involved.add((side_y, expected_y, accepted_y))
    found = [doc for key in keys if key in involved for doc in kinds[key]]
    if len({doc.case_id for doc in found}) < 2:  # one case given twice is not a conflict
        return []
    return sorted(found, key=lambda doc: doc.case_id)


SHOWN_PER_ANSWER: Final = 3
"""Case ids a group's message names per answer; the rest are counted (``related`` has them all)."""
SHOWN_ANSWERS: Final = 5
"""Answers a group's message describes (in the order of their first case); the rest are counted."""


def _group_problem(docs: list[_Doc], exact: bool) -> HygieneProblem:
    """One problem for cases with the same (or nearly the same) context that conflict, on the first by id."""
    code: ProblemCode = "conflicting_duplicate" if exact else "conflicting_near_duplicate"
    how = "the same context" if exact else "nearly the same context"
    first, *others = docs
    related = tuple(doc.case_id for doc in others)
    if len(others) == 1:
        other = others[0]
        return HygieneProblem(code=code, case_id=first.case_id, related=related,
                              message=f"{how} as `{other.case_id}`, but expects {_describe_key(first.expected)} "
                                      f"where `{other.case_id}` expects {_describe_key(other.expected)}")
    by_answer: dict[str, list[str]] = {}  # in the order of each answer's first case
    for doc in docs:
        by_answer.setdefault(doc.expected, []).append(doc.case_id)
    parts = []
    for key, ids in list(by_answer.items())[:SHOWN_ANSWERS]:
        shown = ", ".join(f"`{i}`" for i in ids[:SHOWN_PER_ANSWER])
        more = f" and {len(ids) - SHOWN_PER_ANSWER} more" if len(ids) > SHOWN_PER_ANSWER else ""
        parts.append(f"{_describe_key(key)} ({shown}{more})")
    if len(by_answer) > SHOWN_ANSWERS:
        rest = list(by_answer.values())[SHOWN_ANSWERS:]
        parts.append(f"{len(rest)} other answers ({sum(len(ids) for ids in rest)} cases)")
    return HygieneProblem(code=code, case_id=first.case_id, related=related,
                          message=f"{len(docs)} cases have {how} but expect {len(by_answer)} different answers: "
                                  + "; ".join(parts))


def _describe_key(key: str) -> str:
    """``_describe`` of the answer whose key (its canonical JSON) this is."""
    return _describe(Answer.model_validate_json(key))


class _Duplicates:
    """Conflicting duplicates, found as cases are given (``add``) and reported at the end (``problems``): the
    cases are grouped by context as they come, and only the first case of each context keeps its 3-grams."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.groups: dict[bytes, list[_Doc]] = {}
        """The cases of each context (by the hash of the tools' names and the context's text), in order."""
        self.grams: list[frozenset[int]] = []
        """The 3-grams of each context, in the order the contexts first came (none for exact duplicates only)."""
        self.keys: dict[str, str] = {}
        """Each answer key once: the cases that expect one answer share its string."""
        self.accepted: dict[frozenset[str], frozenset[str]] = {}
        """Each set of accepted answer keys once, likewise."""

    def add(self, case: GoldCase) -> None:
        if case.kind != "turn" or not case.messages:
            return
        text = _context_text(case)
        tools = ",".join(sorted(t.name for t in case.tools))
        exact = hashlib.blake2b(f"{tools}\n{text}".encode(), digest_size=16).digest()
        group = self.groups.get(exact)
        if group is None:
            group = self.groups[exact] = []
            # No pair of contexts is that similar above 1: exact duplicates only (as freezing asks).
            self.grams.append(_shingles(text) if self.threshold <= 1.0 else frozenset())
        keys = self.keys
        expected = _answer_key(case.expected)
        expected = keys.setdefault(expected, expected)
        accepted = None
        if case.alternatives:  # (none: the expected answer alone, made when compared)
            accepted = frozenset({expected, *(keys.setdefault(k, k) for k in map(_answer_key, case.alternatives))})
            accepted = self.accepted.setdefault(accepted, accepted)
        group.append(_Doc(case.id, expected, accepted))

    def problems(self) -> list[HygieneProblem]:
        groups = list(self.groups.values())
        found = []
        for group in groups:
            if len(group) > 1:
                involved = _involved([group])
                if involved:
                    found.append(_group_problem(involved, exact=True))
        if self.threshold > 1.0:
            return found
        # Near duplicates between contexts: each context's cases stand together.
        grams = self.grams
        frequency: dict[int, int] = defaultdict(int)
        for context in grams:
            for gram in context:
                frequency[gram] += 1
        common = max(20, int(COMMON_SHARE * len(groups)))
        buckets: dict[int, list[int]] = defaultdict(list)
        for g, context in enumerate(grams):
            for gram in sorted(gram for gram in context if frequency[gram] <= common)[:SKETCH]:
                buckets[gram].append(g)
        near: set[tuple[int, int]] = set()
        for members in buckets.values():
            for g, h in combinations(members, 2):
                if (g, h) not in near and _jaccard(grams[g], grams[h]) >= self.threshold:
                    near.add((g, h))
        for g, h in sorted(near):
            involved = _involved([groups[g], groups[h]])
            if involved:
                found.append(_group_problem(involved, exact=False))
        return found


def duplicate_problems(cases: Iterable[GoldCase], *, threshold: float = NEAR_DUPLICATE) -> list[HygieneProblem]:
    """Cases with the same or nearly the same context and conflicting expected answers: one problem per
    context shared by conflicting cases, and one per pair of near contexts whose cases conflict across them,
    each reported on the case with the smallest id and naming the others in ``related``. ``cases`` is read
    once, and not kept."""
    duplicates = _Duplicates(threshold)
    for case in cases:
        duplicates.add(case)
    return duplicates.problems()


def lint(cases: Iterable[GoldCase], *, threshold: float = NEAR_DUPLICATE) -> list[HygieneProblem]:
    """Every hygiene problem of ``cases``, ordered by case id, then code. ``cases`` is read once, and not
    kept: a file of any size can be linted as it is read."""
    duplicates = _Duplicates(threshold)
    found = []
    for case in cases:
        found += case_problems(case)
        duplicates.add(case)
    found += duplicates.problems()
    return sorted(found, key=lambda p: (p.case_id, p.code, p.tool or "", p.arg or "", p.message))


__all__ = ["NEAR_DUPLICATE", "HygieneProblem", "ProblemCode", "case_problems", "duplicate_problems", "lint"]
