/*
 * Allgatherv by the standard linear ring (papers/002_0aef061110c1ae58.txt, §2.1).
 *
 * Idea: in round k = 0 .. p-2, process i sends the block it learnt in the previous round
 * (its own in round 0), block (i - k) mod p, to (i + 1) mod p, and receives block
 * (i - k - 1) mod p from (i - 1) mod p. Every block travels p - 1 hops; each process
 * sends and receives once per round, so a single-ported, bidirectional network is used
 * to full capacity on regular data.
 *
 * Cost: (p - 1) alpha + beta * sum over rounds of the largest block moved in that round,
 * i.e. about (p - 1)(alpha + beta max m_i): poor for irregular data (the pipelined ring of
 * §2.2 fixes that), optimal for large regular data. p - 1 rounds.
 *
 * Details: the own block is sent straight from the send buffer (no copy first); empty
 * blocks are neither sent nor received (both sides know the counts); each receive goes
 * straight into its final place, so no scratch memory is needed and any derived receive
 * datatype is used as is (zero copy). A receive is posted once the one two rounds before
 * it completed: early enough that no message waits for its receive, and few enough in
 * flight that testing them does not grow with p. Round k's tag is k mod 1024; beyond 1025
 * processes a tag repeats, and the send (receive) of round k then also waits for the one of
 * round k - 1024, so the two messages of a tag are posted in order on both sides (MPI
 * reports completions in any order; the window alone orders them only without empty
 * blocks).
 */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__allgatherv_ring(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    convoy__agv_copy_own(a, s);
    const int next = (r + 1) % p, prev = (r - 1 + p) % p;
    int last_recv = -1;       /* the receive of the block this process forwards next */
    int window[2] = {-1, -1}; /* the last two receives, oldest first */
    /* Per tag, the last send and receive that used it (only where tags repeat). */
    int *same = p - 1 > CONVOY_STEP_TAGS ? malloc(2 * CONVOY_STEP_TAGS * sizeof *same) : NULL;
    if (p - 1 > CONVOY_STEP_TAGS && !same) return s->err = CONVOY_ERR_NO_MEM;
    for (int t = 0; same && t < 2 * CONVOY_STEP_TAGS; t++)
        same[t] = -1;
    for (int k = 0; k < p - 1; k++) {
        const int sb = ((r - k) % p + p) % p, rb = ((r - k - 1) % p + p) % p;
        const int tag = k % CONVOY_STEP_TAGS;
        int *sent = same ? &same[tag] : NULL, *got = same ? &same[CONVOY_STEP_TAGS + tag] : NULL;
        if (a->rcounts[sb] > 0) {
            /* The own block goes straight from where it is read (no wait for the copy). */
            const convoy__region src = k == 0 ? convoy__agv_own(a) : convoy__agv_block(a, sb);
            int deps[2], nd = 0;
            if (last_recv >= 0) deps[nd++] = last_recv;
            if (sent && *sent >= 0) deps[nd++] = *sent;
            const int st = convoy__add_send(s, CONVOY_COMM_ALL, next, tag, src, nd, deps);
            if (sent) *sent = st;
        }
        last_recv = -1;
        if (a->rcounts[rb] > 0) {
            int deps[2], nd = 0;
            if (window[0] >= 0) deps[nd++] = window[0];
            if (got && *got >= 0) deps[nd++] = *got;
            last_recv =
                convoy__add_recv(s, CONVOY_COMM_ALL, prev, tag, convoy__agv_block(a, rb), nd, deps);
            window[0] = window[1];
            window[1] = last_recv;
            if (got) *got = last_recv;
        }
    }
    free(same);
    return s->err;
}

/* Linear ring (papers/002 §2.1): p - 1 rounds, each as long as the largest block. */
double convoy__allgatherv_ring_cost(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    int64_t big = 0;
    for (int i = 0; i < p; i++)
        if (a->rcounts[i] > big) big = a->rcounts[i];
    return (p - 1) * (m->alpha + m->beta * (double)(big * a->rtype.size));
}
