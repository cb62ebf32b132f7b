/*
 * Reduce as a reduce-scatter by recursive halving followed by a binomial gather of the
 * pieces to the root (R. Rabenseifner, "Optimization of collective reduction operations",
 * ICCS 2004; Thakur, Rabenseifner, Gropp, IJHPCA 2005, §4.2: MPICH's Reduce for long
 * vectors; papers/004 §3.4 phrases Reduce = Reduce_scatter + Gather as a guideline).
 *
 * Idea: the reduce-scatter of allreduce_rabenseifner.c (p' = the largest power of two <=
 * p; the 2 rem = 2 (p - p') lowest ranks fold pairwise, the even one dropping out; at
 * distance d = 1, 2, ..., p'/2 partners split their common window, exchange the halves
 * they give away and combine what they receive), then the exchanges in reverse order as a
 * gather: at distance d only the partner whose number agrees with the target's in bit d
 * keeps going and receives the other's window, which is done after sending it. The target
 * is the root's number, or its odd neighbour's when the root folded out (which then sends
 * it the whole vector).
 *
 * Cost: 2 log2(p') alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (n in bytes), plus
 * alpha + n (beta + gamma) for the fold if p is not a power of two, plus alpha + n beta if
 * the root folded out; 2 log2(p') rounds (+ 1, + 1). Bandwidth-optimal: long vectors.
 *
 * Restrictions: none; any count (empty windows are skipped on both sides), p and root.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): the nearest partner comes first, so
 * every combination joins two adjacent rank intervals, the lower one first, as in
 * allreduce_rabenseifner.c. One process combines each element (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Bytes leaving a node: each rank sends about 2 (p'-1)/p' n (halves, then its gathered
 * window), the fold n more: about 2 n per rank, 2 ppn n per node on consecutive layouts
 * less what stays inside a node at the small distances.
 *
 * Details: the working vector is the receive buffer at the root and scratch elsewhere
 * (other ranks have no receive buffer); received halves go to a second vector of scratch.
 * Without MPI_IN_PLACE the send buffer is read directly until the first combination.
 */
#include "coll/coll.h"

/* Tags: fold 0, reduce-scatter level j 1 + j, gather level j 64 + j, the whole vector to
 * a root that folded out TAG_BACK. */
enum { TAG_FOLD = 0, TAG_RS = 1, TAG_GA = 64, TAG_BACK = CONVOY_STEP_TAGS - 1 };

/* Number (0 .. p'-1) -> rank after the fold, and back (-1: folded out). */
static int rank_of(int np, int rem)
{
    return np < rem ? np * 2 + 1 : np + rem;
}

static int number_of(int r, int rem)
{
    return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem;
}

int convoy__reduce_rabenseifner(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, root = a->root;
    const int64_t n = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (n == 0) return 0;
    const int noncomm = !a->commutative, is_root = r == root;
    const int64_t vec = (a->rtype.true_extent + (n - 1) * ext + 15) / 16 * 16;
    /* W: the working vector (receive buffer at the root); T: received halves. */
    const int64_t toff = is_root ? 0 : vec;
#define W(lo, hi)                                                                                  \
    (is_root ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (lo)*ext, (hi) - (lo))                  \
             : convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (lo)*ext - lb, (hi) - (lo)))
#define SEND(lo, hi) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (lo)*ext, (hi) - (lo))
#define T(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, toff + (lo)*ext - lb, (hi) - (lo))

    if (p == 1) {
        if (!a->inplace) convoy__add_copy(s, SEND(0, n), W(0, n), 0, NULL);
        return s->err;
    }
    s->tmp_bytes = toff + vec;
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    const int rem = p - pp;
    const int tn = number_of(root, rem) >= 0 ? number_of(root, rem) : number_of(root + 1, rem);
    int in_send = !a->inplace, last = -1, tmp_free = -1;

    if (r < 2 * rem && r % 2 == 0) {
        int snd = convoy__add_send(s, CONVOY_COMM_ALL, r + 1, TAG_FOLD,
                                   in_send ? SEND(0, n) : W(0, n), 0, NULL);
        if (is_root) convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, TAG_BACK, W(0, n), 1, &snd);
        return s->err;
    }
    if (r < 2 * rem) {
        /* Combine the even neighbour's vector (the lower rank) into the own one. */
        if (in_send && !noncomm) {
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, TAG_FOLD, W(0, n), 0, NULL);
            last = convoy__add_reduce(s, SEND(0, n), W(0, n), 1, &rcv);
        } else {
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, TAG_FOLD, T(0, n), 0, NULL);
            int deps[2] = {rcv, -1}, nd = 1;
            if (in_send) deps[nd++] = convoy__add_copy(s, SEND(0, n), W(0, n), 0, NULL);
            last = convoy__add_reduce(s, T(0, n), W(0, n), nd, deps);
        }
        tmp_free = last;
        in_send = 0;
    }
    const int me = number_of(r, rem);
    int levels = 0;
    while ((1 << levels) < pp)
        levels++;

    /* Reduce-scatter: window [lo, hi) shrinks to the kept half at each level. */
    int64_t wlo[32], whi[32];
    int rs_send[32];
    int64_t lo = 0, hi = n;
    for (int j = 0; j < levels; j++) {
        const int d = 1 << j, np = me ^ d, peer = rank_of(np, rem), lower = me < np;
        const int64_t mid = lo + (hi - lo + 1) / 2;
        const int64_t klo = lower ? lo : mid, khi = lower ? mid : hi; /* kept */
        const int64_t glo = lower ? mid : lo, ghi = lower ? hi : mid; /* given away */
        wlo[j] = lo;
        whi[j] = hi;
        rs_send[j] = -1;
        if (ghi > glo)
            rs_send[j] = convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_RS + j,
                                          in_send ? SEND(glo, ghi) : W(glo, ghi), CONVOY_DEP(last));
        if (khi > klo) {
            if (in_send && (lower || !noncomm)) {
                int rcv =
                    convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_RS + j, W(klo, khi), 0, NULL);
                last = convoy__add_reduce(s, SEND(klo, khi), W(klo, khi), 1, &rcv);
            } else {
                int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_RS + j, T(klo, khi),
                                           CONVOY_DEP(tmp_free));
                if (in_send) {
                    /* Upper partner, non-commutative: partner's op own. */
                    int cp = convoy__add_copy(s, SEND(klo, khi), W(klo, khi), 0, NULL);
                    int deps[2] = {rcv, cp};
                    last = tmp_free = convoy__add_reduce(s, T(klo, khi), W(klo, khi), 2, deps);
                } else if (!lower || !noncomm) {
                    int deps[2] = {rcv, last};
                    last = tmp_free =
                        convoy__add_reduce(s, T(klo, khi), W(klo, khi), last >= 0 ? 2 : 1, deps);
                } else {
                    /* Lower partner, non-commutative: own op partner's, via scratch. */
                    int deps[2] = {rcv, last};
                    int red =
                        convoy__add_reduce(s, W(klo, khi), T(klo, khi), last >= 0 ? 2 : 1, deps);
                    last = tmp_free = convoy__add_copy(s, T(klo, khi), W(klo, khi), 1, &red);
                }
            }
            in_send = 0;
        }
        lo = klo;
        hi = khi;
    }

    /* Gather to number tn: at level j (highest first) the partner that agrees with tn in
     * bit j receives the other's window (the half it gave away at level j). */
    for (int j = levels - 1; j >= 0; j--) {
        const int d = 1 << j, np = me ^ d, peer = rank_of(np, rem), lower = me < np;
        if ((me & d) != (tn & d)) {
            if (hi > lo)
                convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_GA + j, W(lo, hi), CONVOY_DEP(last));
            return s->err;
        }
        const int64_t mid = wlo[j] + (whi[j] - wlo[j] + 1) / 2;
        const int64_t glo = lower ? mid : wlo[j], ghi = lower ? whi[j] : mid;
        if (ghi > glo) {
            int deps[2], nd = 0;
            if (rs_send[j] >= 0) deps[nd++] = rs_send[j];
            if (last >= 0) deps[nd++] = last;
            last = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_GA + j, W(glo, ghi), nd, deps);
        }
        lo = wlo[j];
        hi = whi[j];
    }
    /* This rank is the target: the root, or the odd neighbour of a root that folded out. */
    if (!is_root) convoy__add_send(s, CONVOY_COMM_ALL, root, TAG_BACK, W(0, n), CONVOY_DEP(last));
#undef W
#undef SEND
#undef T
    return s->err;
}

double convoy__reduce_rabenseifner_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    const double es = (double)a->rtype.size;
    if (p == 1 || a->count == 0) return 0;
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    const int rem = p - pp;
    double t = 0;
    for (int64_t h = a->count, d = 1; d < pp; d *= 2) {
        h = (h + 1) / 2;
        t += 2 * m->alpha + (2 * m->beta + m->gamma) * h * es;
    }
    if (rem) t += m->alpha + (m->beta + m->gamma) * a->count * es;
    if (a->root < 2 * rem && a->root % 2 == 0) t += m->alpha + m->beta * a->count * es;
    return t;
}
