"""Reading the top-level records of a logged file, whatever the logger wrote: one JSON document (an
object, or an array of records), or JSON Lines. Each record comes with the line it starts on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer import canonical, strict_json
from scorer.errors import InvalidRecord
from scorer.formats import iter_json_lines_tolerant
from scorer.importers.jsondoc import JsonDocument, array_items

Located = tuple[int, Any] | InvalidRecord


def each_record(path: Path, *, split_arrays: bool = True) -> Iterator[Located]:
    """``(line, value)`` for every record in ``path`` (an ``InvalidRecord`` for a record that is not JSON,
    and reading goes on). A JSON array is split into its items unless ``split_arrays`` is false."""
    with path.open("rb") as fh:
        head = fh.read(64 * 1024)
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first_line = body.split(b"\n", 1)[0]
    if _is_complete_json(first_line):
        source = str(path)
        with path.open("rb") as fh:
            for line, value in iter_json_lines_tolerant(fh, source):
                if isinstance(value, InvalidRecord):
                    yield value
                elif isinstance(value, list) and split_arrays:
                    yield from ((line, item) for item in value)
                else:
                    yield line, value
        return
    try:
        if split_arrays and body.startswith(b"["):  # a block at a time: memory for a record, not the file
            yield from array_items(path)
            return
        doc = JsonDocument.read(path)
        root = doc.root()
        if doc.kind(root) == "array" and split_arrays:
            for line, _, value in doc.items(root):
                yield line, value
        else:
            value, end = doc.decode(root)
            if doc.skip(end) < len(doc.text):
                raise InvalidRecord("extra data after the document", source=str(path), line=doc.line(doc.skip(end)))
            yield doc.line(root), value
    except InvalidRecord as err:
        yield err


def _is_complete_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def loads_if_json(value: Any) -> Any:
    """A JSON string attribute (``"[{...}]"``) decoded; anything else as it is.

    Text that is not JSON stays a string. JSON text holding what cannot be stored is refused, as
    ``common.json_text`` refuses it and as the strict reader refuses it outside a string (an
    ``InvalidRecord``, which the importer places at its file and line): a NaN, ±Infinity or a number that
    overflows (``1e400``), named where it sits (``JSON text: [0].parts[0].content: Infinity is not a JSON
    number``), a lone surrogate, nesting deeper than ``MAX_DEPTH``. Decoded by Python's ``json`` and let
    through, such a value would be stored as ``null``."""
    if not (isinstance(value, str) and value[:1] in ("[", "{")):
        return value
    try:
        decoded = json.loads(value)
    except RecursionError:
        raise InvalidRecord(f"JSON text: nested deeper than {strict_json.MAX_DEPTH} levels") from None
    except ValueError:
        return value
    try:
        canonical.refuse_non_finite(decoded)
        strict_json.check(decoded)
    except canonical.NonFiniteNumber as exc:
        raise InvalidRecord(f"JSON text: {exc.message} (JSON has no NaN or Infinity)") from None
    except InvalidRecord as exc:
        raise InvalidRecord(f"JSON text: {exc.message}") from None
    return decoded
