"""``bench_bfcl --cache``: the simulated cache misses per item that explain why its instruction ratio and its
time ratio differ. Its machine geometry and cachegrind's totals are read right, and a command that walks a
buffer far larger than the caches counts the misses it must."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from benchmarks.bench_bfcl import _cache_counts, cache_geometry, cachegrind_summary

OUT = """desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         49152 B, 64 B, 12-way associative
desc: LL cache:         2097152 B, 64 B, 16-way associative
cmd: python -c
import gc
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=???
fn=???
0 1 2 3 4 5 6 7 8 9
summary: 446613477 9939707 25445 140825769 6034583 621114 66081756 599473 43006
"""


def test_the_totals_are_read_by_event_from_the_summary_line() -> None:
    found = cachegrind_summary(OUT)
    assert found["Ir"] == 446_613_477 and found["D1mr"] == 6_034_583 and found["DLmw"] == 43_006
    assert list(found) == ["Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"]


@pytest.mark.parametrize("text", [OUT.split("summary:")[0], OUT.replace(" 43006", "")])
def test_an_output_without_a_whole_summary_is_an_error_not_zero_misses(text: str) -> None:
    with pytest.raises(RuntimeError, match="no summary"):
        cachegrind_summary(text)


def _cache(root: Path, index: int, level: int, kind: str, size: str, ways: int) -> None:
    folder = root / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in (("level", level), ("type", kind), ("size", size), ("ways_of_associativity", ways),
                        ("coherency_line_size", 64)):
        (folder / name).write_text(f"{value}\n")


def test_the_geometry_is_this_machines_level_1_caches_and_its_level_2_as_the_last_level(tmp_path: Path) -> None:
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    _cache(tmp_path, 1, 1, "Instruction", "32K", 8)
    _cache(tmp_path, 2, 2, "Unified", "2048K", 16)
    _cache(tmp_path, 3, 3, "Unified", "266240K", 20)
    assert cache_geometry(tmp_path) == {"--D1": "49152,12,64", "--I1": "32768,8,64", "--LL": "2097152,16,64"}


def test_without_a_level_2_cache_described_cachegrind_is_left_to_detect_them(tmp_path: Path) -> None:
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    _cache(tmp_path, 1, 1, "Instruction", "32K", 8)
    assert cache_geometry(tmp_path) == {}
    assert cache_geometry(tmp_path / "absent") == {}


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind (Debian's valgrind package)")
def test_walking_a_buffer_larger_than_the_caches_counts_a_miss_per_line(tmp_path: Path) -> None:
    geometry = {"--I1": "32768,8,64", "--D1": "49152,12,64", "--LL": "2097152,16,64"}
    walk = "b = bytearray({}); sum(b[::64])"
    small = _cache_counts([sys.executable, "-S", "-c", walk.format(0)], tmp_path, geometry)
    large = _cache_counts([sys.executable, "-S", "-c", walk.format(16 << 20)], tmp_path, geometry)
    lines = (16 << 20) // 64  # the buffer is written once (zeroed), then read a byte per line
    assert large["D1mr"] - small["D1mr"] >= lines * 0.9
    assert large["DLmr"] - small["DLmr"] >= lines * 0.9  # 16 MB cannot stay in a 2 MB level 2
    assert not list(tmp_path.iterdir())  # the output file is not left behind
