/*
 * The single-copy bound of a convoy-bench cell: the least time in which every process can
 * have copied into its result what the others contribute, at the host's copy bandwidth.
 * Pure C without MPI, so the unit tests can call it.
 */
#ifndef CONVOY_BENCH_BOUND_H
#define CONVOY_BENCH_BOUND_H

#include <stdint.h>

/* The bound in seconds of a call of collective `coll` (convoy-bench's name) on `size` ranks
 * with `count` elements of `tsize` bytes (per rank, per pair for alltoall; v-collectives:
 * rcounts[i] elements from or to rank i) and root `root`, at `bw` bytes per second per
 * core. What each rank must copy into its result from the others (not its own
 * contribution: in place that needs no copy), the larger of the neediest rank's bytes over
 * one core and, for each host, its ranks' bytes together over its cores (min(processes,
 * cores) of them copy at once). host_of[i]: an id in [0, size) of rank i's host;
 * cores_of[i]: that host's cores. Rooted collectives with root < 0 (the root rotating over
 * the repetitions): the least over the roots. 0 where nothing is copied. */
double bench_bound_time(const char *coll, int size, int64_t tsize, int64_t count,
                        const int *rcounts, int root, const int *host_of, const int *cores_of,
                        double bw);

#endif
