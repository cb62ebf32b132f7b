/*
 * Full-lane Alltoall (papers/004 §3.6, Listing 13): an alltoall on every lane, then an
 * alltoall on every node.
 *
 * Idea: on N nodes of n processes, process (l, j) (node l, node rank j) first exchanges
 * with the other members of lane j: to node l' it sends the n blocks for node l''s
 * processes, so afterwards it holds, from every node l', the n blocks that (l', j) has for
 * the processes of node l. Then, inside the node, it hands process (l, q) the block from
 * (l', j) for every l' (N messages per pair of node processes, plain node messages): each
 * block crosses the network once and the node once, as in the paper (which uses a vector
 * datatype for the strided node exchange; here each source node's block is its own
 * message, straight into its place in the receive buffer).
 *
 * Bytes leaving each node (regular layout, block of c bytes): (N - 1) n^2 c, every
 * process of the node sending (N - 1) n c on its lane: a direct algorithm's volume, spread
 * over the n processes (checked: --assert-inter-spread 2).
 *
 * Cost: T_alltoall(N, n c; n concurrent) + (n - 1) N (alpha_node / 2 + beta_node c)
 * (the node messages are posted at once).
 *
 * Zero copy on uniform layouts (nodes of consecutive ranks): the lane alltoall reads the
 * send buffer directly (node l''s blocks are contiguous there) and receives into one
 * intermediate buffer of p blocks (the paper's too); the node phase receives straight
 * into the receive buffer. Non-consecutive layouts first pack the send blocks into node
 * order (p local copies); in place, the receive buffer's blocks are first copied to
 * scratch.
 *
 * Restrictions: regular layouts (every node of the same size: each lane then has one
 * member per node and equal blocks), more than one node and more than one process per
 * node; consecutive or not. No hierarchical Alltoall (papers/004 §3.6: a leader would
 * gather n^2 times the data).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__alltoall_lane_applicable(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    return t->nnodes > 1 && t->max_ppn > 1 && (t->flags & CONVOY_TOPO_REGULAR);
}

int convoy__alltoall_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, me = t->node_rank, p = t->size;
    const int64_t c = a->rcounts[0], sc = a->count;
    const int64_t rext = a->rtype.extent, sext = a->stype.extent;
    if (c == 0) return 0;
    convoy__topo lt;
    int32_t *map = malloc((size_t)N * sizeof *map);
    if (!map || convoy__lane_group_topo(&lt, N, t->node)) {
        free(map);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    /* Scratch: T (p blocks of the receive type: from node l', the blocks for my node's
     * processes), then the packed send blocks S (p blocks of the send type) if needed. */
    const int pack = a->inplace || !(t->flags & CONVOY_TOPO_CONSECUTIVE);
    const int64_t tbytes = (a->rtype.true_extent + (p * c - 1) * rext + 63) / 64 * 64;
    const int64_t sbytes = a->stype.true_extent + (p * sc - 1) * sext;
    s->tmp_bytes = tbytes + (pack ? sbytes : 0);
#define TBLK(i) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (i)*c *rext - a->rtype.true_lb, c)
    convoy__lane_deps packed = {0};
    convoy__region sbase = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 0);
    if (pack) {
        /* S[l' n + q'] = the block for node l''s process q' (from the receive buffer in
         * place, whose T_SEND slot is the receive type then). */
        sbase = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_SEND, tbytes - a->stype.true_lb, 0);
        for (int l = 0; l < N; l++)
            for (int q = 0; q < n; q++) {
                const int d = convoy__topo_rank_at(t, l, q);
                const convoy__region src =
                    a->inplace ? convoy__a2a_rblock(a, d)
                               : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, d * sc * sext, sc);
                convoy__region dst = sbase;
                dst.off += (l * n + q) * sc * sext;
                dst.count = sc;
                convoy__lane_deps_add(&packed, convoy__add_copy(s, src, dst, 0, NULL), s);
            }
    }
    /* (1) Alltoall on my lane: n blocks per node. */
    convoy__lane_map(t, me, map);
    convoy__args sub;
    convoy__lane_sub_args(a, CONVOY_COLL_ALLTOALL, &lt, n, &sub);
    int64_t *rc = malloc(2 * (size_t)N * sizeof *rc);
    if (!rc) {
        convoy__topo_free(&lt);
        free(map);
        convoy__lane_deps_free(&packed);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    for (int l = 0; l < N; l++) {
        rc[l] = n * c;
        rc[N + l] = l * n * c;
    }
    sub.count = n * sc;
    sub.rcounts = rc;
    sub.displs = rc + N;
    const int lane = convoy__lane_child(s, &sub, map, sbase, TBLK(0), packed.n, packed.v);
    /* (2) Node exchange: T[l' n + q] goes to node rank q, into its block of rank (l', me). */
    for (int l = 0; l < N && !s->err; l++)
        for (int q = 0; q < n; q++) {
            const convoy__region into = convoy__a2a_rblock(a, convoy__topo_rank_at(t, l, q));
            if (q == me)
                convoy__add_copy(s, TBLK(l * n + me),
                                 convoy__a2a_rblock(a, convoy__topo_rank_at(t, l, me)),
                                 CONVOY_DEP(lane));
            else {
                convoy__add_recv(s, CONVOY_COMM_NODE, q, l, into, CONVOY_DEP(lane));
                convoy__add_send(s, CONVOY_COMM_NODE, q, l, TBLK(l * n + q), CONVOY_DEP(lane));
            }
        }
#undef TBLK
    convoy__topo_free(&lt);
    convoy__lane_deps_free(&packed);
    free(map);
    free(rc);
    return s->err;
}

double convoy__alltoall_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int n = t->max_ppn, N = t->nnodes;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double blk = (double)(a->rcounts[0] * a->rtype.size);
    return convoy__lane_cost_equal(&b, CONVOY_COLL_ALLTOALL, N, n, n * a->rcounts[0]) +
           (n - 1) * N * (node.alpha / 2 + node.beta * blk);
}
