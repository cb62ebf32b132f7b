/*
 * Full-lane Allreduce (papers/004 §3.4, Listing 7): reduce-scatter on the node, allreduce
 * on every lane over 1/n of the data, allgather on the node.
 *
 * Idea: the vector is divided into L = (largest node's size) blocks (irregularly when L
 * does not divide count: the first count mod L blocks have one element more; lane.h).
 * Block j belongs to virtual lane j, served on a node of n processes by node rank j mod n.
 * (1) A reduce-scatter on the node per group of n consecutive blocks (one group on regular
 * layouts) leaves each process with its node's partial sums of the blocks it serves;
 * (2) an allreduce on virtual lane j (one member per node) completes block j; (3) an
 * allgatherv on the node per group distributes the blocks. Each phase is a registered
 * algorithm chosen by its cost model on its level (lane.h).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes of vector):
 * what n concurrent lane allreduces of m / n bytes send, e.g. 2 (N - 1) / N * m with
 * Rabenseifner's or the ring (each of the n processes 2 (N - 1) / N * m / n): the same as
 * a flat optimal allreduce of one process per node, spread over all n processes
 * (checked: --assert-inter-spread 2, --expect-node-bytes).
 *
 * Cost: T_rs(node, n, m) + T_allreduce(N, m / n; n concurrent) + T_ag(node, n, m / n).
 *
 * Zero copy: not in place, the reduce-scatter reads the send buffer and writes each block
 * straight into its place in the receive buffer, where the lane allreduce and the node
 * allgatherv work in place; in place, the node reduce-scatter works in place on the
 * receive buffer (the group's partial block lands at its start, the lane allreduce then
 * reads it from there). No scratch beyond what the children's algorithms use.
 *
 * Restrictions: commutative operations (lanes combine nodes out of rank order). More than
 * one node and some node of more than one process.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__allreduce_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

int convoy__allreduce_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, me = t->node_rank, L = convoy__lane_count(t);
    const int64_t ext = a->rtype.extent, cnt = a->count;
    const int groups = (L + n - 1) / n;
    convoy__topo nt, lt;
    int64_t *v = malloc(2 * (size_t)n * sizeof *v);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__lane_deps ar = {0};
    if (!v || !map || convoy__lane_topos(t, &nt, &lt)) {
        free(v), free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* Each node phase is one bundle (one tag block) of one child per group. */
    convoy__lane_bundle b = {.budget = CONVOY_STEP_TAGS / (groups > 0 ? groups : 1)};
    int64_t *rc = v, *dp = v + n;
    /* (1) Node reduce-scatter per group g: blocks g n .. g n + n - 1 (those < L). */
    for (int g = 0; g < groups; g++) {
        const int j0 = g * n;
        const int64_t off0 = convoy__lane_block_off(cnt, L, j0);
        int64_t tot = 0;
        for (int q = 0; q < n; q++) {
            rc[q] = j0 + q < L ? convoy__lane_block(cnt, L, j0 + q) : 0;
            dp[q] = tot;
            tot += rc[q];
        }
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_REDUCE_SCATTER, &nt, 0, &sub);
        sub.count = tot;
        sub.rcounts = rc;
        sub.displs = dp;
        const int64_t mine = convoy__lane_block_off(cnt, L, j0 + me < L ? j0 + me : L);
        convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, mine * ext, 0);
        convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, off0 * ext, 0);
        if (a->inplace) {
            /* In place: the group's part of the receive buffer is the vector; my partial
             * block ends at its start. */
            sub.inplace = 1;
            send = recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, off0 * ext, 0);
        }
        convoy__lane_bundle_child(&b, &sub, CONVOY_LANE_LEAST_SCRATCH, send, recv);
    }
    const int rs = convoy__lane_bundle_add(s, &b, NULL, n, 0, NULL);
    /* (2) Allreduce on every virtual lane j: one child per lane on every process. */
    for (int j = 0; j < L; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        const int g = j / n;
        const int64_t cj = convoy__lane_block(cnt, L, j), oj = convoy__lane_block_off(cnt, L, j);
        const int64_t from = a->inplace ? convoy__lane_block_off(cnt, L, g * n) : oj;
        convoy__lane_map(t, j, map);
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_ALLREDUCE, &lt, L, &sub);
        sub.count = cj;
        sub.inplace = from == oj;
        convoy__lane_deps_add(
            &ar,
            convoy__lane_child(
                s, &sub, map, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, from * ext, 0),
                convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, oj * ext, 0), CONVOY_DEP(rs)),
            s);
    }
    /* (3) Node allgatherv per group, in place on the receive buffer. */
    for (int g = 0; g < groups && !s->err; g++) {
        const int j0 = g * n;
        int64_t tot = 0;
        for (int q = 0; q < n; q++) {
            rc[q] = j0 + q < L ? convoy__lane_block(cnt, L, j0 + q) : 0;
            dp[q] = convoy__lane_block_off(cnt, L, j0 + q < L ? j0 + q : L);
            tot += rc[q];
        }
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_ALLGATHERV, &nt, 0, &sub);
        sub.count = rc[me];
        sub.rcounts = rc;
        sub.displs = dp;
        sub.inplace = 1;
        convoy__region r = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0);
        convoy__lane_bundle_child(&b, &sub, CONVOY_LANE_LEAST_SCRATCH, r, r);
    }
    convoy__lane_deps_add(&ar, rs, s);
    convoy__lane_bundle_add(s, &b, NULL, n, ar.n, ar.v);
    /* Every process: node bundle, L lane children (placeholders where it does not serve),
     * node bundle. */
    s->tag_blocks = 3 + L;
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    convoy__lane_deps_free(&ar);
    free(v), free(map);
    return s->err;
}

double convoy__allreduce_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const int n = a->topo->max_ppn;
    convoy__args b = *a;
    b.machine = *m;
    return convoy__lane_rs_then(a, m, CONVOY_COLL_ALLREDUCE) +
           convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, n, 0,
                                   convoy__lane_block(a->count, n, 0),
                                   CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE);
}
