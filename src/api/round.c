/*
 * The kept one-round message path: a repeated blocking call whose schedule is one round of
 * messages (every step a send or receive of a plain block in the user's buffers, or a local
 * copy between them, none depending on another: Barrier dissem with n = P - 1, Allgatherv
 * direct) runs from
 * the entry point's kept request (fast.c) without the executor, as the direct kernel
 * (kernel.c) does for segment schedules.
 *
 * What it posts is what the executor posts for that schedule: all steps are ready at start,
 * and the executor starts steps ready together in schedule order, so it posts every message
 * at once, in step order, with the peer and tag exec.c gives a top-level step
 * (convoy__exec_top_peer, convoy__tag with convoy__exec_tag_shift), in the transport's
 * datatypes, and runs a copy where it comes (with the transport's copy, as the executor
 * does); the call is done when every message is. So a process here and a peer in the
 * executor (one whose fast path missed) exchange the same messages, and the checker's proof
 * of the schedule covers this path. What differs is the per-call software around the
 * messages: no executor start (successor lists, ready and active queues), no transport
 * call or request state per message, and one wait over all requests instead of one
 * MPI_Test per message per round: with no other unfinished Convoy request in the process,
 * MPI_Waitall (the library's own progress and its idle policy: Open MPI's
 * mpi_yield_when_idle under oversubscription); otherwise MPI_Testall rounds that run the
 * other requests' executors between them (MPI's progress promise) and back off as the
 * executor's wait does.
 *
 * Errors as the executor's: the first error is the call's (an MPI_ERR_IN_STATUS is
 * resolved to its first message's error), messages still pending are cancelled and freed,
 * and fast.c drops the kept request. Not under SimGrid (its waits go through the platform
 * layer) nor with CONVOY_KERNEL=0.
 */
#include "api/api.h"
#include "api/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static CONVOY_TLS_FAST long runs;

long convoy__round_count(void)
{
    return runs;
}

#ifndef CONVOY_SIMGRID
/* A region the path addresses: one block of the user's buffers. */
static int plain(const convoy__region *g)
{
    return !convoy__reg_blocks(g) && (g->buf == CONVOY_BUF_SEND || g->buf == CONVOY_BUF_RECV) &&
           g->count >= 0 && g->tslot < CONVOY_NTSLOT;
}
#endif

int convoy__round_keep(convoy_request r)
{
    r->round_ok = 0;
#ifdef CONVOY_SIMGRID
    return 0;
#else
    if (!r->cfg.kernel || r->native || !r->entry || !r->cs) return 0;
    const convoy__schedule *s = &r->entry->sched;
    if (s->err || s->nflags > 0 || s->shm_bytes > 0 || s->tmp_bytes > 0 || s->nchildren > 0 ||
        s->nsteps < 1 || s->nsteps > CONVOY_ROUND_MAX)
        return 0;
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        if (st->ndeps != 0) return 0;
        if (st->kind == CONVOY_STEP_COPY) {
            if (!plain(&st->src) || !plain(&st->dst)) return 0;
            continue;
        }
        const convoy__region *g = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
        if ((st->kind != CONVOY_STEP_SEND && st->kind != CONVOY_STEP_RECV) || !plain(g) ||
            g->count > INT_MAX || convoy__exec_top_peer(s, &r->cs->topo, i) < 0)
            return 0;
    }
    /* (Kept with the request's memory, as the kernel's.) */
    if (!r->round && !(r->round = malloc(sizeof *r->round))) return 0;
    convoy__round *k = r->round;
    k->n = s->nsteps;
    k->tag_shift = convoy__exec_tag_shift(s, r->tr.t.tag_ub);
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        convoy__rmsg *m = &k->m[i];
        if (st->kind == CONVOY_STEP_COPY) {
            m->send = 2;
            m->src = st->src;
            m->dst = st->dst;
            continue;
        }
        const convoy__region *g = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
        m->send = st->kind == CONVOY_STEP_SEND;
        m->buf = g->buf;
        m->off = g->off;
        m->count = (int)g->count;
        m->type = r->tr.type[g->tslot];
        m->peer = convoy__exec_top_peer(s, &r->cs->topo, i);
        m->tag = st->tag;
    }
    r->round_ok = 1;
    return 1;
#endif
}

/* The call's error from a multiple completion's statuses; cancels and frees what is still
 * pending (as the executor's end does for its active messages). */
static int settle(int rc, MPI_Request *q, MPI_Status *st, int n)
{
    if (rc != MPI_ERR_IN_STATUS) return rc;
    int first = 0;
    for (int i = 0; i < n; i++) {
        const int e = st[i].MPI_ERROR;
        if (e == MPI_ERR_PENDING) {
            if (q[i] != MPI_REQUEST_NULL) {
                PMPI_Cancel(&q[i]);
                PMPI_Request_free(&q[i]);
            }
        } else if (e != MPI_SUCCESS && !first) {
            first = e;
        }
    }
    return first ? first : MPI_ERR_INTERN;
}

int convoy__round_run(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    const convoy__round *k = r->round;
    const int tag_ub = r->tr.t.tag_ub;
    MPI_Comm comm = r->tr.comm;
    MPI_Request q[CONVOY_ROUND_MAX];
    MPI_Status st[CONVOY_ROUND_MAX];
    char *const base[CONVOY_NBUF] = {
        [CONVOY_BUF_SEND] = (char *)r->sendbuf, [CONVOY_BUF_RECV] = r->recvbuf};
    /* The epoch in call order, as the executor's rerun takes it. */
    r->epoch = cs->epoch++;
    int rc = 0, n = 0;
    for (int i = 0; i < k->n && !rc; i++) {
        const convoy__rmsg *m = &k->m[i];
        if (m->send == 2) {
            /* A local copy, by the transport's copy as the executor runs it. */
            const convoy__transport *t = &r->tr.t;
            rc = t->copy(t->ctx, base[m->src.buf] + m->src.off, m->src.count, m->src.tslot,
                         base[m->dst.buf] + m->dst.off, m->dst.count, m->dst.tslot);
            continue;
        }
        const int tag = convoy__tag(r->epoch, 0, m->tag, k->tag_shift, tag_ub);
        char *p = base[m->buf] ? base[m->buf] + m->off : NULL;
        rc = m->send ? PMPI_Isend(p, m->count, m->type, m->peer, tag, comm, &q[n])
                     : PMPI_Irecv(p, m->count, m->type, m->peer, tag, comm, &q[n]);
        if (!rc) n++;
    }
    if (rc) {
        for (int i = 0; i < n; i++) {
            PMPI_Cancel(&q[i]);
            PMPI_Request_free(&q[i]);
        }
    } else if (!convoy__req_others_pending()) {
        rc = settle(PMPI_Waitall(n, q, st), q, st, n);
    } else {
        unsigned iter = 0;
        for (;;) {
            int done = 0;
            if ((rc = PMPI_Testall(n, q, &done, st))) {
                rc = settle(rc, q, st, n);
                break;
            }
            if (done) break;
            convoy__req_progress_others();
            convoy__backoff(&iter);
        }
    }
    convoy__req_note_outcome(r);
    runs++;
    return rc;
}
