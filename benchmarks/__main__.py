"""`make bench`: run every benchmark and print one Markdown table per benchmark.

Each benchmark module exposes ``main(argv) -> None`` and prints its own table; figures go in the README.
Run one alone with ``python -m benchmarks.<name>``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> None:
    wanted = set(argv)
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    for name in names:
        if wanted and name not in wanted and name.removeprefix("bench_") not in wanted:
            continue
        print(f"\n## {name}\n", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"benchmarks.{name}").main([])
        print(f"\n({name} took {time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
