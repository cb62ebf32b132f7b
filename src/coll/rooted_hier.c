/*
 * The hierarchical Gather(v) and Scatter(v) (gather_hier.c, scatter_hier.c say what they do
 * and cost), both directions in one builder: a Scatter is the Gather run backwards.
 */
#include <stdlib.h>

#include "coll/rooted_lane.h"

int64_t convoy__rooted_hier_in_node(const convoy__args *a, int l, int q)
{
    int64_t off = 0;
    for (int k = 0; k < q; k++)
        off += convoy__rooted_bytes(a, convoy__topo_rank_at(a->topo, l, k));
    return off;
}

/* Node l's ranks in node-rank order (the order of its packed blocks); their number. */
static int node_ranks(const convoy__args *a, int l, int32_t *rk)
{
    const int n = a->topo->node_size[l];
    for (int q = 0; q < n; q++)
        rk[q] = convoy__topo_rank_at(a->topo, l, q);
    return n;
}

/* Node rank q's block in its leader's scratch (the node's blocks packed in node-rank order;
 * rk: the node's ranks). The leader's end of a message, whose other end is q's own block in
 * q's own types. */
static convoy__region piece(const convoy__args *a, const int32_t *rk, int q)
{
    const convoy__topo *t = a->topo;
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, convoy__rooted_hier_in_node(a, t->node, q),
                       convoy__rooted_bytes(a, rk[q]));
}

/* The leader's end of the message of region r with node rank q: a Gather receives it, a
 * Scatter sends it. */
static int near_end(const convoy__args *a, convoy__schedule *s, int q, convoy__region r, int ndeps,
                    const int *deps)
{
    if (r.count == 0) return -1;
    return convoy__rooted_gathers(a) ? convoy__add_recv(s, CONVOY_COMM_NODE, q, 0, r, ndeps, deps)
                                     : convoy__add_send(s, CONVOY_COMM_NODE, q, 0, r, ndeps, deps);
}

int convoy__rooted_hier_build(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int g = convoy__rooted_gathers(a), R = t->node_of[a->root];
    const int r0 = t->node_rank_of[a->root], lead = r0 % t->ppn;
    int32_t *rk = malloc((size_t)t->max_ppn * sizeof *rk);
    int64_t tmp = 0;
    if (!rk) return s->err = CONVOY_ERR_NO_MEM;
    if (t->rank == a->root) {
        /* The root: its node's blocks straight from (into) their processes, every other
         * node's from (to) its leader, one message per node, straight in the vector. */
        const int64_t own = convoy__rooted_bytes(a, a->root);
        if (!a->inplace && own > 0)
            g ? convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, a->root), 0,
                                 NULL)
              : convoy__add_copy(s, convoy__rooted_block(a, a->root), convoy__rooted_own(a), 0,
                                 NULL);
        for (int q = 0; q < t->ppn; q++)
            if (q != r0)
                convoy__rooted_run_root(a, s, CONVOY_COMM_NODE, q, 0,
                                        &t->members[t->node_first[R] + q], 1);
        for (int l = 0; l < t->nnodes; l++) {
            if (l == R) continue;
            const int n = node_ranks(a, l, rk);
            convoy__rooted_run_root(a, s, CONVOY_COMM_ALL,
                                    convoy__topo_rank_at(t, l, r0 % t->node_size[l]), 1, rk, n);
        }
    } else if (t->node == R || t->node_rank != lead) {
        /* Straight to (from) the root, or to (from) the node's leader, in the user's types. */
        convoy__rooted_run_far(a, s, CONVOY_COMM_NODE, t->node == R ? r0 : lead, 0,
                               convoy__rooted_own(a), 0, NULL);
    } else {
        /* A leader: its node's blocks packed in node-rank order in its scratch, exchanged with
         * the processes (their own types on their end) and with the root (one message). */
        const int me = t->node_rank;
        const int64_t mine = convoy__rooted_bytes(a, t->rank),
                      at = convoy__rooted_hier_in_node(a, t->node, me);
        const convoy__region own = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, at, mine);
        tmp = convoy__rooted_hier_in_node(a, t->node, t->ppn);
        node_ranks(a, t->node, rk);
        convoy__lane_deps in = {0}; /* Gather: the node's blocks; Scatter: their message */
        if (g && mine > 0)
            convoy__lane_deps_add(&in, convoy__add_copy(s, convoy__rooted_own(a), own, 0, NULL), s);
        for (int q = 0; g && q < t->ppn; q++)
            if (q != me) convoy__lane_deps_add(&in, near_end(a, s, q, piece(a, rk, q), 0, NULL), s);
        const int step =
            convoy__rooted_run_far(a, s, CONVOY_COMM_ALL, a->root, 1,
                                   convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, tmp), in.n, in.v);
        if (!g) convoy__lane_deps_add(&in, step, s);
        for (int q = 0; !g && q < t->ppn; q++)
            if (q != me) near_end(a, s, q, piece(a, rk, q), in.n, in.v);
        if (!g && mine > 0) convoy__add_copy(s, own, convoy__rooted_own(a), in.n, in.v);
        convoy__lane_deps_free(&in);
    }
    s->tmp_bytes = tmp;
    free(rk);
    return s->err;
}

double convoy__rooted_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int R = t->node_of[a->root];
    const int64_t total = convoy__rooted_total(a),
                  onR = convoy__rooted_hier_in_node(a, R, t->node_size[R]);
    const int64_t per_node = t->nnodes > 1 ? (total - onR) / (t->nnodes - 1) : 0;
    const convoy__machine node = convoy__lane_level(m, 0), net = convoy__lane_level(m, 1);
    /* The leaders collect (hand out) their nodes' blocks while the root does so on its node;
     * then the root takes (gives) one message per node. */
    const int nmax = t->max_ppn;
    return (nmax - 1) * node.alpha + node.beta * (double)(per_node > onR ? per_node : onR) +
           (t->nnodes - 1) * net.alpha + net.beta * (double)(total - onR);
}
