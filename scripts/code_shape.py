"""Lines of code per app and each app's longest functions (the shape a reader meets).

Usage: python scripts/code_shape.py [ROOT]   (ROOT: a checkout, default this one)
Counts non-blank lines of Python outside migrations; a function's length is
its lines from ``def`` to its last statement. The numba kernels (one compiled
unit each, exempt from the complexity rules) are left out of "longest".
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

APPS = ("hxportal", "allocation", "health", "simulation", "recommendations", "whatif",
        "dashboard", "metrics")
KERNELS = ("simulation/engine/loop.py", "allocation/hyperx/_kernels.py")


def shape(root: Path) -> list[tuple[str, int, int, str, int]]:
    """(app, modules, lines, longest function, its length) for each app present."""
    rows = []
    for app in APPS:
        modules = [p for p in (root / app).rglob("*.py") if "migrations" not in p.parts]
        if not modules:
            continue
        lines, longest, where = 0, 0, ""
        for path in modules:
            text = path.read_text(encoding="utf-8")
            lines += sum(1 for line in text.splitlines() if line.strip())
            if path.relative_to(root).as_posix() in KERNELS:
                continue
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = node.end_lineno - node.lineno + 1
                    if length > longest:
                        longest = length
                        where = f"{path.relative_to(root).with_suffix('')}.{node.name}"
        rows.append((app, len(modules), lines, where.replace("/", "."), longest))
    return rows


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    rows = shape(root)
    total = sum(r[2] for r in rows)
    print(f"{'app':<16} {'modules':>7} {'lines':>6} {'share':>6}  longest function (lines)")
    for app, modules, lines, where, longest in rows:
        print(f"{app:<16} {modules:>7} {lines:>6} {lines / total:>6.0%}  {where} ({longest})")


if __name__ == "__main__":
    main()
