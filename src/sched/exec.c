/*
 * The executor: one non-blocking state machine for every schedule, real or symbolic.
 *
 * A step becomes ready when its last dependency is done; ready steps start in the order
 * they became ready (steps that are ready together start in schedule order, so two ranks
 * post matching sends and receives in the same order). A message whose channel (kind, peer
 * and tag in its schedule) had an earlier step becomes ready only once that one is posted
 * too: MPI matches a channel's messages in posting order but completes them in any order,
 * so the dependencies alone would let two sends of one tag that wait for different
 * receives leave in either order; this way the k-th message of a channel matches the k-th
 * on the other side whatever the builder's dependencies. Local steps (copy, reduce, notify)
 * finish as they start; sends, receives, flag waits and nested schedules stay in flight
 * until a later test finds them done. Nothing here blocks or polls in a loop: progress()
 * does what can be done now and returns.
 */
#include "sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    STEP_TAG_BITS = 10, /* CONVOY_STEP_TAGS */
    BLOCK_BITS = 8      /* the fixed field of tag blocks, where the tag bound allows */
};

/* Bits of a tag below the bound: the largest k with 2^k - 1 <= tag_ub. */
static int tag_bits(int tag_ub)
{
    /* (Per operation, so no loop: 2^k - 1 <= tag_ub < 2^(k+1) - 1.) */
    const uint64_t v = (uint64_t)(tag_ub < 0 ? 0 : tag_ub) + 1;
    const int bits = 63 - __builtin_clzll(v);
    return bits > 31 ? 31 : bits;
}

int convoy__tag(uint64_t epoch, int block, int step_tag, int shift, int tag_ub)
{
    const int bits = tag_bits(tag_ub);
    int ebits = bits - shift;
    uint64_t e = ebits > 0 ? epoch & (((uint64_t)1 << ebits) - 1) : 0;
    return (int)((e << shift) | ((uint64_t)block << STEP_TAG_BITS) | (uint64_t)step_tag);
}

int convoy__exec_tag_shift(const convoy__schedule *s, int tag_ub)
{
    const int blocks = s->tag_blocks > 1 + s->nnested ? s->tag_blocks : 1 + s->nnested;
    const int bits = tag_bits(tag_ub);
    int field = bits - STEP_TAG_BITS - 2;
    field = field > BLOCK_BITS ? BLOCK_BITS : field < 0 ? 0 : field;
    if (blocks <= (1 << field)) return STEP_TAG_BITS + field;
    int shift = STEP_TAG_BITS;
    while ((1 << (shift - STEP_TAG_BITS)) < blocks)
        shift++;
    return shift;
}

static int tag_of(const convoy__exec *x, const convoy__step *st)
{
    return convoy__tag(x->epoch, x->tag_block, st->tag, x->tag_shift, x->t->tag_ub);
}

static char *ptr(const convoy__exec *x, const convoy__region *r)
{
    return (char *)x->base[r->buf] + r->off;
}

/* The rank, in the operation's communicator, of a step's peer: NODE and LANE numbering is
 * the top topology's at any depth; a mapped child's rank is translated through its map into
 * its parent's numbering, and so on up. */
static int peer_rank(const convoy__exec *x, const convoy__step *st)
{
    const convoy__topo *t = x->topo;
    int comm = st->comm, peer = st->peer;
    for (;;) {
        if (comm == CONVOY_COMM_ALL) comm = x->comm_kind;
        switch (comm) {
        case CONVOY_COMM_NODE: return convoy__topo_rank_at(t, t->node, peer);
        case CONVOY_COMM_LANE: return convoy__topo_lane_peer(t, peer);
        case CONVOY_COMM_MAP:
            peer = peer >= 0 && peer < x->s->nmap ? x->s->map[peer] : -1;
            x = x->parent;
            comm = CONVOY_COMM_ALL;
            if (!x || peer < 0) return -1;
            break;
        default: return peer;
        }
    }
}

int convoy__exec_top_peer(const convoy__schedule *s, const convoy__topo *topo, int i)
{
    /* (A top-level executor: no parent, its steps' ALL is the operation's communicator.) */
    const convoy__exec x = {.s = s, .topo = topo, .comm_kind = CONVOY_COMM_ALL};
    return peer_rank(&x, &s->steps[i]);
}

static void make_ready(convoy__exec *x, int i)
{
    x->ready[x->nready++] = i;
}

static void finish(convoy__exec *x, int i)
{
    x->state[i] = CONVOY_S_DONE;
    x->ndone++;
    for (int k = x->succ_first[i]; k < x->succ_first[i + 1]; k++) {
        int j = x->succ[k];
        if (--x->missing[j] == 0) make_ready(x, j);
    }
}

static int start_child(convoy__exec *x, int i, const convoy__step *st);

/* A local step (reduce, copy, notify, publish, read): done when this returns 0. */
static int run_local(const convoy__exec *x, const convoy__step *st)
{
    const convoy__transport *t = x->t;
    switch (st->kind) {
    case CONVOY_STEP_REDUCE:
        return t->reduce(t->ctx, ptr(x, &st->src), ptr(x, &st->dst), st->src.count, st->src.tslot);
    case CONVOY_STEP_COPY:
        return t->copy(t->ctx, ptr(x, &st->src), st->src.count, st->src.tslot, ptr(x, &st->dst),
                       st->dst.count, st->dst.tslot);
    case CONVOY_STEP_NOTIFY:
        return t->notify(t->ctx, st->flag + 1, CONVOY_FLAG_VALUE(t->shm_seq, st->value));
    case CONVOY_STEP_PUBLISH: return t->publish(t->ctx, ptr(x, &st->src), ptr(x, &st->dst));
    case CONVOY_STEP_READ:
        /* A system call that moves the data at once: a local step like a copy. */
        return t->peer_read(t->ctx, st->peer, ptr(x, &st->src), ptr(x, &st->dst), st->dst.count);
    default: return CONVOY_ERR_INTERN;
    }
}

/* Starts step i. Local steps finish at once; the others join the active list. */
static int start_step(convoy__exec *x, int i)
{
    const convoy__step *st = &x->s->steps[i];
    const convoy__transport *t = x->t;
    int rc = 0;
    x->state[i] = CONVOY_S_ACTIVE;
    switch (st->kind) {
    case CONVOY_STEP_SEND:
        if (convoy__reg_blocks(&st->src))
            rc = t->isendv ? t->isendv(t->ctx, peer_rank(x, st), tag_of(x, st), ptr(x, &st->src),
                                       &st->src, convoy__reg_table(x->s, &st->src), &x->req[i])
                           : CONVOY_ERR_INTERN;
        else
            rc = t->isend(t->ctx, peer_rank(x, st), tag_of(x, st), ptr(x, &st->src), st->src.count,
                          st->src.tslot, &x->req[i]);
        break;
    case CONVOY_STEP_RECV:
        if (convoy__reg_blocks(&st->dst))
            rc = t->irecvv ? t->irecvv(t->ctx, peer_rank(x, st), tag_of(x, st), ptr(x, &st->dst),
                                       &st->dst, convoy__reg_table(x->s, &st->dst), &x->req[i])
                           : CONVOY_ERR_INTERN;
        else
            rc = t->irecv(t->ctx, peer_rank(x, st), tag_of(x, st), ptr(x, &st->dst), st->dst.count,
                          st->dst.tslot, &x->req[i]);
        break;
    case CONVOY_STEP_REDUCE:
    case CONVOY_STEP_COPY:
    case CONVOY_STEP_NOTIFY:
    case CONVOY_STEP_PUBLISH:
    case CONVOY_STEP_READ:
        rc = run_local(x, st);
        if (!rc) finish(x, i);
        return rc;
    case CONVOY_STEP_WAIT: break; /* tested below, with the other steps in flight */
    case CONVOY_STEP_NESTED: rc = start_child(x, i, st); break;
    default: return CONVOY_ERR_INTERN;
    }
    if (rc) return rc;
    x->active[x->nactive++] = i;
    /* Posted: the channel's next message may go. */
    if (st->chan_next > 0 && --x->missing[st->chan_next] == 0) make_ready(x, st->chan_next);
    return 0;
}

/* Tests an active step; *done = 1 when it finished. */
static int test_step(convoy__exec *x, int i, int *done)
{
    const convoy__step *st = &x->s->steps[i];
    const convoy__transport *t = x->t;
    switch (st->kind) {
    case CONVOY_STEP_SEND:
    case CONVOY_STEP_RECV: return t->test(t->ctx, &x->req[i], done);
    case CONVOY_STEP_WAIT:
        return t->flag_test(t->ctx, st->peer, st->flag + 1,
                            CONVOY_FLAG_VALUE(t->shm_seq, st->value), done);
    case CONVOY_STEP_NESTED: return convoy__exec_progress(&x->child[i], done);
    default: return CONVOY_ERR_INTERN;
    }
}

static int exec_init(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                     const convoy__topo *topo, const void *sendbuf, void *recvbuf, uint64_t epoch,
                     char *slice);
static size_t tree_need(const convoy__schedule *s);

static int start_child(convoy__exec *x, int i, const convoy__step *st)
{
    const convoy__schedule *cs = x->s->children[st->child];
    int rc;
    if (x->arena) {
        /* Borrowed memory: the child array and every child's subtree were sized into this
         * executor's slice at start. A NESTED step starts once, so handing out the rest of
         * the slice in start order gives each step (children may run concurrently, and two
         * steps may run the same child schedule) its own part. */
        rc = exec_init(&x->child[i], cs, x->t, x->topo, ptr(x, &st->src), ptr(x, &st->dst),
                       x->epoch, x->arena);
        x->arena += tree_need(cs);
    } else {
        if (!x->child) {
            x->child = calloc((size_t)x->s->nsteps, sizeof *x->child);
            if (!x->child) return CONVOY_ERR_NO_MEM;
        }
        rc = convoy__exec_start(&x->child[i], cs, x->t, x->topo, ptr(x, &st->src), ptr(x, &st->dst),
                                x->epoch);
    }
    if (rc) return rc;
    convoy__exec *c = &x->child[i];
    c->parent = x;
    /* A child shares the parent's segment gate and speaks on its own tag block: blocks are
     * numbered in preorder over the schedule tree, which has the same shape on every rank
     * that talks to it, so both sides of a message agree on the block. */
    c->gate = 0;
    c->top = 0;
    c->comm_kind = st->comm;
    c->tag_shift = x->tag_shift;
    c->tag_block = x->tag_block + 1;
    for (int k = 0; k < st->child; k++)
        c->tag_block += x->s->children[k]->nnested + 1;
    return 0;
}

/* Sizes of one executor's memory: the per-step arrays (block) and, when the schedule
 * nests, the child executors; each rounded to a cache line so that the next part (scratch,
 * a child's slice) starts aligned. */
static size_t block_bytes(const convoy__schedule *s)
{
    const size_t nn = (size_t)s->nsteps + 1, i32 = sizeof(int32_t);
    const size_t sz_req = nn * sizeof(void *), sz_i32 = (4 * nn + 1 + (size_t)s->ndeps) * i32;
    return (sz_req + sz_i32 + nn + 63) / 64 * 64;
}

static size_t round64(size_t n)
{
    return (n + 63) / 64 * 64;
}

static size_t child_bytes(const convoy__schedule *s)
{
    return s->nchildren > 0 ? round64((size_t)s->nsteps * sizeof(convoy__exec)) : 0;
}

/* Borrowed memory for the whole tree under s: its own block, scratch and child array, and
 * a subtree per NESTED step (not per child schedule: steps may share one and run at once). */
static size_t tree_need(const convoy__schedule *s)
{
    size_t need =
        block_bytes(s) + round64((size_t)(s->tmp_bytes > 0 ? s->tmp_bytes : 0)) + child_bytes(s);
    for (int i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == CONVOY_STEP_NESTED)
            need += tree_need(s->children[s->steps[i].child]);
    return need;
}

int convoy__exec_start(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                       const convoy__topo *topo, const void *sendbuf, void *recvbuf, uint64_t epoch)
{
    return exec_init(x, s, t, topo, sendbuf, recvbuf, epoch, NULL);
}

void convoy__sched_seal(convoy__schedule *s)
{
    s->sealed_straight = 0;
    s->sealed_need = tree_need(s);
    s->sealed_straight = 1 + convoy__exec_straight(s);
}

int convoy__exec_start_mem(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                           const convoy__topo *topo, const void *sendbuf, void *recvbuf,
                           uint64_t epoch, convoy__exec_mem *mem)
{
    if (!mem || s->err) return exec_init(x, s, t, topo, sendbuf, recvbuf, epoch, NULL);
    /* The whole tree runs in the caller's memory (a request keeps it from call to call, so
     * repeated operations allocate nothing, nested schedules included). */
    const size_t need = s->sealed_straight ? s->sealed_need : tree_need(s);
    if (mem->cap < need) {
        free(mem->p);
        mem->cap = 0;
        if (!(mem->p = malloc(need))) {
            memset(x, 0, sizeof *x);
            return CONVOY_ERR_NO_MEM;
        }
        mem->cap = need;
    }
    return exec_init(x, s, t, topo, sendbuf, recvbuf, epoch, mem->p);
}

/* slice: tree_need(s) bytes of borrowed memory for x and its children; NULL: allocate. */
static int exec_init(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                     const convoy__topo *topo, const void *sendbuf, void *recvbuf, uint64_t epoch,
                     char *slice)
{
    memset(x, 0, sizeof *x);
    if (s->err) return s->err;
    int n = s->nsteps;
    x->s = s;
    x->t = t;
    x->topo = topo;
    x->comm_kind = CONVOY_COMM_ALL;
    x->epoch = epoch;
    x->top = 1;
    /* The epoch must sit at the same bits in every operation of the communicator, or two
     * operations in flight with different numbers of tag blocks could make equal tags
     * (epoch e with blocks above bit 10 against epoch 4e + b with none). So the blocks get
     * a field of fixed width, the same for every operation under one tag bound: 8 bits
     * where the bound leaves at least 2 epoch bits above them (every MPI library's bound
     * of 2^20 or more), fewer under smaller bounds (MPI's minimum 2^15: 3 block and 2 epoch
     * bits). Only a tree of more blocks than the field holds sizes the field by its own
     * schedule (it then shares fewer epoch bits with operations in flight beside it). */
    x->tag_shift = convoy__exec_tag_shift(s, t->tag_ub);
    x->base[CONVOY_BUF_SEND] = (void *)sendbuf;
    x->base[CONVOY_BUF_RECV] = recvbuf;
    /* An alternating operation's data lives in the half of the data area its parity names
     * (the whole tree: children share the transport). */
    x->base[CONVOY_BUF_SHM] = convoy__shm_op_base(t->shm_base, t->shm_half, t->shm_seq, t->shm_alt);
    x->gate_seq = convoy__gate_seq(t->shm_seq, t->shm_alt, t->shm_prev_alt);
    x->gate = (s->nflags > 0 || s->shm_bytes > 0) && t->shm_seq > 0;
    if ((x->straight = s->sealed_straight ? s->sealed_straight - 1 : convoy__exec_straight(s))) {
        /* Step order: no per-step arrays, only the scratch (in the slice's place for it). */
        if (slice) {
            x->borrowed = 1;
            if (s->tmp_bytes > 0) x->tmp_alloc = slice + block_bytes(s);
        } else if (s->tmp_bytes > 0 && !(x->tmp_alloc = malloc((size_t)s->tmp_bytes))) {
            return CONVOY_ERR_NO_MEM;
        }
        x->base[CONVOY_BUF_TMP] = x->tmp_alloc;
        return 0;
    }
    /* One block for the per-step arrays (a small collective's schedule runs in a few
     * microseconds: allocations would dominate) and the scratch memory after it, a cache
     * line apart; in the caller's slice when it lends one. */
    const size_t nn = (size_t)n + 1;
    const size_t sz_req = nn * sizeof(void *), sz_block = block_bytes(s);
    if (slice) {
        x->block = slice;
        x->borrowed = 1;
        memset(x->block, 0, sz_block);
        slice += sz_block;
        if (s->tmp_bytes > 0) {
            x->tmp_alloc = slice;
            slice += round64((size_t)s->tmp_bytes);
        }
        if (s->nchildren > 0) {
            x->child = (convoy__exec *)slice;
            memset(x->child, 0, (size_t)n * sizeof *x->child); /* exec_free tests child[i].s */
            x->arena = slice + child_bytes(s);
        }
    } else {
        x->block = calloc(1, sz_block);
        if (s->tmp_bytes > 0) x->tmp_alloc = malloc((size_t)s->tmp_bytes);
        if (!x->block || (s->tmp_bytes > 0 && !x->tmp_alloc)) {
            convoy__exec_free(x);
            return CONVOY_ERR_NO_MEM;
        }
    }
    x->req = x->block;
    x->missing = (int32_t *)((char *)x->block + sz_req);
    x->succ_first = x->missing + nn;   /* nn + 1 entries */
    x->ready = x->succ_first + nn + 1; /* nn */
    x->active = x->ready + nn;         /* nn */
    x->succ = x->active + nn;          /* ndeps */
    x->state = (uint8_t *)(x->succ + s->ndeps);
    x->base[CONVOY_BUF_TMP] = x->tmp_alloc;
    /* Successor lists by counting sort over the dependency edges. */
    for (int i = 0; i < n; i++) {
        const convoy__step *st = &s->steps[i];
        x->missing[i] = st->ndeps + st->chan_wait;
        for (int k = 0; k < st->ndeps; k++)
            x->succ_first[s->deps[st->dep_first + k] + 1]++;
    }
    for (int i = 0; i < n; i++)
        x->succ_first[i + 1] += x->succ_first[i];
    int32_t *fill = x->active; /* zeroed, and unused until the schedule runs */
    for (int i = 0; i < n; i++) {
        const convoy__step *st = &s->steps[i];
        for (int k = 0; k < st->ndeps; k++) {
            int d = s->deps[st->dep_first + k];
            x->succ[x->succ_first[d] + fill[d]++] = i;
        }
    }
    for (int i = 0; i < n; i++)
        if (x->missing[i] == 0) make_ready(x, i);
    return 0;
}

/* The segment is free for this operation when every node process released the last one. */
static int test_gate(convoy__exec *x, int *open)
{
    const convoy__topo *t = x->topo;
    *open = 1;
    for (int q = 0; q < t->ppn && *open; q++) {
        /* (Alternating: this process's own previous operation must be done all the same.
         * A peer that went on to the next operation has finished this one, which is what
         * lets a wait be satisfied by the next operation's flag values; with nonblocking
         * requests a process could otherwise run both at once.) */
        const uint64_t need = q == t->node_rank ? x->t->shm_seq : x->gate_seq;
        int rc = x->t->flag_test(x->t->ctx, q, CONVOY_FLAG_RELEASE, need, open);
        if (rc) return rc;
    }
    return 0;
}

int convoy__exec_straight(const convoy__schedule *s)
{
    enum { MAX = 64 };
    if (s->nsteps > MAX || s->nchildren > 0) return 0;
    uint64_t anc[MAX], waits = 0;
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        if (st->kind != CONVOY_STEP_NOTIFY && st->kind != CONVOY_STEP_WAIT &&
            st->kind != CONVOY_STEP_COPY && st->kind != CONVOY_STEP_REDUCE)
            return 0;
        uint64_t a = 0;
        for (int k = 0; k < st->ndeps; k++) {
            const int d = s->deps[st->dep_first + k];
            a |= anc[d] | (uint64_t)1 << d;
        }
        anc[i] = a;
        if (st->kind != CONVOY_STEP_WAIT && (waits & ~a)) return 0;
        if (st->kind == CONVOY_STEP_WAIT) waits |= (uint64_t)1 << i;
    }
    return 1;
}

/* Whether a WAIT step's flag has reached its value in this operation (the one test of a
 * wait, for step order and its flag-only poll alike). */
static int wait_reached(const convoy__exec *x, const convoy__step *st, int *reached)
{
    const convoy__transport *t = x->t;
    return t->flag_test(t->ctx, st->peer, st->flag + 1, CONVOY_FLAG_VALUE(t->shm_seq, st->value),
                        reached);
}

/* Step order (x->straight): local steps at once, a wait until its flag is reached. */
static int progress_straight(convoy__exec *x)
{
    const convoy__schedule *s = x->s;
    for (; x->pc < s->nsteps; x->pc++, x->ndone++) {
        const convoy__step *st = &s->steps[x->pc];
        int reached = 1;
        const int rc =
            st->kind == CONVOY_STEP_WAIT ? wait_reached(x, st, &reached) : run_local(x, st);
        if (rc) return rc;
        if (!reached) return 0;
    }
    return 0;
}

int convoy__exec_poll(const convoy__exec *x)
{
    if (!x->straight || x->gate || x->err || x->pc >= x->s->nsteps) return 1;
    const convoy__step *st = &x->s->steps[x->pc];
    int reached = 1;
    if (st->kind == CONVOY_STEP_WAIT && wait_reached(x, st, &reached))
        return 1; /* (progress reports the error) */
    return reached;
}

int convoy__exec_waits(const convoy__exec *x, void **slots[], int max, int *flags)
{
    int n = 0;
    if (x->gate || x->nready > 0 || (x->straight && x->pc < x->s->nsteps)) *flags = 1;
    for (int k = 0; k < x->nactive; k++) {
        const int i = x->active[k], kind = x->s->steps[i].kind;
        if (kind == CONVOY_STEP_NESTED)
            n += convoy__exec_waits(&x->child[i], slots + n, max - n, flags);
        else if ((kind == CONVOY_STEP_SEND || kind == CONVOY_STEP_RECV) && n < max)
            slots[n++] = &x->req[i];
        else
            *flags = 1; /* a notification, or more messages than fit */
    }
    return n;
}

int convoy__exec_progress(convoy__exec *x, int *done)
{
    const convoy__schedule *s = x->s;
    *done = 0;
    if (x->err) return x->err;
    if (x->gate) {
        int open;
        if ((x->err = test_gate(x, &open))) return x->err;
        if (!open) return 0;
        x->gate = 0;
    }
    if (x->straight && (x->err = progress_straight(x))) return x->err;
    int progressed = !x->straight;
    while (progressed) {
        progressed = 0;
        /* Start in readiness order; finish() may append to the queue as we go. */
        for (int k = 0; k < x->nready; k++) {
            if ((x->err = start_step(x, x->ready[k]))) return x->err;
            progressed = 1;
        }
        x->nready = 0;
        for (int k = 0; k < x->nactive;) {
            int i = x->active[k], fin = 0;
            if ((x->err = test_step(x, i, &fin))) return x->err;
            if (fin) {
                x->active[k] = x->active[--x->nactive];
                finish(x, i);
                progressed = 1;
            } else {
                k++;
            }
        }
    }
    if (x->ndone == s->nsteps) {
        *done = 1;
        /* The top-level executor of a segment-using operation releases the segment. */
        if ((s->nflags > 0 || s->shm_bytes > 0) && x->top && x->t->notify) {
            x->err = x->t->notify(x->t->ctx, CONVOY_FLAG_RELEASE, x->t->shm_seq + 1);
            if (x->err) *done = 0;
        }
    }
    return x->err;
}

void convoy__exec_free(convoy__exec *x)
{
    if (x->s && x->req && !x->straight) {
        for (int i = 0; i < x->s->nsteps; i++) {
            if (x->state[i] != CONVOY_S_ACTIVE) continue;
            const convoy__step *st = &x->s->steps[i];
            if ((st->kind == CONVOY_STEP_SEND || st->kind == CONVOY_STEP_RECV) && x->req[i])
                x->t->cancel(x->t->ctx, &x->req[i]);
        }
    }
    if (x->child) {
        for (int i = 0; i < x->s->nsteps; i++)
            if (x->child[i].s) convoy__exec_free(&x->child[i]);
        if (!x->borrowed) free(x->child);
    }
    if (!x->borrowed) {
        free(x->block);
        free(x->tmp_alloc);
    }
    memset(x, 0, sizeof *x);
}

int convoy__exec_describe(const convoy__exec *x, char *buf, size_t len)
{
    size_t used = 0;
    int w = snprintf(buf, len, "%d of %d steps done", x->ndone, x->s ? x->s->nsteps : 0);
    if (w > 0) used = (size_t)w < len ? (size_t)w : len;
    if (x->gate && used < len) {
        w = snprintf(buf + used, len - used, "; waiting for the node segment to be released");
        if (w > 0) used += (size_t)w < len - used ? (size_t)w : len - used;
    }
    if (x->straight && x->pc < x->s->nsteps && used < len) {
        const convoy__step *st = &x->s->steps[x->pc];
        if (st->kind == CONVOY_STEP_WAIT)
            w = snprintf(buf + used, len - used,
                         "; step %d wait for flag %d >= %u of rank %d (node rank %d)", x->pc,
                         st->flag, st->value,
                         convoy__topo_rank_at(x->topo, x->topo->node, st->peer), st->peer);
        else
            w = snprintf(buf + used, len - used, "; at step %d", x->pc);
        if (w > 0) used += (size_t)w < len - used ? (size_t)w : len - used;
    }
    for (int k = 0; k < x->nactive && used < len; k++) {
        const convoy__step *st = &x->s->steps[x->active[k]];
        if (st->kind == CONVOY_STEP_WAIT)
            w = snprintf(buf + used, len - used,
                         "; step %d wait for flag %d >= %u of rank %d (node rank %d)", x->active[k],
                         st->flag, st->value,
                         convoy__topo_rank_at(x->topo, x->topo->node, st->peer), st->peer);
        else if (st->kind == CONVOY_STEP_NESTED && x->child && x->child[x->active[k]].s) {
            /* What the nested schedule waits for names the peer and tag (a watchdog report
             * of a lane or node phase must point at the late rank too). */
            w = snprintf(buf + used, len - used, "; step %d nested schedule: [", x->active[k]);
            if (w > 0) used += (size_t)w < len - used ? (size_t)w : len - used;
            if (used < len) convoy__exec_describe(&x->child[x->active[k]], buf + used, len - used);
            used += strlen(buf + used);
            w = used < len ? snprintf(buf + used, len - used, "]") : 0;
        } else if (st->kind == CONVOY_STEP_NESTED)
            w = snprintf(buf + used, len - used, "; step %d nested schedule", x->active[k]);
        else
            w = snprintf(buf + used, len - used, "; step %d %s %s rank %d tag %d", x->active[k],
                         convoy__step_kind_name(st->kind),
                         st->kind == CONVOY_STEP_SEND ? "to" : "from", peer_rank(x, st),
                         tag_of(x, st));
        if (w > 0) used += (size_t)w < len - used ? (size_t)w : len - used;
    }
    return 0;
}
