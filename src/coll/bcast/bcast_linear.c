/*
 * Bcast by a flat fan-out from the root (the basic linear Bcast of MPI libraries; the
 * mirror of Reduce `linear`, src/coll/reduce/reduce_linear.c).
 *
 * Idea: the root posts a send of the whole message to every other rank at once, in rank
 * order from its right neighbour; every other rank receives once. Every message goes
 * straight from and into the user's buffer in the user's datatype: no copies, no scratch
 * (zero copy for any derived datatype).
 *
 * Cost: one message and the root's further sends at LogP's gap g(n) each (convoy__gap):
 * T = alpha + beta n + (P - 2) g(n), n in bytes. Where processes share cores
 * (convoy__shared_cores_bound) every rank but the root waits once, the root not at all:
 * (P - 1) / P waits per rank. Against the binomial tree's ceil(log2 P) whole messages it
 * wins while (P - 2) g is below the tree's further rounds: short messages on few
 * processes, and on shared cores, where each of the tree's rounds waits for a relay that
 * must first be scheduled. Measured at 4 processes on 2 cores (np 4 as 2 x 2, convoy-bench,
 * three runs): 1 and 1K ints 0.63-0.90 and 0.86-0.93 of the MPI library's Bcast and the
 * fastest variant in all three, where the binomial tree took 1.00-1.03 and 0.92-1.06.
 *
 * Restrictions: none; any count, any P, any root.
 *
 * Bytes leaving a node: the root's node sends n to every process of the other nodes:
 * (P - ppn) n, against the tree's at most ceil(log2 P) n; only short messages choose it.
 */
#include "coll/coll.h"

enum { TAG_LINEAR = 0 };

int convoy__bcast_linear(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, root = a->root;
    const convoy__region buf = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count);
    if (a->count == 0 || p == 1) return s->err;
    if (r != root) {
        convoy__add_recv(s, CONVOY_COMM_ALL, root, TAG_LINEAR, buf, 0, NULL);
        return s->err;
    }
    for (int i = 1; i < p; i++)
        convoy__add_send(s, CONVOY_COMM_ALL, (root + i) % p, TAG_LINEAR, buf, 0, NULL);
    return s->err;
}

double convoy__bcast_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const double bytes = (double)(a->count * a->rtype.size);
    const double t = m->alpha + m->beta * bytes + (p - 2) * convoy__gap(m, bytes),
                 w = convoy__shared_cores_bound(m, (double)(p - 1) / p);
    return t > w ? t : w;
}
