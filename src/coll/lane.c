/* The node/lane decomposition machinery (see lane.h). */
#include "coll/lane.h"

#include <stdlib.h>
#include <string.h>

#include "select/select.h"

void convoy__lane_map(const convoy__topo *t, int j, int32_t *map)
{
    for (int l = 0; l < t->nnodes; l++)
        map[l] = convoy__lane_member(t, j, l);
}

int convoy__lane_group_topo(convoy__topo *sub, int m, int me)
{
    int64_t *ids = malloc((size_t)(m > 0 ? m : 1) * sizeof *ids);
    if (!ids) return CONVOY_ERR_NO_MEM;
    for (int i = 0; i < m; i++)
        ids[i] = i;
    int rc = convoy__topo_from_ids(sub, m, me, ids);
    free(ids);
    return rc ? CONVOY_ERR_NO_MEM : 0;
}

int convoy__lane_node_topo_of(convoy__topo *sub, int n, int me)
{
    int64_t *ids = calloc((size_t)(n > 0 ? n : 1), sizeof *ids);
    if (!ids) return CONVOY_ERR_NO_MEM;
    int rc = convoy__topo_from_ids(sub, n, me, ids);
    free(ids);
    return rc ? CONVOY_ERR_NO_MEM : 0;
}

int convoy__lane_node_topo(convoy__topo *sub, const convoy__topo *t)
{
    return convoy__lane_node_topo_of(sub, t->ppn, t->node_rank);
}

int convoy__lane_topos(const convoy__topo *t, convoy__topo *nt, convoy__topo *lt)
{
    if (convoy__lane_node_topo(nt, t)) return CONVOY_ERR_NO_MEM;
    if (convoy__lane_group_topo(lt, t->nnodes, t->node)) {
        convoy__topo_free(nt);
        return CONVOY_ERR_NO_MEM;
    }
    return 0;
}

void convoy__lane_sub_args(const convoy__args *a, int coll, const convoy__topo *sub_topo,
                           int concurrent, convoy__args *sub)
{
    *sub = *a;
    sub->coll = coll;
    sub->topo = sub_topo;
    sub->inplace = 0;
    /* Concurrent children would share the segment's flags: children use messages. */
    sub->shm_bytes = 0;
    sub->machine = convoy__lane_level(&a->machine, concurrent);
}

convoy__machine convoy__lane_level(const convoy__machine *m, int concurrent)
{
    convoy__machine r = convoy__machine_levels(m);
    if (concurrent <= 0) {
        r.alpha = r.alpha_node;
        r.beta = r.beta_node;
        r.gap = r.gap_node;
        r.gap_b = r.gap_node_b;
    } else if (concurrent * r.beta_nic > r.beta) {
        r.beta = concurrent * r.beta_nic;
        /* The node's lanes, shared by the concurrent senders, pace a further message's
         * bytes as they pace a whole one's. */
        if (r.gap > 0 && r.beta > r.gap_b) r.gap_b = r.beta;
    }
    return r;
}

double convoy__lane_child_cost(const convoy__args *sub)
{
    if (sub->topo->size <= 1) return 0;
    const convoy__algo *al = convoy__select(sub, &sub->machine, NULL, 1);
    return al ? convoy__algo_cost(al, sub, &sub->machine) : 0;
}

static const convoy__algo *child_algo(const convoy__args *sub, int flags, int max_tags,
                                      double *cost_out, int *rc_out);

double convoy__lane_cost_equal(const convoy__args *a, int coll, int m, int concurrent,
                               int64_t count)
{
    return convoy__lane_cost_flags(a, coll, m, concurrent, count, 0);
}

double convoy__lane_cost_flags(const convoy__args *a, int coll, int m, int concurrent,
                               int64_t count, int flags)
{
    if (m <= 1) return 0;
    convoy__topo st;
    int64_t *rc = malloc(2 * (size_t)m * sizeof *rc);
    int ok = rc && !(concurrent > 0 ? convoy__lane_group_topo(&st, m, 0)
                                    : convoy__lane_node_topo_of(&st, m, 0));
    double t = 0;
    if (ok) {
        convoy__args sub;
        convoy__lane_sub_args(a, coll, &st, concurrent, &sub);
        /* The largest block sets the time (count / m rounds a count below m down to no
         * data and no cost at all). */
        int64_t b = convoy__coll_base(coll) == CONVOY_COLL_REDUCE_SCATTER
                        ? convoy__lane_block(count, m, 0)
                        : count;
        for (int i = 0; i < m; i++) {
            rc[i] = b;
            rc[m + i] = b * i;
        }
        sub.count = count;
        sub.rcounts = rc;
        sub.displs = rc + m;
        double c = 0;
        if (flags & CONVOY_LANE_LEAST_SCRATCH) {
            /* Zero-copy phases take the algorithm that allocates least (a ring where
             * recursive halving needs scratch): the model costs that one, not the
             * cheapest. */
            sub.inplace = (flags & CONVOY_LANE_IN_PLACE) != 0;
            int err = 0;
            if (!child_algo(&sub, flags, 0, &c, &err) || err) c = convoy__lane_child_cost(&sub);
        } else {
            c = convoy__lane_child_cost(&sub);
        }
        /* A nested schedule runs in an executor of its own, started when its phase begins:
         * it costs its rounds plus that executor's work (the per-call overhead, measured
         * at setup), so a phase is never free and a nested schedule never ties with a
         * flat one of as many rounds. */
        t = c + a->machine.overhead;
        convoy__topo_free(&st);
    }
    free(rc);
    return t;
}

/* Whether the child moves any data (an all-zero child is left out). */
static int moves(const convoy__args *sub)
{
    if (sub->count > 0) return 1;
    if (sub->rcounts)
        for (int i = 0; i < sub->topo->size; i++)
            if (sub->rcounts[i] > 0) return 1;
    return 0;
}

int convoy__lane_placeholder(convoy__schedule *s, int ndeps, const int *deps)
{
    if (s->err) return -1;
    convoy__schedule *c = malloc(sizeof *c);
    if (!c) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    convoy__sched_init(c);
    return convoy__add_nested(s, CONVOY_COMM_NODE, c, ndeps, deps);
}

/* Scratch a schedule tree allocates (each nested executor keeps its own to the end). */
int64_t convoy__lane_tree_tmp(const convoy__schedule *s)
{
    int64_t b = s->tmp_bytes;
    for (int i = 0; i < s->nchildren; i++)
        b += convoy__lane_tree_tmp(s->children[i]);
    return b;
}

/* The child's algorithm and its schedule: the cheapest usable one (every rank's choice is
 * the same: same arguments, same machine), or with CONVOY_LANE_LEAST_SCRATCH the cheapest
 * of those whose schedule allocates the least scratch. */
static int max_tag(const convoy__schedule *c)
{
    int m = -1;
    for (int i = 0; i < c->nsteps; i++)
        if ((c->steps[i].kind == CONVOY_STEP_SEND || c->steps[i].kind == CONVOY_STEP_RECV) &&
            c->steps[i].tag > m)
            m = c->steps[i].tag;
    return m;
}

/* What the members of sub's group see of algorithm al: the most scratch and the largest
 * step tag over all members' schedules (-1 and a nested flag on failure). Choices made by
 * these must be the same on every member, so no member may judge by its own schedule. */
static int group_props(const convoy__algo *al, const convoy__args *sub, int64_t *tmp, int *tag,
                       int *nests)
{
    const int m = sub->topo->size, one = sub->topo->nnodes == 1;
    *tmp = 0, *tag = -1, *nests = 0;
    for (int i = 0; i < m; i++) {
        convoy__topo ti;
        if (one ? convoy__lane_node_topo_of(&ti, m, i) : convoy__lane_group_topo(&ti, m, i))
            return CONVOY_ERR_NO_MEM;
        convoy__args si = *sub;
        si.topo = &ti;
        if (convoy__coll_base(sub->coll) == CONVOY_COLL_ALLGATHERV) si.count = sub->rcounts[i];
        convoy__schedule c;
        convoy__sched_init(&c);
        int rc = al->build(&si, &c);
        if (!rc) {
            const int64_t b = convoy__lane_tree_tmp(&c);
            const int g = max_tag(&c);
            if (b > *tmp) *tmp = b;
            if (g > *tag) *tag = g;
            *nests |= c.nchildren > 0;
        }
        convoy__sched_free(&c);
        convoy__topo_free(&ti);
        if (rc) return rc;
    }
    return 0;
}

/* The child's algorithm: the cheapest usable one (the same on every member: same
 * arguments, same machine), or with CONVOY_LANE_LEAST_SCRATCH the cheapest of those whose
 * schedules allocate the least scratch on any member; with max_tags > 0 only flat
 * algorithms whose step tags stay below it on every member (bundles). The builders and the
 * cost models (convoy__lane_cost_flags) choose through this one function, so a model costs
 * the phase the builder builds. NULL with *rc set on failure, NULL with *rc 0 if none. */
static const convoy__algo *child_algo(const convoy__args *sub, int flags, int max_tags,
                                      double *cost_out, int *rc_out)
{
    const convoy__algo *best = NULL;
    double best_cost = 0;
    int64_t best_tmp = 0;
    const int props = (flags & CONVOY_LANE_LEAST_SCRATCH) || max_tags > 0;
    *rc_out = 0;
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (convoy__select(sub, &sub->machine, al->name, 1) != al) continue; /* not usable */
        const double cost = convoy__algo_cost(al, sub, &sub->machine);
        int64_t tmp = 0;
        int tag = -1, nests = 0;
        if (props) {
            int rc = group_props(al, sub, &tmp, &tag, &nests);
            if (rc) {
                *rc_out = rc;
                return NULL;
            }
            if (max_tags > 0 && (nests || tag >= max_tags)) continue;
        }
        const int better = !best || (flags & CONVOY_LANE_LEAST_SCRATCH
                                         ? tmp < best_tmp || (tmp == best_tmp && cost < best_cost)
                                         : cost < best_cost);
        if (better) best = al, best_cost = cost, best_tmp = tmp;
    }
    if (cost_out) *cost_out = best_cost;
    return best;
}

/* The child's schedule, by child_algo's choice. */
static int build_child(const convoy__args *sub, int flags, int max_tags, convoy__schedule **out)
{
    *out = NULL;
    int rc = 0;
    const convoy__algo *best = child_algo(sub, flags, max_tags, NULL, &rc);
    if (rc) return rc;
    if (!best) return CONVOY_ERR_INTERN;
    convoy__schedule *c = malloc(sizeof *c);
    if (!c) return CONVOY_ERR_NO_MEM;
    convoy__sched_init(c);
    rc = best->build(sub, c);
    if (rc) {
        convoy__sched_free(c);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int convoy__lane_child(convoy__schedule *s, const convoy__args *sub, const int32_t *map,
                       convoy__region send, convoy__region recv, int ndeps, const int *deps)
{
    return convoy__lane_child_flags(s, sub, map, send, recv, 0, ndeps, deps);
}

int convoy__lane_child_flags(convoy__schedule *s, const convoy__args *sub, const int32_t *map,
                             convoy__region send, convoy__region recv, int flags, int ndeps,
                             const int *deps)
{
    if (s->err) return -1;
    if (!moves(sub)) return convoy__lane_placeholder(s, ndeps, deps);
    if (sub->topo->size <= 1) {
        /* A group of one: the collective is the copy of the own data into place (nothing
         * in place), in a child of its own so that the tree keeps its shape. */
        convoy__schedule *c = malloc(sizeof *c);
        if (!c) {
            s->err = CONVOY_ERR_NO_MEM;
            return -1;
        }
        convoy__sched_init(c);
        if (!sub->inplace) {
            const int agv = convoy__coll_base(sub->coll) == CONVOY_COLL_ALLGATHERV;
            const int64_t off = agv ? sub->displs[0] * sub->rtype.extent : 0;
            const int64_t n = agv ? sub->rcounts[0] : sub->count;
            convoy__add_copy(c, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, sub->count),
                             convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, off, n), 0, NULL);
        }
        return convoy__add_nested_on(s, CONVOY_COMM_NODE, c, send, recv, ndeps, deps);
    }
    convoy__schedule *c = NULL;
    int rc = build_child(sub, flags, 0, &c);
    if (!rc && map) {
        c->map = malloc((size_t)sub->topo->size * sizeof *c->map);
        if (c->map) {
            memcpy(c->map, map, (size_t)sub->topo->size * sizeof *c->map);
            c->nmap = sub->topo->size;
        } else {
            rc = CONVOY_ERR_NO_MEM;
        }
    }
    if (rc) {
        if (c) convoy__sched_free(c), free(c);
        s->err = rc;
        return -1;
    }
    return convoy__add_nested_on(s, map ? CONVOY_COMM_MAP : CONVOY_COMM_NODE, c, send, recv, ndeps,
                                 deps);
}

/* Where a child's regions sit in the parent: its send and receive buffers at send's and
 * recv's (buffer, offset), its scratch at tbase in the parent's. */
typedef struct rebasing {
    convoy__region send, recv;
    int64_t tbase;
} rebasing;

static convoy__region rebase(const void *ctx, convoy__region r)
{
    const rebasing *b = ctx;
    const convoy__region *to = r.buf == CONVOY_BUF_SEND   ? &b->send
                               : r.buf == CONVOY_BUF_RECV ? &b->recv
                                                          : NULL;
    if (to) {
        r.buf = to->buf;
        r.off += to->off;
    } else if (r.buf == CONVOY_BUF_TMP) {
        r.off += b->tbase;
    }
    return r;
}

/* Appends the flat schedule x to c: its step tags shifted by tag_off, its send and receive
 * buffers rebased, its scratch after c's. */
static void append(convoy__schedule *c, const convoy__schedule *x, int tag_off, convoy__region send,
                   convoy__region recv)
{
    for (int i = 0; i < x->nsteps; i++) {
        const int k = x->steps[i].kind;
        if (k != CONVOY_STEP_SEND && k != CONVOY_STEP_RECV && k != CONVOY_STEP_REDUCE &&
            k != CONVOY_STEP_COPY) {
            c->err = CONVOY_ERR_INTERN; /* segment or nested steps: not bundled */
            return;
        }
    }
    const rebasing b = {send, recv, (c->tmp_bytes + 63) / 64 * 64};
    convoy__append_steps(c, x, tag_off, 0, rebase, &b);
    if (x->tmp_bytes > 0) c->tmp_bytes = b.tbase + x->tmp_bytes;
}

int convoy__lane_bundle_child(convoy__lane_bundle *b, const convoy__args *sub, int flags,
                              convoy__region send, convoy__region recv)
{
    if (b->err) return b->err;
    if (!moves(sub)) return 0;
    if (!b->c) {
        b->c = malloc(sizeof *b->c);
        if (!b->c) return b->err = CONVOY_ERR_NO_MEM;
        convoy__sched_init(b->c);
        b->tags = 0;
    }
    convoy__schedule *x = NULL;
    if (sub->topo->size <= 1) {
        if (sub->inplace) return 0;
        const int agv = convoy__coll_base(sub->coll) == CONVOY_COLL_ALLGATHERV;
        const int64_t off = agv ? sub->displs[0] * sub->rtype.extent : 0;
        const int64_t n = agv ? sub->rcounts[0] : sub->count;
        const rebasing at = {send, recv, 0};
        convoy__add_copy(b->c,
                         rebase(&at, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, sub->count)),
                         rebase(&at, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, off, n)), 0, NULL);
        return b->err = b->c->err;
    }
    int rc = build_child(sub, flags, b->budget, &x);
    if (rc) return b->err = rc;
    append(b->c, x, b->tags, send, recv);
    b->tags += b->budget;
    b->nchild++;
    convoy__sched_free(x);
    free(x);
    return b->err = b->c->err;
}

int convoy__lane_bundle_add(convoy__schedule *s, convoy__lane_bundle *b, const int32_t *map, int m,
                            int ndeps, const int *deps)
{
    convoy__schedule *c = b->c;
    b->c = NULL;
    b->nchild = 0;
    if (b->err || s->err) {
        if (c) convoy__sched_free(c), free(c);
        if (!s->err) s->err = b->err;
        return -1;
    }
    if (!c) return convoy__lane_placeholder(s, ndeps, deps);
    if (map) {
        c->map = malloc((size_t)m * sizeof *c->map);
        if (!c->map) {
            convoy__sched_free(c);
            free(c);
            s->err = CONVOY_ERR_NO_MEM;
            return -1;
        }
        memcpy(c->map, map, (size_t)m * sizeof *c->map);
        c->nmap = m;
    }
    return convoy__add_nested(s, map ? CONVOY_COMM_MAP : CONVOY_COMM_NODE, c, ndeps, deps);
}

void convoy__lane_deps_add(convoy__lane_deps *d, int step, convoy__schedule *s)
{
    if (step < 0) return;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        int *v = realloc(d->v, (size_t)cap * sizeof *v);
        if (!v) {
            s->err = CONVOY_ERR_NO_MEM;
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = step;
}

void convoy__lane_deps_free(convoy__lane_deps *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

int convoy__lane_agv_group(convoy__schedule *s, const convoy__args *a, int m, int me,
                           const int32_t *map, int concurrent, const int *first, const int *own,
                           int ndeps, const int *deps, convoy__lane_deps *out,
                           convoy__lane_bundle *b)
{
    if (m <= 1) return s->err;
    /* One child if every member's blocks follow each other in the receive buffer. */
    int merged = 1, width = 0;
    for (int i = 0; i < m; i++) {
        if (first[i + 1] - first[i] > width) width = first[i + 1] - first[i];
        for (int k = first[i] + 1; k < first[i + 1] && merged; k++)
            merged = a->displs[own[k]] == a->displs[own[k - 1]] + a->rcounts[own[k - 1]];
    }
    convoy__topo st;
    int64_t *rc = malloc(2 * (size_t)m * sizeof *rc);
    if (!rc ||
        (map ? convoy__lane_group_topo(&st, m, me) : convoy__lane_node_topo_of(&st, m, me))) {
        free(rc);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    int64_t *dp = rc + m;
    convoy__args sub;
    convoy__lane_sub_args(a, CONVOY_COLL_ALLGATHERV, &st, map ? concurrent : 0, &sub);
    sub.rcounts = rc;
    sub.displs = dp;
    const convoy__region recv = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, 0);
    for (int v = 0; v < (merged ? 1 : width) && !s->err; v++) {
        for (int i = 0; i < m; i++) {
            rc[i] = 0;
            dp[i] = 0;
            if (merged) {
                for (int k = first[i]; k < first[i + 1]; k++)
                    rc[i] += a->rcounts[own[k]];
                if (first[i + 1] > first[i]) dp[i] = a->displs[own[first[i]]];
            } else if (first[i] + v < first[i + 1]) {
                rc[i] = a->rcounts[own[first[i] + v]];
                dp[i] = a->displs[own[first[i] + v]];
            }
        }
        /* The child's own block is already in place: it runs in place on the receive
         * buffer (send region = its own block). */
        sub.count = rc[me];
        sub.inplace = 1;
        if (b) {
            if (convoy__lane_bundle_child(b, &sub, CONVOY_LANE_LEAST_SCRATCH, recv, recv))
                s->err = b->err;
            continue;
        }
        int step = convoy__lane_child_flags(s, &sub, map, recv, recv, CONVOY_LANE_LEAST_SCRATCH,
                                            ndeps, deps);
        convoy__lane_deps_add(out, step, s);
    }
    convoy__topo_free(&st);
    free(rc);
    return s->err;
}

/* Binomial tree over the node group, relative ranks v (root 0): v's parent clears v's
 * lowest set bit; its children are v + mask for the masks below that bit. Returns the
 * parent (-1 at the root) and that bit (n rounded up to a power of two at the root). */
static int tree_parent(int v, int n, int *low)
{
    int mask = 1;
    while (mask < n && !(v & mask))
        mask <<= 1;
    *low = mask;
    return v ? v - mask : -1;
}

int convoy__lane_node_bcast(convoy__schedule *s, const convoy__topo *t, int root,
                            const convoy__region *reg, int nreg, int tag, int ndeps,
                            const int *deps, convoy__lane_deps *out)
{
    const int n = t->ppn, v = (t->node_rank - root + n) % n;
    int low, parent = tree_parent(v, n, &low);
    convoy__lane_deps got = {0};
    for (int k = 0; k < nreg && parent >= 0; k++)
        if (reg[k].count > 0)
            convoy__lane_deps_add(&got,
                                  convoy__add_recv(s, CONVOY_COMM_NODE, (parent + root) % n,
                                                   tag + k, reg[k], ndeps, deps),
                                  s);
    const int nd = parent >= 0 ? got.n : ndeps;
    const int *dd = parent >= 0 ? got.v : deps;
    for (int mask = low >> 1; mask >= 1; mask >>= 1) {
        if (v + mask >= n) continue;
        for (int k = 0; k < nreg; k++)
            if (reg[k].count > 0)
                convoy__lane_deps_add(out,
                                      convoy__add_send(s, CONVOY_COMM_NODE, (v + mask + root) % n,
                                                       tag + k, reg[k], nd, dd),
                                      s);
    }
    for (int k = 0; k < got.n; k++)
        convoy__lane_deps_add(out, got.v[k], s);
    convoy__lane_deps_free(&got);
    return s->err;
}

int convoy__lane_node_reduce(convoy__schedule *s, const convoy__topo *t, int root,
                             convoy__region acc, convoy__region tmp, int tag, int ndeps,
                             const int *deps)
{
    const int n = t->ppn, v = (t->node_rank - root + n) % n;
    int low, parent = tree_parent(v, n, &low);
    if (acc.count == 0) return -1;
    /* Children nearest first; one scratch region, so one child's partial at a time (the
     * next receive waits for the reduce that consumed the last). */
    int last = -1;
    for (int mask = 1; mask < low && v + mask < n; mask <<= 1) {
        const int peer = (v + mask + root) % n;
        int r = last >= 0 ? convoy__add_recv(s, CONVOY_COMM_NODE, peer, tag, tmp, 1, &last)
                          : convoy__add_recv(s, CONVOY_COMM_NODE, peer, tag, tmp, ndeps, deps);
        last = convoy__add_reduce(s, tmp, acc, 1, &r);
    }
    if (parent >= 0) {
        const int peer = (parent + root) % n;
        last = last >= 0 ? convoy__add_send(s, CONVOY_COMM_NODE, peer, tag, acc, 1, &last)
                         : convoy__add_send(s, CONVOY_COMM_NODE, peer, tag, acc, ndeps, deps);
    }
    return last;
}

double convoy__lane_rs_then(const convoy__args *a, const convoy__machine *m, int coll)
{
    const int n = a->topo->max_ppn;
    convoy__args b = *a;
    b.machine = *m;
    b.root = 0; /* the lane children's root: the first lane member */
    return convoy__lane_cost_flags(&b, CONVOY_COLL_REDUCE_SCATTER, n, 0, a->count,
                                   CONVOY_LANE_LEAST_SCRATCH |
                                       (a->inplace ? CONVOY_LANE_IN_PLACE : 0)) +
           convoy__lane_cost_equal(&b, coll, a->topo->nnodes, n,
                                   convoy__lane_block(a->count, n, 0));
}
