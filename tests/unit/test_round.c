/*
 * The kept one-round message path (src/api/round.c) posts, without an executor, the
 * messages the executor posts for the same schedule: each step's peer from
 * convoy__exec_top_peer and its tag from convoy__tag with convoy__exec_tag_shift. Checked
 * against the executor itself, run over a recording transport: for Barrier dissem with
 * every n = 1..min(7, P - 1) on P = 2..9 processes (2 per node), every rank, several epochs
 * and tag bounds, each message step's peer and tag as the executor posted it; and where the
 * schedule is one round (no step depends on another, which round.c requires), that the
 * executor posts every step at its start, in step order.
 */
#include <stdint.h>
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

int main(void)
{
    const convoy__algo *al = convoy__algo_find(CONVOY_COLL_BARRIER, "dissem");
    EXPECT(al != NULL, "Barrier dissem is registered");
    if (!al) return unit_done();
    static const int bounds[] = {32767, (1 << 23) - 1, INT32_MAX};
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
                for (size_t b = 0; b < sizeof bounds / sizeof *bounds && !brc; b++)
                    for (uint64_t epoch = 0; epoch < 40000; epoch += 9973) {
                        convoy__exec x;
                        rec r = {.x = &x};
                        convoy__transport t = {.ctx = &r,
                                               .tag_ub = bounds[b],
                                               .isend = isend,
                                               .irecv = irecv,
                                               .test = test,
                                               .cancel = cancel};
                        int done = 0, rc = convoy__exec_start(&x, &s, &t, &topo, NULL, NULL, epoch);
                        r.posted_at_start = -1;
                        for (int k = 0; !rc && !done && k < 4 * MAXS; k++) {
                            rc = convoy__exec_progress(&x, &done);
                            if (r.posted_at_start < 0) r.posted_at_start = r.n;
                        }
                        EXPECT(!rc && done, "P %d n %d rank %d: the executor ran", p, n, me);
                        const int shift = convoy__exec_tag_shift(&s, bounds[b]);
                        int same = r.n == s.nsteps;
                        for (int i = 0; i < s.nsteps && same; i++)
                            same =
                                r.peer[i] == convoy__exec_top_peer(&s, &topo, i) &&
                                r.tag[i] == convoy__tag(epoch, 0, s.steps[i].tag, shift, bounds[b]);
                        EXPECT(same, "P %d n %d rank %d bound %d epoch %llu: peers and tags", p, n,
                               me, bounds[b], (unsigned long long)epoch);
                        if (one_round) {
                            int in_order = r.posted_at_start == s.nsteps;
                            for (int i = 0; i < s.nsteps && in_order; i++)
                                in_order = r.order[i] == i;
                            EXPECT(in_order, "P %d rank %d: all steps posted at start in order", p,
                                   me);
                        }
                        convoy__exec_free(&x);
                    }
                convoy__sched_free(&s);
                convoy__topo_free(&topo);
            }
    }
    return unit_done();
}
