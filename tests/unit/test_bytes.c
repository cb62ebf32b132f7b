/*
 * The call in bytes (src/coll/bytes.c): for the algorithms that cut blocks, a rank's datatype
 * must not change what it predicts or what it sends. The same data as ints, as pairs of ints
 * (dense, half the count) and as pairs with a hole (not dense): equal predicted times on
 * every rank; the ints' and the pairs' schedules identical step by step; the holey pairs'
 * messages (peer, tag, bytes, in order) those of the ints, and its data packed once before
 * and unpacked once after. Allgatherv node_segment (direct and streaming) and pipelined,
 * Bcast scatter_allgather, lane and klane_pipeline at every root; two nodes of 2 and nodes
 * of 2, 1 and 3.
 */
#include "unit.h"

#include "coll/coll.h"
#include "select/select.h"

#include <stdlib.h>
#include <string.h>

enum { T_INT, T_PAIR, T_HOLEY, NTYPES };
static const convoy__dtype types[NTYPES] = {
    {.size = 4, .extent = 4, .true_lb = 0, .true_extent = 4},
    {.size = 8, .extent = 8, .true_lb = 0, .true_extent = 8},
    {.size = 8, .extent = 16, .true_lb = 0, .true_extent = 12}, /* int, gap, int, gap */
};
static const int ints_per[NTYPES] = {1, 2, 2};

static int same_region(const convoy__region *x, const convoy__region *y)
{
    return x->buf == y->buf && x->tslot == y->tslot && x->indexed == y->indexed &&
           x->nblk == y->nblk && x->off == y->off && x->count == y->count && x->stride == y->stride;
}

static int same_sched(const convoy__schedule *x, const convoy__schedule *y)
{
    if (x->nsteps != y->nsteps || x->ndeps != y->ndeps || x->tmp_bytes != y->tmp_bytes ||
        x->nchildren != y->nchildren || x->nflags != y->nflags || x->shm_bytes != y->shm_bytes)
        return 0;
    for (int i = 0; i < x->nsteps; i++) {
        const convoy__step *a = &x->steps[i], *b = &y->steps[i];
        if (a->kind != b->kind || a->comm != b->comm || a->peer != b->peer || a->tag != b->tag ||
            a->flag != b->flag || a->value != b->value || a->child != b->child ||
            a->ndeps != b->ndeps || !same_region(&a->src, &b->src) ||
            !same_region(&a->dst, &b->dst))
            return 0;
    }
    for (int i = 0; i < x->ndeps; i++)
        if (x->deps[i] != y->deps[i]) return 0;
    for (int i = 0; i < x->nchildren; i++)
        if (!same_sched(x->children[i], y->children[i])) return 0;
    return 1;
}

/* The bytes of a message step's region (plain regions: the builders here send no others). */
static int64_t msg_bytes(const convoy__step *st)
{
    const convoy__region *r = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
    return r->tslot == CONVOY_T_BYTE ? convoy__reg_elems(r) : -1;
}

/* Whether y's messages are x's in order, and y has `copies` more copy steps than x. */
static int same_messages(const convoy__schedule *x, const convoy__schedule *y, int copies)
{
    int i = 0, j = 0, cx = 0, cy = 0;
    for (;;) {
        while (i < x->nsteps && x->steps[i].kind != CONVOY_STEP_SEND &&
               x->steps[i].kind != CONVOY_STEP_RECV)
            cx += x->steps[i++].kind == CONVOY_STEP_COPY;
        while (j < y->nsteps && y->steps[j].kind != CONVOY_STEP_SEND &&
               y->steps[j].kind != CONVOY_STEP_RECV)
            cy += y->steps[j++].kind == CONVOY_STEP_COPY;
        if (i == x->nsteps || j == y->nsteps) break;
        const convoy__step *a = &x->steps[i++], *b = &y->steps[j++];
        if (a->kind != b->kind || a->peer != b->peer || a->tag != b->tag ||
            msg_bytes(a) != msg_bytes(b) || msg_bytes(a) < 0)
            return 0;
    }
    return i == x->nsteps && j == y->nsteps && cy == cx + copies;
}

typedef struct call {
    convoy__args a;
    int64_t v[64];
} call;

/* Rank `rank`'s call with type t: Allgatherv blocks of c[i] ints in reverse rank order (in
 * place when asked), or a Bcast of n ints from root. */
static void make_call(call *c, const convoy__algo *al, const convoy__topo *topo, int t,
                      const int64_t *ints, int64_t n, int root, int inplace, int64_t shm)
{
    const int p = topo->size, f = ints_per[t];
    memset(c, 0, sizeof *c);
    c->a.coll = al->coll;
    c->a.topo = topo;
    c->a.stype = c->a.rtype = types[t];
    c->a.root = root;
    c->a.shm_bytes = shm;
    convoy__machine_builtin(&c->a.machine);
    if (al->coll == CONVOY_COLL_BCAST) {
        c->a.count = n / f;
        return;
    }
    int64_t off = 0;
    for (int i = p - 1; i >= 0; i--) {
        c->v[i] = ints[i] / f;
        c->v[p + i] = off / f;
        off += ints[i];
    }
    c->a.count = c->v[topo->rank];
    c->a.inplace = inplace;
    c->a.rcounts = c->v;
    c->a.displs = c->v + p;
}

static int build(const convoy__algo *al, const convoy__args *a, convoy__schedule *s)
{
    convoy__sched_init(s);
    const int rc = al->build(a, s);
    return rc ? rc : s->err;
}

static void one(const convoy__algo *al, const convoy__topo *topo, const int64_t *ints, int64_t n,
                int root, int inplace, int64_t shm)
{
    call c[NTYPES];
    convoy__schedule s[NTYPES];
    double t[NTYPES];
    int rc[NTYPES];
    for (int k = 0; k < NTYPES; k++)
        make_call(&c[k], al, topo, k, ints, n, root, inplace, shm);
    if (al->applicable) {
        const int ok = al->applicable(&c[T_INT].a);
        EXPECT(ok == al->applicable(&c[T_PAIR].a) && ok == al->applicable(&c[T_HOLEY].a),
               "%s rank %d/%d segment %lld: applicable to some types only", al->name, topo->rank,
               topo->size, (long long)shm);
        if (!ok) return;
    }
    for (int k = 0; k < NTYPES; k++) {
        t[k] = al->cost(&c[k].a, &c[k].a.machine);
        rc[k] = build(al, &c[k].a, &s[k]);
    }
    const int agv = al->coll != CONVOY_COLL_BCAST, me = topo->rank;
    /* The holey rank packs its contribution once (unless in place, its block staying in the
     * buffer) and unpacks every block it receives once. */
    int copies = 0;
    if (agv) {
        for (int i = 0; i < topo->size; i++)
            copies += ints[i] > 0 && !(inplace && i == me);
        copies += ints[me] > 0;
    } else {
        copies = n > 0;
    }
    EXPECT(t[T_INT] == t[T_PAIR] && t[T_INT] == t[T_HOLEY],
           "%s rank %d/%d n %lld root %d: predicted %g, %g, %g us", al->name, me, topo->size,
           (long long)n, root, 1e6 * t[0], 1e6 * t[1], 1e6 * t[2]);
    EXPECT(!rc[0] && !rc[1] && !rc[2], "%s: build failed (%d %d %d)", al->name, rc[0], rc[1],
           rc[2]);
    if (!rc[0] && !rc[1] && !rc[2]) {
        EXPECT(same_sched(&s[T_INT], &s[T_PAIR]), "%s rank %d/%d n %lld root %d in place %d",
               al->name, me, topo->size, (long long)n, root, inplace);
        EXPECT(same_messages(&s[T_INT], &s[T_HOLEY], copies),
               "%s rank %d/%d n %lld root %d in place %d: the packing rank's messages differ",
               al->name, me, topo->size, (long long)n, root, inplace);
    }
    for (int k = 0; k < NTYPES; k++)
        convoy__sched_free(&s[k]);
}

int main(void)
{
    const struct {
        int p;
        int64_t ids[8];
    } layouts[] = {{4, {0, 0, 1, 1}}, {6, {0, 1, 0, 2, 2, 2}}};
    const char *const algos[][2] = {{"allgatherv", "node_segment"},
                                    {"allgatherv", "pipelined"},
                                    {"bcast", "scatter_allgather"},
                                    {"bcast", "lane"},
                                    {"bcast", "klane_pipeline"}};
    const int64_t ns[] = {2, 10, 4098, 100002};
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        const int p = layouts[l].p;
        for (int me = 0; me < p; me++) {
            convoy__topo topo;
            if (convoy__topo_from_ids(&topo, p, me, layouts[l].ids)) return 1;
            for (size_t g = 0; g < sizeof algos / sizeof algos[0]; g++) {
                const convoy__algo *al =
                    convoy__algo_find(convoy__coll_parse(algos[g][0]), algos[g][1]);
                EXPECT(al != NULL, "%s %s registered", algos[g][0], algos[g][1]);
                if (!al) continue;
                for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                    int64_t ints[8];
                    for (int i = 0; i < p; i++) /* irregular, one empty */
                        ints[i] = i == 1 ? 0 : ns[k] / 2 * (1 + i % 3) / 2 * 2;
                    /* node_segment: a segment that holds the result, one it streams, and
                     * (small counts) one smaller than a pair. */
                    const int64_t shms[] = {1 << 20, 4096, 4};
                    const int nshm = al->applicable == NULL ? 1 : ns[k] <= 10 ? 3 : 2;
                    for (int x = 0; x < nshm; x++) {
                        const int64_t shm = shms[x];
                        if (al->coll == CONVOY_COLL_BCAST)
                            for (int root = 0; root < p; root++)
                                one(al, &topo, ints, ns[k], root, 0, shm);
                        else
                            for (int inplace = 0; inplace < 2; inplace++)
                                one(al, &topo, ints, ns[k], 0, inplace, shm);
                    }
                }
            }
            convoy__topo_free(&topo);
        }
    }
    return unit_done();
}
