"""A Hugging Face ``datasets``-loadable layout of frozen gold versions, for teams that publish.

``DIR/data/<split>.jsonl`` holds one flat row per case: scalar columns to filter on, and the complete
``toolgold.gold/1`` record as a JSON string in ``record``. Tool arguments differ from case to case, so nested
records would not share one Arrow schema; flat rows always do. ``DIR/toolgold/<split>.jsonl`` is the version
exactly as ``toolgold export --version`` writes it (its sha256 is the version's content hash), and
``DIR/README.md`` is the dataset card whose YAML header tells ``datasets.load_dataset`` where the splits are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labeler.files import OutputError, describe_os_error, output_file, write_text
from labeler.store import GoldVersion
from scorer import canonical


def flat_row(line: str) -> dict[str, Any]:
    """One case as a row with the same keys and types as every other row."""
    record = json.loads(line)
    provenance = record.get("provenance") or {}
    calls = record["expected"].get("calls") or []
    return {
        "id": record["id"],
        "conversation_id": record.get("conversation_id"),
        "turn": record.get("turn"),
        "split": record["split"],
        "kind": record["kind"],
        "behavior": record["expected"]["behavior"],
        "expected_tools": [c["name"] for c in calls],
        "tags": list(record.get("tags") or []),
        "rationale": record.get("rationale") or "",
        "annotators": list(provenance.get("annotators") or []),
        "reviewer": provenance.get("reviewer"),
        "gold_version": provenance.get("gold_version"),
        "record": line,
    }


@dataclass(frozen=True)
class WrittenSplit:
    version: GoldVersion
    n_cases: int
    sha256: str
    """Of ``toolgold/<split>.jsonl``: equal to the version's content hash."""


def _write_atomically(path: Path, lines: Iterable[str]) -> str:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(describe_os_error(path.parent, exc, verb="cannot create")) from None
    digest = hashlib.sha256()
    with output_file(path) as fh:
        for line in lines:
            fh.write(line + "\n")
            digest.update((line + "\n").encode("utf-8"))
    return digest.hexdigest()


def write_split(target: Path, version: GoldVersion, lines: Iterable[str]) -> WrittenSplit:
    """Write one version as ``toolgold/<split>.jsonl`` (exact) and ``data/<split>.jsonl`` (flat rows)."""
    exact = target / "toolgold" / f"{version.split}.jsonl"
    digest = _write_atomically(exact, lines)
    with exact.open(encoding="utf-8") as fh:
        rows = [canonical.dumps_stored(flat_row(line.rstrip("\n"))) for line in fh]
    _write_atomically(target / "data" / f"{version.split}.jsonl", rows)
    return WrittenSplit(version, len(rows), digest)


def dataset_card(splits: Sequence[WrittenSplit], *, title: str = "toolgold gold set") -> str:
    """README.md: the ``configs`` header ``datasets`` reads, then what the data is and where it came from."""
    header = ["---", "configs:", "- config_name: default", "  data_files:"]
    for s in splits:
        header += [f"  - split: {s.version.split}", f"    path: data/{s.version.split}.jsonl"]
    header += ["task_categories:", "- text-generation", "tags:", "- tool-use", "- function-calling",
               "- evaluation", "pretty_name: " + json.dumps(title), "---", ""]
    body = [f"# {title}", "",
            "Gold labels for evaluating an agent's tool calls at each decision point: which tool to call, with "
            "which arguments (and how each argument is compared), or whether to make no call or ask the user. "
            "Made with toolgold: annotators labeled, a reviewer approved, and each split is a frozen, "
            "content-hashed version.", "",
            "## Splits", "",
            "| split | version | cases | sha256 of toolgold/<split>.jsonl | parent | frozen by | frozen at |",
            "|---|---|---|---|---|---|---|"]
    for s in splits:
        v = s.version
        body.append(f"| {v.split} | {v.id} | {s.n_cases} | `{s.sha256}` | {v.parent or '-'} | {v.created_by} "
                    f"| {v.created_at} |")
    body += ["", "## Columns", "",
             "- `id`, `conversation_id`, `turn`: the case and the decision point it labels",
             "- `split`, `kind` (`turn` or `trajectory`), `behavior` (`call`, `no_call`, `clarify`)",
             "- `expected_tools`, `tags`, `rationale`",
             "- `annotators`, `reviewer`, `gold_version`: provenance",
             "- `record`: the complete `toolgold.gold/1` record (context messages, tools with their JSON "
             "Schemas, expected calls, acceptable alternatives, per-argument match rules) as a JSON string",
             "", "## Loading", "",
             "```python",
             "import json",
             "from datasets import load_dataset",
             "",
             'gold = load_dataset("path/to/this/directory")',
             'case = json.loads(gold["regression"][0]["record"])',
             "```", "",
             "`toolgold/<split>.jsonl` holds the same cases exactly as `toolgold export --version` writes them; "
             "`toolgold score toolgold/regression.jsonl runs.jsonl` scores an agent against them.", "",
             "## Licensing", "",
             "The context messages and tool schemas come from the transcripts that were labeled; check the "
             "licenses of those sources before publishing.", ""]
    return "\n".join(header + body)


def write_manifest(target: Path, splits: Sequence[WrittenSplit]) -> None:
    manifest = {"format": "toolgold.hf/1", "splits": [
        {"split": s.version.split, "version": s.version.id, "parent": s.version.parent,
         "content_hash": s.version.content_hash, "sha256": s.sha256, "n_cases": s.n_cases,
         "created_by": s.version.created_by, "created_at": s.version.created_at, "note": s.version.note,
         "provenance": dict(s.version.provenance)} for s in splits]}
    (target / "toolgold").mkdir(parents=True, exist_ok=True)
    write_text(target / "toolgold" / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")


__all__ = ["WrittenSplit", "dataset_card", "flat_row", "write_manifest", "write_split"]
