/*
 * Alltoall by pairwise exchange (MPICH's MPIR_Alltoall_intra_pairwise for long messages,
 * Open MPI's tuned "pairwise"; Thakur, Rabenseifner, Gropp, IJHPCA 2005, §3.6; the flat
 * baseline of papers/004 §3.6).
 *
 * Idea: p - 1 steps; at step k = 1..p-1 rank r sends its block for r + k and receives the
 * block of r - k (mod p), so every step is a permutation and each process has one send
 * and one receive in flight. A step starts when the previous one is done (as MPICH's
 * Sendrecv loop).
 *
 * Cost: (p - 1) (alpha + beta m) with m the bytes of one block; p - 1 rounds. Optimal in
 * volume for a direct algorithm: long messages. Where processes share cores, at least
 * share ((p - 1) alpha + (p - 1) m beta) (convoy__shared_cores_work: every step's copies
 * run on the shared cores; np 4 as 2 x 2, 16K ints: 21-23 us a step measured, the latency
 * model's 12, 1.25-1.36 of native where it was chosen over linear).
 *
 * Restrictions: none; any counts and p. In place, the blocks to send are first copied to
 * scratch (p blocks).
 *
 * Bytes leaving a node: each rank sends (p - ppn) m to other nodes on a consecutive layout
 * (ppn (p - ppn) m per node): every block crosses at most once, the least any algorithm
 * can send.
 */
#include "coll/coll.h"

int convoy__alltoall_pairwise(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    if (a->rcounts[0] == 0) return 0;
    int prev[2], np = 0;
    int stage = convoy__a2a_stage(a, s);
    if (stage >= 0) prev[np++] = stage;
    if (!a->inplace)
        convoy__add_copy(s, convoy__a2a_sblock(a, r), convoy__a2a_rblock(a, r), 0, NULL);
    for (int k = 1; k < p; k++) {
        const int dst = (r + k) % p, src = (r - k + p) % p;
        int snd =
            convoy__add_send(s, CONVOY_COMM_ALL, dst, 0, convoy__a2a_sblock(a, dst), np, prev);
        int rcv =
            convoy__add_recv(s, CONVOY_COMM_ALL, src, 0, convoy__a2a_rblock(a, src), np, prev);
        prev[0] = snd;
        prev[1] = rcv;
        np = 2;
    }
    return s->err;
}

double convoy__alltoall_pairwise_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    const double bytes = (double)(a->rcounts[0] * a->rtype.size);
    const double t = (p - 1) * (m->alpha + m->beta * bytes),
                 w = convoy__shared_cores_work(m, p - 1, (p - 1) * bytes);
    return t > w ? t : w;
}
