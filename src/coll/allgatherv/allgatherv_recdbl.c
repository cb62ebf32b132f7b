/*
 * Allgatherv by recursive doubling, for any number of processes (Thakur, Rabenseifner,
 * Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 2005,
 * §3 (allgather); the "recursive doubling" of Intel MPI that papers/000 compares with).
 *
 * Idea: let p' be the largest power of two <= p and rem = p - p'. First the 2 rem lowest
 * ranks pair up: each even one sends its block to the odd one above it and drops out, as in
 * allreduce_recdbl's fold. The p' remaining processes (renumbered in rank order; virtual
 * rank v stands for ranks 2v, 2v+1 if v < rem, else for rank v + rem) exchange everything
 * they hold with the partner at distance 1, 2, 4, ...: after the exchange at distance d a
 * process holds the blocks of its aligned group of 2d virtual ranks. Last, each odd rank of
 * the fold sends the complete result back to its even neighbour.
 *
 * A group's blocks are scattered over the receive buffer (any displacements, any receive
 * datatype), so every process keeps the data packed as bytes in scratch memory in rank
 * order; since virtual groups are contiguous rank ranges, every exchange is one contiguous
 * byte range each way. The own block is packed first, the others are unpacked to their
 * final places as soon as the exchange that brought them is done; empty ranges are not
 * sent (both sides know the counts).
 *
 * Cost: log2(p') rounds, the one at distance d costing alpha + beta * (bytes of the
 * largest aligned group of d virtual ranks); about log2(p') alpha + beta (n - n/p') for a
 * total of n bytes. A fold adds alpha + beta * (largest folded block) + alpha + beta n.
 * Packing and unpacking are a local pass over n bytes, charged gamma n. Latency-optimal;
 * for small data, or large data when the copies are cheap.
 *
 * Restrictions: none (any p, counts, displacements, datatypes, MPI_IN_PLACE).
 */
#include "coll/coll.h"

#include <stdlib.h>

/* First rank of virtual rank v (v = p' gives p). */
static int vfirst(int v, int rem)
{
    return v < rem ? 2 * v : v + rem;
}

/* Byte offsets of the blocks packed in rank order: off[i] .. off[i+1]. NULL if no memory. */
static int64_t *packed_offsets(const convoy__args *a)
{
    const int p = a->topo->size;
    int64_t *off = malloc((size_t)(p + 1) * sizeof *off);
    if (!off) return NULL;
    off[0] = 0;
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + a->rcounts[i] * a->rtype.size;
    return off;
}

int convoy__allgatherv_recdbl(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t ext = a->rtype.extent;
    const convoy__region own_src = convoy__agv_own(a);
    convoy__agv_copy_own(a, s);
    int64_t *off = packed_offsets(a);
    if (!off) return CONVOY_ERR_NO_MEM;
    const int64_t total = off[p];
    if (p == 1 || total == 0) {
        free(off);
        return s->err;
    }
    s->tmp_bytes = total;
#define PACKED(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, off[lo], off[hi] - off[lo])

    /* ready[]: the steps after which this process's packed data is complete so far (the
     * sends depend on all of them); arrived[i]: the step that brought block i. */
    int ready[64], nready = 0; /* pack, fold, <= 31 exchanges */
    int *arrived = malloc((size_t)p * sizeof *arrived);
    if (!arrived) {
        free(off);
        return CONVOY_ERR_NO_MEM;
    }
    for (int i = 0; i < p; i++)
        arrived[i] = -1;
    if (a->rcounts[r] > 0) {
        int pack = convoy__add_copy(s, own_src, PACKED(r, r + 1), 0, NULL);
        if (pack >= 0) ready[nready++] = pack;
    }

    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    const int rem = p - pp;
    const int tag_back = CONVOY_STEP_TAGS - 1; /* the result going back to a folded rank */

    if (r < 2 * rem && r % 2 == 0) {
        /* Folded out: hand over the own block, get everything back. The receive overwrites
         * the packed own block with the same bytes, so it waits for the send to finish. */
        int snd = -1;
        if (off[r + 1] > off[r])
            snd = convoy__add_send(s, CONVOY_COMM_ALL, r + 1, 0, PACKED(r, r + 1), nready, ready);
        if (total > off[r + 1] - off[r]) {
            const int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r + 1, tag_back, PACKED(0, p),
                                             CONVOY_DEP(snd));
            for (int i = 0; i < p; i++)
                arrived[i] = rcv;
        }
    } else {
        /* The receives are posted in round order, each once the previous one is done: the
         * fold's block arrives before the first exchange's, so that a process next to a
         * folded pair does not take the exchange first and delay the pair by a round. */
        int prev = -1;
        if (r < 2 * rem && off[r] > off[r - 1]) {
            prev = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, 0, PACKED(r - 1, r), 0, NULL);
            arrived[r - 1] = prev;
            ready[nready++] = prev;
        }
        const int me = r < 2 * rem ? r / 2 : r - rem;
        int tag = 1;
        for (int mask = 1; mask < pp; mask <<= 1, tag++) {
            const int v = me ^ mask, peer = v < rem ? 2 * v + 1 : v + rem;
            const int mlo = vfirst(me & ~(mask - 1), rem),
                      mhi = vfirst((me & ~(mask - 1)) + mask, rem);
            const int plo = vfirst(v & ~(mask - 1), rem),
                      phi = vfirst((v & ~(mask - 1)) + mask, rem);
            if (off[mhi] > off[mlo])
                convoy__add_send(s, CONVOY_COMM_ALL, peer, tag, PACKED(mlo, mhi), nready, ready);
            if (off[phi] > off[plo]) {
                prev = convoy__add_recv(s, CONVOY_COMM_ALL, peer, tag, PACKED(plo, phi),
                                        CONVOY_DEP(prev));
                for (int i = plo; i < phi; i++)
                    arrived[i] = prev;
                ready[nready++] = prev;
            }
        }
        if (r < 2 * rem && total > off[r] - off[r - 1])
            convoy__add_send(s, CONVOY_COMM_ALL, r - 1, tag_back, PACKED(0, p), nready, ready);
    }

    for (int i = 0; i < p; i++)
        if (i != r && a->rcounts[i] > 0)
            convoy__add_copy(
                s, PACKED(i, i + 1),
                convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * ext, a->rcounts[i]),
                CONVOY_DEP(arrived[i]));
#undef PACKED
    free(arrived);
    free(off);
    return s->err;
}

double convoy__allgatherv_recdbl_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    int64_t *off = packed_offsets(a);
    if (!off) return 1e300;
    const int64_t total = off[p];
    double t = 0;
    if (p > 1 && total > 0) {
        int pp = 1;
        while (pp * 2 <= p)
            pp *= 2;
        const int rem = p - pp;
        for (int mask = 1; mask < pp; mask <<= 1) {
            int64_t big = 0;
            for (int g = 0; g < pp; g += mask) {
                int64_t b = off[vfirst(g + mask, rem)] - off[vfirst(g, rem)];
                if (b > big) big = b;
            }
            t += m->alpha + m->beta * (double)big;
        }
        if (rem > 0) {
            int64_t big = 0;
            for (int i = 0; i < 2 * rem; i += 2)
                if (off[i + 1] - off[i] > big) big = off[i + 1] - off[i];
            t += 2 * m->alpha + m->beta * (double)(big + total);
        }
        t += m->gamma * (double)total;
    }
    free(off);
    return t;
}
