/*
 * Allgatherv by Bruck's concatenation algorithm (Bruck, Ho, Kipnis, Upfal, Weathersby,
 * "Efficient algorithms for all-to-all communications in multiport message-passing
 * systems", IEEE TPDS 1997; Thakur, Rabenseifner, Gropp, IJHPCA 2005, §3; the "Bruck"
 * allgatherv of Intel MPI that papers/000 compares with).
 *
 * Idea: process r keeps the blocks in rotated order in scratch memory: position j holds
 * the block of rank (r + j) mod p. In round k, with d = 2^k, it sends positions
 * 0 .. c-1 (c = min(d, p - d)) to rank r - d and receives positions d .. d+c-1 from rank
 * r + d, which are that rank's positions 0 .. c-1. After ceil(log2 p) rounds all p
 * positions are filled, for any p (the last round sends only what is missing).
 *
 * Irregular counts: the blocks are packed as bytes in rotated order, so a run of positions
 * is one contiguous byte range on both sides (its length, the sum of the blocks' sizes, is
 * known to both); empty runs are not sent. The own block is packed first and every block
 * is unpacked to its final place (any displacements, any receive datatype) as soon as the
 * round that brought it is done. The inverse rotation of the original algorithm is this
 * unpacking.
 *
 * Cost: ceil(log2 p) rounds, round k costing alpha + beta * (largest run of c cyclically
 * consecutive blocks); about ceil(log2 p) alpha + beta (n - n/p) for a total of n bytes on
 * regular data. Packing and unpacking are a local pass over n bytes, charged gamma n.
 * Latency-optimal for any p, without the fold of recursive doubling.
 *
 * Restrictions: none.
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__allgatherv_bruck(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t ext = a->rtype.extent;
    const convoy__region own_src = convoy__agv_own(a);
    convoy__agv_copy_own(a, s);
    if (p == 1) return s->err;

    /* off[j]: byte offset of position j (block (r + j) mod p) in the rotated scratch;
     * arrived[j]: the step that brought position j. */
    int64_t *off = malloc((size_t)(p + 1) * sizeof *off);
    int *arrived = malloc((size_t)p * sizeof *arrived);
    if (!off || !arrived) {
        free(off);
        free(arrived);
        return CONVOY_ERR_NO_MEM;
    }
    off[0] = 0;
    for (int j = 0; j < p; j++)
        off[j + 1] = off[j] + a->rcounts[(r + j) % p] * a->rtype.size;
    if (off[p] > 0) {
        s->tmp_bytes = off[p];
#define ROTATED(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, off[lo], off[hi] - off[lo])
        int ready[64], nready = 0; /* steps after which positions 0 .. d-1 are complete */
        if (off[1] > 0) ready[nready++] = convoy__add_copy(s, own_src, ROTATED(0, 1), 0, NULL);
        int tag = 0;
        for (int d = 1; d < p; d *= 2, tag++) {
            const int c = d < p - d ? d : p - d;
            if (off[c] > 0)
                convoy__add_send(s, CONVOY_COMM_ALL, (r - d + p) % p, tag, ROTATED(0, c), nready,
                                 ready);
            if (off[d + c] > off[d]) {
                /* Positions d .. d+c-1 are written by nothing else: receive at once. */
                int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, (r + d) % p, tag, ROTATED(d, d + c),
                                           0, NULL);
                for (int j = d; j < d + c; j++)
                    arrived[j] = rcv;
                ready[nready++] = rcv;
            }
        }
        for (int j = 1; j < p; j++) {
            const int b = (r + j) % p;
            if (a->rcounts[b] > 0)
                convoy__add_copy(
                    s, ROTATED(j, j + 1),
                    convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[b] * ext, a->rcounts[b]),
                    1, &arrived[j]);
        }
#undef ROTATED
    }
    free(arrived);
    free(off);
    return s->err;
}

double convoy__allgatherv_bruck_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1) return 0;
    /* pre[i]: bytes of blocks 0 .. i-1 over the doubled sequence, for cyclic runs. */
    int64_t *pre = malloc((size_t)(2 * p + 1) * sizeof *pre);
    if (!pre) return 1e300;
    pre[0] = 0;
    for (int i = 0; i < 2 * p; i++)
        pre[i + 1] = pre[i] + a->rcounts[i % p] * a->rtype.size;
    const int64_t total = pre[p];
    double t = 0;
    if (total > 0) {
        for (int d = 1; d < p; d *= 2) {
            const int c = d < p - d ? d : p - d;
            int64_t big = 0;
            for (int i = 0; i < p; i++)
                if (pre[i + c] - pre[i] > big) big = pre[i + c] - pre[i];
            t += m->alpha + m->beta * (double)big;
        }
        t += m->gamma * (double)total;
    }
    free(pre);
    return t;
}
