/*
 * Reduce_scatter by a ring: the first stage of the ring Allreduce (allreduce_ring.c), with
 * the pieces being the ranks' blocks (Thakur, Rabenseifner, Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 2005; Patarasuk and Yuan,
 * "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009).
 *
 * Idea: block j (rcounts[j] elements at displs[j] of the vector) travels once around the
 * ring and ends at rank j. In round k = 0 .. p-2, rank r sends block (r-k-1) mod p to r+1
 * and receives block (r-k-2) mod p from r-1, which it combines with its own contribution
 * to that block; the block it sends in round k+1 is the one it combined in round k. Block
 * j is thus combined along j+1, j+2, ..., j-1, j, and after p-1 rounds rank r holds block r
 * with all p contributions.
 *
 * Cost, with m = max_j rcounts[j] elements of s bytes: (p-1) (alpha + (beta + gamma) m s),
 * i.e. about (p-1) alpha + n s (beta + gamma) (n = the whole vector) for equal blocks:
 * bandwidth-optimal, latency linear in p; p-1 rounds (0 when every block is empty). Irregular
 * blocks cost by the largest one, which every round carries somewhere.
 *
 * Restrictions: commutative operations only. A block is combined in ring order, starting
 * just above its owner, which wraps around from p-1 to 0: the registry line does not
 * declare CONVOY_ALGO_NONCOMMUTATIVE (reduce_scatter_rechalving.c keeps rank order). Any
 * counts (empty blocks are neither sent, received nor reduced; both sides know the
 * sizes), any p.
 *
 * Bits: each element is computed once, on one chain of ranks fixed by the schedule, so
 * every run with the same arguments gives the same bits (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Details: received blocks land in one of two scratch slots (one block each) and the own
 * contribution is combined into them (slot = own op received); round 0 sends straight from
 * the input, and the last round receives straight into the receive buffer (without
 * MPI_IN_PLACE). With MPI_IN_PLACE the input is the receive buffer, so the last round
 * combines into a slot and copies the result to the buffer's start after every step that
 * read the input. A receive waits for the send that last read its slot and for the
 * previous receive (posted in round order).
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Round k uses tag k mod 1024; matching stays in order when a tag repeats because both
 * sides post their sends and receives in round order. */
enum { TAG_MOD = CONVOY_STEP_TAGS };

int convoy__reduce_scatter_ring(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t ext = a->rtype.extent, *cnt = a->rcounts, *dsp = a->displs;
    const int own_buf = a->inplace ? CONVOY_BUF_RECV : CONVOY_BUF_SEND;
    const int own_slot = a->inplace ? CONVOY_T_RECV : CONVOY_T_SEND;
#define OWN(j) convoy__reg(own_buf, own_slot, dsp[j] * ext, cnt[j])
    if (p == 1) {
        if (!a->inplace && cnt[0] > 0)
            convoy__add_copy(s, OWN(0), convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt[0]), 0,
                             NULL);
        return s->err;
    }
    int64_t maxb = 0;
    for (int j = 0; j < p; j++)
        if (cnt[j] > maxb) maxb = cnt[j];
    if (maxb == 0) return 0;
    s->tmp_bytes = a->rtype.true_extent + (2 * maxb - 1) * ext;
#define SLOT(k, j)                                                                                 \
    convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (k)*maxb *ext - a->rtype.true_lb, cnt[j])

    const int next = (r + 1) % p, prev = (r - 1 + p) % p;
    int last_red = -1;           /* the previous round's reduction: its block is sent next */
    int last_recv = -1;          /* the previous non-empty receive */
    int slot_send[2] = {-1, -1}; /* the send that last read each slot */
    int *readers = a->inplace ? malloc((size_t)(2 * p) * sizeof *readers) : NULL;
    int nreaders = 0; /* in place: every step that reads the input (the receive buffer) */
    if (a->inplace && !readers) return s->err = CONVOY_ERR_NO_MEM;
    for (int k = 0; k < p - 1; k++) {
        const int sb = ((r - k - 1) % p + p) % p, rb = ((r - k - 2) % p + p) % p;
        const int last_round = k == p - 2;
        if (cnt[sb] > 0) {
            if (k == 0) {
                int snd = convoy__add_send(s, CONVOY_COMM_ALL, next, k % TAG_MOD, OWN(sb), 0, NULL);
                if (a->inplace) readers[nreaders++] = snd;
            } else {
                const int sl = (k - 1) % 2;
                slot_send[sl] = convoy__add_send(s, CONVOY_COMM_ALL, next, k % TAG_MOD,
                                                 SLOT(sl, sb), CONVOY_DEP(last_red));
            }
        }
        last_red = -1;
        if (cnt[rb] == 0) continue;
        const int sl = k % 2;
        const int direct = last_round && !a->inplace;
        const convoy__region dst =
            direct ? convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt[rb]) : SLOT(sl, rb);
        int deps[2], nd = 0;
        if (last_recv >= 0) deps[nd++] = last_recv;
        if (!direct && slot_send[sl] >= 0) deps[nd++] = slot_send[sl];
        last_recv = convoy__add_recv(s, CONVOY_COMM_ALL, prev, k % TAG_MOD, dst, nd, deps);
        last_red = convoy__add_reduce(s, OWN(rb), dst, 1, &last_recv); /* own op received */
        if (a->inplace) readers[nreaders++] = last_red;
    }
    /* In place: the result (in a slot) goes to the start of the receive buffer once nothing
     * reads the input any more. */
    if (a->inplace && cnt[r] > 0)
        convoy__add_copy(s, SLOT((p - 2) % 2, r),
                         convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt[r]), nreaders, readers);
    free(readers);
#undef OWN
#undef SLOT
    return s->err;
}

/* p-1 rounds, each carrying and reducing at most the largest block. */
double convoy__reduce_scatter_ring_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    int64_t maxb = 0;
    for (int j = 0; j < p; j++)
        if (a->rcounts[j] > maxb) maxb = a->rcounts[j];
    if (p == 1 || maxb == 0) return 0;
    const double b = (double)(maxb * a->rtype.size);
    return (p - 1) * (m->alpha + (m->beta + m->gamma) * b);
}
