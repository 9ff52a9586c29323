"""Judge calibration: how often the judge agrees with the reviewers who decided on its verdicts.

Pure functions over adjudications. Agreement is accuracy (share of items where the reviewer's verdict is
the judge's) and Cohen's kappa (``scorer.agreement.cohen_kappa``: the judge and the reviewers as two
raters), per question type and prompt version, overall and per period. Replies without a usable verdict
(``needs_review``) are counted apart: there is nothing to agree with. A prompt version whose accuracy falls
from one period to the next, or sits well below another version of the same question, is flagged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Final, Literal

from labeler.store import Adjudication
from scorer.agreement import cohen_kappa

Period = Literal["week", "month"]
DROP: Final = 0.10
"""A fall in accuracy of this much (10 points) is flagged."""
MIN_ITEMS: Final = 5
"""Groups with fewer decided items are shown but never flagged: too few to call a drop."""


@dataclass(frozen=True)
class AgreementRow:
    kind: str
    prompt_version: str
    period: str | None
    """None: all time."""
    n: int
    """Items with a judge verdict and a reviewer's verdict."""
    agree: int
    accuracy: float | None
    kappa: float | None
    kappa_note: str | None
    unanswered: int
    """Items where the judge gave no usable verdict (needs_review)."""
    dropped: bool = False
    drop_note: str = ""


@dataclass(frozen=True)
class Calibration:
    overall: tuple[AgreementRow, ...]
    over_time: tuple[AgreementRow, ...]

    @property
    def drops(self) -> tuple[AgreementRow, ...]:
        return tuple(r for r in (*self.overall, *self.over_time) if r.dropped)


def period_of(stamp: str, period: Period) -> str:
    day = date.fromisoformat(stamp[:10])
    if period == "month":
        return f"{day.year:04d}-{day.month:02d}"
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def agreement_row(kind: str, prompt_version: str, period: str | None,
                  items: Sequence[Adjudication]) -> AgreementRow:
    pairs = [(a.judge_verdict, a.reviewer_verdict) for a in items if a.judge_verdict != "needs_review"]
    agree = sum(j == r for j, r in pairs)
    stat = cohen_kappa(pairs)
    return AgreementRow(kind, prompt_version, period, len(pairs), agree, agree / len(pairs) if pairs else None,
                        stat.value, stat.reason, len(items) - len(pairs))


def _groups(items: Iterable[Adjudication],
            key: Callable[[Adjudication], tuple[str, ...]]) -> dict[tuple[str, ...], list[Adjudication]]:
    out: dict[tuple[str, ...], list[Adjudication]] = {}
    for a in items:
        out.setdefault(key(a), []).append(a)
    return out


def _flag_versions(rows: list[AgreementRow], drop: float, min_items: int) -> list[AgreementRow]:
    """Mark a prompt version well below the best other version of the same question."""
    out = []
    for row in rows:
        peers = [r for r in rows if r.kind == row.kind and r.prompt_version != row.prompt_version
                 and r.n >= min_items and r.accuracy is not None]
        best = max(peers, key=lambda r: r.accuracy or 0.0, default=None)
        if (best is not None and row.n >= min_items and row.accuracy is not None and best.accuracy is not None
                and best.accuracy - row.accuracy >= drop):
            row = AgreementRow(**{**row.__dict__, "dropped": True,
                                  "drop_note": f"{best.accuracy - row.accuracy:.0%} below {best.prompt_version}"})
        out.append(row)
    return out


def _flag_periods(rows: list[AgreementRow], drop: float, min_items: int) -> list[AgreementRow]:
    """Mark a period whose accuracy fell from the previous period of the same prompt version."""
    out = []
    previous: dict[tuple[str, str], AgreementRow] = {}
    for row in rows:
        group = (row.kind, row.prompt_version)
        before = previous.get(group)
        if (before is not None and before.accuracy is not None and row.accuracy is not None
                and before.n >= min_items and row.n >= min_items and before.accuracy - row.accuracy >= drop):
            row = AgreementRow(**{**row.__dict__, "dropped": True,
                                  "drop_note": f"down {before.accuracy - row.accuracy:.0%} from {before.period}"})
        if row.n:
            previous[group] = row
        out.append(row)
    return out


def calibration(adjudications: Iterable[Adjudication], *, period: Period = "month", drop: float = DROP,
                min_items: int = MIN_ITEMS) -> Calibration:
    items = list(adjudications)
    overall = [agreement_row(k, v, None, g) for (k, v), g in
               sorted(_groups(items, lambda a: (a.kind, a.prompt_version)).items())]
    timeline = [agreement_row(k, v, p, g) for (k, v, p), g in
                sorted(_groups(items, lambda a: (a.kind, a.prompt_version, period_of(a.created_at, period))).items())]
    return Calibration(tuple(_flag_versions(overall, drop, min_items)), tuple(_flag_periods(timeline, drop, min_items)))


def _fmt(value: float | None, pattern: str) -> str:
    return "–" if value is None else format(value, pattern)


def calibration_lines(cal: Calibration) -> list[str]:
    """The calibration as plain text (``toolgold judge stats``)."""
    if not cal.overall:
        return ["no adjudicated verdicts yet: reviewers decide judge items on the Adjudication page"]
    lines = ["question           prompt version        decided  accuracy  kappa   no verdict"]
    for r in cal.overall:
        flag = f"  DROP: {r.drop_note}" if r.dropped else ""
        lines.append(f"{r.kind:<18} {r.prompt_version:<21} {r.n:>7}  {_fmt(r.accuracy, '.1%'):>8}  "
                     f"{_fmt(r.kappa, '.3f'):>5}  {r.unanswered:>10}{flag}")
    lines += ["", "over time:"]
    for r in cal.over_time:
        flag = f"  DROP: {r.drop_note}" if r.dropped else ""
        lines.append(f"  {r.period}  {r.kind:<18} {r.prompt_version:<21} {r.n:>5}  {_fmt(r.accuracy, '.1%'):>8}  "
                     f"{_fmt(r.kappa, '.3f'):>5}{flag}")
    return lines


__all__ = ["DROP", "MIN_ITEMS", "AgreementRow", "Calibration", "Period", "agreement_row", "calibration",
           "calibration_lines", "period_of"]
