/*
 * convoy_Barrier, convoy_Ibarrier, convoy_Barrier_init, and CONVOY_DISSEM_N=auto.
 *
 * A barrier has no data: its schedule's messages are empty and name a dummy receive
 * buffer. With CONVOY_DISSEM_N=auto the n of the dissemination barrier is chosen per
 * communicator as papers/003 §V does: on the first blocking Barrier (or Barrier_init) of
 * the communicator every n = 1..min(7, P - 1) runs once to warm up and then 15 times,
 * interleaved; each rank takes the median time per n, a MAX-allreduce gives every rank the
 * slowest rank's medians, and all pick the smallest (the first on ties). The choice is
 * kept on the communicator's state. Requests planned before it (nonblocking calls, which
 * must not block, and deferred ones) use the cost model's n; a request fixes its n when it
 * is planned at call time, so all ranks run the same schedule. CONVOY_REPRODUCIBLE=1
 * freezes auto to the cost model's n (no timing-based choice). CONVOY_VERBOSE=1 prints the
 * times, the choice and what choosing cost.
 */
#include "api/api.h"
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The receive buffer of a barrier's empty messages (never read or written). */
static char dummy;

enum { AUTO_NMAX = 7, AUTO_REPS = 15 };

static int native_start(convoy_request r)
{
    return CONVOY_NATIVE(r, PMPI_Barrier, PMPI_Ibarrier, r->comm);
}

static void set_n(convoy__args *a, int n)
{
    static const char name[] = "CONVOY_DISSEM_N";
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].name, name) == 0) {
            a->params[i].value = n;
            return;
        }
    if (a->nparams == CONVOY_MAX_PARAMS) return;
    memcpy(a->params[a->nparams].name, name, sizeof name);
    a->params[a->nparams++].value = n;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Times every n on the communicator (blocking, collective) and keeps the fastest. */
static int choose_n(convoy_request r, const convoy__algo *al, const convoy__args *a)
{
    convoy__cstate *cs = r->cs;
    const int P = cs->topo.size, nmax = P - 1 < AUTO_NMAX ? P - 1 : AUTO_NMAX;
    if (nmax <= 1) {
        cs->barrier_n = 1; /* one n only: nothing to time */
        return MPI_SUCCESS;
    }
    const double t0 = PMPI_Wtime();
    double med[AUTO_NMAX], times[AUTO_NMAX][AUTO_REPS];
    convoy__centry e[AUTO_NMAX];
    memset(e, 0, sizeof e);
    memset(times, 0, sizeof times);
    convoy_request q = NULL;
    int rc = convoy__req_new("Barrier (CONVOY_DISSEM_N=auto)", r->comm, &q);
    for (int j = 0; !rc && j < nmax; j++) {
        convoy__args an = *a;
        set_n(&an, j + 1);
        convoy__sched_init(&e[j].sched);
        e[j].refs = 1;
        rc = al->build(&an, &e[j].sched);
        if (!rc) rc = e[j].sched.err;
    }
    if (!rc) {
        q->cs = cs;
        q->coll = CONVOY_COLL_BARRIER;
        q->recvbuf = &dummy;
        q->op = MPI_OP_NULL;
        q->op_type = MPI_DATATYPE_NULL;
        /* A warm-up run of each n, then the timed runs interleaved, so that a slow phase of
         * an oversubscribed host hits every n alike. Every run takes the next epoch, in the
         * same order on every rank; waiting progresses the process's other requests. */
        for (int rep = -1; !rc && rep < AUTO_REPS; rep++)
            for (int j = 0; !rc && j < nmax; j++) {
                q->entry = &e[j];
                double t = PMPI_Wtime();
                if (!(rc = convoy__req_start(q))) rc = convoy__req_wait(q);
                if (rep >= 0) times[j][rep] = PMPI_Wtime() - t;
            }
    }
    if (q) {
        q->entry = NULL; /* the schedules are freed below */
        convoy__req_free(q);
    }
    for (int j = 0; j < nmax; j++)
        convoy__sched_free(&e[j].sched);
    /* An error on one rank must not leave the others in the allreduce: all join it, with
     * the error as a negative time. */
    for (int j = 0; j < nmax; j++) {
        qsort(times[j], AUTO_REPS, sizeof times[j][0], cmp_double);
        med[j] = rc ? -1 : times[j][AUTO_REPS / 2];
    }
    double all[AUTO_NMAX + 1], mine[AUTO_NMAX + 1];
    memcpy(mine, med, sizeof med);
    mine[nmax] = rc ? 1 : 0;
    int rc2 = PMPI_Allreduce(mine, all, nmax + 1, MPI_DOUBLE, MPI_MAX, cs->priv);
    if (rc) return rc;
    if (rc2) return rc2;
    if (all[nmax] > 0) return MPI_ERR_OTHER; /* another rank failed */
    int best = 0;
    for (int j = 1; j < nmax; j++)
        if (all[j] < all[best]) best = j;
    cs->barrier_n = best + 1;
    if (r->cfg.verbose && cs->topo.rank == 0) {
        char line[512];
        size_t used = 0;
        for (int j = 0; j < nmax && used < sizeof line; j++) {
            int w = snprintf(line + used, sizeof line - used, " n=%d %.1f us", j + 1, 1e6 * all[j]);
            if (w > 0) used += (size_t)w;
        }
        fprintf(stderr,
                "convoy: barrier dissem CONVOY_DISSEM_N=auto on %d processes (median of %d, "
                "slowest rank):%s; chose n = %d; choosing took %.2f ms\n",
                P, AUTO_REPS, line, best + 1, 1e3 * (PMPI_Wtime() - t0));
    }
    return MPI_SUCCESS;
}

/* Planning hook: the n of CONVOY_DISSEM_N=auto. */
static int tune(convoy_request r, const convoy__algo *al, convoy__args *a)
{
    const char *v = convoy__config_get(&r->cfg, "CONVOY_DISSEM_N");
    if (strcmp(al->name, "dissem") != 0 || !v || strcmp(v, "auto") != 0) return MPI_SUCCESS;
    /* Frozen to the cost model (the builder's default), and so is a deferred request: it
     * plans inside its progress, when a later blocking call may have chosen on some ranks
     * only; at its call no blocking call had run, so no rank had a choice then either. */
    if (r->cfg.reproducible || r->deferred) return MPI_SUCCESS;
    int rc;
    if (!r->cs->barrier_n && r->may_block && (rc = choose_n(r, al, a))) return rc;
    if (r->cs->barrier_n) set_n(a, r->cs->barrier_n);
    return MPI_SUCCESS;
}

static int plan(convoy_request r)
{
    convoy__args a = {.coll = CONVOY_COLL_BARRIER, .topo = &r->cs->topo};
    return convoy__plan(r, &a);
}

static int setup(MPI_Comm comm, int mode, convoy_request *out)
{
    int rc;
    if ((rc = convoy__check_comm(comm))) return rc;
    convoy_request r;
    if ((rc = convoy__req_new("Barrier", comm, &r))) return rc;
    r->coll = CONVOY_COLL_BARRIER;
    r->plan = plan;
    r->tune = tune;
    r->may_block = mode != CONVOY_NONBLOCKING;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->recvbuf = &dummy;
    r->op = MPI_OP_NULL;
    r->op_type = MPI_DATATYPE_NULL;
    if ((rc = convoy__req_route(r, mode))) {
        convoy__req_free(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

int convoy_Barrier(MPI_Comm comm)
{
    const convoy__call call = {.coll = CONVOY_COLL_BARRIER};
    convoy_request r;
    int rc;
    if (convoy__fast_try(comm, &call, &rc)) return convoy__error(comm, rc);
    rc = setup(comm, CONVOY_BLOCKING, &r);
    if (!rc) rc = convoy__req_launch_call(r, &call);
    return convoy__error(comm, rc);
}

int convoy_Ibarrier(MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(comm, CONVOY_NONBLOCKING, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_NONBLOCKING, request);
    return convoy__error(comm, rc);
}

int convoy_Barrier_init(MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(comm, CONVOY_PERSISTENT, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_PERSISTENT, request);
    return convoy__error(comm, rc);
}

int convoy__barrier_auto_n(MPI_Comm comm)
{
    convoy__cstate *cs;
    if (convoy__cstate_get(comm, 1, &cs, NULL) || !cs) return 0;
    return cs->barrier_n;
}
