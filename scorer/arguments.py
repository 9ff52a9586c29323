"""Argument errors of one actual call against the expected call to the same tool.

One error per argument, the most basic one first: a missing required argument, then an unknown
parameter, then a schema type error, then a wrong value under the argument's match rule (``swapped_args``
for two arguments carrying each other's gold values, ``stale_value`` when a later user message explicitly
replaced the value with the gold one). ``semantic`` arguments that
differ from the gold are returned as pending questions for the judge; ``from_call`` sources are checked by
the caller once it knows which call produced which result (``from_call_errors``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from scorer import canonical
from scorer.canonical import equal
from scorer.codes import ErrorCode
from scorer.facts import CaseFacts
from scorer.grounding import Context, scalar_texts, superseding
from scorer.matchers import ABSENT, Verdict, describe, expected_values, normalized_text, read_as, show
from scorer.model import ArgRule, Call, RunCall
from scorer.results import CaseError, Review, trusted
from scorer.schemas import ArgumentSchema, SchemaProblem
from scorer.verdict import case_error

DEFAULT_RULE = ArgRule()
# The fields an argument error sets (its ``model_fields_set``, as ``trusted`` records the keywords passed).
_WITH_EXPECTED: Final = frozenset({"code", "tool", "arg", "step", "expected", "note"})
_WITH_ACTUAL: Final = frozenset({"code", "tool", "arg", "step", "actual", "note"})
_WITH_BOTH: Final = frozenset({"code", "tool", "arg", "step", "expected", "actual", "note"})
ARGUMENT_CODES = frozenset({ErrorCode.MISSING_REQUIRED_ARG, ErrorCode.HALLUCINATED_PARAM,
                            ErrorCode.SCHEMA_TYPE_ERROR, ErrorCode.WRONG_ARG_VALUE,
                            ErrorCode.MALFORMED_ARGUMENTS, ErrorCode.STALE_VALUE,
                            ErrorCode.SWAPPED_ARGS})


class PairCheck:
    """The argument verdict of one (expected, actual) pair of calls to the same tool. A plain class, not a
    dataclass: the compiled core then builds one without entering the interpreter (a generated
    ``__init__`` is Python)."""

    __slots__ = ("errors", "reviews")

    def __init__(self, errors: list[CaseError] | None = None, reviews: list[Review] | None = None) -> None:
        self.errors: list[CaseError] = [] if errors is None else errors
        self.reviews: list[Review] = [] if reviews is None else reviews

    def __repr__(self) -> str:
        return f"PairCheck(errors={self.errors!r}, reviews={self.reviews!r})"

    @property
    def cost(self) -> int:
        return len(self.errors)


_CLEAN = PairCheck()
CLEAN = _CLEAN
"""The check with nothing found: shared, never written to."""


def same_arguments(actual: dict[str, Any], gold: dict[str, Any]) -> bool:
    return canonical.equal(actual, gold)


_UNWRITTEN = CaseError.model_construct(code=ErrorCode.WRONG_ARG_VALUE, note="(not written: only counted)")


def pair_cost(facts: CaseFacts, expected: Call, actual: RunCall, *, tool_only: bool = False,
              step: int | None = None) -> int:
    """How many errors ``check_pair`` finds, without writing any note (the costly part: describing the
    rule, showing values, looking for a superseding message). Parallel calls are paired by this cost, so
    only the pairs chosen are checked in full."""
    return check_pair(facts, expected, actual, tool_only=tool_only, step=step, cost_only=True).cost


class CallPlan:
    """One expected call compiled for checking actual calls against it: its rules resolved, the required
    keys that can be missing, and the schema's known keys as a set. Built once per expected call and case
    (``plan_for``); ``check_pair`` then decides the same errors, in the same order, as the general
    path (tests/scorer/test_compiled_checks.py compares them on real and perturbed items)."""

    __slots__ = ("from_call", "gold", "known", "must", "normalized", "rules", "schema", "strict", "tool")

    def __init__(self, facts: CaseFacts, call: Call) -> None:
        fields = call.__dict__  # three fields: one attribute lookup, then dict lookups
        tool = self.tool = fields["name"]
        gold = self.gold = fields["arguments"]
        rules = self.rules = facts.rules_with(tool, fields["arg_rules"])
        # Each rule's kind read once, here: a pydantic read costs several dict lookups.
        strict: set[str] | None = None
        from_call = False
        for key, rule in rules.items():
            kind = rule.match
            if kind not in _EQUAL_MATCHES:
                if kind == "from_call":
                    from_call = True
                if strict is None:
                    strict = set()
                strict.add(key)
        self.strict: frozenset[str] = _NO_KEYS if strict is None else frozenset(strict)
        """The keys whose rule may refuse even a value equal to the gold value (``_EQUAL_MATCHES``)."""
        self.from_call = from_call
        """Whether a rule is ``from_call``: then no plan applies (``plan_for`` keeps None)."""
        self.normalized: dict[str, list[Any]] | None = None
        """The gold value and accepted values of a ``normalized`` key, normalized once (when first needed)."""
        if from_call:  # never used: not worth the schema
            self.must, self.schema, self.known = [], None, None
            return
        by_gold = facts.required_by_gold(tool)
        self.must = [k for k in facts.required(tool) if k in gold or k in by_gold] if by_gold else \
            [k for k in facts.required(tool) if k in gold]
        schema = self.schema = facts.schema(tool)
        self.known = schema.known if schema is not None and schema.closed else None


_NO_KEYS: Final[frozenset[str]] = frozenset()
_NO_SKIP: Final[set[str | None]] = set()
"""No key to skip: shared, never written to."""
_NOT_YET: Final = object()


def plan_for(facts: CaseFacts, call: Call) -> CallPlan | None:
    """The compiled check of an expected call, made once per call and case (kept in ``facts.plans``), or
    None where only the general path applies: a ``from_call`` rule, or ``facts.compiled`` False."""
    plans = facts.plans
    found = plans.get(id(call), _NOT_YET)
    if found is _NOT_YET:
        if not facts.compiled:
            found = None
        else:
            plan = CallPlan(facts, call)
            found = None if plan.from_call else plan
        plans[id(call)] = found
    return found  # type: ignore[no-any-return]


_EQUAL_MATCHES: Final = frozenset({"exact", "one_of", "any", "ci", "normalized", "regex", "semantic"})
"""Rules under which a value canonically equal to the gold value matches (``match_value`` says True)."""


_MISSING = object()


def equal_value(a: Any, b: Any) -> bool:
    """``canonical.equal(a, b)``, with strings, numbers and lists and objects of them compared here (most
    argument values: the recursion through ``equal`` was most of pairing parallel calls off) and anything
    else by ``equal`` (tests/scorer/test_certified_pairing.py checks that the two agree)."""
    ta, tb = type(a), type(b)
    if ta is str or tb is str:
        return ta is tb and a == b
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a == b or (ta is float and tb is float and a != a and b != b)
    if ta is list and tb is list:
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            tx, ty = type(x), type(y)
            if tx is str or ty is str:
                if tx is not ty or x != y:
                    return False
            elif (tx is int or tx is float) and (ty is int or ty is float):
                if x != y and not (tx is float and ty is float and x != x and y != y):
                    return False
            elif not equal(x, y):
                return False
        return True
    if ta is dict and tb is dict:
        return equal_arguments(a, b)
    return equal(a, b)


def equal_arguments(a: dict[Any, Any], b: dict[Any, Any]) -> bool:  # keys too: values nest any dict
    """``canonical.equal(a, b)`` of two argument objects, each value as ``equal_value`` compares it."""
    if type(a) is not dict or type(b) is not dict or len(a) != len(b):
        return equal(a, b)
    for key, value in a.items():
        if type(key) is not str:
            return equal(a, b)  # keys compared as JSON text: as ``equal`` does
        other = b.get(key, _MISSING)
        if other is _MISSING:
            return False
        tv, to = type(value), type(other)
        if tv is str or to is str:  # ``equal_value``, inline for the commonest values
            if tv is not to or value != other:
                return False
        elif (tv is int or tv is float) and (to is int or to is float):
            if value != other and not (tv is float and to is float and value != value and other != other):
                return False
        elif not equal_value(value, other):
            return False
    return True


def clean_when_equal(facts: CaseFacts, call: Call) -> bool:
    """Whether arguments canonically equal to the expected call's are checked clean: no error, no review
    (each gold key's rule, the call's own over the case's, accepts a value equal to the gold value:
    ``counted`` then returns ``(0, None, False, True)`` and ``diagnose`` nothing)."""
    rules = facts.rules(call.name)
    own = call.arg_rules
    if not rules and not own:
        return True
    for key in call.arguments:
        rule = own[key] if key in own else rules.get(key)
        if rule is not None and rule.match not in _EQUAL_MATCHES:
            return False
    return True


def _unequal_verdict(facts: CaseFacts, plan: CallPlan, key: str, rule: ArgRule, gold: Any, value: Any) -> Verdict:
    """``facts.match(rule, gold, value)`` for a value not canonically equal to the present gold value, the
    common rules compared here (what ``match_value`` answers for them)."""
    kind = rule.match
    if kind == "exact" or kind == "one_of":
        for v in rule.accept:  # noqa: SIM110 (a loop, not any() of a generator: this runs per pair of calls)
            if equal(value, v):
                return True
        return False
    if kind == "normalized":
        forms = plan.normalized
        if forms is None:
            forms = plan.normalized = {}
        wanted = forms.get(key)
        if wanted is None:
            wanted = forms[key] = [normalized_text(v) for v in (gold, *rule.accept)]
        got = normalized_text(value)
        for v in wanted:  # noqa: SIM110
            if equal(got, v):
                return True
        return False
    if kind == "any":
        return True
    return facts.match(rule, gold, value)


class Diagnosis:
    """What a compiled check found, before any note is written: the keys (and schema problems) of each
    kind of error in the order ``check_pair`` writes them. ``cost`` is the error count (what pairing
    parallel calls compares); ``render`` writes the errors and reviews, notes and all, only for the pairs
    chosen."""

    __slots__ = ("cost", "missing", "problems", "sequence", "swapped", "unknown")

    def __init__(self, missing: list[str], unknown: list[str], problems: list[SchemaProblem],
                 sequence: list[tuple[int, str]], swapped: list[tuple[str, str]]) -> None:
        self.missing = missing
        self.unknown = unknown
        self.problems = problems
        self.sequence = sequence
        """``(kind, key)`` in key order: _WITHOUT (a gold key left out), _UNSET (a key the gold does not
        set), _REVIEW (a value no rule can settle), _WRONG (a value that fails its rule)."""
        self.swapped = swapped
        reviews = 0
        for kind, _ in sequence:
            if kind == _REVIEW:
                reviews += 1
        self.cost = len(missing) + len(unknown) + len(problems) + len(sequence) - reviews - len(swapped)
        """The error count: one per key, one per swapped pair, none for a review."""

    def missed(self) -> set[str]:
        """The keys its errors are of, as ``turn.missed_arguments`` reads them from the rendered errors ("\\0"
        for a problem of the arguments as a whole; both keys of a swapped pair), without reading an error."""
        keys = {*self.missing, *self.unknown}
        for problem in self.problems:
            keys.add("\0" if problem.arg is None else problem.arg)
        for kind, key in self.sequence:
            if kind != _REVIEW:
                keys.add(key)
        return keys


_WITHOUT, _UNSET, _REVIEW, _WRONG = range(4)
_NOTHING = Diagnosis([], [], [], [], [])


def diagnose(facts: CaseFacts, plan: CallPlan, args: dict[str, Any]) -> Diagnosis:
    """The errors ``check_pair`` finds, as keys, with work in proportion to the arguments that do not
    match."""
    gold, rules, strict = plan.gold, plan.rules, plan.strict
    # Each argument the gold sets, under its rule (the general path asks every one of them too); only the
    # others go on: a value that fails (or awaits) its rule, a key the gold does not set, a gold key left out.
    odd: list[str] = []
    verdicts: dict[str, Verdict] = {}
    shared = 0
    same = len(args) == len(gold)  # canonically equal to the gold, so far
    for key, value in args.items():
        if key in gold:
            shared += 1
            wanted = gold[key]
            if equal(value, wanted):
                if key not in strict:
                    continue
                decided = facts.match(rules[key], wanted, value)
            else:
                same = False
                rule = rules.get(key)
                decided = False if rule is None else _unequal_verdict(facts, plan, key, rule, wanted, value)
            if decided is not True:
                verdicts[key] = decided
                odd.append(key)
        else:
            same = False
            odd.append(key)
    if same:
        return _NOTHING  # as valid as the gold itself (a plan is never made for a from_call rule)
    if shared < len(gold):
        odd += [k for k in gold if k not in args]
    missing = [k for k in plan.must if k not in args] if plan.must else []
    if not odd:
        return Diagnosis(missing, [], [], [], []) if missing else _NOTHING
    schema = plan.schema
    unknown: list[str] = []
    problems: list[SchemaProblem] = []
    if schema is not None:
        # Unvouched keys: those present in ``args`` among ``odd`` (a vouched key matches its gold value).
        known = plan.known
        unvouched = [k for k in odd if k in args]
        unknown = [k for k in unvouched if k not in known] if known is not None else \
            [k for k in unvouched if not schema.is_known(k)]
        if len(unknown) > 1:
            unknown.sort()
        if schema.root_says_nothing and _clean_alone(schema, unvouched, unknown, args):
            pass  # no problem of the arguments as a whole, none of a value in question: no checker is chosen
        elif schema.per_argument:
            if len(unvouched) > 1:
                unvouched.sort()
            for k in unvouched:
                if k not in unknown:
                    problem = schema.problem(k, args[k])
                    if problem is not None:
                        problems.append(problem)
        else:
            known_args = {k: v for k, v in args.items() if k not in unknown} if unknown else args
            problems = [p for p in schema.problems(known_args)
                        if p.arg is None or p.arg not in gold or p.arg in verdicts]
    skip: set[str | None] = {*missing, *unknown, *[p.arg for p in problems]} if missing or unknown or problems \
        else _NO_SKIP  # (a set either way: the compiled core then tests membership directly)
    sequence: list[tuple[int, str]] = []
    wrong: list[str] = []
    tool = plan.tool
    for key in sorted(odd) if len(odd) > 1 else odd:
        if key in skip:
            continue
        if key not in args:
            if not rules.get(key, DEFAULT_RULE).optional:
                sequence.append((_WITHOUT, key))
            continue
        if key in verdicts:
            decided = verdicts[key]
        else:  # a key the gold does not set
            rule = rules.get(key, DEFAULT_RULE)
            if not rule.accept:
                if rule.match != "any" and not _is_default(facts, tool, key, args[key]):
                    sequence.append((_UNSET, key))
                continue
            decided = facts.match(rule, ABSENT, args[key])
        if decided is True:
            continue
        if decided is None:
            sequence.append((_REVIEW, key))
            continue
        sequence.append((_WRONG, key))
        wrong.append(key)
    swapped = _swapped_pairs(facts, rules, wrong, args, gold) if len(wrong) > 1 else []
    return Diagnosis(missing, unknown, problems, sequence, swapped)


def _clean_alone(schema: ArgumentSchema, unvouched: list[str], unknown: list[str], args: dict[str, Any]) -> bool:
    """Whether no checker can find a problem with any of the known keys among ``unvouched``."""
    for k in unvouched:  # noqa: SIM110 (a loop, not all() of a generator: asked per failing call)
        if k not in unknown and not schema.clean_alone(k, args[k]):
            return False
    return True


def counted(facts: CaseFacts, plan: CallPlan, args: dict[str, Any], typed: dict[str, bool] | None = None,
            limit: int | None = None) -> tuple[int, list[str] | None, bool, bool]:
    """``diagnose(facts, plan, args).cost`` counted key by key, without building the diagnosis (parallel
    calls cost every pair of calls to the same tool; only the pairs chosen are diagnosed). Each key adds
    at most one error: a required key left out, an unknown parameter, a schema problem, a gold key left
    out, a key the gold does not set, a value failing its rule; a swapped pair of wrong values counts
    once. A schema that checks the arguments together is left to ``diagnose``. ``typed`` remembers, for
    these ``args`` and the plan's tool, whether the schema refuses each key (unknown, or a type problem):
    the same for every expected call to the tool, so one dict serves a whole column of the pairing.

    Returns the count before swapped pairs are taken off, and the wrong values' keys when two or more could
    pair (None otherwise): ``swaps`` then says how many pairs they make, at most half of them; whether
    the diagnosis has any review (no error and no review: ``render`` writes nothing); and whether the count
    is complete. With a ``limit``, counting stops once the count, less every swap the wrong values could
    still make, exceeds it (the count never falls as keys are added): then the first value is only a lower
    bound above ``limit``, and the rest is not to be read."""
    schema = plan.schema
    if schema is not None and not schema.per_argument:
        found = diagnose(facts, plan, args)
        return found.cost, None, bool(found.sequence), True
    gold, rules, strict = plan.gold, plan.rules, plan.strict
    known = plan.known
    cost = 0
    same = len(args) == len(gold)
    shared = 0
    wrong: list[str] | None = None
    review = False
    for key, value in args.items():
        if limit is not None and not same and cost - (len(wrong) >> 1 if wrong else 0) > limit:
            return cost - (len(wrong) >> 1 if wrong else 0), None, review, False
        if key in gold:
            shared += 1
            wanted = gold[key]
            if equal(value, wanted):
                if key not in strict:
                    continue
                decided = facts.match(rules[key], wanted, value)
            else:
                same = False
                rule = rules.get(key)
                decided = False if rule is None else _unequal_verdict(facts, plan, key, rule, wanted, value)
            if decided is True:
                continue
            if schema is not None and _refused(schema, known, key, value, typed):
                cost += 1  # unknown, or a schema problem
            elif decided is False:
                cost += 1
                if wrong is None:
                    wrong = [key]
                else:
                    wrong.append(key)
            else:
                review = True  # a review, no error
            continue
        same = False
        if schema is not None and _refused(schema, known, key, value, typed):
            cost += 1
        else:
            rule = rules.get(key, DEFAULT_RULE)
            if not rule.accept:
                if rule.match != "any" and not _is_default(facts, plan.tool, key, value):
                    cost += 1
            else:
                decided = facts.match(rule, ABSENT, value)
                if decided is False:
                    cost += 1
                elif decided is None:
                    review = True
    if same:
        return 0, None, False, True  # as valid as the gold itself
    must = plan.must
    for key in must:
        if key not in args:
            cost += 1  # missing, whether the gold sets it or only requires it
    if shared < len(gold):
        for key in gold:
            if key not in args and key not in must and not rules.get(key, DEFAULT_RULE).optional:
                cost += 1
    if wrong is not None and len(wrong) > 1:
        wrong.sort()
        return cost, wrong, review, True
    return cost, None, review, True


def has_error(facts: CaseFacts, gold: dict[str, Any], rules: dict[str, ArgRule], args: dict[str, Any],
              texts: dict[str, Any]) -> bool:
    """Whether ``diagnose`` of ``args`` against the expected call with arguments ``gold`` and rules
    ``rules`` (``CaseFacts.call_rules``) certainly finds an error, found cheaply: some argument the gold
    sets has a value that fails its rule (whatever else the diagnosis finds, that key adds an error, and a
    swapped pair of wrong values still counts one). False says only "not shown here". ``texts`` keeps the
    ``normalized_text`` of strings, shared by the checks of one scoring (the same values recur across
    expected calls)."""
    for key, value in args.items():
        wanted = gold.get(key, ABSENT)
        if wanted is ABSENT or equal_value(value, wanted):
            continue
        rule = rules.get(key)
        if rule is None:
            return True
        kind = rule.match
        if kind == "normalized":
            if type(value) is str:  # a string's text matches only a string's (``equal``): compared as such
                form = texts.get(value)
                if form is None:
                    form = texts[value] = normalized_text(value)
                for v in (wanted, *rule.accept) if rule.accept else (wanted,):
                    if type(v) is str:
                        other = texts.get(v)
                        if other is None:
                            other = texts[v] = normalized_text(v)
                        if other == form:
                            break
                else:
                    return True
                continue
            got = normalized_text(value)
            if not any(equal(got, normalized_text(v)) for v in (wanted, *rule.accept)):
                return True
        elif kind == "exact" or kind == "one_of":
            for v in rule.accept:
                if equal(value, v):
                    break
            else:
                return True
        elif kind != "any" and facts.match(rule, wanted, value) is False:
            return True
    return False


def plan_cost(facts: CaseFacts, plan: CallPlan, args: dict[str, Any], typed: dict[str, bool] | None = None) -> int:
    """``diagnose(facts, plan, args).cost`` counted key by key, without building the diagnosis (see
    ``counted``)."""
    cost, wrong, _, _ = counted(facts, plan, args, typed)
    return cost - swaps(facts, plan, args, wrong) if wrong else cost


def swaps(facts: CaseFacts, plan: CallPlan, args: dict[str, Any], wrong: list[str]) -> int:
    """How many swapped pairs the wrong values (by key, sorted) of ``counted`` make: each is one error less."""
    return len(_swapped_pairs(facts, plan.rules, wrong, args, plan.gold))


def _refused(schema: ArgumentSchema, known: frozenset[str] | None, key: str, value: Any,
             typed: dict[str, bool] | None) -> bool:
    """Whether the schema refuses ``key`` of the arguments: an unknown parameter or a type problem."""
    if typed is not None:
        found = typed.get(key)
        if found is not None:
            return found
    found = ((key not in known) if known is not None else not schema.is_known(key)) \
        or schema.problem(key, value) is not None
    if typed is not None:
        typed[key] = found
    return found


def render(facts: CaseFacts, plan: CallPlan, args: dict[str, Any], found: Diagnosis, step: int | None,
           context: Callable[[], Context] | None) -> PairCheck:
    """The errors and reviews of a diagnosis, notes and all, in ``check_pair``'s order."""
    if found is _NOTHING:
        return _CLEAN
    gold, tool, rules = plan.gold, plan.tool, plan.rules
    check = PairCheck()
    errors = check.errors
    reference = facts.reference_time
    for key in found.missing:
        rule = rules.get(key, DEFAULT_RULE)
        wanted = f"; expected {describe(rule, gold[key], reference)}" if key in gold else ""
        errors.append(case_error(_WITH_EXPECTED, ErrorCode.MISSING_REQUIRED_ARG,
                                 f"called {tool} without required {key}{wanted}", tool, key, gold.get(key), None,
                                 step))
    for key in found.unknown:
        errors.append(case_error(_WITH_ACTUAL, ErrorCode.HALLUCINATED_PARAM,
                                 f"called {tool} with {key} {show(args[key])}, which is not a parameter of {tool}",
                                 tool, key, None, args[key], step))
    if found.problems:
        unknown = found.unknown
        known_args = {k: v for k, v in args.items() if k not in unknown} if unknown else args
        for problem in found.problems:
            value = known_args[problem.arg] if problem.arg is not None else known_args
            errors.append(case_error(_WITH_ACTUAL, ErrorCode.SCHEMA_TYPE_ERROR,
                                     f"called {tool} with {problem.arg or 'arguments'} {show(value)}: "
                                     f"{problem.message}", tool, problem.arg, None, value, step))
    partner = {k: other for a, b in found.swapped for k, other in ((a, b), (b, a))} if found.swapped else {}
    for kind, key in found.sequence:
        if kind == _WITHOUT:
            rule = rules.get(key, DEFAULT_RULE)
            errors.append(case_error(_WITH_EXPECTED, ErrorCode.WRONG_ARG_VALUE,
                f"called {tool} without {key}; expected {describe(rule, gold[key], reference)}", tool, key,
                gold[key], None, step))
        elif kind == _UNSET:
            value = args[key]
            errors.append(case_error(_WITH_ACTUAL, ErrorCode.WRONG_ARG_VALUE,
                f"called {tool} with {key} {show(value)}, which the gold call does not set", tool, key, None, value,
                step))
        elif kind == _REVIEW:
            check.reviews.append(_review(rules.get(key, DEFAULT_RULE), tool, key, gold.get(key, ABSENT), args[key]))
        elif key in partner:
            other = partner[key]
            if key < other:
                value = args[key]
                errors.append(case_error(_WITH_BOTH, ErrorCode.SWAPPED_ARGS,
                    f"called {tool} with {key} and {other} swapped: {key} {show(value)}, {other} "
                    f"{show(args[other])}; expected {key} {show(gold[key])}, {other} {show(gold[other])}", tool, key,
                    {key: gold[key], other: gold[other]}, {key: value, other: args[other]}, step))
        else:
            errors.append(_wrong_value(facts, rules.get(key, DEFAULT_RULE), tool, key, step, args[key],
                                       gold.get(key, ABSENT), context))
    return check


def _planned(facts: CaseFacts, plan: CallPlan, args: dict[str, Any], step: int | None,
             context: Callable[[], Context] | None, cost_only: bool) -> PairCheck:
    """``check_pair`` through a compiled plan: the same errors and reviews, in the same order."""
    found = diagnose(facts, plan, args)
    if cost_only:
        return PairCheck([_UNWRITTEN] * found.cost) if found.cost else _CLEAN
    return render(facts, plan, args, found, step, context)


def checked_by_plan(facts: CaseFacts, plan: CallPlan, args: dict[str, Any],
                    context: Callable[[], Context]) -> tuple[PairCheck, set[str] | None]:
    """``check_pair`` of arguments known to differ from the plan's gold (one call, no step), and the keys
    its errors are of (``turn.missed_arguments`` of them; None for no error)."""
    found = diagnose(facts, plan, args)
    check = render(facts, plan, args, found, None, context)
    return check, found.missed() if check.errors else None


def check_pair(facts: CaseFacts, expected: Call, actual: RunCall, *, tool_only: bool = False,
               step: int | None = None, context: Callable[[], Context] | None = None,
               cost_only: bool = False) -> PairCheck:
    """Argument errors of ``actual`` against ``expected`` (same tool name). With ``cost_only`` every
    error is counted, not written (placeholders) and no review is kept: only ``cost`` is meaningful."""
    tool = actual.name
    if isinstance(actual.arguments, str):
        return PairCheck([trusted(CaseError,
            code=ErrorCode.MALFORMED_ARGUMENTS, tool=tool, step=step, actual=actual.arguments,
            note=f"called {tool} with arguments that are not a JSON object: {show(actual.arguments)}")])
    if tool_only:
        return _CLEAN
    plan = plan_for(facts, expected)
    if plan is not None:
        return _planned(facts, plan, actual.arguments, step, context, cost_only)
    args, gold = actual.arguments, expected.arguments
    rules = facts.call_rules(expected)
    if same_arguments(args, gold) and not facts.has_from_call(expected):
        # As valid as the gold itself: no schema check needed.
        return _CLEAN
    check = PairCheck()
    errors = check.errors
    reference = facts.reference_time
    verdicts: dict[str, Verdict] = {}  # each argument's verdict under its rule, decided once

    def verdict(key: str) -> Verdict:
        if key in verdicts:
            return verdicts[key]
        found = verdicts[key] = facts.match(rules.get(key, DEFAULT_RULE), gold.get(key, ABSENT), args[key])
        return found

    def vouched(key: str) -> bool:
        """The annotator vouches for a value that matches the gold value of its key under its rule."""
        return key in gold and verdict(key) is True

    required = facts.required(tool)
    # A schema-required key the gold call itself leaves out is the gold's omission (lint flags it), unless
    # the gold's required_args names it. (An optional rule does not waive the schema: BFCL checks it too.)
    missing = [k for k in required if k not in args and (k in gold or k in facts.required_by_gold(tool))]
    if cost_only:  # counted, not written: the notes are the costly part
        errors.extend([_UNWRITTEN] * len(missing))
    else:
        for key in missing:
            rule = rules.get(key, DEFAULT_RULE)
            hint = f"; expected {describe(rule, gold[key], reference)}" if key in gold else ""
            errors.append(trusted(CaseError, code=ErrorCode.MISSING_REQUIRED_ARG, tool=tool, arg=key, step=step,
                                  expected=gold.get(key), note=f"called {tool} without required {key}{hint}"))
    schema = facts.schema(tool)
    unknown = sorted(k for k in args if not schema.is_known(k) and not vouched(k)) if schema is not None else []
    if cost_only:
        errors.extend([_UNWRITTEN] * len(unknown))
    else:
        for key in unknown:
            errors.append(trusted(CaseError, code=ErrorCode.HALLUCINATED_PARAM, tool=tool, arg=key, step=step,
                                  actual=args[key], note=f"called {tool} with {key} {show(args[key])}, which is "
                                                        f"not a parameter of {tool}"))
    typed: set[str | None] = set()
    if schema is not None:
        known = {k: v for k, v in args.items() if k not in unknown} if unknown else args
        # A value the gold vouches for breaking the schema is the gold's own problem (lint flags it): no
        # error. Where the schema checks each argument alone, those values are not even checked.
        if schema.per_argument:
            problems = [p for p in (facts.problem(schema, k, known[k]) for k in sorted(known) if not vouched(k))
                        if p is not None]
        else:
            problems = [p for p in schema.problems(known) if p.arg is None or not vouched(p.arg)]
        for problem in problems:
            typed.add(problem.arg)
            if cost_only:
                errors.append(_UNWRITTEN)
                continue
            value = known[problem.arg] if problem.arg is not None else known
            errors.append(trusted(CaseError, code=ErrorCode.SCHEMA_TYPE_ERROR, tool=tool, arg=problem.arg,
                                  step=step, actual=value,
                                  note=f"called {tool} with {problem.arg or 'arguments'} {show(value)}: "
                                       f"{problem.message}"))
    skip = set(missing) | set(unknown) | typed
    wrong: list[str] = []  # keys whose value fails its rule: swapped, stale or simply wrong
    slot: dict[str, int] = {}  # where each one's error goes, so errors stay in key order
    for key in sorted(set(gold) | set(args)):
        if key in skip:
            continue
        rule = rules.get(key, DEFAULT_RULE)
        wanted = gold.get(key, ABSENT)
        if key not in args:
            if not rule.optional:
                if cost_only:
                    errors.append(_UNWRITTEN)
                    continue
                errors.append(trusted(CaseError,
                    code=ErrorCode.WRONG_ARG_VALUE, tool=tool, arg=key, step=step,
                    expected=None if wanted is ABSENT else wanted,
                    note=f"called {tool} without {key}; expected {describe(rule, wanted, facts.reference_time)}"))
            continue
        if rule.match == "from_call":
            continue  # its source is checked once the caller knows which call produced which result
        value = args[key]
        if wanted is ABSENT and not rule.accept:
            if rule.match == "any" or _is_default(facts, tool, key, value):
                continue
            if cost_only:
                errors.append(_UNWRITTEN)
                continue
            errors.append(trusted(CaseError,
                code=ErrorCode.WRONG_ARG_VALUE, tool=tool, arg=key, step=step, actual=value,
                note=f"called {tool} with {key} {show(value)}, which the gold call does not set"))
            continue
        decided = verdict(key)
        if decided is True:
            continue
        if decided is None:
            if not cost_only:  # a pending question costs nothing
                check.reviews.append(_review(rule, tool, key, wanted, value))
            continue
        wrong.append(key)
        slot[key] = len(errors)
    if wrong:
        _write_wrong(facts, rules, tool, step, wrong, slot, args, gold, context, check, cost_only)
    return check


def _write_wrong(facts: CaseFacts, rules: dict[str, ArgRule], tool: str, step: int | None, wrong: list[str],
                 slot: dict[str, int], args: dict[str, Any], gold: dict[str, Any],
                 context: Callable[[], Context] | None, check: PairCheck, cost_only: bool) -> None:
    """The errors of the arguments whose values fail their rule (swapped, stale or simply wrong), each put
    at its key's place among the errors already written."""
    errors = check.errors
    swapped = _swapped_pairs(facts, rules, wrong, args, gold)
    if cost_only:  # one error per wrong value, one per swapped pair
        errors.extend([_UNWRITTEN] * (len(wrong) - len(swapped)))
        return
    partner = {k: other for a, b in swapped for k, other in ((a, b), (b, a))}
    found: list[tuple[int, CaseError]] = []
    for key in wrong:
        rule, value, wanted = rules.get(key, DEFAULT_RULE), args[key], gold.get(key, ABSENT)
        if key in partner:
            other = partner[key]
            if key < other:
                found.append((slot[key], trusted(CaseError,
                    code=ErrorCode.SWAPPED_ARGS, tool=tool, arg=key, step=step,
                    expected={key: gold[key], other: gold[other]}, actual={key: value, other: args[other]},
                    note=f"called {tool} with {key} and {other} swapped: {key} {show(value)}, {other} "
                         f"{show(args[other])}; expected {key} {show(gold[key])}, {other} {show(gold[other])}")))
            continue
        found.append((slot[key], _wrong_value(facts, rule, tool, key, step, value, wanted, context)))
    for at, error in reversed(found):
        errors.insert(at, error)


def _wrong_value(facts: CaseFacts, rule: ArgRule, tool: str, key: str, step: int | None, value: Any,
                 wanted: Any, context: Callable[[], Context] | None) -> CaseError:
    """The error of a value that fails its rule: stale when a later user message replaced it with the
    gold value, else simply wrong."""
    gold_value = None if wanted is ABSENT else wanted
    # Stale needs a later message than the one that said the value: a context of one message has none, and
    # then the conversation's text is not even gathered (``superseding`` would answer None).
    replaced = superseding(value, expected_values(rule, wanted), context()) \
        if context is not None and facts.several_messages else None
    expectation = describe(rule, wanted, facts.reference_time)
    if replaced is not None:
        return case_error(_WITH_BOTH, ErrorCode.STALE_VALUE,
            f"called {tool} with {key} {show(value)}, which the user later replaced with "
            f"{show(replaced)}; expected {expectation}", tool, key, gold_value, value, step)
    read = read_as(rule, value, facts.reference_time)
    return case_error(_WITH_BOTH, ErrorCode.WRONG_ARG_VALUE,
        f"called {tool} with {key} {show(value)}{f' (read as {read})' if read else ''}; expected {expectation}",
        tool, key, gold_value, value, step)


def _vouched(facts: CaseFacts, rules: dict[str, ArgRule], key: str, value: Any, gold: dict[str, Any]) -> bool:
    """Whether ``value`` matches the gold value of ``key`` under its rule: the annotator vouches for it."""
    if key not in gold:
        return False
    return facts.match(rules.get(key, DEFAULT_RULE), gold[key], value) is True


def _swapped_pairs(facts: CaseFacts, rules: dict[str, ArgRule], wrong: list[str], args: dict[str, Any],
                   gold: dict[str, Any]) -> list[tuple[str, str]]:
    """Pairs of wrong arguments whose values are each other's gold values ("from CHK-1 to SAV-2" sent as
    from SAV-2 to CHK-1), each key in at most one pair."""
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    for k, first in enumerate(wrong):
        for second in wrong[k + 1:]:
            if first in used or second in used or first not in gold or second not in gold:
                continue
            if (facts.match(rules.get(second, DEFAULT_RULE), gold[second], args[first])
                    and facts.match(rules.get(first, DEFAULT_RULE), gold[first], args[second])):
                pairs.append((first, second))
                used |= {first, second}
    return pairs


def _review(rule: ArgRule, tool: str, key: str, wanted: Any, value: Any) -> Review:
    shown = None if wanted is ABSENT else wanted
    if rule.match == "semantic":
        return trusted(Review, tool=tool, arg=key, match="semantic", intent=rule.intent or "", expected=shown,
                      actual=value, reason="no judge configured")
    return trusted(Review, tool=tool, arg=key, match=rule.match, intent=f"a {rule.match} value", expected=shown, actual=value,
                  reason=f"the gold value {show(shown)} is not a {rule.match} toolgold can read")


def _is_default(facts: CaseFacts, tool: str, key: str, value: Any) -> bool:
    spec = facts.spec(tool)
    prop = spec.properties.get(key) if spec is not None else None
    return isinstance(prop, dict) and "default" in prop and canonical.equal(prop["default"], value)


def from_call_errors(facts: CaseFacts, actual: RunCall, *, step: int | None,
                     source: Callable[[int], tuple[str, str | None]], code: ErrorCode) -> list[CaseError]:
    """Errors of ``from_call`` arguments: each value must appear in the result of the call its rule names.

    ``source(k)`` gives ``(description of call k, its result text or None when it had not run)``. The
    code is ``dependency_violation`` in a trajectory and ``wrong_arg_value`` in a turn case.
    """
    errors = []
    tool = actual.name
    for key, index in facts.from_call_rules(tool):
        if key not in actual.args:
            continue
        value = actual.args[key]
        origin, result = source(index)
        texts = list(scalar_texts(value))
        if result is None:
            note = f"called {tool} with {key} {show(value)} before {origin} had returned it"
        elif not texts or not all(Context.of_text(result).contains(t) for t in texts):
            note = f"called {tool} with {key} {show(value)}, which is not in the result of {origin}"
        else:
            continue
        errors.append(trusted(CaseError, code=code, tool=tool, arg=key, step=step, actual=value, note=note))
    return errors


__all__ = ["ARGUMENT_CODES", "CallPlan", "Diagnosis", "PairCheck", "check_pair", "checked_by_plan", "clean_when_equal", "counted", "diagnose", "equal_arguments", "equal_value", "from_call_errors", "has_error", "pair_cost", "plan_cost", "plan_for", "render", "same_arguments", "swaps"]
