/*
 * Full-lane Reduce (papers/004 §3.4: Listing 7 with the lane Allreduce replaced by a
 * Reduce and the final Allgatherv by a Gatherv): reduce-scatter on every node, a reduce
 * of 1/n of the vector on every lane to the root's node, a gather on the root's node.
 *
 * Idea: the vector is divided into L = (largest node's size) blocks (irregularly when L
 * does not divide the count: the first count mod L blocks have one element more; lane.h).
 * Block j belongs to virtual lane j, served on a node of n processes by node rank j mod n.
 * (1) A reduce-scatter on every node per group of n consecutive blocks leaves each process
 * with its node's partial result of the blocks it serves; (2) a reduce on virtual lane j
 * (one member per node) brings block j to the lane's member on the root's node; (3) the
 * root receives the blocks of the other processes of its node (plain node messages).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes of vector):
 * what n concurrent lane reduces of m / n bytes send: m with binomial lane reduces (each
 * of the n processes m / n), about 2 m with Rabenseifner's: the same as a flat reduce over
 * one process per node, spread over all n processes (checked: --assert-inter-spread 2).
 * The root's node receives (N - 1) m / n per process with binomial trees' fan-in counted
 * at the lane roots.
 *
 * Cost: T_rs(node, n, m) + T_reduce(N, m / n; n concurrent) + alpha_node + (n - 2)
 * alpha_node / 2 + (n - 1) beta_node m / n for the gather at the root: it posts its n - 1
 * receives at once, so their latencies overlap (convoy__posted_cost; simulated Hydra, 8
 * processes, 576-byte blocks: 5.1 us, where n - 1 whole messages predicted 10.0, and at 36
 * x 8, 1152 ints, that made `hier` look cheaper than `lane`: 34.7 against 36.1 us
 * predicted, 49.6 against 39.8 simulated).
 *
 * Zero copy: the node reduce-scatter reads the send buffer and writes each process's
 * blocks straight to their place: in the receive buffer at the root, in one vector of
 * scratch elsewhere (other ranks have no receive buffer); the lane reduces work in place
 * there and the gather lands in the root's receive buffer. An in-place root first copies
 * its input to scratch (the reduce-scatter would otherwise overwrite input it still reads).
 *
 * Restrictions: commutative operations (lanes combine nodes out of rank order). More than
 * one node, some node of more than one process. Any layout: virtual lanes (lane.h) serve
 * nodes of fewer processes, ranks may be placed freely.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__reduce_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

int convoy__lane_node_groups(const convoy__topo *t)
{
    int nmin = t->max_ppn;
    for (int l = 0; l < t->nnodes; l++)
        if (t->node_size[l] < nmin) nmin = t->node_size[l];
    return (convoy__lane_count(t) + nmin - 1) / nmin;
}

int convoy__lane_node_rs(convoy__schedule *s, const convoy__args *a, const convoy__topo *nt,
                         convoy__region in, convoy__region out, int ndeps, const int *deps)
{
    const convoy__topo *t = a->topo;
    const int n = t->ppn, me = t->node_rank, L = convoy__lane_count(t);
    const int64_t ext = a->rtype.extent, cnt = a->count;
    const int groups = (L + n - 1) / n, gmax = convoy__lane_node_groups(t);
    int64_t *rc = malloc(2 * (size_t)n * sizeof *rc), *dp = rc + n;
    convoy__lane_deps join = {0};
    if (!rc) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    /* Group g: blocks g n .. g n + n - 1 (those < L), one child each (nested children may
     * run on the parent's scratch, bundles may not); placeholders up to the most groups
     * of any node, so that later children align (lane.h). */
    for (int g = 0; g < gmax; g++) {
        if (g >= groups) {
            convoy__lane_deps_add(&join, convoy__lane_placeholder(s, ndeps, deps), s);
            continue;
        }
        const int j0 = g * n;
        int64_t tot = 0;
        for (int q = 0; q < n; q++) {
            rc[q] = j0 + q < L ? convoy__lane_block(cnt, L, j0 + q) : 0;
            dp[q] = tot;
            tot += rc[q];
        }
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_REDUCE_SCATTER, nt, 0, &sub);
        sub.count = tot;
        sub.rcounts = rc;
        sub.displs = dp;
        convoy__region send = in, recv = out;
        send.off += convoy__lane_block_off(cnt, L, j0) * ext;
        recv.off += convoy__lane_block_off(cnt, L, j0 + me < L ? j0 + me : L) * ext;
        convoy__lane_deps_add(&join,
                              convoy__lane_child_flags(s, &sub, NULL, send, recv,
                                                       CONVOY_LANE_LEAST_SCRATCH, ndeps, deps),
                              s);
    }
    free(rc);
    /* One step to wait for: an empty child joining the groups. */
    const int step = convoy__lane_placeholder(s, join.n, join.v);
    convoy__lane_deps_free(&join);
    return step;
}

int convoy__lane_node_skip(convoy__schedule *s, const convoy__topo *t)
{
    for (int g = convoy__lane_node_groups(t); g > 0; g--)
        convoy__lane_placeholder(s, 0, NULL);
    return convoy__lane_placeholder(s, 0, NULL);
}

void convoy__lane_reduces(convoy__schedule *s, const convoy__args *a, const convoy__topo *lt,
                          convoy__region send, convoy__region recv, int inplace, int dep,
                          int *lanes)
{
    const convoy__topo *t = a->topo;
    const int L = convoy__lane_count(t);
    int32_t *map = malloc((size_t)t->nnodes * sizeof *map);
    if (!map) {
        s->err = CONVOY_ERR_NO_MEM;
        return;
    }
    for (int j = 0; j < L; j++) {
        lanes[j] = -1;
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        const int64_t oj = convoy__lane_block_off(a->count, L, j) * a->rtype.extent;
        convoy__region sj = send, rj = recv;
        sj.off += oj;
        rj.off += oj;
        convoy__lane_map(t, j, map);
        convoy__args sub;
        convoy__lane_sub_args(a, CONVOY_COLL_REDUCE, lt, L, &sub);
        sub.count = convoy__lane_block(a->count, L, j);
        sub.root = t->node_of[a->root];
        sub.inplace = inplace;
        lanes[j] = convoy__lane_child(s, &sub, map, sj, rj, CONVOY_DEP(dep));
    }
    free(map);
}

int convoy__reduce_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int me = t->node_rank, L = convoy__lane_count(t);
    const int root = a->root, rn = t->node_of[root], rq = t->node_rank_of[root];
    const int is_root = t->rank == root, nroot = t->node_size[rn];
    const int64_t ext = a->rtype.extent, lb = a->rtype.true_lb, cnt = a->count;
    if (cnt == 0) return 0;
    convoy__topo nt, lt;
    int *lanes = malloc((size_t)L * sizeof *lanes);
    if (!lanes || convoy__lane_topos(t, &nt, &lt)) {
        free(lanes);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* W(j): where this process keeps block j (the receive buffer at the root, scratch
     * elsewhere); the input: the send buffer, or an in-place root's copy in scratch. */
    s->tmp_bytes = a->rtype.true_extent + (cnt - 1) * ext;
#define W(off)                                                                                     \
    (is_root ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (off)*ext, 0)                           \
             : convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (off)*ext - lb, 0))
    int staged = -1;
    convoy__region in = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    if (is_root && a->inplace) {
        in = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, 0);
        staged = convoy__add_copy(s, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt),
                                  convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, cnt), 0, NULL);
    }
    /* (1) Node reduce-scatter of the lane blocks into W. */
    const int rs = convoy__lane_node_rs(s, a, &nt, in, W(0), CONVOY_DEP(staged));
    /* (2) Reduce on every virtual lane j to its member on the root's node (in place there:
     * the lane root's partial block is its input). */
    convoy__lane_reduces(s, a, &lt, W(0), W(0), t->node == rn, rs, lanes);
    /* (3) Gather on the root's node: each block from the process that serves its lane. */
    for (int j = 0; j < L && t->node == rn && !s->err; j++) {
        const int q = j % nroot;
        if (q == rq) continue;
        const convoy__region blk =
            convoy__reg(is_root ? CONVOY_BUF_RECV : CONVOY_BUF_TMP, CONVOY_T_RECV,
                        convoy__lane_block_off(cnt, L, j) * ext - (is_root ? 0 : lb),
                        convoy__lane_block(cnt, L, j));
        if (blk.count == 0) continue;
        if (is_root)
            convoy__add_recv(s, CONVOY_COMM_NODE, q, j, blk, CONVOY_DEP(staged));
        else if (me == q)
            convoy__add_send(s, CONVOY_COMM_NODE, rq, j, blk, CONVOY_DEP(lanes[j]));
    }
#undef W
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    free(lanes);
    return s->err;
}

double convoy__reduce_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const int n = a->topo->max_ppn;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double block = (double)(convoy__lane_block(a->count, n, 0) * a->rtype.size);
    return convoy__lane_rs_then(a, m, CONVOY_COLL_REDUCE) +
           convoy__posted_cost(&node, n - 1, block);
}
