"""benchmarks/engine_size_scan.py: machine names, the work given to each size,
the cache reader and the report's shares, from runs it is given.  No simulation
is timed here and no speed is asserted."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def scan() -> ModuleType:
    return load_benchmark("engine_size_scan")


def test_machine_names_parse(scan: ModuleType) -> None:
    assert scan._parse("8x8c8") == ((8, 8), 8, None)
    assert scan._parse("16x16x16c16") == ((16, 16, 16), 16, None)
    assert scan._parse("8x8x8c8b256-128") == ((8, 8, 8), 8, (256, 128))


def test_buffer_sizes_reach_the_config(scan: ModuleType) -> None:
    cfg = scan._config("8x8x8c8b256-128", 5_120_000)
    assert (cfg["input_buffer_packets"], cfg["output_buffer_packets"]) == (256, 128)
    assert "input_buffer_packets" not in scan._config("8x8x8c8", 5_120_000)


def test_every_size_gets_the_same_work_above_a_floor(scan: ModuleType) -> None:
    small, large = scan._config("8x8c8", 5_120_000), scan._config("16x16x16c16", 5_120_000)
    assert small["max_cycles"] == 10_000 and small["ranks"] == 512
    assert large["max_cycles"] == 200  # the floor: a run long enough to fill the network
    assert large["warmup_cycles"] == 100 and large["ranks"] == 65_536


def test_last_level_cache_is_the_largest_level(scan: ModuleType) -> None:
    llc = scan.last_level_cache()
    if llc is None:
        pytest.skip("no CPU cache sizes in /sys on this host")
    assert llc >= 2**16


def _run(machine: str, wall: float, grown: float) -> dict:
    return {"machine": machine, "endpoints": 512, "cycles": 100, "wall": wall,
            "phit_hops": 1_000_000, "estimate": 2**21, "grown_mib": grown}


def test_report_shares_against_the_first_machine(scan: ModuleType,
                                                 capsys: pytest.CaptureFixture) -> None:
    runs = {"8x8c8": [_run("8x8c8", 1.0, 8.0)] * 3,
            "16x16x16c16": [_run("16x16x16c16", 4.0, 64.0), _run("16x16x16c16", 5.0, 64.0),
                            _run("16x16x16c16", 4.0, 64.0)]}
    scan._report(["8x8c8", "16x16x16c16"], runs, 32 * 2**20)
    out = capsys.readouterr().out
    assert "last-level cache: 32 MiB" in out
    big = next(line for line in out.splitlines() if line.startswith("16x16x16c16"))
    assert big.split()[-4:] == ["0.25", "0.25,", "0.20,", "0.25"]  # share, then pair by pair
    assert "64.0 MiB        2.00" in big  # touched, and touched / last-level cache
