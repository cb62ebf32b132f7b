/*
 * Allreduce by Rabenseifner's algorithm: reduce-scatter by recursive halving, then
 * allgather by recursive doubling (R. Rabenseifner, "Optimization of collective reduction
 * operations", ICCS 2004; Thakur, Rabenseifner, Gropp, "Optimization of collective
 * communication operations in MPICH", IJHPCA 2005, §4.3; a baseline of papers/001 and
 * papers/003).
 *
 * Idea: p' = the largest power of two <= p, rem = p - p'. Fold as in allreduce_recdbl:
 * the 2 rem lowest ranks pair up, each even one sends its whole vector to the odd one
 * above and drops out; the p' others are renumbered in rank order. Reduce-scatter: at
 * distance d = 1, 2, ..., p'/2 each process and its partner (number xor d) split the
 * element window they share in two halves (the lower number keeps the lower half, which
 * has the extra element when the window is odd), exchange the halves they give away and
 * combine what they receive into the half they keep. After log2 p' steps each process
 * holds a window of about n/p' elements with every contribution. Allgather: the same
 * exchanges in reverse order (d = p'/2, ..., 1), each process sending all it holds and
 * receiving its partner's half straight into place. Last, each odd rank of the fold sends
 * the result to its even neighbour.
 *
 * Cost: 2 log2(p') alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (n in bytes), plus
 * 2 (alpha + n beta) + n gamma if p is not a power of two; 2 log2(p') rounds, + 2 with the
 * fold. Bandwidth-optimal and logarithmic in latency: for long vectors.
 *
 * Restrictions: none; any count (windows that become empty, count < p', are skipped on
 * both sides) and any p.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): the nearest partner comes first, so
 * every combination joins two adjacent rank intervals, the lower one as first operand
 * (the fold joins ranks 2i and 2i+1 the same way). Every element is combined by one
 * process along one fixed sequence and then only copied: all ranks get bitwise identical
 * results (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Details: received halves go to scratch (one vector, the operation's type) at their
 * element offset and are combined into the receive buffer. Without MPI_IN_PLACE the send
 * buffer is read directly until the first combination, which writes the receive buffer
 * (for a commutative operation, or when this process is the lower partner, the partner's
 * half is received straight into the receive buffer and the own half combined into it).
 */
#include "coll/coll.h"

/* Tags: fold 0, reduce-scatter level j 1 + j, allgather level j 64 + j, result back to a
 * folded rank CONVOY_STEP_TAGS - 1; distinct per pair, so matching never depends on order. */
enum {
    TAG_FOLD = CONVOY_HALVING_TAG_FOLD,
    TAG_RS = CONVOY_HALVING_TAG_RS,
    TAG_AG = 64,
    TAG_BACK = CONVOY_STEP_TAGS - 1
};

/* Number (0 .. p'-1) -> rank, after the fold. */
static int rank_of(int np, int rem)
{
    return np < rem ? np * 2 + 1 : np + rem;
}

int convoy__rabenseifner_halving(const convoy__args *a, convoy__schedule *s, int wbuf, int64_t woff,
                                 int64_t toff, convoy__halving *h)
{
    const int p = a->topo->size, r = a->topo->rank, noncomm = !a->commutative;
    const int64_t n = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
#define W(lo, hi) convoy__reg(wbuf, CONVOY_T_RECV, woff + (lo)*ext, (hi) - (lo))
#define SEND(lo, hi) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (lo)*ext, (hi) - (lo))
#define T(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, toff + (lo)*ext - lb, (hi) - (lo))
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    h->rem = p - pp;
    h->levels = 0;
    while ((1 << h->levels) < pp)
        h->levels++;
    /* The own contribution (and later the partial result) is in the send buffer until the
     * first combination; `last` is the step after which W's window is current, `tmp_free`
     * the last step that used scratch. */
    h->in_send = !a->inplace;
    h->last = h->tmp_free = -1;
    h->lo = 0;
    h->hi = n;
    if (r < 2 * h->rem && r % 2 == 0) {
        h->me = -1; /* folds out: the caller sends its vector to r + 1 */
        return s->err;
    }
    const int rem = h->rem;
    if (r < 2 * rem) {
        /* Combine the even neighbour's vector (lower rank) into the own one. */
        if (h->in_send && !noncomm) {
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, TAG_FOLD, W(0, n), 0, NULL);
            h->last = convoy__add_reduce(s, SEND(0, n), W(0, n), 1, &rcv);
        } else {
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, TAG_FOLD, T(0, n), 0, NULL);
            int deps[2] = {rcv, -1}, nd = 1;
            if (h->in_send) deps[nd++] = convoy__add_copy(s, SEND(0, n), W(0, n), 0, NULL);
            h->last = convoy__add_reduce(s, T(0, n), W(0, n), nd, deps);
        }
        /* The first halving receive waits for the fold: posted earlier, it could take the
         * partner's message first and delay the fold, on which this rank's own send of that
         * level depends (one more round in the single-ported model). */
        h->tmp_free = h->last;
        h->in_send = 0;
    }
    const int me = h->me = r < 2 * rem ? r / 2 : r - rem;
    int last = h->last, tmp_free = h->tmp_free, in_send = h->in_send;
    int64_t lo = 0, hi = n;
    for (int j = 0; j < h->levels; j++) {
        const int d = 1 << j, np = me ^ d, peer = rank_of(np, rem), lower = me < np;
        const int64_t mid = lo + (hi - lo + 1) / 2;
        const int64_t klo = lower ? lo : mid, khi = lower ? mid : hi; /* kept */
        const int64_t glo = lower ? mid : lo, ghi = lower ? hi : mid; /* given away */
        h->wlo[j] = lo;
        h->whi[j] = hi;
        h->rs_send[j] = -1;
        if (ghi > glo)
            h->rs_send[j] =
                convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_RS + j,
                                 in_send ? SEND(glo, ghi) : W(glo, ghi), CONVOY_DEP(last));
        if (khi > klo) {
            if (in_send && (lower || !noncomm)) {
                /* W free: partner's half lands there, the own is combined in (own op
                 * partner's: the lower interval first when this process is lower). */
                int rcv =
                    convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_RS + j, W(klo, khi), 0, NULL);
                last = convoy__add_reduce(s, SEND(klo, khi), W(klo, khi), 1, &rcv);
            } else {
                int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_RS + j, T(klo, khi),
                                           CONVOY_DEP(tmp_free));
                if (in_send) {
                    /* Upper partner, non-commutative: the own half first to W, then
                     * partner's op own. */
                    int cp = convoy__add_copy(s, SEND(klo, khi), W(klo, khi), 0, NULL);
                    int deps[2] = {rcv, cp};
                    last = tmp_free = convoy__add_reduce(s, T(klo, khi), W(klo, khi), 2, deps);
                } else if (!lower || !noncomm) {
                    int deps[2] = {rcv, last}; /* own op= partner's, partner first */
                    last = tmp_free =
                        convoy__add_reduce(s, T(klo, khi), W(klo, khi), last >= 0 ? 2 : 1, deps);
                } else {
                    /* Lower partner, non-commutative: own op partner's lands in scratch,
                     * then back to W. */
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
    /* Kept windows can be empty while the send buffer is still the data's home only if
     * this process received nothing at all (n < p'); it then holds no window and the second
     * phase never reads it. */
    h->last = last;
    h->tmp_free = tmp_free;
    h->in_send = in_send;
    h->lo = lo;
    h->hi = hi;
#undef W
#undef SEND
#undef T
    return s->err;
}

double convoy__rabenseifner_halving_cost(const convoy__args *a, const convoy__machine *m)
{
    const double es = (double)a->rtype.size;
    int pp = 1;
    while (pp * 2 <= a->topo->size)
        pp *= 2;
    double t = 0;
    /* The largest kept window at each level (the halves round up), sent once to the
     * partner in the halving and once more in the second phase. */
    for (int64_t h = a->count, d = 1; d < pp; d *= 2) {
        h = (h + 1) / 2;
        t += 2 * m->alpha + (2 * m->beta + m->gamma) * h * es;
    }
    return t;
}

int convoy__allreduce_rabenseifner(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t n = a->count, ext = a->rtype.extent;
    if (n == 0) return 0;
    s->tmp_bytes = a->rtype.true_extent + (n - 1) * ext;
#define RECV(lo, hi) convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (lo)*ext, (hi) - (lo))
#define SEND(lo, hi) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (lo)*ext, (hi) - (lo))

    if (p == 1) {
        if (!a->inplace) convoy__add_copy(s, SEND(0, n), RECV(0, n), 0, NULL);
        return s->err;
    }
    convoy__halving h;
    if (convoy__rabenseifner_halving(a, s, CONVOY_BUF_RECV, 0, 0, &h)) return s->err;
    if (h.me < 0) {
        int snd = convoy__add_send(s, CONVOY_COMM_ALL, r + 1, TAG_FOLD,
                                   a->inplace ? RECV(0, n) : SEND(0, n), 0, NULL);
        convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, TAG_BACK, RECV(0, n), 1, &snd);
        return s->err;
    }

    /* Allgather: at level j send the window held, receive the half given away there. */
    int last = h.last;
    int64_t lo = h.lo, hi = h.hi;
    for (int j = h.levels - 1; j >= 0; j--) {
        const int d = 1 << j, np = h.me ^ d, peer = rank_of(np, h.rem), lower = h.me < np;
        const int64_t mid = h.wlo[j] + (h.whi[j] - h.wlo[j] + 1) / 2;
        const int64_t glo = lower ? mid : h.wlo[j], ghi = lower ? h.whi[j] : mid;
        if (hi > lo)
            convoy__add_send(s, CONVOY_COMM_ALL, peer, TAG_AG + j, RECV(lo, hi), CONVOY_DEP(last));
        if (ghi > glo) {
            int deps[2], nd = 0;
            if (h.rs_send[j] >= 0) deps[nd++] = h.rs_send[j];
            if (last >= 0) deps[nd++] = last;
            last = convoy__add_recv(s, CONVOY_COMM_ALL, peer, TAG_AG + j, RECV(glo, ghi), nd, deps);
        }
        lo = h.wlo[j];
        hi = h.whi[j];
    }
    if (r < 2 * h.rem)
        convoy__add_send(s, CONVOY_COMM_ALL, r - 1, TAG_BACK, RECV(0, n), CONVOY_DEP(last));
#undef RECV
#undef SEND
    return s->err;
}

double convoy__allreduce_rabenseifner_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    const double es = (double)a->rtype.size;
    if (p == 1 || a->count == 0) return 0;
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    double t = convoy__rabenseifner_halving_cost(a, m);
    if (p > pp) t += 2 * (m->alpha + m->beta * a->count * es) + m->gamma * a->count * es;
    return t;
}
