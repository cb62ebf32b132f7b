/*
 * Scan and Exscan by recursive doubling in Hillis and Steele's form (W. D. Hillis, G. L.
 * Steele, "Data parallel algorithms", CACM 1986; MPICH's MPIR_Scan_intra_recursive_doubling
 * computes the same prefixes with xor partners; the flat baseline of papers/004 §3.5).
 *
 * Idea: after the step at distance d/2 rank r holds x = the combination of ranks
 * max(0, r - d + 1) .. r. At distance d = 1, 2, 4, ... it sends x to r + d and receives
 * y = x of rank r - d, which covers the ranks directly below its own x, so x := y op x.
 * Scan: x is the result (in the receive buffer). Exscan keeps e = x without the own
 * contribution as well: the first y (d = 1) is e, every later one is combined in,
 * e := y op e; x lives in scratch and is only updated while it will still be sent.
 *
 * Cost: ceil(log2 p) (alpha + (beta + gamma) n) with n in bytes (Exscan: + gamma n per
 * step); ceil(log2 p) rounds. Latency-optimal: short vectors.
 *
 * Restrictions: none; any count and p.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): y's ranks lie directly below x's (and
 * e's), and y is the first operand. Every rank's result is combined in a fixed order
 * (CONVOY_ALGO_REPRODUCIBLE).
 *
 * Bytes leaving a node: each rank sends x (n) at every distance with a partner:
 * about p log2 p n in all, ppn log2(p / ppn) n per consecutive node at the large distances.
 */
#include "coll/coll.h"

/* Tags: distance 2^j uses j. */

int convoy__scan_recdbl(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, ex = a->coll == CONVOY_COLL_EXSCAN;
    const int64_t n = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (n == 0) return 0;
    const int64_t vec = (a->rtype.true_extent + (n - 1) * ext + 15) / 16 * 16;
    const convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n);
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    /* Y: received partial results; X: Exscan's x. */
    const convoy__region Y = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -lb, n);
    const convoy__region X = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, vec - lb, n);
    if (r > 0) s->tmp_bytes = ex ? 2 * vec : vec;

    convoy__region x = a->inplace ? recv : send;
    int xs = -1;                   /* the step that last wrote x */
    int elast = -1;                /* Exscan: the step that last wrote e (the receive buffer) */
    int yr[2] = {-1, -1}, nyr = 0; /* the steps that read Y last: its next receive waits */
    if (!ex && !a->inplace) {
        xs = convoy__add_copy(s, send, recv, 0, NULL);
        x = recv;
    } else if (ex && a->inplace && r > 0) {
        /* The receive buffer becomes e at d = 1: x leaves it first (sending x from the
         * receive buffer instead would make that receive wait for the send's match, a
         * chain through all ranks under synchronous sends). */
        xs = convoy__add_copy(s, recv, X, 0, NULL);
        x = X;
    }
    for (int d = 1, j = 0; d < p; d <<= 1, j++) {
        int snd =
            r + d < p ? convoy__add_send(s, CONVOY_COMM_ALL, r + d, j, x, CONVOY_DEP(xs)) : -1;
        if (r - d < 0) continue;
        /* x changes only after this step's send read it. */
        int xd[3] = {-1, xs, snd}, nxd = 1;
        if (xs >= 0) xd[nxd++] = xs;
        if (snd >= 0) xd[nxd++] = snd;
        if (!ex) {
            xd[0] = convoy__add_recv(s, CONVOY_COMM_ALL, r - d, j, Y, nyr, yr);
            xs = yr[0] = convoy__add_reduce(s, Y, recv, nxd, xd);
            nyr = 1;
            continue;
        }
        const int need_x = r + 2 * d < p; /* x is sent again */
        if (d == 1) {
            /* y is e. x (the own contribution) is copied to scratch if it is sent again and
             * not there yet (in place it is). */
            int cp = xs;
            if (need_x && x.buf != CONVOY_BUF_TMP) cp = convoy__add_copy(s, x, X, 0, NULL);
            elast = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, j, recv, CONVOY_DEP(xs));
            if (need_x) {
                int deps[3] = {elast, cp, snd};
                /* It reads e: e's next update waits for it. */
                elast = xs = convoy__add_reduce(s, recv, X,
                                                snd >= 0 && x.buf == CONVOY_BUF_TMP ? 3 : 2, deps);
                x = X;
            }
            continue;
        }
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - d, j, Y, nyr, yr);
        int ed[2] = {rcv, elast};
        elast = yr[0] = convoy__add_reduce(s, Y, recv, 2, ed);
        nyr = 1;
        if (need_x) {
            xd[0] = rcv;
            xs = yr[nyr++] = convoy__add_reduce(s, Y, X, nxd, xd);
        }
    }
    return s->err;
}

double convoy__scan_recdbl_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const double bytes = (double)(a->count * a->rtype.size);
    const int ex = a->coll == CONVOY_COLL_EXSCAN;
    return convoy__log2_floor(2 * p - 1) * (m->alpha + (m->beta + (ex ? 2 : 1) * m->gamma) * bytes);
}
