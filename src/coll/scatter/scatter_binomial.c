/*
 * Scatter and Scatterv by a binomial tree (the Scatter of MPICH and Open MPI for more than
 * a few processes).
 *
 * Idea: the mirror of the binomial Gather. The root packs the other ranks' blocks in
 * relative-rank order into scratch memory (each child's range as soon as its blocks are
 * packed) and sends each child its subtree's range, largest subtree first; relative rank
 * v > 0 receives its subtree's packed blocks from its parent, passes on each child's range
 * and unpacks its own block into the receive buffer. Packed data travels as bytes.
 *
 * Cost: ceil(log2 p) alpha + beta (n - m_root) + gamma n for n bytes in all. Rounds:
 * ceil(log2 p). Needs every block's size on every rank (the API broadcasts Scatterv's
 * counts once per blocking or persistent call). Topology-unaware.
 *
 * Restrictions: the counts on every rank. Source: the binomial scatter of MPI libraries
 * (MPICH MPIR_Scatter_intra_binomial).
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__scatter_binomial(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, v = convoy__rooted_vrank(a);
    const int span = convoy__binomial_span(v, p), sub = convoy__binomial_subtree(v, p);
    int64_t *off = convoy__rooted_packed(a, v, sub);
    int *packs = malloc((size_t)(sub + 1) * sizeof *packs);
    if (!off || !packs) {
        free(off);
        free(packs);
        return CONVOY_ERR_NO_MEM;
    }
#define PACKED(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, off[lo], off[hi] - off[lo])
    s->tmp_bytes = off[sub];
    int got = -1;
    if (v == 0) {
        if (!a->inplace && a->rcounts[a->root] > 0)
            convoy__add_copy(s, convoy__rooted_block(a, a->root), convoy__rooted_own(a), 0, NULL);
    } else if (off[sub] > 0) {
        got = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v - span), 0,
                               PACKED(0, sub), 0, NULL);
        if (off[1] > 0) convoy__add_copy(s, PACKED(0, 1), convoy__rooted_own(a), 1, &got);
    }
    for (int m = span / 2; m >= 1; m /= 2) {
        if (v + m >= p) continue;
        const int hi = m + convoy__binomial_subtree(v + m, p);
        if (off[hi] == off[m]) continue;
        /* The root packs the child's range first; the others wait for their own range. */
        int ndeps = 0;
        if (v > 0) packs[ndeps++] = got;
        for (int q = m; v == 0 && q < hi; q++)
            if (off[q + 1] > off[q])
                packs[ndeps++] =
                    convoy__add_copy(s, convoy__rooted_block(a, convoy__rooted_rank(a, q)),
                                     PACKED(q, q + 1), 0, NULL);
        convoy__add_send(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v + m), 0, PACKED(m, hi), ndeps,
                         packs);
    }
#undef PACKED
    free(off);
    free(packs);
    return s->err;
}

double convoy__scatter_binomial_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__gather_binomial_cost(a, m);
}
