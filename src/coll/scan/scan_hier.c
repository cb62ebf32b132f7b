/*
 * Hierarchical Scan and Exscan (papers/004 §3.5, Listing 12): a scan on every node, an
 * exclusive scan over the nodes' last processes of the node totals, a broadcast of that
 * prefix on every node, and one combination per process.
 *
 * Idea (Scan): the node scan leaves process i of node l with the prefix of its node's
 * ranks up to i; the node's last process holds the node total T_l. An exclusive scan of
 * the T_l over the nodes (one process per node, in node order) gives the last process of
 * node l the combination E_l of all earlier nodes, broadcast on the node (binomial tree of
 * node messages); every process of a node l > 0 then computes E_l op (its node prefix).
 * Exscan: the same with a node exclusive scan; the last process forms T_l = (its node
 * exclusive prefix) op (its own contribution), node rank 0 of node l > 0 takes E_l alone.
 * This is papers/004's identity: the scan of process i on node l is the sum over earlier
 * nodes plus the sum over the node's processes up to i.
 *
 * Bytes leaving each node: the exclusive scan's, by one process per node (m per distance
 * with the recursive-doubling exscan, m with the linear one; m = bytes of the vector).
 *
 * Cost: T_scan(node, n, m) + T_exscan(N, m; one per node) + ceil(log2 n)(alpha_node +
 * beta_node m) + gamma m.
 *
 * Zero copy: the node scan runs from the send buffer into the receive buffer (in place on
 * it); E lives in one vector of scratch (Exscan: the node total too, at the last process).
 *
 * Restrictions: consecutive layouts (each node's ranks form one block, nodes in rank
 * order: the decomposition of the prefix by nodes needs it), any node sizes. Rank order is
 * kept (CONVOY_ALGO_NONCOMMUTATIVE: children are chosen among order-keeping algorithms
 * for such operations, and E covers ranks below the node's).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__scan_hier_applicable(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    return t->nnodes > 1 && t->max_ppn > 1 && (t->flags & CONVOY_TOPO_CONSECUTIVE);
}

/* Tags of the node broadcast of E (plain node messages of this schedule). */
enum { TAG_BCAST = 0 };

int convoy__scan_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, ex = a->coll == CONVOY_COLL_EXSCAN;
    const int last = t->node_rank == n - 1, first_node = t->node == 0;
    const int64_t cnt = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (cnt == 0) return 0;
    const int64_t vec = (a->rtype.true_extent + (cnt - 1) * ext + 15) / 16 * 16;
    convoy__topo nt, lt;
    int32_t *map = malloc((size_t)N * sizeof *map);
    if (!map || convoy__lane_topos(t, &nt, &lt)) {
        free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* Scratch: E at 0; Exscan's node total at vec (last processes). */
    s->tmp_bytes = ex && last ? 2 * vec : vec;
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt);
    const convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, cnt);
    const convoy__region E = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, cnt);
    const convoy__region T = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, vec - lb, cnt);
    const convoy__region own = a->inplace ? recv : send;
    /* Exscan: the last process keeps its contribution for the node total (in place the
     * node exscan overwrites it). */
    const int keep = ex && last ? convoy__add_copy(s, own, T, 0, NULL) : -1;

    convoy__args sub;
    convoy__lane_sub_args(a, a->coll, &nt, 0, &sub);
    sub.inplace = a->inplace;
    const convoy__region base = convoy__reg(a->inplace ? CONVOY_BUF_RECV : CONVOY_BUF_SEND,
                                            a->inplace ? CONVOY_T_RECV : CONVOY_T_SEND, 0, 0);
    /* (A node of one process has no node exscan: its result is E alone.) */
    const int node = ex && n == 1
                         ? convoy__lane_placeholder(s, CONVOY_DEP(keep))
                         : convoy__lane_child(s, &sub, NULL, base,
                                              convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0),
                                              CONVOY_DEP(keep));
    /* The node total at the last process: its scan (Scan), or its exscan op own. */
    convoy__region total = recv;
    int have = node;
    if (ex && last) {
        total = T;
        if (n > 1) {
            int deps[2] = {node, keep};
            have = convoy__add_reduce(s, recv, T, 2, deps);
        } else {
            have = keep;
        }
    }
    /* Exclusive scan of the node totals over the nodes' last processes, into E. */
    for (int l = 0; l < N; l++)
        map[l] = convoy__topo_rank_at(t, l, t->node_size[l] - 1);
    int xs = -1;
    if (last) {
        convoy__lane_sub_args(a, CONVOY_COLL_EXSCAN, &lt, 1, &sub);
        const convoy__region tot0 = convoy__reg(total.buf, total.tslot, total.off, 0);
        xs = convoy__lane_child(s, &sub, map, tot0,
                                convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, 0),
                                CONVOY_DEP(have));
    } else {
        convoy__lane_placeholder(s, 0, NULL);
    }
    if (first_node) goto done; /* E is nothing: the node scan is the result */
    /* E to the node's processes, then the combination. */
    convoy__lane_deps got = {0};
    convoy__lane_node_bcast(s, t, n - 1, &E, 1, TAG_BCAST, CONVOY_DEP(xs), &got);
    convoy__lane_deps_add(&got, node, s);
    convoy__lane_deps_add(&got, xs, s); /* Scan: the exscan read the node total in recv */
    if (ex && t->node_rank == 0)
        convoy__add_copy(s, E, recv, got.n, got.v);
    else
        convoy__add_reduce(s, E, recv, got.n, got.v);
    convoy__lane_deps_free(&got);
done:
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    free(map);
    return s->err;
}

double convoy__scan_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double bytes = (double)(a->count * a->rtype.size);
    return convoy__lane_cost_equal(&b, a->coll, t->max_ppn, 0, a->count) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_EXSCAN, t->nnodes, 1, a->count) +
           convoy__log2_floor(2 * t->max_ppn - 1) * (node.alpha + node.beta * bytes) +
           m->gamma * bytes;
}
