#!/bin/bash
# netns_multihost_test.sh — a multi-host run for real: two network namespaces joined by a veth
# pair, each a "host" with its own address and host name (hosta 10.231.R.1, hostb 10.231.R.2), two
# ranks on each, launched with torchrun-style variables and then with Slurm-style variables over
# gloo. Each run must pass with a report that lists both hosts; then rank 3 (on hostb) is killed
# mid-run and every other rank, on both hosts, must end within the timeout with a message naming
# the host that was lost. Traffic stays inside the namespaces (addresses in a private range that
# exists nowhere else, no route out). Needs root and `ip netns`; skips (exit 77) without them.
# Usage: netns_multihost_test.sh <ddpbench binary>
set -u
BIN=$1
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
grep -q '"passed": true' "$WORK/torchrun/report.json" || fail "torchrun-style run did not pass"
python3 - "$WORK/torchrun/report.json" <<'PY' || fail "the report does not list both hosts"
import json, sys
r = json.load(open(sys.argv[1]))
ddp = [m for m in r["results"] if m["mode"] == "ddp"][0]
assert ddp["hosts"] == ["hosta", "hosta", "hostb", "hostb"], ddp["hosts"]
PY
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

# 3. Kill rank 3 on hostb mid-run: every rank ends within the timeout, naming the lost host.
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
