/*
 * Scan and Exscan by a linear pipeline (Open MPI's basic linear scan, pipelined in blocks
 * as in Sanders and Träff's pipelined prefix sums; the flat baseline of papers/004 §3.5).
 *
 * Idea: the vector is cut into B blocks. Rank r receives the prefix of ranks 0..r-1 for
 * block b from rank r - 1, combines its own block into it and passes the prefix of
 * 0..r on to rank r + 1; block b + 1 follows block b down the chain, so all ranks work at
 * once in the steady state. Scan keeps the inclusive prefix in the receive buffer; Exscan
 * receives the exclusive prefix into the receive buffer and forwards "received op own"
 * from scratch (rank 0 sends its own block, never writing its receive buffer).
 *
 * Cost: (p - 1 + B - 1) (alpha + (beta + gamma) n / B) with n in bytes; the block count B
 * from the model, B = sqrt((p - 2)(beta + gamma) n / alpha) clipped to 1..512 and n, or
 * CONVOY_SCAN_BLOCK (elements per block). Linear in p: long vectors on few processes.
 *
 * Restrictions: none; any count and p.
 *
 * Rank order is kept (CONVOY_ALGO_NONCOMMUTATIVE): every combination is "prefix of the
 * ranks below op own". Each rank's result is combined in its own order; Scan results are
 * not replicated, so the property "same bits" does not apply (CONVOY_ALGO_REPRODUCIBLE:
 * the same inputs give the same bits on every run).
 *
 * Bytes leaving a node: each rank but the last sends n once: (p - 1) n in all; a
 * consecutive node sends n across its boundary, a scattered one up to ppn n.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdio.h>

/* Blocks: CONVOY_SCAN_BLOCK (elements), else the model's count. */
static int64_t nblocks(const convoy__args *a, const convoy__machine *m)
{
    const int64_t n = a->count;
    if (n <= 1) return n;
    int64_t blk = convoy__param_get(a, "CONVOY_SCAN_BLOCK", 0);
    if (blk > 0) {
        int64_t b = (n + blk - 1) / blk;
        return b > 512 ? 512 : b;
    }
    const double bytes = (double)(n * a->rtype.size);
    const int p = a->topo->size;
    double b = p > 2 && m->alpha > 0 ? sqrt((p - 2) * (m->beta + m->gamma) * bytes / m->alpha) : 1;
    if (b < 1) b = 1;
    if (b > 512) b = 512;
    return (int64_t)b > n ? n : (int64_t)b;
}

int convoy__scan_linear(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, ex = a->coll == CONVOY_COLL_EXSCAN;
    const int64_t n = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (n == 0) return 0;
    const int64_t nb = nblocks(a, &a->machine);
#define RECV(lo, hi) convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (lo)*ext, (hi) - (lo))
#define SEND(lo, hi) convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, (lo)*ext, (hi) - (lo))
#define TMP(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (lo)*ext - lb, (hi) - (lo))
    /* Scan: the received prefix goes to scratch and the own block is combined into the
     * receive buffer. Exscan: "received op own" is formed in scratch (rank 0 and the last
     * rank need none); in place, the own block moves to scratch before the prefix lands.
     * Blocks use disjoint parts of scratch, so every receive can be posted at once. */
    if (ex ? r > 0 && r < p - 1 : r > 0) s->tmp_bytes = a->rtype.true_extent + (n - 1) * ext;
    for (int64_t b = 0; b < nb; b++) {
        const int64_t lo = n * b / nb, hi = n * (b + 1) / nb;
        const int tag = (int)b;
        if (!ex) {
            int have = -1;
            if (!a->inplace) have = convoy__add_copy(s, SEND(lo, hi), RECV(lo, hi), 0, NULL);
            if (r > 0) {
                int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, tag, TMP(lo, hi), 0, NULL);
                int deps[2] = {rcv, have};
                have = convoy__add_reduce(s, TMP(lo, hi), RECV(lo, hi), have >= 0 ? 2 : 1, deps);
            }
            if (r < p - 1)
                convoy__add_send(s, CONVOY_COMM_ALL, r + 1, tag, RECV(lo, hi), CONVOY_DEP(have));
            continue;
        }
        const convoy__region own = a->inplace ? RECV(lo, hi) : SEND(lo, hi);
        if (r == 0) {
            if (p > 1) convoy__add_send(s, CONVOY_COMM_ALL, 1, tag, own, 0, NULL);
            continue;
        }
        if (r == p - 1) { /* the prefix is the result (in place too) */
            convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, tag, RECV(lo, hi), 0, NULL);
            continue;
        }
        /* Own block to scratch (first, in place: the prefix overwrites it), prefix into
         * the receive buffer, then scratch = prefix op own, sent on. */
        int cp = convoy__add_copy(s, own, TMP(lo, hi), 0, NULL);
        int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, r - 1, tag, RECV(lo, hi), a->inplace ? 1 : 0,
                                   a->inplace ? (const int[]){cp} : NULL);
        int deps[2] = {rcv, cp};
        int red = convoy__add_reduce(s, RECV(lo, hi), TMP(lo, hi), 2, deps);
        convoy__add_send(s, CONVOY_COMM_ALL, r + 1, tag, TMP(lo, hi), 1, &red);
    }
#undef RECV
#undef SEND
#undef TMP
    return s->err;
}

double convoy__scan_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const int64_t nb = nblocks(a, m);
    const double bytes = (double)(a->count * a->rtype.size);
    return (double)(p - 1 + nb - 1) * (m->alpha + (m->beta + m->gamma) * bytes / (double)nb);
}

void convoy__scan_linear_explain(const convoy__args *a, char *buf, size_t len)
{
    snprintf(buf, len, "%lld blocks of about %lld elements%s", (long long)nblocks(a, &a->machine),
             (long long)(a->count / (nblocks(a, &a->machine) > 0 ? nblocks(a, &a->machine) : 1)),
             convoy__param_get(a, "CONVOY_SCAN_BLOCK", 0) > 0 ? " (CONVOY_SCAN_BLOCK)"
                                                              : " (cost model)");
}
