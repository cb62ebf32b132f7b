/*
 * The checker checked: hand-made wrong schedules must be reported (deadlock under zero
 * buffering, truncation, out-of-bounds access, writes into the send buffer, a read of the
 * node segment before its notification, broken rank order of a non-commutative
 * reduction); the mutation suite must be caught; round and traffic counts must match
 * what is derived by hand for the ring and recursive doubling; the streaming segment
 * builder must pass with segments much smaller than its data.
 */
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/dist.h"
#include "shm_stream.h"
#include "unit.h"

/* --- hand-made builders -------------------------------------------------------------- */

/* Every rank sends its block to the next rank and receives nothing: with zero buffering
 * no send can complete. */
static int b_sendonly(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    convoy__add_send(s, CONVOY_COMM_ALL, (r + 1) % p, 0,
                     convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count), 0, NULL);
    return s->err;
}

/* The ring's messages, but the receive has room for one element less. */
static int b_truncate(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank, prev = (r + p - 1) % p;
    const int64_t ext = a->rtype.extent;
    convoy__add_send(s, CONVOY_COMM_ALL, (r + 1) % p, 0,
                     convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count), 0, NULL);
    convoy__add_recv(
        s, CONVOY_COMM_ALL, prev, 0,
        convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[prev] * ext, a->rcounts[prev] - 1), 0,
        NULL);
    return s->err;
}

/* Copies the own block one receive buffer's length too far. */
static int b_outside(const convoy__args *a, convoy__schedule *s)
{
    int64_t total = 0;
    for (int i = 0; i < a->topo->size; i++)
        if (a->displs[i] + a->rcounts[i] > total) total = a->displs[i] + a->rcounts[i];
    convoy__add_copy(
        s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
        convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, total * a->rtype.extent + 64, a->count), 0,
        NULL);
    return s->err;
}

/* Copies the receive buffer's first element into the send buffer. */
static int b_writesend(const convoy__args *a, convoy__schedule *s)
{
    (void)a;
    convoy__add_copy(s, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 1),
                     convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, 1), 0, NULL);
    return s->err;
}

/* Node-local allgatherv through the segment, but nobody waits: readers copy whatever is
 * in the segment. */
static int b_nowait(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int64_t cb = a->rtype.size;
    int64_t off = 0, mine = 0;
    for (int q = 0; q < t->ppn; q++) {
        int r = convoy__topo_rank_at(t, t->node, q);
        if (q == t->node_rank) mine = off;
        off += a->rcounts[r] * cb;
    }
    s->shm_bytes = off;
    int w =
        convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                         convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, mine, a->count * cb), 0, NULL);
    convoy__add_notify(s, 0, 1, CONVOY_DEP(w));
    off = 0;
    for (int q = 0; q < t->ppn; q++) {
        int r = convoy__topo_rank_at(t, t->node, q);
        convoy__add_copy(
            s, convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, off, a->rcounts[r] * cb),
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[r] * cb, a->rcounts[r]), 0, NULL);
        off += a->rcounts[r] * cb;
    }
    return s->err;
}

/* Allreduce on two ranks: exchange, then reduce the partner's data into mine, always
 * with the partner's as the first operand: correct for commutative operations only. */
static int b_swapped(const convoy__args *a, convoy__schedule *s)
{
    const int r = a->topo->rank, peer = 1 - r;
    const int64_t n = a->count;
    s->tmp_bytes = n * a->rtype.extent;
    int c = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n),
                             convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n), 0, NULL);
    int snd = convoy__add_send(s, CONVOY_COMM_ALL, peer, 0,
                               convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, n), 0, NULL);
    int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, peer, 0,
                               convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, 0, n), 0, NULL);
    int deps[3] = {c, snd, rcv};
    convoy__add_reduce(s, convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, 0, n),
                       convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, n), 3, deps);
    return s->err;
}

/* Sends to a rank outside the communicator. */
static int b_badpeer(const convoy__args *a, convoy__schedule *s)
{
    convoy__add_send(s, CONVOY_COMM_ALL, a->topo->size, 0,
                     convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count), 0, NULL);
    return s->err;
}

static convoy__algo algo(int coll, const char *name, convoy__builder b, unsigned props)
{
    convoy__algo al = {.coll = coll, .name = name, .build = b, .props = props};
    return al;
}

static convoy__check_result run(const convoy__check_case *c)
{
    convoy__check_result r;
    int rc = convoy__check_run(c, &r);
    EXPECT(rc == 0, "the checker could not run: %d", rc);
    return r;
}

static void expect_fail(const char *what, const convoy__check_case *c, const char *needle)
{
    convoy__check_result r = run(c);
    EXPECT(r.status == CONVOY_CHECK_FAIL && strstr(r.reason, needle),
           "%s: expected a failure mentioning \"%s\", got status %d: %s", what, needle, r.status,
           r.reason);
}

static void self_tests(void)
{
    convoy__check_case c;
    convoy__algo al;
    for (int P = 1; P <= 5; P++) {
        al = algo(CONVOY_COLL_ALLGATHERV, "sendonly", b_sendonly, 0);
        convoy__check_case_init(&c);
        c.coll = CONVOY_COLL_ALLGATHERV;
        c.algo = &al;
        c.procs = P;
        c.ppn = 2;
        c.base = 2;
        expect_fail("send without receive", &c, "deadlock");
    }
    convoy__check_case_init(&c);
    c.coll = CONVOY_COLL_ALLGATHERV;
    c.procs = 4;
    c.base = 3;
    al = algo(CONVOY_COLL_ALLGATHERV, "truncate", b_truncate, 0);
    c.algo = &al;
    expect_fail("short receive", &c, "truncated");
    al = algo(CONVOY_COLL_ALLGATHERV, "outside", b_outside, 0);
    expect_fail("copy past the buffer", &c, "outside the receive buffer");
    al = algo(CONVOY_COLL_ALLGATHERV, "writesend", b_writesend, 0);
    expect_fail("write into the send buffer", &c, "writes into the send buffer");
    al = algo(CONVOY_COLL_ALLGATHERV, "badpeer", b_badpeer, 0);
    expect_fail("peer out of range", &c, "invalid schedule");
    c.inplace = 1;
    al = algo(CONVOY_COLL_ALLGATHERV, "sendonly", b_sendonly, 0);
    expect_fail("send buffer with MPI_IN_PLACE", &c, "MPI_IN_PLACE");
    c.inplace = 0;

    /* The segment: read before notification, on one node of 4. */
    convoy__check_case_init(&c);
    c.coll = CONVOY_COLL_ALLGATHERV;
    c.procs = 4;
    c.ppn = 4;
    c.base = 3;
    al = algo(CONVOY_COLL_ALLGATHERV, "nowait", b_nowait, 0);
    c.algo = &al;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        c.seed = seed;
        expect_fail("segment without waiting", &c, "read of the segment before its notification");
    }

    /* Rank order: fine for a commutative operation, reported for a non-commutative one. */
    convoy__check_case_init(&c);
    c.coll = CONVOY_COLL_ALLREDUCE;
    c.procs = 2;
    c.count = 3;
    al = algo(CONVOY_COLL_ALLREDUCE, "swapped", b_swapped, CONVOY_ALGO_NONCOMMUTATIVE);
    c.algo = &al;
    convoy__check_result r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_PASS, "swapped, commutative: %s", r.reason);
    c.commutative = 0;
    expect_fail("swapped operands", &c, "rank order broken");
    /* Without the property the checker does not try a non-commutative operation. */
    al.props = 0;
    r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_SKIP, "non-commutative without the property: status %d",
           r.status);
}

/* --- rounds and traffic of the two foundation algorithms ----------------------------- */

static convoy__check_result lockstep(int coll, const char *algo_name, int P, int ppn,
                                     const char *counts, int64_t base, int64_t count)
{
    convoy__check_case c;
    convoy__check_case_init(&c);
    c.coll = coll;
    c.algo = convoy__check_algo_find(coll, algo_name);
    c.procs = P;
    c.ppn = ppn;
    c.counts = counts;
    c.base = base;
    c.count = count;
    c.modes = CONVOY_CHECK_LOCKSTEP;
    EXPECT(c.algo != NULL, "algorithm %s is not registered", algo_name);
    convoy__check_result r;
    memset(&r, 0, sizeof r);
    if (!c.algo) return r;
    r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_PASS, "%s P=%d: %s", algo_name, P, r.reason);
    return r;
}

static void rounds(void)
{
    for (int P = 1; P <= 33; P++) {
        /* Linear ring, regular data: p - 1 rounds, each rank sends p - 1 blocks of c cells
         * of 8 bytes; with consecutive nodes of 2 each node sends and receives exactly one
         * inter-node message per round (Fig. 1 of papers/002). */
        convoy__check_result r = lockstep(CONVOY_COLL_ALLGATHERV, "ring", P, 2, "regular", 3, 0);
        EXPECT(r.st.rounds == P - 1, "ring P=%d: %lld rounds", P, (long long)r.st.rounds);
        EXPECT(r.st.rank_msgs_max == P - 1 && r.st.msgs == (int64_t)P * (P - 1),
               "ring P=%d: %lld messages", P, (long long)r.st.msgs);
        EXPECT(r.st.rank_bytes_max == (int64_t)(P - 1) * 3 * 8, "ring P=%d: %lld bytes per rank", P,
               (long long)r.st.rank_bytes_max);
        if (P > 2) {
            EXPECT(r.st.round_node_out_max == 1 && r.st.round_node_in_max == 1,
                   "ring P=%d: %lld/%lld inter-node messages per node and round", P,
                   (long long)r.st.round_node_out_max, (long long)r.st.round_node_in_max);
            /* Only the node's last process sends off the node, only its first receives. */
            EXPECT(r.st.node_out_max == (int64_t)(P - 1) * 3 * 8, "ring P=%d: node out %lld", P,
                   (long long)r.st.node_out_max);
        }
        /* Recursive doubling: log2 p rounds for powers of two, floor(log2 p) + 2 with the
         * fold; every rank sends at most log2 p' + 1 messages of the whole vector. */
        int lg = 0;
        while ((2 << lg) <= P)
            lg++;
        int pow2 = (1 << lg) == P;
        r = lockstep(CONVOY_COLL_ALLREDUCE, "recdbl", P, 2, NULL, 0, 5);
        EXPECT(r.st.rounds == (pow2 ? lg : lg + 2), "recdbl P=%d: %lld rounds", P,
               (long long)r.st.rounds);
        EXPECT(r.st.rank_msgs_max == (pow2 ? lg : lg + 1), "recdbl P=%d: %lld messages per rank", P,
               (long long)r.st.rank_msgs_max);
        const int64_t cell = 8 * ((P + 63) / 64 + 1);
        EXPECT(r.st.rank_bytes_max == r.st.rank_msgs_max * 5 * cell, "recdbl P=%d: bytes", P);
    }
    /* Zero elements: nothing to do, no message. */
    convoy__check_result r = lockstep(CONVOY_COLL_ALLREDUCE, "recdbl", 6, 2, NULL, 0, 0);
    EXPECT(r.st.msgs == 0 && r.st.rounds == 0, "recdbl with count 0: %lld messages",
           (long long)r.st.msgs);
    r = lockstep(CONVOY_COLL_ALLGATHERV, "ring", 6, 2, "zeros", 3, 0);
    EXPECT(r.st.msgs == 0, "ring with all-zero counts: %lld messages", (long long)r.st.msgs);
}

/* --- the mutation suite -------------------------------------------------------------- */

static void mutations(void)
{
    EXPECT(convoy__check_nmutations >= 6, "mutations");
    for (int i = 0; i < convoy__check_nmutations; i++) {
        const convoy__check_mutation *m = &convoy__check_mutations[i];
        for (uint64_t seed = 1; seed <= 3; seed++) {
            convoy__check_case c;
            convoy__check_case_init(&c);
            m->setup(&c);
            c.seed = seed;
            EXPECT(c.algo != NULL, "mutation %s: no algorithm", m->name);
            if (!c.algo) continue;
            convoy__check_result r = run(&c);
            EXPECT(r.status == CONVOY_CHECK_PASS,
                   "mutation %s seed %llu: the unmutated case "
                   "fails: %s",
                   m->name, (unsigned long long)seed, r.reason);
            convoy__mutate_ctx mc = {m, m->target, -1, 0};
            c.mutate = m->mutate;
            c.mutate_ctx = &mc;
            r = run(&c);
            EXPECT(r.mutated > 0, "mutation %s: nothing mutated", m->name);
            EXPECT(r.status == CONVOY_CHECK_FAIL, "mutation %s seed %llu not caught", m->name,
                   (unsigned long long)seed);
            printf("mutation %s seed %llu: %.200s\n", m->name, (unsigned long long)seed, r.reason);
        }
    }
    EXPECT(convoy__check_mutation_find("cycle") != NULL && !convoy__check_mutation_find("x"),
           "mutation lookup");
}

/* --- schedule surgery ---------------------------------------------------------------- */

static void rewrite(void)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    convoy__region g = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 1);
    int a = convoy__add_send(&s, CONVOY_COMM_ALL, 1, 0, g, 0, NULL);       /* 0 */
    int b = convoy__add_recv(&s, CONVOY_COMM_ALL, 1, 0, g, 0, NULL);       /* 1 */
    int c = convoy__add_copy(&s, g, g, CONVOY_DEP(b));                     /* 2 */
    int d = convoy__add_send(&s, CONVOY_COMM_ALL, 2, 1, g, CONVOY_DEP(c)); /* 3 */
    (void)a;
    (void)d;
    /* Drop the receive: the copy inherits its (no) dependencies. */
    EXPECT(convoy__check_rewrite(&s, b, -1, -1, -1) == 0, "drop");
    EXPECT(s.nsteps == 3 && s.steps[0].kind == CONVOY_STEP_SEND &&
               s.steps[1].kind == CONVOY_STEP_COPY && s.steps[1].ndeps == 0 &&
               s.steps[2].ndeps == 1 && s.deps[s.steps[2].dep_first] == 1,
           "drop result");
    /* A later step as a new dependency of an earlier one: the order changes. */
    EXPECT(convoy__check_rewrite(&s, -1, -1, 2, 0) == 0, "edge");
    EXPECT(s.nsteps == 3 && s.steps[2].kind == CONVOY_STEP_SEND && s.steps[2].peer == 1 &&
               s.steps[2].ndeps == 1,
           "edge result");
    /* The reverse edge would close a cycle. */
    int last = s.nsteps - 1;
    EXPECT(convoy__check_rewrite(&s, -1, -1, last, 0) == CONVOY_ERR_ARG, "cycle refused");
    /* Duplicate: appended after the original, depending on it. */
    EXPECT(convoy__check_rewrite(&s, -1, 0, -1, -1) == 0, "dup");
    EXPECT(s.nsteps == 4 && s.steps[3].kind == s.steps[0].kind && s.steps[3].ndeps >= 1,
           "dup result");
    convoy__sched_free(&s);
}

/* --- the streaming segment builder --------------------------------------------------- */

static void shm_stream(void)
{
    const convoy__algo *al = convoy__check_algo_find(CONVOY_COLL_ALLGATHERV, "shm_stream");
    EXPECT(al && al->build == convoy__test_shm_stream, "shm_stream is known to the checker");
    if (!al) return;
    for (int P = 1; P <= 7; P++)
        for (int slots = 2; slots <= 3; slots++)
            for (int inplace = 0; inplace <= 1; inplace++) {
                convoy__check_case c;
                convoy__check_case_init(&c);
                c.coll = CONVOY_COLL_ALLGATHERV;
                c.algo = al;
                c.procs = P;
                c.ppn = P;
                c.counts = P % 2 ? "random" : "decreasing";
                c.base = 50;
                c.inplace = inplace;
                c.shm_bytes = 1 << 20; /* offered, but the parameter below wins */
                c.nparams = 2;
                strcpy(c.params[0].name, "CONVOY_SEGMENT_BYTES");
                c.params[0].value = 16 * 8 * P * slots; /* chunks of 16 elements */
                strcpy(c.params[1].name, "CONVOY_SHM_STREAM_SLOTS");
                c.params[1].value = slots;
                c.ops = 3; /* the segment is reused by three operations in a row */
                convoy__check_result r = run(&c);
                EXPECT(r.status == CONVOY_CHECK_PASS, "shm_stream P=%d slots=%d inplace=%d: %s", P,
                       slots, inplace, r.reason);
            }
    /* A segment too small for one element per slot is refused by the builder. */
    convoy__check_case c;
    convoy__check_case_init(&c);
    c.coll = CONVOY_COLL_ALLGATHERV;
    c.algo = al;
    c.procs = 4;
    c.ppn = 4;
    c.shm_bytes = 32;
    convoy__check_result r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_FAIL && strstr(r.reason, "builder failed"), "tiny segment: %s",
           r.reason);
    /* More than one node: not applicable. */
    c.ppn = 2;
    c.shm_bytes = 4096;
    r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_SKIP, "shm_stream on two nodes: status %d", r.status);
}

/* --- scratch accounting -------------------------------------------------------------- */

/* Grows rank 2's scratch by 8 bytes that nothing writes. */
static int grow_tmp(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    (void)ctx;
    if (a->topo->rank != 2) return 0;
    s->tmp_bytes += 8;
    return 1;
}

/* The k-ported Gather on 3 nodes of 4, root rank 1 (node 0's node rank 1, so port i is node
 * rank i + 1 mod 4): the root (port 0) receives node 1's 4 blocks itself, its node peer
 * rank 2 (port 1) relays node 2's 4 blocks and holds just those, ranks 0 and 3 nothing;
 * the entry ports of nodes 1 and 2 (ranks 5 and 10) collect their node's 4 blocks, the
 * other 6 processes pack their own block: 4 + 4 + 4 + 6 blocks in all. Every scratch byte
 * is written; 8 bytes more on rank 2 are reported as unwritten. */
static void scratch(void)
{
    convoy__check_case c;
    convoy__check_case_init(&c);
    c.coll = CONVOY_COLL_GATHER;
    c.algo = convoy__check_algo_find(CONVOY_COLL_GATHER, "klane_tree");
    EXPECT(c.algo != NULL, "gather klane_tree is not registered");
    if (!c.algo) return;
    c.procs = 12;
    c.ppn = 4;
    c.count = 5;
    c.root = 1;
    convoy__check_result r = run(&c);
    const int64_t m = 5 * r.st.cell_bytes;
    EXPECT(r.status == CONVOY_CHECK_PASS, "klane gather: %s", r.reason);
    EXPECT(r.st.tmp_root == 0 && r.st.tmp_peers == 4 * m && r.st.tmp_max == 4 * m &&
               r.st.tmp_total == 18 * m && r.st.tmp_unwritten == 0 && r.st.tmp_unwritten_rank == -1,
           "klane gather scratch: root %lld, peers %lld, max %lld, total %lld, unwritten %lld "
           "(rank %d); expected 0, %lld, %lld, %lld, 0 (-1)",
           (long long)r.st.tmp_root, (long long)r.st.tmp_peers, (long long)r.st.tmp_max,
           (long long)r.st.tmp_total, (long long)r.st.tmp_unwritten, r.st.tmp_unwritten_rank,
           (long long)(4 * m), (long long)(4 * m), (long long)(18 * m));
    c.mutate = grow_tmp;
    r = run(&c);
    EXPECT(r.status == CONVOY_CHECK_PASS && r.mutated == 1 && r.st.tmp_unwritten == 8 &&
               r.st.tmp_unwritten_rank == 2,
           "grown scratch: status %d, mutated %d, unwritten %lld on rank %d (expected 8 on 2)",
           r.status, r.mutated, (long long)r.st.tmp_unwritten, r.st.tmp_unwritten_rank);
}

int main(void)
{
    self_tests();
    scratch();
    rounds();
    mutations();
    rewrite();
    shm_stream();
    return unit_done();
}
