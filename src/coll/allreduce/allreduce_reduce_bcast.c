/*
 * Allreduce as a binomial-tree reduce to rank 0 followed by a binomial-tree broadcast
 * from rank 0 (the textbook composition; Thakur, Rabenseifner, Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 2005, §4; a baseline of
 * papers/001 and papers/003).
 *
 * Idea: reduce: at distance d = 1, 2, 4, ..., a rank whose bit d is set sends its partial
 * result to rank - d and is done; the others receive from rank + d (if it exists) and
 * combine. Rank r then holds ranks [r, r + 2d) (clipped to p). Broadcast: the same tree
 * backwards: a rank receives the result from rank - (its lowest set bit), then sends it to
 * rank + d for d = (its lowest set bit)/2, ..., 1 (rank 0: every power of two below p),
 * the largest subtree first.
 *
 * Cost: L = ceil(log2 p); L (alpha + beta n + gamma n) + L (alpha + beta n) with n in
 * bytes; 2 L rounds. Neither latency- nor bandwidth-optimal: the baseline papers compare
 * against.
 *
 * Restrictions: none; any count and any p.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): every combination is "own interval op
 * the interval just above", the lower interval first. All ranks get rank 0's bits
 * (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Details: reduce(src, dst) computes dst = src op dst, so the own partial result is the
 * src operand and the result lands in the buffer that received the child's data; the
 * partial result therefore alternates between the receive buffer and one vector of scratch
 * (no copies; without MPI_IN_PLACE the first operand is read straight from the send
 * buffer, and the first receive buffer is chosen so that rank 0 ends in the receive
 * buffer). Only rank 0 with MPI_IN_PLACE and an odd number of children copies once.
 */
#include "coll/coll.h"

/* Tags: reduce at distance 2^j uses TAG_RED + j, broadcast TAG_BC + j. */
enum { TAG_RED = 0, TAG_BC = 32 };

int convoy__allreduce_reduce_bcast(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t n = a->count;
    if (n == 0) return 0;
    const convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n);
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    const convoy__region tmp = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -a->rtype.true_lb, n);

    /* Children in the reduce: distances d < lowbit(r) (any d for rank 0) with r + d < p. */
    int nchild = 0, lowbit = 1;
    while (lowbit < p && !(r & lowbit)) {
        if (r + lowbit < p) nchild++;
        lowbit <<= 1;
    }
    /* lowbit: r's lowest set bit (r > 0), or the first power of two >= p (r = 0). */

    /* acc: the buffer holding the partial result; other: where the next child's data goes.
     * Without MPI_IN_PLACE the k-th receive goes to recv for k = nchild-1, nchild-3, ...,
     * so the last combination lands in recv. */
    convoy__region acc = a->inplace ? recv : send;
    convoy__region other = a->inplace ? tmp : (nchild % 2 ? recv : tmp);
    int last = -1;     /* the step that made acc current */
    int acc_read = -1; /* the last step that read acc (other is that step's target) */
    if (nchild >= (a->inplace ? 1 : 2)) /* scratch is used from the first or second child */
        s->tmp_bytes = a->rtype.true_extent + (n - 1) * a->rtype.extent;
    for (int d = 1, j = 0; d < lowbit; d <<= 1, j++) {
        if (r + d >= p) continue;
        /* other was last read by the previous combination (as its src, when it was acc). */
        int rcv =
            convoy__add_recv(s, CONVOY_COMM_ALL, r + d, TAG_RED + j, other, CONVOY_DEP(acc_read));
        int deps[2] = {rcv, last};
        int red = convoy__add_reduce(s, acc, other, last >= 0 ? 2 : 1, deps); /* own op child's */
        convoy__region t = acc;
        acc = other;
        other = t.buf == CONVOY_BUF_SEND ? (acc.buf == CONVOY_BUF_RECV ? tmp : recv) : t;
        last = acc_read = red;
    }

    /* Broadcast. `have`: the step after which recv holds the result. */
    int have = -1;
    if (r == 0) {
        have = last;
        if (acc.buf != CONVOY_BUF_RECV) have = convoy__add_copy(s, acc, recv, CONVOY_DEP(last));
    } else {
        int j = convoy__log2_floor(lowbit);
        /* Send the partial result up; recv is refilled only after that send read it (and
         * after every combination, which the send depends on). */
        int up =
            convoy__add_send(s, CONVOY_COMM_ALL, r - lowbit, TAG_RED + j, acc, CONVOY_DEP(last));
        have = convoy__add_recv(s, CONVOY_COMM_ALL, r - lowbit, TAG_BC + j, recv, 1, &up);
    }
    for (int d = lowbit >> 1, j = convoy__log2_floor(lowbit) - 1; d >= 1; d >>= 1, j--)
        if (r + d < p)
            convoy__add_send(s, CONVOY_COMM_ALL, r + d, TAG_BC + j, recv, CONVOY_DEP(have));
    return s->err;
}

double convoy__allreduce_reduce_bcast_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    int levels = 0;
    while ((1 << levels) < p)
        levels++;
    const double bytes = (double)(a->count * a->rtype.size);
    return levels * (2 * m->alpha + (2 * m->beta + m->gamma) * bytes);
}
