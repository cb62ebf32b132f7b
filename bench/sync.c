/*
 * How a repetition starts on all ranks together.
 *
 * --sync barrier: a barrier, then every rank reads its clock; the repetition's time is the
 * slowest rank's (end - start). Ranks leave a barrier at different times, so the time
 * includes that skew.
 *
 * --sync window (after ReproMPI, Hunold and Carpen-Amarie): the offset of every rank's
 * clock to rank 0's is measured once per run (bench_sync_init: ping-pongs, the shortest
 * round trip wins). Before each round rank 0 announces a start time on its clock and a
 * window per variant; each rank waits until its corrected clock reaches a window's start
 * and then calls. A rank that only arrives after the start makes the repetition invalid
 * (not sampled, but counted: the output shows valid/total). The time is the slowest rank's
 * (end - agreed start), which excludes barrier skew. Offsets are measured once, so clock
 * drift during a long run is not corrected (on one host, ranks share one clock anyway).
 *
 * --sync auto (the default; barrier in a SimGrid build, whose tables predate it): window for
 * rooted collectives, barrier for the others. After a barrier the ranks leave at different
 * times, and a rooted collective's time can then leave out its latency: a Reduce's non-roots
 * send before the root's clock starts, or a Bcast's root sends before the others' clocks do,
 * and every rank finds its message there (np 4 as 2 x 2, Reduce of 1 int by `linear`: 0.37 us
 * after a barrier, 0.07 of the library's, against 7.0 us, 0.66, with windows). The others'
 * times after a barrier include the exit skew instead, as MPI benchmarks usually do.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <sched.h>
#include <stdlib.h>

#include "clock.h"

enum { PINGS = 20, LEAD_SAMPLES = 7 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_sync_init(bench_ctx *x)
{
    bench_clock *k = &x->clk;
    k->offset = k->rtt = 0;
    k->lead = 0;
    if (x->o->sync == BS_BARRIER) return 0;
    double sent[PINGS], remote[PINGS], recvd[PINGS];
    /* One rank at a time against rank 0, so the ping-pongs do not compete. */
    for (int r = 1; r < x->size; r++) {
        PMPI_Barrier(x->comm);
        for (int i = 0; i < PINGS; i++) {
            if (x->rank == r) {
                double t = 0;
                sent[i] = MPI_Wtime();
                PMPI_Send(&sent[i], 1, MPI_DOUBLE, 0, 77, x->comm);
                PMPI_Recv(&t, 1, MPI_DOUBLE, 0, 78, x->comm, MPI_STATUS_IGNORE);
                recvd[i] = MPI_Wtime();
                remote[i] = t;
            } else if (x->rank == 0) {
                double dummy;
                PMPI_Recv(&dummy, 1, MPI_DOUBLE, r, 77, x->comm, MPI_STATUS_IGNORE);
                double t = MPI_Wtime();
                PMPI_Send(&t, 1, MPI_DOUBLE, r, 78, x->comm);
            }
        }
        if (x->rank == r) bench_clock_offset(sent, remote, recvd, PINGS, &k->offset, &k->rtt);
    }
    /* The lead: how far ahead a round is announced. It must cover the broadcast of the
     * announcement, so several times a barrier's duration, at least 200 us. */
    double lat[LEAD_SAMPLES];
    for (int i = 0; i < LEAD_SAMPLES; i++) {
        double t0 = MPI_Wtime();
        PMPI_Barrier(x->comm);
        PMPI_Barrier(x->comm);
        lat[i] = MPI_Wtime() - t0;
    }
    qsort(lat, LEAD_SAMPLES, sizeof *lat, cmp_double);
    k->lead = 4.0 * lat[LEAD_SAMPLES / 2];
    if (k->lead < 200e-6) k->lead = 200e-6;
    PMPI_Bcast(&k->lead, 1, MPI_DOUBLE, 0, x->comm);
    return 0;
}

int bench_windowed(const bench_opts *o, int rooted)
{
    return o->sync == BS_WINDOW || (o->sync == BS_AUTO && rooted);
}

const char *bench_sync_name(const bench_opts *o, int rooted)
{
    return bench_windowed(o, rooted) ? "window" : "barrier";
}

double bench_gtime(const bench_ctx *x)
{
    return MPI_Wtime() + x->clk.offset;
}

int bench_wait_until(const bench_ctx *x, double t)
{
    double now = bench_gtime(x);
    if (now > t) return 1;
    /* Spin, but give the core away while the start is far: on an oversubscribed machine
     * a spinning rank would delay the ranks still working on the previous call. */
    while ((now = bench_gtime(x)) < t)
        if (t - now > 100e-6) sched_yield();
    return 0;
}
