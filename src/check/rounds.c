/*
 * Round analyses: an algorithm whose paper counts its communication rounds gets that count
 * checked. Lockstep mode measures rounds (each rank at most one send and one receive per
 * round, every message as early as the schedule allows); the analysis here predicts them
 * from the case alone, and a case fails when the two disagree. An algorithm can also claim
 * SMP-aware rounds, which the lockstep run then checks round by round (world.c).
 *
 * The prediction uses only what the paper's analysis uses (counts, block size, the order
 * of the ring); the ring order is read off the schedules (whom each rank sends to), so the
 * count checks the placement the builder chose, and the placement itself is checked where
 * the analysis says what it must be.
 */
#include "check/check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*rounds_fn)(const convoy__args *args, const convoy__schedule *const *scheds,
                         convoy__check_stats *st, char *why, size_t len);

/* Peer of rank i's first send, or -1. */
static int first_send_peer(const convoy__schedule *s)
{
    for (int k = 0; k < s->nsteps; k++)
        if (s->steps[k].kind == CONVOY_STEP_SEND && s->steps[k].comm == CONVOY_COMM_ALL)
            return s->steps[k].peer;
    return -1;
}

/*
 * The pipelined ring (papers/002 §2.2-2.3, src/coll/allgatherv/allgatherv_pipelined.c):
 * b_i = max(1, ceil(m_i / B)), b = sum b_i, N = the blocks with data, n processes with data,
 * z = p - n without. Bound: eq. (1), b - min b_i; exact with all m_i > 0. With 0 < z:
 * N - 1 + g_max, g_max the longest run of empty processes in the ring, whenever every
 * process j with data has b_j > g_j (the run before it; n = 1: always); equidistant
 * placement gives g_max = ceil(z / n) (§2.3), which the ring must reach when the SMP
 * constraint does not bind (one node, or one process per node).
 */
static int pipelined_rounds(const convoy__args *args, const convoy__schedule *const *scheds,
                            convoy__check_stats *st, char *why, size_t len)
{
    const convoy__topo *t = args[0].topo;
    const int P = t->size;
    const int64_t *m = args[0].rcounts, be = convoy__allgatherv_pipelined_block(&args[0]);
    int64_t b = 0, nreal = 0, minb = INT64_MAX;
    int n = 0, holder = -1;
    for (int i = 0; i < P; i++) {
        const int64_t bi = m[i] > 0 ? (m[i] + be - 1) / be : 1;
        b += bi;
        if (bi < minb) minb = bi;
        if (m[i] > 0) {
            nreal += bi;
            n++;
            holder = i;
        }
    }
    const int z = P - n;
    const int64_t eq1 = b - minb, measured = st->rounds;
    st->rounds_bound = eq1;
    if (n == 0) {
        st->rounds_exact = 0;
        snprintf(st->rounds_how, sizeof st->rounds_how, "no data: 0; eq. (1) %lld", (long long)eq1);
    } else if (z == 0) {
        st->rounds_exact = eq1;
        snprintf(st->rounds_how, sizeof st->rounds_how,
                 "eq. (1) b - min b_i = %lld - %lld = %lld (B = %lld elements)", (long long)b,
                 (long long)minb, (long long)eq1, (long long)be);
    } else {
        /* The ring: whom each rank sends to. Only the predecessor of the single process
         * with data (n = 1) has nothing to send; its successor is that process. */
        int *next = malloc((size_t)P * sizeof *next), *seen = calloc((size_t)P, sizeof *seen);
        int bad = !next || !seen;
        if (bad) snprintf(why, len, "checker out of memory");
        for (int i = 0; !bad && i < P; i++) {
            next[i] = first_send_peer(scheds[i]);
            if (next[i] < 0 && n == 1) next[i] = holder;
            if (next[i] < 0 || next[i] == i) {
                snprintf(why, len, "rank %d has no ring successor (it sends nothing)", i);
                bad = 1;
            }
        }
        int cur = holder;
        for (int k = 0; !bad && k < P; k++, cur = next[cur])
            if (seen[cur]++) {
                snprintf(why, len, "the sends do not form one ring over all %d ranks", P);
                bad = 1;
            }
        /* Runs of empty processes, walking once around from the holder back to it. */
        int64_t run = 0, gmax = 0;
        int idle = -1; /* a process with data that may idle (b_j <= g_j) */
        for (int k = 0; !bad && k < P; k++) {
            cur = next[cur];
            if (m[cur] == 0) {
                run++;
                continue;
            }
            if (run > gmax) gmax = run;
            if (n > 1 && (m[cur] + be - 1) / be <= run && idle < 0) idle = cur;
            run = 0;
        }
        free(next);
        free(seen);
        if (bad) return 1;
        const int64_t equi = nreal - 1 + (z + n - 1) / n;
        st->rounds_exact = idle < 0 ? nreal - 1 + gmax : -1;
        snprintf(st->rounds_how, sizeof st->rounds_how,
                 "§2.3 N - 1 + ceil(z/n) = %lld - 1 + ceil(%d/%d) = %lld; this ring: g_max %lld, "
                 "%s; eq. (1) b - min b_i = %lld (B = %lld elements)",
                 (long long)nreal, z, n, (long long)equi, (long long)gmax,
                 idle < 0 ? "every b_j > g_j" : "some b_j <= g_j (bound only)", (long long)eq1,
                 (long long)be);
        if ((t->nnodes == 1 || t->nnodes == P) && gmax != (z + n - 1) / n) {
            snprintf(why, len,
                     "empty contributors not placed equidistantly: a run of %lld where "
                     "ceil(z/n) = ceil(%d/%d) = %d is possible",
                     (long long)gmax, z, n, (z + n - 1) / n);
            return 1;
        }
    }
    if (measured > eq1) {
        snprintf(why, len, "%lld rounds, more than eq. (1) allows: %s", (long long)measured,
                 st->rounds_how);
        return 1;
    }
    if (st->rounds_exact >= 0 && measured != st->rounds_exact) {
        snprintf(why, len, "%lld rounds, predicted %lld: %s", (long long)measured,
                 (long long)st->rounds_exact, st->rounds_how);
        return 1;
    }
    return 0;
}

/*
 * The n-way dissemination barrier (papers/003, src/coll/barrier/barrier_dissem.c): k =
 * ceil(log_{n+1} P) rounds, n messages per rank in each but the last, m = ceil(P /
 * (n+1)^(k-1)) - 1 in the last. Every rank's i-th message of a round goes to a distinct
 * receiver (offset i (n+1)^(l-1)), so the lockstep rounds (one send and one receive per
 * rank) split each round into as many as it has messages: exactly (k-1) n + m.
 */
static int barrier_dissem_rounds(const convoy__args *args, const convoy__schedule *const *scheds,
                                 convoy__check_stats *st, char *why, size_t len)
{
    (void)scheds;
    int n, k, m;
    convoy__barrier_dissem_shape(&args[0], &n, &k, &m);
    const int P = args[0].topo->size;
    const int64_t exact = k > 0 ? (int64_t)(k - 1) * n + m : 0;
    int64_t W = 1; /* (n+1)^(k-1) */
    for (int l = 1; l < k; l++)
        W *= n + 1;
    st->rounds_bound = st->rounds_exact = exact;
    snprintf(st->rounds_how, sizeof st->rounds_how,
             "n = %d, k = ceil(log_%d %d) = %d rounds, last round m = ceil(%d / %lld) - 1 = %d: "
             "(k-1) n + m = %lld",
             n, n + 1, P, k, P, (long long)W, m, (long long)exact);
    if (st->rounds != exact) {
        snprintf(why, len, "%lld rounds, predicted %lld: %s", (long long)st->rounds,
                 (long long)exact, st->rounds_how);
        return 1;
    }
    return 0;
}

/*
 * Reduce_scatter by a ring (src/coll/reduce_scatter/reduce_scatter_ring.c): every non-empty
 * block makes p - 1 hops, one per round, each waiting for the previous one; all blocks move
 * at once. p - 1 rounds exactly when some block is non-empty, else 0.
 */
static int rs_ring_rounds(const convoy__args *args, const convoy__schedule *const *scheds,
                          convoy__check_stats *st, char *why, size_t len)
{
    (void)scheds;
    const int P = args[0].topo->size;
    int64_t maxb = 0;
    for (int i = 0; i < P; i++)
        if (args[0].rcounts[i] > maxb) maxb = args[0].rcounts[i];
    st->rounds_bound = st->rounds_exact = maxb > 0 ? P - 1 : 0;
    snprintf(st->rounds_how, sizeof st->rounds_how, "p - 1 = %d (0 when every block is empty)",
             P - 1);
    if (st->rounds != st->rounds_exact) {
        snprintf(why, len, "%lld rounds, predicted %lld: %s", (long long)st->rounds,
                 (long long)st->rounds_exact, st->rounds_how);
        return 1;
    }
    return 0;
}

/*
 * Reduce_scatter by recursive halving (reduce_scatter_rechalving.c): log2 p' levels of one
 * exchange each, plus the fold and the return when p is not a power of two (p' the largest
 * power of two <= p). Exact when every block is non-empty; with empty blocks some messages
 * vanish and the count is a bound.
 */
static int rs_rechalving_rounds(const convoy__args *args, const convoy__schedule *const *scheds,
                                convoy__check_stats *st, char *why, size_t len)
{
    (void)scheds;
    const int P = args[0].topo->size;
    int pp = 1, levels = 0, all = 1;
    while (pp * 2 <= P) {
        pp *= 2;
        levels++;
    }
    int64_t n = 0;
    for (int i = 0; i < P; i++) {
        all &= args[0].rcounts[i] > 0;
        n += args[0].rcounts[i];
    }
    const int64_t pred = P == 1 || n == 0 ? 0 : levels + (P > pp ? 2 : 0);
    st->rounds_bound = pred;
    st->rounds_exact = all || n == 0 ? pred : -1;
    snprintf(st->rounds_how, sizeof st->rounds_how,
             "log2 p' + 2 (p > p') = %d + %d = %lld (p' = %d)%s", levels, P > pp ? 2 : 0,
             (long long)pred, pp, all ? "" : "; empty blocks: bound only");
    if (st->rounds > pred || (st->rounds_exact >= 0 && st->rounds != st->rounds_exact)) {
        snprintf(why, len, "%lld rounds, predicted %s%lld: %s", (long long)st->rounds,
                 st->rounds_exact >= 0 ? "" : "at most ", (long long)pred, st->rounds_how);
        return 1;
    }
    return 0;
}

/*
 * The n-way dissemination Allreduce (papers/003, papers/001 as n = 1;
 * src/coll/allreduce/allreduce_dissem.c), in a lockstep with n + M ports per rank and
 * direction (n messages of a standard round plus the last round's M windows, which are
 * sent ahead in the round after they are made). Bound: k = ceil(log_{n+1} P) rounds for
 * every P, tuple or fallback. Exact: max(k - 1, l_i + 1) over the windows i of the last
 * round (l_i: the round that makes window i; a full window is made in round k - 1), so
 * k whenever a full window travels, k - 1 when only earlier windows do (e.g. n = 1,
 * P - 2^(k-1) made of windows of at most 2^(k-2) ranks). Messages: n (k - 1) + M per rank,
 * the fallback's cost being its M - 1 windows beyond the one partial window of a tuple.
 */
static int allreduce_dissem_rounds(const convoy__args *args, const convoy__schedule *const *scheds,
                                   convoy__check_stats *st, char *why, size_t len)
{
    (void)scheds;
    const int P = args[0].topo->size;
    convoy__dissem_plan pl;
    convoy__allreduce_dissem_plan(&args[0], &pl);
    char d[512];
    convoy__dissem_plan_describe(&pl, d, sizeof d);
    const int64_t per = args[0].count > 0 && P > 1 ? (int64_t)pl.n * (pl.k - 1) + pl.nwin : 0;
    st->rounds_bound = args[0].count > 0 ? pl.k : 0;
    st->rounds_exact = args[0].count > 0 ? pl.rounds : 0;
    snprintf(st->rounds_how, sizeof st->rounds_how, "k = ceil(log_%d(%d)) = %d; %.190s", pl.n + 1,
             P, pl.k, d);
    if (st->rounds != st->rounds_exact || st->rounds > st->rounds_bound) {
        snprintf(why, len, "%lld rounds, predicted %lld (bound %lld): %s", (long long)st->rounds,
                 (long long)st->rounds_exact, (long long)st->rounds_bound, st->rounds_how);
        return 1;
    }
    if (st->rank_msgs_max != per || st->msgs != per * P) {
        snprintf(why, len, "%lld messages (at most %lld per rank), predicted %lld per rank: %s",
                 (long long)st->msgs, (long long)st->rank_msgs_max, (long long)per, st->rounds_how);
        return 1;
    }
    return 0;
}

static const struct analysis {
    int coll;
    const char *name;
    rounds_fn rounds; /* NULL: no round count to check */
    int smp;          /* claims SMP-aware rounds */
} analyses[] = {
    {CONVOY_COLL_ALLGATHERV, "pipelined", pipelined_rounds, 1},
    {CONVOY_COLL_ALLREDUCE, "dissem", allreduce_dissem_rounds, 0},
    {CONVOY_COLL_BARRIER, "dissem", barrier_dissem_rounds, 0},
    {CONVOY_COLL_REDUCE_SCATTER, "ring", rs_ring_rounds, 0},
    {CONVOY_COLL_REDUCE_SCATTER, "rechalving", rs_rechalving_rounds, 0},
};

static const struct analysis *find(const convoy__algo *al)
{
    for (size_t i = 0; al && i < sizeof analyses / sizeof analyses[0]; i++)
        if (analyses[i].coll == al->coll && strcmp(analyses[i].name, al->name) == 0)
            return &analyses[i];
    return NULL;
}

int chk_claims_smp(const convoy__algo *al)
{
    const struct analysis *an = find(al);
    return an && an->smp;
}

int chk_lockstep_ports(const convoy__check_case *c, const convoy__args *args)
{
    if (c->algo && c->algo->coll == CONVOY_COLL_ALLREDUCE &&
        c->algo->build == convoy__allreduce_dissem) {
        convoy__dissem_plan pl;
        convoy__allreduce_dissem_plan(&args[0], &pl);
        return pl.n + pl.nwin;
    }
    return 1;
}

int chk_rounds_verdict(const convoy__check_case *c, const convoy__args *args,
                       const convoy__schedule *const *scheds, convoy__check_stats *st, char *why,
                       size_t len)
{
    const struct analysis *an = find(c->algo);
    if (!an || !an->rounds) return 0;
    return an->rounds(args, scheds, st, why, len);
}
