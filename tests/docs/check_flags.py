#!/usr/bin/env python3
"""check_flags.py — every flag docs/commands.md shows is one the command takes, and every flag a
command takes is shown there (issue 75: "every documented flag checked by a test"). The flags a
command takes are read from `ddpbench COMMAND --help` (help_flags.py), so the block cannot drift
from the code. And docs/flags.md, the flag reference of run and scale, is what `ddpbench list
--flags` writes from the run options table, word for word.
Usage: check_flags.py DDPBENCH SOURCE_ROOT"""
import os
import re
import subprocess
import sys

from help_flags import flags_taken, options_taken

ddpbench, root = sys.argv[1], sys.argv[2]
with open(os.path.join(root, "docs", "commands.md"), encoding="utf-8") as f:
    page = f.read()
block = re.search(r"```\n(ddpbench .*?)```", page, re.S)
if not block:
    sys.exit("FAIL: docs/commands.md lost its command block")

documented = {}  # command -> flags its entry shows
command = None
for line in block.group(1).split("\n"):
    m = re.match(r"^ddpbench (?:\[?(\w+)\]?)", line)
    if m:
        command = m.group(1)
        documented.setdefault(command, set())
    if command:  # what a line's comment mentions ("two --trace runs") is not a flag shown
        code = re.split(r"\s#\s", line)[0]
        documented[command] |= set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", code))


problems = []
run_flags = flags_taken(ddpbench, "run")
for cmd, shown in sorted(documented.items()):
    options = options_taken(ddpbench, cmd)
    names = set().union(*options)
    for flag in sorted(shown - names):
        problems.append(f"docs/commands.md shows `ddpbench {cmd} {flag}`, which {cmd} does not take")
    if cmd == "scale" and "any training flag of run" in block.group(1):
        shown = shown | run_flags  # the training flags of run it takes are shown with run's
    for option in options:
        if not option & shown:
            problems.append(f"`ddpbench {cmd}` takes {'/'.join(sorted(option))}, which "
                            f"docs/commands.md does not show")
reference = subprocess.run([ddpbench, "list", "--flags"], capture_output=True, text=True,
                           check=True).stdout
with open(os.path.join(root, "docs", "flags.md"), encoding="utf-8") as f:
    if f.read() != reference:
        problems.append("docs/flags.md is not what `ddpbench list --flags` writes: regenerate it "
                        "with `build/harness/ddpbench list --flags > docs/flags.md`")
for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print(f"ok: {len(documented)} commands, every flag shown is taken and every flag taken is shown")
