/*
 * Allgatherv in one round: every process sends its block straight to every other one
 * (the direct exchange; the (p-1)-port limit of papers/003's n-way dissemination with
 * n = p - 1, one round, applied to data: every rank's window is complete after round 1).
 *
 * Idea: rank r posts a receive of block q from q for every q != r (each into its final
 * place) and sends its own block to every q != r, all at once: no step waits for another,
 * so the whole operation is one round in which every message's latency overlaps every
 * other's. On a kept blocking call such a schedule runs in the one-round message path
 * (src/api/round.c: posted together, one wait), which is why it wins where a process's
 * chance to run is what a message costs (processes sharing cores): a ring or Bruck
 * exchange needs each process to run again between rounds, this one only once to post and
 * once to see its receives.
 *
 * Cost: one alpha, each further message of the round its injection gap alpha / 4 (as
 * Barrier dissem counts it), and every byte a rank receives: alpha + (p - 2) alpha / 4 +
 * beta (sum of the blocks; the same on every rank, as the choice must be). Where the setup
 * measured the exchange gap (coll.h, convoy__xgap: a process's serialised work for a
 * message it sends and one it receives), alpha + beta b + (p - 2) xgap(b) for the mean
 * block b: the simulated Hydra charges each send and receive 0.5 us + 0.125 ns/B on its
 * process, so 8 processes of 512-byte blocks take about 9 us where the alpha / 4 gaps
 * predicted 4.9 (the lane Bcast's node allgatherv at 4 x 8, 1024 ints). p - 1 messages per rank
 * at once, so only for p <= 8 (the ports dissem uses at most); beyond, Bruck and the ring need
 * fewer messages in flight.
 *
 * Details: the own block is copied to its place (not in place) with no dependency; each
 * ordered pair exchanges at most one message, so one tag suffices; empty blocks are neither
 * sent nor received (both sides know the counts); receives go straight into the receive
 * buffer in the receive type (any displacements, derived types), sends leave from the own
 * block (the send buffer, or the receive buffer's own block in place). Receives are posted
 * before the sends, from the nearest lower rank down, sends to the nearest higher rank up.
 */
#include "coll/coll.h"

/* An extra message within the round costs this fraction of alpha (barrier_dissem.c). */
#define DIRECT_GAP 0.25
#define DIRECT_PMAX 8

int convoy__allgatherv_direct_applicable(const convoy__args *a)
{
    return a->topo->size <= DIRECT_PMAX;
}

int convoy__allgatherv_direct(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    convoy__agv_copy_own(a, s);
    for (int k = 1; k < p; k++) {
        const int q = (r - k + p) % p;
        if (a->rcounts[q] > 0)
            convoy__add_recv(s, CONVOY_COMM_ALL, q, 0, convoy__agv_block(a, q), CONVOY_DEP(-1));
    }
    if (a->rcounts[r] > 0)
        for (int k = 1; k < p; k++)
            convoy__add_send(s, CONVOY_COMM_ALL, (r + k) % p, 0, convoy__agv_own(a),
                             CONVOY_DEP(-1));
    return s->err;
}

double convoy__allgatherv_direct_cost(const convoy__args *a, const convoy__machine *m)
{
    /* (The same on every rank, which all choose alike: the bytes of all blocks.) */
    const int p = a->topo->size;
    if (p <= 1) return 0;
    int64_t bytes = 0;
    for (int i = 0; i < p; i++)
        bytes += a->rcounts[i] * a->rtype.size;
    /* Measured: each rank's p - 1 sends and p - 1 receives cost it their serialised work,
     * each further pair the exchange gap (coll.h), for the mean block. */
    if (m->xgap_node > 0) return convoy__exchange_cost(m, p - 1, (double)bytes / p);
    return m->alpha + (p - 2) * DIRECT_GAP * m->alpha + m->beta * (double)bytes;
}
