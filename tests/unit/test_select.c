/*
 * Properties of the cost models and of the choice made from them (src/select, the `cost`
 * functions, src/coll/lane.c), checked against values derived by hand, without MPI:
 *  - one host (virtual nodes: both levels one path) at 1 and 16 elements on 2 x 2 and
 *    2 x 4: no nested (lane/hier) schedule is chosen, since a nested phase costs its rounds
 *    plus a nested executor's overhead and ties with no flat schedule of as many rounds;
 *    and native, predicted from the flat baselines on the library's blocking path
 *    (alpha_native), is predicted faster than Convoy's choice (the drop-in keeps it);
 *  - the hierarchical Bcast on 2 x 2 at 1 element costs exactly the hand-derived sum of its
 *    phases: a lane Bcast over 2 nodes (one round at the network level, plus the nested
 *    executor's overhead) and a node binomial tree (one round at the node level); the flat
 *    binomial tree pays the slower level in each of its 2 rounds;
 *  - a nested schedule's cost is never below the cost of its slowest phase plus one nested
 *    executor (hier Bcast and Reduce, phases costed independently by selecting the
 *    cheapest algorithm of the phase's collective on the phase's own group);
 *  - the drop-in's last choice (convoy__native_preferred, what planning asks): with a large
 *    per-call overhead and one element, the library's collective is kept for collectives
 *    whose tables have lane and hier candidates (Reduce_scatter: native at most the flat
 *    ring by hand, 3 (alpha + 4 (beta + gamma)), Convoy at least its overhead); with a
 *    network 100x slower than the node and 64K-byte blocks on 8 nodes of 8, Convoy's
 *    nested Reduce_scatter is kept: every flat baseline moves at least (P-1) blocks over
 *    the network's beta (the hand-derived lower bound of native's prediction), the nested
 *    schedule moves only the lane's share; and Convoy's copy of a flat algorithm never
 *    beats the library's, even where the setup measured the library's path slower;
 *  - a zero-copy phase is costed as the builder builds it: Reduce_scatter_block `lane` on
 *    4 x 8 at 1 int per process runs its node reduce-scatter in place with least scratch;
 *    the model pays at least as many node rounds as that child of rank 0's schedule sends
 *    messages (counted in the schedule: a ring's 7, where the cheapest, recursive halving,
 *    has 3), plus the lane reduce-scatter's log2 4 = 2 network rounds;
 *  - the strided lane Allgather on 4 x 8 at 1 int per process costs, by hand, 3 lane
 *    messages (Bruck: 1 block, then 2 that wrap past the last node into two messages)
 *    and 3 node rounds (recursive doubling over 8), (N - 1) blocks over the network's
 *    beta and (n - 1) N blocks over the node's; and the most messages any rank's schedule
 *    sends is those 6;
 *  - the single copy (cross-memory attach) of Allreduce node_ring and Allgatherv
 *    node_segment is built by default only where the setup measured the reads' rate and
 *    the model finds them cheaper than the segment's copies: on one node of 2 with 4 MiB
 *    per process, reads at 8 GB/s against reductions at 25 GB/s (this host) keep the
 *    segment (no READ step in rank 0's schedule), reads at 200 GB/s take the single copy,
 *    an unmeasured rate keeps the segment, and CONVOY_*_CMA_MIN=0 forces it;
 *  - Allreduce node_ring's slots: by default as many as a node has processes, and the
 *    model's node sums M / S times dearer where fewer are forced (by hand, 4 x 8);
 *  - Allreduce recdbl and dissem cost each round at its level (convoy__round_cost): on 2 x 2,
 *    1000 ints, recdbl's distance-1 round stays in the node (alpha_node, beta_node) and its
 *    distance-2 round has both processes of a node sending across (the lanes' 2 beta_nic
 *    where that exceeds beta); on 3 x 2 the fold's survivors (ranks 1, 3, 4, 5) cross
 *    nodes at both distances, one process of rank 0's node each (beta); dissem with n = 1
 *    on 2 x 2: one off-node message at distance 1, both at distance 2;
 *  - a call's machine (convoy__machine_sized): up to 32 KiB per process the middle
 *    message's per-byte terms, from 1 MiB the large message's, at the geometric middle
 *    (181 KiB) half way, the other per-byte terms (the lanes', the gaps') as measured;
 *    never below the middle value (a large rate under it keeps it); nothing to size twice;
 *  - Alltoall on shared cores (share 2, 2 x 2, 64 KiB blocks): pairwise's three waits and
 *    linear's one, each with the three received blocks at share * beta, by hand.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/lane.h"
#include "select/select.h"
#include "unit.h"

enum { PMAX = 64 };

static int64_t rc[PMAX], dp[PMAX];

static void make_topo(convoy__topo *t, int nodes, int ppn)
{
    int64_t ids[PMAX];
    for (int r = 0; r < nodes * ppn; r++)
        ids[r] = r / ppn;
    if (convoy__topo_from_ids(t, nodes * ppn, 0, ids)) abort();
}

/* Arguments of rank 0 (the root) for coll with count elements (per block where the
 * collective has blocks) of a 4-byte integer type. */
static convoy__args make_args(int coll, const convoy__topo *t, int64_t count,
                              const convoy__machine *m)
{
    const convoy__dtype it = {.size = 4, .extent = 4, .true_lb = 0, .true_extent = 4};
    convoy__args a = {.coll = coll,
                      .topo = t,
                      .count = count,
                      .stype = it,
                      .rtype = it,
                      .commutative = 1,
                      .shm_bytes = 65536,
                      .machine = *m};
    for (int i = 0; i < t->size; i++)
        rc[i] = count, dp[i] = i * count;
    switch (convoy__coll_base(coll)) {
    case CONVOY_COLL_ALLGATHERV:
    case CONVOY_COLL_GATHER:
    case CONVOY_COLL_SCATTER:
    case CONVOY_COLL_ALLTOALL: a.rcounts = rc, a.displs = dp; break;
    case CONVOY_COLL_REDUCE_SCATTER:
        a.count = count * t->size;
        a.rcounts = rc, a.displs = dp;
        break;
    default: break;
    }
    return a;
}

/* Whether al's schedule for rank 0 has nested (lane/hier) phases. */
static int nested(const convoy__algo *al, const convoy__args *a)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    int n = al->build(a, &s) == 0 && s.nchildren > 0;
    convoy__sched_free(&s);
    return n;
}

static const int colls[] = {
    CONVOY_COLL_BCAST,     CONVOY_COLL_REDUCE, CONVOY_COLL_ALLREDUCE,
    CONVOY_COLL_ALLGATHER, CONVOY_COLL_GATHER, CONVOY_COLL_SCATTER,
    CONVOY_COLL_ALLTOALL,  CONVOY_COLL_SCAN,   CONVOY_COLL_REDUCE_SCATTER_BLOCK};

/* 4 processes on 2 cores, as measured here: Convoy's path 8 us a message, the library's
 * blocking one 2.5 us; one level (virtual nodes on one host). */
static const convoy__machine one_host = {.alpha = 8e-6,
                                         .beta = 3e-10,
                                         .gamma = 1e-10,
                                         .alpha_node = 8e-6,
                                         .beta_node = 3e-10,
                                         .overhead = 4e-7,
                                         .alpha_native = 2.5e-6};

static void small_counts_on_one_host(void)
{
    const int shapes[][2] = {{2, 2}, {2, 4}};
    for (int s = 0; s < 2; s++) {
        convoy__topo t;
        make_topo(&t, shapes[s][0], shapes[s][1]);
        for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
            for (int64_t count = 1; count <= 16; count *= 16) {
                convoy__args a = make_args(colls[c], &t, count, &one_host);
                const convoy__algo *al = convoy__select(&a, &one_host, NULL, 0);
                const char *name = convoy__coll_name(colls[c]);
                EXPECT(al != NULL, "%s on %dx%d: no algorithm", name, shapes[s][0], shapes[s][1]);
                if (!al) continue;
                EXPECT(!nested(al, &a), "%s %lld on %dx%d: nested %s chosen", name,
                       (long long)count, shapes[s][0], shapes[s][1], al->name);
                const double tn = convoy__native_cost(&a, &one_host);
                const double tc = convoy__algo_time(al, &a, &one_host);
                EXPECT(tn >= 0 && tn < tc, "%s %lld on %dx%d: native %.2f us, %s %.2f us", name,
                       (long long)count, shapes[s][0], shapes[s][1], 1e6 * tn, al->name, 1e6 * tc);
            }
        convoy__topo_free(&t);
    }
}

/* Two real nodes: the network slower than the node. */
static const convoy__machine cluster = {.alpha = 2e-6,
                                        .beta = 1e-10,
                                        .gamma = 1e-10,
                                        .alpha_node = 1e-6,
                                        .beta_node = 2e-10,
                                        .overhead = 5e-7};

static void hier_bcast_by_hand(void)
{
    convoy__topo t;
    make_topo(&t, 2, 2);
    convoy__args a = make_args(CONVOY_COLL_BCAST, &t, 1, &cluster);
    const convoy__machine *m = &cluster;
    /* Lane phase: 1 round between the 2 nodes (1 sender per node) + a nested executor;
     * node phase: 1 round of the node's binomial tree (plain steps, not nested). */
    const double lane = m->alpha + 4 * m->beta + m->overhead;
    const double node = m->alpha_node + 4 * m->beta_node;
    const convoy__algo *hier = convoy__algo_find(CONVOY_COLL_BCAST, "hier");
    const convoy__algo *bin = convoy__algo_find(CONVOY_COLL_BCAST, "binomial");
    EXPECT(hier && fabs(convoy__algo_cost(hier, &a, m) - (lane + node)) < 1e-12,
           "hier Bcast 2x2: %.4f us, by hand %.4f us",
           hier ? 1e6 * convoy__algo_cost(hier, &a, m) : 0, 1e6 * (lane + node));
    /* Binomial over 4: 2 rounds, each as slow as its slowest level (alpha, beta_node). */
    const double flat = 2 * (m->alpha + 4 * m->beta_node);
    EXPECT(bin && fabs(convoy__algo_cost(bin, &a, m) - flat) < 1e-12,
           "binomial Bcast 2x2: %.4f us, by hand %.4f us",
           bin ? 1e6 * convoy__algo_cost(bin, &a, m) : 0, 1e6 * flat);
    convoy__topo_free(&t);
}

/* The cheapest algorithm of coll on a group of its own: n processes of one node (node
 * level) or one process on each of n nodes (network level). */
static double phase_cost(int coll, int n, int one_node, int64_t count, const convoy__machine *m)
{
    convoy__topo t;
    if (one_node)
        make_topo(&t, 1, n);
    else
        make_topo(&t, n, 1);
    convoy__machine lv = convoy__machine_levels(m);
    if (one_node) lv.alpha = lv.alpha_node, lv.beta = lv.beta_node;
    convoy__args a = make_args(coll, &t, count, &lv);
    a.shm_bytes = 0; /* phases use messages */
    const convoy__algo *al = convoy__select(&a, &lv, NULL, 1);
    const double c = al ? convoy__algo_cost(al, &a, &lv) : 0;
    convoy__topo_free(&t);
    return c;
}

static void never_below_slowest_phase(void)
{
    const int shapes[][2] = {{2, 4}, {4, 8}, {8, 4}};
    const int hiers[] = {CONVOY_COLL_BCAST, CONVOY_COLL_REDUCE};
    for (int s = 0; s < 3; s++)
        for (int h = 0; h < 2; h++)
            for (int64_t count = 1; count <= 65536; count *= 16) {
                const int N = shapes[s][0], n = shapes[s][1];
                convoy__topo t;
                make_topo(&t, N, n);
                convoy__args a = make_args(hiers[h], &t, count, &cluster);
                const convoy__algo *al = convoy__algo_find(hiers[h], "hier");
                const double node = phase_cost(hiers[h], n, 1, count, &cluster);
                const double lane = phase_cost(hiers[h], N, 0, count, &cluster);
                const double slowest = (node > lane ? node : lane) + cluster.overhead;
                const double c = al ? convoy__algo_cost(al, &a, &cluster) : 0;
                EXPECT(al && c >= slowest * (1 - 1e-9), "hier %s %lld on %dx%d: %.3f us < %.3f us",
                       convoy__coll_name(hiers[h]), (long long)count, N, n, 1e6 * c, 1e6 * slowest);
                convoy__topo_free(&t);
            }
}

/* 4 processes, 2 real nodes of 2; Convoy's per-call overhead 1 ms. */
static const convoy__machine costly_calls = {.alpha = 2e-6,
                                             .beta = 1e-10,
                                             .gamma = 1e-10,
                                             .alpha_node = 1e-6,
                                             .beta_node = 5e-11,
                                             .overhead = 1e-3,
                                             .alpha_native = 2e-6};

static void native_kept_when_cheaper(void)
{
    convoy__topo t;
    make_topo(&t, 2, 2);
    const int cs[] = {CONVOY_COLL_REDUCE_SCATTER, CONVOY_COLL_REDUCE_SCATTER_BLOCK,
                      CONVOY_COLL_ALLGATHER, CONVOY_COLL_BCAST, CONVOY_COLL_REDUCE};
    for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
        const char *name = convoy__coll_name(cs[c]);
        convoy__args a = make_args(cs[c], &t, 1, &costly_calls);
        const convoy__algo *lane = convoy__algo_find(cs[c], "lane");
        const convoy__algo *hier = convoy__algo_find(cs[c], "hier");
        EXPECT(lane && hier && (!lane->applicable || lane->applicable(&a)) &&
                   (!hier->applicable || hier->applicable(&a)),
               "%s on 2x2: lane and hier are not both candidates", name);
        const convoy__algo *al = convoy__select(&a, &costly_calls, NULL, 0);
        double tn;
        EXPECT(al && convoy__native_preferred(al, &a, &costly_calls, &tn),
               "%s 1 on 2x2, overhead 1 ms: %s kept (%.1f us) over native (%.1f us)", name,
               al ? al->name : "none", al ? 1e6 * convoy__algo_time(al, &a, &costly_calls) : 0,
               1e6 * tn);
        if (cs[c] == CONVOY_COLL_REDUCE_SCATTER) {
            /* The flat ring, at the slower level (network alpha, node beta) on the
             * library's path: P-1 rounds of one 4-byte block. */
            const double ring =
                3 * (costly_calls.alpha_native + 4 * (costly_calls.beta + costly_calls.gamma));
            EXPECT(tn >= 0 && tn <= ring + 1e-15,
                   "reduce_scatter 1 on 2x2: native %.4f us > "
                   "the ring by hand %.4f us",
                   1e6 * tn, 1e6 * ring);
        }
    }
    convoy__topo_free(&t);
}

/* 8 nodes of 8: the network 1 GB/s, the node 100 GB/s. */
static const convoy__machine slow_network = {.alpha = 2e-6,
                                             .beta = 1e-9,
                                             .gamma = 1e-11,
                                             .alpha_node = 5e-7,
                                             .beta_node = 1e-11,
                                             .overhead = 1e-6,
                                             .alpha_native = 2e-6};

static void convoy_kept_when_cheaper(void)
{
    convoy__topo t;
    make_topo(&t, 8, 8);
    const int64_t count = 16384; /* ints per block: 64 KiB */
    const double b = 4.0 * count;
    convoy__args a = make_args(CONVOY_COLL_REDUCE_SCATTER, &t, count, &slow_network);
    const convoy__algo *al = convoy__select(&a, &slow_network, NULL, 0);
    double tn;
    const int native = convoy__native_preferred(al, &a, &slow_network, &tn);
    /* Every flat schedule brings P-1 blocks (from the others) to each process, and its
     * rounds pay the network's beta: native's prediction is at least that. */
    const double bound = 63 * b * slow_network.beta;
    EXPECT(tn >= bound * (1 - 1e-9), "reduce_scatter 64K on 8x8: native %.1f us < bound %.1f us",
           1e6 * tn, 1e6 * bound);
    EXPECT(al && !native && nested(al, &a) && convoy__algo_time(al, &a, &slow_network) < bound,
           "reduce_scatter 64K on 8x8: %s (%.1f us, nested %d) against native %.1f us",
           al ? al->name : "none", al ? 1e6 * convoy__algo_time(al, &a, &slow_network) : 0,
           al ? nested(al, &a) : 0, 1e6 * tn);
    convoy__topo_free(&t);
}

/* A setup that measured the library's path 3x slower than Convoy's (noise of a loaded
 * machine): no baseline run by Convoy is predicted faster than native. */
static void flat_copy_never_beats_native(void)
{
    convoy__machine m = one_host;
    m.alpha_native = 3 * m.alpha;
    m.overhead = 0;
    convoy__topo t;
    make_topo(&t, 2, 2);
    for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
        for (int64_t count = 1; count <= 65536; count *= 256) {
            convoy__args a = make_args(colls[c], &t, count, &m);
            for (int i = 0; i < convoy__nalgos; i++) {
                const convoy__algo *al = &convoy__algos[i];
                if (!(al->props & CONVOY_ALGO_BASELINE) || !convoy__algo_serves(al, colls[c]) ||
                    (al->applicable && !al->applicable(&a)))
                    continue;
                double tn;
                EXPECT(convoy__native_preferred(al, &a, &m, &tn),
                       "%s %lld: baseline %s "
                       "%.2f us beats native %.2f us",
                       convoy__coll_name(colls[c]), (long long)count, al->name,
                       1e6 * convoy__algo_time(al, &a, &m), 1e6 * tn);
            }
        }
    convoy__topo_free(&t);
}

static int count_sends(const convoy__schedule *s)
{
    int k = 0;
    for (int i = 0; i < s->nsteps; i++)
        k += s->steps[i].kind == CONVOY_STEP_SEND;
    return k;
}

static void zero_copy_phase_as_built(void)
{
    convoy__topo t;
    make_topo(&t, 4, 8);
    convoy__args a = make_args(CONVOY_COLL_REDUCE_SCATTER_BLOCK, &t, 1, &cluster);
    a.shm_bytes = 0;
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_REDUCE_SCATTER_BLOCK, "lane");
    convoy__schedule s;
    convoy__sched_init(&s);
    int node_msgs = -1;
    if (al && al->build(&a, &s) == 0 && s.nchildren > 0) node_msgs = count_sends(s.children[0]);
    convoy__sched_free(&s);
    const double c = al ? convoy__algo_cost(al, &a, &cluster) : 0;
    const double floor = node_msgs * cluster.alpha_node + 2 * cluster.alpha + 2 * cluster.overhead;
    EXPECT(node_msgs >= 3 && c >= floor * (1 - 1e-9),
           "lane Reduce_scatter_block 4x8, 1 int: %.3f us < %d node messages + 2 lane rounds "
           "(%.3f us)",
           1e6 * c, node_msgs, 1e6 * floor);
    convoy__topo_free(&t);
}

static void strided_lane_allgather_by_hand(void)
{
    enum { N = 4, n = 8 };
    convoy__topo t;
    make_topo(&t, N, n);
    convoy__args a = make_args(CONVOY_COLL_ALLGATHER, &t, 1, &cluster);
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_ALLGATHER, "lane");
    const double blk = 4; /* bytes */
    const double hand = 3 * cluster.alpha + (N - 1) * blk * cluster.beta + 3 * cluster.alpha_node +
                        (n - 1) * N * blk * cluster.beta_node;
    const double c = al ? convoy__algo_cost(al, &a, &cluster) : 0;
    EXPECT(al && fabs(c - hand) < 1e-12, "strided lane Allgather 4x8: %.4f us, by hand %.4f us",
           1e6 * c, 1e6 * hand);
    int most = 0;
    int64_t ids[N * n];
    for (int r = 0; r < N * n; r++)
        ids[r] = r / n;
    for (int r = 0; al && r < N * n; r++) {
        convoy__topo tr;
        if (convoy__topo_from_ids(&tr, N * n, r, ids)) abort();
        convoy__args ar = make_args(CONVOY_COLL_ALLGATHER, &tr, 1, &cluster);
        convoy__schedule s;
        convoy__sched_init(&s);
        if (al->build(&ar, &s) == 0 && count_sends(&s) > most) most = count_sends(&s);
        convoy__sched_free(&s);
        convoy__topo_free(&tr);
    }
    EXPECT(most == 6, "strided lane Allgather 4x8: at most %d sends per rank, by hand 6", most);
    convoy__topo_free(&t);
}

/* READ steps in rank 0's schedule of al. */
static int reads_in(const convoy__algo *al, const convoy__args *a)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    int n = -1;
    if (al->build(a, &s) == 0) {
        n = 0;
        for (int i = 0; i < s.nsteps; i++)
            n += s.steps[i].kind == CONVOY_STEP_READ;
    }
    convoy__sched_free(&s);
    return n;
}

static void single_copy_by_model(void)
{
    convoy__topo t;
    make_topo(&t, 1, 2);
    const int colls2[] = {CONVOY_COLL_ALLREDUCE, CONVOY_COLL_ALLGATHERV};
    const char *names[] = {"node_ring", "node_segment"};
    const char *params[] = {"CONVOY_ALLREDUCE_CMA_MIN", "CONVOY_ALLGATHERV_CMA_MIN"};
    for (int k = 0; k < 2; k++) {
        const convoy__algo *al = convoy__algo_find(colls2[k], names[k]);
        /* rate of the reads (s/B): unmeasured, this host's 8 GB/s, 200 GB/s; then forced */
        const double rate[] = {0, 1.25e-10, 5e-12, 0};
        const int want[] = {0, 0, 1, 1};
        for (int v = 0; al && v < 4; v++) {
            convoy__machine m = {.alpha = 6e-7, .beta = 3.5e-11, .gamma = 4e-11, .cma = rate[v]};
            convoy__args a = make_args(colls2[k], &t, 1 << 20, &m);
            a.shm_bytes = 1 << 20;
            a.cma = 1;
            if (v == 3) {
                snprintf(a.params[0].name, sizeof a.params[0].name, "%s", params[k]);
                a.params[0].value = 0;
                a.nparams = 1;
            }
            const int n = reads_in(al, &a);
            EXPECT(n >= 0 && (n > 0) == want[v], "%s, reads at %.3g ns/B%s: %d READ steps, want %s",
                   names[k], 1e9 * rate[v], v == 3 ? " (forced)" : "", n,
                   want[v] ? "some" : "none");
        }
    }
    convoy__topo_free(&t);
}

/* The binomial Bcast's critical path, by hand (A = alpha + beta s a whole message, g =
 * alpha / 2 + beta s a later sibling's share): 32 processes 5 A (a power of two: the first
 * child's path, every hop the first send); 36: the root sends to 32 (a subtree of 4) and
 * then to 16 (a subtree of 16, 4 more hops), so the slowest leaf, 31, is 5 A + g; 3: A + g
 * (the root's second send); 1: nothing. A flat Bcast on 36 x 1 costs exactly that. */
static void binomial_bcast_by_hand(void)
{
    const double s = 4608, A = cluster.alpha + cluster.beta * s,
                 g = cluster.alpha / 2 + cluster.beta * s;
    const struct {
        int p;
        double hand;
    } cases[] = {{1, 0}, {2, A}, {3, A + g}, {32, 5 * A}, {36, 5 * A + g}, {64, 6 * A}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const double c = convoy__binomial_bcast_cost(&cluster, cases[i].p, s);
        EXPECT(fabs(c - cases[i].hand) < 1e-12,
               "binomial Bcast %d processes: %.4f us, by hand %.4f us", cases[i].p, 1e6 * c,
               1e6 * cases[i].hand);
    }
    convoy__topo t;
    make_topo(&t, 36, 1);
    convoy__args a = make_args(CONVOY_COLL_BCAST, &t, 1152, &cluster);
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_BCAST, "binomial");
    const double c = al ? convoy__algo_cost(al, &a, &cluster) : 0;
    EXPECT(al && fabs(c - (5 * A + g)) < 1e-12, "binomial Bcast 36 x 1: %.4f us, by hand %.4f us",
           1e6 * c, 1e6 * (5 * A + g));
    convoy__topo_free(&t);
}

/* Sends (or receives) posted at once overlap their latencies: k messages cost one whole
 * message and k - 1 shares, alpha + (k - 1) alpha / 2 + k beta b. The lane Reduce's gather
 * at the root is such a fan-in: on 4 x 8 at 64 ints its cost beyond the node reduce-scatter
 * and the lane reduces (convoy__lane_rs_then) is 7 blocks of 8 ints posted at once. */
static void posted_at_once_by_hand(void)
{
    const double b = 32;
    const double hand7 = cluster.alpha + 6 * cluster.alpha / 2 + 7 * cluster.beta * b;
    EXPECT(fabs(convoy__posted_cost(&cluster, 7, b) - hand7) < 1e-15 &&
               convoy__posted_cost(&cluster, 0, b) == 0,
           "posted cost of 7 messages: %.4f us, by hand %.4f us",
           1e6 * convoy__posted_cost(&cluster, 7, b), 1e6 * hand7);
    convoy__topo t;
    make_topo(&t, 4, 8);
    convoy__args a = make_args(CONVOY_COLL_REDUCE, &t, 64, &cluster);
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_REDUCE, "lane");
    const double gather =
        cluster.alpha_node + 6 * cluster.alpha_node / 2 + 7 * cluster.beta_node * b;
    const double c = al ? convoy__algo_cost(al, &a, &cluster) -
                              convoy__lane_rs_then(&a, &cluster, CONVOY_COLL_REDUCE)
                        : 0;
    EXPECT(al && fabs(c - gather) < 1e-12,
           "lane Reduce 4x8, 64 ints: gather %.4f us, by hand %.4f us", 1e6 * c, 1e6 * gather);
    convoy__topo_free(&t);
}

/* Allreduce node_ring on 4 x 8 at 64 Ki ints, 1 MiB segment, simulated Hydra's figures:
 * one piece of 8 KiB per process and part (b = B = 8192 < sqrt(2 alpha B / gamma)), by hand
 * 2 (N-1) (alpha + beta b) on the network, gamma n s ((M-1) M / min(S, M) + 2 (M-1) + 1) / M
 * on the node (the larger), plus (N-1) gamma b and 2 alpha. Slots default to M = 8 (all
 * handlers of a ring step reduce at once: 22/8 of gamma n s); forced to 2, only 2 of the 8
 * handlers reduce at a time and the node sums cost 4 times as much (43/8). */
static void node_ring_slots_by_hand(void)
{
    const convoy__machine m = {.alpha = 2.21e-6, .beta = 3.3e-10, .gamma = 2e-10};
    convoy__topo t;
    make_topo(&t, 4, 8);
    const double ns = 65536 * 4.0, b = 8192, N = 4;
    const double net = 2 * (N - 1) * (m.alpha + m.beta * b),
                 tail = (N - 1) * m.gamma * b + 2 * m.alpha;
    const double hand[] = {m.gamma * ns * (7.0 * 8 / 8 + 15) / 8,
                           m.gamma * ns * (7.0 * 8 / 2 + 15) / 8};
    for (int v = 0; v < 2; v++) {
        convoy__args a = make_args(CONVOY_COLL_ALLREDUCE, &t, 65536, &m);
        a.shm_bytes = 1 << 20;
        if (v == 1) {
            snprintf(a.params[0].name, sizeof a.params[0].name, "CONVOY_ALLREDUCE_NODE_RING_SLOTS");
            a.params[0].value = 2;
            a.nparams = 1;
        }
        const double c = convoy__allreduce_node_ring_cost(&a, &m);
        const double h = (hand[v] > net ? hand[v] : net) + tail;
        EXPECT(fabs(c - h) < 1e-12,
               "node_ring 4 x 8, 64 Ki ints, %s slots: %.4f us, by hand %.4f us",
               v ? "2" : "default", 1e6 * c, 1e6 * h);
    }
    convoy__topo_free(&t);
}

static void lane_aware_rounds_by_hand(void)
{
    const convoy__machine m = {.alpha = 2e-6,
                               .beta = 1e-10,
                               .gamma = 2e-10,
                               .alpha_node = 1e-6,
                               .beta_node = 5e-11,
                               .beta_nic = 1e-10};
    const double b = 4000, red = m.gamma * b, node = m.alpha_node + m.beta_node * b,
                 one = m.alpha + m.beta * b, lanes2 = m.alpha + 2 * m.beta_nic * b;
    convoy__topo t;
    make_topo(&t, 2, 2);
    convoy__args a = make_args(CONVOY_COLL_ALLREDUCE, &t, 1000, &m);
    double c = convoy__allreduce_recdbl_cost(&a, &m), h = node + red + lanes2 + red;
    EXPECT(fabs(c - h) < 1e-15, "recdbl 2 x 2, 1000 ints: %.4f us, by hand %.4f us", 1e6 * c,
           1e6 * h);
    snprintf(a.params[0].name, sizeof a.params[0].name, "CONVOY_DISSEM_N");
    a.params[0].value = 1;
    a.nparams = 1;
    convoy__dissem_plan pl;
    convoy__allreduce_dissem_plan(&a, &pl);
    c = convoy__allreduce_dissem_cost(&a, &m), h = one + red + lanes2 + red;
    EXPECT(pl.n == 1 && pl.k == 2 && pl.m == 2 && pl.nwin == 1 && pl.extra == 0 &&
               fabs(c - h) < 1e-15,
           "dissem n = 1 on 2 x 2, 1000 ints (plan n %d k %d m %lld windows %d extra %lld): "
           "%.4f us, by hand %.4f us",
           pl.n, pl.k, (long long)pl.m, pl.nwin, (long long)pl.extra, 1e6 * c, 1e6 * h);
    convoy__topo_free(&t);
    make_topo(&t, 3, 2);
    a = make_args(CONVOY_COLL_ALLREDUCE, &t, 1000, &m);
    c = convoy__allreduce_recdbl_cost(&a, &m), h = 2 * (one + red) + 2 * one + red;
    EXPECT(fabs(c - h) < 1e-15, "recdbl 3 x 2 (a fold), 1000 ints: %.4f us, by hand %.4f us",
           1e6 * c, 1e6 * h);
    convoy__topo_free(&t);
}

/* Where the setup measured the gaps (coll.h): the simulated Hydra's figures (SMPI charges
 * each send 0.5 us + 0.125 ns/B on its sender and each receive as much on its receiver).
 *  - k messages posted at once: one whole message and k - 1 gaps, alpha + beta b + (k - 1)
 *    (gap + gap_b b); a gap measured above a whole message counts as a whole one;
 *  - the binomial Bcast's later sibling costs the gap: 36 processes 5 A + gap(s);
 *  - the node level takes the node's gap; k lanes at once pace a further message's bytes
 *    at k beta_nic where that exceeds beta;
 *  - Allgatherv direct on one node of 8: alpha_node + beta_node b + 6 xgap(b);
 *  - Bcast klane_pipeline on 4 x 4, 4096 ints, 2 blocks (CONVOY_BCAST_KLANE_BLOCKS):
 *    pieces of 2048 bytes; the root's step (one node message), N + 1 = 5 lane messages at
 *    4 beta_nic
 *    (the chain and the way back) and per block the slower of a replica's k = 4 message
 *    pairs (4 xgap) and one lane plus one node message; and without the parameter the
 *    model's block count costs no more than any other from 1 to 64. */
static const convoy__machine gapped = {.alpha = 2.2e-6,
                                       .beta = 3.3e-10,
                                       .gamma = 2e-10,
                                       .alpha_node = 1.25e-6,
                                       .beta_node = 4.17e-10,
                                       .beta_nic = 1e-10,
                                       .gap = 5e-7,
                                       .gap_b = 1.25e-10,
                                       .gap_node = 4e-7,
                                       .gap_node_b = 1.5e-10,
                                       .xgap_node = 1e-6,
                                       .xgap_node_b = 2.5e-10};

static void measured_gaps_by_hand(void)
{
    const convoy__machine *m = &gapped;
    const double b = 576, A = m->alpha + m->beta * b, g = m->gap + m->gap_b * b;
    const double hand7 = A + 6 * g;
    EXPECT(fabs(convoy__posted_cost(m, 7, b) - hand7) < 1e-15,
           "measured gap: posted cost of 7 messages %.4f us, by hand %.4f us",
           1e6 * convoy__posted_cost(m, 7, b), 1e6 * hand7);
    convoy__machine big = gapped;
    big.gap = 1e-5;
    EXPECT(fabs(convoy__posted_cost(&big, 7, b) - 7 * A) < 1e-15,
           "gap above a message: posted cost %.4f us, 7 whole ones %.4f us",
           1e6 * convoy__posted_cost(&big, 7, b), 1e6 * 7 * A);
    const double s = 4608, As = m->alpha + m->beta * s, gs = m->gap + m->gap_b * s;
    EXPECT(fabs(convoy__binomial_bcast_cost(m, 36, s) - (5 * As + gs)) < 1e-15,
           "measured gap: binomial Bcast 36: %.4f us, by hand %.4f us",
           1e6 * convoy__binomial_bcast_cost(m, 36, s), 1e6 * (5 * As + gs));
    const convoy__machine node = convoy__lane_level(m, 0), lanes = convoy__lane_level(m, 8),
                          two = convoy__lane_level(m, 2);
    EXPECT(node.gap == m->gap_node && node.gap_b == m->gap_node_b,
           "node level: gap %.3g + %.3g, the node's %.3g + %.3g", node.gap, node.gap_b, m->gap_node,
           m->gap_node_b);
    EXPECT(lanes.beta == 8 * m->beta_nic && lanes.gap_b == 8 * m->beta_nic && two.gap_b == m->gap_b,
           "8 lanes at once: beta %.3g, gap_b %.3g (by hand %.3g); 2 lanes: gap_b %.3g", lanes.beta,
           lanes.gap_b, 8 * m->beta_nic, two.gap_b);

    convoy__topo t;
    make_topo(&t, 1, 8);
    convoy__args a = make_args(CONVOY_COLL_ALLGATHERV, &t, 128, m);
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_ALLGATHERV, "direct");
    const double blk = 512, dhand = m->alpha_node + m->beta_node * blk +
                                    6 * (m->xgap_node + m->xgap_node_b * blk);
    const double dc = al ? al->cost(&a, &node) : 0;
    EXPECT(al && fabs(dc - dhand) < 1e-15, "direct Allgatherv 1 x 8, 512 B: %.4f us, by hand %.4f",
           1e6 * dc, 1e6 * dhand);
    convoy__topo_free(&t);

    make_topo(&t, 4, 4);
    a = make_args(CONVOY_COLL_BCAST, &t, 4096, m);
    al = convoy__algo_find(CONVOY_COLL_BCAST, "klane_pipeline");
    /* 4 lanes at once: 4 beta_nic = 0.4 ns/B is above beta (0.33) and paces the lanes. */
    const double piece = 2048, lmsg = m->alpha + 4 * m->beta_nic * piece,
                 nmsg = m->alpha_node + m->beta_node * piece,
                 work = 4 * (m->xgap_node + m->xgap_node_b * piece);
    const double khand = nmsg + 5 * lmsg + 2 * (work > lmsg + nmsg ? work : lmsg + nmsg);
    a.nparams = 1;
    snprintf(a.params[0].name, sizeof a.params[0].name, "CONVOY_BCAST_KLANE_BLOCKS");
    a.params[0].value = 2;
    const double kc = al ? convoy__algo_cost(al, &a, m) : 0;
    EXPECT(al && fabs(kc - khand) < 1e-15 && work > lmsg + nmsg,
           "klane_pipeline 4 x 4, 4096 ints, 2 blocks: %.4f us, by hand %.4f us", 1e6 * kc,
           1e6 * khand);
    a.nparams = 0;
    const double chosen = al ? convoy__algo_cost(al, &a, m) : 0;
    for (int nb = 1; nb <= 64 && al; nb++) {
        a.nparams = 1;
        a.params[0].value = nb;
        const double c = convoy__algo_cost(al, &a, m);
        a.nparams = 0;
        EXPECT(chosen <= c + 1e-15, "klane_pipeline's block count: %.4f us, %d blocks %.4f us",
               1e6 * chosen, nb, 1e6 * c);
    }
    convoy__topo_free(&t);
}

/* One model on 2 x 2 against costs derived by hand: at m's share and, unless want_own < 0,
 * with cores of their own (share 1); a parameter where param is not NULL. */
static void cost_on_2x2_by_hand(int coll, const char *name, int64_t count, const convoy__machine *m,
                                const char *param, int64_t value, double want, double want_own)
{
    convoy__topo t;
    make_topo(&t, 2, 2);
    convoy__args a = make_args(coll, &t, count, m);
    if (param) {
        a.nparams = 1;
        snprintf(a.params[0].name, sizeof a.params[0].name, "%s", param);
        a.params[0].value = value;
    }
    const convoy__algo *al = convoy__algo_find(coll, name);
    const double got = al ? convoy__algo_cost(al, &a, m) : 0;
    EXPECT(al && fabs(got - want) < 1e-12,
           "%s %s, %lld elements on 2 x 2, share %.0f: %.2f us (by hand %.2f)",
           convoy__coll_name(coll), name, (long long)count, m->share, 1e6 * got, 1e6 * want);
    if (want_own >= 0) {
        convoy__machine own = *m;
        own.share = 1;
        a.machine = own;
        const double got_own = al ? convoy__algo_cost(al, &a, &own) : 0;
        EXPECT(al && fabs(got_own - want_own) < 1e-12,
               "%s %s with cores of its own: %.2f us (by hand %.2f)", convoy__coll_name(coll), name,
               1e6 * got_own, 1e6 * want_own);
    }
    convoy__topo_free(&t);
}

static void alltoall_shared_cores_by_hand(void)
{
    /* 2 x 2 on 2 cores (share 2), 64 KiB blocks: pairwise waits 3 times and linear once,
     * each receiving 3 blocks, which on shared cores take share * beta per byte; with cores
     * of their own, pairwise's latency model: 3 rounds. */
    const convoy__machine m = {.alpha = 4e-6,
                               .beta = 1.2e-10,
                               .alpha_node = 4e-6,
                               .beta_node = 1.2e-10,
                               .xgap_node = 1e-7,
                               .xgap_node_b = 1e-10,
                               .share = 2};
    const int64_t count = 16384;
    const double b = 4.0 * count, recv = 3 * b;
    cost_on_2x2_by_hand(CONVOY_COLL_ALLTOALL, "pairwise", count, &m, NULL, 0,
                        2 * (3 * m.alpha + recv * m.beta), 3 * (m.alpha + b * m.beta));
    cost_on_2x2_by_hand(CONVOY_COLL_ALLTOALL, "linear", count, &m, NULL, 0,
                        2 * (m.alpha + recv * m.beta), -1);
}

static void bcast_shared_cores_by_hand(void)
{
    /* 2 x 2 on 2 cores (share 2), 1M ints: scatter_allgather's scatter (2 levels, 3/4 of
     * the bytes down its critical path) as on cores of their own; its ring (3 rounds, 3/4
     * of the bytes into every process at once) on the shared cores at share x. With cores
     * of their own: 5 rounds, twice 3/4 of the bytes. */
    const convoy__machine m = {
        .alpha = 4e-6, .beta = 1.2e-10, .alpha_node = 4e-6, .beta_node = 1.2e-10, .share = 2};
    const double n = 4.0 * (1 << 20), ring = 0.75 * n;
    cost_on_2x2_by_hand(CONVOY_COLL_BCAST, "scatter_allgather", 1 << 20, &m, NULL, 0,
                        2 * m.alpha + ring * m.beta + 2 * (3 * m.alpha + ring * m.beta),
                        5 * m.alpha + 2 * ring * m.beta);
    /* klane_pipeline, 8 blocks of 2 pieces: every process receives 2 pieces per block, the
     * whole message in all, at share x; with cores of their own (no gap measured) 8 + 3
     * steps of a lane and a node message of one piece. */
    const double piece = n / 16, step = 2 * (m.alpha + m.beta * piece);
    cost_on_2x2_by_hand(CONVOY_COLL_BCAST, "klane_pipeline", 1 << 20, &m,
                        "CONVOY_BCAST_KLANE_BLOCKS", 8, 2 * (16 * m.alpha + n * m.beta), 11 * step);
    /* lane: every process receives the message, half by the scatter or its lane and half in
     * the node allgather, a wait each, at share x (its three phases of half messages, each
     * one alpha and beta n / 2 here, come to less). */
    cost_on_2x2_by_hand(CONVOY_COLL_BCAST, "lane", 1 << 20, &m, NULL, 0,
                        2 * (2 * m.alpha + n * m.beta), -1);
}

static void sized_by_hand(void)
{
    const convoy__machine m = {.alpha = 1e-6,
                               .beta = 1e-10,
                               .beta_large = 3e-10,
                               .beta_node = 2e-11,
                               .beta_node_large = 4e-11,
                               .beta_nic = 5e-11,
                               .gap_b = 6e-11,
                               .gap_node_b = 1e-11,
                               .xgap_node_b = 3e-11};
    const double mid = sqrt((double)CONVOY_BETA_BYTES * CONVOY_BETA_LARGE_BYTES);
    const struct {
        double bytes, f, fn; /* the flat and the node pair's factors on beta */
    } c[] = {{1, 1, 1}, {32768, 1, 1}, {mid, 2, 1.5}, {1 << 20, 3, 2}, {1 << 26, 3, 2}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const convoy__machine r = convoy__machine_sized(&m, c[i].bytes);
        const double want[6] = {m.beta * c[i].f, m.beta_node * c[i].fn, m.beta_nic,
                                m.gap_b,         m.gap_node_b,          m.xgap_node_b},
                     got[6] = {r.beta,  r.beta_node,  r.beta_nic,
                               r.gap_b, r.gap_node_b, r.xgap_node_b};
        for (int k = 0; k < 6; k++)
            EXPECT(fabs(got[k] - want[k]) <= 1e-9 * want[k], "%.0f bytes, term %d: %g, want %g",
                   c[i].bytes, k, got[k], want[k]);
        EXPECT(r.alpha == m.alpha && r.beta_large == 0 && r.beta_node_large == 0,
               "%.0f bytes: alpha kept, no large values left", c[i].bytes);
        const convoy__machine again = convoy__machine_sized(&r, c[i].bytes);
        EXPECT(memcmp(&again, &r, sizeof r) == 0, "%.0f bytes: sized twice", c[i].bytes);
    }
    convoy__machine low = m;
    low.beta_large = 5e-11, low.beta_node_large = 1e-11;
    const convoy__machine r = convoy__machine_sized(&low, 1 << 20);
    EXPECT(r.beta == m.beta && r.beta_node == m.beta_node && r.gap_b == m.gap_b,
           "a large rate below the middle one keeps the middle one: beta %g", r.beta);
}

/* The trial's candidates (convoy__select_close): the model's choice first, then the other
 * usable algorithms within the factor by predicted time, the slowest dropped from a full
 * list; checked against every registered algorithm one by one. */
static void close_candidates(void)
{
    const int shapes[][2] = {{2, 2}, {4, 1}, {2, 4}};
    for (int s = 0; s < 3; s++) {
        convoy__topo t;
        make_topo(&t, shapes[s][0], shapes[s][1]);
        for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
            for (int64_t count = 1; count <= 1000000; count *= 100) {
                const convoy__args a = make_args(colls[c], &t, count, &cluster);
                const char *name = convoy__coll_name(colls[c]);
                const convoy__algo *out[4];
                const int n = convoy__select_close(&a, &cluster, 2, out, 4);
                const convoy__algo *best = convoy__select(&a, &cluster, NULL, 0);
                EXPECT(n >= 1 && n <= 4 && out[0] == best,
                       "%s %lld on %dx%d: %d candidates, %s first", name, (long long)count,
                       shapes[s][0], shapes[s][1], n, n ? out[0]->name : "none");
                if (n < 1 || out[0] != best) continue;
                const double t0 = convoy__algo_time(best, &a, &cluster);
                for (int i = 1; i < n; i++) {
                    const double ti = convoy__algo_time(out[i], &a, &cluster);
                    EXPECT(ti >= convoy__algo_time(out[i - 1], &a, &cluster) && ti <= 2 * t0 &&
                               convoy__select(&a, &cluster, out[i]->name, 0) == out[i],
                           "%s %lld on %dx%d: candidate %d, %s, at %.2f us (best %.2f us)", name,
                           (long long)count, shapes[s][0], shapes[s][1], i, out[i]->name, 1e6 * ti,
                           1e6 * t0);
                }
                /* Every usable algorithm within the factor is listed, or slower than the
                 * full list's last. */
                for (int i = 0; i < convoy__nalgos; i++) {
                    const convoy__algo *al = &convoy__algos[i];
                    if (!convoy__algo_serves(al, colls[c]) ||
                        convoy__select(&a, &cluster, al->name, 0) != al)
                        continue;
                    const double ti = convoy__algo_time(al, &a, &cluster);
                    int listed = 0;
                    for (int j = 0; j < n; j++)
                        listed |= out[j] == al;
                    EXPECT(listed || ti > 2 * t0 ||
                               (n == 4 && ti >= convoy__algo_time(out[3], &a, &cluster)),
                           "%s %lld on %dx%d: %s at %.2f us left out (best %.2f us, %d listed)",
                           name, (long long)count, shapes[s][0], shapes[s][1], al->name, 1e6 * ti,
                           1e6 * t0, n);
                }
            }
        convoy__topo_free(&t);
    }
}

int main(void)
{
    small_counts_on_one_host();
    hier_bcast_by_hand();
    never_below_slowest_phase();
    native_kept_when_cheaper();
    convoy_kept_when_cheaper();
    flat_copy_never_beats_native();
    zero_copy_phase_as_built();
    strided_lane_allgather_by_hand();
    single_copy_by_model();
    binomial_bcast_by_hand();
    posted_at_once_by_hand();
    node_ring_slots_by_hand();
    lane_aware_rounds_by_hand();
    measured_gaps_by_hand();
    sized_by_hand();
    alltoall_shared_cores_by_hand();
    bcast_shared_cores_by_hand();
    close_candidates();
    return unit_done();
}
