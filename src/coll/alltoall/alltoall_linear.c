/*
 * Alltoall by posting every send and receive at once (MPICH's MPIR_Alltoall_intra_scattered
 * and Open MPI's basic linear: the "linear round" algorithm papers/004 §3.6 assumes).
 *
 * Idea: each rank posts its p - 1 receives and p - 1 sends together, in the order
 * r + 1, r + 2, ... (receives from r - 1, r - 2, ...) so that the ranks do not all hit the
 * same destination first; the transport overlaps them all.
 *
 * Cost: one round of latency, alpha + beta m (m the bytes of one block), and each further
 * send and receive pair the measured exchange gap (convoy__exchange_cost: the work a
 * rank's posted messages cost it, as Allgatherv direct, the same pattern); unmeasured,
 * alpha + (p - 1) (alpha / 2 + beta m). One round of p - 1 messages per rank: short to
 * medium messages. Charged alpha / 2 per further message, it lost to bruck's two rounds
 * at 4 processes as 2 x 2 on this 2-core host (predicted 6.5 against 5.2 us) where it took
 * 6.1 us against bruck's 10.2 (native 5.8); the gap (0.14 us + 0.128 ns/B measured there)
 * predicts 2.9. Simulated Hydra 4 x 8, 1 int: 31.7 us, predicted 29.0. Where processes
 * share cores, at least share (alpha + (p - 1) m beta) (convoy__shared_cores_work: one wait,
 * the received blocks' copies on the shared cores; np 4 as 2 x 2, 16K ints: 0.95-0.98 of
 * native against pairwise's 1.25-1.31, now chosen in every run).
 *
 * Restrictions: none. In place, the blocks to send are first copied to scratch.
 *
 * Bytes leaving a node: (p - ppn) m per rank on consecutive layouts, as pairwise.
 */
#include "coll/coll.h"

int convoy__alltoall_linear(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    if (a->rcounts[0] == 0) return 0;
    int stage = convoy__a2a_stage(a, s);
    if (!a->inplace)
        convoy__add_copy(s, convoy__a2a_sblock(a, r), convoy__a2a_rblock(a, r), 0, NULL);
    for (int k = 1; k < p; k++) {
        const int src = (r - k + p) % p;
        convoy__add_recv(s, CONVOY_COMM_ALL, src, 0, convoy__a2a_rblock(a, src), CONVOY_DEP(stage));
    }
    for (int k = 1; k < p; k++) {
        const int dst = (r + k) % p;
        convoy__add_send(s, CONVOY_COMM_ALL, dst, 0, convoy__a2a_sblock(a, dst), CONVOY_DEP(stage));
    }
    return s->err;
}

double convoy__alltoall_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    if (p == 1) return 0;
    const double bytes = (double)(a->rcounts[0] * a->rtype.size);
    const double t = m->xgap_node > 0 ? convoy__exchange_cost(m, p - 1, bytes)
                                      : m->alpha + (p - 1) * (m->alpha / 2 + m->beta * bytes),
                 w = convoy__shared_cores_work(m, 1, (p - 1) * bytes);
    return t > w ? t : w;
}
