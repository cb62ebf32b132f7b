/*
 * How a repetition starts on all ranks together.
 *
 * --sync barrier: a barrier, then every rank reads its clock; the repetition's time is the
 * slowest rank's (end - start). Ranks leave a barrier at different times, so the time
 * includes that skew.
 *
 * --sync window (after ReproMPI, Hunold and Carpen-Amarie): the offset of every rank's
 * clock to rank 0's is measured once per run (clocksync.c: ping-pongs, the shortest round
 * trip wins). Before each round rank 0 announces a start time on its clock and a
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
#include "bench.h"

int bench_sync_init(bench_ctx *x)
{
    x->clk.offset = x->clk.rtt = x->clk.lead = 0;
    return x->o->sync == BS_BARRIER ? 0 : bench_clock_sync(x->comm, &x->clk);
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
    return bench_clock_wait(&x->clk, t);
}
