"""Whole-file JSON documents (tau-bench, tau2-bench, ToolTalk, JSON arrays) read with line numbers.

``json.load`` forgets where each value was; importers need the line of every record to report
``FILE:LINE``. ``JsonDocument`` decodes one value at a time with ``raw_decode`` so each array item and
object member keeps the line it starts on. A file that is one JSON array (tau-bench's trajectories, a log's
records) is read a block at a time instead (``array_items``), so importing it takes memory for a block and
an item, not for the file.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

from scorer import strict_json
from scorer.errors import InvalidRecord

WHITESPACE = " \t\r\n"


class JsonDocument:
    """One JSON text and the source it came from; positions are character offsets into ``text``."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self._newlines = _newline_offsets(text)

    @classmethod
    def read(cls, path: Path) -> JsonDocument:
        """Read a UTF-8 file (a byte-order mark is accepted); undecodable bytes are an ``InvalidRecord``."""
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InvalidRecord(f"not valid UTF-8 (byte {exc.start})", source=str(path), line=line) from None
        return cls(text.removeprefix("\ufeff"), str(path))

    def line(self, pos: int) -> int:
        return bisect_right(self._newlines, pos - 1) + 1

    def skip(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos] in WHITESPACE:
            pos += 1
        return pos

    def root(self) -> int:
        """Position of the top-level value (an ``InvalidRecord`` for an empty file)."""
        pos = self.skip(0)
        if pos >= len(self.text):
            raise InvalidRecord("no records in this file (it is empty)", source=self.source)
        return pos

    def kind(self, pos: int) -> str:
        """``array``, ``object`` or ``other`` for the value starting at ``pos``."""
        return {"[": "array", "{": "object"}.get(self.text[pos], "other")

    def decode(self, pos: int) -> tuple[Any, int]:
        """The value at ``pos`` and the position just after it."""
        return strict_json.decode_at(self.text, pos, source=self.source, line=self.line(pos))

    def items(self, pos: int) -> Iterator[tuple[int, int, Any]]:
        """``(line, position, value)`` of each item of the array at ``pos``."""
        yield from ((line, at, value) for line, at, _, value in self._walk(pos, "[", "]", keyed=False))

    def members(self, pos: int) -> Iterator[tuple[str, int, Any]]:
        """``(key, position, value)`` of each member of the object at ``pos``."""
        yield from ((key, at, value) for _, at, key, value in self._walk(pos, "{", "}", keyed=True))

    def _walk(self, pos: int, open_: str, close: str, *, keyed: bool) -> Iterator[tuple[int, int, str, Any]]:
        start = pos
        if self.text[pos] != open_:
            raise InvalidRecord(f"expected {'an object' if keyed else 'an array'}", source=self.source,
                                line=self.line(pos))
        pos = self.skip(pos + 1)
        if self.text[pos:pos + 1] == close:
            return
        while True:
            key = ""
            if keyed:
                key_value, pos = self.decode(pos)
                if not isinstance(key_value, str):
                    self._fail(pos, "expected a key")
                key = key_value
                pos = self.skip(pos)
                if self.text[pos:pos + 1] != ":":
                    self._fail(pos, "expected ':'")
                pos = self.skip(pos + 1)
            value, end = self.decode(pos)
            yield self.line(pos), pos, key, value
            pos = self.skip(end)
            ch = self.text[pos:pos + 1]
            if ch == close:
                if start == self.skip(0) and self.skip(pos + 1) < len(self.text):
                    self._fail(self.skip(pos + 1), "extra data after the document")
                return
            if ch != ",":
                self._fail(pos, f"expected ',' or '{close}'")
            pos = self.skip(pos + 1)

    def _fail(self, pos: int, message: str) -> None:
        line = self.line(pos)
        column = pos - (self._newlines[line - 2] if line > 1 else -1)
        raise InvalidRecord(f"not valid JSON: {message} (column {column})", source=self.source, line=line)


class DocumentLines:
    """Lines of values inside a file's records, for naming where an error is (not for reading records): the
    file is read again with positions on the first question only, and its records' positions are kept, so a
    file with many bad records is read once more, not once per error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._doc: JsonDocument | None = None
        self._records: dict[int, int] = {}
        self._unreadable = False

    def line(self, record_line: int, steps: tuple[str | int, ...]) -> int | None:
        """The line of the value at ``steps`` (member keys and item indexes) inside the record starting at
        ``record_line`` (the file's top-level object, or an item of its top-level array); None when the file
        is not one document (JSON Lines: a value is on its record's line) or nothing is there."""
        if self._unreadable:
            return None
        try:
            doc = self._document()
            at: int | None = self._records.get(record_line)
            for step in steps:
                if at is None:
                    return None
                if isinstance(step, str):
                    at = next((pos for key, pos, _ in doc.members(at) if key == step), None) \
                        if doc.kind(at) == "object" else None
                else:
                    at = next((pos for k, (_, pos, _) in enumerate(doc.items(at)) if k == step), None) \
                        if doc.kind(at) == "array" else None
            return None if at is None else doc.line(at)
        except InvalidRecord:  # not one JSON document (JSON Lines): its records' values are on their lines
            self._unreadable = True
            return None

    def _document(self) -> JsonDocument:
        if self._doc is None:
            doc = JsonDocument.read(self.path)
            root = doc.root()
            self._doc = doc
            records = [root] if doc.kind(root) == "object" else [at for _, at, _ in doc.items(root)]
            self._records = {doc.line(at): at for at in reversed(records)}  # the first record of a line
        return self._doc


BLOCK_BYTES = 1 << 20
"""What ``ArrayStream`` reads at a time (more when an item runs past what it holds)."""


def array_items(path: Path, *, block: int = BLOCK_BYTES) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` of each item of the JSON array that is the file ``path``: what
    ``JsonDocument.read(path).items(root)`` gives, read a block at a time (``ArrayStream``). Whatever is not a
    plain run of items (not UTF-8, not JSON, a value ``strict_json`` refuses, data after the array, not an array
    at all) is left to ``JsonDocument``, which reads the whole file and raises the very error it always has,
    after the items already given (its messages and lines, written once)."""
    stream = ArrayStream(path, block=block)
    given = 0
    try:
        for item in stream:
            yield item
            given += 1
        return
    except _Irregular:
        stream.text = ""  # (the text read so far: not held while the whole document is)
    doc = JsonDocument.read(path)
    for index, (line, _, value) in enumerate(doc.items(doc.root())):
        if index >= given:
            yield line, value


class _Irregular(Exception):
    """What ``ArrayStream`` leaves to ``JsonDocument`` to report."""


_NOT_SPACE = re.compile(r"[^ \t\r\n]")
_AFTER_VALUE: Final = frozenset(" \t\r\n,]}:")
"""What may follow a whole value inside an array or an object."""


class ArrayStream:
    """The items of a file's top-level JSON array with the line each starts on, read ``block`` bytes at a time
    into a text buffer that drops what was read. ``_Irregular`` for anything else (``array_items`` says what)."""

    def __init__(self, path: Path, *, block: int = BLOCK_BYTES) -> None:
        self.path = path
        self.block = block
        self.text = ""
        self.eof = False
        self.line = 1  # the line of ``text[self.at]``
        self.at = 0
        self.peak_chars = 0
        """The most text held at once."""
        self.reads = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        with self.path.open("rb") as fh:
            pos = self._skip(fh, 0)
            if self.text[pos:pos + 1] != "[":
                raise _Irregular
            pos = yield from self._items(fh, pos)
            self._end(fh, pos)

    def _items(self, fh: BinaryIO, pos: int) -> Generator[tuple[int, Any], None, int]:
        """The items of the array whose ``[`` is at ``pos``; returns the position of its ``]``."""
        pos = self._skip(fh, pos + 1)
        if self.text[pos:pos + 1] == "]":
            return pos
        while True:
            pos = self._dropped(pos)
            value, end = self._value(fh, pos)
            yield self._line_of(pos), value
            pos = self._skip(fh, end)
            ch = self.text[pos:pos + 1]
            if ch == "]":
                return pos
            if ch != ",":
                raise _Irregular
            pos = self._skip(fh, pos + 1)

    def _dropped(self, pos: int) -> int:
        """``pos`` in the text once what was read before it is dropped (one copy, now and then)."""
        if pos > self.block and pos > len(self.text) >> 1:
            self._line_of(pos)
            self.text, self.at = self.text[pos:], 0
            return 0
        return pos

    def _value(self, fh: BinaryIO, pos: int) -> tuple[Any, int]:
        """The value at ``pos``, once the text holds all of it: up to what ends an item (a number cut short by the
        buffer's end reads as a shorter one: ``1e`` of ``1e400`` as 1)."""
        while True:
            try:
                value, end = strict_json.decode_at(self.text, pos, source=str(self.path))
            except InvalidRecord:
                if self.eof:
                    raise _Irregular from None
                self._read(fh, pos)
                continue
            if self.eof or self.text[end:end + 1] in _AFTER_VALUE:
                return value, end
            self._read(fh, pos)

    def _skip(self, fh: BinaryIO, pos: int) -> int:
        """The first position from ``pos`` on that is not JSON white space (the text's end at the file's)."""
        while True:
            found = _NOT_SPACE.search(self.text, pos)
            if found is not None:
                return found.start()
            if self.eof:
                return len(self.text)
            pos = len(self.text)
            self._read(fh, pos)

    def _end(self, fh: BinaryIO, pos: int) -> None:
        """After the array's ``]`` at ``pos``: nothing but white space to the file's end."""
        pos = self._skip(fh, pos + 1)
        if pos < len(self.text) or not self.eof:
            raise _Irregular

    def _read(self, fh: BinaryIO, pos: int) -> None:
        """Read more: a block, or as much as the text holds from ``pos`` on (an item longer than a block is read in
        a few reads, not one per block)."""
        data = fh.read(max(self.block, len(self.text) - pos))
        self.reads += 1
        try:
            if data:
                more = self._decoder.decode(data)
                if self.reads == 1:
                    more = more.removeprefix("\ufeff")
            else:
                self.eof = True
                more = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise _Irregular from None
        self.text += more
        self.peak_chars = max(self.peak_chars, len(self.text))

    def _line_of(self, pos: int) -> int:
        """The line of ``text[pos]``, counted on from the last position asked about (never before it)."""
        self.line += self.text.count("\n", self.at, pos)
        self.at = pos
        return self.line


class MemberStream(ArrayStream):
    """A file that is one JSON object whose bulk is one member's array (tau2-bench's results: ``info``, ``tasks``,
    then ``simulations``): the members before ``streamed`` decoded whole (``head``, by key: line and value), then
    the items of ``streamed`` a block at a time, then the members after it read and checked. ``_Irregular`` for
    anything else, or when a member in ``needs`` does not come before ``streamed``."""

    def __init__(self, path: Path, streamed: str, needs: tuple[str, ...], *, listed: tuple[str, ...] = (),
                 block: int = BLOCK_BYTES) -> None:
        super().__init__(path, block=block)
        self.streamed = streamed
        self.needs = needs
        self.listed = listed
        """The members of ``needs`` that must be arrays: kept as ``(line, item)`` of each item."""
        self.head: dict[str, tuple[int, Any]] = {}

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        with self.path.open("rb") as fh:
            pos = self._skip(fh, 0)
            if self.text[pos:pos + 1] != "{":
                raise _Irregular
            pos = self._skip(fh, pos + 1)
            streaming = False
            while self.text[pos:pos + 1] != "}":
                key, pos = self._value(fh, self._dropped(pos))
                if not isinstance(key, str):
                    raise _Irregular
                pos = self._skip(fh, pos)
                if self.text[pos:pos + 1] != ":":
                    raise _Irregular
                pos = self._skip(fh, pos + 1)
                if key == self.streamed and not streaming:
                    if self.text[pos:pos + 1] != "[" or key in self.head or any(
                            need not in self.head for need in self.needs):
                        raise _Irregular
                    streaming = True
                    pos = (yield from self._items(fh, pos)) + 1
                else:
                    if key in self.head or key == self.streamed:  # said once, before any item: whole document
                        if streaming:
                            raise InvalidRecord(f"{key!r} is given twice in the document", source=str(self.path),
                                                line=self._line_of(pos))
                        raise _Irregular
                    line = self._line_of(pos)
                    if key in self.listed and not streaming:  # with each item's line
                        if self.text[pos:pos + 1] != "[":  # said as the whole document says it
                            raise _Irregular
                        value, pos = _drained(self._items(fh, pos))
                        pos += 1
                    else:
                        value, pos = self._value(fh, pos)
                    self.head[key] = (line, value if not streaming else None)
                pos = self._skip(fh, pos)
                ch = self.text[pos:pos + 1]
                if ch == ",":
                    pos = self._skip(fh, pos + 1)
                elif ch != "}":
                    raise _Irregular
            if not streaming:
                raise _Irregular
            self._end(fh, pos)


def _drained(items: Generator[tuple[int, Any], None, int]) -> tuple[list[tuple[int, Any]], int]:
    """Every item of a generator, and what it returned."""
    found = []
    while True:
        try:
            found.append(next(items))
        except StopIteration as stop:
            return found, stop.value


def member_items(path: Path, streamed: str, needs: tuple[str, ...], *, listed: tuple[str, ...] = (),
                 block: int = BLOCK_BYTES) -> tuple[dict[str, Any], Iterator[tuple[int, Any]]] | None:
    """For a file that is one JSON object: its members in ``needs`` (by key; those in ``listed``, arrays, as
    ``(line, item)`` of each item) and ``(line, value)`` of each item of its member ``streamed``, an array read a
    block at a time (``MemberStream``): what ``JsonDocument`` gives. None when those members do not come first, a
    listed one is not an array, or anything before the first item is irregular: the whole document then reads it.
    An irregularity after it is left to ``JsonDocument`` as ``array_items`` leaves it."""
    stream = MemberStream(path, streamed, needs, listed=listed, block=block)
    items = iter(stream)
    try:
        first = next(items, None)
    except _Irregular:
        return None
    head = {key: stream.head[key][1] for key in needs}
    return head, _members_rest(path, streamed, stream, first, items)


def _members_rest(path: Path, streamed: str, stream: MemberStream, first: tuple[int, Any] | None,
                  items: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    given = 0
    try:
        if first is not None:
            yield first
            given += 1
            for item in items:
                yield item
                given += 1
        return
    except _Irregular:
        stream.text = ""
    doc = JsonDocument.read(path)
    members = {key: pos for key, pos, _ in doc.members(doc.root())}
    for index, (line, _, value) in enumerate(doc.items(members[streamed])):
        if index >= given:
            yield line, value


def _newline_offsets(text: str) -> list[int]:
    offsets = []
    at = text.find("\n")
    while at != -1:
        offsets.append(at)
        at = text.find("\n", at + 1)
    return offsets


def starts_with(path: Path, opening: bytes) -> bool:
    """Whether the file's first non-blank byte is ``opening`` (``b"["`` for a JSON array)."""
    with path.open("rb") as fh:
        head = fh.read(4096)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(opening)
