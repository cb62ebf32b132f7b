/*
 * The node segment for real: the streaming node-local allgatherv test builder
 * (tests/common/shm_stream.c, proven by convoy-check) runs through the executor, the PMPI
 * transport and a real MPI_Win_allocate_shared segment, with data many times larger than
 * the segment (run with CONVOY_SEGMENT_BYTES=4096), several operations in a row (segment
 * reuse behind the release gate) and varying counts including zeros. Each rank checks its
 * node's blocks against values derived by hand and canaries elsewhere.
 *
 * With the argument "cap" (run with CONVOY_MAX_SEGMENTS=1) it checks the process-wide cap
 * instead: the first communicator gets the segment, a second one gets none (a schedule
 * that needs one is refused) and its collectives still give the right results.
 */
#include <convoy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "coll/coll.h"
#include "tests/common/shm_stream.h"

enum { CANARY = -77 };

/* A schedule that needs a segment: one notify and one wait on the own flag. */
static int needs_segment(MPI_Comm comm)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    int n = convoy__add_notify(&s, 0, 1, 0, NULL);
    convoy__add_wait(&s, 0, 0, 1, 1, &n);
    int rc = convoy__run_schedule(&s, NULL, MPI_INT, NULL, MPI_INT, comm);
    convoy__sched_free(&s);
    return rc;
}

static int check_cap(void)
{
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (needs_segment(MPI_COMM_WORLD) != MPI_SUCCESS) {
        printf("rank %d: the first communicator got no segment\n", rank);
        failures++;
    }
    int cls = MPI_SUCCESS, rc = needs_segment(dup);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_NO_MEM) {
        printf("rank %d: past CONVOY_MAX_SEGMENTS a schedule needing a segment gave %d\n", rank,
               cls);
        failures++;
    }
    long v = rank + 1, w = 0;
    if (MPI_SUCCESS != convoy_Allreduce(&v, &w, 1, MPI_LONG, MPI_SUM, dup) ||
        w != (long)size * (size + 1) / 2) {
        printf("rank %d: Allreduce without a segment gave %ld\n", rank, w);
        failures++;
    }
    MPI_Comm_free(&dup);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", all ? 0 : 3, all);
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "cap") == 0) {
        int failed = check_cap();
        MPI_Finalize();
        return failed != 0;
    }
    int rank, size, failures = 0, checks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const convoy__topo *topo;
    if (convoy__comm_topo(MPI_COMM_WORLD, &topo)) {
        printf("0 passed, 1 failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *seg_env = getenv("CONVOY_SEGMENT_BYTES");
    const int64_t seg = seg_env ? atoll(seg_env) : 1 << 20;
    int64_t *counts = malloc((size_t)size * sizeof *counts);
    int64_t *displs = malloc((size_t)size * sizeof *displs);
    for (int round = 0; round < 6; round++) {
        /* Round r: rank i sends (i * 37 + r * 1000) % 50000 ints, every fourth rank none;
         * with a 4 KiB segment most blocks take tens of chunks. */
        int64_t total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = (i + round) % 4 == 3 ? 0 : (i * 37 + round * 1000 + 500) % 50000;
            displs[i] = total + 3; /* gaps of 3 canaries */
            total += counts[i] + 3;
        }
        int *send = malloc((size_t)(counts[rank] + 1) * sizeof *send);
        int *recv = malloc((size_t)(total + 1) * sizeof *recv);
        for (int64_t k = 0; k < counts[rank]; k++)
            send[k] = rank * 100000 + (int)k + round;
        for (int64_t k = 0; k < total; k++)
            recv[k] = CANARY;

        convoy__dtype dt = {.size = 4, .extent = 4, .true_lb = 0, .true_extent = 4};
        convoy__args a = {.coll = CONVOY_COLL_ALLGATHERV,
                          .topo = topo,
                          .count = counts[rank],
                          .rcounts = counts,
                          .displs = displs,
                          .stype = dt,
                          .rtype = dt,
                          .shm_bytes = seg,
                          .nparams = 1};
        snprintf(a.params[0].name, sizeof a.params[0].name, "CONVOY_SEGMENT_BYTES");
        a.params[0].value = seg;
        convoy__schedule s;
        convoy__sched_init(&s);
        int rc = convoy__test_shm_stream(&a, &s);
        if (!rc) rc = convoy__run_schedule(&s, send, MPI_INT, recv, MPI_INT, MPI_COMM_WORLD);
        convoy__sched_free(&s);
        checks++;
        if (rc) {
            printf("rank %d round %d: error %d\n", rank, round, rc);
            failures++;
        }
        /* Blocks of this node's ranks hold their data; everything else is untouched. */
        int bad = 0;
        for (int i = 0; i < size && !bad; i++) {
            int mine = topo->node_of[i] == topo->node;
            for (int64_t k = 0; k < counts[i] && !bad; k++) {
                int want = mine ? i * 100000 + (int)k + round : CANARY;
                if (recv[displs[i] + k] != want) {
                    printf("rank %d round %d: element %lld of rank %d's block is %d, not %d\n",
                           rank, round, (long long)k, i, recv[displs[i] + k], want);
                    bad = 1;
                }
            }
            for (int g = 1; g <= 3 && !bad; g++)
                if (recv[displs[i] - g] != CANARY) {
                    printf("rank %d round %d: canary before rank %d's block overwritten\n", rank,
                           round, i);
                    bad = 1;
                }
        }
        failures += bad;
        free(send);
        free(recv);
    }
    int all[2] = {checks, failures}, sum[2];
    MPI_Allreduce(all, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", sum[0] - sum[1], sum[1]);
    free(counts);
    free(displs);
    MPI_Finalize();
    return sum[1] != 0;
}
