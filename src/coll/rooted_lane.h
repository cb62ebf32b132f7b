/*
 * What the full-lane and hierarchical Gather(v) and Scatter(v) share (papers/004 §3.2):
 * the two builders, each serving both directions (a Scatter is its Gather run backwards:
 * every message reversed, every phase in the opposite order), and the runs by which a
 * group's blocks travel between a process and the root with no copy at the root.
 *
 * Zero copy at the root (papers/004 §3.2's derived datatypes): a message that carries
 * several blocks of the root's vector between the root and another process (a lane's
 * blocks relayed on the root node; a node's blocks between its leader and the root) is
 * received (sent) at the root straight in its vector, and packed at the other end
 * (MPI_PACKED, which MPI matches with any type signature): one message per group (a *run*:
 * the group's blocks in the order the far end packs them). Only the root knows its
 * displacements (Gatherv); every rank knows the blocks' sizes and ranks, so both ends
 * agree on the message without the displacements. At the root the run is a strided region
 * (sched.h: the paper's vector type with a resized extent) where its blocks are equal and
 * evenly spaced in the vector (a Gather on a regular layout), else an indexed region
 * (sched.h: an hindexed type, one entry per block that holds data): uneven displacements,
 * different counts, gaps, zero counts, blocks in any order, and for Scatterv overlapping
 * blocks (MPI allows overlapping send blocks). The root allocates no scratch at all
 * (`convoy-check --expect-tmp-root 0`).
 */
#ifndef CONVOY_ROOTED_LANE_H
#define CONVOY_ROOTED_LANE_H

#include "coll/lane.h"

/* The root's end of the message that carries the blocks of ranks rk[0..n) (packed in that
 * order at the other end) with `peer` (numbered in comm): Gather receives it, Scatter sends
 * it, straight in the vector: a strided region where the blocks are equal and evenly spaced,
 * else an indexed one. Returns the step (-1: no bytes, no message). */
int convoy__rooted_run_root(const convoy__args *a, convoy__schedule *s, int comm, int peer, int tag,
                            const int32_t *rk, int n);
/* The other end: the message of region r (the run's blocks packed, bytes) with `peer`, sent
 * by a Gather, received by a Scatter, after deps. */
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
