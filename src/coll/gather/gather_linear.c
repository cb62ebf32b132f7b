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
 * Cost: (p - 1) alpha + beta (n - m_root) for n bytes in all: the root's link carries every
 * block in turn. One round per block at the root (p - 1 lockstep rounds). Topology-unaware:
 * the root's node receives everything from outside its node.
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

/* The root receives p - 1 blocks in turn. */
double convoy__gather_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (a->counts_local) return (p - 1) * m->alpha; /* only the root knows more */
    const double n = (double)(convoy__rooted_total(a) - convoy__rooted_bytes(a, a->root));
    return (p - 1) * m->alpha + m->beta * n;
}
