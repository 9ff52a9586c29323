"""Schema drift on real BFCL data, end to end through ``toolgold import`` and ``toolgold drift``, on SQLite
and PostgreSQL.

Different BFCL questions define different tools under the same name (``multiple`` alone has tools whose name
recurs with another schema). Drift is keyed by each case's own tool set (the transcript it was labeled on),
so a first import flags nothing; a re-imported copy in which ONE question's tool changed flags exactly that
question's case.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from tests.conftest import SHARED_DATA
from tests.review.kit import people

BFCL = SHARED_DATA / "bfcl"
CATEGORY = "BFCL_v4_multiple.json"
CHANGED = "multiple_0"
"""Its first function, ``triangle_properties.get``, takes integer sides; its gold expects side1 = 5."""

pytestmark = pytest.mark.skipif(
    not (BFCL / CATEGORY).is_file() or not (BFCL / "possible_answer" / CATEGORY).is_file(),
    reason=f"the real BFCL data is not at {BFCL} (set TOOLGOLD_SHARED_DATA; CI keeps shared/ beside the clone)")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def copy_of(target: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """The category with its answers under ``target``; ``edit`` changes the CHANGED question's line."""
    (target / "possible_answer").mkdir(parents=True)
    shutil.copy(BFCL / "possible_answer" / CATEGORY, target / "possible_answer" / CATEGORY)
    lines = (BFCL / CATEGORY).read_text(encoding="utf-8").splitlines()
    if edit is not None:
        for i, line in enumerate(lines):
            record = json.loads(line)
            if record["id"] == CHANGED:
                edit(record)
                lines[i] = json.dumps(record)
                break
        else:
            raise AssertionError(f"{CHANGED} is not in {CATEGORY}")
    (target / CATEGORY).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target / CATEGORY


def side1_as_string(record: dict[str, Any]) -> None:
    record["function"][0]["parameters"]["properties"]["side1"]["type"] = "string"


def precision_required(record: dict[str, Any]) -> None:
    parameters = record["function"][0]["parameters"]
    parameters["properties"]["precision"] = {"type": "integer", "description": "Decimal places in the result."}
    parameters["required"].append("precision")


@pytest.fixture
def first_import(any_store: Store, tmp_path: Path) -> Store:
    people(any_store)
    code, out, err = run("import", str(copy_of(tmp_path / "original")), "--db", any_store.url)
    n = len((BFCL / CATEGORY).read_text(encoding="utf-8").splitlines())
    assert code == 0 and out.startswith(f"{n} transcripts added"), err
    assert "flagged" not in err
    return any_store


def test_a_first_import_of_a_bfcl_category_flags_nothing(first_import: Store) -> None:
    code, out, err = run("drift", "--db", first_import.url)
    assert (code, out, err) == (0, "", "0 gold cases flagged for re-labeling (0 no longer fit the tools)\n")
    assert first_import.relabel_queue(actor="rita") == []
    # Importing the same file again changes nothing and still flags nothing.
    assert first_import.check_schema_drift() == []


@pytest.mark.parametrize(("edit", "kind", "line"), [
    (side1_as_string, "type_changed",
     f"bfcl/{CHANGED}: `triangle_properties.get.side1` no longer accepts the expected value 5: "
     "5 is not of type 'string'"),
    (precision_required, "new_required",
     f"bfcl/{CHANGED}: `triangle_properties.get` now requires `precision`, which the expected call does not set"),
])
def test_a_reimported_copy_with_one_changed_schema_flags_exactly_that_case(
        first_import: Store, tmp_path: Path, edit: Callable[[dict[str, Any]], None], kind: str, line: str) -> None:
    before = first_import.get_gold(f"bfcl/{CHANGED}")
    code, out, err = run("import", str(copy_of(tmp_path / "changed", edit)), "--db", first_import.url)
    assert code == 0, err
    assert "1 gold cases flagged for re-labeling" in err
    assert "1 transcripts' tools changed" in out
    [item] = first_import.relabel_queue(actor="rita")
    assert (item.case_id, [r.kind for r in item.reasons]) == (f"bfcl/{CHANGED}", [kind])
    # The gold stays as labeled until a reviewer decides; the transcript now offers the changed tool.
    assert first_import.get_gold(f"bfcl/{CHANGED}") == before
    offered = first_import.get_transcript(f"bfcl/{CHANGED}").transcript.tools
    assert offered == item.tools and offered != before.tools
    code, out, err = run("drift", "--db", first_import.url)
    assert (code, out) == (1, line + "\n")
    assert err == "1 gold cases flagged for re-labeling (1 no longer fit the tools)\n"
