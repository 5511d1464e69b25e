#!/usr/bin/env python3
"""check_docs.py — the documentation stays a front page and a set of pages that hold together
(issue 75): README.md is at most 250 lines; every page of docs/ is linked from it; every relative
link in README.md, docs/*.md and reports/*.md names a file that exists and, with '#anchor', a
heading of that file (GitHub's anchors: lower case, punctuation but '-' and '_' dropped, spaces
to '-'). Links to the web are left alone: nothing here may reach the network.
Usage: check_docs.py SOURCE_ROOT"""
import functools
import os
import re
import sys

MAX_README_LINES = 250
root = sys.argv[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def outside_code(text):
    """The text with fenced code blocks and inline code blanked (links in them are examples)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


@functools.lru_cache(maxsize=None)  # a page is read once, however many links name it
def anchors(path):
    found = set()
    for line in outside_code_lines(read(path)):
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


def outside_code_lines(text):
    fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            yield line


pages = ["README.md"]
pages += sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs"))
                if f.endswith(".md"))
pages += sorted(os.path.join("reports", f) for f in os.listdir(os.path.join(root, "reports"))
                if f.endswith(".md")) if os.path.isdir(os.path.join(root, "reports")) else []
problems = []

readme = read("README.md")
lines = readme.count("\n")
if lines > MAX_README_LINES:
    problems.append(f"README.md has {lines} lines, over {MAX_README_LINES}: move a topic to docs/")

for page in pages:
    for target in LINK.findall(outside_code(read(page))):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) \
            if file_part else page
        if not os.path.exists(os.path.join(root, resolved)):
            problems.append(f"{page}: the link ({target}) names {resolved}, which does not exist")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            problems.append(f"{page}: the link ({target}) names #{anchor}, which is no heading "
                            f"of {resolved}")

linked = {os.path.normpath(t.partition("#")[0]) for t in LINK.findall(outside_code(readme))}
for page in pages:
    if page.startswith("docs/") and page not in linked:
        problems.append(f"{page} is not linked from README.md's table of pages")

for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print(f"ok: README.md {lines} lines; {len(pages)} pages, every link resolves")
