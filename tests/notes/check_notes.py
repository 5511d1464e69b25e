#!/usr/bin/env python3
"""check_notes.py — the named Notes (docs/ARCHITECTURE.md, "Contracts that make the comparison
honest"; comments such as `// Note [Detectable faults]` over their explanation) stay honest: every
Note a file cites is defined exactly once in the tree, and no file cites a contract by number
("contract 5"), which a renumbering would silently break. A definition starts its line (after a
comment marker or a list number) with the name, followed by ':' or by nothing; a citation is any
other mention, and may wrap across comment lines or C++ string literals.
Usage: check_notes.py SOURCE_ROOT"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
files = listed.stdout.split() if listed.returncode == 0 else []
if not files:  # not a git checkout: every file outside build folders
    files = [os.path.relpath(os.path.join(d, f), root)
             for d, subdirs, names in os.walk(root)
             for f in names
             if not any(part.startswith(("build", ".")) for part in
                        os.path.relpath(d, root).split(os.sep) if part != ".")]
files = [f for f in files if f.endswith((".cpp", ".h", ".md", ".py", ".sh", ".cmake", ".txt",
                                         ".in", ".yaml"))
         and not f.startswith("tests/notes/")]

NAME = re.compile(r"Note \[([^\]]+)\]")
DEFINITION = re.compile(r"^\s*(?://+|#+|\*)?\s*(?:\d+\.\s+)?Note \[([^\]]+)\]\s*(?::|$)")
NUMBERED = re.compile(r"\bcontract \d+\b", re.IGNORECASE)

cited, defined, numbered = {}, {}, []
for path in files:
    try:
        text = open(f"{root}/{path}", encoding="utf-8").read()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    # One line of prose: comment markers and string-literal joins dropped, whitespace collapsed.
    flat = re.sub(r'"\s*\n\s*"', "", text)
    flat = re.sub(r"\n\s*(//+|#+|\*|>)?", " ", flat)
    flat = re.sub(r"\s+", " ", flat)
    for m in NAME.finditer(flat):
        cited.setdefault(m.group(1), set()).add(path)
    for number, line in enumerate(text.splitlines(), 1):
        m = DEFINITION.match(line)
        if m:
            defined.setdefault(m.group(1), []).append(f"{path}:{number}")
    for m in NUMBERED.finditer(flat):
        numbered.append(f"{path}: '{m.group(0)}'")

wrong = []
for name, where in sorted(cited.items()):
    places = defined.get(name, [])
    if not places:
        wrong.append(f"Note [{name}] is cited ({', '.join(sorted(where))}) and defined nowhere")
    elif len(places) > 1:
        wrong.append(f"Note [{name}] is defined {len(places)} times: {', '.join(places)}")
for n in numbered:
    wrong.append(f"a contract cited by number, not by its Note's name: {n}")
for w in wrong:
    print("WRONG", w)
print(f"{len(cited)} Notes cited, {sum(len(v) for v in defined.values())} definitions, "
      f"{len(wrong)} wrong")
sys.exit(1 if wrong else 0)
