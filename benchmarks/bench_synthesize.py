"""Proposing adversarial candidates over whole real datasets (BFCL, ToolTalk, tau2-bench tasks from shared/, or
the bundled demo when shared/ is absent), one core. The anchor, measured in the same run: validating the same
gold cases again, which every candidate costs once (it is a whole gold case, re-validated)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (REPO.parent / "shared" / "data", REPO.parent.parent / "shared" / "data") if p.is_dir()),
              None)


def _cases() -> tuple[str, list]:  # type: ignore[type-arg]
    from scorer.formats import iter_json_lines, parse_record
    from scorer.importers import convert
    from scorer.model import GoldCase

    if SHARED is None:
        cases = []
        for path in sorted((REPO / "data" / "demo").glob("*.jsonl")):
            for n, value in iter_json_lines(path.read_bytes().splitlines(), str(path)):
                record = parse_record(value, source=str(path), line=n)
                if isinstance(record, GoldCase):
                    cases.append(record)
        return "the bundled demo", cases
    paths = sorted((SHARED / "bfcl").glob("BFCL_v4_*.json"))
    paths += [SHARED / "tau2-bench" / "domains" / d / "tasks.json" for d in ("retail", "airline")]
    paths += [p for d in ("easy", "tooltalk") for p in sorted((SHARED / "tooltalk" / "data" / d).glob("*.json"))]
    return "BFCL v4, ToolTalk, tau2-bench retail+airline", [
        i.record for p in paths for i in convert(p) if isinstance(i.record, GoldCase)]


def main(argv: list[str]) -> None:
    argparse.ArgumentParser(prog="python -m benchmarks.bench_synthesize").parse_args(argv)
    from scorer.model import GoldCase
    from scorer.synthesize import propose

    what, cases = _cases()
    bodies = [c.model_dump() for c in cases]
    started = time.perf_counter()
    for body in bodies:
        GoldCase.model_validate(body)
    anchor = time.perf_counter() - started
    started = time.perf_counter()
    proposal = propose(cases, seed=0)
    took = time.perf_counter() - started
    made = len(proposal.candidates)
    print(f"| what | measured | anchor (same run) |\n|---|---|---|\n"
          f"| propose every deterministic transformation of {len(cases):,} gold cases ({what}) | {made:,} "
          f"candidates + {len(proposal.skipped):,} refusals in {took:.1f} s = **{made / took:,.0f} candidates/s** | "
          f"validating the {len(cases):,} cases once: {anchor:.2f} s ({len(cases) / anchor:,.0f} cases/s) |")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
