"""Reading and writing toolgold's JSON Lines formats.

Reading works on an iterable of lines (text or bytes) and a source name, so errors always say
``FILE:LINE: what is wrong`` and the caller decides where the lines come from. Writing is canonical
(sorted keys, compact), so exporting the same values always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import orjson
import pydantic_core
from pydantic import BaseModel, ValidationError

from scorer import canonical, strict_json
from scorer.errors import InvalidRecord, UnknownFormat
from scorer.model import GOLD_FORMAT, RUN_FORMAT, TRANSCRIPT_FORMAT, GoldCase, RunRecord, Transcript

FORMATS: dict[str, type[BaseModel]] = {
    TRANSCRIPT_FORMAT: Transcript,
    GOLD_FORMAT: GoldCase,
    RUN_FORMAT: RunRecord,
}
Record = Transcript | GoldCase | RunRecord
M = TypeVar("M", bound=BaseModel)

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A record longer than this is refused before parsing: no real transcript line comes near it."""



def iter_json_lines(lines: Iterable[str | bytes], source: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line; raise ``InvalidRecord`` at the first bad one.

    A UTF-8 byte-order mark on the first line and CRLF line ends are accepted; invalid UTF-8 is not.
    """
    for number, value in iter_json_lines_tolerant(lines, source):
        if isinstance(value, InvalidRecord):
            raise value
        yield number, value


def iter_json_lines_tolerant(lines: Iterable[str | bytes], source: str) -> Iterator[tuple[int, Any]]:
    """Like ``iter_json_lines`` but a bad line yields its ``InvalidRecord`` and reading goes on."""
    for number, raw in enumerate(lines, start=1):
        value = json_line(number, raw, source)
        if value is not BLANK:
            yield number, value


BLANK: Any = object()
"""What ``json_line`` returns for a blank line (no record)."""


def json_line(number: int, raw: str | bytes, source: str) -> Any:
    """The value of line ``number`` of a JSON Lines file (its ``InvalidRecord`` when it is bad, ``BLANK``
    when it holds nothing): each line on its own, so lines can be read in one process and parsed in another.
    A UTF-8 byte-order mark on line 1 and CRLF line ends are accepted; invalid UTF-8 is not."""
    if len(raw) > MAX_LINE_BYTES:
        return InvalidRecord(
            f"record is {len(raw) / 1e6:.1f} MB; the limit is {MAX_LINE_BYTES // (1024 * 1024)} MB per line",
            source=source, line=number)
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return InvalidRecord(f"not valid UTF-8 (byte {exc.start})", source=source, line=number)
    else:
        text = raw
    if number == 1:
        text = text.removeprefix("\ufeff")
    text = text.rstrip("\r\n")
    if not text.strip():
        return BLANK
    try:
        return parse_json_text(text, source=source, line=number)
    except InvalidRecord as err:
        return err


def parse_json_text(text: str | bytes, *, source: str | None = None, line: int | None = None) -> Any:
    """The one strict reader: one JSON document, no NaN/Infinity/1e400, no lone surrogates, at most
    ``MAX_DEPTH`` levels; every failure is an ``InvalidRecord`` at ``source:line``. Bytes are read as
    UTF-8 without decoding them first (the fast path parses them as they are)."""
    return strict_json.loads(text, source=source, line=line)


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem, naming the field path (``messages.3.role``) and what is wrong."""
    errors = exc.errors()
    # A failing item also fails its container's length check; report only the item.
    errors = [e for e in errors if not (e["type"] == "too_short" and any(
        len(o["loc"]) > len(e["loc"]) and o["loc"][:len(e["loc"])] == e["loc"] for o in errors))]
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(errors) - 5
    if more > 0:
        parts.append(f"(+{more} more)")
    return "; ".join(parts)


def parse_record(value: Any, *, expect: type[M] | None = None, source: str | None = None,
                 line: int | None = None) -> Any:
    """Validate one decoded JSON value as a toolgold record, dispatching on its ``format`` tag.

    With ``expect`` the record must be of that type. Raises ``UnknownFormat`` for a format or version
    toolgold does not read and ``InvalidRecord`` for anything else wrong, both placed at ``source:line``.
    """
    if not isinstance(value, dict):
        raise InvalidRecord(f"expected a JSON object, got {_json_type(value)}", source=source, line=line)
    tag = value.get("format")
    if tag is None:
        raise InvalidRecord(
            f"missing 'format' (one of: {', '.join(FORMATS)})", source=source, line=line
        )
    model = FORMATS.get(tag) if isinstance(tag, str) else None
    if model is None:
        known = ", ".join(FORMATS)
        hint = _version_hint(str(tag))
        raise UnknownFormat(f"unknown format {tag!r}{hint}; this toolgold reads {known}", source=source, line=line)
    if expect is not None and model is not expect:
        wanted = next(k for k, v in FORMATS.items() if v is expect)
        raise InvalidRecord(f"expected a {wanted} record, got {tag}", source=source, line=line)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InvalidRecord(describe_validation_error(exc), source=source, line=line) from None


def _version_hint(tag: str) -> str:
    family, _, version = tag.rpartition("/")
    known = [k.rpartition("/")[2] for k in FORMATS if k.rpartition("/")[0] == family]
    if not known or not version.isdigit():
        return ""
    newest = max(int(v) for v in known)
    return (" (a newer version than this toolgold reads: upgrade toolgold)" if int(version) > newest
            else " (an older version: this toolgold reads only the current one)")


def read_records(lines: Iterable[str | bytes], source: str, *, expect: type[M]) -> Iterator[tuple[int, M]]:
    """Yield ``(line_number, record)`` of type ``expect`` from JSON Lines."""
    for number, value in iter_json_lines(lines, source):
        yield number, parse_record(value, expect=expect, source=source, line=number)


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


_DIGITS_AS_NINE = bytes.maketrans(b"012345678", b"999999999")
_LONG_NUMBER = b"9" * 19


def to_json(record: BaseModel) -> dict[str, Any]:
    """The record as plain JSON values (the shape written to files): ``model_dump(mode="json")``.

    Built by pydantic's serializer in Rust (``model_dump_json``) and read back by orjson, half the time of
    ``model_dump(mode="json")``, whose Python objects are built one by one (measured on tau-bench gold
    cases: 261 against 574 us); the same values (a float reads back as the float written). A run of 19
    digits may be an integer beyond 64 bits, which orjson would read as a float: those take
    ``model_dump``."""
    data = _faithful_serializer(type(record)).to_json(record)
    if _LONG_NUMBER in data.translate(_DIGITS_AS_NINE):
        return _finite_dump(record)
    try:
        value: dict[str, Any] = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _finite_dump(record)
    return value


_SERIALIZERS: dict[type[BaseModel], pydantic_core.SchemaSerializer] = {}


def _faithful_serializer(model: type[BaseModel]) -> pydantic_core.SchemaSerializer:
    """The model's own serializer, except that NaN and ±Infinity are written as such (pydantic writes them as
    ``null``): orjson then refuses the text, and the record is refused naming where (``NonFiniteNumber``)
    instead of being stored with a null. The same bytes as ``model_dump_json`` for every other value."""
    found = _SERIALIZERS.get(model)
    if found is None:
        found = _SERIALIZERS[model] = pydantic_core.SchemaSerializer(
            model.__pydantic_core_schema__, pydantic_core.CoreConfig(ser_json_inf_nan="constants"))
    return found


def _finite_dump(record: BaseModel) -> dict[str, Any]:
    """``model_dump(mode="json")``, refusing a NaN or ±Infinity (which it would turn into ``None``)."""
    canonical.refuse_non_finite(record.model_dump())
    return record.model_dump(mode="json")


def dumps_record(record: BaseModel) -> str:
    """One canonical JSON line (without the newline) for ``record``."""
    return canonical.dumps_json_values(to_json(record))


def json_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema of each format, keyed by format tag, generated from the models."""
    out = {}
    for tag, model in FORMATS.items():
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://toolgold.dev/schema/{tag.replace('/', '-')}.json"
        out[tag] = schema
    return out


__all__ = [
    "FORMATS",
    "Record",
    "describe_validation_error",
    "dumps_record",
    "iter_json_lines",
    "iter_json_lines_tolerant",
    "json_line",
    "json_schemas",
    "parse_json_text",
    "parse_record",
    "read_records",
    "to_json",
]
