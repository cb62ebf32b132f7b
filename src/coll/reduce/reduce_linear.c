/*
 * Reduce by a flat fan-in to the root (Open MPI's basic linear Reduce, which its fixed
 * decision rules have long used for few processes and short vectors; the Reduce
 * counterpart of Barrier `linear`, src/coll/barrier/barrier_linear.c).
 *
 * Idea: every rank but the root sends its vector to the root. The root posts all P - 1
 * receives at once and folds the vectors from the right: acc = x_{P-1}, then acc = x_q op
 * acc for q = P-2, ..., 0, so the result is x_0 op (x_1 op (... op x_{P-1})): operands in
 * rank order (non-commutative operations) and every element combined in one fixed order
 * on one process (reproducible). x_{P-1} is received straight into the receive buffer,
 * the others into scratch; a combination waits for its operand's message and for the
 * combination before it.
 *
 * Cost: one message, the root's further receives at LogP's gap g(n) each (convoy__gap),
 * and its P - 1 combinations: T = alpha + beta n + (P - 2) g(n) + (P - 1) gamma n, n in
 * bytes. Where processes share cores (convoy__shared_cores_bound) only the root waits, once
 * for all its messages: 1 / P waits per rank. Against the binomial tree's ceil(log2 P)
 * (alpha + (beta + gamma) n) it wins while (P - 2) g is below the tree's further rounds:
 * short vectors on few processes, and on shared cores, where each of the tree's rounds
 * waits for a process that must first be scheduled. Measured at 4 processes on 2 cores
 * (np 4 as 2 x 2, convoy-bench, four runs): 1 int 0.54-0.66 of the MPI library's Reduce and
 * the fastest variant in all four, where the binomial tree took 0.99-1.30; 1K ints
 * 0.64-0.77 (`lane` 0.58-0.74, binomial 0.82-0.85).
 *
 * Restrictions: none; any count, any P, any root, in place at the root.
 *
 * Scratch at the root: P - 1 vectors (slot q for x_q, q < P - 1; the root's own slot holds
 * its input only when it reduces in place and is not P - 1). Elsewhere none: a rank sends
 * straight from its send buffer.
 *
 * Bytes leaving a node: each rank but the root sends n once: ppn n from a node without the
 * root.
 */
#include "coll/coll.h"

enum { TAG_LINEAR = 0 };

/* One vector in the root's scratch, rounded up to 16 bytes so that every slot is aligned. */
static int64_t vec_bytes(const convoy__args *a)
{
    return (a->rtype.true_extent + (a->count - 1) * a->rtype.extent + 15) / 16 * 16;
}

/* Slot q of the root's scratch. */
static convoy__region slot(const convoy__args *a, int q)
{
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, q * vec_bytes(a) - a->rtype.true_lb,
                       a->count);
}

int convoy__reduce_linear(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, root = a->root;
    const int64_t n = a->count;
    if (n == 0) return 0;
    const convoy__region send = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n);
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n);
    if (r != root) {
        convoy__add_send(s, CONVOY_COMM_ALL, root, TAG_LINEAR, send, 0, NULL);
        return s->err;
    }
    if (p == 1) {
        if (!a->inplace) convoy__add_copy(s, send, recv, 0, NULL);
        return s->err;
    }
    s->tmp_bytes = (p - 1) * vec_bytes(a);
    /* The root's input; in place, moved out of the receive buffer first unless it is the
     * rightmost operand, which starts the fold where it is. */
    convoy__region own = a->inplace ? recv : send;
    int acc = -1; /* the step after which the receive buffer holds the fold so far */
    if (root == p - 1) {
        if (!a->inplace) acc = convoy__add_copy(s, send, recv, 0, NULL);
    } else {
        int moved = -1;
        if (a->inplace) {
            own = slot(a, root);
            moved = convoy__add_copy(s, recv, own, 0, NULL);
        }
        acc = convoy__add_recv(s, CONVOY_COMM_ALL, p - 1, TAG_LINEAR, recv, CONVOY_DEP(moved));
    }
    /* Each receive depends on nothing, so all are posted at the start wherever they stand. */
    for (int q = p - 2; q >= 0; q--) {
        int deps[2], nd = 0;
        if (acc >= 0) deps[nd++] = acc;
        if (q != root)
            deps[nd++] = convoy__add_recv(s, CONVOY_COMM_ALL, q, TAG_LINEAR, slot(a, q), 0, NULL);
        acc = convoy__add_reduce(s, q == root ? own : slot(a, q), recv, nd, deps);
    }
    return s->err;
}

double convoy__reduce_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1 || a->count == 0) return 0;
    const double bytes = (double)(a->count * a->rtype.size);
    const double t = m->alpha + m->beta * bytes + (p - 2) * convoy__gap(m, bytes) +
                     (p - 1) * m->gamma * bytes,
                 w = convoy__shared_cores_bound(m, 1.0 / p);
    return t > w ? t : w;
}
