/*
 * Gather and Gatherv, hierarchical (papers/004 §3.2, Listing 4), on any layout and counts,
 * zero copy at the root.
 *
 * Idea: on every node but the root's, the member of the root's lane (node rank r0 mod n_l,
 * lane.h) is the leader: it collects its node's blocks packed in node-rank order (each
 * process sends its block in its own type; the leader packs its own) and sends them to the
 * root in one message (rooted_lane.h), which the root receives straight into place
 * (Listing 4 receives into a temporary and reorders): through a strided region where the
 * node's blocks are equal and evenly spaced in the vector (Gather: adjacent on consecutive
 * layouts, N apart on round-robin ones), else through an indexed region (Gatherv's uneven
 * displacements, different counts, any order). On the root node the processes send
 * the root their blocks straight into place. The leaders' phase is a linear gather: a tree
 * over the leaders would hand the root other nodes' blocks packed, to be unpacked.
 *
 * Zero copy, and how it is checked: a leader holds its node's n m bytes (1/N of the
 * message), the others nothing; `--expect-tmp-max "n*m"` (check_rooted_hier_zero_copy_n*),
 * and `--expect-tmp-root 0` for every displacement pattern (check_rooted_v_zero_copy*).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * n m from every node but the root's, all through its leader (the other processes send
 * nothing between nodes: the contrast to `lane`); the root node receives (N - 1) n m, all
 * into the root.
 *
 * Cost: (n - 1)(alpha_node) + beta_node n m + (N - 1) alpha + beta (N - 1) n m.
 *
 * Restrictions: more than one node, some node with more than one process, every block's
 * size on every rank. Source: papers/004 §3.2 (Listing 4); any layout and counts.
 */
#include "coll/rooted_lane.h"

int convoy__gather_hier_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__gather_hier(const convoy__args *a, convoy__schedule *s)
{
    return convoy__rooted_hier_build(a, s);
}

double convoy__gather_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_hier_cost(a, m);
}
