/*
 * Alltoall by Bruck's algorithm (J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby,
 * "Efficient algorithms for all-to-all communications in multiport message-passing
 * systems", IEEE TPDS 8(11), 1997 — papers/004's reference [5]; MPICH's
 * MPIR_Alltoall_intra_brucks for short messages).
 *
 * Idea: rotate the blocks so that position i holds the block for rank r + i; at step
 * k = 0, 1, ... (while 2^k < p) send every position with bit k set to r + 2^k and receive
 * the same positions from r - 2^k; a block travels the binary representation of its
 * distance, so after ceil(log2 p) steps position i holds the block from rank r - i, which
 * the inverse rotation puts into place. The positions of one step are packed into one
 * message (and unpacked on arrival) by local copies.
 *
 * Cost: ceil(log2 p) (alpha + beta m p / 2) with m the bytes of one block, plus the local
 * copies (3 p m / 2 per step, charged at gamma); ceil(log2 p) rounds. Latency-optimal, a
 * factor log2(p) / 2 more volume: short messages on many processes.
 *
 * Restrictions: none; any counts and p.
 *
 * Bytes leaving a node: each rank sends about (p / 2) m ceil(log2 p) in all, most of it to
 * other nodes at the large distances: more than the direct algorithms' (p - ppn) m.
 *
 * Details: scratch holds the rotated blocks (p), a packing and an unpacking area (the
 * largest step's positions each), all in the receive type. In place the rotation reads the
 * receive buffer, which the inverse rotation only writes after the read of the same block.
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__alltoall_bruck(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t c = a->rcounts[0], ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (c == 0) return 0;
    if (!a->inplace)
        convoy__add_copy(s, convoy__a2a_sblock(a, r), convoy__a2a_rblock(a, r), 0, NULL);
    if (p == 1) return s->err;
    int most = 0; /* positions sent in the largest step */
    for (int d = 1; d < p; d <<= 1) {
        int k = 0;
        for (int i = 1; i < p; i++)
            k += (i & d) != 0;
        if (k > most) most = k;
    }
    const int64_t S = (int64_t)p * c, R = S + most * c; /* element offsets of the areas */
    s->tmp_bytes = a->rtype.true_extent + (R + most * c - 1) * ext;
#define AREA(at, cnt) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (at)*ext - lb, (cnt))
    int *rot = malloc((size_t)p * 2 * sizeof *rot);
    if (!rot) return CONVOY_ERR_NO_MEM;
    int *lastw = rot + p; /* the step that last wrote position i */
    /* Rotation: position i = the block for rank r + i (the send buffer's, or in place the
     * receive buffer's own blocks). */
    for (int i = 1; i < p; i++) {
        const int j = (r + i) % p;
        const convoy__region src = a->inplace ? convoy__a2a_rblock(a, j) : convoy__a2a_sblock(a, j);
        rot[i] = lastw[i] = convoy__add_copy(s, src, AREA(i * c, c), 0, NULL);
    }
    int prev_send = -1, nun = 0;
    int *unpack = malloc((size_t)(most > 0 ? most : 1) * 2 * sizeof *unpack);
    if (!unpack) {
        free(rot);
        return CONVOY_ERR_NO_MEM;
    }
    int *pack = unpack + most;
    for (int d = 1, k = 0; d < p; d <<= 1, k++) {
        int np = 0;
        for (int i = 1; i < p; i++) {
            if (!(i & d)) continue;
            int deps[2] = {lastw[i], prev_send};
            pack[np] = convoy__add_copy(s, AREA(i * c, c), AREA(S + np * c, c),
                                        prev_send >= 0 ? 2 : 1, deps);
            np++;
        }
        prev_send = convoy__add_send(s, CONVOY_COMM_ALL, (r + d) % p, k, AREA(S, np * c), np, pack);
        /* The unpacking area is free once the previous step's unpacking read it. */
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, (r - d + p) % p, k, AREA(R, np * c), nun,
                                   nun ? unpack : NULL);
        nun = 0;
        for (int i = 1, q = 0; i < p; i++) {
            if (!(i & d)) continue;
            int deps[2] = {rcv, pack[q]}; /* the position was packed before it is refilled */
            unpack[nun++] = lastw[i] =
                convoy__add_copy(s, AREA(R + q * c, c), AREA(i * c, c), 2, deps);
            q++;
        }
    }
    /* Inverse rotation: position i holds the block from rank r - i. In place, the target
     * block was read by the rotation of position p - i. */
    for (int i = 1; i < p; i++) {
        int deps[2] = {lastw[i], rot[p - i]};
        convoy__add_copy(s, AREA(i * c, c), convoy__a2a_rblock(a, (r - i + p) % p),
                         a->inplace ? 2 : 1, deps);
    }
#undef AREA
    free(unpack);
    free(rot);
    return s->err;
}

/* Where processes share cores, at least convoy__shared_cores_work of its steps and of the
 * half of the blocks each step moves. */
double convoy__alltoall_bruck_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1) return 0;
    const double bytes = (double)(a->rcounts[0] * a->rtype.size);
    const int steps = convoy__log2_floor(2 * p - 1);
    const double t = steps * (m->alpha + (m->beta + 1.5 * m->gamma) * bytes * p / 2),
                 w = convoy__shared_cores_work(m, steps, steps * bytes * p / 2);
    return t > w ? t : w;
}
