/*
 * Hierarchical Reduce (papers/004 §3.4, the Reduce counterpart of Listing 9): a reduce on
 * every node to one process, then a reduce over those processes (one per node) to the root.
 *
 * Idea: on the root's node the node reduce goes to the root itself, on every other node to
 * node rank 0; the inter-node reduce runs over these N processes (the root's node's member
 * being the root) with the root's node as its root. Each phase is a registered Reduce
 * chosen by its cost model on its level (lane.h): the node phase on shared memory, the
 * inter-node phase with one process per node on the network.
 *
 * Bytes leaving each node: the inter-node reduce's, by one process per node: m per node
 * with the binomial tree, about 2 m with Rabenseifner's (m = bytes of the vector); all of a
 * node's inter-node traffic goes through one process (not full-lane: --assert-inter-spread
 * does not hold, by design).
 *
 * Cost: T_reduce(node, n, m) + T_reduce(N, m; one process per node).
 *
 * Zero copy: the node reduce reads the send buffer (the root's receive buffer in place)
 * and leaves its result in the receive buffer at the root, in one vector of scratch at the
 * other nodes' leaders, where the inter-node reduce reads it. No other copies.
 *
 * Restrictions: commutative operations (the inter-node phase combines nodes in node
 * order, which is rank order only on consecutive layouts). More than one node, some node
 * of more than one process. Any layout: node sizes and rank placement are free.
 *
 * Source: papers/004 §3 (the hierarchical decompositions: Listings 2, 4, 6, 9, 10).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__reduce_hier_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

int convoy__reduce_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, root = a->root, rn = t->node_of[root];
    const int is_root = t->rank == root;
    const int target = t->node == rn ? t->node_rank_of[root] : 0; /* node rank */
    const int leader = t->node_rank == target;
    const int64_t n = a->count;
    if (n == 0) return 0;
    convoy__topo nt, lt;
    int32_t *map = malloc((size_t)N * sizeof *map);
    if (!map || convoy__lane_topos(t, &nt, &lt)) {
        free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* The node's result: the receive buffer at the root, one vector of scratch at the
     * other leaders. */
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0);
    const convoy__region tmp = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -a->rtype.true_lb, 0);
    const convoy__region part = is_root ? recv : tmp;
    if (leader && !is_root) s->tmp_bytes = a->rtype.true_extent + (n - 1) * a->rtype.extent;

    convoy__args sub;
    convoy__lane_sub_args(a, CONVOY_COLL_REDUCE, &nt, 0, &sub);
    sub.root = target;
    sub.inplace = is_root && a->inplace;
    const convoy__region in =
        sub.inplace ? recv : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    int node = convoy__lane_child(s, &sub, NULL, in, part, 0, NULL);

    for (int l = 0; l < N; l++)
        map[l] = l == rn ? root : convoy__topo_rank_at(t, l, 0);
    if (leader) {
        convoy__lane_sub_args(a, CONVOY_COLL_REDUCE, &lt, 1, &sub);
        sub.root = rn;
        sub.inplace = is_root; /* the node's result is the root's input, in place */
        convoy__lane_child(s, &sub, map, part, part, CONVOY_DEP(node));
    } else {
        convoy__lane_placeholder(s, CONVOY_DEP(node));
    }
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    free(map);
    return s->err;
}

double convoy__reduce_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    convoy__args b = *a;
    b.machine = *m;
    b.root = 0;
    return convoy__lane_cost_equal(&b, CONVOY_COLL_REDUCE, a->topo->max_ppn, 0, a->count) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_REDUCE, a->topo->nnodes, 1, a->count);
}
