/*
 * Scatter and Scatterv, full-lane (papers/004 §3.2), on any layout and counts, zero copy
 * at the root: the full-lane Gather (gather_lane.c) run backwards, one builder for both
 * (rooted_lane.c).
 *
 * Idea:
 *   1. Root node: the root sends each of its node's processes its own block (straight
 *      from the send buffer into place) and each lane it does not root itself to the root
 *      node's process q_j = j mod n_R that roots virtual lane j in one message, sent
 *      straight from the send buffer through a strided region (the paper's vector type)
 *      where the lane's blocks are equal and evenly spaced, else through an indexed one,
 *      and arriving packed in q_j's scratch.
 *   2. Lane scatters: virtual lane j (lane.h) scatters the blocks of the processes with
 *      node rank j on the other nodes (a registered Scatterv, all lanes at once, the one
 *      with the least scratch); every process receives its block straight into its
 *      receive buffer in its own type.
 * Irregular counts and displacements (Scatterv) are no different (every rank knows every
 * block's size; the root's indexed regions hold uneven, reversed or overlapping
 * displacements).
 *
 * Zero copy, and how it is checked: nobody unpacks; a relay holds (N - 1) m bytes per lane
 * it roots on regular layouts, the root nothing (`--expect-tmp-max "(N-1)*m"`,
 * check_rooted_lane_zero_copy_n*; `--expect-tmp-root 0` for every displacement pattern,
 * check_rooted_v_zero_copy*).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * the root node sends (N - 1) n m, (N - 1) m per process (lane); every other node receives
 * n m, m per process. Inside the root node (N - 1)(n - 1) m + (n - 1) m (the bottleneck
 * the paper notes).
 *
 * Cost: as the full-lane Gather (rooted_lane.c). Restrictions: more than one node, some
 * node with more than one process, every block's size on every rank (not a nonblocking
 * Scatterv). Source: papers/004 §3.2; irregular counts and any layout beyond the paper.
 */
#include "coll/rooted_lane.h"

int convoy__scatter_lane_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__scatter_lane(const convoy__args *a, convoy__schedule *s)
{
    return convoy__rooted_lane_build(a, s);
}

double convoy__scatter_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_lane_cost(a, m);
}
