/*
 * Gather and Gatherv, full-lane (papers/004 §3.2, Listing 3), on any layout and counts,
 * zero copy at the root.
 *
 * Idea: the blocks are gathered over all lanes at once, then collected at the root.
 *   1. Lane gathers: virtual lane j (lane.h) gathers the blocks of the processes with node
 *      rank j on every other node to the root node's process q_j = j mod n_R (a registered
 *      Gatherv on the lane's members, all lanes at once; the one with the least scratch, so
 *      no tree packs what could arrive in place). Every process sends its block from its
 *      send buffer in its own type. A lane rooted at the root receives straight into the
 *      receive buffer (the child's displacements are the root's: Listing 3's receive
 *      into place); a lane rooted at another process q_j arrives packed in q_j's scratch.
 *   2. Root node: each of its processes sends the root its own block (in the user's types,
 *      straight into place) and each lane it relays in one message (rooted_lane.h), which
 *      the root receives straight into place: through a strided region, Listing 3's vector
 *      type with a resized extent, where the lane's blocks are equal and evenly spaced
 *      (Gather; consecutive layouts: blocks n apart; round-robin ones: adjacent), else
 *      through an indexed region (an hindexed type).
 * Irregular counts and displacements (Gatherv) are no different: every rank knows every
 * block's size (the API's counts exchange), the root alone the displacements, which only
 * its indexed regions hold: uneven or reversed displacements, gaps, zero and different
 * counts cost no copy and no extra message.
 *
 * Zero copy, and how it is checked: no process packs its own block; a relay q_j holds its
 * lanes' blocks, (N - 1) m bytes per lane on regular layouts, 1/n of the message, and the
 * root none. `convoy-check --expect-tmp-max "(N-1)*m"` (check_rooted_lane_zero_copy_n*) fails
 * any schedule tree that allocates more on some rank (the message is N n m bytes), and
 * `--expect-tmp-root 0` any root that allocates scratch, for every displacement pattern
 * (check_rooted_v_zero_copy*).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * n m from every node but the root's, m per process, one lane each; the root node receives
 * (N - 1) n m, (N - 1) m per process. Inside the root node, (N - 1)(n - 1) m + (n - 1) m
 * more (the paper's note: the node gather on the root node is the bottleneck).
 *
 * Cost: T_gatherv(N, m, n lanes at once) + (n_R - 1 + L) alpha_node + beta_node n_total.
 *
 * Restrictions: more than one node, some node with more than one process, every block's
 * size on every rank (not a nonblocking Gatherv). Source: papers/004 §3.2; irregular
 * counts (open in §6) and any layout, beyond the paper.
 */
#include "coll/rooted_lane.h"

int convoy__gather_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1 && !a->counts_local;
}

int convoy__gather_lane(const convoy__args *a, convoy__schedule *s)
{
    return convoy__rooted_lane_build(a, s);
}

double convoy__gather_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_lane_cost(a, m);
}
