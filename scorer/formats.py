"""Reading and writing toolgold's JSON Lines formats.

Reading works on an iterable of lines (text or bytes) and a source name, so errors always say
``FILE:LINE: what is wrong`` and the caller decides where the lines come from. Writing is canonical
(sorted keys, compact), so exporting the same values always gives the same bytes.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable, Iterator
from typing import Any, Final, TypeVar

import orjson
import pydantic_core
from pydantic import BaseModel, ValidationError

from scorer import canonical, strict_json
from scorer.errors import InvalidRecord, UnknownFormat
from scorer.model import (
    GOLD_FORMAT,
    RUN_FORMAT,
    TRANSCRIPT_FORMAT,
    FunctionCall,
    GoldCase,
    Message,
    RunRecord,
    ToolCallRef,
    Transcript,
)

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


_SHARED_TOOLS: dict[bytes, tuple[Any, ...]] = {}
"""The ``ToolSpec`` objects of records read by ``fast_record``, by the orjson bytes of the ``tools`` list they
were validated from: an import's records offer the same tools again and again (every tau-bench transcript and
gold case of a domain), and validating a tool list is half of validating a record."""
SHARED_TOOLS_MAX = 256
_FAST_MODELS: dict[str, type[BaseModel]] = {TRANSCRIPT_FORMAT: Transcript, GOLD_FORMAT: GoldCase}


def fast_record(number: int, raw: bytes) -> Transcript | GoldCase | None:
    """The transcript or gold case line ``number`` of a toolgold JSON Lines file holds, read straight from its
    bytes: the record ``parse_record(json_line(number, raw, ...))`` makes of it, equal field for field, whenever
    this returns one. None when it is not sure, and for anything wrong with the line: ``json_line`` and
    ``parse_record`` then read it again and say what is wrong, with their messages.

    Faster in four ways: the line is parsed by orjson as it is, without decoding it to text and encoding it
    back (``strict_json._fast``'s rules, in the same order); a tool list seen before is not validated again: its
    ``ToolSpec`` objects (frozen) are put in its place and pydantic takes them as they are, so records that
    offer the same tools share them; a tool list seen twice before as these very bytes is not even parsed
    (``_known_tools``: most of a gold case's bytes are its tools); and the depth walk then skips those tools
    (they nested few enough levels in the record they were validated in, at the same place)."""
    if type(raw) is not bytes or len(raw) > MAX_LINE_BYTES or (number == 1 and raw.startswith(b"\xef\xbb\xbf")):
        return None
    value, shared, data = _known_tools(raw) if _TOOL_SPANS else (None, None, raw)
    key = None
    if value is None:
        data = raw
        if strict_json.has_long_number(raw):  # perhaps an integer beyond 64 bits, which orjson reads as a float
            return None
        try:
            parsed: Any = orjson.loads(raw)  # typed apart from ``value``: compiled, a name holds only its type
        except orjson.JSONDecodeError:
            return None
        if type(parsed) is not dict:
            return None
        value = parsed
        tools = value.get("tools")
        try:  # no integer beyond 64 bits (above); nested deeper than orjson writes (254): the slow path refuses it
            key = orjson.dumps(tools) if type(tools) is list and tools else None
        except TypeError:
            return None
        shared = _SHARED_TOOLS.get(key) if key is not None else None
        if shared is not None:
            value["tools"] = shared
    tag = value.get("format")
    model = _FAST_MODELS.get(tag) if type(tag) is str else None
    if model is None:
        return None
    try:
        record = model.model_validate(value)
    except ValidationError:
        return None
    # Too deep (what strict_json refuses)? A field of a type that nests a fixed number of levels, now that it
    # validated, nests no deeper than its type; shared tools nested few enough levels where they were first
    # read, in the same place. So only the other fields are walked: as one list, one level below the record.
    # No deeper than the brackets the line holds, once known tools stand for theirs (what strict_json._fast
    # asks first too): most records need no walk at all.
    # A long line (a transcript's messages) is walked without counting: counting its brackets twice costs more
    # than walking what is left once the numberless fields are skipped.
    if len(data) > strict_json.MAX_DEPTH and (len(data) > WALK_WITHOUT_COUNTING
                                              or data.count(b"[") + data.count(b"{") > strict_json.MAX_DEPTH):
        skip = numberless_fields(model)
        rest = [v for k, v in value.items() if k not in skip and (shared is None or k != "tools")]
        if strict_json.too_deep(rest):
            return None
    if key is not None and shared is None:
        if len(_SHARED_TOOLS) >= SHARED_TOOLS_MAX:
            _SHARED_TOOLS.clear()
        _SHARED_TOOLS[key] = record.tools  # type: ignore[attr-defined]
        _remember_tools_json(record.tools, value["tools"])  # type: ignore[attr-defined]
    elif key is not None and key not in _SPANS_TRIED:
        # The second time these tools come: file their bytes (not the first time, so that records that each
        # offer tools of their own, a BFCL file's, pay nothing for it).
        if len(_SPANS_TRIED) >= SHARED_TOOLS_MAX:
            _SPANS_TRIED.clear()
        _SPANS_TRIED.add(key)
        _learn_tools_span(raw, record.tools)  # type: ignore[attr-defined]
    _remember_messages_json(record.messages, value.get("messages"))  # type: ignore[attr-defined]
    return record  # type: ignore[return-value]


WALK_WITHOUT_COUNTING: Final = 16 * 1024


_TOOL_SPANS: dict[bytes, list[tuple[bytes, tuple[Any, ...]]]] = {}
"""The ``ToolSpec`` objects of a tool list by the very bytes it was read from (the value of a record's ``tools``
as the line wrote it), filed under their first ``SPAN_PREFIX`` bytes the second time a tool list comes: the next
line that writes its tools the same way (every line of an export, every record one tool writes) is parsed
without them."""
_SPANS_HELD = [0]
_SPANS_TRIED: set[bytes] = set()
"""The ``_SHARED_TOOLS`` keys whose bytes ``_learn_tools_span`` was asked to file (once each)."""
SPAN_PREFIX: Final = 40
_PLACEHOLDER: Final = b"73018452906113527"
"""What stands for a known tool list while the rest of the line is parsed: an integer (orjson reads it as one),
17 digits (not a long number), whose only spelling in JSON is these digits, so a line that holds it anywhere (a
longer number, a string) is one ``in`` away."""
_PLACEHOLDER_INT: Final = int(_PLACEHOLDER)
_PLACEHOLDER_RUN: Final = b"9" * len(_PLACEHOLDER)
_TOOLS_KEY: Final = b'"tools"'
_JSON_SPACE: Final = b" \t\r\n"
_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _known_tools(raw: bytes) -> tuple[dict[str, Any] | None, tuple[Any, ...] | None, bytes]:
    """``(orjson's value of raw, the tools put in it, the bytes parsed)`` when ``raw``'s ``tools`` are a list
    seen before as these bytes (``_TOOL_SPANS``), parsing the rest of the line only; ``(None, None, raw)`` when
    not (then the whole line is parsed as before).

    Sure because of what is checked: the bytes found are a whole JSON value (they were, alone, when learnt);
    the line holds no ``_PLACEHOLDER`` of its own; and with those bytes replaced by it the line parses with it
    as the record's own ``tools`` (not a nested ``tools``, not a key given twice). JSON being what it is, the
    line itself then parses to the same value with the list in that place: the list these bytes always parse
    to, whose ``ToolSpec`` objects are the ones learnt. Nothing else changes: the bytes held no long number and
    nested few enough levels at that very place when learnt."""
    start = _tools_value_start(raw, 0)
    tried = 0
    while start is not None and tried < 4:
        tried += 1
        for span, specs in _TOOL_SPANS.get(raw[start:start + SPAN_PREFIX], ()):
            if not raw.startswith(span, start):
                continue
            data = raw[:start] + _PLACEHOLDER + raw[start + len(span):]
            # The placeholder the line's only run of 17 digits or more (one pass over what is left of it, most
            # of a gold case's bytes being its tools): then the line held no placeholder of its own, and holds
            # no long number, the placeholder being put after a ':' or a space and before what followed the
            # span, which is no digit after a closing bracket (were it one, ``tools`` would parse as another
            # integer, refused below, or not at all). Another such run: each asked apart.
            # (``find``, not ``in``: see canonical._orjson_may_differ)
            if data.translate(_DIGITS_AS_NINE).count(_PLACEHOLDER_RUN) != 1:
                if raw.find(_PLACEHOLDER) >= 0:
                    continue
                if strict_json.has_long_number(data):
                    return None, None, raw
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                return None, None, raw
            if type(value) is not dict:
                return None, None, raw
            found = value.get("tools")
            if type(found) is not int or found != _PLACEHOLDER_INT:
                return None, None, raw
            value["tools"] = specs
            return value, specs, data
        start = _tools_value_start(raw, start)
    return None, None, raw


def _tools_value_start(raw: bytes, after: int) -> int | None:
    """Where the value of the next ``"tools":`` at or past ``after`` begins (a ``"tools"`` inside a string is
    written ``\\"tools\\"``: never found; one that is a string value, not a key, is skipped)."""
    at = raw.find(_TOOLS_KEY, after)
    end = len(raw)
    while at >= 0:
        i = at + len(_TOOLS_KEY)
        while i < end and raw[i] in _JSON_SPACE:
            i += 1
        if i < end and raw[i] == 58:  # ":"
            i += 1
            while i < end and raw[i] in _JSON_SPACE:
                i += 1
            return i
        at = raw.find(_TOOLS_KEY, i)
    return None


def _learn_tools_span(raw: bytes, specs: tuple[Any, ...]) -> None:
    """File the bytes ``raw`` wrote its own ``tools`` in (``_TOOL_SPANS``), with the objects they validated to;
    nothing when they cannot be told for sure."""
    if raw.find(_PLACEHOLDER) >= 0:
        return
    start = _tools_value_start(raw, 0)
    tried = 0
    while start is not None and tried < 4:
        tried += 1
        end = _array_end(raw, start)
        if end is not None:
            span = raw[start:end]
            try:
                whole = orjson.loads(span)  # a whole JSON value on its own
                value = orjson.loads(raw[:start] + _PLACEHOLDER + raw[end:])
            except orjson.JSONDecodeError:
                value = whole = None
            if type(whole) is list and type(value) is dict and type(value.get("tools")) is int \
                    and value["tools"] == _PLACEHOLDER_INT:
                if _SPANS_HELD[0] >= SHARED_TOOLS_MAX:
                    _TOOL_SPANS.clear()
                    _SPANS_HELD[0] = 0
                _TOOL_SPANS.setdefault(span[:SPAN_PREFIX], []).append((span, specs))
                _SPANS_HELD[0] += 1
                return
        start = _tools_value_start(raw, start)


def _array_end(raw: bytes, start: int) -> int | None:
    """Just past the bracket that closes the array opening at ``start`` (strings skipped whole), or None."""
    if raw[start:start + 1] != b"[":
        return None
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(raw, start):
        token = match.group()
        if token[0] == 34:  # a string
            continue
        depth += 1 if token in (b"[", b"{") else -1
        if depth == 0:
            return match.end()
    return None


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
    """Yield ``(line_number, record)`` of type ``expect`` from JSON Lines. Gold cases and transcripts read
    from bytes go through ``fast_record`` first (what an import reads with: the same record, tools seen
    before shared); any line it is not sure of is read the plain way, with the plain way's errors."""
    fast = expect is GoldCase or expect is Transcript
    for number, raw in enumerate(lines, start=1):
        if fast and type(raw) is bytes:
            record = fast_record(number, raw)
            if type(record) is expect:
                yield number, record
                continue
        value = json_line(number, raw, source)
        if value is BLANK:
            continue
        if isinstance(value, InvalidRecord):
            raise value
        yield number, parse_record(value, expect=expect, source=source, line=number)


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


_DIGITS_AS_NINE = bytes.maketrans(b"012345678", b"999999999")


def to_json(record: BaseModel, *, exclude: set[str] | None = None) -> dict[str, Any]:
    """The record as plain JSON values (the shape written to files): ``model_dump(mode="json")``.

    Built by pydantic's serializer in Rust (``model_dump_json``) and read back by orjson, half the time of
    ``model_dump(mode="json")``, whose Python objects are built one by one (measured on tau-bench gold
    cases: 261 against 574 us); the same values (a float reads back as the float written). A run of 19
    digits may be an integer beyond 64 bits, which orjson would read as a float: those take
    ``model_dump``. ``exclude`` leaves those fields out (``model_dump``'s)."""
    data = _faithful_serializer(type(record)).to_json(record, exclude=exclude)
    if strict_json.has_long_number(data):
        return _finite_dump(record, exclude)
    try:
        value: dict[str, Any] = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _finite_dump(record, exclude)
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


def _small_json(record: BaseModel, exclude: set[str]) -> tuple[dict[str, Any], bool]:
    """``to_json(record, exclude=exclude)`` when what is left is small (a gold case without its tools: ~1 KB),
    and whether it holds a float (``canonical.holds_float``). Built by pydantic as JSON values directly, which
    then costs less than its text read back by orjson. The same values: the serializer is the same, and a float
    is the float itself rather than the float its text reads back as, the same one. NaN and ±Infinity, kept as
    such (``_faithful_serializer``), are refused naming where, as ``to_json`` refuses them."""
    value: dict[str, Any] = _faithful_serializer(type(record)).to_python(record, mode="json", exclude=exclude)
    floats = canonical.holds_float(value)
    if floats:
        canonical.refuse_non_finite(value)
    return value, floats


def _finite_dump(record: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """``model_dump(mode="json")``, refusing a NaN or ±Infinity (which it would turn into ``None``)."""
    canonical.refuse_non_finite(record.model_dump(exclude=exclude))
    return record.model_dump(mode="json", exclude=exclude)


def dumps_record(record: BaseModel) -> str:
    """One canonical JSON line (without the newline) for ``record``."""
    return canonical.dumps_finite_json_values(to_json(record))  # to_json refuses NaN and ±Infinity itself


_TOOLS_JSON: dict[tuple[int, ...], tuple[tuple[Any, ...], list[dict[str, Any]], list[str | None]]] = {}
"""What ``to_json`` wrote for a record's ``tools`` (and, once asked for, its canonical text), by the identity of
its ``ToolSpec`` objects, which the entry holds (so no other object can take their ids while it is here):
records read by ``fast_record`` share the objects of a tool list seen before. Filed by ``record_json_text``, or
by ``fast_record`` from the line itself when the line wrote them as ``to_json`` would (``_remember_tools_json``)."""
_TOOLS: Final = {"tools"}
_TOOL_KEYS: Final = frozenset({"name", "description", "parameters"})


def _remember_tools_json(specs: tuple[Any, ...], read: Any) -> None:
    """File ``read``, the tool list a line held, as what ``to_json`` writes for ``specs``, the ``ToolSpec``
    objects validated from it (``_TOOLS_JSON``), when it is: then ``record_json_text`` neither serializes those
    tools nor parses them back (most of a BFCL gold case's bytes, each case offering tools of its own).

    It is when each tool has exactly a string ``name``, a string ``description`` and an object ``parameters``:
    validation keeps those values as they are (no validator changes them; ``parameters`` is any JSON object,
    kept whole), and ``to_json`` writes exactly those three fields (an unset addition is left out; a field the
    line left out would be written with its default). Anything else is left to ``to_json``."""
    if type(read) is not list or len(read) != len(specs):
        return
    for tool in read:
        if type(tool) is not dict or len(tool) != 3 or tool.keys() != _TOOL_KEYS:
            return
        if type(tool["name"]) is not str or type(tool["description"]) is not str \
                or type(tool["parameters"]) is not dict:
            return
    if len(_TOOLS_JSON) >= SHARED_TOOLS_MAX:
        _TOOLS_JSON.clear()
    _TOOLS_JSON[tuple(map(id, specs))] = (specs, read, [None])


_MESSAGES: Final = frozenset({"messages"})
_NOTHING_READ: Final[tuple[Any, Any]] = (None, None)
_READ_MESSAGES: list[tuple[Any, Any]] = [_NOTHING_READ]
"""``(messages, list)``: the messages of the last record ``fast_record`` read and the list its line wrote them as,
when that is their JSON (``_remember_messages_json``): ``record_json_text``, asked next for that record's text
(what an import's worker does), writes them from it. One pair, stored and read whole: a thread that reads
another record meanwhile replaces it, and the messages no longer match."""
_MESSAGE_KEYS: Final = frozenset(Message.model_fields)
_CALL_KEYS: Final = frozenset(ToolCallRef.model_fields)
_FUNCTION_KEYS: Final = frozenset(FunctionCall.model_fields)


def _remember_messages_json(messages: tuple[Any, ...], read: Any) -> None:
    """Keep ``read``, the message list a line held, as the JSON of ``messages``, validated from it, when it is.

    It is when every message, each of its tool calls and each call's function has every field of its type and no
    other: those types write every field (none is an addition left out when unset) and hold strings, None and
    lists of them only, which validation keeps as they are (no validator changes a value; a tuple is written as
    the list it was read from). A field the line left out would be written with its default."""
    _READ_MESSAGES[0] = _NOTHING_READ
    if type(read) is not list or len(read) != len(messages):
        return
    for message in read:
        if type(message) is not dict or len(message) != len(_MESSAGE_KEYS) or message.keys() != _MESSAGE_KEYS:
            return
        calls = message["tool_calls"]
        if type(calls) is not list:
            return
        for call in calls:
            if type(call) is not dict or len(call) != len(_CALL_KEYS) or call.keys() != _CALL_KEYS:
                return
            function = call["function"]
            if type(function) is not dict or len(function) != len(_FUNCTION_KEYS) \
                    or function.keys() != _FUNCTION_KEYS:
                return
    _READ_MESSAGES[0] = (messages, read)


def record_json_text(record: BaseModel, *, with_tools: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """``(dumps_record(record), to_json(record)["tools"])``, or with ``with_tools=False`` the canonical text of
    ``to_json(record)`` without its ``tools`` first: the same text, byte for byte, built faster.

    Tools written before as these very objects are not written again. The fields whose type holds no float
    whatever their value (``messages``: strings and ids; ``numberless_fields``) are written by orjson with
    sorted keys and no check (orjson and ``json`` differ only in how they write some floats), the rest by
    ``canonical.dumps_finite_json_values``, and the parts joined as one object with sorted keys (what canonical
    JSON is: each value's canonical text, in key order). The tools returned are the memo's own: not to be
    changed."""
    model = type(record)
    numberless = numberless_fields(model)
    tools = getattr(record, "tools", None)
    key = tuple(map(id, tools)) if tools else None
    known = _TOOLS_JSON.get(key) if key is not None else None
    # Numberless fields all short (a gold case's one or two messages): written with the rest, in the one pass.
    apart: set[str] = set()
    for name in numberless:
        value = getattr(record, name)
        if type(value) not in _SHORT_KINDS or len(value) >= SPLIT_ITEMS:
            apart = set(numberless)
            break
    floats: bool | None = None  # whether ``body`` holds a float, once known
    if known is not None:
        body, floats = _small_json(record, {*apart, "tools"})
        tools_json, tools_text = known[1], known[2]
    else:
        body = to_json(record, exclude=apart or None)
        tools_json, tools_text = body.pop("tools", []), [None]
        if key is not None:
            if len(_TOOLS_JSON) >= SHARED_TOOLS_MAX:
                _TOOLS_JSON.clear()
            _TOOLS_JSON[key] = (tools, tools_json, tools_text)  # type: ignore[assignment]
    texts: dict[str, str] = {}
    if apart:
        # Fields that hold no float hold no NaN either: pydantic builds their JSON values directly (no text to
        # parse back, half the time), and integers stay integers however long. Messages the line wrote as
        # they are written are taken as read (``_READ_MESSAGES``).
        held = _READ_MESSAGES[0]
        read = held[1] if "messages" in apart and held[0] is record.messages else None  # type: ignore[attr-defined]
        rest = apart if read is None else apart - _MESSAGES
        plain = _faithful_serializer(model).to_python(record, mode="json", include=rest) if rest else {}
        if read is not None:
            plain["messages"] = read
        for name, value in plain.items():
            if len(value) >= SPLIT_ITEMS:
                texts[name] = canonical.dumps_float_free(value)
            else:  # a short list is cheaper to write with the rest than as a part of its own
                body[name] = value
    if with_tools and tools is not None:
        text = tools_text[0]
        if text is None:
            text = tools_text[0] = canonical.dumps_finite_json_values(tools_json)
        texts["tools"] = text
    return _joined(body, texts, floats), tools_json


_STAND_INS: Final = (73018452906113527, 73018452906113528, 73018452906113529)
"""Integers that stand for the parts ``_joined`` writes in (``_PLACEHOLDER``'s kind: 17 digits, one spelling)."""


def _joined(body: dict[str, Any], texts: dict[str, str], floats: bool | None = None) -> str:
    """``canonical.dumps_finite_with(body, texts)``, faster: ``body`` written once by orjson with an integer
    standing in for each part, that text checked once (``canonical._orjson_may_differ``), and each stand-in
    replaced by its part. Only when each stand-in occurs once, as the value of its own key (the record holds no
    such digits anywhere else); otherwise, and for any float orjson may write otherwise, ``dumps_finite_with``.
    ``floats``: whether ``body`` holds a float, when the caller knows it already."""
    if not texts or len(texts) > len(_STAND_INS) or texts.keys() & body.keys():
        return canonical.dumps_finite_with(body, texts)
    stand_ins = dict(zip(texts, _STAND_INS, strict=False))
    try:
        data = orjson.dumps({**body, **stand_ins}, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits, keys that are not strings
        return canonical.dumps_finite_with(body, texts)
    if floats is None:
        floats = canonical.holds_float(body)
    if floats and canonical._orjson_may_differ(data):  # no float: orjson's is dumps' text
        return canonical.dumps_finite_with(body, texts)
    text = data.decode("utf-8")
    for name, number in stand_ins.items():
        digits = str(number)
        member = f"{orjson.dumps(name).decode('utf-8')}:{digits}"
        if text.count(digits) != 1 or member not in text:
            return canonical.dumps_finite_with(body, texts)
        text = text.replace(member, member[:-len(digits)] + texts[name], 1)
    return text


SPLIT_ITEMS: Final = 4
_SHORT_KINDS: Final = (tuple, list, dict)
"""Values of a numberless field with fewer items than this are written with the rest of the record."""
_NUMBERLESS: dict[type[BaseModel], tuple[str, ...]] = {}


def numberless_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` holding containers that can hold no float and nest a fixed number of levels,
    whatever the record (their JSON is the same from orjson as from ``json``, and is never too deep): read
    from the fields' types, so a field that gains a float, an ``Any`` or a recursive type drops out by itself."""
    found = _NUMBERLESS.get(model)
    if found is None:
        found = _NUMBERLESS[model] = tuple(
            name for name, info in model.model_fields.items()
            if _container(info.annotation) and (depth := _plain_depth(info.annotation, ())) is not None
            and depth < strict_json.MAX_DEPTH)
    return found


def _container(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (tuple, list, dict) or (
        isinstance(annotation, type) and issubclass(annotation, BaseModel))


def _plain_depth(annotation: Any, inside: tuple[Any, ...]) -> int | None:
    """The most levels a value of type ``annotation`` nests as JSON (as ``strict_json`` counts them), when it
    holds no float: strings, integers, booleans, null, and lists, tuples, string-keyed dicts and models of
    those only, not recursive. None for any other type (``float``, ``Any``, ``datetime``...)."""
    if annotation in (str, int, bool, type(None)):
        return 0
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return 0 if all(type(a) in (str, int, bool) or a is None for a in args) else None
    if origin in (typing.Union, types.UnionType, tuple, list, dict) and args:
        if origin is dict and (len(args) != 2 or args[0] is not str):
            return None
        deepest = _deepest([_plain_depth(a, inside) for a in (args[1:] if origin is dict else args)
                            if a is not Ellipsis])
        if deepest is None or origin in (typing.Union, types.UnionType):
            return deepest
        return 1 + deepest
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in inside:
        if annotation.model_computed_fields:
            return None
        deepest = _deepest([_plain_depth(info.annotation, (*inside, annotation))
                            for info in annotation.model_fields.values()])
        return None if deepest is None else 1 + deepest
    return None


def _deepest(depths: list[int | None]) -> int | None:
    known = [d for d in depths if d is not None]
    return max(known, default=0) if len(known) == len(depths) else None


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
    "fast_record",
    "iter_json_lines",
    "iter_json_lines_tolerant",
    "json_line",
    "json_schemas",
    "numberless_fields",
    "parse_json_text",
    "parse_record",
    "read_records",
    "record_json_text",
    "to_json",
]
