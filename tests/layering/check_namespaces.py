#!/usr/bin/env python3
"""check_namespaces.py — namespaces follow folders: the code of harness/<folder>/ is in
ddpbench::<folder> (or a namespace under it, as modes/ddp's ddpbench::modes::ddp), of reports/ in
ddpbench::reports and of scenarios/ in ddpbench::scenarios. A file may first declare names of
other namespaces it only refers to (`namespace ddpbench::launch { class RankZygote; }`); the last
namespace it opens is where its own code lives, and that is the one checked.
Usage: check_namespaces.py SOURCE_ROOT"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
listed = subprocess.run(["git", "-C", root, "ls-files", "harness", "reports", "scenarios"],
                        capture_output=True, text=True).stdout.split()
OPENED = re.compile(r"^namespace (ddpbench(?:::\w+)*) \{", re.M)
wrong, checked = [], 0
for path in listed:
    if not path.endswith((".h", ".cpp")):
        continue
    parts = path.split("/")
    if parts[0] == "harness":
        if len(parts) < 3:
            continue  # harness/errors.h and its kind: ddpbench itself
        expected = "ddpbench::" + parts[1]
    else:
        expected = "ddpbench::" + parts[0]
    opened = OPENED.findall(open(os.path.join(root, path), encoding="utf-8").read())
    if not opened:
        continue  # a main() or a file of macros
    checked += 1
    last = opened[-1]
    if last != expected and not last.startswith(expected + "::"):
        wrong.append(f"{path}: its code is in {last}, not {expected}")
for w in wrong:
    print(w)
print(f"{checked} files checked, {len(wrong)} outside their folder's namespace")
sys.exit(1 if wrong else 0)
