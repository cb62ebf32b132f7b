#!/usr/bin/env bash
# The main job, run by `make bench` with no arguments: convoy-bench on 4 processes cut into
# 2 virtual nodes of 2 (CONVOY_PPN=2), Open MPI, every Convoy algorithm against the native
# collective, interleaved in one job:
#   Allgatherv  the six distributions of papers/002 §3 at base counts c = 256, 16K, 1M ints
#   Allreduce   1, 255, 10000, 1000000 ints (sum)
#   Barrier     every Convoy algorithm and native
#   Bcast       1, 1K, 64K, 1M ints; Alltoall 1, 1K, 16K ints per block; Reduce 1, 1K, 64K,
#               1M ints (papers/004's collectives: flat, lane, hier, klane where they apply)
#   guidelines  the self-consistent performance guidelines of papers/004 §3 at 1, 1K, 64K
#               ints, for the MPI library and for Convoy where it implements a collective
# Repetitions start after a barrier, those of rooted collectives (Bcast, Reduce, the rooted
# guidelines) at agreed times on synchronised clocks (convoy-bench's default, --sync auto).
# It prints the table, writes bench-results/convoy-bench.{txt,csv,json} and PNG figures
# (tools/plot, when matplotlib is installed), and says where they are.
#
# Before it, two short runs on one node (issue 12): the per-call overhead (--overhead: every
# collective at np 1 and 1 element, native against Convoy's default, the difference in us)
# and np 2 on one node, not oversubscribed (Barrier, Allreduce of 1, 8, 255 ints,
# Allgather and Allgatherv of 1, 16, 256 ints per rank, with the single-copy bound line),
# written to $OUT/convoy-bench-overhead.txt and $OUT/convoy-bench-np2.{txt,csv,json}.
#
# The budget is 3 minutes on a 2-core machine, where these 4 processes are oversubscribed:
# each cell stops when every variant's median is known within +-5% (95% CI, after at least
# 20 repetitions), after 1000 repetitions, or after TIME_CAP seconds (default 5), and
# --budget BUDGET (default 110 s; the np 2 run NP2_BUDGET, 30 s; the overhead run a few
# seconds) shrinks the caps of the remaining cells so that the whole run fits; start-up and
# the figures take the rest.
#
# After it, the drop-in (issue 11): convoy-dropin-bench, a plain MPI program, with
# libconvoy_pmpi preloaded and no tuning file, on the same 4 processes: each cell times the
# MPI_* name (the drop-in: Convoy's choice or its hand-back) against the PMPI_* name (the
# library's) interleaved in one run, and says whether the drop-in is slower beyond the noise
# (the 95% interval of the paired differences above zero and the ratio above 1.05); the
# counts (CONVOY_STATS) say what served each collective. Written to
# $OUT/convoy-dropin-bench.txt and $OUT/convoy-dropin-stats.txt; about 30 s
# (DROPIN_CAP, default 1 s per cell; DROPIN=0 skips it).
#
# Extra arguments go to convoy-bench (e.g. `tools/bench.sh --sync window`); the
# environment may set BUILD (default build), OUT (default bench-results), NP (default 4),
# PPN (2), TIME_CAP (5), BUDGET (110), NP2_BUDGET (30), DROPIN (1), DROPIN_CAP (1).
set -u
cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
OUT=${OUT:-bench-results}
NP=${NP:-4}
PPN=${PPN:-2}
TIME_CAP=${TIME_CAP:-5}
BUDGET=${BUDGET:-110}
NP2_BUDGET=${NP2_BUDGET:-30}
DROPIN=${DROPIN:-1}
DROPIN_CAP=${DROPIN_CAP:-1}
BIN=$BUILD/bin/convoy-bench
MPIEXEC=${MPIEXEC:-mpiexec.openmpi}

if [ ! -x "$BIN" ]; then
    echo "tools/bench.sh: $BIN not found; build first (make build, or just make bench)" >&2
    exit 1
fi
if ! command -v "$MPIEXEC" > /dev/null; then
    echo "tools/bench.sh: $MPIEXEC not found (Debian: apt-get install openmpi-bin)" >&2
    exit 1
fi
mkdir -p "$OUT"
CSV=$OUT/convoy-bench.csv
JSON=$OUT/convoy-bench.json
TXT=$OUT/convoy-bench.txt
rm -f "$OUT"/*.png

# Open MPI as root in a container: run-as-root, and no AVX reduction component (Open MPI
# 4.1's saturates small integer sums, which validation would flag).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_op=^avx

# The per-call overhead at np 1, then np 2 on one node (no CONVOY_PPN: the real node). Not
# oversubscribed, so Open MPI's waits poll as they do by default: mpi_yield_when_idle, which
# the oversubscribed run below sets, makes every wait of the library (and the barrier before
# each timed call) yield the core, 0.77 us for its np 2 Barrier against 0.18 (stop 19).
unset OMPI_MCA_mpi_yield_when_idle
oh=("$MPIEXEC" --oversubscribe --allow-run-as-root -n 1 "$BIN" --overhead
    --reps 5000 --min-reps 200 --warmup 20 --time-cap 1)
echo "+ ${oh[*]}"
"${oh[@]}" | tee "$OUT/convoy-bench-overhead.txt"
np2=("$MPIEXEC" --oversubscribe --allow-run-as-root -n 2 "$BIN"
     --coll barrier,allreduce,allgather,allgatherv --algo all --dist all
     --count allreduce=1,8,255 --count allgather=1,16,256 --count allgatherv=1,16,256
     --type int --op sum --reps 1000 --min-reps 20 --warmup 3 --time-cap 2
     --budget "$NP2_BUDGET" --csv "$OUT/convoy-bench-np2.csv" --json "$OUT/convoy-bench-np2.json")
echo "+ ${np2[*]}"
"${np2[@]}" | tee "$OUT/convoy-bench-np2.txt"

# 4 processes on 2 cores: yield when idle, as Open MPI does by itself when it sees a node
# oversubscribed (explicit here, however the slots are counted), so that ranks sharing a core
# do not spin against each other.
export CONVOY_PPN=$PPN OMPI_MCA_mpi_yield_when_idle=1

cmd=("$MPIEXEC" --oversubscribe --allow-run-as-root -n "$NP" "$BIN"
     --coll allgatherv,allreduce,barrier,bcast,alltoall,reduce --algo all --dist all
     --count allgatherv=256,16K,1M --count allreduce=1,8,255,10000,1000000
     --count bcast=1,1K,64K,1M --count alltoall=1,1K,16K --count reduce=1,1K,64K,1M
     --guidelines --guideline-count 1,1K,64K
     --type int --op sum --reps 1000 --min-reps 20 --warmup 3 --time-cap "$TIME_CAP"
     --budget "$BUDGET" --csv "$CSV" --json "$JSON" "$@")
echo "+ CONVOY_PPN=$PPN ${cmd[*]}"
start=$(date +%s.%N)
"${cmd[@]}" | tee "$TXT"
status=${PIPESTATUS[0]}
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')


# The drop-in against native (no tuning file: the model's choices).
DBIN=$BUILD/bin/convoy-dropin-bench
PMPI=$BUILD/lib/libconvoy_pmpi.so
dropin_status=0
if [ "$DROPIN" != 0 ] && [ -x "$DBIN" ] && [ -f "$PMPI" ]; then
    rm -f "$OUT/convoy-dropin-stats.txt"
    dcmd=("$MPIEXEC" --oversubscribe --allow-run-as-root -x LD_PRELOAD="$(realpath "$PMPI")"
          -x CONVOY_STATS="$(realpath "$OUT")/convoy-dropin-stats.txt" -n "$NP" "$DBIN"
          --time-cap "$DROPIN_CAP")
    echo
    echo "+ CONVOY_PPN=$PPN ${dcmd[*]}"
    env -u CONVOY_TUNING_FILE "${dcmd[@]}" | tee "$OUT/convoy-dropin-bench.txt"
    dropin_status=${PIPESTATUS[0]}
    cat "$OUT/convoy-dropin-stats.txt" 2> /dev/null
elif [ "$DROPIN" != 0 ]; then
    echo "tools/bench.sh: $DBIN or $PMPI missing: no drop-in rows (make bench builds them)"
fi

echo
echo "tools/bench.sh: convoy-bench finished in ${elapsed} s (exit status $status)"
echo "  table: $TXT"
[ -s "$CSV" ] && echo "  CSV:   $CSV"
[ -s "$JSON" ] && echo "  JSON:  $JSON"
[ -s "$OUT/convoy-dropin-bench.txt" ] &&
    echo "  drop-in rows: $OUT/convoy-dropin-bench.txt (exit status $dropin_status)," \
         "counts: $OUT/convoy-dropin-stats.txt"
[ "$status" = 0 ] && status=$dropin_status

# Figures: any python3 that has matplotlib (Debian's python3-matplotlib lives in
# /usr/bin/python3, which may not be the first python3 on PATH).
if [ -s "$CSV" ]; then
    py=""
    for p in python3 /usr/bin/python3; do
        if command -v "$p" > /dev/null && "$p" -c 'import matplotlib' 2> /dev/null; then
            py=$p
            break
        fi
    done
    if [ -n "$py" ]; then
        if pngs=$("$py" tools/plot "$CSV" --out "$OUT"); then
            for f in $pngs; do echo "  PNG:   $f"; done
        else
            echo "  (tools/plot failed; no figures)"
        fi
    else
        echo "  (no figures: python3-matplotlib is not installed)"
    fi
fi
exit "$status"
