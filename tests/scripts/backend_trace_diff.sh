#!/usr/bin/env bash
# backend_trace_diff.sh — `ddpbench diff` across the engines and backends a user switches between,
# at worlds 2, 3 and 4 (tiny_resnet, float32): ddpbench's engine against PyTorch's c10d Reducer,
# and gloo against mpi (ranks started by mpirun) and shm, both lockstep (single,ddp, 3 steps) and
# free-running (ddp, 10 steps). Every pair must exit 0 with nothing diverged: identical, or a
# first difference that is the reduction's rounding where it appears (held to the range every
# summation order of the same ranks' gradients spans, measured: Note [A reduction judged by its
# own contributions]) and, free-running, growth from it after. At world 2 a sum of two has one
# rounding in any order, so the backends must be identical there.
#   backend_trace_diff.sh DDPBENCH
set -u
bin=${1:?usage: backend_trace_diff.sh DDPBENCH}
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v mpirun >/dev/null || { echo "no mpirun"; exit 77; }
common=(run --scenario tiny_resnet --check-only --trace --quiet --batch-size 12)
lockstep=(--modes single,ddp --steps 3)
free=(--modes ddp --comparison free --steps 10)

# diff A B -> "<exit> <class> <diverged> <first phase> <first class> <first held_to>".
judge() {
  "$bin" diff "$scratch/$1" "$scratch/$2" --out "$scratch/d_$1_$2" >"$scratch/d_$1_$2.log" 2>&1
  local rc=$?
  [ $rc -le 1 ] || { cat "$scratch/d_$1_$2.log"; fail "diff $1 $2 exited $rc"; }
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["first_difference"]
print(sys.argv[2], d["class"], d["diverged"], f["phase"] if f else "-", f["class"] if f else "-",
      f["rounding"]["held_to"] if f else "-")
' "$scratch/d_$1_$2/diff.json" "$rc"
}

for w in 2 3 4; do
  for how in lockstep free; do
    if [ "$how" = lockstep ]; then flags=("${lockstep[@]}"); else flags=("${free[@]}"); fi
    tag="${how}$w"
    "$bin" "${common[@]}" "${flags[@]}" --gpus $w --out "$scratch/gloo$tag" >"$scratch/gloo$tag.log" 2>&1 ||
      { cat "$scratch/gloo$tag.log"; fail "gloo $tag"; }
    "$bin" "${common[@]}" "${flags[@]}" --gpus $w --ddp-impl c10d --out "$scratch/c10d$tag" \
      >"$scratch/c10d$tag.log" 2>&1 || { cat "$scratch/c10d$tag.log"; fail "c10d $tag"; }
    "$bin" "${common[@]}" "${flags[@]}" --gpus $w --backend shm --out "$scratch/shm$tag" \
      >"$scratch/shm$tag.log" 2>&1 || { cat "$scratch/shm$tag.log"; fail "shm $tag"; }
    mpirun --allow-run-as-root --oversubscribe -np $w "$bin" "${common[@]}" "${flags[@]}" --gpus $w \
      --backend mpi --out "$scratch/mpi$tag" >"$scratch/mpi$tag.log" 2>&1 ||
      { cat "$scratch/mpi$tag.log"; fail "mpi $tag"; }
    for other in c10d shm mpi; do
      answer=$(judge "gloo$tag" "$other$tag") || fail "$answer"
      echo "$tag: gloo vs $other: $answer"
      read -r rc cls diverged phase first held <<<"$answer"
      [ "$rc" -eq 0 ] && [ "$diverged" -eq 0 ] ||
        fail "$tag gloo vs $other: exit $rc, $diverged diverged ($cls)"
      if [ "$w" -eq 2 ] && [ "$other" != c10d ]; then
        [ "$cls" = identical ] || fail "$tag gloo vs $other: $cls, want identical (a sum of two)"
      elif [ "$cls" != identical ]; then
        [ "$phase" = grad_reduced ] && [ "$first" = rounding ] && [ "$held" = reduction ] ||
          fail "$tag gloo vs $other: first differs in $phase ($first, held to $held), not as the reduction's measured rounding"
      fi
    done
  done
done
echo OK
