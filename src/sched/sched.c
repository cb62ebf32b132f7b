/*
 * Building schedules: growable step and dependency arrays. Allocation failures are sticky
 * in s->err, so a builder can add steps unconditionally and check once at the end.
 */
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

void convoy__sched_init(convoy__schedule *s)
{
    memset(s, 0, sizeof *s);
}

void convoy__sched_free(convoy__schedule *s)
{
    for (int i = 0; i < s->nchildren; i++) {
        convoy__sched_free(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    free(s->map);
    free(s->ix);
    free(s->chan);
    free(s->steps);
    free(s->deps);
    memset(s, 0, sizeof *s);
}

convoy__region convoy__reg(int buf, int tslot, int64_t off, int64_t count)
{
    convoy__region r = {.buf = (uint8_t)buf, .tslot = (uint8_t)tslot, .off = off, .count = count};
    return r;
}

convoy__region convoy__reg_strided(int buf, int tslot, int64_t off, int64_t count, int nblk,
                                   int64_t stride)
{
    convoy__region r = convoy__reg(buf, tslot, off, count);
    if (nblk > 1) r.nblk = nblk, r.stride = stride;
    return r;
}

static int grow(void **p, int32_t *cap, int32_t need, size_t elem);

convoy__region convoy__reg_indexed(convoy__schedule *s, int buf, int tslot, int64_t off, int n,
                                   const int64_t *disp, const int64_t *counts)
{
    convoy__region r = convoy__reg(buf, tslot, off, 0);
    int k = 0;
    for (int i = 0; i < n; i++)
        k += counts[i] > 0;
    if (k == 0 || s->err) return r;
    /* Pairs are int64_t twice: grow counts pairs, in elements of 2 int64_t. */
    if (grow((void **)&s->ix, &s->ixcap, s->nix + k, 2 * sizeof *s->ix)) {
        s->err = CONVOY_ERR_NO_MEM;
        return r;
    }
    r.indexed = 1;
    r.nblk = k;
    r.stride = s->nix;
    for (int i = 0; i < n; i++) {
        if (counts[i] <= 0) continue;
        s->ix[2 * s->nix] = disp[i];
        s->ix[2 * s->nix + 1] = counts[i];
        s->nix++;
        r.count += counts[i];
    }
    return r;
}

convoy__region convoy__reg_blocklist(convoy__schedule *s, int buf, int tslot, int64_t ext, int n,
                                     const int64_t *disp, const int64_t *counts)
{
    const int64_t d = n > 1 ? disp[1] - disp[0] : 0;
    int even = n <= 1 || d >= counts[0] * ext;
    for (int i = 1; i < n && even; i++)
        even = counts[i] == counts[0] && disp[i] - disp[i - 1] == d;
    return even ? convoy__reg_strided(buf, tslot, n > 0 ? disp[0] : 0, n > 0 ? counts[0] : 0, n, d)
                : convoy__reg_indexed(s, buf, tslot, 0, n, disp, counts);
}

convoy__region convoy__reg_move(convoy__schedule *dst, const convoy__schedule *src,
                                convoy__region r)
{
    if (!r.indexed) return r;
    const int64_t *tab = convoy__reg_table(src, &r);
    int64_t *dd = malloc(2 * (size_t)r.nblk * sizeof *dd);
    if (!dd) {
        dst->err = CONVOY_ERR_NO_MEM;
        return convoy__reg(r.buf, r.tslot, r.off, 0);
    }
    for (int k = 0; k < r.nblk; k++)
        dd[k] = tab[2 * k], dd[r.nblk + k] = tab[2 * k + 1];
    const convoy__region m =
        convoy__reg_indexed(dst, r.buf, r.tslot, r.off, r.nblk, dd, dd + r.nblk);
    free(dd);
    return m;
}

static int grow(void **p, int32_t *cap, int32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    int32_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* --- message channels ---------------------------------------------------------------- */

static int is_msg(const convoy__step *st)
{
    return st->kind == CONVOY_STEP_SEND || st->kind == CONVOY_STEP_RECV;
}

static int same_chan(const convoy__step *a, const convoy__step *b)
{
    return a->kind == b->kind && a->comm == b->comm && a->peer == b->peer && a->tag == b->tag;
}

static uint32_t chan_hash(const convoy__step *st)
{
    uint64_t h = ((uint64_t)(uint32_t)st->peer << 32) ^
                 ((uint64_t)st->tag << 4 | (uint64_t)st->comm << 1 | st->kind);
    h *= UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(h >> 32);
}

/* The table slot of st's channel: its last step, or an empty slot (-1). */
static int32_t *chan_slot(const convoy__schedule *s, const convoy__step *st)
{
    uint32_t i = chan_hash(st) & (uint32_t)(s->chancap - 1);
    while (s->chan[i] >= 0 && !same_chan(&s->steps[s->chan[i]], st))
        i = (i + 1) & (uint32_t)(s->chancap - 1);
    return &s->chan[i];
}

/* Makes message step i the last of its channel, linked after the one before it. */
static int chan_link(convoy__schedule *s, int i)
{
    if (2 * (s->nchan + 1) > s->chancap) {
        /* Rehash into a table twice the size (at least 64 slots), at most half full. */
        const int32_t oldcap = s->chancap, cap = oldcap ? 2 * oldcap : 64;
        int32_t *old = s->chan, *t = malloc((size_t)cap * sizeof *t);
        if (!t) return -1;
        for (int32_t k = 0; k < cap; k++)
            t[k] = -1;
        s->chan = t;
        s->chancap = cap;
        for (int32_t k = 0; k < oldcap; k++)
            if (old[k] >= 0) *chan_slot(s, &s->steps[old[k]]) = old[k];
        free(old);
    }
    convoy__step *st = &s->steps[i];
    int32_t *slot = chan_slot(s, st);
    if (*slot >= 0) {
        s->steps[*slot].chan_next = i;
        st->chan_wait = 1;
    } else {
        s->nchan++;
    }
    *slot = i;
    return 0;
}

static int add(convoy__schedule *s, const convoy__step *st, int ndeps, const int *deps)
{
    if (s->err) return -1;
    /* Strided regions are for messages (the transport's vector types), not local steps. */
    if ((st->kind == CONVOY_STEP_COPY || st->kind == CONVOY_STEP_REDUCE) &&
        (convoy__reg_blocks(&st->src) || convoy__reg_blocks(&st->dst))) {
        s->err = CONVOY_ERR_INTERN;
        return -1;
    }
    /* A tag out of range would alias another message's silently: a builder that repeats a
     * tag does so on purpose, its messages posted in channel order (see docs/architecture.md,
     * "Tags"). */
    if (is_msg(st) && (st->tag < 0 || st->tag >= CONVOY_STEP_TAGS)) {
        s->err = CONVOY_ERR_INTERN;
        return -1;
    }
    if (grow((void **)&s->steps, &s->cap, s->nsteps + 1, sizeof *s->steps) ||
        grow((void **)&s->deps, &s->depcap, s->ndeps + ndeps, sizeof *s->deps)) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    convoy__step *n = &s->steps[s->nsteps];
    *n = *st;
    n->dep_first = s->ndeps;
    n->ndeps = 0;
    n->chan_wait = 0;
    n->chan_next = 0;
    for (int i = 0; i < ndeps; i++) {
        /* A dependency on a failed add (-1) or a later step would make the schedule
         * cyclic or meaningless: refuse it rather than run something wrong. */
        if (deps[i] < 0 || deps[i] >= s->nsteps) {
            s->err = CONVOY_ERR_INTERN;
            return -1;
        }
        s->deps[s->ndeps++] = deps[i];
        n->ndeps++;
    }
    if (is_msg(n) && chan_link(s, s->nsteps)) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    return s->nsteps++;
}

int convoy__add_send(convoy__schedule *s, int comm, int peer, int tag, convoy__region src,
                     int ndeps, const int *deps)
{
    convoy__step st = {
        .kind = CONVOY_STEP_SEND, .comm = (uint8_t)comm, .peer = peer, .tag = tag, .src = src};
    return add(s, &st, ndeps, deps);
}

int convoy__add_recv(convoy__schedule *s, int comm, int peer, int tag, convoy__region dst,
                     int ndeps, const int *deps)
{
    convoy__step st = {
        .kind = CONVOY_STEP_RECV, .comm = (uint8_t)comm, .peer = peer, .tag = tag, .dst = dst};
    return add(s, &st, ndeps, deps);
}

int convoy__add_reduce(convoy__schedule *s, convoy__region src, convoy__region dst, int ndeps,
                       const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_REDUCE, .src = src, .dst = dst};
    return add(s, &st, ndeps, deps);
}

int convoy__add_copy(convoy__schedule *s, convoy__region src, convoy__region dst, int ndeps,
                     const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_COPY, .src = src, .dst = dst};
    return add(s, &st, ndeps, deps);
}

int convoy__add_notify(convoy__schedule *s, int flag, uint32_t value, int ndeps, const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_NOTIFY, .flag = flag, .value = value};
    if (flag >= s->nflags) s->nflags = flag + 1;
    return add(s, &st, ndeps, deps);
}

int convoy__add_wait(convoy__schedule *s, int node_peer, int flag, uint32_t value, int ndeps,
                     const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_WAIT, .peer = node_peer, .flag = flag, .value = value};
    if (flag >= s->nflags) s->nflags = flag + 1;
    return add(s, &st, ndeps, deps);
}

int convoy__add_publish(convoy__schedule *s, convoy__region src, convoy__region slot, int ndeps,
                        const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_PUBLISH, .src = src, .dst = slot};
    return add(s, &st, ndeps, deps);
}

int convoy__add_read(convoy__schedule *s, int node_peer, convoy__region slot, convoy__region dst,
                     int ndeps, const int *deps)
{
    convoy__step st = {.kind = CONVOY_STEP_READ, .peer = node_peer, .src = slot, .dst = dst};
    return add(s, &st, ndeps, deps);
}

int convoy__add_step(convoy__schedule *s, const convoy__step *st, int ndeps, const int *deps)
{
    if ((st->kind == CONVOY_STEP_NOTIFY || st->kind == CONVOY_STEP_WAIT) && st->flag >= s->nflags)
        s->nflags = st->flag + 1;
    return add(s, st, ndeps, deps);
}

int convoy__append_steps(convoy__schedule *s, const convoy__schedule *x, int tag_off, int after,
                         convoy__region (*map)(const void *ctx, convoy__region r), const void *ctx)
{
    const int base = s->nsteps;
    int *pre = after > 0 ? malloc((size_t)after * sizeof *pre) : NULL;
    if (after > 0 && !pre) return s->err = CONVOY_ERR_NO_MEM;
    for (int i = 0; i < after; i++)
        pre[i] = i;
    for (int i = 0; i < x->nsteps && !s->err; i++) {
        convoy__step st = x->steps[i];
        int d[64], *dd = st.ndeps <= 64 ? d : malloc((size_t)st.ndeps * sizeof *dd);
        if (!dd) {
            s->err = CONVOY_ERR_NO_MEM;
            break;
        }
        for (int k = 0; k < st.ndeps; k++)
            dd[k] = base + x->deps[st.dep_first + k];
        st.src = map(ctx, convoy__reg_move(s, x, st.src));
        st.dst = map(ctx, convoy__reg_move(s, x, st.dst));
        if (is_msg(&st)) st.tag += tag_off;
        convoy__add_step(s, &st, st.ndeps > 0 ? st.ndeps : after, st.ndeps > 0 ? dd : pre);
        if (dd != d) free(dd);
    }
    free(pre);
    return s->err;
}

int convoy__add_nested(convoy__schedule *s, int comm, convoy__schedule *child, int ndeps,
                       const int *deps)
{
    return convoy__add_nested_on(s, comm, child, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_BYTE, 0, 0),
                                 convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0), ndeps, deps);
}

int convoy__add_nested_on(convoy__schedule *s, int comm, convoy__schedule *child,
                          convoy__region send, convoy__region recv, int ndeps, const int *deps)
{
    if (s->err) return -1;
    if (comm == CONVOY_COMM_MAP && !child->map) {
        s->err = CONVOY_ERR_INTERN;
        return -1;
    }
    convoy__schedule **c = realloc(s->children, (size_t)(s->nchildren + 1) * sizeof *c);
    if (!c) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    s->children = c;
    convoy__step st = {.kind = CONVOY_STEP_NESTED,
                       .comm = (uint8_t)comm,
                       .child = s->nchildren,
                       .src = send,
                       .dst = recv};
    s->children[s->nchildren++] = child;
    s->nnested += child->nnested + 1;
    if (child->err) s->err = child->err;
    /* The parent's scratch, flags and segment needs cover its children's. */
    if (child->nflags > s->nflags) s->nflags = child->nflags;
    if (child->shm_bytes > s->shm_bytes) s->shm_bytes = child->shm_bytes;
    return add(s, &st, ndeps, deps);
}

const char *convoy__step_kind_name(int kind)
{
    static const char *const names[CONVOY_NSTEP_KINDS] = {
        "send", "recv", "reduce", "copy", "notify", "wait", "nested", "publish", "read"};
    return kind >= 0 && kind < CONVOY_NSTEP_KINDS ? names[kind] : "?";
}

int convoy__sched_phases(const convoy__schedule *s, const convoy__topo *topo, convoy__phase *ph,
                         int maxph, int *step, int *wait)
{
    enum { MAXN = 64 };
    const int n = s->nsteps;
    if (n < 1 || n > MAXN || s->nchildren > 0 || maxph < 1) return 0;
    uint64_t mask[MAXN], pm[MAXN];
    int of[MAXN], nph = 0;
    for (int i = 0; i < n; i++) {
        const convoy__step *st = &s->steps[i];
        if (st->kind != CONVOY_STEP_SEND && st->kind != CONVOY_STEP_RECV &&
            st->kind != CONVOY_STEP_COPY)
            return 0;
        mask[i] = 0;
        for (int k = 0; k < st->ndeps; k++) {
            const int d = s->deps[st->dep_first + k];
            if (d < 0 || d >= i) return 0;
            mask[i] |= UINT64_C(1) << d;
        }
        int j = 0;
        while (j < nph && pm[j] != mask[i])
            j++;
        if (j == nph) {
            if (nph == maxph) return 0;
            pm[nph++] = mask[i];
        }
        of[i] = j;
    }
    /* (Step 0 has no dependencies, so phase 0 is the empty set.) The sets must grow. */
    for (int j = 1; j < nph; j++)
        if ((pm[j - 1] & ~pm[j]) != 0) return 0;
    if (nph > 1)
        for (int i = 0; i < n; i++) {
            const convoy__step *a = &s->steps[i];
            if (a->kind == CONVOY_STEP_COPY) continue;
            const int pa = convoy__exec_top_peer(s, topo, i);
            for (int k = i + 1; k < n; k++) {
                const convoy__step *b = &s->steps[k];
                if (b->kind == a->kind && b->tag == a->tag &&
                    convoy__exec_top_peer(s, topo, k) == pa)
                    return 0;
            }
        }
    int ns = 0, nw = 0;
    for (int j = 0; j < nph; j++) {
        ph[j].first = ns;
        for (int i = 0; i < n; i++)
            if (of[i] == j) step[ns++] = i;
        ph[j].n = ns - ph[j].first;
        ph[j].wfirst = nw;
        const uint64_t fresh = j ? pm[j] & ~pm[j - 1] : 0;
        for (int i = 0; i < n; i++)
            if ((fresh >> i & 1) && s->steps[i].kind != CONVOY_STEP_COPY) wait[nw++] = i;
        ph[j].nwait = nw - ph[j].wfirst;
    }
    return nph;
}
