/*
 * Hierarchical Reduce_scatter(_block) (papers/004 §3.4, Listing 10): reduce on the node to
 * its leader, reduce-scatter among the leaders, scatter on the node.
 *
 * Idea: each process copies its vector into scratch in node order (node 0's ranks' blocks,
 * then node 1's, ...: on consecutive layouts that is the rank order); a binomial tree
 * reduces the node's vectors at its leader (node rank 0, lane.h); the leaders run a
 * registered reduce-scatter in place, leader l getting the sums of node l's blocks; the
 * leader sends each process of its node its block, received straight into its receive
 * buffer.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per block): what
 * one reduce-scatter over N leaders of n m-byte blocks sends, e.g. (N - 1) n m with the
 * ring, all from the leader.
 *
 * Cost: T_copy(P m) + ceil(log2 n)(alpha_node + (beta_node + gamma) P m) +
 * T_rs(N, P m) + (n - 1)(alpha_node + beta_node m).
 *
 * Scratch: two vectors (the node-ordered copy, a child's partial sums).
 *
 * Restrictions: commutative operations. Any counts. More than one node and some node of
 * more than one process.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__reduce_scatter_hier_applicable(const convoy__args *a)
{
    return convoy__reduce_scatter_lane_applicable(a);
}

int convoy__reduce_scatter_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn;
    const int64_t ext = a->rtype.extent, lb = a->rtype.true_lb, cnt = a->count;
    if (cnt == 0) return 0;
    int64_t *v = malloc(2 * (size_t)N * sizeof *v), *pos = malloc((size_t)t->size * sizeof *pos);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__lane_deps copies = {0};
    if (!v || !pos || !map) {
        free(v), free(pos), free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* Node order; node l's part starts at v[N + l] and has v[l] elements. */
    int64_t at = 0;
    for (int l = 0; l < N; l++) {
        v[N + l] = at;
        for (int q = 0; q < t->node_size[l]; q++) {
            const int r = convoy__topo_rank_at(t, l, q);
            pos[r] = at;
            at += a->rcounts[r];
        }
        v[l] = at - v[N + l];
    }
    const int64_t vec = (cnt - 1) * ext + a->rtype.true_extent, two = (vec + 63) / 64 * 64;
    s->tmp_bytes = two + vec;
    const convoy__region acc = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, cnt);
    const convoy__region part = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, two - lb, cnt);
    const convoy__region in0 = a->inplace ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0)
                                          : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    for (int r = 0; r < t->size; r++) {
        if (a->rcounts[r] == 0) continue;
        convoy__region src = in0, dst = acc;
        src.off = a->displs[r] * ext;
        src.count = dst.count = a->rcounts[r];
        dst.off += pos[r] * ext;
        convoy__lane_deps_add(&copies, convoy__add_copy(s, src, dst, 0, NULL), s);
    }
    int red = convoy__lane_node_reduce(s, t, 0, acc, part, 0, copies.n, copies.v);
    if (t->node_rank == 0) {
        convoy__topo lt;
        if (convoy__lane_group_topo(&lt, N, t->node)) {
            s->err = CONVOY_ERR_NO_MEM;
        } else {
            convoy__lane_map(t, 0, map);
            convoy__args sub;
            convoy__lane_sub_args(a, CONVOY_COLL_REDUCE_SCATTER, &lt, 1, &sub);
            sub.count = cnt;
            sub.rcounts = v;
            sub.displs = v + N;
            sub.inplace = 1;
            const convoy__region base = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, 0);
            /* Without a node tree (one process) the copies are the node's sum. */
            const int lead = red >= 0
                                 ? convoy__lane_child(s, &sub, map, base, base, 1, &red)
                                 : convoy__lane_child(s, &sub, map, base, base, copies.n, copies.v);
            /* My node's part now starts the scratch: its blocks to their ranks. */
            int64_t off = 0;
            for (int q = 0; q < n; q++) {
                const int r = convoy__topo_rank_at(t, t->node, q);
                const convoy__region blk =
                    convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, off * ext - lb, a->rcounts[r]);
                const convoy__region mine =
                    convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->rcounts[r]);
                if (a->rcounts[r] > 0) {
                    if (q == 0)
                        convoy__add_copy(s, blk, mine, CONVOY_DEP(lead));
                    else
                        convoy__add_send(s, CONVOY_COMM_NODE, q, 1, blk, CONVOY_DEP(lead));
                }
                off += a->rcounts[r];
            }
            convoy__topo_free(&lt);
        }
    } else if (a->rcounts[t->rank] > 0) {
        /* In place the receive buffer held my input: wait until it was copied. */
        convoy__add_recv(s, CONVOY_COMM_NODE, 0, 1,
                         convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->rcounts[t->rank]),
                         copies.n, copies.v);
    }
    s->tag_blocks = 2; /* leaders have one child, the others none */
    convoy__lane_deps_free(&copies);
    free(v), free(pos), free(map);
    return s->err;
}

double convoy__reduce_scatter_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const double bytes = (double)a->count * a->rtype.size;
    const convoy__machine node = convoy__lane_level(m, 0);
    const int n = t->max_ppn, lg = convoy__log2_floor(2 * n - 1);
    convoy__args b = *a;
    b.machine = *m;
    return node.beta * bytes + lg * (node.alpha + (node.beta + m->gamma) * bytes) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_REDUCE_SCATTER, t->nnodes, 1, a->count) +
           (n - 1) * (node.alpha + node.beta * bytes / t->size);
}
