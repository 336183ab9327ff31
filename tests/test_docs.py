"""The repository carries its own design documents (no database needed).

* No text file points at documents outside the repository.
* Every citation ``docs/<name>.md section N`` (or ``sections N-M``) names a
  document that exists and a section number that one of its headings carries
  (``## 3. Title`` gives 3, ``### 3.2 Title`` gives 3.2).
* Relative Markdown links resolve to files inside the repository.

Files are those git knows: tracked ones plus new ones not ignored, so a file
is checked before it is first committed. Without git, the tree is walked.
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".html", ".toml", ".txt", ".js", ".css"}
SKIP_DIRS = {".git", ".venv", "data", "staticfiles", "node_modules", "__pycache__"}
# Built from parts so that this file does not trip its own check.
OUTSIDE = ("../" + "shared", "shared/" + "docs", "DOMAIN" + ".md", "ARCHITECTURE" + ".md")
HEADING = re.compile(r"^#{2,6}[ \t]+(\d+(?:\.\d+)*)\.?[ \t]", re.MULTILINE)
NUMBER = r"\d+(?:\.\d+)*"
CITATION = re.compile(
    rf"docs/([\w-]+\.md)[`)\]]?\s+sections?\s+({NUMBER}(?:\s*(?:-|–|,|and)\s*{NUMBER})*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


@cache
def text_files() -> tuple[Path, ...]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
        names = [n for n in out.decode().split("\0") if n]
        paths = [ROOT / n for n in names]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*")
                 if not SKIP_DIRS.intersection(p.relative_to(ROOT).parts)]
    return tuple(sorted(p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file()))


@cache
def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def sections(doc: Path) -> set[str]:
    return set(HEADING.findall(read(doc)))


def test_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in text_files()}
    assert {"README.md", "pyproject.toml", "tests/test_docs.py"} <= names


def test_design_docs_exist_with_numbered_sections():
    for name in ("architecture.md", "domain.md"):
        doc = ROOT / "docs" / name
        assert doc.is_file(), f"docs/{name} is missing"
        assert sections(doc), f"docs/{name} has no numbered '## N. Title' headings"


def test_nothing_points_outside_the_repository():
    found = []
    for path in text_files():
        text = read(path)
        for needle in OUTSIDE:
            start = text.find(needle)
            while start != -1:
                found.append(f"{path.relative_to(ROOT)}:{line_of(text, start)}: {needle}")
                start = text.find(needle, start + 1)
    assert not found, "references to documents outside the repository:\n" + "\n".join(found)


def test_section_citations_exist():
    bad = []
    checked = 0
    for path in text_files():
        text = read(path)
        for match in CITATION.finditer(text):
            where = f"{path.relative_to(ROOT)}:{line_of(text, match.start())}"
            doc = ROOT / "docs" / match.group(1)
            if not doc.is_file():
                bad.append(f"{where}: docs/{match.group(1)} does not exist")
                continue
            known = sections(doc)
            for number in re.findall(NUMBER, match.group(2)):
                checked += 1
                if number not in known:
                    bad.append(f"{where}: docs/{match.group(1)} has no section {number} "
                               f"(it has {', '.join(sorted(known, key=_key))})")
    assert not bad, "citations of missing sections:\n" + "\n".join(bad)
    assert checked, "no 'docs/<name>.md section N' citation found at all"


def test_relative_markdown_links_stay_inside_and_exist():
    bad = []
    for path in text_files():
        if path.suffix != ".md":
            continue
        text = read(path)
        for match in LINK.finditer(text):
            target = match.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # a page anchor or an absolute URL
            where = f"{path.relative_to(ROOT)}:{line_of(text, match.start())}"
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(ROOT):
                bad.append(f"{where}: {target} leaves the repository")
            elif not resolved.exists():
                bad.append(f"{where}: {target} does not exist")
    assert not bad, "broken relative links:\n" + "\n".join(bad)


def _key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


TOP_DIRS = ("allocation", "health", "recommendations", "simulation", "dashboard", "metrics",
            "hxportal",
            "tests", "templates", "static", "docs", "benchmarks", "contrib", "scripts")
REPO_PATH = re.compile(rf"`((?:{'|'.join(TOP_DIRS)})/[\w./-]*)`")


def test_paths_the_design_docs_name_exist():
    """A moved or renamed module breaks its mention in the docs, not silently."""
    missing = []
    for name in ("architecture.md", "domain.md"):
        doc = ROOT / "docs" / name
        text = read(doc)
        for match in REPO_PATH.finditer(text):
            if not (ROOT / match.group(1)).exists():
                missing.append(f"docs/{name}:{line_of(text, match.start())}: {match.group(1)}")
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


#: "`NAME` in `path.py`" and "`NAME` (`path.py`": a symbol named beside the file it is in.
SYMBOL_BESIDE = re.compile(
    rf"`([A-Za-z_]\w*(?:\.\w+)?)`(?:\s+in\s+|\s*\()`((?:{'|'.join(TOP_DIRS)})/[\w./-]+\.py)`")


def defined_names(path: Path) -> dict[str, set[str]]:
    """Names a module defines or imports at its top level, each with the names
    defined in its body (a class's methods and attributes)."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(read(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = {getattr(n, "name", None) or t.id
                                for n in getattr(node, "body", []) if isinstance(
                                    n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                                    | ast.Assign | ast.AnnAssign)
                                for t in ([n] if hasattr(n, "name") else getattr(
                                    n, "targets", [getattr(n, "target", None)]))
                                if hasattr(n, "name") or isinstance(t, ast.Name)}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in getattr(node, "targets", [getattr(node, "target", None)]):
                if isinstance(target, ast.Name):
                    names[target.id] = set()
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = set()
    return names


def symbols_beside_paths(text: str) -> list[tuple[int, str, str]]:
    return [(line_of(text, m.start()), m.group(1), m.group(2))
            for m in SYMBOL_BESIDE.finditer(text)]


def test_symbols_the_design_docs_name_beside_a_path_are_defined_there():
    """"`least_loaded_diagonal` (`allocation/hyperx/ours.py`)" must stay true: the
    function is defined (or imported) at the top level of that file."""
    wrong, checked = [], 0
    for name in ("architecture.md", "domain.md"):
        text = read(ROOT / "docs" / name)
        for line, symbol, where in symbols_beside_paths(text):
            path = ROOT / where
            if not path.is_file():
                continue  # test_paths_the_design_docs_name_exist says so
            checked += 1
            head, _, member = symbol.partition(".")
            names = defined_names(path)
            if head not in names or (member and member not in names[head]):
                wrong.append(f"docs/{name}:{line}: {symbol} is not defined in {where}")
    assert not wrong, "symbols named beside a file they are not in:\n" + "\n".join(wrong)
    assert checked >= 5, checked


def test_the_symbol_check_reads_both_forms(tmp_path):
    text = ("Add it to `OWN` in `allocation/hyperx/policies.py`; `allocate`\n"
            "(`allocation/hyperx/online.py`) dispatches; `SimConfig.validate` in\n"
            "`simulation/engine/config.py`.")
    assert [(s, p) for _, s, p in symbols_beside_paths(text)] == [
        ("OWN", "allocation/hyperx/policies.py"), ("allocate", "allocation/hyperx/online.py"),
        ("SimConfig.validate", "simulation/engine/config.py")]
    names = defined_names(ROOT / "simulation/engine/config.py")
    assert "validate" in names["SimConfig"] and "allocate" not in names
