/*
 * Bcast by a binomial tree (the short-message Bcast of MPICH and Open MPI).
 *
 * Idea: over relative ranks v = (rank - root) mod p, v > 0 receives the whole message from
 * its parent (v minus its lowest set bit), then sends it to its children v + m for m =
 * lowest set bit / 2, / 4, ..., 1 (the root: every power of two below p), largest subtree
 * first. Every message goes straight from and into the user's buffer in the user's
 * datatype: no copies, no scratch memory (zero copy for any derived datatype).
 *
 * Cost: ceil(log2 p) (alpha + beta n) for n bytes where p is a power of two; otherwise the
 * slowest leaf's path, where a send after its siblings' costs only alpha / 2 + beta n more
 * (a node posts its sends at once: convoy__binomial_bcast_cost; 36 processes: 5 whole
 * messages and one such share, not 6 whole ones; simulated Hydra 36 x 1 at 576 bytes:
 * 11.4 us, 13.9 predicted by the 6 rounds, 12.8 now). Rounds: ceil(log2 p). Topology-unaware:
 * with one process per node receiving, a node's inter-node bytes are up to
 * ceil(log2 p) n (the root's node) and n (every other node's, in).
 *
 * Restrictions: none. Source: the standard binomial tree (e.g. Thakur, Rabenseifner and
 * Gropp 2005); papers/004 §3 compares its Bcast with these libraries' ones.
 */
#include "coll/coll.h"

int convoy__bcast_binomial(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, v = convoy__rooted_vrank(a);
    const convoy__region buf = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count);
    if (a->count == 0 || p == 1) return s->err;
    int got = -1;
    const int span = convoy__binomial_span(v, p);
    if (v > 0)
        got =
            convoy__add_recv(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v - span), 0, buf, 0, NULL);
    for (int m = span / 2; m >= 1; m /= 2)
        if (v + m < p)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__rooted_rank(a, v + m), 0, buf,
                             CONVOY_DEP(got));
    return s->err;
}

double convoy__bcast_binomial_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    return convoy__binomial_bcast_cost(m, p, (double)(a->count * a->rtype.size));
}
