"""Tiered argument matchers: how one actual argument value is compared with the gold, per ``ArgRule.match``.

Every matcher compares against the gold value and the rule's ``accept`` values, and answers True (match),
False (mismatch) or None (cannot be settled here: ``semantic`` goes to the judge; a gold value that is not
what its rule says, e.g. an unparseable date, goes to review rather than failing the agent).
``from_call`` needs the results of earlier calls and is checked by the caller (arguments.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final

from scorer import canonical
from scorer.dates import is_relative, parse_when, zone_named
from scorer.model import ArgRule

Verdict = bool | None
Matcher = Callable[[ArgRule, list[Any], Any, "datetime | None"], Verdict]

ABSENT: Final = object()
"""Marks an argument the gold does not set (distinct from a gold value of null)."""


def expected_values(rule: ArgRule, gold: Any) -> list[Any]:
    """The gold value (when set) followed by the rule's further accepted values."""
    head = [] if gold is ABSENT else [gold]
    return head + list(rule.accept) if rule.accept else head


_SAME_MATCHES: Final = frozenset({"ci", "normalized", "regex", "semantic"})
"""Matchers for which a value canonically equal to the gold value always matches (``exact`` and ``one_of``
compare exactly anyway; ``number``, dates, money and phones may not read the gold itself)."""


def match_value(rule: ArgRule, gold: Any, actual: Any, reference: datetime | None) -> Verdict:
    """Compare ``actual`` with the gold value under ``rule``; ``gold`` may be ``ABSENT``."""
    if rule.match == "any":
        return True
    if gold is not ABSENT and rule.match in _SAME_MATCHES and canonical.equal(actual, gold):
        return True  # what those matchers answer for the gold value itself, without normalizing both sides
    values = expected_values(rule, gold)
    if not values:
        return None if rule.match == "semantic" else False
    return MATCHERS[rule.match](rule, values, actual, reference)


def _exact(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    return any(canonical.equal(actual, v) for v in values)


def _ci(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    if not isinstance(actual, str):
        return _exact(rule, values, actual, reference)
    folded = " ".join(actual.casefold().split())
    return any(isinstance(v, str) and " ".join(v.casefold().split()) == folded for v in values)


def normalized_text(value: Any) -> Any:
    """BFCL's string standardization, applied to every string inside ``value``: lower-cased, with spaces
    and ``,./-_*^`` dropped and ``'`` read as ``"`` (its checker's ``standardize_string``, which drops them by
    a regex: one ``str.replace`` each is a C scan that finds nothing in most values, half the regex's cost).
    ``'`` becomes ``"`` only after lower-casing, as there: ``'`` is case-ignorable and ``"`` is not, which
    decides a final sigma (``A'Σ`` → ``a"ς``)."""
    if isinstance(value, str):
        text: str = value  # typed, so the compiled core calls str's methods directly
        text = text.replace(" ", "").replace(",", "").replace(".", "").replace("/", "").replace("-", "") \
            .replace("_", "").replace("*", "").replace("^", "")
        return canonical.lowered(text).replace("'", '"')
    if isinstance(value, (list, tuple)):
        return [normalized_text(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized_text(v) for k, v in value.items()}
    return value


def _normalized(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    got = normalized_text(actual)
    return any(canonical.equal(got, normalized_text(v)) for v in values)


def as_number(value: Any) -> float | None:
    """A finite number from a JSON number or a numeric string; None for anything else (booleans too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().replace(",", ""))
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _number(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    got = as_number(actual)
    wanted = [n for n in (as_number(v) for v in values) if n is not None]
    if not wanted:
        return None
    if got is None:
        return False
    tolerance = rule.tolerance or 0.0
    return any(abs(got - w) <= tolerance or math.isclose(got, w, rel_tol=1e-9) for w in wanted)


def _date(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    zone = zone_named(rule.tz)
    wanted = [w for w in (parse_when(v, reference, relative=True, zone=zone) for v in values) if w is not None]
    if not wanted:
        return None
    got = parse_when(actual, reference, relative=False, zone=zone)
    if got is None:
        return False
    return any(got.astimezone(w.tzinfo).date() == w.date() for w in wanted)


def _datetime(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    zone = zone_named(rule.tz)
    wanted = [w for w in (parse_when(v, reference, relative=True, zone=zone) for v in values) if w is not None]
    if not wanted:
        return None
    got = parse_when(actual, reference, relative=False, zone=zone)
    if got is None:
        return False
    tolerance = rule.tolerance or 0.0
    return any(abs((got - w).total_seconds()) <= tolerance for w in wanted)


def read_as(rule: ArgRule, actual: Any, reference: datetime | None) -> str | None:
    """How a date or time rule read the agent's value (``2026-03-10T15:00:00-05:00``), for the note, when
    that is not what the value already says: a note must show what it compared."""
    if rule.match not in ("date", "datetime"):
        return None
    got = parse_when(actual, reference, relative=False, zone=zone_named(rule.tz))
    if got is None:
        return None
    shown = got.date().isoformat() if rule.match == "date" else got.isoformat()
    return None if isinstance(actual, str) and actual.strip() == shown else shown


_CURRENCY_SYMBOLS: Final = {"US$": "USD", "C$": "CAD", "A$": "AUD", "$": "USD", "€": "EUR", "£": "GBP",
                            "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "R$": "BRL"}
_SYMBOL = "|".join(re.escape(s) for s in sorted(_CURRENCY_SYMBOLS, key=len, reverse=True))
_MONEY = re.compile(
    rf"(?P<sign>-)?\s*(?P<pre>{_SYMBOL}|[A-Za-z]{{3}})?\s*(?P<sign2>-)?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    rf"\s*(?P<post>{_SYMBOL}|[A-Za-z]{{3}})?")


def parse_money(value: Any, default_currency: str | None) -> tuple[Decimal, str | None] | None:
    """``(amount, ISO currency or None)`` from "$100", "100 USD", "USD 1,250.50", 100, or
    ``{"amount": 100, "currency": "USD"}``; None when ``value`` is not an amount."""
    currency: str | None = None
    if isinstance(value, dict) and "amount" in value:
        code = value.get("currency")
        currency = code.upper() if isinstance(code, str) else None
        value = value["amount"]
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return Decimal(str(value)), currency or _upper(default_currency)
    if not isinstance(value, str):
        return None
    m = _MONEY.fullmatch(value.strip())
    if m is None:
        return None
    pre, post = m.group("pre"), m.group("post")
    if pre and post:
        return None
    mark = pre or post
    if mark:
        currency = _CURRENCY_SYMBOLS.get(mark) or mark.upper()
    try:
        amount = Decimal(m.group("num").replace(",", ""))
    except InvalidOperation:
        return None
    if m.group("sign") or m.group("sign2"):
        amount = -amount
    return amount, currency or _upper(default_currency)


def _upper(code: str | None) -> str | None:
    return code.upper() if code else None


def _currency(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    wanted = [w for w in (parse_money(v, rule.currency) for v in values) if w is not None]
    if not wanted:
        return None
    got = parse_money(actual, rule.currency)
    if got is None:
        return False
    tolerance = Decimal(str(rule.tolerance or 0))
    for amount, currency in wanted:
        same_currency = currency is None or got[1] is None or currency == got[1]
        if same_currency and abs(got[0] - amount) <= tolerance:
            return True
    return False


@lru_cache(maxsize=65536)
def e164(value: str, region: str | None) -> str | None:
    """The E.164 form of a phone number (``+14155550123``), or None when it does not parse."""
    import phonenumbers  # on first use: it takes a third of a second to import, and few cases have phones

    try:
        number = phonenumbers.parse(value, region.upper() if region else None)
    except phonenumbers.NumberParseException:
        return None
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def _phone_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) else None


def _phone(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    wanted = {n for n in (e164(t, rule.region) for t in map(_phone_text, values) if t) if n}
    if not wanted:
        return None
    text = _phone_text(actual)
    return text is not None and e164(text, rule.region) in wanted


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _regex(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    if rule.pattern is None:  # ArgRule refuses this; kept total for type checking
        return None
    text = actual if isinstance(actual, str) else canonical.dumps(actual)
    return _compiled(rule.pattern).fullmatch(text) is not None or _exact(rule, values, actual, reference)


def _semantic(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    # Identical to the gold needs no judge; anything else is the judge's (or a person's) call.
    return True if _exact(rule, values, actual, reference) else None


def _always(rule: ArgRule, values: list[Any], actual: Any, reference: datetime | None) -> Verdict:
    return True


MATCHERS: Final[dict[str, Matcher]] = {
    "exact": _exact,
    "one_of": _exact,
    "any": _always,
    "ci": _ci,
    "normalized": _normalized,
    "number": _number,
    "date": _date,
    "datetime": _datetime,
    "currency": _currency,
    "phone": _phone,
    "regex": _regex,
    "semantic": _semantic,
    "from_call": _always,  # the value's source is checked by the caller, against earlier results
}

def show(value: Any) -> str:
    """A value as it reads in a note: strings quoted (``'2'`` is not ``2``), the rest as short JSON."""
    kind = type(value)
    if kind is int:  # the JSON of the commonest values, without json.dumps (a note is written per error)
        text = str(value)
    elif kind is bool or value is None:
        text = "null" if value is None else "true" if value else "false"
    elif isinstance(value, str):
        text = f"'{value}'" if value.isprintable() and "'" not in value else canonical.encode_string(value)
    else:
        text = canonical.json_text(canonical.normalize(value), False)
    return text if len(text) <= 80 else text[:79] + "…"


def describe(rule: ArgRule, gold: Any, reference: datetime | None) -> str:
    """What the rule expects, for a note: ``C-1042 (exact)``, ``10 ± 0.5 (number)``, …"""
    values = expected_values(rule, gold)
    if len(values) > 1:  # the gold value is often listed among the accepted ones too
        kept: list[Any] = []
        for v in values:  # against the values kept only: canonical equality is an equivalence
            for w in kept:
                if canonical.equal(v, w):
                    break
            else:
                kept.append(v)
        values = kept
    shown = ", ".join([show(v) for v in values]) if values else "nothing"
    if len(values) > 1:
        shown = "one of " + shown
    kind = rule.match
    if kind == "any":
        return "any value (any)"
    if kind == "number" and rule.tolerance:
        return f"{shown} ± {rule.tolerance:g} (number)"
    if kind == "regex":
        return f"a full match of {rule.pattern} (regex)"
    if kind == "semantic":
        return f"{shown}: {rule.intent} (semantic)"
    if kind == "ci":
        return f"{shown}, ignoring case (ci)"
    if kind == "normalized":
        return f"{shown}, ignoring case, spaces and ,./-_*^ (normalized)"
    if kind in ("date", "datetime"):
        zone = zone_named(rule.tz)
        resolved = []
        for v in values:
            when = parse_when(v, reference, relative=True, zone=zone)
            day = (when.date().isoformat() if kind == "date" else when.isoformat()) if when else "?"
            if isinstance(v, str) and is_relative(v):
                local = reference.astimezone(zone) if reference and zone else reference
                resolved.append(f"{day} ({v!r} from {local.date().isoformat() if local else 'no reference'})")
            elif when is not None and not (isinstance(v, str) and v.strip() == day):
                resolved.append(f"{day} (from {show(v)})")
            else:
                resolved.append(show(v))
        in_zone = f", {rule.tz}" if rule.tz else ""
        return ("one of " if len(resolved) > 1 else "") + ", ".join(resolved) + f" ({kind}{in_zone})"
    if kind == "currency" and rule.currency:
        return f"{shown} (currency, default {rule.currency})"
    if kind == "from_call":
        return f"a value from the result of expected call {rule.from_call} (from_call)"
    if kind == "phone" and rule.region:
        return f"{shown} (phone, region {rule.region})"
    return f"{shown} ({kind})"


__all__ = ["ABSENT", "MATCHERS", "as_number", "describe", "e164", "expected_values", "match_value",
           "normalized_text", "parse_money", "read_as", "show"]
