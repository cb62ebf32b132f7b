/*
 * Nested schedules through the checker: a hierarchical allgatherv built from a ring over
 * the node communicator and a ring over the lane communicator, each a child schedule
 * (exercises the executor's NODE/LANE peer translation and the children's tag blocks),
 * and schedules with more concurrent children than there are tag blocks.
 */
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "unit.h"

static convoy__region block(const convoy__args *a, int rank)
{
    return convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[rank] * a->rtype.extent,
                       a->rcounts[rank]);
}

/* Ring over the node: node rank q forwards the blocks of its node, one per round. */
static convoy__schedule *node_ring(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    const int n = t->ppn, me = t->node_rank;
    convoy__schedule *c = malloc(sizeof *c);
    if (!c) return NULL;
    convoy__sched_init(c);
    int last = -1;
    for (int k = 0; k < n - 1; k++) {
        int sb = convoy__topo_rank_at(t, t->node, ((me - k) % n + n) % n);
        int rb = convoy__topo_rank_at(t, t->node, ((me - k - 1) % n + n) % n);
        if (a->rcounts[sb] > 0)
            convoy__add_send(c, CONVOY_COMM_ALL, (me + 1) % n, k, block(a, sb), CONVOY_DEP(last));
        last = -1;
        if (a->rcounts[rb] > 0)
            last = convoy__add_recv(c, CONVOY_COMM_ALL, (me - 1 + n) % n, k, block(a, rb), 0, NULL);
    }
    return c;
}

/* Ring over the lane: round k forwards all blocks of the node of lane member me - k.
 * Needs every node to have the same number of processes (then every lane meets every
 * node). */
static convoy__schedule *lane_ring(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    const int L = t->lane_size, me = t->lane_rank, ppn = t->ppn;
    convoy__schedule *c = malloc(sizeof *c);
    int *prev = calloc((size_t)ppn, sizeof *prev); /* receive of each block just forwarded */
    if (!c || !prev) {
        free(c);
        free(prev);
        return NULL;
    }
    convoy__sched_init(c);
    for (int q = 0; q < ppn; q++)
        prev[q] = -1;
    for (int k = 0; k < L - 1; k++) {
        int snode = t->node_of[convoy__topo_lane_peer(t, ((me - k) % L + L) % L)];
        int rnode = t->node_of[convoy__topo_lane_peer(t, ((me - k - 1) % L + L) % L)];
        for (int q = 0; q < ppn; q++) {
            int sb = convoy__topo_rank_at(t, snode, q), rb = convoy__topo_rank_at(t, rnode, q);
            if (a->rcounts[sb] > 0)
                convoy__add_send(c, CONVOY_COMM_ALL, (me + 1) % L, k * ppn + q, block(a, sb),
                                 CONVOY_DEP(prev[q]));
            prev[q] = -1;
            if (a->rcounts[rb] > 0)
                prev[q] = convoy__add_recv(c, CONVOY_COMM_ALL, (me - 1 + L) % L, k * ppn + q,
                                           block(a, rb), 0, NULL);
        }
    }
    free(prev);
    return c;
}

static int b_hier(const convoy__args *a, convoy__schedule *s)
{
    const int r = a->topo->rank;
    int own = -1;
    if (!a->inplace && a->rcounts[r] > 0)
        own = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                               block(a, r), 0, NULL);
    convoy__schedule *nc = node_ring(a), *lc = lane_ring(a);
    if (!nc || !lc) {
        free(nc);
        free(lc);
        return CONVOY_ERR_NO_MEM;
    }
    int n1 = convoy__add_nested(s, CONVOY_COMM_NODE, nc, CONVOY_DEP(own));
    convoy__add_nested(s, CONVOY_COMM_LANE, lc, CONVOY_DEP(n1));
    return s->err;
}

static int hier_applicable(const convoy__args *a)
{
    return (a->topo->flags & CONVOY_TOPO_REGULAR) != 0;
}

/* On one node: piece j of every block (one element) is exchanged with the node peer by
 * child j, on step tag 0. On rank 1 child 0 starts only after a token from rank 0, so
 * rank 1 posts child 7's receive before child 0's, while rank 0 posts child 0's send
 * before child 7's. Children 0 and 7 must not share a tag block for this to be right. */
enum { NCHILD = 8 };
static int b_children(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int me = t->node_rank, peer = 1 - me;
    const int64_t ext = a->rtype.extent;
    const int pr = convoy__topo_rank_at(t, t->node, peer);
    if (t->ppn != 2 || a->rcounts[t->rank] < NCHILD || a->rcounts[pr] < NCHILD)
        return CONVOY_ERR_ARG;
    int own = -1;
    if (!a->inplace)
        own = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                               block(a, t->rank), 0, NULL);
    int token = -1;
    if (me == 0)
        convoy__add_send(s, CONVOY_COMM_NODE, peer, 1,
                         convoy__reg(CONVOY_BUF_SEND, CONVOY_T_BYTE, 0, 0), 0, NULL);
    else
        token = convoy__add_recv(s, CONVOY_COMM_NODE, peer, 1,
                                 convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0), 0, NULL);
    for (int j = 0; j < NCHILD; j++) {
        convoy__schedule *c = malloc(sizeof *c);
        if (!c) return CONVOY_ERR_NO_MEM;
        convoy__sched_init(c);
        convoy__add_send(
            c, CONVOY_COMM_ALL, peer, 0,
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (a->displs[t->rank] + j) * ext, 1), 0,
            NULL);
        convoy__add_recv(c, CONVOY_COMM_ALL, peer, 0,
                         convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (a->displs[pr] + j) * ext, 1),
                         0, NULL);
        int deps[2], nd = 0;
        if (own >= 0) deps[nd++] = own;
        if (j == 0 && token >= 0) deps[nd++] = token;
        convoy__add_nested(s, CONVOY_COMM_NODE, c, nd, deps);
    }
    return s->err;
}

/* A child with a grandchild, both exchanging one element with the node peer on step tag
 * 0: the grandchild must not speak on its parent's tag block. On rank 1 the child's own
 * exchange waits for a token, so the two ranks post the two exchanges in opposite orders. */
static int b_grandchild(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int me = t->node_rank, peer = 1 - me;
    const int64_t ext = a->rtype.extent;
    const int pr = convoy__topo_rank_at(t, t->node, peer);
    if (t->ppn != 2 || a->rcounts[t->rank] < 2 || a->rcounts[pr] < 2) return CONVOY_ERR_ARG;
    int own = -1;
    if (!a->inplace)
        own = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                               block(a, t->rank), 0, NULL);
    convoy__schedule *c = malloc(sizeof *c), *g = malloc(sizeof *g);
    if (!c || !g) {
        free(c);
        free(g);
        return CONVOY_ERR_NO_MEM;
    }
    convoy__sched_init(c);
    convoy__sched_init(g);
    for (int j = 0; j < 2; j++) {
        convoy__schedule *x = j ? g : c;
        int token = -1;
        if (j == 0 && me == 0)
            convoy__add_send(x, CONVOY_COMM_ALL, peer, 5,
                             convoy__reg(CONVOY_BUF_SEND, CONVOY_T_BYTE, 0, 0), 0, NULL);
        if (j == 0 && me == 1)
            token = convoy__add_recv(x, CONVOY_COMM_ALL, peer, 5,
                                     convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0), 0, NULL);
        convoy__add_send(
            x, CONVOY_COMM_ALL, peer, 0,
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (a->displs[t->rank] + j) * ext, 1),
            CONVOY_DEP(token));
        convoy__add_recv(x, CONVOY_COMM_ALL, peer, 0,
                         convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (a->displs[pr] + j) * ext, 1),
                         CONVOY_DEP(token));
    }
    convoy__add_nested(c, CONVOY_COMM_NODE, g, 0, NULL);
    convoy__add_nested(s, CONVOY_COMM_NODE, c, CONVOY_DEP(own));
    return s->err;
}

int main(void)
{
    convoy__algo hier = {.coll = CONVOY_COLL_ALLGATHERV,
                         .name = "hier",
                         .build = b_hier,
                         .applicable = hier_applicable};
    const char *counts[] = {"regular", "random", "zeros", "spike"};
    long cases = 0;
    for (int P = 1; P <= 24; P++)
        for (int ppn = 1; ppn <= 4; ppn++)
            for (int layout = CONVOY_LAYOUT_REGULAR; layout <= CONVOY_LAYOUT_SCATTERED; layout++)
                for (int k = 0; k < 4; k++)
                    for (int inplace = 0; inplace <= 1; inplace++) {
                        convoy__check_case c;
                        convoy__check_case_init(&c);
                        c.algo = &hier;
                        c.procs = P;
                        c.ppn = ppn;
                        c.layout = layout;
                        c.counts = counts[k];
                        c.base = 2 * P;
                        c.inplace = inplace;
                        c.seed = (uint64_t)(P + k);
                        convoy__check_result r;
                        int rc = convoy__check_run(&c, &r);
                        EXPECT(rc == 0 && r.status != CONVOY_CHECK_FAIL,
                               "hier P=%d ppn=%d layout=%s counts=%s inplace=%d: %s", P, ppn,
                               convoy__layout_name(layout), counts[k], inplace, r.reason);
                        cases += r.status == CONVOY_CHECK_PASS;
                    }
    EXPECT(cases > 1000, "only %ld hierarchical cases ran", cases);

    /* Regular layouts of 4 per node: the node ring and the lane ring each take their
     * number of rounds, one after the other. */
    convoy__check_case c;
    convoy__check_case_init(&c);
    c.algo = &hier;
    c.procs = 12;
    c.ppn = 4;
    c.modes = CONVOY_CHECK_LOCKSTEP;
    convoy__check_result r;
    convoy__check_run(&c, &r);
    EXPECT(r.status == CONVOY_CHECK_PASS && r.st.rounds == 3 + 2 * 4,
           "hier 3 x 4: %lld rounds (%s)", (long long)r.st.rounds, r.reason);

    convoy__algo children = {
        .coll = CONVOY_COLL_ALLGATHERV, .name = "children", .build = b_children};
    convoy__check_case_init(&c);
    c.algo = &children;
    c.procs = 2;
    c.ppn = 2;
    c.base = NCHILD;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        c.seed = seed;
        convoy__check_run(&c, &r);
        EXPECT(r.status == CONVOY_CHECK_PASS, "%d concurrent children, seed %llu: %s", NCHILD,
               (unsigned long long)seed, r.reason);
    }

    convoy__algo grand = {
        .coll = CONVOY_COLL_ALLGATHERV, .name = "grandchild", .build = b_grandchild};
    c.algo = &grand;
    c.base = 2;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        c.seed = seed;
        convoy__check_run(&c, &r);
        EXPECT(r.status == CONVOY_CHECK_PASS, "nested child in a child, seed %llu: %s",
               (unsigned long long)seed, r.reason);
    }
    /* Step order (convoy__exec_straight): notifications, waits and local steps, where every
     * notification depends on every wait before it. */
    {
        convoy__schedule a, b, d, e;
        convoy__sched_init(&a);
        convoy__sched_init(&b);
        convoy__sched_init(&d);
        convoy__sched_init(&e);
        const convoy__region x = convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, 0, 8),
                             y = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 8);
        /* arrive, wait for the peer, read its slot: straight */
        int n = convoy__add_notify(&a, 0, 1, 0, NULL);
        int w = convoy__add_wait(&a, 1, 0, 1, 1, &n);
        convoy__add_copy(&a, x, y, 1, &w);
        EXPECT(convoy__exec_straight(&a), "arrive-wait-copy runs in step order");
        /* a wait listed before a notification that does not depend on it: a process stopped
         * at the wait would hold back what its peer waits for */
        convoy__add_wait(&b, 1, 0, 1, 0, NULL);
        convoy__add_notify(&b, 0, 1, 0, NULL);
        EXPECT(!convoy__exec_straight(&b), "an independent notification after a wait");
        /* the same with the notification after the wait: straight */
        w = convoy__add_wait(&d, 1, 0, 1, 0, NULL);
        convoy__add_notify(&d, 0, 1, 1, &w);
        EXPECT(convoy__exec_straight(&d), "a notification after the wait it depends on");
        /* messages go by readiness */
        convoy__add_send(&e, CONVOY_COMM_ALL, 1, 0, y, 0, NULL);
        EXPECT(!convoy__exec_straight(&e), "a schedule with a message");
        convoy__sched_free(&a);
        convoy__sched_free(&b);
        convoy__sched_free(&d);
        convoy__sched_free(&e);
    }
    return unit_done();
}
