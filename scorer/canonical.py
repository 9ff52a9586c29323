"""Canonical JSON: the one way toolgold serializes values for comparing, hashing and saving.

Keys are sorted, separators are compact and integral floats collapse to ints (``5.0`` and ``5`` are
the same argument value), so two structurally equal values always give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Final

import orjson

from scorer.errors import InvalidRecord


class NonFiniteNumber(InvalidRecord, ValueError):
    """A value holds NaN or ±Infinity, which JSON cannot carry: refused rather than written as ``null``
    (orjson, pydantic) or as the invalid text ``NaN`` (the stdlib ``json``). ``path`` names where it sits
    (``calls[0].arguments.amount``; ``(the value)`` for the value itself)."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 path: str = "") -> None:
        self.path = path
        super().__init__(message, source=source, line=line)


_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def non_finite_path(value: Any) -> str | None:
    """Where ``value`` holds a NaN or an infinite float (the first one, depth first), or None."""
    found = _non_finite(value)
    return None if found is None else found[0]


def refuse_non_finite(value: Any) -> None:
    """``NonFiniteNumber`` naming where ``value`` holds a NaN or ±Infinity; nothing when it holds none."""
    if not _any_non_finite(value):
        return
    found = _non_finite(value)
    if found is not None:
        path, bad = found
        name = "NaN" if bad != bad else "Infinity" if bad > 0 else "-Infinity"
        raise NonFiniteNumber(f"{path}: {name} is not a JSON number", path=path)


def _any_non_finite(value: Any) -> bool:
    """Whether ``value`` holds a NaN or an infinite float: one walk without paths (the common answer is no)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict:
            push(item.values())
        elif kind is list or kind is tuple:
            push(item)
        elif kind is float:
            if item - item != 0:  # NaN - NaN and inf - inf are NaN
                return True
        elif isinstance(item, dict):
            push(item.values())
        elif isinstance(item, (list, tuple)):
            push(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return True
    return False


def _non_finite(value: Any) -> tuple[str, float] | None:
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                key = str(key)
                step = (f".{key}" if path else key) if _SIMPLE_KEY.match(key) else f"[{json.dumps(key)}]"
                stack.append((child, path + step))
        elif isinstance(item, (list, tuple)):
            for n in range(len(item) - 1, -1, -1):  # (a generator here trips mypyc)
                stack.append((item[n], f"{path}[{n}]"))
        elif isinstance(item, float) and not math.isfinite(item):
            return path or "(the value)", item
    return None


def normalize(value: Any) -> Any:
    """Return ``value`` with integral floats turned into ints, recursively (tuples become lists)."""
    # Exact type checks, most common first: this walks every imported transcript.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): normalize(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [normalize(v) for v in value]
    if kind is float:
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, float):
        return normalize(float(value))
    return value


_STR_LOWER: Final = str.lower


def lowered(text: str) -> str:
    """``text.lower()`` as CPython does it, in the compiled core too: mypyc compiles ``str.lower`` to a
    character-by-character mapping that misses the one rule with context, a final sigma (``"ΟΔΟΣ".lower()``
    is ``"οδος"``, not ``"οδοσ"``). An ASCII string has no sigma, and takes mypyc's faster path."""
    return text.lower() if text.isascii() else _STR_LOWER(text)


encode_string: Final = encode_basestring
"""A string as ``json.dumps(value, ensure_ascii=False)`` writes it (what it calls; C where the json
accelerator is built)."""


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _c_encoder(key_separator: str, item_separator: str) -> Any:
    """The C encoder ``json.dumps(sort_keys=True, ensure_ascii=False)`` builds, through four interpreted
    frames, on every call with a keyword; made once here. No cycle check: a value a model holds has none."""
    if c_make_encoder is None:  # CPython without its json accelerator
        return None
    return c_make_encoder(None, _unserializable, encode_basestring, None, key_separator, item_separator,
                          True, False, True)


_COMPACT_ENCODER: Final = _c_encoder(":", ",")
_SPACED_ENCODER: Final = _c_encoder(": ", ", ")


def json_text(value: Any, compact: bool) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)`` of a value without cycles, with
    ``separators=(",", ":")`` when ``compact``: the same text, without entering interpreted Python (tests/
    scorer/test_canonical_json_values.py holds the two equal)."""
    encoder = _COMPACT_ENCODER if compact else _SPACED_ENCODER
    if encoder is None:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":") if compact else None)
    if type(value) is str:  # as json.dumps: a string is written by itself, never through the encoder
        return encode_basestring(value)
    return "".join(encoder(value, 0))


def dumps(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, compact, UTF-8 kept, integral floats as ints): the key
    values are compared and hashed by. A NaN is written as ``NaN`` here (the scorer compares whatever an agent
    sent); what is stored or exported goes through ``dumps_stored``, which refuses it."""
    kind = type(value)
    # The commonest values (enum members and the values checked against them) written as ``json.dumps``
    # writes them, without building an encoder through two interpreted frames.
    if kind is str:
        return encode_string(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return "null" if value is None else "true" if value else "false"
    return json_text(normalize(value), True)


def dumps_stored(value: Any) -> str:
    """``dumps(value)`` for writing (the store, files): the same text, but ``NonFiniteNumber`` naming where
    ``value`` holds a NaN or ±Infinity, which JSON cannot carry."""
    try:
        return json.dumps(normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    except ValueError:
        refuse_non_finite(value)
        raise


_INTEGRAL_FLOAT = re.compile(r"\.0[,\]}]|\.0$|[eE]\+")
"""Where json.dumps may have written an integral float (``5.0``, ``-0.0``, ``1e+16``): a non-integral float
never ends in ``.0`` and has a negative exponent. A match inside a string is only a false alarm."""

_EXPONENT = re.compile(rb"e[-+][0-9]")


def _orjson_may_differ(data: bytes) -> bool:
    """Whether orjson's text may differ from ``dumps``: an integral float (``5.0``, ``-0.0``: collapsed to an
    int by ``dumps``), a float in exponent form (always signed in orjson: ``1e+16``, ``1.5e-7``; Python
    writes ``1.5e-07``) or one between 1e-5 and 1e-4, which orjson writes positionally (``0.000015``) and
    Python in exponent form (``1.5e-05``). Otherwise the two agree byte for byte (strings escape the same way
    with UTF-8 kept, keys sort by code point, floats are the shortest repr): tests/scorer/
    test_canonical_json_values.py checks it over random values, every float magnitude and the real
    datasets. Substring searches, not one regex (a regex over a 28 KB transcript took ~1 ms); a hit inside
    a string is only a false alarm (that record takes the slower path)."""
    # ``find``, not ``in``: for bytes, ``in`` first tries its operand as an integer and raises and clears a
    # TypeError for every search (~1.8k instructions each, more than a search of a gold case's text).
    if data.find(b".0,") >= 0 or data.find(b".0]") >= 0 or data.find(b".0}") >= 0 or data.endswith(b".0"):
        return True
    return _fraction_may_differ(data)


def _fraction_may_differ(data: bytes) -> bool:
    """``_orjson_may_differ`` for a text with no integral float in it (``normalize``: a non-integral float's
    text never ends in ``.0``): only the exponent forms and the positional ``0.0000...`` are left to look for."""
    if data.find(b"0.0000") >= 0:
        return True
    if data.find(b"e+") >= 0 or data.find(b"e-") >= 0:
        return any(m.start() and 48 <= data[m.start() - 1] <= 57 for m in _EXPONENT.finditer(data))
    return False


def dumps_json_values(value: Any) -> str:
    """``dumps(value)`` for a value made of JSON types with string keys only (a pydantic ``model_dump(mode=
    "json")``), faster: serialized by orjson with sorted keys, and by ``dumps`` only when the text shows a
    number orjson may write differently. Keys that are not strings would sort differently: pass such
    values to ``dumps``. ``NonFiniteNumber`` for a value holding NaN or ±Infinity (which orjson writes as
    ``null``: looked for only when the text has a ``null``)."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # keys that are not strings, integers beyond 64 bits
        return _dumps_json_values_stdlib(value)
    if data.find(b"null") >= 0:  # (``find``: see ``_orjson_may_differ``)
        refuse_non_finite(value)
    return _canonical_from_orjson(value, data)


def dumps_finite_json_values(value: Any) -> str:
    """``dumps_json_values(value)`` for a value already known to hold no NaN or ±Infinity: what ``orjson.loads``
    or ``scorer.formats.to_json`` returned (neither can return one). The ``null`` a record nearly always holds
    (``"content": null``) then needs no walk through the whole value (a tenth of converting a record)."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # keys that are not strings, integers beyond 64 bits
        return _dumps_json_values_stdlib(value)
    return _canonical_from_orjson(value, data)


def _canonical_from_orjson(value: Any, data: bytes) -> str:
    """``dumps(value)``, given ``data``, orjson's text of it with sorted keys. A value that holds no float is
    written by orjson as ``dumps`` writes it: asked of the value first (a walk, ~5x cheaper than searching the
    text of a BFCL tool list for float patterns, which its descriptions set off too: "a rating from 1.0 to 5.0,
    ...", "default is 8.854e-12"). Otherwise the text is searched (``_orjson_may_differ``); integral floats,
    which ``dumps`` writes as integers, are collapsed (``normalize``, what ``dumps`` writes) and the value
    written again, and that text is ``dumps``' unless it holds a float orjson writes otherwise (an exponent
    form, ``0.0000...``; ``.0`` can now only be in a string). Only then ``json``'s encoder, twice (each ~10x
    orjson)."""
    if not holds_float(value) or not _orjson_may_differ(data):
        return data.decode("utf-8")
    collapsed = normalize(value)
    try:
        data = orjson.dumps(collapsed, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return _dumps_json_values_stdlib(value)
    if not _fraction_may_differ(data) or not holds_float(collapsed):
        return data.decode("utf-8")
    return _dumps_json_values_stdlib(value)


def holds_float(value: Any) -> bool:
    """Whether a JSON value holds a float anywhere (a value of another type counts as one: it may)."""
    kind = type(value)
    items: Any
    if kind is dict:
        items = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind is str or kind is int or kind is bool or value is None:
        return False
    elif isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:  # a float, or a type JSON has no name for: True
        return not isinstance(value, (str, int))
    for item in items:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is float or holds_float(item):
            return True
    return False


def dumps_finite_json_values_each(values: list[Any]) -> list[str]:
    """``[dumps_finite_json_values(v) for v in values]``, faster for many small values (a transcript's turns):
    orjson writes each, and whether any text may differ is asked once, of the texts joined by commas (every
    pattern ``_orjson_may_differ`` looks for in one text is still there, a top-level ``5.0`` becoming
    ``5.0,``); only when it may are they written one by one."""
    try:
        datas = [orjson.dumps(v, option=orjson.OPT_SORT_KEYS) for v in values]
    except (TypeError, orjson.JSONEncodeError):  # keys that are not strings, integers beyond 64 bits
        return [dumps_finite_json_values(v) for v in values]
    if holds_float(values) and _orjson_may_differ(b",".join(datas)):
        return [dumps_finite_json_values(v) for v in values]
    return [d.decode("utf-8") for d in datas]


def dumps_float_free(value: Any) -> str:
    """``dumps(value)`` for JSON values with string keys that hold no float at all (the caller knows it from
    their type: ``scorer.formats.numberless_fields``): orjson's text as it is. On strings, integers, booleans
    and null orjson and ``json`` agree byte for byte (floats are where they differ: ``_orjson_may_differ``)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits, lone surrogates
        return dumps_finite_json_values(value)


def dumps_finite_with(value: dict[str, Any], texts: dict[str, str]) -> str:
    """``dumps_finite_json_values`` of ``value`` with the keys of ``texts`` added, each with the value whose
    canonical text it is (written once and kept, or written faster): canonical JSON of an object is its
    members' canonical texts in key order, so the text is the same as if the values had been in ``value``."""
    if not texts:
        return dumps_finite_json_values(value)
    if texts.keys() & value.keys():
        raise ValueError(f"keys both given as values and as texts: {sorted(texts.keys() & value.keys())}")
    pieces: list[str] = []
    rest = sorted(value)
    for name in sorted(texts):
        below = [k for k in rest if k < name]
        if below:
            pieces.append(dumps_finite_json_values({k: value[k] for k in below})[1:-1])
            rest = rest[len(below):]
        pieces.append(orjson.dumps(name).decode("utf-8") + ":" + texts[name])  # a key as json.dumps writes it
    if rest:
        pieces.append(dumps_finite_json_values({k: value[k] for k in rest})[1:-1])
    return "{" + ",".join(pieces) + "}"


def _dumps_json_values_stdlib(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except TypeError:  # keys of mixed types
        return dumps(value)
    except ValueError:
        refuse_non_finite(value)
        raise
    return dumps(value) if _INTEGRAL_FLOAT.search(text) else text


def content_hash(value: Any) -> str:
    """A stable SHA-256 hex digest of ``value``'s canonical JSON."""
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()


def equal(a: Any, b: Any) -> bool:
    """Structural equality on canonical JSON: nested dicts compare by keys, ``5 == 5.0``, ``True != 1``.

    The same verdict as comparing ``dumps(a) == dumps(b)``, without building the strings (this runs for
    every argument of every scored call).
    """
    ta, tb = type(a), type(b)
    if ta is str or tb is str:
        return ta is tb and a == b
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta is dict and tb is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            if type(key) is not str or key not in b or not equal(value, b[key]):
                return dumps(a) == dumps(b) if type(key) is not str else False
        return True
    if ta in (list, tuple) and tb in (list, tuple):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if ta in (int, float) and tb in (int, float):
        if a == b:
            return True
        return ta is float and tb is float and a != a and b != b  # NaN is NaN in canonical JSON
    if a is None or b is None:
        return a is b
    return dumps(a) == dumps(b)
