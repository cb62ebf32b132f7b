/*
 * Allreduce by recursive doubling, with the usual fold for non-powers of two
 * (Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in
 * MPICH", IJHPCA 2005, §4.3; the baseline of papers/001 and papers/003).
 *
 * Idea: let p' be the largest power of two <= p and rem = p - p'. First the 2 rem lowest
 * ranks pair up: each even one sends its vector to the odd one above it and drops out.
 * The p' remaining processes (renumbered in rank order) exchange full vectors with the
 * partner at distance 1, 2, 4, ... and combine them, lower ranks' data first. Last, each
 * odd rank of the fold sends the result back to its even neighbour.
 *
 * Cost: log2(p') (alpha + beta n + gamma n), plus 2 (alpha + beta n) + gamma n if p is
 * not a power of two; log2(p') rounds, + 2 with the fold. Latency-optimal, not
 * bandwidth-optimal: for small vectors. Lane-aware (papers/004 §2, convoy__round_cost): a
 * round whose partners share a node costs the node's alpha and beta; one whose partners
 * are on other nodes has every process of a node sending across at once, so its bytes go
 * at the node's lanes' rate where that is the slower (at np 4 as 2 x 2 on 2 cores, 10000
 * ints: the flat model predicted 16-26 us against node_dissem's 16-21, ran 50-137 against
 * 35-46, and was chosen in 3 of 5 runs).
 *
 * Every combination joins two adjacent rank intervals with the lower one as the first
 * operand, so non-commutative operations are fine, and every rank performs the same
 * combinations in the same order: all ranks get bitwise identical results.
 */
#include "coll/coll.h"

/* After the fold (rem pairs, the odd one of each stays): the index among the p' that stay
 * of rank r (-1: folded away), and the rank of index v. */
static int kept_index(int r, int rem)
{
    return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem;
}

static int kept_rank(int v, int rem)
{
    return v < rem ? 2 * v + 1 : v + rem;
}

int convoy__allreduce_recdbl(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t n = a->count;
    if (n == 0) return 0;
    const convoy__region mine = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    const convoy__region tmp = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -a->rtype.true_lb, n);
    s->tmp_bytes = a->rtype.true_extent + (n - 1) * a->rtype.extent;

    int last = -1; /* the step after which `mine` holds this rank's current partial result */
    if (!a->inplace)
        last =
            convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n), mine, 0, NULL);
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    const int rem = p - pp;
    int tag = 0;
    const int tag_back = CONVOY_STEP_TAGS - 1; /* the result going back to a folded rank */

    /* Fold: even ranks below 2 rem hand their data to the odd rank above and wait. */
    if (r < 2 * rem && r % 2 == 0) {
        int snd = convoy__add_send(s, CONVOY_COMM_ALL, r + 1, tag, mine, CONVOY_DEP(last));
        int deps[2] = {snd, last};
        convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, tag_back, mine, last >= 0 ? 2 : 1, deps);
        return s->err;
    }
    if (r < 2 * rem) {
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, tag, tmp, 0, NULL);
        int deps[2] = {rcv, last};
        last = convoy__add_reduce(s, tmp, mine, last >= 0 ? 2 : 1, deps);
    }
    tag++;
    const int me = kept_index(r, rem);
    int tmp_free = last; /* tmp may be overwritten once this step is done */
    for (int mask = 1; mask < pp; mask <<= 1, tag++) {
        const int peer = kept_rank(me ^ mask, rem);
        int snd = convoy__add_send(s, CONVOY_COMM_ALL, peer, tag, mine, CONVOY_DEP(last));
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, tag, tmp, CONVOY_DEP(tmp_free));
        int deps[2] = {snd, rcv};
        if (peer < r || a->commutative) {
            last = convoy__add_reduce(s, tmp, mine, 2, deps); /* mine = peer's op mine */
            tmp_free = last;
        } else {
            int red = convoy__add_reduce(s, mine, tmp, 2, deps); /* tmp = mine op peer's */
            last = convoy__add_copy(s, tmp, mine, 1, &red);
            tmp_free = last;
        }
    }
    if (r < 2 * rem) convoy__add_send(s, CONVOY_COMM_ALL, r - 1, tag_back, mine, CONVOY_DEP(last));
    return s->err;
}

double convoy__allreduce_recdbl_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int p = t->size, n0 = t->node_of[0];
    const double bytes = (double)(a->count * a->rtype.size);
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    const int rem = p - pp;
    double time = 0;
    for (int d = 1; d < pp; d *= 2) {
        /* The round's messages that leave rank 0's node (coll.h, convoy__round_cost). */
        int off = 0;
        for (int j = t->node_first[n0]; j < t->node_first[n0 + 1]; j++) {
            const int v = kept_index(t->members[j], rem);
            off += v >= 0 && t->node_of[kept_rank(v ^ d, rem)] != n0;
        }
        time += convoy__round_cost(m, 1, off, bytes) + m->gamma * bytes;
    }
    if (p > pp) time += 2 * (m->alpha + m->beta * bytes) + m->gamma * bytes;
    return time;
}
