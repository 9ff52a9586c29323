"""Every record of the real datasets (tests/data, and /work/shared/data when TOOLGOLD_SHARED_DATA names it)
serializes to the same values through ``to_json`` (pydantic's JSON read back by orjson) as through
``model_dump(mode="json")``, and to the same canonical text through ``dumps_record`` (orjson, the import's
path) as through ``canonical.dumps`` (json, the reference): the bodies and content hashes stored by an import do not change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorer import canonical, importers
from scorer.formats import dumps_record, to_json
from scorer.importers.base import Converted, ImportOptions
from scorer.model import ToolSpec

DATA = Path(__file__).resolve().parents[1] / "data"


def _files() -> list[Path]:
    roots = [DATA / "real", DATA / "app"]
    shared = os.environ.get("TOOLGOLD_SHARED_DATA")
    if shared:
        roots.append(Path(shared))
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and p.suffix in (".json", ".jsonl"))


def test_the_real_records_serialize_as_the_reference_does() -> None:
    compared = 0
    options = ImportOptions(tools=(ToolSpec(name="placeholder"),))
    for path in _files():
        try:
            items = list(importers.convert(path, None, options))
        except Exception:  # not a file of a known format (a tools file, a task list): nothing to compare
            continue
        for item in items:
            if isinstance(item, Converted):
                value = item.record.model_dump(mode="json")  # the reference, as it was
                assert to_json(item.record) == value, f"{path}:{item.line}"
                assert dumps_record(item.record) == canonical.dumps(value), f"{path}:{item.line}"
                for tool in value.get("tools") or []:
                    assert canonical.dumps_json_values(tool) == canonical.dumps(tool), f"{path}:{item.line}"
                compared += 1
    if compared < 100:
        pytest.fail(f"only {compared} real records compared: the datasets are missing")
