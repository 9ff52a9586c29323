"""`toolgold sample` over inputs larger than memory: peak RSS and throughput on 1,000,000 conversations,
beside the same command on 10,000 (the anchor: a streaming sampler's memory must not grow with the input).

Each conversation is small and distinct (a user question and one call of one of 40 tools, from 5
sources), written as toolgold JSON Lines. Target: peak RSS on 1M within 1.5x of the 10k run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bytecode import cache_bytecode

REPO = Path(__file__).resolve().parent.parent


def write(path: Path, n: int) -> int:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            tool = f"tool_{i % 40}"
            fh.write(json.dumps({
                "format": "toolgold.transcript/1", "id": f"bench/{i}", "metadata": {"source": f"svc-{i % 5}"},
                "tools": [], "messages": [
                    {"role": "user", "content": f"Please look up order O-{i} for me"},
                    {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                        "name": tool, "arguments": json.dumps({"order_id": f"O-{i}", "page": i % 3})}}]}]}) + "\n")
    return path.stat().st_size


def sample(path: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `toolgold sample` process."""
    code = ("import resource, sys; from labeler.cli import main; sys.argv = ['toolgold'] + sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, "sample", str(path), "-n", "1000", "--seed", "1",
                           "-o", str(out)], cwd=REPO, capture_output=True, text=True, check=True,
                          env={**os.environ, "TOOLGOLD_DB": str(path.parent / "unused.db")})
    wall = time.perf_counter() - started
    return wall, int(done.stderr.strip().splitlines()[-1]) / 1024


def main(argv: list[str]) -> None:
    cache_bytecode()  # the timed processes read the project's bytecode, as a user's second run does
    big = int(argv[0]) if argv else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for n in (10_000, big):
            path = Path(tmp) / f"logs-{n}.jsonl"
            size = write(path, n)
            wall, rss = sample(path, Path(tmp) / f"sample-{n}.jsonl")
            rows.append((n, size, wall, rss))
            path.unlink()
        print("| conversations | input | wall | rate | peak RSS |")
        print("|---|---|---|---|---|")
        for n, size, wall, rss in rows:
            print(f"| {n:,} | {size / 1e6:.0f} MB | {wall:.1f} s | {n / wall:,.0f}/s | {rss:.0f} MB |")
        anchor, measured = rows[0][3], rows[-1][3]
        print(f"\npeak RSS {measured:.0f} MB on {big:,} vs {anchor:.0f} MB on 10,000 (anchor): "
              f"{measured / anchor:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main(sys.argv[1:])
