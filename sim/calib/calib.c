/* calib: times MPI's native collectives (no Convoy) for calibrating SimGrid platforms.
 *
 *   smpirun ... ./calib [-r REPS] [-w WARMUP] COLL:COUNT[,COUNT...] ...
 *
 * COLL is one of bcast gather scatter allgather allgatherv alltoall reduce allreduce
 * reduce_scatter_block scan exscan barrier. COUNT follows papers/004's tables (MPI_INT):
 * the whole vector for bcast, reduce, allreduce, scan and exscan; the block per process
 * for gather, scatter, allgather(v), alltoall and reduce_scatter_block; ignored for
 * barrier. Before a collective's first count it runs WARMUP untimed calls (default 1: SMPI's
 * SMP-aware algorithms build their sub-communicators in the first call); then each count
 * runs REPS timed calls (default 3), each after a barrier. A call's time is the MAX over
 * ranks of the simulated time (MPI_Wtime) it took; a cell reports the median and the
 * minimum of its REPS calls in microseconds:
 *
 *   coll,count,np,median_us,min_us
 *
 * Buffers are SMPI_SHARED_MALLOC'd under SMPI (all ranks alias one buffer: the timing is
 * unchanged, the data are meaningless, memory stays small at 1152 ranks). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMPI_SHARED_MALLOC
#define CALIB_MALLOC(n) SMPI_SHARED_MALLOC(n)
#define CALIB_FREE(p) SMPI_SHARED_FREE(p)
#else
#define CALIB_MALLOC(n) malloc(n)
#define CALIB_FREE(p) free(p)
#endif

enum { MAX_REPS = 64 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Elements of the send and receive buffers a collective needs on p processes. */
static void sizes(const char *coll, long count, int p, long *scount, long *rcount)
{
    *scount = count;
    *rcount = count;
    if (!strcmp(coll, "gather") || !strcmp(coll, "allgather") || !strcmp(coll, "allgatherv"))
        *rcount = count * p;
    else if (!strcmp(coll, "scatter"))
        *scount = count * p;
    else if (!strcmp(coll, "alltoall"))
        *scount = *rcount = count * p;
    else if (!strcmp(coll, "reduce_scatter_block"))
        *scount = count * p;
}

/* One call of the collective; returns an MPI error code or -1 for an unknown name. */
static int call(const char *coll, int count, int p, int *sbuf, int *rbuf, int *counts, int *displs)
{
    MPI_Comm w = MPI_COMM_WORLD;
    if (!strcmp(coll, "bcast")) return MPI_Bcast(sbuf, count, MPI_INT, 0, w);
    if (!strcmp(coll, "gather"))
        return MPI_Gather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, w);
    if (!strcmp(coll, "scatter"))
        return MPI_Scatter(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, w);
    if (!strcmp(coll, "allgather"))
        return MPI_Allgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, w);
    if (!strcmp(coll, "allgatherv")) {
        for (int i = 0; i < p; i++) {
            counts[i] = count;
            displs[i] = i * count;
        }
        return MPI_Allgatherv(sbuf, count, MPI_INT, rbuf, counts, displs, MPI_INT, w);
    }
    if (!strcmp(coll, "alltoall"))
        return MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, w);
    if (!strcmp(coll, "reduce")) return MPI_Reduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, 0, w);
    if (!strcmp(coll, "allreduce")) return MPI_Allreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, w);
    if (!strcmp(coll, "reduce_scatter_block"))
        return MPI_Reduce_scatter_block(sbuf, rbuf, count, MPI_INT, MPI_SUM, w);
    if (!strcmp(coll, "scan")) return MPI_Scan(sbuf, rbuf, count, MPI_INT, MPI_SUM, w);
    if (!strcmp(coll, "exscan")) return MPI_Exscan(sbuf, rbuf, count, MPI_INT, MPI_SUM, w);
    if (!strcmp(coll, "barrier")) return MPI_Barrier(w);
    return -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, reps = 3, warmup = 1, first = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    while (first + 1 < argc && argv[first][0] == '-') {
        if (!strcmp(argv[first], "-r"))
            reps = atoi(argv[first + 1]);
        else if (!strcmp(argv[first], "-w"))
            warmup = atoi(argv[first + 1]);
        first += 2;
    }
    if (reps < 1 || reps > MAX_REPS || warmup < 0) {
        if (rank == 0) fprintf(stderr, "calib: -r must be 1..%d, -w at least 0\n", MAX_REPS);
        MPI_Finalize();
        return 2;
    }
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    if (rank == 0) printf("coll,count,np,median_us,min_us\n");
    for (int a = first; a < argc; a++) {
        char coll[64], list[4096];
        if (sscanf(argv[a], "%63[a-z_]:%4095s", coll, list) != 2) {
            snprintf(list, sizeof list, "0");
            if (sscanf(argv[a], "%63[a-z_]", coll) != 1) continue;
        }
        char *save = NULL;   /* strtok_r: all simulated ranks share one libc */
        int first_count = 1; /* warm up before a collective's first count only */
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            long count = atol(tok), scount, rcount;
            sizes(coll, count, p, &scount, &rcount);
            int *sbuf = CALIB_MALLOC(sizeof(int) * (size_t)(scount > 0 ? scount : 1));
            int *rbuf = CALIB_MALLOC(sizeof(int) * (size_t)(rcount > 0 ? rcount : 1));
            double t[MAX_REPS];
            int bad = 0;
            for (int r = first_count ? -warmup : 0; r < reps && !bad; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                bad = call(coll, (int)count, p, sbuf, rbuf, counts, displs) != MPI_SUCCESS;
                double dt = MPI_Wtime() - t0, mx = 0;
                MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                if (r >= 0) t[r] = mx * 1e6;
            }
            if (rank == 0) {
                if (bad) {
                    fprintf(stderr, "calib: unknown collective or error: %s\n", coll);
                } else {
                    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
                    printf("%s,%ld,%d,%.3f,%.3f\n", coll, count, p, t[reps / 2], t[0]);
                    fflush(stdout);
                }
            }
            CALIB_FREE(sbuf);
            CALIB_FREE(rbuf);
            first_count = 0;
        }
    }
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
