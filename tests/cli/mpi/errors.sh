#!/bin/bash
# Failures under mpirun: every rank exits non-zero, none hangs (mpi() cuts
# a run off after 120 s: status 124), and the message, naming the file and
# line or the rank that failed, is printed once (by rank 0), not once a
# rank.
#   bash errors.sh TILEFMM MPIEXEC WORKDIR
. "$(dirname "$0")/common.sh" "$@"

# expect STATUS TEXT NP ARGS...: the tool on NP ranks exits with STATUS
# and says TEXT on stderr exactly once. NP "mpmd": rank 0 runs ARGS up to
# a "--", rank 1 those and the words after it (mpirun's A : B), so that
# one rank alone fails.
expect() {
  local want=$1 text=$2 np=$3
  shift 3
  local what="$*"
  if [ "$np" = mpmd ]; then
    local a=()
    while [ "$1" != -- ]; do
      a+=("$1")
      shift
    done
    shift
    timeout 120 "$MPIEXEC" --oversubscribe -np 1 "$TILEFMM" "${a[@]}" : \
      -np 1 "$TILEFMM" "${a[@]}" "$@" >out.txt 2>err.txt
  else
    mpi "$np" "$@" >out.txt 2>err.txt
  fi
  local rc=$?
  [ $rc -ne 124 ] || fail "$what: hung on $np ranks (cut off)"
  [ $rc -eq "$want" ] || {
    cat err.txt
    fail "$what on $np ranks: exit status $rc, expected $want"
  }
  local times
  times=$(grep -cF -- "$text" err.txt)
  [ "$times" -eq 1 ] || {
    cat err.txt
    fail "$what on $np ranks: '$text' said $times times, not once"
  }
  echo "ok: $what on $np ranks: status $rc, '$text'"
}

"$TILEFMM" ic plummer --n 1000 --seed "$SEED" --out good.txt || fail "ic"
# Line 3 of a file read by rank 0 alone.
printf '0 0 0 1\n1 0 0 1\n1 2 x 1\n' >bad.txt

expect 1 "bad.txt:3:" 4 forces --in bad.txt --out forces.txt
[ ! -e forces.txt ] || fail "a failed forces left forces.txt"
expect 1 "bad.txt:3:" 3 run --ic bad.txt --steps 2 --out runbad
expect 1 "missing.hdf5" 2 run --restart missing.hdf5
# A usage error every rank finds: said once.
expect 2 "--in" 2 forces
# One rank alone fails: rank 0 says why, naming it, and none hangs.
expect 2 "rank 1: --eps" mpmd forces --in good.txt -- --eps -1
expect 2 "rank 1: --eps" mpmd run --ic plummer --n 100 --steps 1 \
  --out runmpmd -- --eps -1
[ ! -e runmpmd ] || fail "a run that never started left runmpmd"
# Measuring one process: refused on several.
expect 2 "measures one process" 2 validate --in good.txt
# --verify measures over every rank's bodies: a setting that misses the
# target fails naming the measured figure (once), after writing the forces,
# as one process does.
expect 1 "verify: the measured 99th percentile" 2 forces --in good.txt \
  --out v.txt --verify --theta 0.9 --order 2 --accuracy 1e-6
[ -s v.txt ] || fail "--verify's miss on 2 ranks wrote no forces"
expect 0 "measured error: median" 2 forces --in good.txt --out m.txt \
  --measure always
mpi 2 --version >out.txt 2>err.txt || fail "--version on 2 ranks"
[ "$(grep -c "MPI: yes, ranks: 2" out.txt)" -eq 1 ] || {
  cat out.txt
  fail "--version on 2 ranks does not say 'MPI: yes, ranks: 2' once"
}
echo "ok: --version on 2 ranks: $(cat out.txt)"
# Two bodies at one point without softening, in the block of rank 1: the
# library's failure is every rank's, and said once.
printf '0 0 0 1\n1 0 0 1\n2 0 0 1\n3 0 0 1\n4 0 0 1\n4 0 0 1\n' >same.txt
expect 1 "bodies 4 and 5 are at one point" 2 forces --in same.txt --eps 0
expect 1 "bodies 4 and 5 are at one point" 2 run --ic same.txt --eps 0 \
  --softening plummer --steps 1 --out runsame
# Bodies 5 and 377 of a thousand at one point (issue 29): named by the
# file's indices, not by the distributed solver's own (834 and 835).
awk '!/^#/ { b++ } { print (b == 378 && !/^#/) ? keep : $0 }
  !/^#/ && b == 6 { keep = $0 }' good.txt >pair.txt
for np in 2 3; do
  expect 1 "bodies 5 and 377 are at one point" $np forces --in pair.txt \
    --eps 0 --out pair_forces.txt
done
expect 1 "bodies 5 and 377 are at one point" 2 run --ic pair.txt --eps 0 \
  --softening plummer --steps 1 --out runpair
echo PASS
