/*
 * Scatter and Scatterv, hierarchical (papers/004 §3.2), on any layout and counts, zero copy
 * at the root: the hierarchical Gather (gather_hier.c) run backwards, one builder for both
 * (rooted_hier.c).
 *
 * Idea: the root sends every other node's leader (the member of the root's lane, node rank
 * r0 mod n_l) its node's blocks in one message, straight from the send buffer through a
 * strided region (the paper's vector type) where they are equal and evenly spaced, else an
 * indexed one (uneven, reversed or overlapping displacements); the leader receives
 * them packed in node-rank order and sends each process its block, which arrives straight
 * in its receive buffer in its own type (the leader unpacks its own). On the root node the
 * root sends its processes their blocks straight from the send buffer into place.
 *
 * Zero copy, and how it is checked: a leader holds its node's n m bytes, the root nothing;
 * `--expect-tmp-max "n*m"` (check_rooted_hier_zero_copy_n*), `--expect-tmp-root 0` for
 * every displacement pattern (check_rooted_v_zero_copy*).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * the root node sends (N - 1) n m, all from the root; every other node receives n m, all
 * through its leader.
 *
 * Cost: as the hierarchical Gather (rooted_hier.c). Restrictions: more than one node, some
 * node with more than one process, every block's size on every rank. Source: papers/004
 * §3.2; any layout and counts.
 */
#include "coll/rooted_lane.h"

int convoy__scatter_hier_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__scatter_hier(const convoy__args *a, convoy__schedule *s)
{
    return convoy__rooted_hier_build(a, s);
}

double convoy__scatter_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_hier_cost(a, m);
}
