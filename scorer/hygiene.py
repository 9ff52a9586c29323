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

Near duplicates are found with a bottom-k sketch: each context keeps its ``SKETCH`` lowest-hashing 3-grams
(ignoring 3-grams most contexts share), contexts that share one are compared exactly. Pure: cases in,
problems out.
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


def _conflicting(a: GoldCase, b: GoldCase) -> bool:
    """Different expected answers, and neither case accepts the other's."""
    a_answers = {_answer_key(x) for x in (a.expected, *a.alternatives)}
    b_answers = {_answer_key(x) for x in (b.expected, *b.alternatives)}
    return _answer_key(a.expected) not in b_answers and _answer_key(b.expected) not in a_answers


def _describe(answer: Answer) -> str:
    if answer.behavior != "call":
        return "no call" if answer.behavior == "no_call" else "ask the user"
    return " + ".join(f"{c.name}({canonical.dumps(c.arguments)})" for c in answer.calls)


class _Doc:
    __slots__ = ("case", "exact", "grams")

    def __init__(self, case: GoldCase) -> None:
        self.case = case
        text = _context_text(case)
        tools = ",".join(sorted(t.name for t in case.tools))
        self.exact = hashlib.sha256(f"{tools}\n{text}".encode()).hexdigest()
        self.grams = _shingles(text)


def _jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def duplicate_problems(cases: Sequence[GoldCase], *, threshold: float = NEAR_DUPLICATE) -> list[HygieneProblem]:
    """Pairs of cases with the same or nearly the same context and conflicting expected answers (reported on
    the case with the smaller id)."""
    docs = [_Doc(c) for c in cases if c.kind == "turn" and c.messages]
    pairs: dict[tuple[int, int], bool] = {}  # (i, j) -> exact duplicate
    by_exact: dict[str, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        by_exact[doc.exact].append(i)
    for group in by_exact.values():
        for i, j in combinations(group, 2):
            pairs[(i, j)] = True
    frequency: dict[int, int] = defaultdict(int)
    for doc in docs:
        for gram in doc.grams:
            frequency[gram] += 1
    common = max(20, int(COMMON_SHARE * len(docs)))
    buckets: dict[int, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for gram in sorted(g for g in doc.grams if frequency[g] <= common)[:SKETCH]:
            buckets[gram].append(i)
    for members in buckets.values():
        for i, j in combinations(members, 2):
            if (i, j) not in pairs and _jaccard(docs[i].grams, docs[j].grams) >= threshold:
                pairs[(i, j)] = False
    found = []
    for (i, j), exact in sorted(pairs.items()):
        a, b = sorted((docs[i].case, docs[j].case), key=lambda c: c.id)
        if a.id == b.id or not _conflicting(a, b):
            continue
        how = "the same context as" if exact else "nearly the same context as"
        found.append(HygieneProblem(
            code="conflicting_duplicate" if exact else "conflicting_near_duplicate", case_id=a.id, related=(b.id,),
            message=f"{how} `{b.id}`, but expects {_describe(a.expected)} where `{b.id}` expects "
                    f"{_describe(b.expected)}"))
    return found


def lint(cases: Iterable[GoldCase], *, threshold: float = NEAR_DUPLICATE) -> list[HygieneProblem]:
    """Every hygiene problem of ``cases``, ordered by case id, then code."""
    every = list(cases)
    found = [p for case in every for p in case_problems(case)] + duplicate_problems(every, threshold=threshold)
    return sorted(found, key=lambda p: (p.case_id, p.code, p.tool or "", p.arg or "", p.message))


__all__ = ["NEAR_DUPLICATE", "HygieneProblem", "ProblemCode", "case_problems", "duplicate_problems", "lint"]
