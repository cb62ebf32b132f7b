/*
 * The kept message path (src/api/round.c) posts, without an executor, the messages the
 * executor posts for the same schedule: each step's peer from convoy__exec_top_peer and its
 * tag from convoy__tag with convoy__exec_tag_shift, phase by phase (convoy__sched_phases).
 * Checked against the executor itself, run over a recording transport: for Barrier dissem
 * with every n = 1..min(7, P - 1) and Barrier linear on P = 2..9 processes (2 per node),
 * every rank, several epochs and tag bounds, each message step's peer and tag as the
 * executor posted it; and the phases: every step in exactly one, phase 0 what the executor
 * posted at its start in step order, every step of phase j depending on exactly the steps
 * the waits of phases 1..j name (the dependency sets recomputed here from the schedule),
 * the executor posting each phase's steps in step order, and no two messages of a
 * several-phase schedule sharing kind, peer and tag; the phase counts as the algorithms
 * give them (dissem: its k rounds; linear: two on rank 0, one elsewhere). The same for
 * Allgatherv direct (a copy among the messages, one phase) on P = 1..8, in place and not,
 * with empty blocks, and for Bcast linear (one phase) on P = 2..9 at every root.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "sched/sched.h"
#include "select/select.h"
#include "unit.h"

enum { MAXS = 256 };

typedef struct rec {
    convoy__exec *x;
    int n, order[MAXS], peer[MAXS], tag[MAXS], posted_at_start;
} rec;

static int post(void *ctx, int peer, int tag, void **req)
{
    rec *r = ctx;
    const int i = (int)(req - r->x->req);
    if (i < 0 || i >= MAXS || r->n >= MAXS) return CONVOY_ERR_INTERN;
    r->order[r->n++] = i;
    r->peer[i] = peer;
    r->tag[i] = tag;
    *req = NULL;
    return 0;
}

static int isend(void *ctx, int peer, int tag, const void *buf, int64_t count, int tslot,
                 void **req)
{
    (void)buf, (void)count, (void)tslot;
    return post(ctx, peer, tag, req);
}

static int irecv(void *ctx, int peer, int tag, void *buf, int64_t count, int tslot, void **req)
{
    (void)buf, (void)count, (void)tslot;
    return post(ctx, peer, tag, req);
}

static int test(void *ctx, void **req, int *done)
{
    (void)ctx, (void)req;
    *done = 1;
    return 0;
}

static void cancel(void *ctx, void **req)
{
    (void)ctx, (void)req;
}

static int copy(void *ctx, const void *src, int64_t scount, int stslot, void *dst, int64_t dcount,
                int dtslot)
{
    (void)src, (void)scount, (void)stslot, (void)dst, (void)dcount, (void)dtslot;
    rec *r = ctx;
    if (r->n >= MAXS) return CONVOY_ERR_INTERN;
    r->order[r->n++] = -1; /* (a copy: no request slot to name its step) */
    return 0;
}

/* The phases of s as round.c takes them, checked against the schedule's own dependencies
 * and the executor's posting order (r: a run of the executor); returns the count. */
static int check_phases(const char *what, const convoy__schedule *s, const convoy__topo *topo,
                        const rec *r)
{
    convoy__phase ph[MAXS];
    int step[MAXS], wait[MAXS];
    const int nph = convoy__sched_phases(s, topo, ph, MAXS, step, wait);
    EXPECT(nph >= 1, "%s: phases found", what);
    if (nph < 1) return 0;
    int seen[MAXS] = {0}, in_dep[MAXS] = {0}, ok = 1, pos[MAXS];
    for (int k = 0; k < r->n; k++)
        if (r->order[k] >= 0) pos[r->order[k]] = k;
    for (int j = 0; j < nph && ok; j++) {
        for (int w = 0; w < ph[j].nwait; w++)
            in_dep[wait[ph[j].wfirst + w]] = 1;
        EXPECT(j > 0 || ph[j].nwait == 0, "%s: phase 0 waits for nothing", what);
        for (int e = 0; e < ph[j].n && ok; e++) {
            const int i = step[ph[j].first + e];
            const convoy__step *st = &s->steps[i];
            ok = i >= 0 && i < s->nsteps && !seen[i];
            if (!ok) break;
            seen[i] = 1;
            /* Its dependencies are exactly the waits so far (no copies among them here). */
            int mine[MAXS] = {0}, nd = 0, nin = 0;
            for (int d = 0; d < st->ndeps; d++)
                if (!mine[s->deps[st->dep_first + d]]) mine[s->deps[st->dep_first + d]] = 1, nd++;
            for (int x = 0; x < s->nsteps; x++)
                nin += in_dep[x];
            for (int x = 0; x < s->nsteps && ok; x++)
                ok = mine[x] == in_dep[x] || s->steps[x].kind == CONVOY_STEP_COPY;
            ok = ok && nd <= nin;
            EXPECT(ok, "%s: step %d of phase %d depends on exactly the waits so far", what, i, j);
            /* Step order within the phase, in the executor's posting too. */
            if (ok && e > 0) {
                const int prev = step[ph[j].first + e - 1];
                ok = prev < i && (st->kind == CONVOY_STEP_COPY ||
                                  s->steps[prev].kind == CONVOY_STEP_COPY || pos[prev] < pos[i]);
                EXPECT(ok, "%s: phase %d in step order (executor too)", what, j);
            }
            if (j == 0 && st->kind != CONVOY_STEP_COPY) {
                ok = ok && pos[i] < r->posted_at_start;
                EXPECT(ok, "%s: phase 0 step %d posted by the executor at start", what, i);
            }
        }
    }
    int all = 1;
    for (int i = 0; i < s->nsteps; i++)
        all = all && seen[i];
    EXPECT(ok && all, "%s: every step in one phase", what);
    if (nph > 1)
        for (int i = 0; i < s->nsteps; i++)
            for (int k = i + 1; k < s->nsteps; k++) {
                const convoy__step *a = &s->steps[i], *b = &s->steps[k];
                EXPECT(a->kind == CONVOY_STEP_COPY || a->kind != b->kind || a->tag != b->tag ||
                           convoy__exec_top_peer(s, topo, i) != convoy__exec_top_peer(s, topo, k),
                       "%s: steps %d and %d share an envelope", what, i, k);
            }
    return nph;
}

/* Runs s's executor over the recording transport at every epoch and tag bound below and
 * compares each message step's peer and tag with what round.c computes; for a schedule
 * without dependencies, that every step ran or was posted at start in step order; the
 * phases (check_phases). Returns the phase count. */
static int compare(const char *what, const convoy__schedule *s, const convoy__topo *topo)
{
    int nph = 0;
    static const int bounds[] = {32767, (1 << 23) - 1, INT32_MAX};
    int one_round = s->nsteps > 0 && s->nchildren == 0;
    for (int i = 0; i < s->nsteps; i++)
        one_round = one_round && s->steps[i].ndeps == 0;
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
        for (uint64_t epoch = 0; epoch < 40000; epoch += 9973) {
            convoy__exec x;
            rec r = {.x = &x};
            convoy__transport t = {.ctx = &r,
                                   .tag_ub = bounds[b],
                                   .isend = isend,
                                   .irecv = irecv,
                                   .test = test,
                                   .cancel = cancel,
                                   .copy = copy};
            int done = 0, rc = convoy__exec_start(&x, s, &t, topo, NULL, NULL, epoch);
            r.posted_at_start = -1;
            for (int k = 0; !rc && !done && k < 4 * MAXS; k++) {
                rc = convoy__exec_progress(&x, &done);
                if (r.posted_at_start < 0) r.posted_at_start = r.n;
            }
            EXPECT(!rc && done, "%s: the executor ran", what);
            const int shift = convoy__exec_tag_shift(s, bounds[b]);
            int same = r.n == s->nsteps;
            for (int i = 0; i < s->nsteps && same; i++) {
                const convoy__step *st = &s->steps[i];
                if (st->kind != CONVOY_STEP_SEND && st->kind != CONVOY_STEP_RECV) continue;
                same = r.peer[i] == convoy__exec_top_peer(s, topo, i) &&
                       r.tag[i] == convoy__tag(epoch, 0, st->tag, shift, bounds[b]);
            }
            EXPECT(same, "%s bound %d epoch %llu: peers and tags", what, bounds[b],
                   (unsigned long long)epoch);
            if (one_round) {
                int in_order = r.posted_at_start == s->nsteps;
                for (int i = 0; i < s->nsteps && in_order; i++)
                    in_order = r.order[i] == (s->steps[i].kind == CONVOY_STEP_COPY ? -1 : i);
                EXPECT(in_order, "%s: all steps at start in step order", what);
            }
            if (b == 0 && epoch == 0 && s->nsteps > 0) nph = check_phases(what, s, topo, &r);
            convoy__exec_free(&x);
        }
    return nph;
}

/* Allgatherv direct on P ranks with block sizes from a pattern (zeros included), in place
 * and not: one round (a copy and messages, no dependency), checked like the Barrier. */
static void allgatherv_direct(void)
{
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_ALLGATHERV, "direct");
    EXPECT(al != NULL, "Allgatherv direct is registered");
    if (!al) return;
    for (int p = 1; p <= 8; p++) {
        int64_t ids[8], rc[8], dp[8], sum = 0;
        for (int i = 0; i < p; i++) {
            ids[i] = i / 2;
            rc[i] = (i * 7 + p) % 4; /* 0..3 elements */
            dp[i] = sum;
            sum += rc[i];
        }
        for (int me = 0; me < p; me++)
            for (int inplace = 0; inplace < 2; inplace++) {
                convoy__topo topo;
                if (convoy__topo_from_ids(&topo, p, me, ids)) continue;
                convoy__args a;
                memset(&a, 0, sizeof a);
                a.coll = CONVOY_COLL_ALLGATHERV;
                a.topo = &topo;
                a.count = rc[me];
                a.rcounts = rc;
                a.displs = dp;
                a.stype = a.rtype = (convoy__dtype){4, 4, 0, 4};
                a.inplace = inplace;
                convoy__machine_builtin(&a.machine);
                convoy__schedule s;
                convoy__sched_init(&s);
                const int brc = al->build(&a, &s);
                int deps = 0;
                for (int i = 0; i < s.nsteps; i++)
                    deps += s.steps[i].ndeps;
                char what[96];
                snprintf(what, sizeof what, "allgatherv direct P %d rank %d inplace %d", p, me,
                         inplace);
                EXPECT(brc == 0 && !s.err && deps == 0, "%s: built, one round", what);
                if (!brc) {
                    const int nph = compare(what, &s, &topo);
                    EXPECT(nph == (s.nsteps > 0), "%s: one phase (none if empty)", what);
                }
                convoy__sched_free(&s);
                convoy__topo_free(&topo);
            }
    }
}

/* Builds rank me's schedule of `al` (collective coll, count ints, root) on P ranks, two per
 * node, and compares it with the executor (compare); returns its phase count, -1 if it did
 * not build; *nsteps: its step count. */
static int flat_case(const convoy__algo *al, int coll, int p, int me, int root, int64_t count,
                     const char *what, int *nsteps)
{
    int64_t ids[16];
    for (int i = 0; i < p; i++)
        ids[i] = i / 2;
    convoy__topo topo;
    if (p > 16 || convoy__topo_from_ids(&topo, p, me, ids)) return -1;
    convoy__args a;
    memset(&a, 0, sizeof a);
    a.coll = coll;
    a.topo = &topo;
    a.count = count;
    a.root = root;
    a.stype = a.rtype = (convoy__dtype){4, 4, 0, 4};
    convoy__machine_builtin(&a.machine);
    convoy__schedule s;
    convoy__sched_init(&s);
    const int brc = al->build(&a, &s);
    EXPECT(brc == 0 && !s.err, "%s: built", what);
    *nsteps = s.nsteps;
    const int nph = brc ? -1 : compare(what, &s, &topo);
    convoy__sched_free(&s);
    convoy__topo_free(&topo);
    return nph;
}

/* Barrier linear on P = 2..9: two phases on rank 0 (its sends wait for all its receives),
 * one elsewhere. Bcast linear on P = 2..9, every root: one phase on every rank (the root's
 * sends and the others' receive depend on nothing). */
static void flat_fans(void)
{
    const convoy__algo *bl = convoy__algo_find(CONVOY_COLL_BARRIER, "linear"),
                       *cl = convoy__algo_find(CONVOY_COLL_BCAST, "linear");
    EXPECT(bl && cl, "Barrier and Bcast linear are registered");
    if (!bl || !cl) return;
    char what[64];
    int n;
    for (int p = 2; p <= 9; p++)
        for (int me = 0; me < p; me++) {
            snprintf(what, sizeof what, "barrier linear P %d rank %d", p, me);
            const int nph = flat_case(bl, CONVOY_COLL_BARRIER, p, me, 0, 0, what, &n);
            EXPECT(nph == (me == 0 ? 2 : 1), "%s: %d phases", what, nph);
            for (int root = 0; root < p; root++) {
                snprintf(what, sizeof what, "bcast linear P %d root %d rank %d", p, root, me);
                EXPECT(flat_case(cl, CONVOY_COLL_BCAST, p, me, root, 3, what, &n) == 1 &&
                           n == (me == root ? p - 1 : 1),
                       "%s: one phase, %d steps", what, n);
            }
        }
}

int main(void)
{
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_BARRIER, "dissem");
    EXPECT(al != NULL, "Barrier dissem is registered");
    if (!al) return unit_done();
    for (int p = 2; p <= 9; p++) {
        int64_t ids[9];
        for (int i = 0; i < p; i++)
            ids[i] = i / 2;
        for (int n = 1; n <= 7 && n <= p - 1; n++)
            for (int me = 0; me < p; me++) {
                convoy__topo topo;
                if (convoy__topo_from_ids(&topo, p, me, ids)) {
                    EXPECT(0, "topology of %d ranks", p);
                    continue;
                }
                convoy__args a;
                memset(&a, 0, sizeof a);
                a.coll = CONVOY_COLL_BARRIER;
                a.topo = &topo;
                convoy__machine_builtin(&a.machine);
                a.nparams = 1;
                strcpy(a.params[0].name, "CONVOY_DISSEM_N");
                a.params[0].value = n;
                convoy__schedule s;
                convoy__sched_init(&s);
                const int brc = al->build(&a, &s);
                EXPECT(brc == 0 && !s.err && s.nsteps <= MAXS, "P %d n %d rank %d: built", p, n,
                       me);
                int one_round = s.nsteps > 0 && s.nchildren == 0;
                for (int i = 0; i < s.nsteps; i++)
                    one_round = one_round && s.steps[i].ndeps == 0;
                EXPECT(one_round == (n >= p - 1), "P %d n %d: one round iff n = P - 1 (%d)", p, n,
                       one_round);
                char what[64];
                snprintf(what, sizeof what, "barrier dissem P %d n %d rank %d", p, n, me);
                int dn, k, m;
                convoy__barrier_dissem_shape(&a, &dn, &k, &m);
                if (!brc) {
                    const int nph = compare(what, &s, &topo);
                    EXPECT(nph == k, "%s: %d phases, %d rounds", what, nph, k);
                }
                convoy__sched_free(&s);
                convoy__topo_free(&topo);
            }
    }
    allgatherv_direct();
    flat_fans();
    return unit_done();
}
