/*
 * convoy-dropin-bench: a plain MPI program (it knows nothing of Convoy) that times the
 * collectives through their ordinary MPI_* names and, interleaved with them in the same
 * run, through the PMPI_* names. With libconvoy_pmpi preloaded, MPI_* is the drop-in
 * (Convoy's choice, or its hand-back to the library) and PMPI_* stays the library's, so
 * one run gives the drop-in's time and native's under the same load; without the preload
 * both are the library's and the ratios show the noise floor. tools/bench.sh (make bench)
 * runs it preloaded, with CONVOY_STATS for what served each collective.
 *
 *   convoy-dropin-bench [--reps R] [--time-cap S]
 *
 * Per repetition and name: an untimed call, PMPI_Barrier, then the call, timed on every
 * rank (a repeated call, as a program's loop makes it); a repetition's time is its slowest
 * rank's (PMPI_Allreduce MAX at the end). Bcast and Reduce start at an agreed time instead
 * (as convoy-bench's --sync auto: clocks corrected by offsets to rank 0 measured once, rank
 * 0 announces each call's start, a rank that is late voids that repetition of both names):
 * after a barrier a Bcast's root could send before the others' clocks started, or a
 * Reduce's non-roots before the root's, and the call then timed as almost nothing (the
 * library's Bcast of 1 int at 0.13-0.37 us at np 4 on 2 cores, where its Allreduce takes
 * 5). The order of the two names alternates per repetition. Per cell it prints the medians,
 * the median of the paired differences (MPI_ minus PMPI_ of one repetition) with its 95%
 * confidence interval (distribution-free, from order statistics), and the ratio 1 + that
 * median over native's: the pairs see the same state of the host, while the two medians
 * alone may fall on different modes of a bimodal time (4 processes on 2 cores: a
 * handed-back Reduce of 1 int, the library's call under both names, came out at 6.47
 * against 3.76 us, 1.72, with paired differences of 0.10 us). A cell is "slower" when that
 * interval lies above zero and the ratio exceeds 1.05 (convoy-tune's precision): slower
 * than native beyond the noise. The first results of the two names are compared (exit
 * status 1 if they differ); the number of slower cells is the last line.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocksync.h"

enum { ALLREDUCE, ALLGATHER, ALLGATHERV, REDUCE_SCATTER_BLOCK, BCAST, REDUCE, ALLTOALL, BARRIER };
static const char *const names[] = {"allreduce", "allgather", "allgatherv", "reduce_scatter_block",
                                    "bcast",     "reduce",    "alltoall",   "barrier"};
/* Elements per rank (per block for the collectives with blocks): the sizes of
 * tools/bench.sh's convoy-bench rows, fewer of them. */
static const struct {
    int coll, count;
} cells[] = {
    {ALLREDUCE, 1},
    {ALLREDUCE, 255},
    {ALLREDUCE, 10000},
    {ALLREDUCE, 1000000},
    {ALLGATHER, 1},
    {ALLGATHER, 256},
    {ALLGATHER, 16384},
    {ALLGATHERV, 256},
    {ALLGATHERV, 16384},
    {REDUCE_SCATTER_BLOCK, 1},
    {REDUCE_SCATTER_BLOCK, 16384},
    {BCAST, 1},
    {BCAST, 1024},
    {BCAST, 65536},
    {BCAST, 1048576},
    {REDUCE, 1},
    {REDUCE, 65536},
    {ALLTOALL, 1},
    {ALLTOALL, 1024},
    {BARRIER, 0},
};
enum { NCELLS = sizeof cells / sizeof cells[0] };

/* One call through MPI_* (pmpi = 0) or PMPI_* (pmpi = 1). */
static int call(int coll, int pmpi, int n, int *in, int *out, int rank, int p, int *counts,
                int *displs)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (coll) {
    case ALLREDUCE: return (pmpi ? PMPI_Allreduce : MPI_Allreduce)(in, out, n, MPI_INT, MPI_SUM, w);
    case ALLGATHER:
        return (pmpi ? PMPI_Allgather : MPI_Allgather)(in, n, MPI_INT, out, n, MPI_INT, w);
    case ALLGATHERV:
        for (int i = 0; i < p; i++)
            counts[i] = n, displs[i] = i * n;
        return (pmpi ? PMPI_Allgatherv : MPI_Allgatherv)(in, n, MPI_INT, out, counts, displs,
                                                         MPI_INT, w);
    case REDUCE_SCATTER_BLOCK:
        return (pmpi ? PMPI_Reduce_scatter_block : MPI_Reduce_scatter_block)(in, out, n, MPI_INT,
                                                                             MPI_SUM, w);
    case BCAST: /* root 0's buffer is `in` itself, the others' is `out` */
        return (pmpi ? PMPI_Bcast : MPI_Bcast)(rank ? out : in, n, MPI_INT, 0, w);
    case REDUCE: return (pmpi ? PMPI_Reduce : MPI_Reduce)(in, out, n, MPI_INT, MPI_SUM, 0, w);
    case ALLTOALL: return (pmpi ? PMPI_Alltoall : MPI_Alltoall)(in, n, MPI_INT, out, n, MPI_INT, w);
    default: return (pmpi ? PMPI_Barrier : MPI_Barrier)(w);
    }
}

/* Elements per rank of the send buffer, and of `out` that this rank receives (what the two
 * names' results are compared on). */
static size_t send_count(int coll, int n, int p)
{
    return coll == ALLTOALL || coll == REDUCE_SCATTER_BLOCK ? (size_t)n * (size_t)p : (size_t)n;
}

static size_t result_count(int coll, int n, int rank, int p)
{
    switch (coll) {
    case ALLGATHER:
    case ALLGATHERV:
    case ALLTOALL: return (size_t)n * (size_t)p;
    case BCAST: return rank ? (size_t)n : 0;
    case REDUCE: return rank ? 0 : (size_t)n;
    case BARRIER: return 0;
    default: return (size_t)n;
    }
}

/* Rooted: timed from an agreed start, not from a barrier (see the top). */
static int windowed(int coll)
{
    return coll == BCAST || coll == REDUCE;
}

/* After a barrier (every rank done with the call before), rank 0 announces a start k->lead
 * ahead on its clock; every rank waits for it on its corrected clock. Returns the start on
 * this rank's clock; *late: this rank was. */
static double agreed_start(const bench_clock *k, int *late)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime() + k->offset + k->lead;
    PMPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    *late = bench_clock_wait(k, start);
    return start - k->offset;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; its median. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int reps = 400;
    double cap = 1.5;
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--time-cap"))
            cap = atof(argv[i + 1]);
    }
    if (reps < 1) reps = 1;
    int rank, p, status = 0, slower = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    bench_clock clk; /* the agreed starts' clocks, once */
    bench_clock_sync(MPI_COMM_WORLD, &clk);
    size_t maxn = 0;
    for (int c = 0; c < NCELLS; c++) {
        size_t s = send_count(cells[c].coll, cells[c].count, p);
        size_t r = result_count(cells[c].coll, cells[c].count, 1, p);
        if (s > maxn) maxn = s;
        if (r > maxn) maxn = r;
    }
    int *in = malloc((maxn + 1) * sizeof *in);
    int *out[2] = {malloc((maxn + 1) * sizeof(int)), malloc((maxn + 1) * sizeof(int))};
    int *counts = malloc(2 * (size_t)p * sizeof *counts);
    double *t[3] = {malloc((size_t)reps * sizeof(double)), malloc((size_t)reps * sizeof(double)),
                    malloc((size_t)reps * sizeof(double))};
    int *late = malloc((size_t)reps * sizeof *late);
    if (!in || !out[0] || !out[1] || !counts || !t[0] || !t[1] || !t[2] || !late) {
        fprintf(stderr, "convoy-dropin-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i <= maxn; i++)
        in[i] = (rank + 1) * (int)(i % 1000 + 1);
    if (rank == 0)
        printf("# np %d; us, medians over repetitions of the slowest rank; diff: median of "
               "paired MPI_-PMPI_ differences [95%% CI]; ratio: 1 + diff / native\n"
               "%-21s %8s %11s %11s %7s %23s %5s  %s\n",
               p, "coll", "count", "native_us", "dropin_us", "ratio", "diff_us [95% CI]", "reps",
               "verdict");
    for (int c = 0; c < NCELLS; c++) {
        int coll = cells[c].coll, n = cells[c].count;
        for (int w = 0; w < 3; w++) /* warm-up: Convoy's setup, the plan memo */
            for (int k = 0; k < 2; k++)
                call(coll, k, n, in, out[k], rank, p, counts, counts + p);
        if (memcmp(out[0], out[1], result_count(coll, n, rank, p) * sizeof(int))) {
            fprintf(stderr,
                    "convoy-dropin-bench: %s %d: MPI_ and PMPI_ results differ on rank %d\n",
                    names[coll], n, rank);
            status = 1;
        }
        double start = MPI_Wtime();
        int r = 0, stop = 0;
        for (; r < reps && !stop; r++) {
            late[r] = 0;
            for (int j = 0; j < 2; j++) {
                int k = (r + j) % 2, was_late = 0;
                /* the timed call repeats an untimed one, as in convoy-bench (run.c) */
                call(coll, k, n, in, out[k], rank, p, counts, counts + p);
                double t0;
                if (windowed(coll)) {
                    t0 = agreed_start(&clk, &was_late);
                } else {
                    PMPI_Barrier(MPI_COMM_WORLD);
                    t0 = MPI_Wtime();
                }
                call(coll, k, n, in, out[k], rank, p, counts, counts + p);
                t[k][r] = MPI_Wtime() - t0;
                late[r] |= was_late;
            }
            /* every rank stops after the same repetition: rank 0's clock decides */
            if (r % 16 == 15) {
                stop = MPI_Wtime() - start > cap;
                PMPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            }
        }
        for (int k = 0; k < 2; k++)
            PMPI_Allreduce(MPI_IN_PLACE, t[k], r, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        PMPI_Allreduce(MPI_IN_PLACE, late, r, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            /* The repetitions every rank started in time, both names. */
            const int all = r;
            r = 0;
            for (int i = 0; i < all; i++)
                if (!late[i]) t[0][r] = t[0][i], t[1][r] = t[1][i], r++;
            if (r == 0) {
                printf("%-21s %8d  no repetition started in time on every rank (%d tried)\n",
                       names[coll], n, all);
                continue;
            }
            for (int i = 0; i < r; i++)
                t[2][i] = t[0][i] - t[1][i];
            const double d = median(t[2], r), tm = median(t[0], r), tp = median(t[1], r);
            /* Order statistics lo..hi bracket the median with 95% confidence (normal
             * approximation of the binomial; n >= 16 here unless the cap cut it short). */
            const int h = (int)ceil(0.98 * sqrt((double)r));
            const int lo = r / 2 - h < 0 ? 0 : r / 2 - h, hi = r / 2 + h >= r ? r - 1 : r / 2 + h;
            const double ratio = 1 + d / tp;
            const int worse = t[2][lo] > 0 && ratio > 1.05;
            slower += worse;
            printf("%-21s %8d %11.2f %11.2f %7.3f %7.2f [%6.2f,%6.2f] %5d  %s", names[coll], n,
                   1e6 * tp, 1e6 * tm, ratio, 1e6 * d, 1e6 * t[2][lo], 1e6 * t[2][hi], r,
                   worse                              ? "SLOWER"
                   : t[2][hi] < 0 && ratio < 1 / 1.05 ? "faster"
                                                      : "same");
            if (windowed(coll)) printf("  (agreed starts: %d of %d in time)", r, all);
            printf("\n");
        }
    }
    PMPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %d of %d cells slower than native beyond the noise%s\n", slower, NCELLS,
               status ? "; RESULTS DIFFER" : "");
    free(in), free(out[0]), free(out[1]), free(counts), free(t[0]), free(t[1]), free(t[2]);
    free(late);
    MPI_Finalize();
    return status;
}
