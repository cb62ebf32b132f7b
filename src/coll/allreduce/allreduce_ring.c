/*
 * Allreduce by a ring: reduce-scatter by a ring, then allgather by a ring (Thakur,
 * Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH",
 * IJHPCA 2005; the flat-ring baseline of papers/001 and papers/003).
 *
 * Idea: the vector is cut into p pieces of whole elements, as equal as possible (piece i
 * has n/p elements, one more for i < n mod p). Reduce-scatter: in round k = 0 .. p-2,
 * rank r sends piece (r-k-1) mod p to r+1 and receives piece (r-k-2) mod p from r-1,
 * which it combines with its own contribution; the piece it sends in round k+1 is the one
 * it combined in round k, so after p-1 rounds piece r holds all p contributions at rank
 * r. Allgather: in round k rank r forwards piece (r-k) mod p to r+1 and receives piece
 * (r-k-1) mod p from r-1 straight into its final place.
 *
 * Cost, with m = ceil(n/p) elements of s bytes: 2 (p-1) (alpha + beta m s) +
 * (p-1) gamma m s, i.e. about 2 (p-1) alpha + 2 n s beta + n s gamma: bandwidth-optimal,
 * latency linear in p; 2 (p-1) rounds. For n < p the rounds stay (the non-empty pieces
 * still travel p-1 hops each way), only the bytes shrink.
 *
 * Restrictions: commutative operations only. A piece is combined in ring order starting
 * just above the rank that ends up owning it (r+1, r+2, ..., r-1, r), which is not rank
 * order, so the registry line does not declare CONVOY_ALGO_NONCOMMUTATIVE. Any count
 * (empty pieces are neither sent, received nor reduced; both sides know the sizes), any p.
 *
 * Bits: every piece is reduced once, along one chain of ranks, and then only copied, so
 * all ranks get bitwise identical results (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Details: without MPI_IN_PLACE nothing is copied first: round 0 sends from the send
 * buffer, and each received piece lands in its place in the receive buffer, where the own
 * contribution is combined into it from the send buffer; no scratch memory. With
 * MPI_IN_PLACE a received piece goes to one of two scratch slots (one piece each) and is
 * combined into the receive buffer. Each receive waits for the previous one of its phase,
 * so receives are posted in round order (one in flight: the sender forwards round k only
 * after its own round k-1 arrived, so an earlier post would gain little), and for the
 * reduction that last read its slot. An allgather receive also waits for the
 * reduce-scatter send that read the same piece.
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Tags: reduce-scatter round k uses TAG_RS + k mod 512, allgather TAG_AG + k mod 512.
 * Matching stays in order when a tag repeats (p > 512) because every rank posts its
 * sends and its receives of a phase in round order. */
enum { TAG_RS = 0, TAG_AG = 512, TAG_MOD = 512 };

static int64_t piece_off(int64_t n, int p, int i)
{
    const int64_t base = n / p, extra = n % p;
    return i * base + (i < extra ? i : extra);
}

static int64_t piece_len(int64_t n, int p, int i)
{
    return n / p + (i < n % p ? 1 : 0);
}

int convoy__allreduce_ring(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t n = a->count, ext = a->rtype.extent;
    if (n == 0) return 0;
    if (p == 1) {
        if (!a->inplace)
            convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n),
                             convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n), 0, NULL);
        return s->err;
    }
    const int next = (r + 1) % p, prev = (r - 1 + p) % p;
    const int64_t maxpiece = piece_len(n, p, 0);
    if (a->inplace) s->tmp_bytes = a->rtype.true_extent + (2 * maxpiece - 1) * ext;

    /* Reduce-scatter. */
    int last_red = -1;          /* the reduction of the previous round: its piece is sent next */
    int last_recv = -1;         /* the previous non-empty receive */
    int slot_red[2] = {-1, -1}; /* the reduction that last read each scratch slot */
    int nrecv = 0;              /* non-empty receives so far: picks the slot (in place) */
    /* Per round: the send, which reads the piece the allgather's same round refills. */
    int *rs_send = malloc((size_t)(p - 1) * sizeof *rs_send);
    if (!rs_send) return s->err = CONVOY_ERR_NO_MEM;
    for (int k = 0; k < p - 1; k++) {
        const int sp = ((r - k - 1) % p + p) % p, rp = ((r - k - 2) % p + p) % p;
        const int64_t slen = piece_len(n, p, sp), rlen = piece_len(n, p, rp);
        rs_send[k] = -1;
        if (slen > 0) {
            convoy__region src =
                k == 0 && !a->inplace
                    ? convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, piece_off(n, p, sp) * ext, slen)
                    : convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, piece_off(n, p, sp) * ext, slen);
            rs_send[k] = convoy__add_send(s, CONVOY_COMM_ALL, next, TAG_RS + k % TAG_MOD, src,
                                          CONVOY_DEP(k == 0 ? -1 : last_red));
        }
        last_red = -1;
        if (rlen == 0) continue;
        const convoy__region dst =
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, piece_off(n, p, rp) * ext, rlen);
        const int slot = nrecv++ % 2;
        int deps[2], nd = 0;
        if (last_recv >= 0) deps[nd++] = last_recv;
        if (a->inplace) {
            const convoy__region tmp = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV,
                                                   slot * maxpiece * ext - a->rtype.true_lb, rlen);
            if (slot_red[slot] >= 0) deps[nd++] = slot_red[slot];
            int rcv =
                convoy__add_recv(s, CONVOY_COMM_ALL, prev, TAG_RS + k % TAG_MOD, tmp, nd, deps);
            last_red = convoy__add_reduce(s, tmp, dst, 1, &rcv); /* mine = received op mine */
            slot_red[slot] = last_red;
            last_recv = rcv;
        } else {
            /* The piece's place in the receive buffer is untouched so far: no reader to wait
             * for. The own contribution is combined in from the send buffer. */
            int rcv =
                convoy__add_recv(s, CONVOY_COMM_ALL, prev, TAG_RS + k % TAG_MOD, dst, nd, deps);
            convoy__region own =
                convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, piece_off(n, p, rp) * ext, rlen);
            last_red = convoy__add_reduce(s, own, dst, 1, &rcv); /* commutative: mine first */
            last_recv = rcv;
        }
    }

    /* Allgather: piece r is complete after the last reduction (last_red, or -1 if empty). */
    int fwd = last_red; /* the step that completed the piece sent this round */
    last_recv = -1;
    for (int k = 0; k < p - 1; k++) {
        const int sp = ((r - k) % p + p) % p, rp = ((r - k - 1) % p + p) % p;
        const int64_t slen = piece_len(n, p, sp), rlen = piece_len(n, p, rp);
        if (slen > 0)
            convoy__add_send(
                s, CONVOY_COMM_ALL, next, TAG_AG + k % TAG_MOD,
                convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, piece_off(n, p, sp) * ext, slen),
                CONVOY_DEP(fwd));
        fwd = -1;
        if (rlen == 0) continue;
        /* The piece's place was last read by reduce-scatter round k's send (same piece). */
        int deps[2], nd = 0;
        if (last_recv >= 0) deps[nd++] = last_recv;
        if (rs_send[k] >= 0) deps[nd++] = rs_send[k];
        fwd = last_recv = convoy__add_recv(
            s, CONVOY_COMM_ALL, prev, TAG_AG + k % TAG_MOD,
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, piece_off(n, p, rp) * ext, rlen), nd, deps);
    }
    free(rs_send);
    return s->err;
}

/* 2 (p-1) rounds of one piece each, half of them with a reduction of the piece. */
double convoy__allreduce_ring_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const double piece = (double)(piece_len(a->count, p, 0) * a->rtype.size);
    return 2.0 * (p - 1) * (m->alpha + m->beta * piece) + (p - 1) * m->gamma * piece;
}
