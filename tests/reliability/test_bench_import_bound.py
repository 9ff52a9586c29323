"""``bench_import_phases``'s bound: all the CPU an import used, spread over the machine's cores, is about the least
wall time any schedule of that work could take. Printed beside the floor, it says whether 1.5× the floor is reachable
by better overlap alone or needs less work, and how much less."""

from __future__ import annotations

from benchmarks.bench_import_phases import cpu_bound_line


def test_the_bound_is_the_cpu_over_the_cores_against_the_floor() -> None:
    line = cpu_bound_line(cpu=4.54, cores=2, floor=1.34)
    assert "4.54 CPU s over 2 cores: 2.27 s (1.69× the floor)" in line
    # 1.5 × 1.34 s = 2.01 s of wall, 4.02 CPU s on two cores: 0.52 CPU s (11%) too many
    assert "1.5× the floor needs ≤ 4.02 CPU s: 0.52 CPU s (11%) less" in line


def test_a_bound_under_the_target_says_overlap_alone_could_reach_it() -> None:
    line = cpu_bound_line(cpu=3.0, cores=2, floor=1.34)
    assert "3.00 CPU s over 2 cores: 1.50 s (1.12× the floor)" in line
    assert "within 1.5× the floor: better overlap alone could reach it" in line


def test_one_core_is_its_cpu() -> None:
    assert "4.54 CPU s over 1 core: 4.54 s (3.39× the floor)" in cpu_bound_line(cpu=4.54, cores=1, floor=1.34)
