/*
 * Bcast, hierarchical (papers/004 §3.1, Listing 2), on any layout.
 *
 * Idea: the lane of the root (virtual lane r0 = the root's node rank: node l's process
 * r0 mod n_l, lane.h) broadcasts the whole message over the nodes (a registered Bcast
 * algorithm on its members); then on every node that member broadcasts it to the node's
 * other processes by a binomial tree. The message crosses the network once per node, sent
 * by one process per node. Zero copy: the user's buffer and datatype throughout, no scratch.
 *
 * Bytes leaving each node (regular layout, N nodes, m bytes): the root node m times the
 * root's children in the lane tree (binomial: up to ceil(log2 N) m), every other node
 * receives m; all of it through one process per node, the others move nothing between
 * nodes (the contrast to `lane`).
 *
 * Cost: T_bcast(N, m, one lane) + the node tree's critical path (ceil(log2 n)(alpha_node +
 * beta_node m) for n a power of two; convoy__binomial_bcast_cost). Rounds:
 * ceil(log2 N) + ceil(log2 n), at most one more than a flat binomial tree.
 *
 * Restrictions: more than one node and some node with more than one process. Source:
 * papers/004 §3.1 (Listing 2); any layout through virtual lanes (lane.h).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__bcast_hier_applicable(const convoy__args *a)
{
    return convoy__bcast_lane_applicable(a);
}

int convoy__bcast_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, R = t->node_of[a->root], r0 = t->node_rank_of[a->root];
    const convoy__region buf = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__topo lane;
    if (!map || convoy__lane_group_topo(&lane, N, t->node)) {
        free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    int got = -1;
    if (convoy__lane_serves(t, r0)) {
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_BCAST, &lane, 1, &sub);
        sub.root = R;
        convoy__lane_map(t, r0, map);
        got = convoy__lane_child(s, &sub, map, buf, buf, 0, NULL);
    } else {
        convoy__lane_placeholder(s, 0, NULL);
    }
    convoy__lane_deps out = {0};
    convoy__lane_node_bcast(s, t, r0 % t->ppn, &buf, 1, 0, CONVOY_DEP(got), &out);
    convoy__lane_deps_free(&out);
    s->tag_blocks = 2;
    convoy__topo_free(&lane);
    free(map);
    return s->err;
}

double convoy__bcast_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    return convoy__lane_cost_equal(&b, CONVOY_COLL_BCAST, t->nnodes, 1, a->count) +
           convoy__binomial_bcast_cost(&node, t->max_ppn, (double)(a->count * a->rtype.size));
}
