/*
 * Allreduce for small vectors through the node segment: the node's sum read straight from
 * the processes' slots, the node sums exchanged among the nodes in one round of n-way
 * dissemination whose n ports are the node's processes (GASPI-SHAN's shared segment and
 * notifications, papers/001_97ab1fb5063236b5.txt §3, "dissemination for small messages";
 * n-way dissemination, papers/003_0922d471b120eaa4.txt §III, in its one-round form n >= N-1;
 * the processes of a node as the ports are not in the papers).
 *
 * Idea (N nodes, node A, m_A processes, n = the smallest m): each process copies its input
 * into its slot of the segment and sets its flag F = 1. Every process waits for its node's
 * F >= 1 and computes the node's sum S_A itself, reading the peers' slots directly (no
 * message inside the node; m - 1 reductions each, in the same order everywhere, rather
 * than one process computing it and a second handshake to publish it). With N = 1 that is
 * the result. Otherwise process i < N-1 of the node (port i) sends S_A to port i of node
 * A + i + 1 and receives S_(A-i-1) from port i of node A - i - 1 into node-sum slot
 * A - i - 1 (mod N), then sets F = 2; every other process sets F = 2 at once. When all of
 * its node have F >= 2 the segment holds the other nodes' sums, and every process computes
 *
 *     result = S_0 op (S_1 op (... op S_(N-1)))     with S_B = x_b0 op (x_b1 op ...),
 *
 * in the same order on every rank (so all ranks get the same bits; with nodes of
 * consecutive ranks it is rank order, so non-commutative operations are valid there).
 *
 * Repeated calls: where two sets of slots fit half the segment, the schedule alternates
 * between the halves (shm_alt), so the next call's copy into a slot never meets a peer still
 * reading this one's, and no process waits at the segment's gate for the node's release;
 * on one node it runs in step order (convoy__exec_straight). Every process waits for all of
 * its node's F >= 1, which tells the next call's gate, without a load, that every peer
 * released the call before (shm.c's seen cache).
 *
 * Cost (s bytes): T = [N > 1] (alpha + beta s + f) + f + gamma s (m - 1 + N - 1) + 2 gamma s,
 * f = convoy__flag_cost (coll.h; node handshakes: inputs in place; with several nodes, node sums
 * received), the copies into the segment and out of it at about gamma per byte. Against
 * recursive doubling's log2 P (alpha + beta s + gamma s): one message latency at most.
 *
 * Restrictions: N - 1 <= n (one round suffices: up to n + 1 nodes); the segment must hold
 * m_max + N slots of the vector; count >= 1; non-commutative operations only when every
 * node's ranks are consecutive. Without a segment (or in a deferred request) the predicate
 * refuses.
 */
#include "coll/coll.h"

#include <stdlib.h>

static int min_ppn(const convoy__topo *t)
{
    int n = t->node_size[0];
    for (int i = 1; i < t->nnodes; i++)
        if (t->node_size[i] < n) n = t->node_size[i];
    return n;
}

/* Bytes of one slot: the span of count elements, a cache line apart. */
static int64_t slot_bytes(const convoy__args *a)
{
    const int64_t b = a->rtype.true_extent + (a->count - 1) * a->rtype.extent;
    return (b + 63) / 64 * 64;
}

int convoy__allreduce_node_dissem_applicable(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    if (t->max_ppn < 2 || a->shm_bytes <= 0 || a->count < 1) return 0;
    if (t->nnodes - 1 > min_ppn(t)) return 0;
    if (!a->commutative && !(t->flags & CONVOY_TOPO_CONSECUTIVE)) return 0;
    return (int64_t)(t->max_ppn + t->nnodes) * slot_bytes(a) <= a->shm_bytes;
}

int convoy__allreduce_node_dissem(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, A = t->node, me = t->node_rank, m = t->ppn;
    const int64_t cs = slot_bytes(a), lb = a->rtype.true_lb, n = a->count;
#define SLOT(idx) convoy__reg(CONVOY_BUF_SHM, CONVOY_T_RECV, (int64_t)(idx)*cs - lb, n)
#define NODE_SUM(b) SLOT(m + (b))
    int *deps = malloc(((size_t)m + 2) * sizeof *deps);
    if (!deps) return CONVOY_ERR_NO_MEM;
    s->nflags = 1;
    s->shm_bytes = (int64_t)(m + (N > 1 ? N : 0)) * cs;
    /* Alternating halves of the segment where two sets of slots fit (then a process may
     * start the next operation while its node peers still read this one's slots). */
    s->shm_alt = s->shm_bytes <= a->shm_bytes / 2 / 64 * 64;
    const convoy__region own = a->inplace ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n)
                                          : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n);
    const convoy__region result = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    /* The node's sum in scratch (one node: straight in the result). */
    s->tmp_bytes = N > 1 ? cs : 0;
    const convoy__region sum = N > 1 ? convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, n) : result;
    int in = convoy__add_copy(s, own, SLOT(me), 0, NULL);
    int prev = convoy__add_notify(s, 0, 1, 1, &in);
    /* S_A = x_0 op (x_1 op (... op x_(m-1))), read from the node's slots. */
    int nd = 0;
    deps[nd++] = prev;
    for (int q = 0; q < m; q++)
        if (q != me) deps[nd++] = convoy__add_wait(s, q, 0, 1, 0, NULL);
    int last = convoy__add_copy(s, SLOT(m - 1), sum, nd, deps);
    for (int q = m - 2; q >= 0; q--)
        last = convoy__add_reduce(s, SLOT(q), sum, 1, &last);
    if (N > 1) {
        if (me < N - 1) {
            const int to = (A + me + 1) % N, from = ((A - me - 1) % N + N) % N;
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, to, me), 0, sum, 1, &last);
            int rv = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, from, me), 0,
                                      NODE_SUM(from), 0, NULL);
            prev = convoy__add_notify(s, 0, 2, 2, (const int[]){prev, rv});
        } else {
            prev = convoy__add_notify(s, 0, 2, 1, &prev);
        }
        /* The other nodes' sums are in the segment once the whole node has F >= 2; the
         * result is S_0 op (S_1 op (...)), this node's own from scratch. */
        nd = 0;
        deps[nd++] = prev;
        deps[nd++] = last;
        for (int q = 0; q < m; q++)
            if (q != me) deps[nd++] = convoy__add_wait(s, q, 0, 2, 0, NULL);
        const convoy__region top = A == N - 1 ? sum : NODE_SUM(N - 1);
        last = convoy__add_copy(s, top, result, nd, deps);
        for (int b = N - 2; b >= 0; b--)
            last = convoy__add_reduce(s, b == A ? sum : NODE_SUM(b), result, 1, &last);
    }
    /* The slots are read by every node process until they pass their waits: the segment's
     * release at the end (the executor's) keeps the next operation from overwriting them. */
#undef SLOT
#undef NODE_SUM
    free(deps);
    return s->err;
}

double convoy__allreduce_node_dissem_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const double bytes = (double)a->count * (double)a->rtype.size;
    const double net = t->nnodes > 1 ? m->alpha + m->beta * bytes : 0;
    const double flags = (t->nnodes > 1 ? 2 : 1) * convoy__flag_cost(m);
    return net + flags + m->gamma * bytes * (t->max_ppn + t->nnodes);
}
