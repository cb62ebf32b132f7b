/*
 * The kept message path: a repeated blocking call whose schedule is messages in phases
 * (every step a send or receive of a plain block in the user's buffers, or a local copy
 * between them; steps with equal dependency sets form a phase, and the sets grow from phase
 * to phase: convoy__sched_phases) runs from the entry point's kept request (fast.c) without
 * the executor, as the direct kernel (kernel.c) does for segment schedules. One phase:
 * Barrier dissem with n = P - 1, Allgatherv direct (nothing depends on anything). Several:
 * Barrier dissem with n < P - 1 (round l's sends wait for the receives of rounds 1..l-1;
 * every receive is posted at start), Barrier linear (the root's sends wait for all its
 * receives).
 *
 * What it posts is what the executor posts for that schedule: the executor starts a step
 * when its dependencies are done and starts steps ready together in schedule order. Phase
 * 0 (no dependencies) is posted at once in step order; phase j's steps, all with the same
 * dependency set D_j, are posted in step order once D_j is done, and since D_j-1 is a
 * subset of D_j, waiting phase by phase posts none of them later than the executor could,
 * nor earlier. Peers and tags are those exec.c gives a top-level step
 * (convoy__exec_top_peer, convoy__tag with convoy__exec_tag_shift), in the transport's
 * datatypes; a copy runs where it comes (with the transport's copy, as the executor does);
 * the call is done when every message is. Across phases the executor's posting order
 * follows completion times, so with several phases no two messages share an envelope
 * (kind, peer, tag: convoy__sched_phases refuses the schedule otherwise) and they match
 * alike in any order. So a process here and a peer in the executor (one whose fast path
 * missed) exchange the same messages, and the checker's proof of the schedule covers this
 * path. What differs is the per-call software around the messages: no executor start
 * (successor lists, ready and active queues), no transport call or request state per
 * message, and one wait per phase over its requests instead of one MPI_Test per message per
 * round: with no other unfinished Convoy request in the process, MPI_Waitall (the library's
 * own progress and its idle policy: Open MPI's mpi_yield_when_idle under
 * oversubscription); otherwise MPI_Testall rounds that run the other requests' executors
 * between them (MPI's progress promise) and back off as the executor's wait does.
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
        if (st->kind == CONVOY_STEP_COPY) {
            if (!plain(&st->src) || !plain(&st->dst)) return 0;
            continue;
        }
        const convoy__region *g = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
        if ((st->kind != CONVOY_STEP_SEND && st->kind != CONVOY_STEP_RECV) || !plain(g) ||
            g->count > INT_MAX || convoy__exec_top_peer(s, &r->cs->topo, i) < 0)
            return 0;
    }
    convoy__phase ph[CONVOY_ROUND_MAX];
    int order[CONVOY_ROUND_MAX], wait[CONVOY_ROUND_MAX];
    const int nph = convoy__sched_phases(s, &r->cs->topo, ph, CONVOY_ROUND_MAX, order, wait);
    if (nph < 1) return 0;
    /* (Kept with the request's memory, as the kernel's.) */
    if (!r->round && !(r->round = malloc(sizeof *r->round))) return 0;
    convoy__round *k = r->round;
    k->n = s->nsteps;
    k->nph = nph;
    k->tag_shift = convoy__exec_tag_shift(s, r->tr.t.tag_ub);
    /* Each message's request is numbered in posting order; a wait names that number. */
    int reqno[CONVOY_ROUND_MAX], nreq = 0;
    for (int j = 0, pos = 0; j < nph; j++) {
        k->w_first[j] = ph[j].wfirst;
        k->w_n[j] = ph[j].nwait;
        for (int w = 0; w < ph[j].nwait; w++)
            k->w_req[ph[j].wfirst + w] = reqno[wait[ph[j].wfirst + w]];
        for (int e = 0; e < ph[j].n; e++, pos++) {
            const int i = order[ph[j].first + e];
            const convoy__step *st = &s->steps[i];
            convoy__rmsg *m = &k->m[pos];
            if (st->kind == CONVOY_STEP_COPY) {
                m->send = 2;
                m->src = st->src;
                m->dst = st->dst;
                continue;
            }
            reqno[i] = nreq++;
            const convoy__region *g = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
            m->send = st->kind == CONVOY_STEP_SEND;
            m->buf = g->buf;
            m->off = g->off;
            m->count = (int)g->count;
            m->type = r->tr.type[g->tslot];
            m->peer = convoy__exec_top_peer(s, &r->cs->topo, i);
            m->tag = st->tag;
        }
        k->ph_end[j] = pos;
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

/* Waits for the n requests q[idx[0..n)] (idx NULL: q[0..n)); completed ones become
 * MPI_REQUEST_NULL in q, and on an error the pending ones among them are cancelled and
 * freed. */
static int wait_set(MPI_Request *q, const int *idx, int n)
{
    MPI_Request t[CONVOY_ROUND_MAX];
    MPI_Status st[CONVOY_ROUND_MAX];
    MPI_Request *w = q;
    if (idx) {
        for (int i = 0; i < n; i++)
            t[i] = q[idx[i]];
        w = t;
    }
    int rc;
    if (!convoy__req_others_pending()) {
        rc = settle(PMPI_Waitall(n, w, st), w, st, n);
    } else {
        unsigned iter = 0;
        for (;;) {
            int done = 0;
            if ((rc = PMPI_Testall(n, w, &done, st))) {
                rc = settle(rc, w, st, n);
                break;
            }
            if (done) break;
            convoy__req_progress_others();
            convoy__backoff(&iter);
        }
    }
    if (idx)
        for (int i = 0; i < n; i++)
            q[idx[i]] = t[i];
    return rc;
}

int convoy__round_run(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    const convoy__round *k = r->round;
    const int tag_ub = r->tr.t.tag_ub;
    MPI_Comm comm = r->tr.comm;
    MPI_Request q[CONVOY_ROUND_MAX];
    char *const base[CONVOY_NBUF] = {
        [CONVOY_BUF_SEND] = (char *)r->sendbuf, [CONVOY_BUF_RECV] = r->recvbuf};
    /* The epoch in call order, as the executor's rerun takes it. */
    r->epoch = cs->epoch++;
    int rc = 0, n = 0;
    for (int j = 0, i = 0; j < k->nph && !rc; j++) {
        /* Phase j's steps depend on these (and on the earlier phases' waits). */
        if (k->w_n[j] > 0 && (rc = wait_set(q, k->w_req + k->w_first[j], k->w_n[j]))) break;
        for (; i < k->ph_end[j] && !rc; i++) {
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
    }
    if (!rc) rc = wait_set(q, NULL, n);
    if (rc)
        for (int i = 0; i < n; i++)
            if (q[i] != MPI_REQUEST_NULL) {
                PMPI_Cancel(&q[i]);
                PMPI_Request_free(&q[i]);
            }
    convoy__req_note_outcome(r);
    runs++;
    return rc;
}
