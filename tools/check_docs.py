#!/usr/bin/env python3
"""Checks that comments, help texts and docs cite only the repository's own docs/.

Fails (exit 1, one line per problem) when a source, test, script or README
  - names a document that is not in the repository (the team's spec or house style, a
    `../shared` path), or a docs page without its `docs/` prefix, or
  - cites `docs/<page>.md §N` (or a relative link to a sibling page with a section inside docs/) where the page or
    its section N does not exist, or
  - cites the tracker ("issue 12"): code and docs say what they do and why, not which ticket
    asked for it.
Usage: tools/check_docs.py [REPOSITORY_ROOT]   (default: the parent of tools/)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
PAGES = tuple(sorted(p.stem for p in (ROOT / "docs").glob("*.md")))
SOURCE_SUFFIXES = {".cpp", ".h", ".py", ".sh", ".txt", ".md", ".cmake"}
SKIP_DIRS = {"build", ".git"}

# Documents outside the repository, whatever their spelling.
OUTSIDE = re.compile(r"\.\./shared|shared/spec|house[ -]style|paper-notes|spec v1", re.I)
# A docs page named without its docs/ prefix (not a path, not a markdown link target).
# A tracker reference in code, tests or docs.
TRACKER = re.compile(r"\bissues? #?\d+", re.I)
BARE_PAGE = re.compile(r"(?<![\w/.\[-])(?<!\]\()(?:%s)\.md\b" % "|".join(p for p in PAGES if p != "README"))
# A section list after a page: "§2", "§2.4", "§2–§4", "§1, §2.3".
SECTIONS = r"(§\d+(?:\.\d+)*(?:\s*(?:–|-|,|and)\s*§\d+(?:\.\d+)*)*)"
SEP = r"(?:[ ]|[ ]*\n[ ]*(?://+|#)[ ]*)"
CITED = re.compile(r"docs/(\w+)\.md" + SEP + SECTIONS)
LINKED = re.compile(r"\[(\w+)\.md\]\(\w+\.md\)" + SEP + SECTIONS)


def sections(page):
    """The section numbers ("2", "2.4") of a docs page's headings."""
    path = ROOT / "docs" / (page + ".md")
    if not path.exists():
        return None
    return set(re.findall(r"^#+\s*§(\d+(?:\.\d+)*)", path.read_text(), re.M))


def files():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if not path.is_file() or rel.parts[0] in SKIP_DIRS:
            continue
        if path.suffix in SOURCE_SUFFIXES or path.name == "CMakeLists.txt":
            yield rel, path.read_text(errors="replace")


def line_of(text, index):
    return text.count("\n", 0, index) + 1


def check():
    problems = []
    known = {page: sections(page) for page in PAGES}
    for rel, text in files():
        if rel.name == "check_docs.py":
            continue
        in_docs = rel.parts[0] == "docs"
        for m in OUTSIDE.finditer(text):
            problems.append(f"{rel}:{line_of(text, m.start())}: cites '{m.group(0)}', which is "
                            "not in the repository")
        for m in TRACKER.finditer(text):
            problems.append(f"{rel}:{line_of(text, m.start())}: '{m.group(0)}' cites the "
                            "tracker (say what the code does, not which issue asked)")
        if not in_docs:
            for m in BARE_PAGE.finditer(text):
                problems.append(f"{rel}:{line_of(text, m.start())}: '{m.group(0)}' without "
                                "docs/ (cite docs/<page>.md §N)")
        for pattern in (CITED, LINKED) if in_docs else (CITED,):
            for m in pattern.finditer(text):
                page, cited = m.group(1), m.group(2)
                where = f"{rel}:{line_of(text, m.start())}"
                if known.get(page) is None:
                    problems.append(f"{where}: docs/{page}.md does not exist")
                    continue
                for number in re.findall(r"§(\d+(?:\.\d+)*)", cited):
                    if number not in known[page]:
                        problems.append(f"{where}: docs/{page}.md has no section §{number}")
    return problems


if __name__ == "__main__":
    found = check()
    for problem in found:
        print(problem)
    print(f"check_docs: {len(found)} problem(s)")
    sys.exit(1 if found else 0)
