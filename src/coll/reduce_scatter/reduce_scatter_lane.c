/*
 * Full-lane Reduce_scatter(_block) (papers/004 §3.4, Listing 8): a reduce-scatter on the
 * node, then one on every lane over 1/n of the data, with the paper's reordering.
 *
 * Idea: rank r's block must end on r, but a node's reduce-scatter hands out consecutive
 * pieces to node ranks while lane j holds the ranks (l, j) of every node l, which are not
 * consecutive in the vector. So each process first copies its vector into scratch in lane
 * order (the paper permutes the blocks the same way, after the reordering trick of its
 * reference [22]): for each process q of my node, for each virtual lane j it serves
 * (j = q, q + n, ...; lane.h), the blocks of ranks (0, j), (1, j), ... (N - 1, j) (empty
 * where node l has no rank j). (1) A reduce-scatter on the node (in place on the scratch)
 * leaves process q with its node's sums of its lanes' blocks; (2) a reduce-scatter on each
 * lane j it serves gives rank (l, j) its block, straight into its receive buffer.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per block, so
 * P m bytes of vector): what n concurrent lane reduce-scatters of N blocks send, e.g.
 * (N - 1) n m with the ring (each process (N - 1) m), spread over all processes
 * (checked: --assert-inter-spread 2, --expect-node-bytes).
 *
 * Cost: T_copy(P m) + T_rs(node, n, P m) + T_rs(N, N m; n concurrent).
 *
 * Scratch: the reordered vector (P m bytes, as the paper's permutation buffer); the lane
 * phase writes the result in place.
 *
 * Restrictions: commutative operations (lanes combine nodes out of rank order). Any
 * counts (Reduce_scatter too). More than one node and some node of more than one process.
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__reduce_scatter_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

/* Bytes of a vector of n elements of the operation's type (0 for none). */
static int64_t span(const convoy__args *a, int64_t n)
{
    return n > 0 ? a->rtype.true_extent + (n - 1) * a->rtype.extent : 0;
}

int convoy__reduce_scatter_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, me = t->node_rank, L = convoy__lane_count(t);
    const int64_t ext = a->rtype.extent, lb = a->rtype.true_lb;
    int64_t *v = malloc(2 * (size_t)(n + N) * sizeof *v);
    int64_t *pos = malloc((size_t)t->size * sizeof *pos); /* reordered offset per rank */
    int64_t *sec = malloc((size_t)(L + 1) * sizeof *sec); /* (my node) lane j's offset */
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__lane_deps copies = {0};
    convoy__topo nt, lt;
    int have_nt = 0, have_lt = 0;
    if (!v || !pos || !sec || !map || convoy__lane_node_topo(&nt, t) || !(have_nt = 1) ||
        convoy__lane_group_topo(&lt, N, t->node) || !(have_lt = 1)) {
        s->err = CONVOY_ERR_NO_MEM;
        goto out;
    }
    int64_t *rc = v, *dp = v + n, *lc = v + 2 * n, *ld = v + 2 * n + N;
    /* The lane order: process q's section holds its lanes j in increasing order. */
    int64_t at = 0;
    for (int q = 0; q < n; q++) {
        dp[q] = at;
        for (int j = q; j < L; j += n) {
            sec[j] = at;
            for (int l = 0; l < N; l++)
                if (j < t->node_size[l]) {
                    const int r = convoy__topo_rank_at(t, l, j);
                    pos[r] = at;
                    at += a->rcounts[r];
                }
        }
        rc[q] = at - dp[q];
    }
    s->tmp_bytes = span(a, a->count);
    const convoy__region in0 = a->inplace ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0)
                                          : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    for (int r = 0; r < t->size; r++) {
        if (a->rcounts[r] == 0) continue;
        convoy__region src = in0, dst = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV,
                                                    pos[r] * ext - lb, a->rcounts[r]);
        src.off = a->displs[r] * ext;
        src.count = a->rcounts[r];
        convoy__lane_deps_add(&copies, convoy__add_copy(s, src, dst, 0, NULL), s);
    }
    /* (1) Node reduce-scatter of the sections, in place on the scratch. */
    convoy__args sub;
    convoy__lane_sub_args(a, CONVOY_COLL_REDUCE_SCATTER, &nt, 0, &sub);
    sub.count = a->count;
    sub.rcounts = rc;
    sub.displs = dp;
    sub.inplace = 1;
    const convoy__region tmp0 = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, 0);
    const int node = convoy__lane_child_flags(s, &sub, NULL, tmp0, tmp0, CONVOY_LANE_LEAST_SCRATCH,
                                              copies.n, copies.v);
    /* (2) A reduce-scatter on every lane this process serves (my section now starts the
     * scratch); the real rank (l, j) gets its block in its receive buffer. */
    for (int j = 0; j < L && !s->err; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        int64_t tot = 0;
        for (int l = 0; l < N; l++) {
            const int r = convoy__topo_rank_at(t, l, j); /* -1: node l has no rank j */
            lc[l] = r >= 0 ? a->rcounts[r] : 0;
            ld[l] = tot;
            tot += lc[l];
        }
        convoy__lane_map(t, j, map);
        convoy__lane_sub_args(a, CONVOY_COLL_REDUCE_SCATTER, &lt, L, &sub);
        sub.count = tot;
        sub.rcounts = lc;
        sub.displs = ld;
        convoy__region from = tmp0;
        from.off += (sec[j] - sec[me]) * ext;
        convoy__lane_child(s, &sub, map, from, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0),
                           CONVOY_DEP(node));
    }
    /* Processes serve different numbers of lanes: a common tag block bound. */
    s->tag_blocks = 2 + L;
out:
    if (have_nt) convoy__topo_free(&nt);
    if (have_lt) convoy__topo_free(&lt);
    convoy__lane_deps_free(&copies);
    free(v), free(pos), free(sec), free(map);
    return s->err;
}

double convoy__reduce_scatter_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int n = t->max_ppn;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    return node.beta * (double)a->count * a->rtype.size +
           convoy__lane_cost_flags(&b, CONVOY_COLL_REDUCE_SCATTER, n, 0, a->count,
                                   CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_REDUCE_SCATTER, t->nnodes, n,
                                   convoy__lane_block(a->count, n, 0));
}
