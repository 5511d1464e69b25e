#!/bin/bash
# netns_multihost_test.sh — a multi-host run for real: two network namespaces joined by a veth
# pair, each a "host" with its own address and host name (hosta 10.231.R.1, hostb 10.231.R.2),
# two ranks on each. Launched with torchrun-style variables, with Slurm-style variables (both over
# gloo), with a real torchrun on each host where one starts (below), and with OpenMPI (mpirun on hosta reaching hostb through an "rsh agent" that enters its
# namespace, as ssh would log in there) over the mpi and gloo backends: each run must pass with a
# report that lists both hosts. Then rank 3 (on hostb) is killed mid-run, under torchrun-style
# variables and under mpirun: every other rank, on both hosts, must end within the timeout with a
# message naming rank 3 on hostb. Traffic stays inside the namespaces (a private range that
# exists nowhere else, no route out). Needs root and `ip netns`; skips (exit 77) without them.
# With a Python whose torchrun starts, also a real torchrun on each host (c10d rendezvous).
# Usage: netns_multihost_test.sh <ddpbench binary> [python]
set -u
BIN=$1
PY=${2:-}
if [ "$(id -u)" != 0 ]; then echo "SKIP: network namespaces need root"; exit 77; fi
TAG=$$
A=ddpb-a-$TAG B=ddpb-b-$TAG
if ! ip netns add "$A" 2>/dev/null; then echo "SKIP: cannot create network namespaces here"; exit 77; fi
ip netns add "$B"
WORK=$(mktemp -d /tmp/ddpbench-multihost-XXXXXX)
NET=10.231.$((TAG % 250))
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null
  rm -rf "/etc/netns/$A" "/etc/netns/$B" "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$WORK"/*.err; do echo "--- $f"; tail -5 "$f"; done; exit 1; }

ip link add "va$TAG" type veth peer name "vb$TAG"
ip link set "va$TAG" netns "$A"
ip link set "vb$TAG" netns "$B"
ip -n "$A" addr add "$NET.1/24" dev "va$TAG"
ip -n "$B" addr add "$NET.2/24" dev "vb$TAG"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "va$TAG" up
ip -n "$B" link set "vb$TAG" up
# `ip netns exec` shows /etc/netns/NS/hosts as /etc/hosts: each host resolves both names.
for ns in "$A" "$B"; do
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n%s.1 hosta\n%s.2 hostb\n' "$NET" "$NET" > "/etc/netns/$ns/hosts"
done

# Starts rank $1 on host $2 (a|b) with extra environment $3..., output in $WORK/<name>.{out,err}.
start_rank() {
  local rank=$1 host=$2 name=$3; shift 3
  local ns=$A; [ "$host" = b ] && ns=$B
  ip netns exec "$ns" unshare --uts env "$@" sh -c 'hostname "$0"; exec "$@"' \
    "host$host" "$BIN" "${ARGS[@]}" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
}

# Whether DIR/report.json passed with ddp's ranks on hosta, hosta, hostb, hostb.
passed_on_both_hosts() {
  python3 - "$1/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"]
ddp = [m for m in r["results"] if m["mode"] == "ddp"][0]
assert ddp["hosts"] == ["hosta", "hosta", "hostb", "hostb"], ddp["hosts"]
PY
}

PORT=29531
# 1. torchrun-style variables.
ARGS=(run --scenario linear_mse --steps 3 --timeout 30 --quiet --out "$WORK/torchrun")
PIDS=()
for r in 0 1 2 3; do
  host=a; [ $r -ge 2 ] && host=b
  start_rank $r $host "torchrun$r" RANK=$r LOCAL_RANK=$((r % 2)) WORLD_SIZE=4 \
    MASTER_ADDR="$NET.1" MASTER_PORT=$PORT
done
for p in "${PIDS[@]}"; do wait "$p" || fail "torchrun-style rank (pid $p) exited $?"; done
passed_on_both_hosts "$WORK/torchrun" || fail "torchrun-style run: no passing report listing both hosts"
echo "ok: torchrun-style variables, 2 hosts x 2 ranks over gloo"

# 2. Slurm-style variables: the first host of SLURM_NODELIST serves the rendezvous.
ARGS=(run --scenario linear_mse --steps 3 --timeout 30 --quiet --out "$WORK/slurm")
PIDS=()
for r in 0 1 2 3; do
  host=a; [ $r -ge 2 ] && host=b
  start_rank $r $host "slurm$r" SLURM_PROCID=$r SLURM_LOCALID=$((r % 2)) SLURM_NTASKS=4 \
    SLURM_NODELIST=hosta,hostb SLURM_JOB_ID=4242 MASTER_PORT=$((PORT + 1))
done
for p in "${PIDS[@]}"; do wait "$p" || fail "Slurm-style rank (pid $p) exited $?"; done
grep -q '"passed": true' "$WORK/slurm/report.json" || fail "Slurm-style run did not pass"
echo "ok: Slurm-style variables, 2 hosts x 2 ranks over gloo"

# 2b. A real torchrun on each host, as launchers/slurm.sbatch and launchers/trainjob.yaml start it:
#     --no_python, c10d rendezvous on hosta, 2 ranks per host. Only where $PY's torchrun can start
#     (Debian's torch 1.13 torchrun cannot under Python 3.11; the PyPI suite's 2.11 can, and its
#     ddpbench is built against that torch, whose store protocol the agent speaks).
if [ -n "$PY" ] && "$PY" -m torch.distributed.run --nnodes 1 --nproc_per_node 1 \
     --master_port $((PORT + 5)) --no_python true >/dev/null 2>&1; then
  PIDS=()
  for host in a b; do
    ns=$A; [ "$host" = b ] && ns=$B
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$0"; exec "$@"' "host$host" \
      "$PY" -m torch.distributed.run --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d \
      --rdzv_endpoint "hosta:$((PORT + 3))" --rdzv_id ddpbench-multihost --no_python \
      "$BIN" run --scenario linear_mse --steps 3 --timeout 30 --quiet --out "$WORK/realtorchrun" \
      >"$WORK/realtorchrun$host.out" 2>"$WORK/realtorchrun$host.err" &
    PIDS+=($!)
  done
  for p in "${PIDS[@]}"; do wait "$p" || fail "a real torchrun (pid $p) exited $?"; done
  passed_on_both_hosts "$WORK/realtorchrun" || fail "real torchrun: no passing report listing both hosts"
  echo "ok: a real torchrun on each of 2 hosts (c10d rendezvous), 2 ranks each over gloo"
else
  echo "skip: the real torchrun across hosts (${PY:-no Python given}: its torchrun cannot start)"
fi

# 3. OpenMPI across the two hosts: mpirun on hosta starts hostb's daemon through an "rsh agent"
#    that enters hostb's namespace (as ssh would log in there), over the MPI backend and over gloo
#    with the rendezvous shared through MPI.
cat > "$WORK/agent" <<AGENT
#!/bin/sh
host=\$1; shift
ns=$A; [ "\$host" = hostb ] && ns=$B
exec ip netns exec \$ns unshare --uts sh -c "hostname \$host; \$*"
AGENT
chmod +x "$WORK/agent"
printf 'hosta slots=2\nhostb slots=2\n' > "$WORK/hostfile"
mpirun_on_hosta() {
  timeout 120 ip netns exec "$A" unshare --uts sh -c 'hostname hosta; exec "$@"' sh \
    mpirun --allow-run-as-root --hostfile "$WORK/hostfile" -np 4 \
    --mca plm_rsh_agent "$WORK/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$NET.0/24" --mca btl_tcp_if_include "$NET.0/24" --mca btl self,tcp \
    "$BIN" "$@"
}
for backend in mpi gloo; do
  mpirun_on_hosta run --scenario linear_mse --backend $backend --steps 3 --quiet \
    --out "$WORK/mpi-$backend" >"$WORK/mpi-$backend.err" 2>&1 || fail "mpirun with --backend $backend"
  passed_on_both_hosts "$WORK/mpi-$backend" || fail "mpirun ($backend): no passing report listing both hosts"
  echo "ok: mpirun across 2 hosts x 2 ranks, --backend $backend"
done

# 4. Kill rank 3 on hostb mid-run: every rank ends within the timeout, naming the lost host.
ARGS=(run --scenario toy_cnn --modes ddp --steps 100000 --timeout 20 --quiet --out "$WORK/killed")
PIDS=()
for r in 0 1 2 3; do
  host=a; [ $r -ge 2 ] && host=b
  start_rank $r $host "killed$r" RANK=$r LOCAL_RANK=$((r % 2)) WORLD_SIZE=4 \
    MASTER_ADDR="$NET.1" MASTER_PORT=$((PORT + 2))
done
sleep 8
# `ip netns exec`, unshare, env and sh all exec into the rank, so the pid is the rank's own.
kill -9 "${PIDS[3]}"
start=$(date +%s)
for i in 0 1 2; do wait "${PIDS[$i]}"; code=$?; [ $code -ne 0 ] || fail "rank $i exited 0 after a peer died"; done
elapsed=$(( $(date +%s) - start ))
[ $elapsed -le 60 ] || fail "the surviving ranks took ${elapsed}s to end (timeout 20s)"
grep -h "worker failure" "$WORK"/killed[012].err
for i in 0 1 2; do
  grep -q "rank 3 on hostb stopped without a word" "$WORK/killed$i.err" ||
    fail "rank $i's message does not name rank 3 on hostb"
done
[ ! -e "$WORK/killed" ] || fail "a failed run left its output folder"
echo "ok: killing rank 3 on hostb ended ranks 0-2 on both hosts in ${elapsed}s, naming it"

# 5. The same under mpirun (--backend mpi): the job ends on both hosts, and mpirun's report names
#    the rank and the host.
mpirun_on_hosta run --scenario toy_cnn --modes ddp --backend mpi --steps 100000 --timeout 20 \
  --quiet --out "$WORK/mpi-killed" >"$WORK/mpi-killed.err" 2>&1 &
MPIRUN=$!
PIDS=($MPIRUN)
rank3=""
for i in $(seq 100); do
  for p in $(pgrep -f "$WORK/mpi-killed"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=3; then rank3=$p; fi
  done
  [ -n "$rank3" ] && break
  sleep 0.2
done
[ -n "$rank3" ] || fail "rank 3 of the mpirun job never started"
sleep 5
kill -9 "$rank3"
start=$(date +%s)
wait "$MPIRUN" && fail "mpirun exited 0 after rank 3 was killed"
elapsed=$(( $(date +%s) - start ))
[ $elapsed -le 60 ] || fail "mpirun took ${elapsed}s to end"
grep -q "rank 3" "$WORK/mpi-killed.err" && grep -q "hostb" "$WORK/mpi-killed.err" ||
  fail "mpirun's message does not name rank 3 on hostb: $(tail -5 "$WORK/mpi-killed.err")"
[ -z "$(pgrep -f "$WORK/mpi-killed")" ] || fail "processes of the mpirun job outlived it"
echo "ok: killing rank 3 on hostb ended the mpirun job in ${elapsed}s: $(grep -m1 'rank 3' "$WORK/mpi-killed.err")"
