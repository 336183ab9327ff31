"""benchmarks/profile_loop_lines.py: the line table, the symbol span and the
attribution of samples to lines, on the tools' own output formats.  Nothing is
sampled here; the script's run needs perf and takes minutes."""

from __future__ import annotations

from collections import Counter
from types import ModuleType

import pytest

from tests.benchmark_scripts import load_benchmark

DECODED = """\
Contents of the .debug_line section:

CU: loop.py:
File name                            Line number    Starting address    View    Stmt
loop.py                                      891                   0               x
loop.py                                      894               0x291               x
loop.py                                        0               0x2a1
loop.py                                      896               0x2a9               x
builtins.py                                   12               0x2b0               x
"""

NM = """\
0000000000000000 0000000000008e60 T _ZN10simulation6engine4loop10run_cyclesB2v1Exx
0000000000008e60 0000000000003340 T _ZN7cpython10simulation6engine4loop10run_cyclesB2v1Exx
                 U NRT_decref
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_benchmark("profile_loop_lines")


def test_line_table_keeps_loop_rows_in_address_order(tool: ModuleType) -> None:
    assert tool.line_table(DECODED) == [(0, 891), (0x291, 894), (0x2A1, 0), (0x2A9, 896)]


def test_function_span_finds_the_loop_not_its_wrapper(tool: ModuleType) -> None:
    assert tool.function_span(NM, "_ZN10simulation6engine4loop10run_cycles") == (0, 0x8E60)
    with pytest.raises(LookupError):
        tool.function_span(NM, "_ZN3nothere")


def test_samples_go_to_the_line_whose_code_holds_them(tool: ModuleType) -> None:
    table = tool.line_table(DECODED)
    base = 0x7F0000000000
    samples = [base + 0x10, base + 0x292, base + 0x2A5, base + 0x2AA, base + 0x9000, 42]
    lines, inside = tool.attribute(samples, base, 0x8E60, table)
    # 0x2a5 is compiler-made code (line 0): it counts for the row before it
    assert inside == 4
    assert lines == {891: 1, 894: 2, 896: 1}


def test_report_gives_shares_of_the_loop_and_the_source_text(tool: ModuleType) -> None:
    source = [f"line {i}" for i in range(1, 900)]
    text = tool.report(Counter({894: 3, 891: 1}), 4, 8, source, top=5)
    assert "4 in run_cycles (50 %)" in text
    first, second = text.splitlines()[2:4]
    assert first.startswith(" 75.0%") and first.endswith("line 894")
    assert second.startswith(" 25.0%") and "891" in second


def test_machine_names_parse(tool: ModuleType) -> None:
    assert tool._parse_machine("16x16x16c16") == ((16, 16, 16), 16)
    assert tool._parse_machine("8x8c8") == ((8, 8), 8)
