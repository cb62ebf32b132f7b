/*
 * convoy-check: proves algorithms with the symbolic checker, without MPI.
 *
 *   convoy-check --coll allgatherv --algo ring --procs 1-64 --ppn 1,2,3,4 \
 *                --layouts regular,nonuniform,scattered --counts random,zeros,broadcast
 *
 * prints one line per failed case (the case and the reason), optionally statistics, and
 * as its last line "N passed, M failed"; the exit status is non-zero if any case failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check.h"
#include "check/dist.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: convoy-check [options]\n"
            "  --coll C[,C]          allgatherv, allreduce, barrier, reduce_scatter, bcast,\n"
            "                        gather, gatherv, scatter, scatterv, reduce, scan, exscan,\n"
            "                        alltoall (default:\n"
            "                        every collective with a registered algorithm)\n"
            "  --algo NAME[,NAME]|all  algorithms (default all registered; the checker also\n"
            "                        knows the test builder shm_stream for allgatherv)\n"
            "  --procs LIST          process counts, e.g. 1-8,13,64 (default 1-16)\n"
            "  --ppn LIST            processes per node (default 1,2,3,4)\n"
            "  --layouts LIST        regular,nonuniform,scattered (default all three)\n"
            "  --ids 0,0,1,...       explicit node id per rank (instead of procs/ppn/layouts)\n"
            "  --counts LIST|all     allgatherv, reduce_scatter, gatherv and scatterv count\n"
            "                        distributions\n"
            "                        (per-rank blocks; default random,zeros,broadcast;\n"
            "                        all: every known one)\n"
            "  --base C              base count c of the distributions (default 5)\n"
            "  --count LIST          allreduce, bcast, reduce, scan, exscan element counts,\n"
            "                        gather and scatter counts per rank, alltoall elements per\n"
            "                        block (default 0,1,7)\n"
            "  --root LIST|all       roots of rooted collectives (and reduce): ranks, last,\n"
            "                        mid, all (default 0; ranks >= P are skipped)\n"
            "  --op comm,noncomm,idem  allreduce and reduce_scatter operation kinds (default\n"
            "                        comm,noncomm; noncomm only for algorithms that claim to\n"
            "                        keep rank order; idem (allreduce): idempotent,\n"
            "                        overlapping contributions allowed)\n"
            "  --inplace LIST        0,1 (default both)\n"
            "  --seeds N             seeds 1..N per case (default 2)\n"
            "  --seed S              only seed S (to reproduce a failure)\n"
            "  --mode LIST           lockstep,shuffle (default both)\n"
            "  --ops N               operations in a row per run (default: 2 with a node\n"
            "                        segment, else 1)\n"
            "  --shm-bytes B         node segment offered to builders (default 65536)\n"
            "  --cma 0|1             node peers' buffers readable by builders (cross-memory\n"
            "                        attach, default 1)\n"
            "  --param NAME=VALUE    algorithm parameter (repeatable)\n"
            "  --smp-check           lockstep: fail a round in which a node sends or receives\n"
            "                        more than one inter-node message (always on for\n"
            "                        algorithms that claim it, e.g. allgatherv pipelined)\n"
            "  --assert-inter-spread R  fail a case with regular data (equal non-zero counts,\n"
            "                        equal node sizes, more than one node) in which one rank\n"
            "                        sends + receives more than R times the inter-node bytes\n"
            "                        of another (the spread over a node's processes/lanes;\n"
            "                        rooted collectives, Scan, Exscan: within each node)\n"
            "  --stats               per-algorithm statistics (rounds, messages, bytes, idle\n"
            "                        ranks, inter-node messages at once)\n"
            "  --expect-busy         fail a case with 2+ nodes (allreduce: and count >= nodes x\n"
            "                        largest node) in which a rank sends or receives no\n"
            "                        inter-node message or (allreduce) reduces nothing\n"
            "  --expect-node-bytes F  fail a case with regular data in which a node sends\n"
            "                        other than F inter-node bytes; F: + - * / ( ) over\n"
            "                        integers and N (nodes), n (largest node), P, c (bytes\n"
            "                        per element), m (bytes per rank's block; allreduce:\n"
            "                        of the vector), e.g. \"(N-1)*n*m\"\n"
            "  --expect-inter-bytes F  fail a case with regular data in which all nodes\n"
            "                        together send other than F inter-node bytes (trees:\n"
            "                        what a node sends depends on its place, the sum not)\n"
            "  --expect-tmp-max F    fail a case whose schedule (with its nested ones)\n"
            "                        allocates more scratch bytes than F on some rank\n"
            "  --expect-tmp-root F   the same for the root's schedule (rooted collectives)\n"
            "  --expect-tmp-peers F  the same for each of the root's node peers' schedules\n"
            "  --expect-tmp-written  fail a case in which some rank's schedule (with its\n"
            "                        nested ones) allocates scratch bytes that none of its\n"
            "                        own steps receives, copies, reduces or reads into (a\n"
            "                        rank holds no scratch beyond what it relays or packs)\n"
            "  --displs LIST         gatherv and scatterv displacements: seeded (default:\n"
            "                        gaps of 0..2, shuffled for odd seeds), packed, stride,\n"
            "                        gaps, reversed, shuffled, overlap (scatterv only)\n"
            "  --expect-inflight K|nm  fail such a case whose lockstep run never moves K\n"
            "                        inter-node messages in one round (nm: nodes x largest\n"
            "                        node)\n"
            "  --verbose             one line per case with its statistics\n"
            "  --kernel              check the direct kernel's schedule (src/sched/kernel.c)\n"
            "                        instead of the builder's wherever the kernel applies\n"
            "  --expect-kernel       --kernel, and a case on one node where the kernel does\n"
            "                        not apply on every rank fails\n"

            "  --list                print every registered algorithm: <coll> <algo> <params>\n"
            "  --dissem-table        for every P of --procs and n = 1..7 (or --param\n"
            "                        CONVOY_DISSEM_N=n): the n-way dissemination Allreduce's\n"
            "                        tuple and case of papers/003 Theorem 1, or fallback\n"
            "  --mutate NAME|all     run the mutation suite (each mutation must be caught):\n");
    for (int i = 0; i < convoy__check_nmutations; i++)
        fprintf(f, "                          %-10s %s\n", convoy__check_mutations[i].name,
                convoy__check_mutations[i].what);
}

/* --- option parsing ------------------------------------------------------------------ */

typedef struct intlist {
    int64_t *v;
    int n;
} intlist;

/* "1-8,13,64" -> 1..8, 13, 64. */
static int parse_ints(const char *s, intlist *l)
{
    l->n = 0;
    free(l->v);
    l->v = NULL;
    int cap = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        if (end == p) return -1;
        p = end;
        b = a;
        if (*p == '-') {
            p++;
            b = strtoll(p, &end, 10);
            if (end == p || b < a) return -1;
            p = end;
        }
        for (long long x = a; x <= b; x++) {
            if (l->n == cap) {
                cap = cap ? cap * 2 : 16;
                int64_t *q = realloc(l->v, (size_t)cap * sizeof *q);
                if (!q) return -1;
                l->v = q;
            }
            l->v[l->n++] = x;
        }
        if (*p == ',') {
            p++;
            if (!*p) return -1;
        } else if (*p) {
            return -1;
        }
    }
    return l->n > 0 ? 0 : -1;
}

typedef struct strlist {
    char **v;
    int n;
} strlist;

static int parse_strs(const char *s, strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
    int cap = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0) return -1;
        if (l->n == cap) {
            cap = cap ? cap * 2 : 8;
            char **q = realloc(l->v, (size_t)cap * sizeof *q);
            if (!q) return -1;
            l->v = q;
        }
        char *x = malloc(len + 1);
        if (!x) return -1;
        memcpy(x, p, len);
        x[len] = '\0';
        l->v[l->n++] = x;
        p += len;
        if (*p == ',') p++;
    }
    return l->n > 0 ? 0 : -1;
}

static void free_strs(strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* --- statistics ---------------------------------------------------------------------- */

typedef struct agg {
    const convoy__algo *algo;
    int coll; /* the table it was swept in */
    long cases;
    int64_t rounds, msgs, bytes, rank_inter, node_out, node_in, lane_max, tmp;
    double lane_ratio, rank_ratio; /* worst max/min over cases with inter-node traffic */
    long spread_cases;             /* cases the inter-node spread was asserted on */
    int64_t not_send, not_recv, not_reduce, inflight, round_inter;
} agg;

static void agg_add(agg *g, const convoy__check_stats *st)
{
    g->cases++;
#define MAXI(f, v)                                                                                 \
    if ((v) > g->f) g->f = (v)
    MAXI(rounds, st->rounds);
    MAXI(msgs, st->rank_msgs_max);
    MAXI(bytes, st->rank_bytes_max);
    MAXI(rank_inter, st->rank_inter_max);
    MAXI(node_out, st->node_out_max);
    MAXI(tmp, st->tmp_max);
    MAXI(node_in, st->node_in_max);
    MAXI(lane_max, st->lane_max);
    MAXI(not_send, st->ranks_not_sending);
    MAXI(not_recv, st->ranks_not_receiving);
    MAXI(not_reduce, st->ranks_not_reducing);
    MAXI(inflight, st->inflight_max);
    MAXI(round_inter, st->round_inter_max);
#undef MAXI
}

/* --- the sweep ----------------------------------------------------------------------- */

typedef struct opts {
    strlist colls, algos, layouts, counts, ops_kinds, modes, roots, displs;
    intlist procs, ppn, count, inplace;
    int64_t base, shm_bytes;
    int cma;
    int seeds, seed, ops, stats, verbose, smp_check, dissem_table;
    int kernel;    /* --kernel: prove the direct kernel's schedule where it applies; 2:
                      --expect-kernel, it must apply on every rank of a one-node case */
    double spread; /* --assert-inter-spread (0: off) */
    int expect_busy;
    int64_t expect_inflight; /* 0: none, -1: nodes x largest node */
    /* formulas (expr() below), or NULL */
    const char *expect_node_bytes, *expect_inter_bytes, *expect_tmp_max, *expect_tmp_root,
        *expect_tmp_peers;
    int expect_tmp_written;
    int64_t *ids;
    int nids;
    int nparams;
    convoy__param params[CONVOY_MAX_PARAMS];
    const char *mutate;
} opts;

typedef struct tally {
    long passed, failed, skipped;
    long kernel; /* --kernel: cases in which every rank ran the kernel's schedule */
} tally;

static int is_rooted(int coll)
{
    return coll == CONVOY_COLL_BCAST || coll == CONVOY_COLL_GATHER || coll == CONVOY_COLL_GATHERV ||
           coll == CONVOY_COLL_SCATTER || coll == CONVOY_COLL_SCATTERV ||
           coll == CONVOY_COLL_REDUCE;
}

/* The k-th root of --root for P processes, or -1 when it names none there. */
static int root_of(const opts *o, int k, int P, int *n)
{
    int all = 0;
    for (int i = 0; i < o->roots.n; i++)
        all |= strcmp(o->roots.v[i], "all") == 0;
    if (all) {
        *n = P;
        return k < P ? k : -1;
    }
    *n = o->roots.n;
    const char *v = o->roots.v[k];
    const int r = !strcmp(v, "last") ? P - 1 : !strcmp(v, "mid") ? P / 2 : atoi(v);
    /* A root listed twice for this P (0 and last at P = 1) runs once. */
    for (int i = 0; i < k; i++) {
        const char *u = o->roots.v[i];
        if ((!strcmp(u, "last") ? P - 1 : !strcmp(u, "mid") ? P / 2 : atoi(u)) == r) return -1;
    }
    return r < P ? r : -1;
}

static void case_name(const convoy__check_case *c, int coll, char *buf, size_t len)
{
    char where[64];
    if (c->ids)
        snprintf(where, sizeof where, "P=%d ids=given", c->procs);
    else
        snprintf(where, sizeof where, "P=%d ppn=%d layout=%s", c->procs, c->ppn,
                 convoy__layout_name(c->layout));
    if (coll == CONVOY_COLL_BARRIER)
        snprintf(buf, len, "%s %s %s seed=%llu", convoy__coll_name(coll), c->algo->name, where,
                 (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_ALLGATHER)
        snprintf(buf, len, "%s %s %s count=%lld inplace=%d seed=%llu", convoy__coll_name(coll),
                 c->algo->name, where, (long long)c->base, c->inplace, (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_REDUCE_SCATTER_BLOCK)
        snprintf(buf, len, "%s %s %s count=%lld op=%s inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, (long long)c->base,
                 c->commutative ? "comm" : "noncomm", c->inplace, (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_ALLGATHERV)
        snprintf(buf, len, "%s %s %s counts=%s base=%lld inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, c->counts, (long long)c->base,
                 c->inplace, (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_GATHERV || coll == CONVOY_COLL_SCATTERV)
        snprintf(buf, len, "%s %s %s root=%d counts=%s base=%lld displs=%s inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, c->root, c->counts,
                 (long long)c->base, c->displs ? c->displs : "seeded", c->inplace,
                 (unsigned long long)c->seed);
    else if (is_rooted(coll))
        snprintf(buf, len, "%s %s %s root=%d count=%lld inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, c->root, (long long)c->count,
                 c->inplace, (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_REDUCE_SCATTER)
        snprintf(buf, len, "%s %s %s counts=%s base=%lld op=%s inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, c->counts, (long long)c->base,
                 c->commutative ? "comm" : "noncomm", c->inplace, (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_ALLTOALL)
        snprintf(buf, len, "%s %s %s count=%lld inplace=%d seed=%llu", convoy__coll_name(coll),
                 c->algo->name, where, (long long)c->count, c->inplace,
                 (unsigned long long)c->seed);
    else if (coll == CONVOY_COLL_REDUCE)
        snprintf(buf, len, "%s %s %s count=%lld root=%d op=%s inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, (long long)c->count, c->root,
                 c->idempotent    ? "idem"
                 : c->commutative ? "comm"
                                  : "noncomm",
                 c->inplace, (unsigned long long)c->seed);
    else
        snprintf(buf, len, "%s %s %s count=%lld op=%s inplace=%d seed=%llu",
                 convoy__coll_name(coll), c->algo->name, where, (long long)c->count,
                 c->idempotent    ? "idem"
                 : c->commutative ? "comm"
                                  : "noncomm",
                 c->inplace, (unsigned long long)c->seed);
}

/* Regular data: equal non-zero counts on equal nodes, more than one node (Allreduce: at
 * least one element per process). The spread of inter-node bytes over the ranks is only a
 * property of the algorithm there (a node of one process must move everything its node
 * sends or receives, whatever the algorithm). */
static int regular_data(const convoy__check_case *c)
{
    const int base = convoy__coll_base(c->coll);
    if (base == CONVOY_COLL_BARRIER) return 0;
    const int by_count = base == CONVOY_COLL_ALLREDUCE || base == CONVOY_COLL_REDUCE ||
                         base == CONVOY_COLL_SCAN || base == CONVOY_COLL_EXSCAN ||
                         base == CONVOY_COLL_ALLTOALL;
    if (by_count ? c->count < c->procs : strcmp(c->counts, "regular") || c->base <= 0) return 0;
    int64_t *ids = malloc((size_t)c->procs * sizeof *ids);
    convoy__topo t;
    int ok = ids && (c->ids ? (memcpy(ids, c->ids, (size_t)c->procs * sizeof *ids), 1)
                            : !convoy__layout_ids(c->layout, c->procs, c->ppn, c->seed, ids));
    ok = ok && !convoy__topo_from_ids(&t, c->procs, 0, ids);
    free(ids);
    if (!ok) return 0;
    int regular = t.nnodes > 1 && (t.flags & CONVOY_TOPO_REGULAR);
    convoy__topo_free(&t);
    return regular;
}

/* A formula over the case: + - * / and parentheses on integers and the variables N (nodes),
 * n (largest node), P (processes), c (bytes of an element), m (bytes of a process's block:
 * base x c for allgather(v), reduce_scatter(_block), gatherv and scatterv with regular
 * counts; count x c for gather and scatter, for alltoall (one block), and for the vector
 * collectives allreduce, bcast, reduce, scan, exscan). Returns 0 and the value, or -1 on
 * a syntax error. */
typedef struct fctx {
    const char *p;
    double N, n, P, c, m;
    int bad;
} fctx;
static double f_sum(fctx *f);
static void f_space(fctx *f)
{
    while (*f->p == ' ')
        f->p++;
}
static double f_atom(fctx *f)
{
    f_space(f);
    const char ch = *f->p;
    if (ch == '(') {
        f->p++;
        double v = f_sum(f);
        f_space(f);
        if (*f->p++ != ')') f->bad = 1;
        return v;
    }
    if (ch >= '0' && ch <= '9') {
        char *e;
        double v = strtod(f->p, &e);
        f->p = e;
        return v;
    }
    f->p++;
    switch (ch) {
    case 'N': return f->N;
    case 'n': return f->n;
    case 'P': return f->P;
    case 'c': return f->c;
    case 'm': return f->m;
    default: f->bad = 1; return 0;
    }
}
static double f_prod(fctx *f)
{
    double v = f_atom(f);
    for (;;) {
        f_space(f);
        if (*f->p == '*')
            f->p++, v *= f_atom(f);
        else if (*f->p == '/')
            f->p++, v /= f_atom(f);
        else
            return v;
    }
}
static double f_sum(fctx *f)
{
    double v = f_prod(f);
    for (;;) {
        f_space(f);
        if (*f->p == '+')
            f->p++, v += f_prod(f);
        else if (*f->p == '-')
            f->p++, v -= f_prod(f);
        else
            return v;
    }
}
static int formula(const char *expr, const convoy__check_case *c, const convoy__topo *t,
                   const convoy__check_stats *st, double *val)
{
    const int base = convoy__coll_base(c->coll);
    fctx f = {
        .p = expr, .N = t->nnodes, .n = t->max_ppn, .P = t->size, .c = (double)st->cell_bytes};
    /* Cases with one count (vectors, Gather and Scatter blocks, Alltoall blocks); the
     * distributions' base count otherwise. */
    const int by_base = (base == CONVOY_COLL_ALLGATHERV || base == CONVOY_COLL_REDUCE_SCATTER ||
                         c->coll == CONVOY_COLL_GATHERV || c->coll == CONVOY_COLL_SCATTERV);
    f.m = (double)(by_base ? c->base : c->count) * f.c;
    *val = f_sum(&f);
    f_space(&f);
    return f.bad || *f.p ? -1 : 0;
}

/* Whether the scratch `got` of whose schedule is more than formula expr allows (says so). */
static int scratch_over(const char *expr, const char *whose, int64_t got,
                        const convoy__check_case *c, const convoy__topo *t,
                        const convoy__check_stats *st, const char *name)
{
    double want = 0;
    if (formula(expr, c, t, st, &want)) {
        printf("ERROR %s: bad formula %s\n", name, expr);
        return 1;
    }
    if ((double)got <= want) return 0;
    printf("FAIL %s: %s schedule allocates %lld bytes of scratch, more than %s = %.0f\n", name,
           whose, (long long)got, expr, want);
    return 1;
}

/* --expect-node-bytes (regular data: every node sends exactly the formula's bytes),
 * --expect-inter-bytes (regular data: all nodes together send exactly that),
 * --expect-tmp-max (every case: no rank's schedule allocates more scratch) and
 * --expect-tmp-root (rooted collectives: the root's schedule). */
static int bytes_fail(const convoy__check_case *c, const opts *o, const convoy__check_stats *st,
                      const char *name)
{
    if (!o->expect_node_bytes && !o->expect_inter_bytes && !o->expect_tmp_max &&
        !o->expect_tmp_root && !o->expect_tmp_peers && !o->expect_tmp_written)
        return 0;
    int64_t *ids = malloc((size_t)c->procs * sizeof *ids);
    convoy__topo t;
    memset(&t, 0, sizeof t);
    int ok = ids && (c->ids ? (memcpy(ids, c->ids, (size_t)c->procs * sizeof *ids), 1)
                            : !convoy__layout_ids(c->layout, c->procs, c->ppn, c->seed, ids));
    ok = ok && !convoy__topo_from_ids(&t, c->procs, 0, ids);
    free(ids);
    double want = 0;
    int fail = !ok;
    if (ok && o->expect_node_bytes && regular_data(c)) {
        if (formula(o->expect_node_bytes, c, &t, st, &want)) {
            printf("ERROR %s: bad formula %s\n", name, o->expect_node_bytes);
            fail = 1;
        } else if ((double)st->node_out_max != want || (double)st->node_out_min != want) {
            printf("FAIL %s: expected every node to send %s = %.0f inter-node bytes, they send "
                   "%lld..%lld\n",
                   name, o->expect_node_bytes, want, (long long)st->node_out_min,
                   (long long)st->node_out_max);
            fail = 1;
        }
    }
    if (ok && !fail && o->expect_inter_bytes && regular_data(c)) {
        if (formula(o->expect_inter_bytes, c, &t, st, &want)) {
            printf("ERROR %s: bad formula %s\n", name, o->expect_inter_bytes);
            fail = 1;
        } else if ((double)st->inter_total != want) {
            printf("FAIL %s: expected the nodes to send %s = %.0f inter-node bytes in all, "
                   "they send %lld\n",
                   name, o->expect_inter_bytes, want, (long long)st->inter_total);
            fail = 1;
        }
    }
    if (ok && !fail && o->expect_tmp_max)
        fail = scratch_over(o->expect_tmp_max, "a rank's", st->tmp_max, c, &t, st, name);
    if (ok && !fail && o->expect_tmp_root && is_rooted(c->coll))
        fail = scratch_over(o->expect_tmp_root, "the root's", st->tmp_root, c, &t, st, name);
    if (ok && !fail && o->expect_tmp_peers && is_rooted(c->coll))
        fail = scratch_over(o->expect_tmp_peers, "a root's node peer's", st->tmp_peers, c, &t, st,
                            name);
    if (ok && !fail && o->expect_tmp_written && st->tmp_unwritten > 0) {
        printf("FAIL %s: rank %d's schedule allocates %lld bytes of scratch that none of its "
               "steps writes\n",
               name, st->tmp_unwritten_rank, (long long)st->tmp_unwritten);
        fail = 1;
    }
    convoy__topo_free(&t);
    return fail;
}

/* --expect-busy / --expect-inflight on a passed case: prints the failure and returns 1. */
static int expectations_fail(const convoy__check_case *c, const opts *o,
                             const convoy__check_stats *st, const char *name)
{
    if (!o->expect_busy && !o->expect_inflight) return 0;
    /* The nodes and the largest node of the case's layout. */
    int64_t *ids = malloc((size_t)c->procs * sizeof *ids);
    convoy__topo t;
    memset(&t, 0, sizeof t);
    int ok = ids && (c->ids ? (memcpy(ids, c->ids, (size_t)c->procs * sizeof *ids), 1)
                            : !convoy__layout_ids(c->layout, c->procs, c->ppn, c->seed, ids));
    ok = ok && !convoy__topo_from_ids(&t, c->procs, 0, ids);
    free(ids);
    if (!ok) {
        printf("ERROR %s: no topology for the expectations\n", name);
        convoy__topo_free(&t);
        return 1;
    }
    const int64_t nm = (int64_t)t.nnodes * t.max_ppn;
    const int applies = t.nnodes > 1 && (c->coll != CONVOY_COLL_ALLREDUCE || c->count >= nm);
    convoy__topo_free(&t);
    if (!applies) return 0;
    if (o->expect_busy &&
        (st->ranks_not_sending || st->ranks_not_receiving || st->ranks_not_reducing)) {
        printf("FAIL %s: expected every rank busy, but %lld ranks send no inter-node message, "
               "%lld receive none, %lld reduce nothing\n",
               name, (long long)st->ranks_not_sending, (long long)st->ranks_not_receiving,
               (long long)st->ranks_not_reducing);
        return 1;
    }
    const int64_t want = o->expect_inflight < 0 ? nm : o->expect_inflight;
    if (o->expect_inflight && !(c->modes & CONVOY_CHECK_LOCKSTEP)) {
        printf("ERROR %s: --expect-inflight needs the lockstep mode\n", name);
        return 1;
    }
    if (o->expect_inflight && st->round_inter_max < want) {
        printf("FAIL %s: expected %lld inter-node messages in one round, at most %lld were "
               "(%lld in flight at most)\n",
               name, (long long)want, (long long)st->round_inter_max, (long long)st->inflight_max);
        return 1;
    }
    return 0;
}

/* Runs one case; in mutation mode also the unmutated baseline. */
static void run_case(convoy__check_case *c, const opts *o, const convoy__check_mutation *mut,
                     tally *t, agg *g)
{
    char name[512];
    convoy__check_result res;
    case_name(c, c->coll, name, sizeof name);
    if (mut) {
        convoy__check_case base = *c;
        base.mutate = NULL;
        int rc = convoy__check_run(&base, &res);
        if (rc || res.status == CONVOY_CHECK_SKIP) {
            t->skipped++;
            return;
        }
        if (res.status == CONVOY_CHECK_FAIL) {
            printf("BASELINE FAILS %s %s: %s\n", mut->name, name, res.reason);
            t->failed++;
            return;
        }
        convoy__mutate_ctx mc = {mut, mut->target, -1, 0};
        c->mutate = mut->mutate;
        c->mutate_ctx = &mc;
        rc = convoy__check_run(c, &res);
        c->mutate = NULL;
        c->mutate_ctx = NULL;
        if (rc) {
            printf("ERROR %s %s: the checker could not run (%d)\n", mut->name, name, rc);
            t->failed++;
        } else if (res.mutated == 0) {
            t->skipped++; /* nothing to mutate in this case */
        } else if (res.status == CONVOY_CHECK_FAIL) {
            printf("caught %s %s: %s\n", mut->name, name, res.reason);
            t->passed++;
        } else {
            printf("MISSED %s %s: the mutated schedule (%s) passed\n", mut->name, name, mut->what);
            t->failed++;
        }
        return;
    }
    int rc = convoy__check_run(c, &res);
    if (rc) {
        printf("ERROR %s: the checker could not run (%d)\n", name, rc);
        t->failed++;
        return;
    }
    if (res.status == CONVOY_CHECK_SKIP) {
        t->skipped++;
        if (o->verbose) printf("skip %s: %s\n", name, res.reason);
        return;
    }
    if (res.status == CONVOY_CHECK_FAIL) {
        printf("FAIL %s: %s\n", name, res.reason);
        t->failed++;
        return;
    }
    if (o->kernel == 2 && res.st.nnodes == 1 && res.mutated != c->procs) {
        /* (One node: the step-order schedules the kernel is for.) */
        printf("FAIL %s: the direct kernel compiled on %d of %d ranks of one node\n", name,
               res.mutated, c->procs);
        t->failed++;
        return;
    }
    t->kernel += o->kernel && res.mutated == c->procs;
    if (o->spread > 0 && regular_data(c)) {
        /* Rooted collectives and the prefix reductions: within a node (a tree's root and
         * leaves, a prefix chain's first and last node differ by design; what the full-lane
         * decomposition promises is that a node's processes share its traffic). */
        const int base = convoy__coll_base(c->coll);
        const int rooted =
            is_rooted(c->coll) || base == CONVOY_COLL_SCAN || base == CONVOY_COLL_EXSCAN;
        const int64_t mx = rooted ? res.st.node_rank_inter_max : res.st.rank_inter_max,
                      mn = rooted ? res.st.node_rank_inter_min : res.st.rank_inter_min;
        if (g) {
            g->spread_cases++;
            const double ratio = mn > 0 ? (double)mx / (double)mn : mx > 0 ? 1e300 : 1;
            if (ratio > g->rank_ratio) g->rank_ratio = ratio;
        }
        if ((double)mx > o->spread * (double)mn) {
            printf("FAIL %s: inter-node bytes per rank range over %lld..%lld%s, more than %g "
                   "times apart on regular data\n",
                   name, (long long)mn, (long long)mx, rooted ? " within a node" : "", o->spread);
            t->failed++;
            return;
        }
    }
    if (expectations_fail(c, o, &res.st, name) || bytes_fail(c, o, &res.st, name)) {
        t->failed++;
        return;
    }
    t->passed++;
    if (g) agg_add(g, &res.st);
    if (!o->verbose) return;
    char pred[384] = "";
    if (res.st.rounds_bound >= 0) {
        char exact[32] = "none";
        if (res.st.rounds_exact >= 0)
            snprintf(exact, sizeof exact, "%lld", (long long)res.st.rounds_exact);
        snprintf(pred, sizeof pred, " (predicted %s, bound %lld: %s)", exact,
                 (long long)res.st.rounds_bound, res.st.rounds_how);
    }
    printf("ok %s: rounds %lld%s, messages %lld (max %lld per rank), bytes %lld (max %lld per "
           "rank), inter-node bytes per node max out %lld in %lld, per lane %lld..%lld, per "
           "rank %lld..%lld; ranks not sending %lld, not receiving %lld, not reducing %lld; "
           "inter-node messages in one round %lld, in flight %lld; scratch max %lld, root "
           "%lld, root's node peers %lld, all ranks %lld, unwritten %lld\n",
           name, (long long)res.st.rounds, pred, (long long)res.st.msgs,
           (long long)res.st.rank_msgs_max, (long long)res.st.bytes,
           (long long)res.st.rank_bytes_max, (long long)res.st.node_out_max,
           (long long)res.st.node_in_max, (long long)res.st.lane_min, (long long)res.st.lane_max,
           (long long)res.st.rank_inter_min, (long long)res.st.rank_inter_max,
           (long long)res.st.ranks_not_sending, (long long)res.st.ranks_not_receiving,
           (long long)res.st.ranks_not_reducing, (long long)res.st.round_inter_max,
           (long long)res.st.inflight_max, (long long)res.st.tmp_max, (long long)res.st.tmp_root,
           (long long)res.st.tmp_peers, (long long)res.st.tmp_total,
           (long long)res.st.tmp_unwritten);
}

static void sweep_algo(const opts *o, int coll, const convoy__algo *al,
                       const convoy__check_mutation *mut, tally *t, agg *g)
{
    convoy__check_case c;
    convoy__check_case_init(&c);
    c.coll = coll;
    c.algo = al;
    c.base = o->base;
    c.shm_bytes = o->shm_bytes;
    c.cma = o->cma;
    c.ops = o->ops;
    c.smp_check = o->smp_check;
    if (o->kernel && !mut) c.mutate = convoy__check_kernel_mutator;
    c.nparams = o->nparams;
    memcpy(c.params, o->params, sizeof c.params);
    c.modes = 0;
    for (int i = 0; i < o->modes.n; i++)
        c.modes |=
            strcmp(o->modes.v[i], "lockstep") == 0 ? CONVOY_CHECK_LOCKSTEP : CONVOY_CHECK_SHUFFLE;
    const int nprocs = o->ids ? 1 : o->procs.n, nppn = o->ids ? 1 : o->ppn.n,
              nlay = o->ids ? 1 : o->layouts.n;
    /* A barrier has no counts, operation or buffers: one case per layout and seed. */
    const int barrier = coll == CONVOY_COLL_BARRIER;
    const int by_dist = coll == CONVOY_COLL_ALLGATHERV || coll == CONVOY_COLL_REDUCE_SCATTER ||
                        coll == CONVOY_COLL_GATHERV || coll == CONVOY_COLL_SCATTERV;
    /* Allgather, Reduce_scatter_block: --count elements per rank (the "regular" counts). */
    const int equal = coll != convoy__coll_base(coll);
    const int reduces = convoy__coll_reduces(coll);
    const int nkind = barrier ? 1 : by_dist ? o->counts.n : o->count.n;
    /* Gatherv, Scatterv: every displacement pattern of --displs (default: seeded). */
    const int vroot = coll == CONVOY_COLL_GATHERV || coll == CONVOY_COLL_SCATTERV;
    const int ndis = vroot && o->displs.n > 0 ? o->displs.n : 1;
    const int nop = reduces ? o->ops_kinds.n : 1;
    const int nin = barrier || coll == CONVOY_COLL_BCAST ? 1 : o->inplace.n;
    const int s0 = o->seed ? o->seed : 1, s1 = o->seed ? o->seed : o->seeds;
    for (int ip = 0; ip < nprocs; ip++)
        for (int jp = 0; jp < nppn; jp++)
            for (int lk = 0; lk < nlay; lk++)
                for (int kk = 0; kk < nkind; kk++)
                    for (int oi = 0; oi < nop; oi++)
                        for (int ii = 0; ii < nin; ii++)
                            for (int seed = s0; seed <= s1; seed++) {
                                if (o->ids) {
                                    c.procs = o->nids;
                                    c.ids = o->ids;
                                } else {
                                    c.procs = (int)o->procs.v[ip];
                                    c.ppn = (int)o->ppn.v[jp];
                                    c.layout = convoy__layout_parse(o->layouts.v[lk]);
                                }
                                if (by_dist) {
                                    c.counts = o->counts.v[kk];
                                } else if (equal) {
                                    c.counts = "regular";
                                    c.base = o->count.v[kk];
                                } else if (!barrier)
                                    c.count = o->count.v[kk];
                                c.commutative = 1;
                                c.idempotent =
                                    reduces &&
                                    convoy__coll_base(coll) != CONVOY_COLL_REDUCE_SCATTER &&
                                    strcmp(o->ops_kinds.v[oi], "idem") == 0;
                                if (reduces && strcmp(o->ops_kinds.v[oi], "noncomm") == 0) {
                                    if (!(al->props & CONVOY_ALGO_NONCOMMUTATIVE)) continue;
                                    c.commutative = 0;
                                }
                                c.inplace = barrier || coll == CONVOY_COLL_BCAST
                                                ? 0
                                                : (int)o->inplace.v[ii];
                                c.seed = (uint64_t)seed;
                                if (!is_rooted(coll)) {
                                    run_case(&c, o, mut, t, g);
                                    continue;
                                }
                                for (int k = 0, nr = 1; k < nr; k++) {
                                    c.root = root_of(o, k, c.procs, &nr);
                                    if (c.root < 0) continue;
                                    for (int di = 0; di < ndis; di++) {
                                        c.displs =
                                            vroot && o->displs.n > 0 ? o->displs.v[di] : NULL;
                                        run_case(&c, o, mut, t, g);
                                    }
                                }
                            }
}

/* Per collective its table (an algorithm may be in two: the v-form's and the equal-count
 * form's). */
static int list_algos(void)
{
    for (int c = 0; c < CONVOY_NCOLL; c++)
        for (int i = 0; i < convoy__nalgos; i++) {
            const convoy__algo *al = &convoy__algos[i];
            if (!convoy__algo_serves(al, c)) continue;
            if (al->params && al->params[0])
                printf("%s %s %s\n", convoy__coll_name(c), al->name, al->params);
            else
                printf("%s %s\n", convoy__coll_name(c), al->name);
        }
    return 0;
}

/* The n-way dissemination Allreduce's last round per (P, n): the tuple and Theorem 1's
 * case, or fallback; the rounds and messages the checker asserts; for n = 1 (papers/001)
 * also ceil(log2 P) + 1, the rounds of recursive doubling with its fold. */
static int dissem_table(const opts *o)
{
    int n0 = 1, n1 = 7;
    for (int i = 0; i < o->nparams; i++)
        if (!strcmp(o->params[i].name, "CONVOY_DISSEM_N") && o->params[i].value > 0)
            n0 = n1 = (int)o->params[i].value;
    long kases[9] = {0}, fallback = 0, total = 0, fewer = 0, ones = 0;
    for (int ip = 0; ip < o->procs.n; ip++)
        for (int n = n0; n <= n1; n++) {
            const int P = (int)o->procs.v[ip];
            if (P > 1 && n > P - 1) continue;
            convoy__dissem_plan pl;
            convoy__dissem_plan_make(P, n, 0, &pl);
            char d[512];
            convoy__dissem_plan_describe(&pl, d, sizeof d);
            total++;
            if (pl.kase == CONVOY_DISSEM_FALLBACK)
                fallback++;
            else if (pl.kase >= 0 && pl.kase < 9)
                kases[pl.kase]++;
            if (pl.n == 1 && P > 1) {
                int c = 0;
                while ((1LL << c) < P)
                    c++;
                ones++;
                fewer += pl.rounds < c + 1;
                printf("%s; ceil(log2 P) + 1 = %d\n", d, c + 1);
            } else {
                printf("%s\n", d);
            }
        }
    printf("dissem table: %ld (P, n): plain %ld, case 1: %ld, 2: %ld, 3: %ld, 4: %ld, "
           "4 (g_B): %ld, 5: %ld, fallback %ld",
           total, kases[CONVOY_DISSEM_PLAIN], kases[1], kases[2], kases[3], kases[4],
           kases[CONVOY_DISSEM_GB], kases[5], fallback);
    if (ones) printf("; n = 1: %ld of %ld in fewer than ceil(log2 P) + 1 rounds", fewer, ones);
    printf("\n");
    return 0;
}

/* Runs a mutation on its own case, once per seed; a run covers the lockstep and the
 * shuffled order (some mutations, like reusing a slot too early, are races that only
 * some orders expose; a run that shows the failure in either order catches them). */
static void mutation_default(const opts *o, const convoy__check_mutation *m, tally *t)
{
    convoy__check_case c;
    convoy__check_case_init(&c);
    m->setup(&c);
    if (!c.algo) {
        printf("ERROR %s: its algorithm is not registered\n", m->name);
        t->failed++;
        return;
    }
    const int s0 = o->seed ? o->seed : 1, s1 = o->seed ? o->seed : o->seeds;
    c.modes = 0;
    for (int i = 0; i < o->modes.n; i++)
        c.modes |=
            strcmp(o->modes.v[i], "lockstep") == 0 ? CONVOY_CHECK_LOCKSTEP : CONVOY_CHECK_SHUFFLE;
    for (int seed = s0; seed <= s1; seed++) {
        c.seed = (uint64_t)seed;
        run_case(&c, o, m, t, NULL);
    }
}

int main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    int rc = 2, list = 0;
    tally t = {0, 0, 0, 0};
    agg *aggs = NULL;
    int naggs = 0;
    o.base = 5;
    o.shm_bytes = 65536;
    o.cma = 1;
    o.seeds = 2;
    if (parse_strs("allgatherv,allreduce,barrier", &o.colls) || parse_strs("all", &o.algos) ||
        parse_strs("regular,nonuniform,scattered", &o.layouts) ||
        parse_strs("random,zeros,broadcast", &o.counts) ||
        parse_strs("comm,noncomm", &o.ops_kinds) || parse_strs("lockstep,shuffle", &o.modes) ||
        parse_strs("0", &o.roots) || parse_ints("1-16", &o.procs) || parse_ints("1-4", &o.ppn) ||
        parse_ints("0,1,7", &o.count) || parse_ints("0,1", &o.inplace)) {
        fprintf(stderr, "convoy-check: out of memory\n");
        goto cleanup;
    }
    int coll_given = 0, algo_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, takes = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto cleanup;
        } else if (!strcmp(a, "--list")) {
            list = 1;
            takes = 0;
        } else if (!strcmp(a, "--stats")) {
            o.stats = 1;
            takes = 0;
        } else if (!strcmp(a, "--dissem-table")) {
            o.dissem_table = 1;
            takes = 0;
        } else if (!strcmp(a, "--expect-busy")) {
            o.expect_busy = 1;
            takes = 0;
        } else if (!strcmp(a, "--expect-tmp-written")) {
            o.expect_tmp_written = 1;
            takes = 0;
        } else if (!strcmp(a, "--smp-check")) {
            o.smp_check = 1;
            takes = 0;
        } else if (!strcmp(a, "--kernel") || !strcmp(a, "--expect-kernel")) {
            o.kernel = !strcmp(a, "--kernel") && o.kernel < 2 ? 1 : 2;
            takes = 0;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o.verbose = o.stats = 1;
            takes = 0;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(a, "--coll")) {
            bad = parse_strs(v, &o.colls);
            coll_given = 1;
        } else if (!strcmp(a, "--algo")) {
            bad = parse_strs(v, &o.algos);
            algo_given = 1;
        } else if (!strcmp(a, "--procs")) {
            bad = parse_ints(v, &o.procs);
            for (int k = 0; !bad && k < o.procs.n; k++)
                bad = o.procs.v[k] < 1;
        } else if (!strcmp(a, "--ppn")) {
            bad = parse_ints(v, &o.ppn);
            for (int k = 0; !bad && k < o.ppn.n; k++)
                bad = o.ppn.v[k] < 1;
        } else if (!strcmp(a, "--layouts")) {
            bad = parse_strs(v, &o.layouts);
            for (int k = 0; !bad && k < o.layouts.n; k++)
                bad = convoy__layout_parse(o.layouts.v[k]) < 0;
        } else if (!strcmp(a, "--ids")) {
            free(o.ids);
            o.ids = malloc((strlen(v) + 1) * sizeof *o.ids);
            o.nids = o.ids ? convoy__nodemap_parse(v, o.ids, (int)strlen(v) + 1) : -1;
            bad = o.nids < 1;
        } else if (!strcmp(a, "--counts")) {
            if (!strcmp(v, "all")) {
                char all[512] = "";
                for (int k = 0; k < convoy__dist_count(); k++) {
                    strcat(all, k ? "," : "");
                    strcat(all, convoy__dist_name(k));
                }
                bad = parse_strs(all, &o.counts);
            } else {
                bad = parse_strs(v, &o.counts);
                int64_t tmp[1];
                for (int k = 0; !bad && k < o.counts.n; k++)
                    bad = convoy__dist_counts(o.counts.v[k], 1, 0, 0, tmp) != 0;
            }
        } else if (!strcmp(a, "--base")) {
            char *e;
            o.base = strtoll(v, &e, 10);
            bad = *e || o.base < 0;
        } else if (!strcmp(a, "--count")) {
            bad = parse_ints(v, &o.count);
            for (int k = 0; !bad && k < o.count.n; k++)
                bad = o.count.v[k] < 0;
        } else if (!strcmp(a, "--op")) {
            bad = parse_strs(v, &o.ops_kinds);
            for (int k = 0; !bad && k < o.ops_kinds.n; k++)
                bad = strcmp(o.ops_kinds.v[k], "comm") && strcmp(o.ops_kinds.v[k], "noncomm") &&
                      strcmp(o.ops_kinds.v[k], "idem");
        } else if (!strcmp(a, "--root")) {
            bad = parse_strs(v, &o.roots);
            for (int k = 0; !bad && k < o.roots.n; k++) {
                const char *r = o.roots.v[k];
                bad = strcmp(r, "all") && strcmp(r, "last") && strcmp(r, "mid") &&
                      (!*r || strspn(r, "0123456789") != strlen(r));
            }
        } else if (!strcmp(a, "--inplace")) {
            bad = parse_ints(v, &o.inplace);
            for (int k = 0; !bad && k < o.inplace.n; k++)
                bad = o.inplace.v[k] != 0 && o.inplace.v[k] != 1;
        } else if (!strcmp(a, "--expect-inflight")) {
            char *e = NULL;
            if (strcmp(v, "nm") == 0)
                o.expect_inflight = -1;
            else
                o.expect_inflight = strtoll(v, &e, 10);
            bad = o.expect_inflight == 0 || o.expect_inflight < -1 || (e && *e);
        } else if (!strcmp(a, "--expect-node-bytes")) {
            o.expect_node_bytes = v;
        } else if (!strcmp(a, "--expect-inter-bytes")) {
            o.expect_inter_bytes = v;
        } else if (!strcmp(a, "--expect-tmp-max")) {
            o.expect_tmp_max = v;
        } else if (!strcmp(a, "--expect-tmp-root")) {
            o.expect_tmp_root = v;
        } else if (!strcmp(a, "--expect-tmp-peers")) {
            o.expect_tmp_peers = v;
        } else if (!strcmp(a, "--displs")) {
            bad = parse_strs(v, &o.displs);
            for (int k = 0; !bad && k < o.displs.n; k++)
                bad = !convoy__check_displs_known(o.displs.v[k]);
        } else if (!strcmp(a, "--seeds")) {
            o.seeds = atoi(v);
            bad = o.seeds < 1;
        } else if (!strcmp(a, "--seed")) {
            o.seed = atoi(v);
            bad = o.seed < 1;
        } else if (!strcmp(a, "--mode")) {
            bad = parse_strs(v, &o.modes);
            for (int k = 0; !bad && k < o.modes.n; k++)
                bad = strcmp(o.modes.v[k], "lockstep") && strcmp(o.modes.v[k], "shuffle");
        } else if (!strcmp(a, "--ops")) {
            o.ops = atoi(v);
            bad = o.ops < 1;
        } else if (!strcmp(a, "--assert-inter-spread")) {
            char *e;
            o.spread = strtod(v, &e);
            bad = *e || !(o.spread >= 1);
        } else if (!strcmp(a, "--cma")) {
            o.cma = atoi(v);
            bad = strcmp(v, "0") && strcmp(v, "1");
        } else if (!strcmp(a, "--shm-bytes")) {
            char *e;
            o.shm_bytes = strtoll(v, &e, 10);
            bad = *e || o.shm_bytes < 0;
        } else if (!strcmp(a, "--param")) {
            const char *eq = strchr(v, '=');
            convoy__param *pa = &o.params[o.nparams];
            if (!eq || eq == v || o.nparams == CONVOY_MAX_PARAMS ||
                (size_t)(eq - v) >= sizeof pa->name) {
                bad = 1;
            } else {
                char *e;
                memcpy(pa->name, v, (size_t)(eq - v));
                pa->name[eq - v] = '\0';
                pa->value = strtoll(eq + 1, &e, 0);
                bad = *e != '\0' || e == eq + 1;
                o.nparams++;
            }
        } else if (!strcmp(a, "--mutate")) {
            o.mutate = v;
            bad = strcmp(v, "all") && !convoy__check_mutation_find(v);
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "convoy-check: bad option %s%s%s\n", a, v && takes ? " " : "",
                    v && takes ? v : "");
            usage(stderr);
            goto cleanup;
        }
        i += takes;
    }
    if (list) {
        rc = list_algos();
        goto cleanup;
    }
    if (o.dissem_table) {
        rc = dissem_table(&o);
        goto cleanup;
    }
    if (!coll_given) {
        /* Every collective that has registered algorithms, so a new one is swept by default. */
        char all[256] = "";
        for (int c = 0; c < CONVOY_NCOLL; c++) {
            int has = 0;
            for (int k = 0; k < convoy__nalgos; k++)
                has |= convoy__algo_serves(&convoy__algos[k], c);
            if (!has) continue;
            strcat(all, all[0] ? "," : "");
            strcat(all, convoy__coll_name(c));
        }
        if (all[0] && parse_strs(all, &o.colls)) goto cleanup;
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (o.mutate && !coll_given && !algo_given) {
        /* Each mutation on the case it is made for. */
        for (int i = 0; i < convoy__check_nmutations; i++) {
            const convoy__check_mutation *m = &convoy__check_mutations[i];
            if (strcmp(o.mutate, "all") && strcmp(o.mutate, m->name)) continue;
            mutation_default(&o, m, &t);
        }
    } else {
        for (int ci = 0; ci < o.colls.n; ci++) {
            int coll = convoy__coll_parse(o.colls.v[ci]);
            if (coll < 0) {
                fprintf(stderr, "convoy-check: unknown collective %s\n", o.colls.v[ci]);
                goto cleanup;
            }
            for (int ai = 0; ai < o.algos.n; ai++) {
                const convoy__algo *sel[64];
                int nsel = 0;
                if (!strcmp(o.algos.v[ai], "all")) {
                    for (int k = 0; k < convoy__nalgos && nsel < 64; k++)
                        if (convoy__algo_serves(&convoy__algos[k], coll))
                            sel[nsel++] = &convoy__algos[k];
                } else {
                    sel[0] = convoy__check_algo_find(coll, o.algos.v[ai]);
                    if (!sel[0]) {
                        if (o.colls.n > 1) continue; /* the name is another collective's */
                        fprintf(stderr, "convoy-check: no algorithm %s for %s (--list)\n",
                                o.algos.v[ai], o.colls.v[ci]);
                        goto cleanup;
                    }
                    nsel = 1;
                }
                for (int k = 0; k < nsel; k++) {
                    agg *ng = realloc(aggs, (size_t)(naggs + 1) * sizeof *ng);
                    if (!ng) goto cleanup;
                    aggs = ng;
                    memset(&aggs[naggs], 0, sizeof *aggs);
                    aggs[naggs].algo = sel[k];
                    aggs[naggs].coll = coll;
                    agg *g = &aggs[naggs++];
                    for (int mi = 0; mi < convoy__check_nmutations; mi++) {
                        const convoy__check_mutation *m = &convoy__check_mutations[mi];
                        if (o.mutate && strcmp(o.mutate, "all") && strcmp(o.mutate, m->name))
                            continue;
                        sweep_algo(&o, coll, sel[k], o.mutate ? m : NULL, &t, g);
                        if (!o.mutate) break;
                    }
                }
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (o.stats) {
        for (int k = 0; k < naggs; k++) {
            const agg *g = &aggs[k];
            if (!g->cases) continue;
            printf("stats %s %s: %ld cases; max rounds %lld, messages per rank %lld, bytes "
                   "per rank %lld, inter-node bytes per rank %lld, per node out %lld in %lld, "
                   "per lane %lld; ranks not sending %lld, not receiving %lld, not reducing "
                   "%lld; inter-node messages in one round %lld, in flight %lld; scratch per "
                   "rank %lld bytes\n",
                   convoy__coll_name(g->coll), g->algo->name, g->cases, (long long)g->rounds,
                   (long long)g->msgs, (long long)g->bytes, (long long)g->rank_inter,
                   (long long)g->node_out, (long long)g->node_in, (long long)g->lane_max,
                   (long long)g->not_send, (long long)g->not_recv, (long long)g->not_reduce,
                   (long long)g->round_inter, (long long)g->inflight, (long long)g->tmp);
            if (g->spread_cases)
                printf("spread %s %s: %ld cases with regular data; worst inter-node bytes per "
                       "rank max/min %.3f\n",
                       convoy__coll_name(g->coll), g->algo->name, g->spread_cases, g->rank_ratio);
        }
        printf("%.2f s\n",
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
    if (t.skipped)
        printf("%ld skipped (not applicable%s)\n", t.skipped,
               o.mutate ? " or nothing to mutate" : "");
    if (t.passed + t.failed == 0) {
        fprintf(stderr, "convoy-check: no case ran\n");
        printf("0 passed, 0 failed\n");
        rc = 1;
        goto cleanup;
    }
    if (o.kernel) printf("%ld cases ran the direct kernel's schedule on every rank\n", t.kernel);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    rc = t.failed ? 1 : 0;
cleanup:
    free_strs(&o.colls);
    free_strs(&o.algos);
    free_strs(&o.layouts);
    free_strs(&o.counts);
    free_strs(&o.roots);
    free_strs(&o.displs);
    free_strs(&o.ops_kinds);
    free_strs(&o.modes);
    free(o.procs.v);
    free(o.ppn.v);
    free(o.count.v);
    free(o.inplace.v);
    free(o.ids);
    free(aggs);
    return rc;
}
