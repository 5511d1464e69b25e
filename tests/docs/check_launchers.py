#!/usr/bin/env python3
"""check_launchers.py — the cluster launch files in launchers/ (a Slurm sbatch script, a Kubeflow
Trainer v2 TrainJob, a Kubeflow MPIJob; docs/launching.md shows them) say what a cluster would run:
each parses (bash -n; YAML of the right apiVersion and kind), starts ddpbench the way its
launcher must (torchrun with --no_python, or mpirun with one rank per slot), asks for as many
ranks as its nodes hold, and gives `ddpbench run` only flags that `ddpbench run --help` lists and
a scenario that `ddpbench list` names.
Usage: check_launchers.py DDPBENCH SOURCE_ROOT"""
import os
import re
import subprocess
import sys

import yaml
from help_flags import flags_taken

ddpbench, root = sys.argv[1], sys.argv[2]
here = os.path.join(root, "launchers")
problems = []
run_flags = flags_taken(ddpbench, "run")
scenarios = subprocess.run([ddpbench, "list"], capture_output=True, text=True,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES="")).stdout


def check_ddpbench_args(name, args):
    """args: what follows `ddpbench run` (shell words)."""
    for word in args:
        if word.startswith("--") and word.split("=")[0] not in run_flags:
            problems.append(f"{name}: `ddpbench run {word}` is not a flag of run")
    if "--scenario" in args:
        scenario = args[args.index("--scenario") + 1]
        if not re.search(rf"(?m)^\s*{re.escape(scenario)}\b", scenarios):
            problems.append(f"{name}: scenario {scenario} is not one `ddpbench list` names")


def after_ddpbench(name, words):
    for i, w in enumerate(words[:-1]):
        if os.path.basename(w.strip('"')) in ("ddpbench", "$ddpbench") and words[i + 1] == "run":
            return words[i + 2:]
    problems.append(f"{name}: its command does not start `ddpbench run`")
    return []


# Slurm: bash syntax, the #SBATCH header, srun + torchrun --no_python ddpbench run.
sbatch = os.path.join(here, "slurm.sbatch")
text = open(sbatch, encoding="utf-8").read()
if subprocess.run(["bash", "-n", sbatch]).returncode != 0:
    problems.append("slurm.sbatch: bash -n fails")
sbatch_opts = dict(re.findall(r"(?m)^#SBATCH --([a-z-]+)=(\S+)", text))
for opt in ("nodes", "ntasks-per-node", "gpus-per-node", "time"):
    if opt not in sbatch_opts:
        problems.append(f"slurm.sbatch: no #SBATCH --{opt}")
if sbatch_opts.get("ntasks-per-node") != "1":
    problems.append("slurm.sbatch: torchrun is one task per node (--ntasks-per-node=1)")
line = re.search(r"(?ms)^srun torchrun (.*?)(?<!\\)\n", text)
if not line:
    problems.append("slurm.sbatch: no `srun torchrun` line")
else:
    words = line.group(1).replace("\\\n", " ").split()
    if "--no_python" not in words:
        problems.append("slurm.sbatch: torchrun needs --no_python to start a binary")
    check_ddpbench_args("slurm.sbatch", after_ddpbench("slurm.sbatch", words))

# Kubeflow Trainer v2 TrainJob: the torch-distributed runtime, torchrun --no_python ddpbench run.
job = yaml.safe_load(open(os.path.join(here, "trainjob.yaml"), encoding="utf-8"))
if (job.get("apiVersion"), job.get("kind")) != ("trainer.kubeflow.org/v1alpha1", "TrainJob"):
    problems.append("trainjob.yaml: not a trainer.kubeflow.org/v1alpha1 TrainJob")
trainer = job.get("spec", {}).get("trainer", {})
command = [str(w) for w in trainer.get("command", [])]
if command[:2] != ["torchrun", "--no_python"]:
    problems.append("trainjob.yaml: the command must be `torchrun --no_python ddpbench ...`")
args = after_ddpbench("trainjob.yaml", command)
check_ddpbench_args("trainjob.yaml", args)
ranks = trainer.get("numNodes", 0) * trainer.get("numProcPerNode", 0)
if "--gpus" in args and int(args[args.index("--gpus") + 1]) != ranks:
    problems.append(f"trainjob.yaml: --gpus is not numNodes x numProcPerNode ({ranks})")

# Kubeflow MPIJob: mpirun -np (slots x workers) ddpbench run.
job = yaml.safe_load(open(os.path.join(here, "mpijob.yaml"), encoding="utf-8"))
if (job.get("apiVersion"), job.get("kind")) != ("kubeflow.org/v2beta1", "MPIJob"):
    problems.append("mpijob.yaml: not a kubeflow.org/v2beta1 MPIJob")
specs = job.get("spec", {}).get("mpiReplicaSpecs", {})
launcher = specs.get("Launcher", {}).get("template", {}).get("spec", {}).get("containers", [{}])
command = [str(w) for w in launcher[0].get("command", [])]
if command[:1] != ["mpirun"] or "-np" not in command:
    problems.append("mpijob.yaml: the launcher's command must be `mpirun -np N ... ddpbench ...`")
else:
    slots = job["spec"].get("slotsPerWorker", 1) * specs.get("Worker", {}).get("replicas", 0)
    if int(command[command.index("-np") + 1]) != slots:
        problems.append(f"mpijob.yaml: -np is not slotsPerWorker x Worker replicas ({slots})")
    args = after_ddpbench("mpijob.yaml", command)
    check_ddpbench_args("mpijob.yaml", args)
    if "--gpus" in args and int(args[args.index("--gpus") + 1]) != slots:
        problems.append("mpijob.yaml: --gpus is not the number of MPI ranks")

for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print("ok: slurm.sbatch, trainjob.yaml and mpijob.yaml parse and start ddpbench run as their "
      "launchers must")
