/*
 * Full-lane Scan and Exscan (papers/004 §3.5, Listing 11): the node totals reduce-scattered
 * over the node's processes, an exclusive scan of 1/n of the vector on every lane, an
 * allgather of the lanes' prefixes on every node, a node scan, one combination.
 *
 * Idea: the vector is divided into L = (largest node's size) blocks (lane.h; irregular when
 * L does not divide the count), block j belonging to virtual lane j. (1) A reduce-scatter
 * on every node (per group of n consecutive blocks) leaves each process with its node's
 * total of the blocks it serves; (2) an exclusive scan on virtual lane j (one member per
 * node, in node order) turns block j of node l's total into block j of E_l, the
 * combination of all earlier nodes; (3) an allgatherv on every node gives each process all
 * of E_l; (4) a node scan (Exscan: node exclusive scan) of the contributions, independent
 * of (1)-(3); (5) every process of a node l > 0 combines E_l op its node prefix (Exscan's
 * node rank 0 takes E_l alone). Node 0 needs no E (its lane exscan members are the lanes'
 * rank 0).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes of vector):
 * what n concurrent lane exscans of m / n bytes send: m per step with recursive doubling
 * (each of the n processes m / n), m in all with the linear pipeline: a flat exscan over
 * one process per node, spread over the n processes (checked: --assert-inter-spread 2).
 *
 * Cost: T_rs(node, n, m) + T_exscan(N, m / n; n concurrent) + T_ag(node, n, m / n), in
 * parallel with T_scan(node, n, m), + gamma m.
 *
 * Zero copy: the reduce-scatter reads the send buffer (the receive buffer in place, before
 * the node scan overwrites it) and writes each block to its place in one vector of
 * scratch, where the lane exscans and the node allgatherv work in place; the node scan
 * goes from the send buffer to the receive buffer.
 *
 * Restrictions: consecutive layouts (the prefix decomposes by nodes only when each node's
 * ranks form one block in node order), any node sizes. Rank order is kept
 * (CONVOY_ALGO_NONCOMMUTATIVE): the node reduce-scatter and scan combine the node's rank
 * interval in order (order-keeping children are chosen for such operations), the lane
 * exscans nodes in node order, and E_l covers the ranks below node l's.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__scan_lane_applicable(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    return t->nnodes > 1 && t->max_ppn > 1 && (t->flags & CONVOY_TOPO_CONSECUTIVE);
}

int convoy__scan_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, me = t->node_rank, L = convoy__lane_count(t);
    const int ex = a->coll == CONVOY_COLL_EXSCAN;
    const int64_t ext = a->rtype.extent, lb = a->rtype.true_lb, cnt = a->count;
    const int groups = (L + n - 1) / n;
    if (cnt == 0) return 0;
    convoy__topo nt, lt;
    int64_t *v = malloc(2 * (size_t)n * sizeof *v);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__lane_deps xs = {0};
    if (!v || !map || convoy__lane_topos(t, &nt, &lt)) {
        free(v), free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    s->tmp_bytes = a->rtype.true_extent + (cnt - 1) * ext;
#define E(off) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (off)*ext - lb, 0)
    const convoy__region in = a->inplace ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0)
                                         : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    /* (1) Node reduce-scatter of the lane blocks into E. */
    const int rs = convoy__lane_node_rs(s, a, &nt, in, E(0), 0, NULL);
    /* (2) Exclusive scan on every virtual lane j, in place on block j of E. */
    for (int j = 0; j < L; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        const int64_t oj = convoy__lane_block_off(cnt, L, j);
        convoy__lane_map(t, j, map);
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_EXSCAN, &lt, L, &sub);
        sub.count = convoy__lane_block(cnt, L, j);
        sub.inplace = 1;
        convoy__lane_deps_add(&xs, convoy__lane_child(s, &sub, map, E(oj), E(oj), CONVOY_DEP(rs)),
                              s);
    }
    convoy__lane_deps_add(&xs, rs, s);
    /* (3) Node allgatherv per group, in place on E (padded like the reduce-scatter). */
    int64_t *rc = v, *dp = v + n;
    convoy__lane_deps agd = {0};
    for (int g = 0; g < convoy__lane_node_groups(t) && !s->err; g++) {
        if (g >= groups) {
            convoy__lane_deps_add(&agd, convoy__lane_placeholder(s, xs.n, xs.v), s);
            continue;
        }
        const int j0 = g * n;
        for (int q = 0; q < n; q++) {
            rc[q] = j0 + q < L ? convoy__lane_block(cnt, L, j0 + q) : 0;
            dp[q] = convoy__lane_block_off(cnt, L, j0 + q < L ? j0 + q : L);
        }
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_ALLGATHERV, &nt, 0, &sub);
        sub.count = rc[me];
        sub.rcounts = rc;
        sub.displs = dp;
        sub.inplace = 1;
        convoy__lane_deps_add(&agd,
                              convoy__lane_child_flags(s, &sub, NULL, E(0), E(0),
                                                       CONVOY_LANE_LEAST_SCRATCH, xs.n, xs.v),
                              s);
    }
    const int ag = convoy__lane_placeholder(s, agd.n, agd.v);
    convoy__lane_deps_free(&agd);
    /* (4) Node scan (exscan) into the receive buffer; in place it waits until the
     * reduce-scatter has read the input. A node of one process has no node exscan. */
    convoy__args sub;
    convoy__lane_sub_args(a, a->coll, &nt, 0, &sub);
    sub.inplace = a->inplace;
    const int node = ex && n == 1
                         ? convoy__lane_placeholder(s, 0, NULL)
                         : convoy__lane_child(
                               s, &sub, NULL, in, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0),
                               a->inplace ? 1 : 0, a->inplace ? (const int[]){rs} : NULL);
    /* (5) E op the node prefix (node 0: the node prefix is the result). */
    if (t->node > 0) {
        const convoy__region Ev = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, cnt);
        const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt);
        int deps[2] = {ag, node};
        if (ex && me == 0)
            convoy__add_copy(s, Ev, recv, 2, deps);
        else
            convoy__add_reduce(s, Ev, recv, 2, deps);
    }
#undef E
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    convoy__lane_deps_free(&xs);
    free(v), free(map);
    return s->err;
}

double convoy__scan_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const int n = a->topo->max_ppn;
    convoy__args b = *a;
    b.machine = *m;
    const double lanes = convoy__lane_rs_then(a, m, CONVOY_COLL_EXSCAN) +
                         convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, n, 0,
                                                 convoy__lane_block(a->count, n, 0),
                                                 CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE);
    const double node = convoy__lane_cost_equal(&b, a->coll, n, 0, a->count);
    return (lanes > node ? lanes : node) + m->gamma * (double)(a->count * a->rtype.size);
}
