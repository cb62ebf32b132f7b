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
 * processes a tag repeats, and the executor posts its messages in round order (a
 * channel's messages go in step order: src/sched/exec.c).
 */
#include "coll/coll.h"

int convoy__allgatherv_ring(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    convoy__agv_copy_own(a, s);
    const int next = (r + 1) % p, prev = (r - 1 + p) % p;
    int last_recv = -1;       /* the receive of the block this process forwards next */
    int window[2] = {-1, -1}; /* the last two receives, oldest first */
    for (int k = 0; k < p - 1; k++) {
        const int sb = ((r - k) % p + p) % p, rb = ((r - k - 1) % p + p) % p;
        const int tag = k % CONVOY_STEP_TAGS;
        if (a->rcounts[sb] > 0) {
            /* The own block goes straight from where it is read (no wait for the copy). */
            const convoy__region src = k == 0 ? convoy__agv_own(a) : convoy__agv_block(a, sb);
            convoy__add_send(s, CONVOY_COMM_ALL, next, tag, src, CONVOY_DEP(last_recv));
        }
        last_recv = -1;
        if (a->rcounts[rb] > 0) {
            last_recv = convoy__add_recv(s, CONVOY_COMM_ALL, prev, tag, convoy__agv_block(a, rb),
                                         CONVOY_DEP(window[0]));
            window[0] = window[1];
            window[1] = last_recv;
        }
    }
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
