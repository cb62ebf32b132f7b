/*
 * Synchronised clocks for the window-based start of repetitions (ReproMPI's method), shared
 * by convoy-bench (sync.c) and convoy-dropin-bench (dropin.c): MPI, through PMPI_* only (a
 * preloaded drop-in must not serve the bookkeeping), and no Convoy.
 */
#ifndef CONVOY_BENCH_CLOCKSYNC_H
#define CONVOY_BENCH_CLOCKSYNC_H

#include <mpi.h>

typedef struct bench_clock {
    double offset; /* add to MPI_Wtime() for rank 0's clock */
    double rtt;    /* the round trip the offset came from */
    double lead;   /* how far ahead rank 0 announces a start: it must cover the announcement */
} bench_clock;

/* Collective over comm: every rank's offset to rank 0 from 20 ping-pongs, one rank at a time
 * (the shortest round trip wins, bench_clock_offset), and the lead: 4 times the median of 7
 * double barriers, at least 200 us, rank 0's value. */
int bench_clock_sync(MPI_Comm comm, bench_clock *k);
/* Waits until the corrected clock reads t, yielding the core while t is more than 100 us
 * away (on an oversubscribed machine a spinning rank would delay the ranks still working
 * on the previous call); 1 if it had already passed t (the repetition is invalid), else 0. */
int bench_clock_wait(const bench_clock *k, double t);

#endif
