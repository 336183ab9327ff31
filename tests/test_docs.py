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
