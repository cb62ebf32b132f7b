/*
 * Full-lane Alltoall (papers/004 §3.6, Listing 13): an alltoall on every lane, then an
 * alltoall on every node.
 *
 * Idea: on N nodes of n processes, process (l, j) (node l, node rank j) first exchanges
 * with the other members of lane j: to node l' it sends the n blocks for node l''s
 * processes, so afterwards it holds, from every node l', the n blocks that (l', j) has for
 * the processes of node l. Then, inside the node, it hands process (l, q) the blocks from
 * (l', j) for every l' in one message, as the paper's vector datatype does: N blocks n
 * apart in the intermediate buffer, received straight into their places in the receive
 * buffer (a strided region where nodes are consecutive, else an indexed one). Each block
 * crosses the network once and the node once; a process sends its lane alltoall's
 * messages and n - 1 node messages (a message per source node, as here until 26 Nov 2026,
 * made that N (n - 1): 252 of the 287 per process at 36 x 8).
 *
 * Bytes leaving each node (regular layout, block of c bytes): (N - 1) n^2 c, every
 * process of the node sending (N - 1) n c on its lane: a direct algorithm's volume, spread
 * over the n processes (checked: --assert-inter-spread 2).
 *
 * Cost: T_alltoall(N, n c; n concurrent) + the node exchange of n - 1 messages of N c bytes
 * sent and n - 1 received at once (convoy__exchange_cost: alpha_node + beta_node N c +
 * (n - 2) xgap(N c), each further pair the process's own work for a send and a receive;
 * where that gap is not measured, as posted sends: alpha_node + (n - 2) alpha_node / 2 +
 * (n - 1) beta_node N c). Simulated Hydra 4 x 8, 1 int: the one-way gap alone (0.5 us per
 * further message) predicted `lane` below `bruck` and ran 12.0 us against 10.3.
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
    /* (2) Node exchange, one message per pair of node processes (the paper's vector type):
     * to node rank q the blocks T[l' n + q] of every node l' (n blocks apart), into q's
     * blocks of the ranks (l', me); received evenly spaced (a strided region: nodes of
     * consecutive ranks) or as they lie (an indexed region). rc is free again: the lane
     * child is built. */
    for (int q = 0; q < n && !s->err; q++) {
        if (q == me) {
            for (int l = 0; l < N; l++)
                convoy__add_copy(s, TBLK(l * n + me),
                                 convoy__a2a_rblock(a, convoy__topo_rank_at(t, l, me)),
                                 CONVOY_DEP(lane));
            continue;
        }
        for (int l = 0; l < N; l++) {
            rc[l] = convoy__a2a_rblock(a, convoy__topo_rank_at(t, l, q)).off;
            rc[N + l] = c;
        }
        const convoy__region into =
            convoy__reg_blocklist(s, CONVOY_BUF_RECV, CONVOY_T_RECV, rext, N, rc, rc + N);
        const convoy__region t0 = TBLK(q);
        const convoy__region from =
            convoy__reg_strided(t0.buf, t0.tslot, t0.off, c, N, (int64_t)n * c * rext);
        convoy__add_recv(s, CONVOY_COMM_NODE, q, 0, into, CONVOY_DEP(lane));
        convoy__add_send(s, CONVOY_COMM_NODE, q, 0, from, CONVOY_DEP(lane));
    }
#undef TBLK
    convoy__topo_free(&lt);
    convoy__lane_deps_free(&packed);
    free(map);
    free(rc);
    return s->err;
}

/* The lane phase as its collective's cheapest; the node exchange at least
 * convoy__shared_cores_work where processes share cores, as the flat algorithms. */
double convoy__alltoall_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int n = t->max_ppn, N = t->nnodes;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double blk = (double)(a->rcounts[0] * a->rtype.size);
    const double x = convoy__exchange_cost(&node, n - 1, N * blk),
                 w = convoy__shared_cores_work(&node, 1, (n - 1) * N * blk);
    return convoy__lane_cost_equal(&b, CONVOY_COLL_ALLTOALL, N, n, n * a->rcounts[0]) +
           (x > w ? x : w);
}
