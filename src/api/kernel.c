/*
 * The direct kernel: a repeated blocking call whose schedule runs in step order on the node
 * segment (a Barrier node_flags or small Allreduce node_dissem on a communicator that is one
 * node; Allgather(v) node_segment and Allreduce node_ring there as well) runs from the
 * entry point's kept request (fast.c) straight through its flag protocol: no executor
 * start, readiness or step-order bookkeeping, request state, wait loop or transport call.
 *
 * What it runs is the schedule's step list compiled once, when the call is kept
 * (src/sched/kernel.c: one op per step, in step order, with a copy's bytes, a reduction's
 * count and a flag's segment index resolved); convoy-check --kernel proves that list as a
 * schedule (three operations in a row, every layout of one node). Around it the kernel does
 * what the executor does for a step-order schedule, with the same helpers: the epoch and
 * the segment number in call order (convoy__req_seq, alternation included), the gate
 * (convoy__gate_seq: every node process released the previous segment operation, or, when
 * this and the previous one alternate, the one before; its own previous one in any case),
 * the data half (convoy__shm_op_base), the flag values (CONVOY_FLAG_VALUE), the release
 * (flag 0 = seq + 1) and the seen-release cache (convoy__shm_reached). So a process in the
 * kernel and a peer in the executor (one whose fast path missed) run the same protocol.
 * What the run would otherwise work out per call is resolved when the call is kept: each
 * flag's word in the segment and whether the operation alternates; the tests that usually
 * pass (the gate's seen-release cache, a flag already set) are inline, calls only follow
 * a miss (np 2, Barrier and 1-int Allreduce: 0.147-0.148 -> 0.132-0.137 us and 0.175-0.176
 * -> 0.160-0.165, flagfloor's interquartile means, three interleaved runs).
 *
 * Waiting is the executor's: convoy__shm_reached, then the wait policy (convoy__backoff),
 * and meanwhile the executors of the process's other unfinished requests (MPI's progress
 * promise: a peer may wait for one of them). Errors are the executor's: a reduction's error
 * ends the call without the release (fast.c then drops the kept request).
 *
 * Cost: the flag protocol's stores and loads (np 2 Barrier: one store, one load of the
 * peer's line, the release store) and a few dozen instructions, against the executor's
 * several hundred. Not under SimGrid (its waits sleep on the simulator's semaphore, through
 * the request's wait) nor with CONVOY_KERNEL=0.
 */
#include "api/api.h"
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

static CONVOY_TLS_FAST long runs;

long convoy__kernel_count(void)
{
    return runs;
}

int convoy__kernel_keep(convoy_request r)
{
    r->kern_ok = 0;
#ifdef CONVOY_SIMGRID
    return 0;
#else
    if (!r->cfg.kernel || r->native || !r->entry || !r->cs || !r->cs->shm) return 0;
    /* (Kept with the request's memory: a call that alternates between two kept forms
     * allocates nothing.) */
    if (!r->kern && !(r->kern = malloc(sizeof *r->kern))) return 0;
    convoy__kernel *k = r->kern;
    if (convoy__kernel_compile(&r->entry->sched, r->tr.size, r->tr.contig, k) != 1) return 0;
    /* What the run would work out every time: the flags' words, whether it alternates. */
    const convoy__shm *seg = r->cs->shm;
    for (int i = 0; i < k->nops; i++) {
        convoy__kop *o = &k->op[i];
        if (o->kind == CONVOY_STEP_NOTIFY || o->kind == CONVOY_STEP_WAIT)
            o->fidx = convoy__shm_flag_word(
                seg, o->kind == CONVOY_STEP_WAIT ? o->peer : r->cs->topo.node_rank, o->word);
    }
    k->alt = convoy__req_alternates(r, &r->entry->sched);
    return r->kern_ok = 1;
#endif
}

/* Until node process q's flag `word` reaches v, as the executor's wait does. */
static void wait_flag(const convoy__shm *seg, int q, int word, uint64_t v)
{
    unsigned iter = 0;
    while (!convoy__shm_reached(seg, q, word, v)) {
        convoy__req_progress_others();
        convoy__backoff(&iter);
    }
}

int convoy__kernel_run(convoy_request r)
{
    convoy__cstate *cs = r->cs;
    convoy__shm *seg = cs->shm;
    const convoy__kernel *k = r->kern;
    const int me = cs->topo.node_rank;
    /* Epochs and segment numbers in call order, as a peer whose call takes the full path
     * counts them (a message algorithm's tags depend on the epoch). */
    r->epoch = cs->epoch++;
    convoy__req_seq(r, k->alt);
    const uint64_t seq = r->shm_seq;
    if (seq > 0) {
        const uint64_t gate = convoy__gate_seq(seq, k->alt, r->shm_prev_alt);
        for (int q = 0; q < cs->topo.ppn; q++) {
            const uint64_t v = q == me ? seq : gate;
            if (!convoy__shm_seen(seg, q, v)) wait_flag(seg, q, CONVOY_FLAG_RELEASE, v);
        }
    }
    char *const base[CONVOY_NBUF] = {
        [CONVOY_BUF_SEND] = (char *)r->sendbuf,
        [CONVOY_BUF_RECV] = r->recvbuf,
        [CONVOY_BUF_SHM] = convoy__shm_op_base(seg->data, convoy__shm_half(seg), seq, k->alt)};
    const uint64_t hi = CONVOY_FLAG_VALUE(seq, 0);
    int rc = 0;
    for (int i = 0; i < k->nops && !rc; i++) {
        const convoy__kop *o = &k->op[i];
        switch (o->kind) {
        case CONVOY_STEP_NOTIFY:
            /* (convoy__shm_notify's store; its SimGrid wake-up has no kernel to serve) */
            atomic_store_explicit(&seg->flags[o->fidx], hi | o->value, memory_order_release);
            break;
        case CONVOY_STEP_WAIT:
            /* (a peer that arrived first costs no call) */
            if (!convoy__shm_reached_word(seg, o->peer, o->word, o->fidx, hi | o->value))
                wait_flag(seg, o->peer, o->word, hi | o->value);
            break;
        case CONVOY_STEP_COPY:
            if (o->n) memmove(base[o->dbuf] + o->doff, base[o->sbuf] + o->soff, (size_t)o->n);
            break;
        default: /* CONVOY_STEP_REDUCE: dst = src op dst, as the transport's reduce */
            rc = convoy__local_reduce(r->tr.local, base[o->sbuf] + o->soff, base[o->dbuf] + o->doff,
                                      o->n, r->op_type, r->op);
        }
    }
    if (!rc) {
        atomic_store_explicit(&seg->flags[convoy__shm_flag_word(seg, me, CONVOY_FLAG_RELEASE)],
                              seq + 1, memory_order_release);
        convoy__shm_note_release(seg, me, seq + 1);
    }
    convoy__req_note_outcome(r);
    runs++;
    return rc;
}
