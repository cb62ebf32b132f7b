/*
 * Bcast by a binomial scatter and a ring allgather (van de Geijn; the long-message Bcast of
 * MPICH, "scatter_ring_allgather").
 *
 * Idea: the count elements are cut into p chunks of ceil(count / p) elements (the last ones
 * shorter or empty); chunk j belongs to relative rank j = (rank - root) mod p.
 *   1. Scatter: down the binomial tree over relative ranks, relative rank v receives the
 *      chunks of its subtree [v, v + subtree) from its parent in one message (a contiguous
 *      range of elements) and passes each child its subtree's chunks.
 *   2. Allgather: a ring over relative ranks; in round k, v sends chunk (v - k) mod p to
 *      v + 1 and receives chunk (v - k - 1) mod p from v - 1 -- except chunks the receiver
 *      already holds from its scatter subtree, which neither side moves (both know the
 *      subtrees); the receiver forwards those from its own copy. So ring receives write
 *      only chunks outside the own subtree, which no scatter step touches: they are posted
 *      at once.
 * Everything stays in the user's buffer in the user's datatype (chunks are element ranges):
 * no copies, no scratch memory (zero copy for any derived datatype).
 *
 * Cost: (ceil(log2 p) + p - 1) alpha + 2 (p - 1)/p n beta for n bytes: the bandwidth term
 * of a pipeline, for long messages; the binomial Bcast's ceil(log2 p) n beta is worse there.
 * Rounds: ceil(log2 p) + p - 1. In every ring round all p processes copy a chunk at once, so
 * where processes share cores the ring takes at least share ((p - 1) alpha + (p - 1)/p n
 * beta) (convoy__shared_cores_work); the scatter's tree is not charged so (its levels'
 * copies overlap little). np 4 as 2 x 2, 1M ints: measured 1380-1540 us, the model 730
 * without the bound and 1097 with it, which ranks it behind lane and hier (0.58-0.74 of
 * native where it was chosen at 0.81-1.05).
 *
 * Restrictions: none (count < p leaves chunks empty; empty messages are not sent). Source:
 * M. Barnett, ..., R. van de Geijn (1994); Thakur, Rabenseifner, Gropp (2005) §4.1;
 * papers/004 §3 (the guideline Bcast <= Scatter + Allgather).
 */
#include "coll/coll.h"

/* Ring tags repeat after TAG_RING_SPAN rounds (beyond 1001 processes); the executor then
 * posts a tag's messages in round order (docs/architecture.md, "Tags"). */
enum { TAG_SCATTER = 0, TAG_RING = 1, TAG_RING_SPAN = 1000 };

/* Elements [first, first + n) of chunks [j0, j1) (relative ranks), clipped to count. */
static convoy__region chunks(const convoy__args *a, int64_t c, int j0, int j1)
{
    int64_t lo = (int64_t)j0 * c, hi = (int64_t)j1 * c;
    if (lo > a->count) lo = a->count;
    if (hi > a->count) hi = a->count;
    return convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, lo * a->rtype.extent, hi - lo);
}

/* The builder on the call in bytes (convoy__build_in_bytes). */
static int scatter_allgather(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, v = convoy__rooted_vrank(a);
    if (a->count == 0 || p == 1) return s->err;
    const int64_t c = (a->count + p - 1) / p;
    const int span = convoy__binomial_span(v, p);
    const int sub = convoy__binomial_subtree(v, p);
    /* 1. Scatter. */
    int got = -1;
    if (v > 0) {
        const convoy__region r = chunks(a, c, v, v + sub);
        if (r.count > 0)
            got = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v - span),
                                   TAG_SCATTER, r, 0, NULL);
    }
    for (int m = span / 2; m >= 1; m /= 2) {
        if (v + m >= p) continue;
        const convoy__region r = chunks(a, c, v + m, v + m + convoy__binomial_subtree(v + m, p));
        if (r.count > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v + m), TAG_SCATTER, r,
                             CONVOY_DEP(got));
    }
    /* 2. Ring: chunk j is held after the scatter by v iff j in [v, v + sub). */
    const int next = (v + 1) % p, prev = (v - 1 + p) % p;
    const int next_sub = convoy__binomial_subtree(next, p);
    int last = got; /* the step after which the chunk sent next is here */
    for (int k = 0; k < p - 1; k++) {
        const int sj = ((v - k) % p + p) % p, rj = ((v - k - 1) % p + p) % p;
        const int next_has = sj >= next && sj < next + next_sub;
        const int have = rj >= v && rj < v + sub;
        const int held = sj >= v && sj < v + sub;
        const convoy__region sr = chunks(a, c, sj, sj + 1), rr = chunks(a, c, rj, rj + 1);
        const int tag = TAG_RING + k % TAG_RING_SPAN;
        if (!next_has && sr.count > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, next), tag, sr,
                             CONVOY_DEP(held ? got : last));
        last = got;
        if (!have && rr.count > 0)
            last = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, prev), tag, rr, 0,
                                    NULL);
    }
    return s->err;
}

static double scatter_allgather_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const int depth = convoy__log2_floor(p - 1) + 1;
    const double n = (double)(a->count * a->rtype.size), ring_bytes = (p - 1.0) / p * n;
    const double ring = (p - 1) * m->alpha + ring_bytes * m->beta,
                 w = convoy__shared_cores_work(m, p - 1, ring_bytes);
    return depth * m->alpha + ring_bytes * m->beta + (ring > w ? ring : w);
}

int convoy__bcast_scatter_allgather(const convoy__args *a, convoy__schedule *s)
{
    return convoy__build_in_bytes(a, s, scatter_allgather);
}

double convoy__bcast_scatter_allgather_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__cost_in_bytes(a, m, scatter_allgather_cost);
}
