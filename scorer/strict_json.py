"""The one strict JSON reader every toolgold reader uses (files, ``--tools``, agent and API replies).

Python's ``json`` accepts more than JSON: ``NaN``, ``Infinity`` and ``-Infinity``, numbers that overflow
to infinity (``1e400``), lone UTF-16 surrogates (``"\\ud800"``) and nesting until the interpreter's
recursion limit. None of these survive a round trip (pydantic writes non-finite floats as ``null``,
SQLite and UTF-8 refuse lone surrogates, deep values crash whatever walks them recursively), so they
are refused here, at parse time, with one ``InvalidRecord`` naming the source and line.

``loads`` parses text; ``check`` applies the same rules to a value something else already decoded
(an SDK's parsed reply). ``decode_at`` is ``loads`` for one value inside a larger text, for the
whole-file importers that need the line of each item.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

import orjson

from scorer.errors import InvalidRecord

MAX_DEPTH = 200
"""Values nested deeper than this are rejected: no real tool argument needs it, and it bounds recursion."""

NOT_FINITE = "NaN/Infinity is not JSON"
_DEEP = "nested deeper than"
_SURROGATE = "a string holds a lone UTF-16 surrogate"

def _maybe_surrogate(text: str) -> bool:
    """Whether ``text`` could hold a lone surrogate: an escape ``\\uD...`` or a raw one in a str. Only such
    texts are walked; substring search and ``isascii`` run at memory speed (a regex was 40x the parse)."""
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):  # most lines have no escape: one pass
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _NotFinite(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _refuse_constant(token: str) -> Any:
    raise _NotFinite(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _NotFinite(token)
    return value


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


_DIGITS_AS_NINE = bytes.maketrans(b"012345678", b"999999999")
_LONG_NUMBER = b"9" * 19
"""19 digits in a row: possibly an integer beyond 64 bits, which orjson would turn into a float. Found by
mapping every digit to 9 and searching (a tenth of the time a regex takes on a record)."""


def _fast(data: bytes) -> Any:
    """``data`` parsed by orjson when that is sure to agree with the rules below, else ``_SLOW``.

    orjson is 2-4x faster than ``json`` and already refuses what these rules refuse, except two things:
    it reads integers beyond 64 bits as floats (any run of 19 digits goes to the slow path) and it
    nests up to 1,024 levels (the depth is checked when the brackets could exceed ``MAX_DEPTH``). It
    refuses NaN and Infinity, numbers that overflow (``1e400``), invalid UTF-8 and lone surrogates,
    escaped or raw; whatever it refuses goes to the slow path, whose verdict and message stand.
    No value it accepts needs walking for surrogates or non-finite floats (measured: that walk was a
    third of the time of reading a gold file)."""
    if has_long_number(data):
        return _SLOW
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _SLOW
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _too_deep(value):
        return _SLOW
    return value


def has_long_number(data: bytes) -> bool:
    """Whether ``data`` may hold an integer beyond 64 bits (above 2**64 - 1 or below -2**63), which orjson reads
    as a float. Looked for among runs of 19 digits or more (``_LONG_NUMBER``; any shorter integer fits). Only a
    run a JSON number could start at (the start of ``data``, or after whitespace, ``:``, ``,`` or ``[``, a ``-``
    between) and that no ``.``, ``e`` or ``E`` follows (then it is a float's, read alike by orjson and ``json``)
    counts: digits in a float's fraction or exponent, or right after a quote, a letter or a slash (an id or a
    timestamp in a string) cannot be an integer token. A run inside a string after a space or a colon still
    counts: a false alarm only costs that record the slow path."""
    nines = data.translate(_DIGITS_AS_NINE)
    at = nines.find(_LONG_NUMBER)  # not ``in``: see canonical._orjson_may_differ
    size = len(nines)
    while at >= 0:
        end = at + len(_LONG_NUMBER)
        while end < size and nines[end] == _NINE:
            end += 1
        before = at - 1
        negative = before >= 0 and data[before] == _MINUS
        if negative:
            before -= 1
        starts_integer = before < 0 or data[before] in _NUMBER_STARTS_AFTER
        ends_integer = end == size or data[end] not in _FLOAT_GOES_ON
        if starts_integer and ends_integer and (
                end - at > 20 or int(data[at:end]) > (_MOST_NEGATIVE if negative else _MOST_POSITIVE)):
            return True
        at = nines.find(_LONG_NUMBER, end)  # the next run: ``end`` is not a digit, so a run found starts there
    return False


_MOST_POSITIVE: Final = 2**64 - 1
_MOST_NEGATIVE: Final = 2**63
"""The largest integer orjson reads exactly, and the magnitude of the most negative."""
_NINE: Final = ord("9")
_MINUS: Final = ord("-")
_NUMBER_STARTS_AFTER: Final = frozenset(b" \t\n\r:,[")
"""The bytes a JSON number can follow (its ``-`` aside); a number can also start the document."""
_FLOAT_GOES_ON: Final = frozenset(b".eE")
"""A run of digits followed by one of these is a float's integer part."""


def too_deep(value: Any) -> bool:
    """Whether the parsed ``value`` nests deeper than ``MAX_DEPTH`` (what ``loads`` refuses); leaves of any other
    type than dict, list and tuple count as values."""
    return _too_deep(value)


_SLOW: Any = object()


def loads(text: str | bytes, *, source: str | None = None, line: int | None = None) -> Any:
    """Parse one JSON document strictly; every failure is an ``InvalidRecord`` at ``source:line``."""
    if isinstance(text, bytes):
        value = _fast(text)
    else:
        try:
            value = _fast(text.encode("utf-8"))
        except UnicodeEncodeError:  # a raw lone surrogate in the text: the slow path says where
            value = _SLOW
    if value is not _SLOW:
        return value
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRecord(f"not valid UTF-8 (byte {exc.start})", source=source, line=line) from None
    if text.startswith("\ufeff"):  # as json.loads says: only the first line of a file may carry one
        raise InvalidRecord("not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)",
                            source=source, line=line)
    value, end = _decode(text, 0, source=source, line=line, whole_text=True)
    rest = text[end:]
    if rest.strip(" \t\r\n"):
        column = end + len(rest) - len(rest.lstrip(" \t\r\n")) + 1
        raise InvalidRecord(f"not valid JSON: Extra data (column {column})", source=source, line=line)
    return _checked(value, text, source=source, line=line)


def decode_at(text: str, pos: int, *, source: str | None = None, line: int | None = None) -> tuple[Any, int]:
    """The value starting at ``pos`` in ``text`` and the position just after it, checked like ``loads``.

    Syntax errors carry the line of ``text`` where they happened; other problems ``line`` (the line the
    value starts on).
    """
    value, end = _decode(text, pos, source=source, line=line, whole_text=False)
    return _checked(value, text[pos:end], source=source, line=line), end


def check(value: Any, *, source: str | None = None, line: int | None = None) -> Any:
    """Apply ``loads``'s rules to an already-decoded value (no non-finite float, lone surrogate or
    nesting deeper than ``MAX_DEPTH``); return it unchanged or raise ``InvalidRecord``."""
    problem = _problem(value, check_leaves=True)
    if problem:
        raise InvalidRecord(problem, source=source, line=line)
    return value


def embedded_problem(text: str) -> str | None:
    """Why JSON text carried inside a string (tool-call arguments) would parse into a value that cannot be
    stored (a lone surrogate, nesting deeper than ``MAX_DEPTH``), or None. Text that is not JSON at all
    is not a problem here: it stays a string."""
    if text.count("[") + text.count("{") <= MAX_DEPTH and not _maybe_surrogate(text):
        return None
    try:
        loads(text)
    except InvalidRecord as exc:
        return exc.message if exc.message.startswith((_DEEP, _SURROGATE)) else None
    return None


def _decode(text: str, pos: int, *, source: str | None, line: int | None, whole_text: bool) -> tuple[Any, int]:
    if whole_text:  # a whole document: leading white space allowed, errors at the caller's line
        pos = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        return _DECODER.raw_decode(text, pos)
    except _NotFinite as refused:  # a name of its own per clause: compiled (mypyc), a name holds one type
        if not whole_text or line is None:  # a document: name the line the token is on
            at = _offset_outside_strings(text, pos, refused.token)
            line = text.count("\n", 0, at) + 1 if at is not None else line
        shown = refused.token if len(refused.token) <= 24 else refused.token[:21] + "..."
        raise InvalidRecord(f"{NOT_FINITE} (found {shown})", source=source, line=line) from None
    except RecursionError:
        raise InvalidRecord(f"{_DEEP} {MAX_DEPTH} levels", source=source, line=line) from None
    except json.JSONDecodeError as bad:
        raise InvalidRecord(f"not valid JSON: {bad.msg} (column {bad.colno})", source=source,
                            line=bad.lineno if not whole_text or line is None else line) from None
    except ValueError as other:  # e.g. an integer longer than Python's 4,300-digit conversion limit
        raise InvalidRecord(f"not valid JSON: {other}", source=source, line=line) from None


def _offset_outside_strings(text: str, start: int, token: str) -> int | None:
    """Where ``token`` first appears in ``text`` after ``start``, not inside a string (errors only)."""
    in_string = escaped = False
    for at in range(start, len(text)):
        ch = text[at]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith(token, at):
            return at
    return None


def _checked(value: Any, text: str, *, source: str | None, line: int | None) -> Any:
    # Nesting depth cannot exceed the number of opening brackets; only walk values that could be too deep
    # or could hold a surrogate (the common record costs two counts and one regex scan).
    deep = text.count("[") + text.count("{") > MAX_DEPTH
    surrogate = _maybe_surrogate(text)
    if deep or surrogate:
        problem = _problem(value, check_leaves=surrogate)
        if problem:
            raise InvalidRecord(problem, source=source, line=line)
    return value


def _problem(value: Any, *, check_leaves: bool) -> str | None:
    """What makes ``value`` not plain JSON, or None. Iterative: it must not recurse on deep values."""
    depth, frontier = 0, [value]
    while frontier:
        nxt: list[Any] = []
        for v in frontier:
            kind = type(v)
            if kind is dict:
                for key, item in v.items():
                    if check_leaves and type(key) is str and _lone_surrogate(key):
                        return _surrogate_message(key)
                    nxt.append(item)
            elif kind is list or kind is tuple:
                nxt.extend(v)
            elif check_leaves:
                if kind is str:
                    if _lone_surrogate(v):
                        return _surrogate_message(v)
                elif kind is float and not math.isfinite(v):
                    return f"{NOT_FINITE} (found {v!r})"
        if nxt:
            depth += 1
            if depth > MAX_DEPTH:
                return f"{_DEEP} {MAX_DEPTH} levels"
        frontier = nxt
    return None


def plain_json(value: Any) -> bool:
    """Whether ``value`` is made of plain JSON values only, which its JSON text gives back alike: dicts with
    string keys, lists, strings without a lone surrogate, integers, finite floats, booleans and None (exactly
    these types: a tuple, a str subclass or anything else is not), nested no deeper than ``loads`` takes. The
    walk of ``_problem``, which asks less of the types (a tuple passes there: ``json`` writes it as a list)."""
    depth, frontier = 0, [value]
    while frontier:
        nxt: list[Any] = []
        for v in frontier:
            kind = type(v)
            if kind is dict:
                for key, item in v.items():
                    if type(key) is not str or (not key.isascii() and _lone_surrogate(key)):
                        return False
                    nxt.append(item)
            elif kind is list:
                nxt.extend(v)
            elif kind is str:
                if not v.isascii() and _lone_surrogate(v):
                    return False
            elif kind is float:
                if not math.isfinite(v):
                    return False
            elif not (kind is int or kind is bool or v is None):
                return False
        if nxt:
            depth += 1
            if depth > MAX_DEPTH:
                return False
        frontier = nxt
    return True


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than ``MAX_DEPTH``: ``_problem(value, check_leaves=False)`` is not None,
    faster (that walk was a fifth of converting a record): a level's children are gathered by C loops
    (``extend``), not one by one."""
    depth, frontier = 0, [value]
    while frontier:
        nxt: list[Any] = []
        for v in frontier:
            kind = type(v)
            if kind is dict:
                nxt.extend(v.values())
            elif kind is list or kind is tuple:
                nxt.extend(v)
        if nxt:
            depth += 1
            if depth > MAX_DEPTH:
                return True
        frontier = nxt
    return False


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_message(text: str) -> str:
    at = next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)
    return f"{_SURROGATE} (\\u{ord(text[at]):04x} at character {at + 1}): not valid Unicode"


__all__ = ["MAX_DEPTH", "NOT_FINITE", "check", "decode_at", "embedded_problem", "has_long_number", "loads", "too_deep"]
