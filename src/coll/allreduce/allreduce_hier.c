/*
 * Hierarchical Allreduce (papers/004 §3.4, Listing 9): reduce on the node to its leader
 * (node rank 0), allreduce among the leaders, broadcast on the node.
 *
 * Idea: a binomial tree reduces each node's vectors into its leader's receive buffer
 * (lane.h, node_reduce); the leaders (one per node) run a registered allreduce in place;
 * a binomial tree broadcasts the result on each node.
 *
 * Bytes leaving each node (regular layout, N nodes, m bytes of vector): what one flat
 * allreduce over N processes sends per process, e.g. 2 (N - 1) / N * m with the ring or
 * Rabenseifner's, all from the leader.
 *
 * Cost: ceil(log2 n)(alpha_node + (beta_node + gamma) m) + T_allreduce(N, m) +
 * ceil(log2 n)(alpha_node + beta_node m).
 *
 * Scratch: one vector for a child's partial sums on processes with children in the node
 * tree (a reduction cannot do without it; the paper's MPI_Reduce allocates it inside).
 *
 * Restrictions: commutative operations (the node tree combines out of rank order). More
 * than one node and some node of more than one process.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__allreduce_hier_applicable(const convoy__args *a)
{
    return convoy__allreduce_lane_applicable(a);
}

int convoy__allreduce_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes;
    const int64_t cnt = a->count;
    if (cnt == 0) return 0;
    const convoy__region acc = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt);
    int own = -1;
    if (!a->inplace)
        own =
            convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, cnt), acc, 0, NULL);
    const int64_t lb = a->rtype.true_lb;
    s->tmp_bytes = a->rtype.true_extent + (cnt - 1) * a->rtype.extent;
    const convoy__region tmp = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, cnt);
    int red = convoy__lane_node_reduce(s, t, 0, acc, tmp, 0, CONVOY_DEP(own));
    if (red < 0) red = own;
    int lead = red;
    if (t->node_rank == 0) {
        convoy__topo lt;
        int32_t *map = malloc((size_t)N * sizeof *map);
        if (!map || convoy__lane_group_topo(&lt, N, t->node)) {
            free(map);
            return s->err = CONVOY_ERR_NO_MEM;
        }
        convoy__lane_map(t, 0, map);
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_ALLREDUCE, &lt, 1, &sub);
        sub.count = cnt;
        sub.inplace = 1;
        const convoy__region r = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0);
        lead = convoy__lane_child(s, &sub, map, r, r, CONVOY_DEP(red));
        convoy__topo_free(&lt);
        free(map);
    }
    s->tag_blocks = 2; /* leaders have one child, the others none */
    convoy__lane_deps out = {0};
    convoy__lane_node_bcast(s, t, 0, &acc, 1, 1, CONVOY_DEP(lead), &out);
    convoy__lane_deps_free(&out);
    return s->err;
}

double convoy__allreduce_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const double bytes = (double)a->count * a->rtype.size;
    const convoy__machine node = convoy__lane_level(m, 0);
    const int lg = convoy__log2_floor(2 * t->max_ppn - 1);
    convoy__args b = *a;
    b.machine = *m;
    return lg * (2 * node.alpha + (2 * node.beta + m->gamma) * bytes) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_ALLREDUCE, t->nnodes, 1, a->count);
}
