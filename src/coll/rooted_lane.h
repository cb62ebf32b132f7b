/*
 * What the full-lane and hierarchical Gather(v) and Scatter(v) share (papers/004 §3.2):
 * the two builders, each serving both directions (a Scatter is its Gather run backwards:
 * every message reversed, every phase in the opposite order), and the runs by which a
 * group's blocks travel between a process and the root with no copy at the root.
 *
 * Zero copy at the root (papers/004 §3.2's derived datatypes): a message that carries
 * several blocks of the root's vector between the root and another process (a lane's
 * blocks relayed on the root node; a node's blocks between its leader and the root) is
 * received (sent) at the root straight in its vector through a strided region (sched.h:
 * nblk blocks, stride bytes apart, the paper's vector type with a resized extent), and
 * packed at the other end (MPI_PACKED, which MPI matches with any type signature). Only the
 * root knows its displacements (Gatherv), every rank knows the blocks' sizes and ranks: so
 * a group's blocks are cut into *runs* (blocks of equal size whose ranks are evenly spaced:
 * a Gather's displacements are rank * count, so a run is evenly spaced in the vector too),
 * one message per run. Where the root's displacements of a run are not evenly spaced
 * (Gatherv), the root receives (sends) the run through scratch of its size and unpacks
 * (packs) its blocks.
 */
#ifndef CONVOY_ROOTED_LANE_H
#define CONVOY_ROOTED_LANE_H

#include "coll/lane.h"

/* rk[first .. first + n): blocks of equal size, ranks evenly spaced. */
typedef struct convoy__rooted_run {
    int first, n;
} convoy__rooted_run;

/* Cuts the blocks of ranks rk[0..k) into runs; returns their number (runs has room for k). */
int convoy__rooted_runs(const convoy__args *a, const int32_t *rk, int k, convoy__rooted_run *runs);
/* The root's end of a run's message with `peer` (numbered in comm): Gather receives it,
 * Scatter sends it, straight in the vector when the run's displacements are evenly spaced,
 * else through scratch at *tmp (advanced) with the blocks unpacked after (packed before).
 * Returns the last step. */
int convoy__rooted_run_root(const convoy__args *a, convoy__schedule *s, int comm, int peer, int tag,
                            const int32_t *rk, int n, int64_t *tmp);
/* The other end: the message of region r (packed bytes) with `peer`, sent by a Gather,
 * received by a Scatter, after deps. */
int convoy__rooted_run_far(const convoy__args *a, convoy__schedule *s, int comm, int peer, int tag,
                           convoy__region r, int ndeps, const int *deps);

/* The full-lane Gather(v)/Scatter(v) (gather_lane.c, scatter_lane.c) and its cost. */
int convoy__rooted_lane_build(const convoy__args *a, convoy__schedule *s);
double convoy__rooted_lane_cost(const convoy__args *a, const convoy__machine *m);
/* The hierarchical Gather(v)/Scatter(v) (gather_hier.c, scatter_hier.c) and its cost. */
int convoy__rooted_hier_build(const convoy__args *a, convoy__schedule *s);
double convoy__rooted_hier_cost(const convoy__args *a, const convoy__machine *m);
/* Offset of node l's process q's block in node l's blocks packed in node-rank order. */
int64_t convoy__rooted_hier_in_node(const convoy__args *a, int l, int q);

#endif
