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

/* Tags: fold 0, reduce-scatter level j 1 + j (allreduce_rabenseifner.c's halving), gather
 * level j 64 + j, the whole vector to a root that folded out TAG_BACK. */
enum { TAG_FOLD = CONVOY_HALVING_TAG_FOLD, TAG_GA = 64, TAG_BACK = CONVOY_STEP_TAGS - 1 };

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
    const int is_root = r == root;
    const int64_t vec = (a->rtype.true_extent + (n - 1) * ext + 15) / 16 * 16;
    /* W: the working vector (receive buffer at the root, scratch elsewhere); received
     * halves in scratch after it. */
    const int wbuf = is_root ? CONVOY_BUF_RECV : CONVOY_BUF_TMP;
    const int64_t woff = is_root ? 0 : -lb;
#define W(lo, hi) convoy__reg(wbuf, CONVOY_T_RECV, woff + (lo)*ext, (hi) - (lo))
#define SEND(lo, hi) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (lo)*ext, (hi) - (lo))

    if (p == 1) {
        if (!a->inplace) convoy__add_copy(s, SEND(0, n), W(0, n), 0, NULL);
        return s->err;
    }
    s->tmp_bytes = (is_root ? 0 : vec) + vec;
    convoy__halving h;
    if (convoy__rabenseifner_halving(a, s, wbuf, woff, is_root ? 0 : vec, &h)) return s->err;
    if (h.me < 0) {
        int snd = convoy__add_send(s, CONVOY_COMM_ALL, r + 1, TAG_FOLD,
                                   a->inplace ? W(0, n) : SEND(0, n), 0, NULL);
        if (is_root) convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, TAG_BACK, W(0, n), 1, &snd);
        return s->err;
    }
    const int tn =
        number_of(root, h.rem) >= 0 ? number_of(root, h.rem) : number_of(root + 1, h.rem);

    /* Gather to number tn: at level j (highest first) the partner that agrees with tn in
     * bit j receives the other's window (the half it gave away at level j). */
    int last = h.last;
    int64_t lo = h.lo, hi = h.hi;
    for (int j = h.levels - 1; j >= 0; j--) {
        const int d = 1 << j, np = h.me ^ d, peer = rank_of(np, h.rem), lower = h.me < np;
        if ((h.me & d) != (tn & d)) {
            if (hi > lo)
                convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_GA + j, W(lo, hi), CONVOY_DEP(last));
            return s->err;
        }
        const int64_t mid = h.wlo[j] + (h.whi[j] - h.wlo[j] + 1) / 2;
        const int64_t glo = lower ? mid : h.wlo[j], ghi = lower ? h.whi[j] : mid;
        if (ghi > glo) {
            int deps[2], nd = 0;
            if (h.rs_send[j] >= 0) deps[nd++] = h.rs_send[j];
            if (last >= 0) deps[nd++] = last;
            last = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_GA + j, W(glo, ghi), nd, deps);
        }
        lo = h.wlo[j];
        hi = h.whi[j];
    }
    /* This rank is the target: the root, or the odd neighbour of a root that folded out. */
    if (!is_root) convoy__add_send(s, CONVOY_COMM_ALL, root, TAG_BACK, W(0, n), CONVOY_DEP(last));
#undef W
#undef SEND
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
    double t = convoy__rabenseifner_halving_cost(a, m);
    if (rem) t += m->alpha + (m->beta + m->gamma) * a->count * es;
    if (a->root < 2 * rem && a->root % 2 == 0) t += m->alpha + m->beta * a->count * es;
    return t;
}
