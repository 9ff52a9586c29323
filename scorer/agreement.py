"""Inter-annotator agreement: how far annotators who labeled the same decision points agree.

Pure functions over ratings (an item's category from each rater who rated it):

- ``cohen_kappa`` for two raters, ``fleiss_kappa`` for more (the generalisation that lets the number of
  raters vary per item; with a constant number it is Fleiss' 1971 formula), and ``krippendorff_alpha`` for
  nominal data with any number of raters and missing ratings, computed by the libraries that own them
  (``statsmodels.stats.inter_rater``, ``krippendorff``); ``gwet_ac1``, Gwet's AC1, beside them for fields
  where one category dominates and kappa collapses;
- ``label_ratings`` turns several annotators' gold cases of one decision point into categories per field:
  the decision kind, the tool, and each argument *under its match rule* (``ci`` values that differ only by
  case agree; ``number`` values within the tolerance agree), so agreement means what scoring means;
- ``agreement`` puts it together per field, per annotator, per tool and per tag, and ranks the items with the
  most disagreement.

Degenerate inputs give defined results: with no item rated twice, or every rating in one category (chance
agreement is then 1 and a kappa is 0/0), the coefficient is ``None`` and ``reason`` says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from itertools import combinations
from typing import Any, Final, Literal

import numpy as np

from scorer import canonical
from scorer.matchers import match_value
from scorer.model import ArgRule, Call, Frozen, GoldCase

Method = Literal["cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"]
ABSENT_VALUE: Final = "(absent)"
NO_OVERLAP: Final = "no item has ratings from two or more raters"


class Stat(Frozen):
    """One agreement coefficient. ``value`` is None when it is undefined, and ``reason`` says why."""

    method: Method
    value: float | None
    observed: float | None = None
    """Observed agreement (Cohen's p_o, Fleiss' P̄, Krippendorff's 1 - D_o)."""
    expected: float | None = None
    """Agreement expected by chance (p_e, P̄_e, 1 - D_e)."""
    n_items: int = 0
    """Items with at least two ratings (the ones that can show agreement)."""
    n_ratings: int = 0
    reason: str | None = None


def _undefined(method: Method, reason: str, *, observed: float | None = None, expected: float | None = None,
               n_items: int = 0, n_ratings: int = 0) -> Stat:
    return Stat(method=method, value=None, observed=observed, expected=expected, n_items=n_items,
                n_ratings=n_ratings, reason=reason)


def _one_category(counts: Counter[str]) -> str:
    only = next(iter(counts))
    return (f"every rating is {only!r}: chance agreement is 1, so the coefficient is undefined "
            "(the raters agree on every item)")


def _index(categories: Iterable[str]) -> dict[str, int]:
    return {c: i for i, c in enumerate(sorted(set(categories)))}


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> Stat:
    """Cohen's kappa for two raters: ``pairs`` holds (rater A's category, rater B's category) per item.

    κ = (p_o - p_e) / (1 - p_e), with p_o the share of items where they agree and p_e = Σ_k p_A(k) p_B(k);
    computed by ``statsmodels.stats.inter_rater.cohens_kappa`` on the two raters' contingency table.
    """
    n = len(pairs)
    if n == 0:
        return _undefined("cohen_kappa", NO_OVERLAP)
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum(first[k] * second[k] for k in first.keys() | second.keys()) / (n * n)
    if expected == 1:
        return _undefined("cohen_kappa", _one_category(first + second), observed=observed, expected=expected,
                          n_items=n, n_ratings=2 * n)
    index = _index(first.keys() | second.keys())
    table = np.zeros((len(index), len(index)))
    for a, b in pairs:
        table[index[a], index[b]] += 1
    from statsmodels.stats import inter_rater  # lazy: scipy costs every command seconds
    with np.errstate(invalid="ignore", divide="ignore"):  # its z statistic divides by a zero variance here
        value = float(inter_rater.cohens_kappa(table).kappa)
    return Stat(method="cohen_kappa", value=value, observed=observed, expected=expected, n_items=n,
                n_ratings=2 * n)


def _pairable(items: Iterable[Sequence[str]]) -> list[Sequence[str]]:
    return [ratings for ratings in items if len(ratings) >= 2]


def _agreement_and_shares(rated: list[Sequence[str]]) -> tuple[float, Counter[str], int]:
    """Fleiss' P̄ (the mean share of agreeing rater pairs per item), the category totals, the ratings."""
    totals: Counter[str] = Counter()
    agreement = 0.0
    for ratings in rated:
        counts = Counter(ratings)
        totals.update(counts)
        n_i = len(ratings)
        agreement += sum(c * (c - 1) for c in counts.values()) / (n_i * (n_i - 1))
    return agreement / len(rated), totals, sum(totals.values())


def fleiss_kappa(items: Iterable[Sequence[str]]) -> Stat:
    """Fleiss' kappa: each item is the list of categories its raters gave (two or more raters per item; items
    with fewer are left out). The number of raters may vary per item:

    P_i = Σ_k n_ik (n_ik - 1) / (n_i (n_i - 1)),  P̄ = mean P_i,  p_k = Σ_i n_ik / Σ_i n_i,  P̄_e = Σ_k p_k²,
    κ = (P̄ - P̄_e) / (1 - P̄_e).

    With the same number of raters on every item this is Fleiss' 1971 formula, computed by
    ``statsmodels.stats.inter_rater.fleiss_kappa``; statsmodels assumes a constant number, so a varying one
    takes the generalisation above.
    """
    rated = _pairable(items)
    if not rated:
        return _undefined("fleiss_kappa", NO_OVERLAP)
    observed, totals, n_ratings = _agreement_and_shares(rated)
    expected = sum((c / n_ratings) ** 2 for c in totals.values())
    if expected == 1:
        return _undefined("fleiss_kappa", _one_category(totals), observed=observed, expected=expected,
                          n_items=len(rated), n_ratings=n_ratings)
    if len({len(r) for r in rated}) == 1:
        index = _index(totals)
        table = np.zeros((len(rated), len(index)))
        for row, ratings in enumerate(rated):
            for category in ratings:
                table[row, index[category]] += 1
        from statsmodels.stats import inter_rater  # lazy: scipy costs every command seconds
        value = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    else:
        value = (observed - expected) / (1 - expected)
    return Stat(method="fleiss_kappa", value=value, observed=observed, expected=expected, n_items=len(rated),
                n_ratings=n_ratings)


def krippendorff_alpha(items: Iterable[Sequence[str]]) -> Stat:
    """Krippendorff's alpha for nominal data: each item (unit) is the list of values it received; units with
    a single value are not pairable and left out, so missing ratings are fine.

    α = 1 - D_o / D_e, with the coincidence matrix o_ck = Σ_u (pairs of c and k in u) / (m_u - 1),
    n_c = Σ_k o_ck, n = Σ_c n_c, D_o = Σ_{c≠k} o_ck / n and D_e = Σ_{c≠k} n_c n_k / (n (n - 1));
    computed by the ``krippendorff`` package (nominal level) on a value × unit matrix, missing values NaN
    (alpha needs no rater identities, only which values each unit received).
    """
    rated = _pairable(items)
    if not rated:
        return _undefined("krippendorff_alpha", NO_OVERLAP)
    disagreeing = 0.0  # Σ_{c≠k} o_ck, for the observed and expected agreement shown beside alpha
    totals: Counter[str] = Counter()  # n_c: every value in a pairable unit counts once
    for values in rated:
        counts = Counter(values)
        totals.update(counts)
        m = len(values)
        disagreeing += (m * m - sum(c * c for c in counts.values())) / (m - 1)
    n = sum(totals.values())
    expected_disagreeing = (n * n - sum(c * c for c in totals.values())) / (n - 1)  # Σ_{c≠k} n_c n_k / (n-1)
    observed = 1 - disagreeing / n
    if expected_disagreeing == 0:
        return _undefined("krippendorff_alpha", _one_category(totals), observed=observed, expected=1.0,
                          n_items=len(rated), n_ratings=n)
    index = _index(totals)
    data = np.full((max(len(v) for v in rated), len(rated)), np.nan)
    for unit, values in enumerate(rated):
        for row, value in enumerate(values):
            data[row, unit] = index[value]
    import krippendorff  # lazy: scipy costs every command seconds
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return Stat(method="krippendorff_alpha", value=alpha, observed=observed, expected=1 - expected_disagreeing / n,
                n_items=len(rated), n_ratings=n)


def gwet_ac1(items: Iterable[Sequence[str]]) -> Stat:
    """Gwet's AC1 (nominal, any number of raters per item), which stays informative where kappa collapses
    because one category dominates (most turns are "call": p_e near 1 makes kappa swing on one item).

    p_a = Fleiss' P̄;  π_k = Σ_i n_ik / Σ_i n_i;  p_e = Σ_k π_k (1 - π_k) / (K - 1), K the categories seen;
    AC1 = (p_a - p_e) / (1 - p_e). With one category only, K - 1 = 0 and AC1 is undefined (``reason``).
    Neither statsmodels nor krippendorff provides it, so it is computed here (Gwet 2008, eq. 14).
    """
    rated = _pairable(items)
    if not rated:
        return _undefined("gwet_ac1", NO_OVERLAP)
    observed, totals, n_ratings = _agreement_and_shares(rated)
    if len(totals) < 2:
        return _undefined("gwet_ac1", _one_category(totals), observed=observed, n_items=len(rated),
                          n_ratings=n_ratings)
    expected = sum((c / n_ratings) * (1 - c / n_ratings) for c in totals.values()) / (len(totals) - 1)
    return Stat(method="gwet_ac1", value=(observed - expected) / (1 - expected), observed=observed,
                expected=expected, n_items=len(rated), n_ratings=n_ratings)


def percent_agreement(items: Iterable[Sequence[str]]) -> float | None:
    """The share of rater pairs, over all items, that gave the same category (None without pairs)."""
    agree = pairs = 0
    for ratings in items:
        for a, b in combinations(ratings, 2):
            pairs += 1
            agree += a == b
    return agree / pairs if pairs else None


# --------------------------------------------------------------------------------------------------
# From labels to categories
# --------------------------------------------------------------------------------------------------

Ratings = dict[str, dict[str, str]]
"""field -> rater -> category, for one item."""


def _calls_by_key(calls: Sequence[Call]) -> dict[str, Call]:
    """Calls keyed by tool name, with ``#2``, ``#3`` for further calls to the same tool (in order)."""
    seen: Counter[str] = Counter()
    out = {}
    for call in calls:
        seen[call.name] += 1
        out[call.name if seen[call.name] == 1 else f"{call.name}#{seen[call.name]}"] = call
    return out


def tool_category(case: GoldCase) -> str:
    return " + ".join(sorted(c.name for c in case.expected.calls))


_MISSING: Final = object()
"""An argument the annotator did not set (distinct from a value of null)."""


def _same_value(a: tuple[Any, ArgRule, datetime | None], b: tuple[Any, ArgRule, datetime | None]) -> bool:
    """Two annotators' values agree when each accepts the other's under its own match rule."""
    (value_a, rule_a, ref_a), (value_b, rule_b, ref_b) = a, b
    if value_a is _MISSING or value_b is _MISSING:
        return value_a is value_b
    return (match_value(rule_a, value_a, value_b, ref_a) is True
            and match_value(rule_b, value_b, value_a, ref_b) is True)


def _argument_categories(values: dict[str, tuple[Any, ArgRule, datetime | None]]) -> dict[str, str]:
    """Cluster the raters' values: each joins the first earlier cluster whose value it agrees with; a cluster
    is named by its first value (canonical JSON), so equal values share a category across items."""
    clusters: list[tuple[tuple[Any, ArgRule, datetime | None], str]] = []
    out = {}
    for rater in sorted(values):
        value = values[rater]
        name = next((n for rep, n in clusters if _same_value(rep, value)), None)
        if name is None:
            name = ABSENT_VALUE if value[0] is _MISSING else canonical.dumps(value[0])
            clusters.append((value, name))
        out[rater] = name
    return out


def label_ratings(labels: Mapping[str, GoldCase]) -> Ratings:
    """Each field's category from each annotator's label of one decision point.

    Fields: ``decision`` (call / no_call / clarify); ``tool`` (the expected tools, among annotators who chose a
    call); ``arg:<tool>.<name>`` (among annotators who chose the same tools; a value an annotator left out is
    ``(absent)``); for trajectory cases also ``order``, ``after``, ``forbidden`` and, in strict order, ``steps``
    (the tools in sequence); and ``label``, the whole label, which agrees only when every other field does.
    """
    ratings: Ratings = {"decision": {r: c.expected.behavior for r, c in labels.items()}}
    callers = {r: c for r, c in labels.items() if c.expected.behavior == "call"}
    if callers:
        ratings["tool"] = {r: tool_category(c) for r, c in callers.items()}
        by_tools: dict[str, list[str]] = {}
        for rater, tools in ratings["tool"].items():
            by_tools.setdefault(tools, []).append(rater)
        for raters in by_tools.values():
            calls = {r: _calls_by_key(callers[r].expected.calls) for r in raters}
            for key in sorted({k for per in calls.values() for k in per}):
                names = sorted({a for per in calls.values() for a in per[key].arguments})
                for arg in names:
                    values = {}
                    for r in raters:
                        call = calls[r][key]
                        values[r] = (call.arguments.get(arg, _MISSING), callers[r].rule_for(call.name, arg),
                                     callers[r].reference_time)
                    ratings[f"arg:{key}.{arg}"] = _argument_categories(values)
    trajectories = {r: c for r, c in labels.items() if c.kind == "trajectory"}
    if trajectories:  # what a trajectory asks besides its calls: their order, dependencies, forbidden calls
        ratings["order"] = {r: c.order or "strict" for r, c in trajectories.items()}
        ratings["after"] = {r: canonical.dumps([d.model_dump() for d in c.after]) for r, c in trajectories.items()}
        ratings["forbidden"] = {r: canonical.dumps(sorted(canonical.dumps(f.model_dump(exclude={"reason"}))
                                                          for f in c.forbidden)) for r, c in trajectories.items()}
        steps = {r: " → ".join(call.name for call in c.expected.calls) for r, c in trajectories.items()
                 if c.expected.behavior == "call" and (c.order or "strict") == "strict"}
        if steps:
            ratings["steps"] = steps
    fields = sorted(ratings)
    ratings["label"] = {r: "|".join(f"{f}={ratings[f][r]}" for f in fields if r in ratings[f]) for r in labels}
    return ratings


def disagreeing_fields(ratings: Ratings) -> tuple[str, ...]:
    """The fields (other than the whole ``label``) on which two or more raters gave different categories."""
    return tuple(f for f, per in sorted(ratings.items())
                 if f != "label" and len(per) >= 2 and len(set(per.values())) > 1)


def majority(labels: Mapping[str, GoldCase]) -> tuple[str, ...]:
    """The annotators in the largest group of identical labels (ties: the group whose first annotator comes
    first in ``labels``' order, which callers make the order of submission)."""
    whole = label_ratings(labels)["label"]
    groups: dict[str, list[str]] = {}
    for rater in labels:
        groups.setdefault(whole[rater], []).append(rater)
    largest: list[str] = []
    for group in groups.values():
        if len(group) > len(largest):
            largest = group
    return tuple(largest)


# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------


class FieldAgreement(Frozen):
    field: str
    n_items: int
    raters: tuple[str, ...]
    percent: float | None
    cohen: Stat | None
    """Cohen's kappa, when exactly two raters took part in this field."""
    fleiss: Stat
    alpha: Stat
    ac1: Stat | None = None
    """Gwet's AC1: read it beside kappa when one category dominates (kappa's paradox)."""

    @property
    def headline(self) -> Stat:
        """Cohen's kappa for two raters, Krippendorff's alpha for more."""
        return self.cohen if self.cohen is not None else self.alpha


class AnnotatorAgreement(Frozen):
    annotator: str
    n_items: int
    """Items this annotator labeled together with someone else."""
    n_pairs: int
    percent: float | None
    """Share of pairs (this annotator with another, on one item) that agree on the whole label."""
    decision_kappa: Stat
    """Cohen's kappa of this annotator's decision kind against the others', over the same pairs."""


class GroupAgreement(Frozen):
    """Agreement on the whole label over the items of one tool or one tag."""

    group: str
    n_items: int
    percent: float | None
    alpha: Stat


class ItemDisagreement(Frozen):
    item: str
    raters: tuple[str, ...]
    fields: tuple[str, ...]
    """Fields with more than one category."""
    share: float
    """Share of rater pairs that disagree on the whole label."""


class AgreementReport(Frozen):
    n_items: int
    """Items with labels from two or more annotators."""
    raters: tuple[str, ...]
    fields: tuple[FieldAgreement, ...]
    annotators: tuple[AnnotatorAgreement, ...]
    tools: tuple[GroupAgreement, ...]
    tags: tuple[GroupAgreement, ...]
    disagreements: tuple[ItemDisagreement, ...]
    """Items where annotators disagree, the most disagreement first."""

    def field(self, name: str) -> FieldAgreement | None:
        return next((f for f in self.fields if f.field == name), None)


def _field_agreement(name: str, per_item: list[dict[str, str]]) -> FieldAgreement:
    columns = [list(r.values()) for r in per_item if len(r) >= 2]
    raters = tuple(sorted({rater for r in per_item if len(r) >= 2 for rater in r}))
    cohen = None
    if len(raters) == 2:
        a, b = raters
        cohen = cohen_kappa([(r[a], r[b]) for r in per_item if a in r and b in r])
    return FieldAgreement(field=name, n_items=len(columns), raters=raters, percent=percent_agreement(columns),
                          cohen=cohen, fleiss=fleiss_kappa(columns), alpha=krippendorff_alpha(columns),
                          ac1=gwet_ac1(columns))


def _group(name: str, wholes: list[dict[str, str]]) -> GroupAgreement:
    columns = [list(w.values()) for w in wholes]
    return GroupAgreement(group=name, n_items=len(columns), percent=percent_agreement(columns),
                          alpha=krippendorff_alpha(columns))


_FIELD_ORDER: Final = {"label": 0, "decision": 1, "tool": 2}


def agreement(items: Mapping[str, Mapping[str, GoldCase]]) -> AgreementReport:
    """Agreement over ``items`` (item id -> annotator -> that annotator's label as a gold case). Items with a
    single label take no part."""
    overlapped = {item: labels for item, labels in items.items() if len(labels) >= 2}
    rated = {item: label_ratings(labels) for item, labels in overlapped.items()}
    per_field: dict[str, list[dict[str, str]]] = {}
    for ratings in rated.values():
        for name, per in ratings.items():
            per_field.setdefault(name, []).append(per)
    every_field = (_field_agreement(name, per_field[name])
                   for name in sorted(per_field, key=lambda f: (_FIELD_ORDER.get(f, 3), f)))
    fields = tuple(f for f in every_field if f.n_items)  # an argument only one annotator set compares nothing

    raters = sorted({r for labels in overlapped.values() for r in labels})
    annotators = []
    for rater in raters:
        pairs_whole: list[tuple[str, str]] = []
        pairs_decision: list[tuple[str, str]] = []
        n_items = 0
        for ratings in rated.values():
            whole = ratings["label"]
            if rater not in whole:
                continue
            n_items += 1
            for other in sorted(whole):
                if other != rater:
                    pairs_whole.append((whole[rater], whole[other]))
                    pairs_decision.append((ratings["decision"][rater], ratings["decision"][other]))
        annotators.append(AnnotatorAgreement(
            annotator=rater, n_items=n_items, n_pairs=len(pairs_whole),
            percent=sum(a == b for a, b in pairs_whole) / len(pairs_whole) if pairs_whole else None,
            decision_kappa=cohen_kappa(pairs_decision)))

    by_tool: dict[str, list[dict[str, str]]] = {}
    by_tag: dict[str, list[dict[str, str]]] = {}
    for item, labels in overlapped.items():
        whole = rated[item]["label"]
        for tool in sorted({c.name for case in labels.values() for c in case.expected.calls}):
            by_tool.setdefault(tool, []).append(whole)
        for tag in sorted({tag for case in labels.values() for tag in case.tags}):
            by_tag.setdefault(tag, []).append(whole)

    disagreements = []
    for item, ratings in rated.items():
        fields_off = disagreeing_fields(ratings)
        if not fields_off:
            continue
        share = 1 - (percent_agreement([list(ratings["label"].values())]) or 0.0)
        disagreements.append(ItemDisagreement(item=item, raters=tuple(sorted(ratings["label"])), fields=fields_off,
                                              share=share))
    disagreements.sort(key=lambda d: (-d.share, -len(d.fields), d.item))
    return AgreementReport(
        n_items=len(overlapped), raters=tuple(raters), fields=fields, annotators=tuple(annotators),
        tools=tuple(_group(k, v) for k, v in sorted(by_tool.items())),
        tags=tuple(_group(k, v) for k, v in sorted(by_tag.items())),
        disagreements=tuple(disagreements))


# --------------------------------------------------------------------------------------------------
# The decision confusion matrix between two annotators
# --------------------------------------------------------------------------------------------------

ASK_USER: Final = "ask_user"
NO_CALL_DECISION: Final = "no_call"


def decision_category(case: GoldCase) -> str:
    """What one label decided: ``call: <tools>`` (the expected tools, as ``tool_category``), ``ask_user``
    (clarify) or ``no_call``."""
    behavior = case.expected.behavior
    if behavior == "call":
        return "call: " + tool_category(case)
    return ASK_USER if behavior == "clarify" else NO_CALL_DECISION


def _category_order(category: str) -> tuple[int, str]:
    return ({ASK_USER: 1, NO_CALL_DECISION: 2}.get(category, 0), category)


class DecisionCell(Frozen):
    first: str
    """What the first annotator decided."""
    second: str
    count: int


class DecisionMatrix(Frozen):
    """How two annotators' decisions line up over the decision points both labeled: rows are the first
    annotator's decision, columns the second's; the diagonal is agreement."""

    first: str
    second: str
    categories: tuple[str, ...]
    """Every decision either annotator made on a shared item: calls by tool, then ask_user, then no_call."""
    cells: tuple[DecisionCell, ...]
    """The non-zero cells, in the order of ``categories`` (row, then column)."""
    n_items: int
    n_agree: int
    examples: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """(first, second, the items) per non-zero cell, for drilling into a cell."""

    def count(self, first: str, second: str) -> int:
        return next((c.count for c in self.cells if (c.first, c.second) == (first, second)), 0)

    def items(self, first: str, second: str) -> tuple[str, ...]:
        return next((ids for f, s, ids in self.examples if (f, s) == (first, second)), ())


def decision_matrix(items: Mapping[str, Mapping[str, GoldCase]], first: str, second: str) -> DecisionMatrix:
    """The decision confusion matrix of annotators ``first`` and ``second`` over ``items`` (item id ->
    annotator -> label, the same mapping ``agreement`` takes); items either of them did not label take no
    part."""
    if first == second:
        raise ValueError(f"a confusion matrix compares two different annotators (both are {first!r})")
    pairs: dict[tuple[str, str], list[str]] = {}
    for item in sorted(items):
        labels = items[item]
        if first in labels and second in labels:
            key = (decision_category(labels[first]), decision_category(labels[second]))
            pairs.setdefault(key, []).append(item)
    categories = tuple(sorted({c for key in pairs for c in key}, key=_category_order))
    rank = {c: i for i, c in enumerate(categories)}
    keys = sorted(pairs, key=lambda k: (rank[k[0]], rank[k[1]]))
    return DecisionMatrix(
        first=first, second=second, categories=categories,
        cells=tuple(DecisionCell(first=a, second=b, count=len(pairs[(a, b)])) for a, b in keys),
        n_items=sum(len(v) for v in pairs.values()), n_agree=sum(len(v) for (a, b), v in pairs.items() if a == b),
        examples=tuple((a, b, tuple(pairs[(a, b)])) for a, b in keys))


__all__ = [
    "ABSENT_VALUE",
    "AgreementReport",
    "AnnotatorAgreement",
    "DecisionCell",
    "DecisionMatrix",
    "FieldAgreement",
    "GroupAgreement",
    "ItemDisagreement",
    "Ratings",
    "Stat",
    "agreement",
    "cohen_kappa",
    "decision_category",
    "decision_matrix",
    "disagreeing_fields",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "label_ratings",
    "majority",
    "percent_agreement",
    "tool_category",
]
