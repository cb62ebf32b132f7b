/*
 * Gather and Gatherv, linear: every rank sends its block straight to the root (the Gatherv
 * of MPICH and Open MPI, and their Gather for few processes).
 *
 * Idea: the root posts one receive per other rank, straight into its block of the receive
 * buffer in the receive datatype; each rank sends from its send buffer in its send
 * datatype (equal signatures, as MPI requires); the root copies its own block unless in
 * place. No scratch memory, no packing (zero copy for any derived datatype). Empty blocks
 * are not sent (both ends know the count). Reads no other rank's count: it serves the
 * nonblocking Gatherv, where only the root knows the counts.
 *
 * Cost: the root's p - 1 receives are posted at once: one latency, alpha + beta b (b the
 * mean block of the others), and each further block the measured gap (convoy__posted_cost:
 * what each further message of a burst costs its receiver, per message and per byte);
 * unmeasured, (p - 1) alpha + beta (n - m_root) for n bytes in all, as if each block took
 * a round. Topology-unaware: the root's node receives everything from outside its node.
 * Charged a round per block it lost to binomial and hier at 4 processes as 2 x 2 on this
 * 2-core host (predicted 7.6 against 5.1 us); the gap predicts 2.7 and it is chosen there.
 * Back to back (rotating roots), the chosen algorithm against the library's: Gather 1 int
 * hier 1.65 -> linear 0.78-0.85, 1K ints 1.46-1.71 -> 1.26, 64K 1.50 -> 0.94; Scatter 1 int
 * 3.35 -> 1.35-1.68, 1K 0.87 either way.
 *
 * Restrictions: none. Source: the linear gather of MPI libraries (MPICH
 * MPIR_Gatherv_allcomm_linear).
 */
#include "coll/coll.h"

int convoy__gather_linear(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    if (t->rank != a->root) {
        if (a->count * a->stype.size > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, a->root, 0, convoy__rooted_own(a), 0, NULL);
        return s->err;
    }
    if (!a->inplace && a->rcounts[t->rank] > 0)
        convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, t->rank), 0, NULL);
    for (int k = 1; k < t->size; k++) {
        const int i = convoy__rooted_rank(a, k);
        if (convoy__rooted_bytes(a, i) > 0)
            convoy__add_recv(s, CONVOY_COMM_ALL, i, 0, convoy__rooted_block(a, i), 0, NULL);
    }
    return s->err;
}

/* The root's p - 1 receives, posted at once (file comment). */
double convoy__gather_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p < 2) return 0;
    /* Where counts_local only the root knows the counts: the bytes are left out, so that
     * every rank computes the same cost. */
    const double n =
        a->counts_local ? 0 : (double)(convoy__rooted_total(a) - convoy__rooted_bytes(a, a->root));
    if (m->gap > 0) return convoy__posted_cost(m, p - 1, n / (p - 1));
    return (p - 1) * m->alpha + m->beta * n;
}
