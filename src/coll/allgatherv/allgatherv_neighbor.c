/*
 * Allgatherv by neighbor exchange (Chen, Hunt, Hoefler, Lumsdaine, Kim, "Performance
 * evaluation of allgather algorithms on terascale Linux cluster with fast Ethernet",
 * HPCAsia 2005; Open MPI's coll/base "neighborexchange").
 *
 * Idea: the ranks form pairs (2q, 2q+1). In round 0 the partners of a pair exchange their
 * blocks, so each holds its pair's two blocks. In round i = 1 .. p/2 - 1 a process forwards
 * the pair of blocks it got in the previous round (its own pair in round 1) and receives a
 * new pair: in odd rounds even ranks talk to their left neighbour 2q - 1 and odd ranks to
 * their right one 2q + 2, in even rounds the partners of a pair talk again. An even rank
 * learns pairs q-1, q+1, q-2, q+2, ..., an odd rank q+1, q-1, q+2, q-2, ... (mod p/2): each
 * pair's data moves two blocks at a time, so p/2 rounds instead of the ring's p - 1.
 *
 * A pair's two blocks are packed as bytes in rank order in scratch memory, so each round is
 * one contiguous message each way (Open MPI uses an indexed datatype instead); the own
 * block is packed first and blocks are unpacked to their final places (any displacements,
 * any receive datatype) as soon as they arrive. Empty pairs are not sent (both sides know
 * the counts). A receive is posted once the one two rounds before it completed, as in the
 * ring: early enough that no message waits, few enough in flight.
 *
 * Cost: p/2 rounds: alpha + beta * (largest block), then p/2 - 1 times alpha + beta *
 * (largest pair); about (p/2)(alpha + 2 beta max m_i). Packing and unpacking are a local
 * pass over all n bytes, charged gamma n. Halves the ring's latency term on regular data,
 * same bandwidth term.
 *
 * Restrictions: p even (the applicability predicate says no for odd p).
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__allgatherv_neighbor_applicable(const convoy__args *a)
{
    return a->topo->size % 2 == 0;
}

int convoy__allgatherv_neighbor(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t ext = a->rtype.extent;
    if (p % 2) return CONVOY_ERR_ARG;
    const convoy__region own_src = convoy__agv_own(a);
    convoy__agv_copy_own(a, s);

    /* off[i]: byte offset of block i packed in rank order; a pair is off[2q] .. off[2q+2]. */
    int64_t *off = malloc((size_t)(p + 1) * sizeof *off);
    if (!off) return CONVOY_ERR_NO_MEM;
    off[0] = 0;
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + a->rcounts[i] * a->rtype.size;
    if (off[p] == 0) {
        free(off);
        return s->err;
    }
    s->tmp_bytes = off[p];
#define PACKED(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, off[lo], off[hi] - off[lo])
#define UNPACK(i, dep)                                                                             \
    convoy__add_copy(                                                                              \
        s, PACKED(i, (i) + 1),                                                                     \
        convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * ext, a->rcounts[i]), 1, &(dep))

    const int np = p / 2, q = r / 2, even = r % 2 == 0;
    const int nb[2] = {even ? r + 1 : r - 1, even ? (r - 1 + p) % p : (r + 1) % p};

    /* Round 0: the own block for the partner's. */
    int have[2], nhave = 0; /* steps after which the own pair is complete */
    if (a->rcounts[r] > 0) have[nhave++] = convoy__add_copy(s, own_src, PACKED(r, r + 1), 0, NULL);
    if (a->rcounts[r] > 0)
        convoy__add_send(s, CONVOY_COMM_ALL, nb[0], 0, PACKED(r, r + 1), nhave, have);
    if (a->rcounts[nb[0]] > 0) {
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, nb[0], 0, PACKED(nb[0], nb[0] + 1), 0, NULL);
        have[nhave++] = rcv;
        UNPACK(nb[0], rcv);
    }

    /* Rounds 1 .. p/2 - 1: forward the pair learnt last round, learn pair q + shift, where
     * shift runs -1, +1, -2, +2, ... for even ranks and +1, -1, +2, -2, ... for odd ones. */
    int fwd = q;              /* the pair forwarded in this round */
    int window[2] = {-1, -1}; /* the last two pair receives, oldest first */
    int last = -1;            /* the receive that brought pair fwd (rounds >= 2) */
    for (int i = 1; i < np; i++) {
        const int peer = nb[i % 2], h = (i + 1) / 2;
        const int shift = i % 2 ? (even ? -h : h) : (even ? i / 2 : -(i / 2));
        const int rp = ((q + shift) % np + np) % np;
        if (off[2 * fwd + 2] > off[2 * fwd]) {
            const convoy__region src = PACKED(2 * fwd, 2 * fwd + 2);
            if (i == 1)
                convoy__add_send(s, CONVOY_COMM_ALL, peer, i, src, nhave, have);
            else
                convoy__add_send(s, CONVOY_COMM_ALL, peer, i, src, CONVOY_DEP(last));
        }
        last = -1;
        if (off[2 * rp + 2] > off[2 * rp]) {
            last = convoy__add_recv(s, CONVOY_COMM_ALL, peer, i, PACKED(2 * rp, 2 * rp + 2),
                                    CONVOY_DEP(window[0]));
            window[0] = window[1];
            window[1] = last;
            for (int b = 2 * rp; b < 2 * rp + 2; b++)
                if (a->rcounts[b] > 0) UNPACK(b, last);
        }
        fwd = rp;
    }
#undef UNPACK
#undef PACKED
    free(off);
    return s->err;
}

double convoy__allgatherv_neighbor_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    int64_t block = 0, pair = 0, total = 0;
    for (int i = 0; i < p; i++) {
        int64_t b = a->rcounts[i] * a->rtype.size;
        total += b;
        if (b > block) block = b;
        if (i % 2 && b + a->rcounts[i - 1] * a->rtype.size > pair)
            pair = b + a->rcounts[i - 1] * a->rtype.size;
    }
    if (p == 1 || total == 0) return 0;
    return m->alpha + m->beta * (double)block + (p / 2 - 1) * (m->alpha + m->beta * (double)pair) +
           m->gamma * (double)total;
}
