/*
 * The repeated blocking call. A program calls the same collective with the same
 * arguments over and over; the full path (checks, datatype descriptions, the communicator's
 * attribute, the plan memo, a request from the pool, the transport's type queries) costs
 * a few thousand instructions, more than the whole schedule of a small call. So a blocking
 * call keeps its finished request on the communicator (CONVOY_FAST_WAYS per collective:
 * the last calls with different arguments, so that rotating roots or two alternating
 * counts stay kept; a request with more than CONVOY_FAST_SMALL of executor memory is kept
 * alone) and the call's own arguments beside it; the next call with equal
 * arguments — compared before anything else, as the caller passed them — runs the kept
 * schedule again: the transport, the executor's memory and the count vectors are already
 * in place. A call the MPI library serves is kept too (its rerun is the library's call).
 * A kept call whose schedule runs in step order on the node segment (Barrier node_flags,
 * small Allreduce node_dissem on one node) runs its compiled ops in the direct kernel
 * (kernel.c) instead of the executor; one whose schedule is a single round of messages
 * (Barrier dissem with n = P - 1) posts them and waits once (round.c).
 *
 * That equal arguments need no new check or plan rests on: every handle is predefined
 * (named datatypes and predefined ops are never freed, so a handle means the same thing
 * on every call: a derived type's handle may be freed and reused); vectors are compared
 * by content; the buffers' pointer predicates (MPI_IN_PLACE, NULL, send == recv) that the
 * checks and the in-place logic read are part of the key; the settings are unchanged
 * (their generation, convoy__config_gen); the communicator is the same state (no state
 * was freed since this thread found it, convoy__cstate_cached); Barrier's tuned n is the
 * same. Not kept: verbose, CONVOY_CHECK_ARGS (every call agrees), CONVOY_WATCHDOG,
 * deferred requests, a call whose choice is not final (the trial's timed calls, trial.c); Gatherv
 * and Scatterv on more than one process (their blocking call broadcasts the root's counts, which
 * the others' arguments do not show). The machine measurement's overhead probe (machine.c) runs on
 * a communicator of its own, so its calls take this path too: the overhead the cost models add to
 * every Convoy algorithm is that of a repeated call.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

/* The pointer predicates of a call's buffers that checks and planning read. */
static unsigned preds(const convoy__call *c)
{
    return (c->send == MPI_IN_PLACE) | (c->recv == MPI_IN_PLACE) << 1 | (c->send == c->recv) << 2 |
           (c->send == NULL) << 3 | (c->recv == NULL) << 4;
}

static int same(const convoy__fast *f, const convoy__call *c, int size)
{
    const convoy__call *k = &f->key;
    if (k->coll != c->coll || k->count != c->count || k->count2 != c->count2 ||
        k->root != c->root || k->stype != c->stype || k->rtype != c->rtype || k->op != c->op ||
        f->preds != preds(c) || (c->v1 ? size : 0) + (c->v2 ? size : 0) != f->nvec)
        return 0;
    const size_t n = (size_t)size * sizeof(int);
    return (!c->v1 || memcmp(f->vec, c->v1, n) == 0) &&
           (!c->v2 || memcmp(f->vec + (c->v1 ? size : 0), c->v2, n) == 0);
}

static const void *from(unsigned char how, const convoy__call *c, const void *constant)
{
    return how == 1 ? c->send : how == 2 ? c->recv : how == 3 ? constant : NULL;
}

/* The way of a collective's kept calls that holds c, or CONVOY_FAST_WAYS. Every Barrier call
 * is equal to every other (its communicator is its only argument): the first kept one. */
static int way_of(convoy__fast *ways, const convoy__call *c, int size)
{
    const int any = c->coll == CONVOY_COLL_BARRIER;
    int w = 0;
    while (w < CONVOY_FAST_WAYS && !(atomic_load_explicit(&ways[w].req, memory_order_acquire) &&
                                     (any || same(&ways[w], c, size))))
        w++;
    return w;
}

int convoy__fast_try(MPI_Comm comm, const convoy__call *c, int *rc)
{
    convoy__cstate *cs = convoy__cstate_cached(comm);
    if (!cs) return 0;
    const int w = way_of(cs->fast[c->coll], c, cs->topo.size);
    if (w == CONVOY_FAST_WAYS) return 0;
    convoy__fast *f = &cs->fast[c->coll][w];
    convoy_request r = atomic_load_explicit(&f->req, memory_order_acquire);
    if (f->barrier_n != cs->barrier_n || f->gen != convoy__config_gen()) return 0;
    cs->fast_last[c->coll] = (unsigned char)w;
    if (f->direct) {
        /* The MPI library's blocking collective, and nothing else: no start, wait or
         * ownership of the request (whose fields the call reads and nothing changes). Two
         * threads in collectives on one communicator at once is erroneous in MPI, so the
         * buffers written here are this call's when native_start reads them. */
        r->sendbuf = from(f->send_from, c, f->send_const);
        r->recvbuf = (void *)from(f->recv_from, c, f->recv_const);
        *rc = r->native_start(r);
        convoy__last_native(r->native_why);
        convoy__cstate_note_algo(cs, convoy__native_name);
        return 1;
    }
    /* Taken out of its way while it runs: a second thread that calls on this communicator
     * at once (erroneous in MPI) finds the way empty and takes the full path instead of
     * sharing the request. Put back with a plain store where the way is still empty, as it
     * is in any correct program: a compare-and-swap there cost the np 2 Barrier 3 % (0.82 ->
     * 0.79 of the library's, flagfloor, eight interleaved runs; a locked instruction right
     * after the release store), and in the erroneous race the worst left is another
     * thread's kept request leaked, never one request run twice at once. */
    r = atomic_exchange_explicit(&f->req, NULL, memory_order_acquire);
    if (!r) return 0;
    r->sendbuf = from(f->send_from, c, f->send_const);
    r->recvbuf = (void *)from(f->recv_from, c, f->recv_const);
    *rc = r->kern_ok    ? convoy__kernel_run(r)
          : r->round_ok ? convoy__round_run(r)
                        : convoy__req_rerun(r);
    if (!*rc && !atomic_load_explicit(&f->req, memory_order_relaxed))
        atomic_store_explicit(&f->req, r, memory_order_release);
    else
        convoy__req_free(r);
    return 1;
}

int convoy__fast_direct(MPI_Comm comm, int coll, uint64_t *gen, const char **why)
{
    convoy__cstate *cs = convoy__cstate_cached(comm);
    if (!cs || coll < 0 || coll >= CONVOY_NCOLL) return 0;
    if (cs->fast_last[coll] >= CONVOY_FAST_WAYS) return 0;
    convoy__fast *f = &cs->fast[coll][cs->fast_last[coll]];
    convoy_request r = atomic_load_explicit(&f->req, memory_order_acquire);
    if (!r || !f->direct) return 0;
    *gen = f->gen;
    *why = r->native_why;
    return 1;
}

int convoy__cstate_barrier_n(const convoy__cstate *cs)
{
    return cs->barrier_n;
}

/* Where a request's buffer comes from in terms of the call's; -1: nowhere we can tell. */
static int source(const void *p, const convoy__call *c)
{
    if (!p) return 0;
    if (p == c->send) return 1;
    if (p == c->recv) return 2;
    return !c->send && !c->recv ? 3 : -1;
}

static int named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return t == MPI_DATATYPE_NULL ||
           (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
            combiner == MPI_COMBINER_NAMED);
}

int convoy__fast_keep(convoy_request r, const convoy__call *c)
{
    convoy__cstate *cs = r->cs;
    const int sfrom = c ? source(r->sendbuf, c) : -1, rfrom = c ? source(r->recvbuf, c) : -1;
    if (cs && c) cs->fast_last[c->coll] = CONVOY_FAST_WAYS; /* none, unless kept below */
    if (!c || !cs || !r->trial_final || (!r->native && !r->entry) || r->deferred || r->persistent ||
        r->owns_types || r->nagree > 0 || r->seg_pass || r->cfg.verbose || r->cfg.check_args ||
        r->cfg.watchdog > 0 || sfrom < 0 || rfrom < 0 ||
        ((c->coll == CONVOY_COLL_GATHERV || c->coll == CONVOY_COLL_SCATTERV) &&
         cs->topo.size > 1) ||
        convoy__cstate_cached(r->comm) != cs || r->cfg.gen != convoy__config_gen() ||
        !named(r->stype) || !named(r->rtype) || /* (no op: r->op may be zero, no handle) */
        !(!r->op || r->op == MPI_OP_NULL || convoy__op_is_predefined(r->op)))
        return 0;
    const int size = cs->topo.size, nvec = (c->v1 ? size : 0) + (c->v2 ? size : 0);
    /* The way: the one holding this call (kept under older settings), else an empty one,
     * else the next in turn. A large request is kept alone. */
    convoy__fast *ways = cs->fast[c->coll];
    int w = way_of(ways, c, size);
    for (int e = 0; w == CONVOY_FAST_WAYS && e < CONVOY_FAST_WAYS; e++)
        if (!atomic_load(&ways[e].req)) w = e;
    if (w == CONVOY_FAST_WAYS) w = cs->fast_next[c->coll]++ % CONVOY_FAST_WAYS;
    const int big = r->xmem.cap > CONVOY_FAST_SMALL;
    for (int e = 0; e < CONVOY_FAST_WAYS; e++) {
        if (e != w && !big) continue;
        convoy_request old = atomic_exchange_explicit(&ways[e].req, NULL, memory_order_acquire);
        if (old) convoy__req_free(old);
    }
    convoy__fast *f = &ways[w];
    cs->fast_last[c->coll] = (unsigned char)w;
    if (nvec > f->veccap) {
        free(f->vec);
        f->veccap = 0;
        if (!(f->vec = malloc((size_t)nvec * sizeof *f->vec))) return 0;
        f->veccap = nvec;
    }
    if (c->v1) memcpy(f->vec, c->v1, (size_t)size * sizeof *f->vec);
    if (c->v2) memcpy(f->vec + (c->v1 ? size : 0), c->v2, (size_t)size * sizeof *f->vec);
    f->nvec = nvec;
    f->key = *c;
    f->key.send = f->key.recv = NULL;
    f->key.v1 = f->key.v2 = NULL;
    f->preds = preds(c);
    f->gen = r->cfg.gen;
    f->barrier_n = cs->barrier_n;
    f->send_from = (unsigned char)sfrom;
    f->recv_from = (unsigned char)rfrom;
    f->send_const = r->sendbuf;
    f->recv_const = r->recvbuf;
    f->direct = r->native && r->direct && cs->ready;
    if (!r->native && !convoy__kernel_keep(r)) convoy__round_keep(r);
    atomic_store_explicit(&f->req, r, memory_order_release);
    return 1;
}

void convoy__fast_clear(convoy__cstate *cs)
{
    for (int k = 0; k < CONVOY_NCOLL; k++)
        for (int w = 0; w < CONVOY_FAST_WAYS; w++) {
            convoy__fast *f = &cs->fast[k][w];
            convoy_request r = atomic_exchange(&f->req, NULL);
            if (r) convoy__req_free(r);
            free(f->vec);
            f->vec = NULL;
            f->veccap = f->nvec = 0;
        }
}
