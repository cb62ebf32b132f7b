/*
 * Scatter and Scatterv, linear: the root sends every rank its block straight from the send
 * buffer (the Scatterv of MPICH and Open MPI, and their Scatter for few processes).
 *
 * Idea: the mirror of the linear Gather: one send per other rank from its block of the
 * root's send buffer in the send datatype, received straight into the receive buffer in
 * the receive datatype; the root copies its own block unless in place. No scratch memory,
 * no packing (zero copy for any derived datatype); empty blocks are not sent. Reads no
 * other rank's count: it serves the nonblocking Scatterv.
 *
 * Cost: (p - 1) alpha + beta (n - m_root) for n bytes in all. Topology-unaware: the
 * root's node sends everything that leaves it.
 *
 * Restrictions: none. Source: the linear scatter of MPI libraries (MPICH
 * MPIR_Scatterv_allcomm_linear).
 */
#include "coll/coll.h"

int convoy__scatter_linear(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    if (t->rank != a->root) {
        if (a->count * a->rtype.size > 0)
            convoy__add_recv(s, CONVOY_COMM_ALL, a->root, 0, convoy__rooted_own(a), 0, NULL);
        return s->err;
    }
    if (!a->inplace && a->rcounts[t->rank] > 0)
        convoy__add_copy(s, convoy__rooted_block(a, t->rank), convoy__rooted_own(a), 0, NULL);
    for (int k = 1; k < t->size; k++) {
        const int i = convoy__rooted_rank(a, k);
        if (convoy__rooted_bytes(a, i) > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, i, 0, convoy__rooted_block(a, i), 0, NULL);
    }
    return s->err;
}

double convoy__scatter_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__gather_linear_cost(a, m);
}
