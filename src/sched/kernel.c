/*
 * The direct kernel's compiled form: a step-order schedule as a flat list of operations.
 *
 * A repeated blocking Barrier or small Allreduce on a communicator that is one node runs a
 * schedule of notifications, waits, copies and reductions in step order (exec.c). Through
 * the request and the executor that costs several hundred instructions per call around a
 * handful of flag stores and loads; src/api/kernel.c runs the same steps straight from the
 * entry point instead. What it runs is this list, compiled once when the call is kept:
 * each op is one step of the sealed schedule, in the schedule's order, with the bytes of a
 * copy, the count of a reduction and the segment index of a flag worked out. Nothing is
 * reordered, merged or dropped, so the kernel's protocol is the step-order execution of
 * the schedule; convoy__kernel_schedule turns the list back into the schedule it runs (a
 * chain: each op after the one before), which the checker proves (convoy-check --kernel)
 * for every layout of one node, three operations in a row.
 */
#include "sched/sched.h"

#include <string.h>

/* A region the kernel can address: a plain block in the user's buffers or the segment. */
static int plain(const convoy__region *r)
{
    return !convoy__reg_blocks(r) &&
           (r->buf == CONVOY_BUF_SEND || r->buf == CONVOY_BUF_RECV || r->buf == CONVOY_BUF_SHM);
}

int convoy__kernel_compile(const convoy__schedule *s, const int64_t size[CONVOY_NTSLOT],
                           const int contig[CONVOY_NTSLOT], convoy__kernel *k)
{
    memset(k, 0, offsetof(convoy__kernel, op));
    if (s->err || s->nflags <= 0 || s->tmp_bytes > 0 || s->nchildren > 0 ||
        s->nsteps > (int32_t)(sizeof k->op / sizeof k->op[0]) ||
        !(s->sealed_straight ? s->sealed_straight - 1 : convoy__exec_straight(s)))
        return 0;
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        convoy__kop *o = &k->op[i];
        memset(o, 0, sizeof *o);
        o->kind = st->kind;
        switch (st->kind) {
        case CONVOY_STEP_NOTIFY:
        case CONVOY_STEP_WAIT:
            o->peer = st->peer;
            o->word = st->flag + 1;
            o->value = st->value;
            break;
        case CONVOY_STEP_COPY: {
            const int64_t sb = st->src.count * size[st->src.tslot],
                          db = st->dst.count * size[st->dst.tslot];
            if (!plain(&st->src) || !plain(&st->dst) || !contig[st->src.tslot] ||
                !contig[st->dst.tslot] || sb != db)
                return 0;
            o->n = sb;
            break;
        }
        case CONVOY_STEP_REDUCE:
            if (!plain(&st->src) || !plain(&st->dst) || st->src.count > INT32_MAX) return 0;
            o->n = st->src.count;
            break;
        default: return 0;
        }
        o->sbuf = st->src.buf;
        o->dbuf = st->dst.buf;
        o->soff = st->src.off;
        o->doff = st->dst.off;
    }
    k->nops = s->nsteps;
    k->nflags = s->nflags;
    k->shm_alt = s->shm_alt;
    k->shm_bytes = s->shm_bytes;
    return 1;
}

int convoy__kernel_schedule(const convoy__kernel *k, convoy__schedule *s)
{
    s->nflags = k->nflags;
    s->shm_alt = k->shm_alt;
    s->shm_bytes = k->shm_bytes;
    int prev = -1;
    for (int i = 0; i < k->nops && !s->err; i++) {
        const convoy__kop *o = &k->op[i];
        switch (o->kind) {
        case CONVOY_STEP_NOTIFY:
            prev = convoy__add_notify(s, o->word - 1, o->value, CONVOY_DEP(prev));
            break;
        case CONVOY_STEP_WAIT:
            prev = convoy__add_wait(s, o->peer, o->word - 1, o->value, CONVOY_DEP(prev));
            break;
        case CONVOY_STEP_COPY:
            prev = convoy__add_copy(s, convoy__reg(o->sbuf, CONVOY_T_BYTE, o->soff, o->n),
                                    convoy__reg(o->dbuf, CONVOY_T_BYTE, o->doff, o->n),
                                    CONVOY_DEP(prev));
            break;
        case CONVOY_STEP_REDUCE:
            prev = convoy__add_reduce(s, convoy__reg(o->sbuf, CONVOY_T_RECV, o->soff, o->n),
                                      convoy__reg(o->dbuf, CONVOY_T_RECV, o->doff, o->n),
                                      CONVOY_DEP(prev));
            break;
        default: return s->err = CONVOY_ERR_INTERN;
        }
    }
    return s->err;
}
