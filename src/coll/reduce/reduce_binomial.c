/*
 * Reduce by a binomial tree (MPICH's and Open MPI's default for short vectors; Thakur,
 * Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH",
 * IJHPCA 2005, §4.2; the flat baseline of papers/004 §3.4's Reduce).
 *
 * Idea: number the ranks v = 0..p-1 from the tree's top. At distance d = 1, 2, 4, ..., a
 * number whose bit d is set sends its partial result to v - d and is done; the others
 * receive from v + d (if it exists) and combine, so v then holds [v, v + 2d). For a
 * commutative operation the numbering is the rank's distance above the root (v = rank -
 * root mod p) and the top is the root. For a non-commutative one the numbers are the
 * ranks (every combination joins two adjacent rank intervals, the lower one first) and
 * rank 0 sends the result to the root when that is another rank (as MPICH does).
 *
 * Cost: L = ceil(log2 p); L (alpha + (beta + gamma) n) with n in bytes, plus alpha + beta n
 * for a non-commutative operation with root != 0; L rounds (+ 1). Latency-optimal, not
 * bandwidth-optimal: short vectors.
 *
 * Restrictions: none; any count, any p, any root.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE, see above); one process combines every
 * element in one fixed order (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Bytes leaving a node: every non-top rank sends its partial result (n) once: (p - 1) n
 * over all ranks, at most ppn n from one node (a node's ranks all in one subtree send only
 * the subtree's edges that cross it).
 *
 * Details: reduce(src, dst) computes dst = src op dst, so a child's data is received into
 * the buffer that becomes the partial result and the own partial result is the src
 * operand; the partial result alternates between two buffers: at the root the receive
 * buffer and one vector of scratch (chosen so that the last combination lands in the
 * receive buffer; only an in-place root with an odd number of children copies once), at
 * other ranks two vectors of scratch (they have no receive buffer). A leaf sends straight
 * from its send buffer.
 */
#include "coll/coll.h"

/* Tags: distance 2^j uses TAG_RED + j; the result to a root other than rank 0 TAG_ROOT. */
enum { TAG_RED = 0, TAG_ROOT = 40 };

int convoy__reduce_binomial(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, root = a->root;
    const int64_t n = a->count;
    if (n == 0) return 0;
    const int rotate = a->commutative; /* else the tree's top is rank 0 */
    const int top = rotate ? root : 0, v = (r - top + p) % p;
    /* One vector of the operation's type, rounded up so that the second one stays aligned. */
    const int64_t vec = (a->rtype.true_extent + (n - 1) * a->rtype.extent + 15) / 16 * 16;
    const convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n);
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    const convoy__region tmp0 = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -a->rtype.true_lb, n);
    const convoy__region tmp1 =
        convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, vec - a->rtype.true_lb, n);
    const convoy__region own = a->inplace ? recv : send;

    int nchild = 0, lowbit = 1;
    while (lowbit < p && !(v & lowbit)) {
        if (v + lowbit < p) nchild++;
        lowbit <<= 1;
    }
    /* The buffers the partial result alternates between; `fin` is where the last child's
     * combination lands: the receive buffer at the root when it is the top. */
    const int at_root_top = r == root && v == 0;
    const convoy__region fin = at_root_top ? recv : tmp0, alt = at_root_top ? tmp0 : tmp1;
    /* Child k's target: fin for k = nchild-1, nchild-3, ...; an in-place root whose first
     * target would be its own input starts with alt instead (and copies at the end). */
    int shift = a->inplace && at_root_top && nchild % 2 == 1;
    if (nchild > 0) s->tmp_bytes = at_root_top ? vec : 2 * vec;
    convoy__region acc = own;
    int last = -1;
    for (int d = 1, j = 0, k = 0; d < lowbit; d <<= 1, j++) {
        if (v + d >= p) continue;
        convoy__region other = (nchild - 1 - k + shift) % 2 == 0 ? fin : alt;
        int peer = (v + d + top) % p;
        /* `other` was the source of the previous combination. */
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_RED + j, other, CONVOY_DEP(last));
        int red = convoy__add_reduce(s, acc, other, 1, &rcv);
        acc = other;
        last = red;
        k++;
    }
    if (v > 0) {
        int j = convoy__log2_floor(lowbit);
        int up = convoy__add_send(s, CONVOY_COMM_ALL, (v - lowbit + top) % p, TAG_RED + j, acc,
                                  CONVOY_DEP(last));
        /* A non-commutative root below the top gets the result from rank 0. */
        if (r == root) convoy__add_recv(s, CONVOY_COMM_ALL, top, TAG_ROOT, recv, 1, &up);
        return s->err;
    }
    if (r == root) {
        if (acc.buf != CONVOY_BUF_RECV) convoy__add_copy(s, acc, recv, CONVOY_DEP(last));
    } else {
        convoy__add_send(s, CONVOY_COMM_ALL, root, TAG_ROOT, acc, CONVOY_DEP(last));
    }
    return s->err;
}

double convoy__reduce_binomial_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const double bytes = (double)(a->count * a->rtype.size);
    double t = convoy__log2_floor(2 * p - 1) * (m->alpha + (m->beta + m->gamma) * bytes);
    if (!a->commutative && a->root != 0) t += m->alpha + m->beta * bytes;
    return t;
}
