/*
 * Gather and Gatherv by a binomial tree (the Gather of MPICH and Open MPI for more than a
 * few processes).
 *
 * Idea: over relative ranks v = (rank - root) mod p, v collects the blocks of its subtree
 * [v, v + subtree) packed in relative-rank order in scratch memory: its own block first
 * (packed from the send buffer), then each child's packed subtree, smallest child first
 * (it is ready first), and sends the whole range to its parent in one message. The root
 * unpacks each child's blocks into their places as the child's message arrives, and copies
 * its own block unless in place. Packed data travels as bytes on both ends.
 *
 * Cost: ceil(log2 p) alpha + beta (n - m_root) + gamma n for n bytes in all (the root
 * still receives all but its own block; packing and unpacking are one pass over n).
 * Rounds: ceil(log2 p). Every rank must know every block's size: for Gatherv the API
 * broadcasts the counts once per blocking or persistent call (not applicable when only the
 * root knows them: nonblocking Gatherv). Topology-unaware.
 *
 * Restrictions: the counts on every rank. Source: the binomial gather of MPI libraries
 * (MPICH MPIR_Gather_intra_binomial).
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__gather_binomial(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, v = convoy__rooted_vrank(a);
    const int span = convoy__binomial_span(v, p), sub = convoy__binomial_subtree(v, p);
    int64_t *off = convoy__rooted_packed(a, v, sub);
    int *deps = malloc((size_t)(convoy__log2_floor(span) + 2) * sizeof *deps);
    if (!off || !deps) {
        free(off);
        free(deps);
        return CONVOY_ERR_NO_MEM;
    }
#define PACKED(lo, hi) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, off[lo], off[hi] - off[lo])
    int ndeps = 0;
    s->tmp_bytes = off[sub];
    if (v == 0) {
        if (!a->inplace && a->rcounts[a->root] > 0)
            convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, a->root), 0, NULL);
    } else if (off[1] > 0) {
        deps[ndeps++] = convoy__add_copy(s, convoy__rooted_own(a), PACKED(0, 1), 0, NULL);
    }
    for (int m = 1; m < span && v + m < p; m *= 2) {
        const int hi = m + convoy__binomial_subtree(v + m, p);
        if (off[hi] == off[m]) continue;
        const int got = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v + m), 0,
                                         PACKED(m, hi), 0, NULL);
        deps[ndeps++] = got;
        if (v > 0) continue;
        for (int q = m; q < hi; q++) /* the root unpacks */
            if (off[q + 1] > off[q])
                convoy__add_copy(s, PACKED(q, q + 1),
                                 convoy__rooted_block(a, convoy__rooted_rank(a, q)), 1, &got);
    }
    if (v > 0 && off[sub] > 0)
        convoy__add_send(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v - span), 0, PACKED(0, sub),
                         ndeps, deps);
#undef PACKED
    free(off);
    free(deps);
    return s->err;
}

double convoy__gather_binomial_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1) return 0;
    const int64_t total = convoy__rooted_total(a);
    const double n = (double)(total - convoy__rooted_bytes(a, a->root));
    return (convoy__log2_floor(p - 1) + 1) * m->alpha + m->beta * n + m->gamma * (double)total;
}
