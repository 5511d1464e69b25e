"""help_flags.py — the flags a ddpbench command takes, read from `ddpbench COMMAND --help` (CLI11
prints each option's names at the start of its line; an alias counts as its option). Shared by
check_flags.py (docs/commands.md against the code) and check_launchers.py (launchers/ against it)."""
import os
import re
import subprocess
import sys

OPTION_LINE = re.compile(r"^\s+((?:-\w,)?--[a-z][\w-]*(?:,--[a-z][\w-]*)*)")


def options_taken(ddpbench, command):
    """A list of sets of names, one set per option (an option and its aliases), --help left out."""
    out = subprocess.run([ddpbench, command, "--help"], capture_output=True, text=True,
                         env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    if out.returncode != 0:
        sys.exit(f"FAIL: ddpbench {command} --help exited {out.returncode}: {out.stderr.strip()}")
    options = []
    for line in out.stdout.split("\n"):
        m = OPTION_LINE.match(line)
        if m:
            names = set(re.findall(r"--[a-z][\w-]*", m.group(1))) - {"--help"}
            if names:
                options.append(names)
    return options


def flags_taken(ddpbench, command):
    """Every name of every option the command takes."""
    return set().union(*options_taken(ddpbench, command))
