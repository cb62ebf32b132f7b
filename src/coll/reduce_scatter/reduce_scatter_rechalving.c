/*
 * Reduce_scatter by recursive halving (Thakur, Rabenseifner, Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 2005, §4.4; the reduce-scatter
 * phase of Rabenseifner's allreduce, allreduce_rabenseifner.c), in rank order for any p and
 * any counts.
 *
 * Idea: p' = the largest power of two <= p, rem = p - p'. Fold: the 2 rem lowest ranks pair
 * up, each even one sends its whole vector to the odd one above and drops out; the p'
 * others get numbers 0 .. p'-1 in rank order. Number q stands for the blocks of the ranks
 * it represents (2q and 2q+1 for q < rem, else q + rem): a contiguous range of the vector.
 * Halving: at distance d = 1, 2, ..., p'/2 a process and its partner (number xor d) split
 * the data they share in two, send each other the half the other keeps and combine what
 * they receive. The nearest partner comes first, so every combination joins two adjacent
 * rank intervals, the lower one first: rank order holds. For the halves to stay contiguous
 * with the distance growing, each process first copies its vector into scratch with the
 * numbers' ranges in bit-reversed order (number q's range at position bitrev(q)): the
 * split at distance 2^j is by bit j of the number, i.e. by the top bit of the position
 * within the current window, so each level keeps one contiguous half and after log2 p'
 * levels number q holds position bitrev(q), its own range (MPICH's non-commutative
 * reduce-scatter-block does the same permutation). Last, the result is copied to the
 * receive buffer and each odd rank of the fold sends the even one its block.
 *
 * Cost: log2(p') alpha + (p'-1)/p' n (beta + gamma) (n = the vector in bytes, halves as
 * even as the counts allow), plus alpha + n (beta + gamma) for the fold and alpha + beta m
 * (m = the largest block) for the return when p is not a power of two; local copies of n
 * and m bytes, modelled at beta per byte (a memory copy, as a shared-memory message is), which
 * leaves long vectors at small p to the ring. Rounds: log2 p', + 2 with the fold (fewer when counts
 * are zero). For short to long vectors with many processes; the ring (reduce_scatter_ring.c) has
 * p-1 rounds.
 *
 * Restrictions: none; any counts (empty halves are skipped on both sides, which know the
 * counts), any p.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): the fold combines 2i op 2i+1, and every
 * halving step combines the lower number's interval as the first operand. Each element is
 * computed once, by one process along a sequence the schedule fixes: every run with the
 * same arguments gives the same bits (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Details: scratch holds two vectors in the permuted layout, W and F. The data lives in
 * one of them (at first W); the partner's half arrives in the other at the same offset.
 * For a commutative operation or when this process holds the upper interval the received
 * half is combined into the data (partner op own); the lower one of a non-commutative pair
 * combines its own half into the received one (own op partner) and the data moves to the
 * other vector: no copies. The fold's odd rank receives the even one's (already permuted)
 * vector into F and combines it into W. The input (send buffer, or the receive buffer in
 * place) is only read by the permutation copies, so the final copy into the receive
 * buffer is safe in place.
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Tags: fold 0, halving level j 1 + j, the block back to a folded rank the last tag. */
enum { TAG_FOLD = 0, TAG_LEVEL = 1, TAG_BACK = CONVOY_STEP_TAGS - 1 };

static int bitrev(int x, int bits)
{
    int y = 0;
    for (int i = 0; i < bits; i++)
        y |= ((x >> i) & 1) << (bits - 1 - i);
    return y;
}

/* The first rank number q stands for, and how many (1 or 2). */
static int first_rank(int q, int rem)
{
    return q < rem ? 2 * q : q + rem;
}

/* Element offsets of the positions of the permuted layout: poff[pos] .. poff[pos + 1] is
 * the range of number bitrev(pos); poff has pp + 1 entries. Returns 0 or NO_MEM. */
static int64_t *permuted_offsets(const convoy__args *a, int pp, int levels, int rem)
{
    int64_t *poff = malloc((size_t)(pp + 1) * sizeof *poff);
    if (!poff) return NULL;
    poff[0] = 0;
    for (int pos = 0; pos < pp; pos++) {
        const int q = bitrev(pos, levels), f = first_rank(q, rem);
        poff[pos + 1] = poff[pos] + a->rcounts[f] + (q < rem ? a->rcounts[f + 1] : 0);
    }
    return poff;
}

int convoy__reduce_scatter_rechalving(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t n = a->count, ext = a->rtype.extent, *cnt = a->rcounts, *dsp = a->displs;
    if (n == 0) return 0;
    const int own_buf = a->inplace ? CONVOY_BUF_RECV : CONVOY_BUF_SEND;
    const int own_slot = a->inplace ? CONVOY_T_RECV : CONVOY_T_SEND;
#define OWN(lo, c) convoy__reg(own_buf, own_slot, (lo)*ext, (c))
#define RECV(c) convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, (c))
/* Vector v (0: W, 1: F) of scratch, elements [lo, lo + c). */
#define VEC(v, lo, c)                                                                              \
    convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, ((v)*n + (lo)) * ext - a->rtype.true_lb, (c))
    if (p == 1) {
        if (!a->inplace) convoy__add_copy(s, OWN(0, n), RECV(n), 0, NULL);
        return s->err;
    }
    int pp = 1, levels = 0;
    while (pp * 2 <= p) {
        pp *= 2;
        levels++;
    }
    const int rem = p - pp;
    int64_t *poff = permuted_offsets(a, pp, levels, rem);
    if (!poff) return s->err = CONVOY_ERR_NO_MEM;
    s->tmp_bytes = a->rtype.true_extent + (2 * n - 1) * ext;

    /* The permutation: number q's range to position bitrev(q) of W. The copies are chained
     * (local steps, done at once), so `last` stands for all of them. */
    int last = -1;
    for (int q = 0; q < pp; q++) {
        const int f = first_rank(q, rem);
        const int64_t c = poff[bitrev(q, levels) + 1] - poff[bitrev(q, levels)];
        if (c > 0)
            last = convoy__add_copy(s, OWN(dsp[f], c), VEC(0, poff[bitrev(q, levels)], c),
                                    CONVOY_DEP(last));
    }
    if (r < 2 * rem && r % 2 == 0) {
        /* Even rank of the fold: the permuted vector to r + 1, the own block back. */
        int snd =
            convoy__add_send(s, CONVOY_COMM_ALL, r + 1, TAG_FOLD, VEC(0, 0, n), CONVOY_DEP(last));
        if (cnt[r] > 0)
            convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, TAG_BACK, RECV(cnt[r]), 1, &snd);
        free(poff);
        return s->err;
    }
    if (r < 2 * rem) {
        /* Odd rank of the fold: W = even's op own (the lower rank first). */
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, TAG_FOLD, VEC(1, 0, n), 0, NULL);
        int deps[2] = {rcv, last};
        last = convoy__add_reduce(s, VEC(1, 0, n), VEC(0, 0, n), last >= 0 ? 2 : 1, deps);
    }
    const int me = r < 2 * rem ? r / 2 : r - rem;

    int cur = 0;           /* the vector holding the data */
    int plo = 0, phi = pp; /* the window of positions held */
    for (int j = 0; j < levels; j++) {
        const int d = 1 << j, np = me ^ d, lower = !(me & d);
        const int peer = np < rem ? 2 * np + 1 : np + rem;
        const int mid = plo + (phi - plo) / 2;
        const int klo = lower ? plo : mid, khi = lower ? mid : phi; /* kept */
        const int glo = lower ? mid : plo, ghi = lower ? phi : mid; /* given away */
        const int64_t go = poff[glo], gc = poff[ghi] - poff[glo];
        const int64_t ko = poff[klo], kc = poff[khi] - poff[klo];
        if (gc > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_LEVEL + j, VEC(cur, go, gc),
                             CONVOY_DEP(last));
        if (kc > 0) {
            /* The other vector's kept range was last touched by the previous combination. */
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_LEVEL + j,
                                       VEC(1 - cur, ko, kc), CONVOY_DEP(last));
            int deps[2] = {rcv, last};
            const int nd = last >= 0 ? 2 : 1;
            if (a->commutative || !lower) {
                last = convoy__add_reduce(s, VEC(1 - cur, ko, kc), VEC(cur, ko, kc), nd, deps);
            } else {
                last = convoy__add_reduce(s, VEC(cur, ko, kc), VEC(1 - cur, ko, kc), nd, deps);
                cur = 1 - cur;
            }
        }
        plo = klo;
        phi = khi;
    }
    /* Position plo = bitrev(me) holds number me's range: block r (after block r - 1 for
     * the odd rank of a fold, which sends that one back). */
    const int64_t base = poff[plo];
    const int folded = r < 2 * rem;
    const int64_t mine = folded ? base + cnt[r - 1] : base;
    if (cnt[r] > 0) convoy__add_copy(s, VEC(cur, mine, cnt[r]), RECV(cnt[r]), CONVOY_DEP(last));
    if (folded && cnt[r - 1] > 0)
        convoy__add_send(s, CONVOY_COMM_ALL, r - 1, TAG_BACK, VEC(cur, base, cnt[r - 1]),
                         CONVOY_DEP(last));
    free(poff);
#undef OWN
#undef RECV
#undef VEC
    return s->err;
}

double convoy__reduce_scatter_rechalving_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    const double es = (double)a->rtype.size;
    if (p == 1 || a->count == 0) return 0;
    int pp = 1, levels = 0;
    while (pp * 2 <= p) {
        pp *= 2;
        levels++;
    }
    const int rem = p - pp;
    int64_t *poff = permuted_offsets(a, pp, levels, rem);
    if (!poff) return 1e30;
    /* Each level costs what its largest half costs (the slowest pair sets the pace). */
    /* The permutation copy of the vector and the final copy of the block. */
    int64_t maxb = 0;
    for (int i = 0; i < p; i++)
        if (a->rcounts[i] > maxb) maxb = a->rcounts[i];
    double t = m->beta * (double)(a->count + maxb) * es;
    for (int j = 0; j < levels; j++) {
        const int w = pp >> (j + 1); /* positions per half */
        int64_t big = 0;
        for (int lo = 0; lo < pp; lo += w)
            if (poff[lo + w] - poff[lo] > big) big = poff[lo + w] - poff[lo];
        t += m->alpha + (m->beta + m->gamma) * (double)big * es;
    }
    free(poff);
    if (rem > 0) {
        int64_t back = 0; /* the largest block returned to an even rank of the fold */
        for (int i = 0; i < 2 * rem; i += 2)
            if (a->rcounts[i] > back) back = a->rcounts[i];
        t += 2 * m->alpha + (m->beta + m->gamma) * (double)a->count * es +
             m->beta * (double)back * es;
    }
    return t;
}
