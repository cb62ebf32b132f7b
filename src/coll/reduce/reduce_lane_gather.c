/*
 * Full-lane Reduce without the reduce-scatter on the root's node (papers/004 §3.4's
 * suggested improvement, which the authors did not try: "replacing the MPI_Reduce_scatter
 * on the root node by a final MPI_Gather and local reductions on the root process").
 *
 * Idea: as reduce_lane.c on every node but the root's: a node reduce-scatter of the L lane
 * blocks, then a reduce of block j on virtual lane j to the lane's member on the root's
 * node. The root's node skips its reduce-scatter: each of its processes enters the lane
 * reduces of the lanes it serves with its own raw block, so the lane's result there lacks
 * only the other root-node processes' block j. Last, every other process of the root's
 * node sends the root its whole vector, the lane results in place of the blocks it serves,
 * and the root combines the pieces into its receive buffer (gather + local reductions).
 *
 * Bytes leaving each node: those of reduce_lane.c (the lanes are the same): m per node
 * with binomial lane reduces, spread over its n processes (--assert-inter-spread 2).
 *
 * Cost: max(T_rs(node, n, m) on the other nodes, 0) + T_reduce(N, m / n; n concurrent) +
 * (n - 1)(L alpha_node / n + (beta_node + gamma) m): one node phase less than
 * reduce_lane, for (n - 1) m instead of (n - 1) m / n into the root and (n - 1) m local
 * reductions there: the trade favours short vectors on small nodes; the cost model says
 * where.
 *
 * Zero copy: the lane reduces read the root node's send buffers (the root's receive buffer
 * in place) directly; the pieces are sent from the send buffer and the lane results and
 * received into scratch at the root (one vector per other process of its node), combined
 * into the receive buffer.
 *
 * Restrictions: commutative operations; more than one node, some node of more than one
 * process; any layout (virtual lanes).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__reduce_lane_gather(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int me = t->node_rank, L = convoy__lane_count(t);
    const int root = a->root, rn = t->node_of[root], rq = t->node_rank_of[root];
    const int is_root = t->rank == root, nroot = t->node_size[rn], at_rn = t->node == rn;
    const int64_t ext = a->rtype.extent, lb = a->rtype.true_lb, cnt = a->count;
    if (cnt == 0) return 0;
    convoy__topo nt, lt;
    int *init = malloc((size_t)L * sizeof *init);
    if (!init || convoy__lane_topos(t, &nt, &lt)) {
        free(init);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    const int64_t vec = (a->rtype.true_extent + (cnt - 1) * ext + 15) / 16 * 16;
    /* Scratch: W (the lane blocks) at 0 on every process but the root; at the root one
     * vector per other process of its node, for its pieces. */
    s->tmp_bytes = is_root ? (nroot - 1) * vec : vec;
#define W(off) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (off)*ext - lb, 0)
#define RECV(off) convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (off)*ext, 0)
#define SEND(off) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (off)*ext, 0)
    /* (1) Node reduce-scatter on every node but the root's (a placeholder there). */
    const int rs = at_rn ? convoy__lane_node_skip(s, t)
                         : convoy__lane_node_rs(s, a, &nt, SEND(0), W(0), 0, NULL);
    /* (2) Lane reduces to the root's node; its processes enter their raw blocks. */
    const int inplace = is_root && a->inplace;
    const convoy__region recv = is_root ? RECV(0) : W(0);
    convoy__lane_reduces(s, a, &lt, at_rn ? inplace ? recv : SEND(0) : W(0), at_rn ? recv : W(0),
                         inplace, rs, init);
    /* (3) Gather and local reductions at the root: block j of process q is the lane result
     * if q serves lane j, else q's raw block. */
    for (int j = 0; j < L && at_rn && !s->err; j++) {
        const int64_t oj = convoy__lane_block_off(cnt, L, j), cj = convoy__lane_block(cnt, L, j);
        if (cj == 0) continue;
        if (!is_root) {
            const int mine = j % nroot == me;
            convoy__region piece = mine ? W(oj) : a->inplace ? RECV(oj) : SEND(oj);
            piece.count = cj;
            convoy__add_send(s, CONVOY_COMM_NODE, rq, j, piece, CONVOY_DEP(init[j]));
            continue;
        }
        /* The root's own block j: the lane result, or its raw block. */
        convoy__region acc = RECV(oj);
        acc.count = cj;
        int last = init[j];
        if (j % nroot != rq && !a->inplace) {
            convoy__region own = SEND(oj);
            own.count = cj;
            last = convoy__add_copy(s, own, acc, 0, NULL);
        }
        for (int q = 0, k = 0; q < nroot; q++) {
            if (q == rq) continue;
            convoy__region slot =
                convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, k * vec + oj * ext - lb, cj);
            k++;
            int rcv = convoy__add_recv(s, CONVOY_COMM_NODE, q, j, slot, 0, NULL);
            int deps[2] = {rcv, last};
            last = convoy__add_reduce(s, slot, acc, last >= 0 ? 2 : 1, deps);
        }
    }
#undef W
#undef RECV
#undef SEND
    convoy__topo_free(&nt);
    convoy__topo_free(&lt);
    free(init);
    return s->err;
}

double convoy__reduce_lane_gather_cost(const convoy__args *a, const convoy__machine *m)
{
    const int n = a->topo->max_ppn;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double bytes = (double)(a->count * a->rtype.size);
    return convoy__lane_rs_then(a, m, CONVOY_COLL_REDUCE) +
           (n - 1) * (node.alpha + (node.beta + m->gamma) * bytes);
}
