/*
 * The mutation suite: small, typical mistakes made to one rank's (or two partners')
 * schedule after a correct builder ran. Each must make the checker report a failure or a
 * deadlock; a checker that lets one of them pass proves nothing about that kind of bug.
 */
#include "check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the direct kernel's schedule (--kernel) ------------------------------------------ */

/* Contiguity of a type as the MPI transport judges it (transport_mpi.c describe). */
static int type_contig(const convoy__dtype *t)
{
    return t->size == t->extent && t->true_lb == 0 && t->true_extent == t->size;
}

int convoy__check_kernel_mutator(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    (void)ctx;
    const int64_t size[CONVOY_NTSLOT] = {a->stype.size, a->rtype.size, 1};
    const int contig[CONVOY_NTSLOT] = {type_contig(&a->stype), type_contig(&a->rtype), 1};
    convoy__kernel *k = malloc(sizeof *k);
    if (!k) return CONVOY_ERR_NO_MEM;
    int rc = convoy__kernel_compile(s, size, contig, k);
    if (rc == 1) {
        convoy__schedule ks;
        convoy__sched_init(&ks);
        if (convoy__kernel_schedule(k, &ks)) {
            rc = CONVOY_ERR_NO_MEM;
            convoy__sched_free(&ks);
        } else {
            convoy__sched_free(s);
            *s = ks;
        }
    }
    free(k);
    return rc;
}

/* --- schedule surgery ---------------------------------------------------------------- */

static int readd(convoy__schedule *ns, const convoy__schedule *s, const convoy__step *st, int nd,
                 const int *deps)
{
    switch (st->kind) {
    case CONVOY_STEP_SEND:
        return convoy__add_send(ns, st->comm, st->peer, st->tag, convoy__reg_move(ns, s, st->src),
                                nd, deps);
    case CONVOY_STEP_RECV:
        return convoy__add_recv(ns, st->comm, st->peer, st->tag, convoy__reg_move(ns, s, st->dst),
                                nd, deps);
    case CONVOY_STEP_REDUCE: return convoy__add_reduce(ns, st->src, st->dst, nd, deps);
    case CONVOY_STEP_COPY: return convoy__add_copy(ns, st->src, st->dst, nd, deps);
    case CONVOY_STEP_NOTIFY: return convoy__add_notify(ns, st->flag, st->value, nd, deps);
    case CONVOY_STEP_WAIT: return convoy__add_wait(ns, st->peer, st->flag, st->value, nd, deps);
    case CONVOY_STEP_PUBLISH: return convoy__add_publish(ns, st->src, st->dst, nd, deps);
    case CONVOY_STEP_READ: return convoy__add_read(ns, st->peer, st->src, st->dst, nd, deps);
    case CONVOY_STEP_NESTED:
        /* The child moves to the new schedule (the old one forgets it below). */
        return convoy__add_nested_on(ns, st->comm, s->children[st->child], st->src, st->dst, nd,
                                     deps);
    default: return -1;
    }
}

int convoy__check_rewrite(convoy__schedule *s, int drop, int dup, int edge_from, int edge_to)
{
    const int n = s->nsteps, m = n + (dup >= 0);
    if (drop >= n || dup >= n || edge_from >= n || edge_to >= n || (dup >= 0 && dup == drop) ||
        (dup >= 0 && s->steps[dup].kind == CONVOY_STEP_NESTED))
        return CONVOY_ERR_ARG;
    int rc = 0;
    /* Dependency lists of the edited graph; step n is the duplicate. */
    int **deps = calloc((size_t)m, sizeof *deps);
    int *nd = calloc((size_t)m, sizeof *nd);
    int *order = malloc((size_t)m * sizeof *order);
    int *newidx = malloc((size_t)m * sizeof *newidx);
    int *indeg = calloc((size_t)m, sizeof *indeg);
    int *tmp = malloc(((size_t)m + 2) * sizeof *tmp);
    convoy__schedule ns;
    convoy__sched_init(&ns);
    if (!deps || !nd || !order || !newidx || !indeg || !tmp) {
        rc = CONVOY_ERR_NO_MEM;
        goto cleanup;
    }
    for (int i = 0; i < m; i++) {
        const convoy__step *st = &s->steps[i < n ? i : dup];
        int cap = st->ndeps + (drop >= 0 ? s->steps[drop].ndeps : 0) + 2;
        deps[i] = malloc((size_t)cap * sizeof **deps);
        if (!deps[i]) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        for (int k = 0; k < st->ndeps; k++) {
            int dd = s->deps[st->dep_first + k];
            if (dd == drop) {
                /* The dropped step's dependents inherit its dependencies. */
                for (int j = 0; j < s->steps[drop].ndeps; j++)
                    deps[i][nd[i]++] = s->deps[s->steps[drop].dep_first + j];
            } else {
                deps[i][nd[i]++] = dd;
            }
        }
        if (i == n) deps[i][nd[i]++] = dup;
        if (i == edge_to && edge_from >= 0) deps[i][nd[i]++] = edge_from;
    }
    /* Kahn's algorithm, lowest index first, so an unchanged region keeps its order. */
    for (int i = 0; i < m; i++)
        if (i != drop)
            for (int k = 0; k < nd[i]; k++)
                indeg[i]++;
    int cnt = 0;
    for (;;) {
        int next = -1;
        for (int i = 0; i < m && next < 0; i++)
            if (i != drop && indeg[i] == 0) next = i;
        if (next < 0) break;
        indeg[next] = -1;
        order[cnt++] = next;
        for (int i = 0; i < m; i++)
            if (i != drop && indeg[i] > 0)
                for (int k = 0; k < nd[i]; k++)
                    if (deps[i][k] == next) indeg[i]--;
    }
    if (cnt != m - (drop >= 0)) {
        rc = CONVOY_ERR_ARG; /* the new edge closes a cycle inside the schedule */
        goto cleanup;
    }
    for (int k = 0; k < cnt; k++) {
        int i = order[k];
        const convoy__step *st = &s->steps[i < n ? i : dup];
        for (int j = 0; j < nd[i]; j++)
            tmp[j] = newidx[deps[i][j]];
        newidx[i] = readd(&ns, s, st, nd[i], tmp);
        if (newidx[i] < 0) {
            rc = ns.err ? ns.err : CONVOY_ERR_INTERN;
            goto cleanup;
        }
    }
    ns.tmp_bytes = s->tmp_bytes;
    ns.tag_blocks = s->tag_blocks;
    ns.shm_bytes = s->shm_bytes > ns.shm_bytes ? s->shm_bytes : ns.shm_bytes;
    if (s->nflags > ns.nflags) ns.nflags = s->nflags;
    /* The dropped step's child (if any) stays with the old schedule and is freed there;
     * the others now belong to ns. */
    for (int i = 0; i < n; i++)
        if (s->steps[i].kind == CONVOY_STEP_NESTED && i != drop)
            s->children[s->steps[i].child] = NULL;
    {
        int keep = 0;
        for (int i = 0; i < s->nchildren; i++)
            if (s->children[i]) s->children[keep++] = s->children[i];
        s->nchildren = keep;
    }
    convoy__sched_free(s);
    *s = ns;
    convoy__sched_init(&ns);
cleanup:
    if (rc) ns.nchildren = 0; /* on failure the children still belong to s */
    convoy__sched_free(&ns);
    for (int i = 0; deps && i < m; i++)
        free(deps[i]);
    free(deps);
    free(nd);
    free(order);
    free(newidx);
    free(indeg);
    free(tmp);
    return rc;
}

/* --- the mutations ------------------------------------------------------------------- */

static int first_step(const convoy__schedule *s, int kind, int from)
{
    for (int i = from; i < s->nsteps; i++)
        if (s->steps[i].kind == kind) return i;
    return -1;
}

/* Does step j depend on step i (directly or through others)? */
static int depends(const convoy__schedule *s, int j, int i)
{
    if (j == i) return 1;
    if (j < i) return 0;
    const convoy__step *st = &s->steps[j];
    for (int k = 0; k < st->ndeps; k++)
        if (depends(s, s->deps[st->dep_first + k], i)) return 1;
    return 0;
}

static int peer_size(const convoy__topo *t, int comm)
{
    return comm == CONVOY_COMM_NODE ? t->ppn : comm == CONVOY_COMM_LANE ? t->lane_size : t->size;
}

static int mut_drop(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    const convoy__mutate_ctx *m = ctx;
    if (a->topo->rank != m->target) return 0;
    int i = first_step(s, CONVOY_STEP_RECV, 0);
    if (i < 0) return 0;
    int rc = convoy__check_rewrite(s, i, -1, -1, -1);
    return rc ? rc : 1;
}

static int mut_wrongsrc(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    const convoy__mutate_ctx *m = ctx;
    if (a->topo->rank != m->target) return 0;
    int i = first_step(s, CONVOY_STEP_RECV, 0);
    if (i < 0) return 0;
    convoy__step *st = &s->steps[i];
    int n = peer_size(a->topo, st->comm);
    if (n < 2) return 0;
    const convoy__topo *t = a->topo;
    const int self = st->comm == CONVOY_COMM_NODE   ? t->node_rank
                     : st->comm == CONVOY_COMM_LANE ? t->lane_rank
                                                    : t->rank;
    /* Another rank than the right one, and not this rank itself (that would be a
     * different mistake). */
    int p = (st->peer + 1) % n;
    if (p == self) p = (p + 1) % n;
    if (p == st->peer) return 0;
    st->peer = p;
    return 1;
}

static int mut_dupreduce(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    const convoy__mutate_ctx *m = ctx;
    if (a->topo->rank != m->target) return 0;
    int i = first_step(s, CONVOY_STEP_REDUCE, 0);
    for (; i >= 0 && s->steps[i].src.count == 0; i = first_step(s, CONVOY_STEP_REDUCE, i + 1)) {
    }
    if (i < 0) return 0;
    int rc = convoy__check_rewrite(s, -1, i, -1, -1);
    return rc ? rc : 1;
}

static int mut_offbyone(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    const convoy__mutate_ctx *m = ctx;
    if (a->topo->rank != m->target) return 0;
    for (int i = 0; i < s->nsteps; i++) {
        convoy__step *st = &s->steps[i];
        if ((st->kind == CONVOY_STEP_RECV || st->kind == CONVOY_STEP_COPY) &&
            st->dst.buf == CONVOY_BUF_RECV && st->dst.count > 0) {
            st->dst.off += st->dst.tslot == CONVOY_T_BYTE   ? 1
                           : st->dst.tslot == CONVOY_T_SEND ? a->stype.extent
                                                            : a->rtype.extent;
            return 1;
        }
    }
    return 0;
}

/* In rank r's schedule: the first send to `peer` (-1: any peer, in the whole
 * communicator) with an independent receive from the same peer; makes the receive wait
 * for the send. *chosen = the peer. */
static int add_cycle(convoy__schedule *s, int peer, int *chosen)
{
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *snd = &s->steps[i];
        if (snd->kind != CONVOY_STEP_SEND || snd->comm != CONVOY_COMM_ALL) continue;
        if (peer >= 0 && snd->peer != peer) continue;
        for (int j = 0; j < s->nsteps; j++) {
            const convoy__step *rcv = &s->steps[j];
            if (rcv->kind != CONVOY_STEP_RECV || rcv->comm != CONVOY_COMM_ALL ||
                rcv->peer != snd->peer || depends(s, j, i) || depends(s, i, j))
                continue;
            *chosen = snd->peer;
            int rc = convoy__check_rewrite(s, -1, -1, i, j);
            return rc ? rc : 1;
        }
    }
    return 0;
}

static int mut_cycle(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    convoy__mutate_ctx *m = ctx;
    int chosen = -1;
    /* Ranks come in order: the target (rank 0) picks its partner, the partner follows. */
    if (a->topo->rank == m->target) {
        m->partner = -1;
        int rc = add_cycle(s, -1, &chosen);
        if (rc > 0) m->partner = chosen;
        return rc;
    }
    if (a->topo->rank == m->partner) return add_cycle(s, m->target, &chosen);
    return 0;
}

/* Drops, on the target rank, the first wait that a copy out of the segment (into = 0) or
 * into it (into = 1) depends on. */
static int drop_wait_before_shm_copy(const convoy__mutate_ctx *m, const convoy__args *a,
                                     convoy__schedule *s, int into)
{
    if (a->topo->rank != m->target) return 0;
    for (int j = 0; j < s->nsteps; j++) {
        const convoy__step *cp = &s->steps[j];
        if (cp->kind != CONVOY_STEP_COPY || (into ? cp->dst.buf : cp->src.buf) != CONVOY_BUF_SHM)
            continue;
        for (int k = 0; k < cp->ndeps; k++) {
            int i = s->deps[cp->dep_first + k];
            if (s->steps[i].kind != CONVOY_STEP_WAIT) continue;
            int rc = convoy__check_rewrite(s, i, -1, -1, -1);
            return rc ? rc : 1;
        }
    }
    return 0;
}

/* A reader copies out of the segment without waiting for the writer's notification. */
static int mut_shmread(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    return drop_wait_before_shm_copy(ctx, a, s, 0);
}

/* A writer reuses a slot without waiting for the readers to release it. */
static int mut_shmreuse(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    return drop_wait_before_shm_copy(ctx, a, s, 1);
}

/* One message lost: the target's last send and, on the partner it goes to, the receive
 * that matches it. Nothing hangs (both sides are gone); what the message carried is
 * missing: data for the data collectives, causality for a barrier. */
static int mut_dropmsg(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    convoy__mutate_ctx *m = ctx;
    const int r = a->topo->rank;
    if (r == m->target) {
        m->partner = -1;
        for (int i = s->nsteps - 1; i >= 0; i--) {
            const convoy__step *st = &s->steps[i];
            if (st->kind != CONVOY_STEP_SEND || st->comm != CONVOY_COMM_ALL) continue;
            if (st->peer <= r) return 0; /* ranks come in order: the partner must follow */
            m->partner = st->peer;
            m->tag = st->tag;
            int rc = convoy__check_rewrite(s, i, -1, -1, -1);
            return rc ? rc : 1;
        }
        return 0;
    }
    if (r != m->partner) return 0;
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        if (st->kind == CONVOY_STEP_RECV && st->comm == CONVOY_COMM_ALL && st->peer == m->target &&
            st->tag == m->tag) {
            int rc = convoy__check_rewrite(s, i, -1, -1, -1);
            return rc ? rc : 1;
        }
    }
    return 0;
}

/* Cross-memory attach: the target drops the first step of kind `what` that one of its
 * steps of `kind` depends on (READ after WAIT: a reader reads before the owner said the
 * data is in place; PUBLISH after RECV: the owner publishes a buffer that is never
 * filled), or (kind -1) the last wait of the schedule: an owner's wait for a reader's done
 * notification, so that it may return its buffers while that peer still reads them. */
static int drop_before(const convoy__mutate_ctx *m, const convoy__args *a, convoy__schedule *s,
                       int kind, int what)
{
    if (a->topo->rank != m->target) return 0;
    for (int j = kind < 0 ? s->nsteps - 1 : 0; j >= 0 && j < s->nsteps; j += kind < 0 ? -1 : 1) {
        const convoy__step *st = &s->steps[j];
        int i = -1;
        if (kind < 0 && st->kind == CONVOY_STEP_WAIT) i = j;
        for (int k = 0; kind >= 0 && st->kind == kind && k < st->ndeps && i < 0; k++)
            if (s->steps[s->deps[st->dep_first + k]].kind == what) i = s->deps[st->dep_first + k];
        if (i < 0) continue;
        int rc = convoy__check_rewrite(s, i, -1, -1, -1);
        return rc ? rc : 1;
    }
    return 0;
}

static int mut_cmaearly(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    return drop_before(ctx, a, s, CONVOY_STEP_READ, CONVOY_STEP_WAIT);
}

static int mut_cmapublish(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    return drop_before(ctx, a, s, CONVOY_STEP_PUBLISH, CONVOY_STEP_RECV);
}

static int mut_cmarelease(void *ctx, const convoy__args *a, convoy__schedule *s)
{
    return drop_before(ctx, a, s, -1, CONVOY_STEP_WAIT);
}

static void set_algo(convoy__check_case *c, int coll, const char *name)
{
    c->coll = coll;
    c->algo = convoy__check_algo_find(coll, name);
}

static void setup_ring(convoy__check_case *c)
{
    set_algo(c, CONVOY_COLL_ALLGATHERV, "ring");
    c->procs = 6;
    c->ppn = 2;
    c->counts = "regular";
    c->base = 3;
}

static void setup_recdbl(convoy__check_case *c)
{
    set_algo(c, CONVOY_COLL_ALLREDUCE, "recdbl");
    c->procs = 8;
    c->ppn = 2;
    c->count = 5;
}

/* 10 ranks, n = 2: k = 3 rounds, the adapted last round has m = ceil(10 / 9) - 1 = 1
 * message; dropping it loses the window of 9 ranks it stood for. */
static void setup_barrier(convoy__check_case *c)
{
    set_algo(c, CONVOY_COLL_BARRIER, "dissem");
    c->procs = 10;
    c->ppn = 2;
    c->nparams = 1;
    snprintf(c->params[0].name, sizeof c->params[0].name, "CONVOY_DISSEM_N");
    c->params[0].value = 2;
}

static void setup_shm(convoy__check_case *c)
{
    set_algo(c, CONVOY_COLL_ALLGATHERV, "shm_stream");
    c->procs = 4;
    c->ppn = 4;
    c->counts = "regular";
    c->base = 40;
    c->shm_bytes = 512; /* 64-byte chunks: each block streams in 5 chunks through 2 slots */
}

/* Allgatherv node_segment with single copy: 2 nodes of 3, so that data read by peers
 * comes from send buffers and from receives alike. */
static void setup_cma(convoy__check_case *c)
{
    set_algo(c, CONVOY_COLL_ALLGATHERV, "node_segment");
    c->procs = 6;
    c->ppn = 3;
    c->counts = "regular";
    c->base = 4;
    c->cma = 1;
    c->nparams = 1;
    snprintf(c->params[0].name, sizeof c->params[0].name, "CONVOY_ALLGATHERV_CMA_MIN");
    c->params[0].value = 0;
}

const convoy__check_mutation convoy__check_mutations[] = {
    {"drop", "the first receive step of rank 1 is dropped", 1, setup_ring, mut_drop},
    {"wrongsrc", "the first receive of rank 1 names the wrong source", 1, setup_ring, mut_wrongsrc},
    {"dupreduce", "the first reduce of rank 1 is done twice", 1, setup_recdbl, mut_dupreduce},
    {"offbyone", "the first write into rank 1's receive buffer is shifted by one element", 1,
     setup_ring, mut_offbyone},
    {"cycle", "rank 0 and its partner each receive only after their send (send-send cycle)", 0,
     setup_recdbl, mut_cycle},
    {"shmread", "rank 1 copies out of the segment without waiting for the notification", 1,
     setup_shm, mut_shmread},
    {"shmreuse", "rank 1 reuses a segment slot without waiting until it was consumed", 1, setup_shm,
     mut_shmreuse},
    {"dropmsg", "rank 0's last send and the matching receive are dropped (a lost message)", 0,
     setup_barrier, mut_dropmsg},
    {"cmaearly", "rank 1 reads a node peer's buffer without waiting for its notification", 1,
     setup_cma, mut_cmaearly},
    {"cmapublish", "rank 1 publishes the place of a block it never receives", 1, setup_cma,
     mut_cmapublish},
    {"cmarelease", "rank 1 returns without waiting for its last reader's done notification", 1,
     setup_cma, mut_cmarelease},
};
const int convoy__check_nmutations =
    (int)(sizeof convoy__check_mutations / sizeof convoy__check_mutations[0]);

const convoy__check_mutation *convoy__check_mutation_find(const char *name)
{
    for (int i = 0; i < convoy__check_nmutations; i++)
        if (strcmp(convoy__check_mutations[i].name, name) == 0) return &convoy__check_mutations[i];
    return NULL;
}
