"""Dates and times in arguments: parsed with python-dateutil, relative gold phrases resolved against the
case's ``reference_time``.

The relative phrases understood (case-insensitive, surrounding whitespace ignored) are a small fixed set,
so a gold label means the same thing on every machine:

- ``now``, ``today``, ``tomorrow``, ``yesterday``, ``day after tomorrow``, ``day before yesterday``
- ``in N days|weeks|months|years`` and ``N days|weeks|months|years ago`` (N a number or ``a``/``one``…``ten``)
- ``next <weekday>``: the first such weekday *after* the reference day (on Wednesday 2026-07-01,
  "next Tuesday" is 2026-07-07); ``this <weekday>``: on or after it; ``last <weekday>``: the latest before it
- ``next week|month|year`` and ``last week|month|year``: the reference day moved by one unit

Anything else is parsed as an absolute date or time. Naive times take the ``zone`` given (an IANA zone:
the offset in force on that date, daylight saving time included), else the reference time's zone, else UTC,
so comparisons are always between aware datetimes.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import parser as date_parser
from dateutil.relativedelta import FR, MO, SA, SU, TH, TU, WE, relativedelta

from scorer import canonical

_WEEKDAYS = {"monday": MO, "tuesday": TU, "wednesday": WE, "thursday": TH, "friday": FR,
             "saturday": SA, "sunday": SU}
_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                 "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_UNIT = r"(day|week|month|year)s?"
_COUNT = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_IN_N = re.compile(rf"in {_COUNT} {_UNIT}")
_N_AGO = re.compile(rf"{_COUNT} {_UNIT} ago")
_WEEKDAY_PHRASE = re.compile(r"(next|this|last) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)")
_UNIT_PHRASE = re.compile(r"(next|last) (week|month|year)")
_FIXED = {"today": 0, "tomorrow": 1, "yesterday": -1, "day after tomorrow": 2, "the day after tomorrow": 2,
          "day before yesterday": -2, "the day before yesterday": -2}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Fills the parts a value leaves out (the year of "July 7") when the case has no reference time."""


def is_relative(phrase: str) -> bool:
    return resolve_relative(phrase, _EPOCH) is not None


def _delta(count: int, unit: str) -> relativedelta:
    return relativedelta(**{unit + "s": count})  # type: ignore[arg-type]


def resolve_relative(phrase: str, reference: datetime) -> datetime | None:
    """The datetime a relative phrase names, or None when ``phrase`` is not one of the known phrases.

    Day phrases keep the reference's time of day; a date comparison ignores it anyway.
    """
    text = " ".join(canonical.lowered(phrase.strip()).split())
    if text == "now":
        return reference
    if text in _FIXED:
        return reference + relativedelta(days=_FIXED[text])
    if m := _IN_N.fullmatch(text):
        return reference + _delta(_count(m.group(1)), m.group(2))
    if m := _N_AGO.fullmatch(text):
        return reference - _delta(_count(m.group(1)), m.group(2))
    if m := _WEEKDAY_PHRASE.fullmatch(text):
        which, day = m.groups()
        weekday = _WEEKDAYS[day]
        if which == "next":
            return reference + relativedelta(days=+1, weekday=weekday(+1))
        if which == "this":
            return reference + relativedelta(weekday=weekday(+1))
        return reference + relativedelta(days=-1, weekday=weekday(-1))
    if m := _UNIT_PHRASE.fullmatch(text):
        return reference + _delta(1 if m.group(1) == "next" else -1, m.group(2))
    return None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _WORD_NUMBERS[word]


def parse_when(value: Any, reference: datetime | None, *, relative: bool,
               zone: tzinfo | None = None) -> datetime | None:
    """An aware datetime for ``value`` (a string, or a date/datetime), or None when it is not one.

    With ``relative`` the known relative phrases are resolved against ``reference`` (gold values only:
    an agent passing "tomorrow" to a tool has not produced a date); with ``zone`` the reference is read in
    it first, so "tomorrow" keeps the wall-clock time across a daylight saving change.
    """
    if zone is not None and reference is not None:
        reference = reference.astimezone(zone)
    zone = zone or (reference.tzinfo if reference is not None and reference.tzinfo is not None else UTC)
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time())
    elif isinstance(value, str) and value.strip():
        # Without a reference a relative phrase names no date: the caller reports it, never guesses "now".
        parsed_or_none = resolve_relative(value, reference or _EPOCH) if relative else None
        if parsed_or_none is not None and reference is None:
            return None
        if parsed_or_none is None:
            default = (reference or _EPOCH).replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
            try:
                parsed_or_none = date_parser.parse(value, default=default)
            except (ValueError, OverflowError, TypeError):
                return None
        parsed = parsed_or_none
    else:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=zone)


@lru_cache(maxsize=64)
def zone_named(name: str | None) -> tzinfo | None:
    """The IANA zone ``name`` (validated by the model), or None."""
    return ZoneInfo(name) if name else None


__all__ = ["is_relative", "parse_when", "resolve_relative", "zone_named"]
