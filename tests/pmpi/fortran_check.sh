#!/usr/bin/env bash
# fortran_check.sh NP STATS COMMAND...: runs COMMAND (test_fortran on NP processes with
# libconvoy_pmpi preloaded and CONVOY_STATS=STATS), then requires the counts to show that
# every Fortran collective call reached Convoy's wrappers: the calls served plus those
# handed back equal the calls the program makes (test_fortran.F90, per rank: 3 repetitions
# of 3 Allreduce, Bcast, Allgather, Reduce, Barrier and Iallreduce, Ibcast, Iallgather,
# Ibarrier; 3 starts of a persistent Allreduce and Bcast; the progress case's Iallreduce
# and one last Allreduce), and with CONVOY_NATIVE_CANDIDATE=0 Convoy served them all
# (nonblocking and persistent calls are counted when they complete, hence reached the
# wait that completed them).
np=$1 stats=$2
shift 2
rm -f "$stats"
"$@" || { echo "fortran_check: the program failed" >&2; exit 1; }
[ -s "$stats" ] || { echo "fortran_check: no CONVOY_STATS in $stats (MPI_Finalize not seen)" >&2; exit 1; }
cat "$stats"
status=0
for want in allreduce:$((17 * np)) bcast:$((9 * np)) allgather:$((6 * np)) reduce:$((3 * np)) \
            barrier:$((6 * np)); do
    coll=${want%:*} calls=${want#*:}
    if ! grep -Eq "^convoy: +$coll +served $calls .*\| handed back 0$" "$stats"; then
        echo "fortran_check: $coll: expected $calls calls served by Convoy" >&2
        status=1
    fi
done
exit $status
