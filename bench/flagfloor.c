/*
 * flagfloor: the floor under a small collective on one node, in the same run as the MPI
 * library's and Convoy's (issue 12's "0.7 x native" goal at np 2).
 *
 * Per repetition, as convoy-bench times a cell: PMPI_Barrier, then one timed call on every
 * rank; the repetition's time is the slowest rank's. Variants, interleaved repetition by
 * repetition (so drift of the host's load hits all alike):
 *   native   PMPI_Barrier / PMPI_Allreduce of 1 int
 *   convoy   convoy_Barrier / convoy_Allreduce of 1 int (the default choice)
 *   bare     a bare flag exchange through an MPI-3 shared window: store own counter
 *            (release), spin (pause) until every node peer's counter reaches it (acquire);
 *            what any flag barrier must do at least: the ranks' skew leaving the barrier
 *            before it, one cache-line transfer and the loop
 * Prints per variant the median and quartiles in us and the ratio to native.
 *
 * Built as build/bin/convoy-flagfloor (not under SimGrid). Run on one node, e.g.
 *   build/convoy-mpirun -n 2 build/bin/convoy-flagfloor [reps, default 2000]
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "convoy.h"

/* (A spinning core leaves its pipeline to a sibling hardware thread, as convoy__backoff.) */
static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

enum { NB_BARRIER, NB_CONVOY_BARRIER, NB_BARE, NA_ALLREDUCE, NA_CONVOY_ALLREDUCE, NV };
static const char *const names[NV] = {"native Barrier", "convoy Barrier", "bare flag exchange",
                                      "native Allreduce 1", "convoy Allreduce 1"};

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int reps = argc > 1 ? atoi(argv[1]) : 2000;
    int rank, size;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    /* One cache line per process's counter. */
    MPI_Win win;
    _Atomic uint64_t *mine;
    MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, node, &mine, &win);
    _Atomic uint64_t **peer = malloc((size_t)size * sizeof *peer);
    for (int q = 0; q < size; q++) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, q, &sz, &du, &peer[q]);
    }
    atomic_store(mine, 0);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(node);
    uint64_t gen = 0;
    int in = rank + 1, out;
    double *t = malloc(sizeof(double) * NV * (size_t)reps), *all = malloc(sizeof(double) * NV);
    double *slow = malloc(sizeof(double) * NV * (size_t)reps);
    for (int r = -100; r < reps; r++) {
        for (int k = 0; k < NV; k++) {
            const int v = (k + (r < 0 ? 0 : r)) % NV;
            PMPI_Barrier(node);
            const double t0 = MPI_Wtime();
            switch (v) {
            case NB_BARRIER: PMPI_Barrier(node); break;
            case NB_CONVOY_BARRIER: convoy_Barrier(node); break;
            case NB_BARE:
                gen++;
                atomic_store_explicit(mine, gen, memory_order_release);
                for (int q = 0; q < size; q++)
                    while (atomic_load_explicit(peer[q], memory_order_acquire) < gen)
                        relax();
                break;
            case NA_ALLREDUCE: PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, node); break;
            default: convoy_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, node);
            }
            const double dt = MPI_Wtime() - t0;
            if (r >= 0) t[(size_t)v * reps + r] = dt;
        }
    }
    MPI_Reduce(t, slow, NV * reps, MPI_DOUBLE, MPI_MAX, 0, node);
    if (rank == 0) {
        double med[NV];
        for (int v = 0; v < NV; v++) {
            double *x = slow + (size_t)v * reps;
            qsort(x, (size_t)reps, sizeof *x, cmp);
            med[v] = x[reps / 2];
            all[v] = med[v];
            const double base = v < NA_ALLREDUCE ? med[NB_BARRIER] : med[NA_ALLREDUCE];
            double iqm = 0;
            for (int i = reps / 4; i < 3 * reps / 4; i++)
                iqm += x[i];
            iqm /= 3 * reps / 4 - reps / 4;
            printf("%-20s iqm %.4f median %.3f us (q1 %.3f, q3 %.3f), %.2f x native\n", names[v],
                   1e6 * iqm, 1e6 * med[v], 1e6 * x[reps / 4], 1e6 * x[3 * reps / 4],
                   v < NA_ALLREDUCE && v != NB_BARRIER
                       ? med[v] / base
                       : (v == NA_CONVOY_ALLREDUCE ? med[v] / base : 1.0));
        }
        printf("bare exchange / native Barrier %.2f, / native Allreduce %.2f (np %d, %d reps)\n",
               med[NB_BARE] / med[NB_BARRIER], med[NB_BARE] / med[NA_ALLREDUCE], size, reps);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    free(peer);
    free(t);
    free(slow);
    free(all);
    MPI_Finalize();
    return 0;
}
