/*
 * Requests: one object for blocking (start + wait), nonblocking (start, test/wait) and
 * persistent (built once, started many times) operations, on the Convoy path (a schedule
 * run by the executor) or the native path (the MPI library's nonblocking collective).
 */
#include "api/internal.h"
#include "platform/platform.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every started, unfinished request of the process. MPI promises progress for all pending
 * operations while a process waits for any one; Convoy's schedules only advance when the
 * executor runs, so a wait runs the executor of every request in this list. Lock order:
 * a request's lock, then the list's; the list's walker only try-locks requests. */
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;
static convoy_request active_head;
static atomic_int nlinked; /* length of the list (read without its lock: a hint) */

static void link_active(convoy_request r)
{
    pthread_mutex_lock(&active_lock);
    r->next = active_head;
    r->prev = NULL;
    if (active_head) active_head->prev = r;
    active_head = r;
    r->linked = 1;
    atomic_fetch_add_explicit(&nlinked, 1, memory_order_relaxed);
    pthread_mutex_unlock(&active_lock);
}

/* Caller holds active_lock. */
static void unlink_locked(convoy_request r)
{
    if (!r->linked) return;
    if (r->prev)
        r->prev->next = r->next;
    else
        active_head = r->next;
    if (r->next) r->next->prev = r->prev;
    r->linked = 0;
    atomic_fetch_sub_explicit(&nlinked, 1, memory_order_relaxed);
}

static void unlink_active(convoy_request r)
{
    if (!r->linked) return; /* only its owner links it */
    pthread_mutex_lock(&active_lock);
    unlink_locked(r);
    pthread_mutex_unlock(&active_lock);
}

/* Requests that finished go back to a small process-wide pool with the memory they own
 * (executor block, scratch, count vectors), so that a blocking call in the steady state
 * takes its request and memory from there and calls no allocator. */
enum { POOL_SIZE = 8 };
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static convoy_request pool[POOL_SIZE];
static int npool;

/* One request outside the locked pool, taken and given back with one atomic exchange: the
 * steady state of blocking calls on one thread never takes the pool's lock. */
static _Atomic(convoy_request) pool_fast;

static convoy_request pool_take(void)
{
    convoy_request r = atomic_exchange_explicit(&pool_fast, NULL, memory_order_acquire);
    if (!r) {
        pthread_mutex_lock(&pool_lock);
        if (npool > 0) r = pool[--npool];
        pthread_mutex_unlock(&pool_lock);
    }
    if (!r) return calloc(1, sizeof *r);
    const convoy__exec_mem xmem = r->xmem;
    convoy__kernel *kern = r->kern;
    struct convoy__round *round = r->round;
    int *ivec = r->ivec;
    int64_t *lvec = r->lvec, icap = r->ivec_cap, lcap = r->lvec_cap;
    memset(r, 0, sizeof *r);
    r->xmem = xmem;
    r->kern = kern;
    r->round = round;
    r->ivec = ivec, r->ivec_cap = icap;
    r->lvec = lvec, r->lvec_cap = lcap;
    return r;
}

static void pool_give(convoy_request r)
{
    convoy_request none = NULL;
    if (atomic_compare_exchange_strong_explicit(&pool_fast, &none, r, memory_order_release,
                                                memory_order_relaxed))
        return;
    pthread_mutex_lock(&pool_lock);
    int kept = npool < POOL_SIZE;
    if (kept) pool[npool++] = r;
    pthread_mutex_unlock(&pool_lock);
    if (kept) return;
    free(r->xmem.p);
    free(r->kern);
    free(r->round);
    free(r->ivec);
    free(r->lvec);
    free(r);
}

static void *grow(void *p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap) return p;
    free(p);
    *cap = 0;
    if (!(p = malloc((size_t)need * elem))) return NULL;
    *cap = need;
    return p;
}

int convoy__req_counts(convoy_request r, int n, int with_displs)
{
    int64_t need = (int64_t)n * (with_displs ? 2 : 1);
    if (need < 1) need = 1;
    if (!(r->ivec = grow(r->ivec, &r->ivec_cap, need, sizeof *r->ivec))) return MPI_ERR_NO_MEM;
    r->rcounts = r->ivec;
    r->displs = with_displs ? r->ivec + n : NULL;
    return MPI_SUCCESS;
}

int64_t *convoy__req_i64(convoy_request r, int64_t n)
{
    return r->lvec = grow(r->lvec, &r->lvec_cap, n < 1 ? 1 : n, sizeof *r->lvec);
}

int convoy__req_new(const char *what, MPI_Comm comm, convoy_request *out)
{
    convoy_request r = pool_take();
    if (!r) return MPI_ERR_NO_MEM;
    pthread_mutex_init(&r->lock, NULL);
    r->what = what;
    r->comm = comm;
    convoy__config_current(&r->cfg);
    r->native_req = r->agree_req = MPI_REQUEST_NULL;
    r->stype = r->rtype = MPI_DATATYPE_NULL;
    *out = r;
    return MPI_SUCCESS;
}

int convoy__req_alternates(convoy_request r, const convoy__schedule *s)
{
    convoy__cstate *cs = r->cs;
    return s && s->shm_alt && r->nagree == 0 && cs->shm &&
           s->shm_bytes <= convoy__shm_half(cs->shm);
}

static void take_seq(convoy_request r, const convoy__schedule *s)
{
    convoy__req_seq(r, convoy__req_alternates(r, s));
}

static void set_alt(convoy_request r)
{
    r->tr.t.shm_seq = r->shm_seq;
    r->tr.t.shm_alt = r->shm_alt;
    r->tr.t.shm_prev_alt = r->shm_prev_alt;
}

static int start_schedule(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    const convoy__schedule *s = &r->entry->sched;
    int uses_shm = s->nflags > 0 || s->shm_bytes > 0;
    convoy__mpi_transport_init(&r->tr, cs->priv, cs->tag_ub, r->stype, r->rtype, r->op, r->op_type,
                               uses_shm ? cs->shm : NULL, r->shm_seq);
    if (uses_shm) set_alt(r);
    int rc = convoy__exec_start_mem(&r->x, s, &r->tr.t, &cs->topo, r->sendbuf, r->recvbuf, r->epoch,
                                    &r->xmem);
    r->running = rc == 0;
    return rc;
}

/* No steps, one flag: the executor waits at the segment's gate, then releases it. */
static const convoy__schedule seg_pass_sched = {.nflags = 1};

static int start_pass(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    if (r->running) convoy__exec_free(&r->x);
    convoy__mpi_transport_init(&r->tr, cs->priv, cs->tag_ub, r->stype, r->rtype, r->op, r->op_type,
                               cs->shm, r->shm_seq);
    int rc = convoy__exec_start(&r->x, &seg_pass_sched, &r->tr.t, &cs->topo, r->sendbuf, r->recvbuf,
                                r->epoch);
    r->running = rc == 0;
    r->in_pass = rc == 0;
    return rc;
}

static int forced_native(const convoy_request r)
{
    const char *v = r->cfg.algo[r->coll];
    return v && strcmp(v, "native") == 0;
}

int convoy__req_route(convoy_request r, int mode)
{
    int fresh, rc;
    if ((rc = convoy__cstate_get(r->comm, mode != CONVOY_NONBLOCKING, &r->cs, &fresh))) return rc;
    r->blocking = mode == CONVOY_BLOCKING;
    /* A call that only started its communicator's setup, or that is forced to the MPI
     * library, goes native; so does one no algorithm applies to. The decision depends on
     * the arguments and the call's position alone, so all ranks take the same path. */
    if (r->cs && !fresh && !forced_native(r)) {
        if (r->cs->ready) {
            if ((rc = r->plan(r))) return rc;
        } else {
            r->deferred = 1;
        }
    }
    if (!r->cs || fresh || forced_native(r)) convoy__trial_unplanned(r);
    r->native = !r->deferred && !r->entry && !r->local_err;
    if (r->native && !r->native_why)
        r->native_why = !r->cs             ? "no_state"
                        : fresh            ? "setup"
                        : forced_native(r) ? "forced"
                                           : "model";
    return MPI_SUCCESS;
}

const char convoy__native_name[] = "native";

static CONVOY_TLS_FAST const convoy__algo *last_algo;
static CONVOY_TLS_FAST const char *last_why;

void convoy__req_outcome(convoy_request r, const convoy__algo **algo, const char **why)
{
    *algo = r->native ? NULL : r->algo;
    *why = r->native ? r->native_why : NULL;
}

void convoy__last_outcome(const convoy__algo **algo, const char **why)
{
    *algo = last_algo;
    *why = last_why;
}

void convoy__last_native(const char *why)
{
    last_algo = NULL;
    last_why = why;
}

static int begin(convoy_request r)
{
    /* A blocking call served by the MPI library makes the library's nonblocking collective
     * and waits in Convoy's wait, which runs the executors of the process's other Convoy
     * requests (a rank blocked inside the library would not, and a peer waiting for one of
     * them would hang). Its blocking collective only under CONVOY_NATIVE_BLOCKING=1: the
     * choice must be the same on every rank (MPI's blocking and nonblocking collectives do
     * not match: a rank in MPI_Barrier and one in MPI_Ibarrier hang), so it cannot depend
     * on what is in flight here, and the program promises that no Convoy nonblocking or
     * persistent collective is pending across such a call. */
    r->direct = r->native && r->blocking && r->cfg.native_blocking;
    if (r->native) return r->native_start(r);
    /* Epochs and segment sequence numbers are taken in call order, the same on every rank:
     * that keeps overlapping operations apart. A deferred request plans later (no segment,
     * so no sequence number) but takes its epoch now. */
    convoy__cstate *cs = r->cs;
    r->epoch = cs->epoch++;
    if (r->deferred) return MPI_SUCCESS;
    /* (No schedule: an argument error waits for the CONVOY_CHECK_ARGS agreement.) */
    const convoy__schedule *s = r->entry ? &r->entry->sched : NULL;
    const int uses = s && (s->nflags > 0 || s->shm_bytes > 0);
    /* With CONVOY_CHECK_ARGS the ranks may disagree on the arguments (that is what the
     * agreement finds), hence on whether the schedule uses the segment, or have no schedule:
     * then every rank with a segment takes a number, and passes it (start_pass) when its
     * segment schedule does not run. */
    r->seg_pass = r->nagree > 0 && cs->shm && !uses;
    r->seg_taken = uses || r->seg_pass;
    r->in_pass = r->pass_err = 0;
    r->shm_seq = r->shm_alt = r->shm_prev_alt = 0;
    if (r->seg_taken) take_seq(r, s);
    /* With CONVOY_CHECK_ARGS the schedule starts once all ranks agreed. */
    return r->nagree > 0 ? convoy__agree_start(r) : start_schedule(r);
}

int convoy__req_start(convoy_request r)
{
    r->active = 1;
    r->finished = 0;
    r->saved_err = 0;
    r->t_start = r->cfg.watchdog > 0 ? PMPI_Wtime() : 0;
    r->t_report = 0;
    int rc = begin(r);
    if (rc) {
        r->active = 0;
        return rc;
    }
    /* A blocking call's request is progressed by its caller until it is done: other
     * waits need not see it (and it saves the list's lock twice per call). */
    if (!r->blocking) link_active(r);
    return MPI_SUCCESS;
}

int convoy__req_launch(convoy_request r, int mode, convoy_request *out)
{
    if (mode == CONVOY_PERSISTENT) {
        *out = r;
        return MPI_SUCCESS;
    }
    if (mode == CONVOY_BLOCKING) return convoy__req_launch_call(r, NULL);
    int rc = convoy__req_start(r);
    if (rc) {
        convoy__req_free(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

int convoy__req_launch_call(convoy_request r, const convoy__call *c)
{
    r->blocking = 1;
    const double t0 = r->trial ? PMPI_Wtime() : 0;
    int rc = convoy__req_start(r);
    if (!rc) {
        rc = convoy__req_wait(r);
        convoy__req_outcome(r, &last_algo, &last_why);
    }
    r->active = 0;
    /* (Timed whatever the outcome: every rank counts the call.) */
    if (r->trial) {
        const int trc = convoy__trial_note(r, PMPI_Wtime() - t0);
        if (!rc) rc = trc;
    }
    if (rc || !convoy__fast_keep(r, c)) convoy__req_free(r);
    return rc;
}

int convoy__req_rerun(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    int rc;
    if (r->native) {
        rc = convoy__req_start(r); /* (the MPI library's call, blocking when direct) */
    } else {
        const convoy__schedule *s = &r->entry->sched;
        r->active = 1;
        r->finished = r->saved_err = 0;
        r->epoch = cs->epoch++;
        /* (Kept requests never use the CONVOY_CHECK_ARGS pass: fast.c.) */
        r->seg_taken = s->nflags > 0 || s->shm_bytes > 0;
        r->shm_seq = 0;
        if (r->seg_taken) {
            take_seq(r, s);
            set_alt(r); /* the transport is the last call's, as are its types */
        } else if (s->nsteps == 0 && s->nchildren == 0) {
            /* Nothing to run (every count zero): the epoch advanced as on every rank, and
             * no executor starts or waits (0.1 us at np 2, against the library's 0.007). */
            r->finished = 1;
            convoy__req_note_outcome(r);
            r->active = 0;
            return MPI_SUCCESS;
        }
        rc = convoy__exec_start_mem(&r->x, s, &r->tr.t, &cs->topo, r->sendbuf, r->recvbuf, r->epoch,
                                    &r->xmem);
        r->running = rc == 0;
    }
    if (!rc) rc = convoy__req_wait(r);
    convoy__req_note_outcome(r);
    r->active = 0;
    return rc;
}

void convoy__req_note_outcome(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    convoy__req_outcome(r, &last_algo, &last_why);
    convoy__cstate_note_algo(cs, r->algo && !r->native ? r->algo->name : convoy__native_name);
}

/* One step of progress on r, whose lock the caller holds. On completion the outcome is
 * kept in r (finished, saved_err) for whichever thread asks next. */
static int step(convoy_request r, int *done)
{
    int rc = 0;
    *done = 0;
    if (r->native) {
        /* Direct: done when native_start returned. A blocking call with no other Convoy
         * request in the process to progress meanwhile (and no watchdog to report) waits
         * inside the library, whose wait drives its nonblocking collective best. */
        if (r->direct) {
            *done = 1;
        } else if (r->blocking && r->cfg.watchdog <= 0 &&
                   !atomic_load_explicit(&nlinked, memory_order_relaxed)) {
            rc = PMPI_Wait(&r->native_req, MPI_STATUS_IGNORE);
            *done = 1;
        } else {
            rc = PMPI_Test(&r->native_req, done, MPI_STATUS_IGNORE);
        }
        /* The call that started its communicator's nonblocking setup completes with the
         * setup: a pending MPI_Comm_idup would keep the communicator alive past
         * MPI_Comm_free (MPICH then runs the attribute's delete callback only at
         * MPI_Finalize). */
        if (!rc && *done && r->cs && !r->cs->ready) {
            rc = convoy__cstate_progress(r->cs);
            *done = r->cs->ready;
        }
        goto out;
    }
    if (r->deferred && !r->running) {
        if ((rc = convoy__cstate_progress(r->cs))) goto out;
        if (!r->cs->ready) return 0;
        if ((rc = r->plan(r))) goto out;
        if (!r->entry) {
            /* The model chose the MPI library's (the same choice on every rank). */
            r->native = 1;
            rc = r->native_start(r);
            if (!rc) rc = PMPI_Test(&r->native_req, done, MPI_STATUS_IGNORE);
            goto out;
        }
        if ((rc = start_schedule(r))) goto out;
    }
    if (r->agree_req != MPI_REQUEST_NULL) {
        int agreed;
        if ((rc = PMPI_Test(&r->agree_req, &agreed, MPI_STATUS_IGNORE))) goto out;
        if (!agreed) return 0;
        rc = convoy__agree_finish(r);
        if (r->local_err) rc = r->local_err;
        if (rc && r->seg_taken) {
            r->pass_err = rc; /* reported once the segment number is passed */
            rc = start_pass(r);
        } else if (!rc) {
            rc = start_schedule(r);
        }
        if (rc) goto out;
    }
    rc = convoy__exec_progress(&r->x, done);
    if (!rc && *done && r->seg_pass && !r->in_pass) {
        *done = 0;
        if (!(rc = start_pass(r))) rc = convoy__exec_progress(&r->x, done);
    }
    if (!rc && *done && r->in_pass) rc = r->pass_err;
out:
    if (rc) *done = 1; /* an error ends the operation: report it, do not hang */
    if (*done) {
        if (r->running) convoy__exec_free(&r->x);
        r->running = 0;
        r->finished = 1;
        r->saved_err = rc;
    }
    return rc;
}

int convoy__req_progress(convoy_request r, int *done)
{
    int rc;
    /* A blocking call's request is seen by its caller alone: no lock. */
    if (r->blocking) return r->finished ? (*done = 1, r->saved_err) : step(r, done);
    pthread_mutex_lock(&r->lock);
    if (r->finished || !r->active) {
        *done = 1;
        rc = r->saved_err;
    } else {
        rc = step(r, done);
        if (*done) unlink_active(r);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static void progress_others(convoy_request self);

int convoy__req_others_pending(void)
{
    return atomic_load_explicit(&nlinked, memory_order_relaxed) != 0;
}

void convoy__req_progress_others(void)
{
    progress_others(NULL);
}

/* Runs the executors of the other active requests (skipped if another thread is at it). */
static void progress_others(convoy_request self)
{
    if (!atomic_load_explicit(&nlinked, memory_order_relaxed)) return;
    if (pthread_mutex_trylock(&active_lock)) return;
    convoy_request next;
    for (convoy_request q = active_head; q; q = next) {
        next = q->next;
        if (q == self || pthread_mutex_trylock(&q->lock)) continue;
        int done;
        if (!q->finished) step(q, &done);
        if (q->finished) unlink_locked(q);
        pthread_mutex_unlock(&q->lock);
    }
    pthread_mutex_unlock(&active_lock);
}

static void watchdog(convoy_request r)
{
    const double limit = r->cfg.watchdog;
    if (limit <= 0) return;
    double now = PMPI_Wtime();
    if (now - r->t_start < limit || now - r->t_report < limit) return;
    r->t_report = now;
    int rank;
    PMPI_Comm_rank(r->comm, &rank);
    char what[1024];
    if (r->native)
        snprintf(what, sizeof what, "waiting for the MPI library's collective");
    else if (!r->running && r->deferred)
        snprintf(what, sizeof what, "waiting for the communicator's setup");
    else if (r->agree_req != MPI_REQUEST_NULL)
        snprintf(what, sizeof what, "waiting for the CONVOY_CHECK_ARGS agreement");
    else
        convoy__exec_describe(&r->x, what, sizeof what);
    fprintf(stderr, "convoy: watchdog: rank %d: MPI_%s (%s) not done after %.1f s: %s\n", rank,
            r->what, r->algo ? r->algo->name : "native", now - r->t_start, what);
}

/* Where waits must block to be cheap (simulation: platform.h) and r is the only unfinished
 * request: if r's schedule waits for messages only, waits inside MPI for the next one; if
 * for notifications only, sleeps until one. Returns 1 if it waited (an error is then the
 * executor's); 0: the caller polls. The native path polls (SMPI's MPI_Test of a null
 * request leaves its flag unset, so a request completed elsewhere cannot be tested again). */
static int block_in_wait(convoy_request r)
{
    void **slots[CONVOY_WAIT_ANY_MAX];
    int n = 0, flags = 0, waited = 0;
    if (!convoy__plat_blocking_waits() || pthread_mutex_trylock(&active_lock)) return 0;
    int alone = active_head == r && !r->next;
    pthread_mutex_unlock(&active_lock);
    if (!alone || pthread_mutex_trylock(&r->lock)) return 0;
    if (r->running && !r->finished && r->agree_req == MPI_REQUEST_NULL && !r->x.err) {
        n = convoy__exec_waits(&r->x, slots, CONVOY_WAIT_ANY_MAX, &flags);
        if (n > 0 && !flags && r->x.t->wait_any) {
            int rc = r->x.t->wait_any(r->x.t->ctx, slots, n);
            if (rc) r->x.err = rc; /* reported by the next progress */
            waited = 1;
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (n == 0 && flags) waited = convoy__plat_wait_notified();
    return waited;
}

static int wait_until(convoy_request r, double deadline, int *done)
{
    unsigned iter = 0;
    for (;;) {
        int rc = convoy__req_progress(r, done);
        if (rc || *done) return rc;
        progress_others(r);
        if (deadline >= 0 && PMPI_Wtime() >= deadline) return 0;
        watchdog(r);
        if (deadline < 0 && block_in_wait(r)) continue;
        convoy__backoff(&iter);
        /* A blocking call stopped at a flag of a step-order schedule (a small node
         * collective), with no other request of the process to progress and no watchdog:
         * test that flag alone until it is reached (or the policy has yielded or slept), not
         * the request's and executor's whole progress each time. */
        if (r->blocking && r->running && deadline < 0 && r->cfg.watchdog <= 0 &&
            !convoy__plat_blocking_waits()) /* (simulation: block_in_wait sleeps instead) */
            while (!atomic_load_explicit(&nlinked, memory_order_relaxed) &&
                   !convoy__exec_poll(&r->x))
                convoy__backoff(&iter);
    }
}

int convoy__req_wait(convoy_request r)
{
    int done;
    return wait_until(r, -1, &done);
}

void convoy__req_free(convoy_request r)
{
    if (!r) return;
    unlink_active(r);
    if (r->running) convoy__exec_free(&r->x);
    if (r->agree_req != MPI_REQUEST_NULL) PMPI_Request_free(&r->agree_req);
    if (r->native_req != MPI_REQUEST_NULL) PMPI_Request_free(&r->native_req);
    if (r->entry) convoy__sched_release(r->cs, r->entry);
    if (r->owns_types) {
        if (r->stype != r->rtype) convoy__type_drop(&r->stype);
        convoy__type_drop(&r->rtype);
    }
    /* Count vectors in the request's own scratch stay with it; others were allocated. */
    const int *lo = r->ivec, *hi = r->ivec ? r->ivec + r->ivec_cap : NULL;
    if (!(r->rcounts >= lo && r->rcounts < hi)) free(r->rcounts);
    if (!(r->displs >= lo && r->displs < hi)) free(r->displs);
    pthread_mutex_destroy(&r->lock);
    pool_give(r);
}

/* --- the public request functions ----------------------------------------------------- */

/* Reports a finished operation: frees a nonblocking request, deactivates a persistent one. */
static int finish(convoy_request *request, int rc)
{
    convoy_request r = *request;
    r->active = 0;
    if (!r->persistent) {
        *request = CONVOY_REQUEST_NULL;
        MPI_Comm comm = r->comm;
        convoy__req_free(r);
        return convoy__error(comm, rc);
    }
    return convoy__error(r->comm, rc);
}

int convoy_start(convoy_request *request)
{
    if (!request || !*request || !(*request)->persistent || (*request)->active)
        return convoy__error(MPI_COMM_WORLD, MPI_ERR_REQUEST);
    return convoy__error((*request)->comm, convoy__req_start(*request));
}

int convoy_test(convoy_request *request, int *flag)
{
    if (!request || !flag) return convoy__error(MPI_COMM_WORLD, MPI_ERR_ARG);
    *flag = 1;
    if (!*request || !(*request)->active) return MPI_SUCCESS;
    int rc = convoy__req_progress(*request, flag);
    if (!*flag) progress_others(*request);
    return *flag ? finish(request, rc) : MPI_SUCCESS;
}

int convoy_wait_timeout(convoy_request *request, double seconds, int *flag)
{
    if (!request || !flag) return convoy__error(MPI_COMM_WORLD, MPI_ERR_ARG);
    *flag = 1;
    if (!*request || !(*request)->active) return MPI_SUCCESS;
    int rc = wait_until(*request, seconds < 0 ? -1 : PMPI_Wtime() + seconds, flag);
    return *flag ? finish(request, rc) : MPI_SUCCESS;
}

int convoy_wait(convoy_request *request)
{
    int flag;
    return convoy_wait_timeout(request, -1, &flag);
}

int convoy_request_free(convoy_request *request)
{
    if (!request) return convoy__error(MPI_COMM_WORLD, MPI_ERR_ARG);
    if (!*request) return MPI_SUCCESS;
    if ((*request)->active) return convoy__error((*request)->comm, MPI_ERR_REQUEST);
    convoy__req_free(*request);
    *request = CONVOY_REQUEST_NULL;
    return MPI_SUCCESS;
}
