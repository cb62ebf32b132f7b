/*
 * One checker case: the layout's topology, the symbolic data of the collective, the
 * builder's schedules for every rank, a static look at them, then runs of the world
 * (lockstep for rounds, shuffled for completion orders) and the verdict on every rank's
 * result.
 */
#include "check/check_int.h"
#include "coll/lane.h"
#include "util/splitmix.h"
#include "check/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void convoy__check_case_init(convoy__check_case *c)
{
    memset(c, 0, sizeof *c);
    c->coll = CONVOY_COLL_ALLGATHERV;
    c->procs = 1;
    c->ppn = 1;
    c->layout = CONVOY_LAYOUT_REGULAR;
    c->counts = "regular";
    c->base = 4;
    c->count = 1;
    c->seed = 1;
    c->commutative = 1;
    c->modes = CONVOY_CHECK_LOCKSTEP | CONVOY_CHECK_SHUFFLE;
    c->ops = 0; /* automatic: 2 when the schedules use the node segment, else 1 */
    c->shm_bytes = 65536;
    c->cma = 1;
    convoy__machine_builtin(&c->machine);
    /* Distinct lane levels (a measured machine has them), so that builders whose choices
     * depend on them (lane.h) are proven with such choices: a choice one rank makes
     * differently from its peers shows as a deadlock or a wrong result here. */
    c->machine.alpha_node = c->machine.alpha / 2;
    c->machine.beta_node = c->machine.beta / 3;
    c->machine.beta_nic = c->machine.beta / 2;
}

/* --- symbolic cells ------------------------------------------------------------------ */

/* Allgatherv: 8 bytes = (operation, origin + 1, index within the origin's block). */
static uint64_t ag_cell(int op, int origin, int64_t k)
{
    return ((((uint64_t)op << 24) | (uint64_t)(origin + 1)) << 32) | (uint64_t)(uint32_t)k;
}

/* What a receive cell holds, for a report; op is the operation the cell belongs to. */
static void ag_describe(uint64_t v, int P, int op, char *buf, size_t len)
{
    uint64_t origin1 = (v >> 32) & 0xffffff;
    char other[48] = "";
    if ((int)(v >> 56) != op) snprintf(other, sizeof other, " of operation %d", (int)(v >> 56) + 1);
    if (v == 0xa5a5a5a5a5a5a5a5ULL)
        snprintf(buf, len, "nothing (never written)");
    else if (origin1 < 1 || origin1 > (uint64_t)P)
        snprintf(buf, len, "garbage %#llx", (unsigned long long)v);
    else
        snprintf(buf, len, "element %llu of rank %llu's block%s",
                 (unsigned long long)(v & 0xffffffffu), (unsigned long long)(origin1 - 1), other);
}

/* Allreduce: word 0 = (operation + 1) << 40 | element index, then a bitset of the ranks
 * whose contributions the cell holds. */
typedef struct ar_ctx {
    int P, W;          /* ranks, bitset words */
    int64_t cb;        /* cell bytes */
    int order;         /* check non-commutative order */
    int idem;          /* idempotent operation: overlapping contributor sets allowed */
    uint64_t *a, *b;   /* scratch cells (avoid unaligned access) */
    uint64_t *pa, *pb; /* the previous element's contributor sets, in reduce */
} ar_ctx;

static uint64_t ar_elem(int op, int64_t e)
{
    return ((uint64_t)(op + 1) << 40) | (uint64_t)e;
}

static int ar_valid(uint64_t v)
{
    return (v >> 40) >= 1 && (v >> 40) <= 255;
}

/* Lowest and highest set bit, and whether the bits in between are all set. */
static int bits_interval(const uint64_t *s, int W, int *lo, int *hi)
{
    *lo = -1;
    *hi = -1;
    for (int k = 0; k < W; k++) {
        if (!s[k]) continue;
        if (*lo < 0) *lo = k * 64 + __builtin_ctzll(s[k]);
        *hi = k * 64 + 63 - __builtin_clzll(s[k]);
    }
    if (*lo < 0) return 0;
    for (int k = *lo / 64; k <= *hi / 64; k++) {
        int from = k == *lo / 64 ? *lo % 64 : 0, to = k == *hi / 64 ? *hi % 64 : 63;
        uint64_t want = (to == 63 ? ~0ULL : (1ULL << (to + 1)) - 1) & ~((1ULL << from) - 1);
        if (s[k] != want) return 0;
    }
    return 1;
}

/* "0-3,7,9-12", cut short when long. */
static void bits_describe(const uint64_t *s, int P, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < P && used + 24 < len;) {
        if (!(s[i / 64] >> (i % 64) & 1)) {
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < P && (s[(j + 1) / 64] >> ((j + 1) % 64) & 1))
            j++;
        int n = j > i ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", i, j)
                      : snprintf(buf + used, len - used, "%s%d", used ? "," : "", i);
        if (n > 0) used += (size_t)n;
        i = j + 1;
    }
    if (used + 24 >= len && used < len) snprintf(buf + used, len - used, ",...");
    if (!used) snprintf(buf, len, "none");
}

static int ar_reduce(chk_world *w, chk_rank *r, const unsigned char *in, unsigned char *inout,
                     int64_t count)
{
    ar_ctx *c = w->ctx;
    const int W = c->W;
    /* Cells are whole words: work in place when aligned (always, unless a builder used
     * odd byte offsets), through scratch copies otherwise. */
    const int aligned = (uintptr_t)in % 8 == 0 && (uintptr_t)inout % 8 == 0;
    uint64_t *prev_a = c->pa, *prev_b = c->pb;
    for (int64_t e = 0; e < count; e++) {
        const uint64_t *pa;
        uint64_t *pb;
        if (aligned) {
            pa = (const uint64_t *)(const void *)(in + e * c->cb);
            pb = (uint64_t *)(void *)(inout + e * c->cb);
        } else {
            memcpy(c->a, in + e * c->cb, (size_t)c->cb);
            memcpy(c->b, inout + e * c->cb, (size_t)c->cb);
            pa = c->a;
            pb = c->b;
        }
        char st[128], x[256], y[256];
        if (!ar_valid(pa[0]) || !ar_valid(pb[0]) || pa[0] != pb[0]) {
            chk_active_step(r, CONVOY_STEP_REDUCE, st, sizeof st);
            if (!ar_valid(pa[0]) || !ar_valid(pb[0]))
                return chk_fail(w,
                                "rank %d, %s: reduce of element %lld reads data nobody wrote "
                                "(in its %s)",
                                r->rank, st, (long long)e, !ar_valid(pa[0]) ? "input" : "target");
            return chk_fail(w, "rank %d, %s: reduce combines element %llu with element %llu",
                            r->rank, st, (unsigned long long)(pa[0] & 0xffffffffffULL),
                            (unsigned long long)(pb[0] & 0xffffffffffULL));
        }
        const uint64_t elem = pa[0] & 0xffffffffffULL;
        for (int k = 1; k <= W; k++) {
            uint64_t both = pa[k] & pb[k];
            if (!both || c->idem) continue;
            int q = (k - 1) * 64 + __builtin_ctzll(both);
            chk_active_step(r, CONVOY_STEP_REDUCE, st, sizeof st);
            bits_describe(pa + 1, c->P, x, sizeof x);
            bits_describe(pb + 1, c->P, y, sizeof y);
            return chk_fail(w,
                            "rank %d, element %llu, %s: the contribution of rank %d is counted "
                            "twice (reduce of ranks {%s} into ranks {%s})",
                            r->rank, (unsigned long long)elem, st, q, x, y);
        }
        /* The elements of a vector usually carry the same contributors: an order already
         * proven for the previous element's pair of sets holds for the same pair again. */
        int same = 1;
        if (c->order) {
            same = e > 0;
            for (int k = 1; k <= W; k++) {
                if (pa[k] != prev_a[k - 1] || pb[k] != prev_b[k - 1]) same = 0;
                prev_a[k - 1] = pa[k];
                prev_b[k - 1] = pb[k];
            }
        }
        if (!same) {
            int alo, ahi, blo, bhi;
            int ia = bits_interval(pa + 1, W, &alo, &ahi);
            int ib = bits_interval(pb + 1, W, &blo, &bhi);
            if (!ia || !ib || ahi + 1 != blo) {
                chk_active_step(r, CONVOY_STEP_REDUCE, st, sizeof st);
                bits_describe(pa + 1, c->P, x, sizeof x);
                bits_describe(pb + 1, c->P, y, sizeof y);
                return chk_fail(w,
                                "rank %d, element %llu, %s: rank order broken for a "
                                "non-commutative operation: reduce(in = ranks {%s}, inout = "
                                "ranks {%s}) needs two rank intervals, in directly below inout",
                                r->rank, (unsigned long long)elem, st, x, y);
            }
        }
        for (int k = 1; k <= W; k++)
            pb[k] |= pa[k];
        if (!aligned) memcpy(inout + e * c->cb, pb, (size_t)c->cb);
    }
    return 0;
}

/* --- topology ------------------------------------------------------------------------ */

/* Every rank's view of one decomposition: a shallow copy of the full topology with the
 * per-rank fields set as convoy__topo_from_ids would (compared with it for small P), so
 * that large P does not pay P quadratic decompositions. */
static int make_views(int P, const int64_t *ids, convoy__topo *full, convoy__topo *views, char *why,
                      size_t len)
{
    int rc = convoy__topo_from_ids(full, P, 0, ids);
    if (rc) {
        snprintf(why, len, "convoy__topo_from_ids failed with %d", rc);
        return rc;
    }
    for (int i = 0; i < P; i++) {
        convoy__topo *v = &views[i];
        *v = *full;
        v->rank = i;
        v->node = full->node_of[i];
        v->node_rank = full->node_rank_of[i];
        v->ppn = full->node_size[v->node];
        v->lane_size = 0;
        for (int n = 0; n < full->nnodes; n++)
            if (full->node_size[n] > v->node_rank) v->lane_size++;
        v->lane_rank = convoy__topo_lane_rank_of(full, i);
    }
    if (P > 64) return 0;
    for (int i = 0; i < P; i++) {
        convoy__topo t;
        if ((rc = convoy__topo_from_ids(&t, P, i, ids))) {
            snprintf(why, len, "convoy__topo_from_ids(rank %d) failed with %d", i, rc);
            return rc;
        }
        const convoy__topo *v = &views[i];
        int same = t.size == v->size && t.rank == v->rank && t.nnodes == v->nnodes &&
                   t.flags == v->flags && t.max_ppn == v->max_ppn && t.node == v->node &&
                   t.node_rank == v->node_rank && t.ppn == v->ppn && t.lane_size == v->lane_size &&
                   t.lane_rank == v->lane_rank &&
                   !memcmp(t.node_of, v->node_of, (size_t)P * sizeof *t.node_of) &&
                   !memcmp(t.node_rank_of, v->node_rank_of, (size_t)P * sizeof *t.node_rank_of) &&
                   !memcmp(t.members, v->members, (size_t)P * sizeof *t.members);
        convoy__topo_free(&t);
        if (!same) {
            snprintf(why, len,
                     "convoy__topo_from_ids gives rank %d a view that differs from "
                     "rank 0's decomposition",
                     i);
            return CONVOY_ERR_INTERN;
        }
    }
    return 0;
}

/* --- static checks of a schedule ----------------------------------------------------- */

typedef struct vctx {
    const convoy__topo *t;
    int inplace;
    int64_t sbytes, rbytes, shm_bytes;
    const int64_t *tsb; /* bytes per element of each type slot */
} vctx;

static const char *buf_name(int b)
{
    static const char *const n[CONVOY_NBUF] = {"send buffer", "receive buffer", "scratch memory",
                                               "node segment"};
    return b >= 0 && b < CONVOY_NBUF ? n[b] : "?";
}

static int64_t buf_size(const vctx *v, const convoy__schedule *s, int buf)
{
    return buf == CONVOY_BUF_SEND   ? v->sbytes
           : buf == CONVOY_BUF_RECV ? v->rbytes
           : buf == CONVOY_BUF_TMP  ? s->tmp_bytes
                                    : v->shm_bytes;
}

/* An indexed region (an hindexed type): its pairs inside the schedule's table, every block
 * inside the buffer, their elements adding up to the region's, none in the segment. */
static int check_indexed(const vctx *v, const convoy__schedule *s, const convoy__region *g,
                         char *why, size_t len)
{
    if (g->nblk < 1 || g->stride < 0 || g->stride + g->nblk > s->nix) {
        snprintf(why, len, "indexed region of %d blocks from pair %lld of a table of %d", g->nblk,
                 (long long)g->stride, s->nix);
        return 1;
    }
    if (g->buf == CONVOY_BUF_SHM || (g->buf == CONVOY_BUF_SEND && v->inplace)) {
        snprintf(why, len, "indexed region in the %s",
                 g->buf == CONVOY_BUF_SHM ? "segment" : "send buffer although it is MPI_IN_PLACE");
        return 1;
    }
    const int64_t *tab = convoy__reg_table(s, g), size = buf_size(v, s, g->buf);
    int64_t sum = 0;
    for (int k = 0; k < g->nblk; k++) {
        const int64_t lo = g->off + tab[2 * k], n = tab[2 * k + 1] * v->tsb[g->tslot];
        sum += tab[2 * k + 1];
        if (tab[2 * k + 1] < 0 || lo < 0 || lo > size || n > size - lo) {
            snprintf(why, len,
                     "indexed region's block %d [%lld, %lld) outside the %s of %lld bytes", k,
                     (long long)lo, (long long)(lo + n), buf_name(g->buf), (long long)size);
            return 1;
        }
    }
    if (sum != g->count) {
        snprintf(why, len, "indexed region of %lld elements whose blocks hold %lld",
                 (long long)g->count, (long long)sum);
        return 1;
    }
    return 0;
}

static int cmp_pair(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* A receive's blocks must not overlap (MPI: a receive type's entries are distinct), a
 * send's may (a Scatterv's overlapping blocks). */
static int indexed_overlap(const vctx *v, const convoy__schedule *s, const convoy__region *g,
                           char *why, size_t len)
{
    if (!g->indexed || g->count == 0) return 0;
    const int64_t *tab = convoy__reg_table(s, g);
    int64_t *p = malloc(2 * (size_t)g->nblk * sizeof *p);
    if (!p) {
        snprintf(why, len, "checker out of memory");
        return 1;
    }
    memcpy(p, tab, 2 * (size_t)g->nblk * sizeof *p);
    qsort(p, (size_t)g->nblk, 2 * sizeof *p, cmp_pair);
    int bad = -1;
    for (int k = 1; k < g->nblk && bad < 0; k++)
        if (p[2 * (k - 1)] + p[2 * (k - 1) + 1] * v->tsb[g->tslot] > p[2 * k]) bad = k;
    if (bad >= 0)
        snprintf(why, len, "indexed receive whose blocks at %lld and %lld overlap",
                 (long long)(g->off + p[2 * (bad - 1)]), (long long)(g->off + p[2 * bad]));
    free(p);
    return bad >= 0;
}

static int check_region(const vctx *v, const convoy__schedule *s, const convoy__region *g,
                        char *why, size_t len)
{
    if (g->buf >= CONVOY_NBUF || g->tslot >= CONVOY_NTSLOT || g->count < 0) {
        snprintf(why, len, "bad region (buffer %d, type slot %d, count %lld)", g->buf, g->tslot,
                 (long long)g->count);
        return 1;
    }
    if (g->count == 0) return 0;
    if (g->indexed) return check_indexed(v, s, g, why, len);
    /* A strided region spans from its first block's start to its last block's end. */
    int64_t bytes = g->count * v->tsb[g->tslot] + (g->nblk > 1 ? (g->nblk - 1) * g->stride : 0);
    int64_t size = buf_size(v, s, g->buf);
    if (g->nblk > 1 && (g->stride < g->count * v->tsb[g->tslot] || g->buf == CONVOY_BUF_SHM)) {
        snprintf(why, len,
                 "strided region of %d blocks %lld bytes apart (overlapping or in the "
                 "segment)",
                 g->nblk, (long long)g->stride);
        return 1;
    }
    if (g->buf == CONVOY_BUF_SEND && v->inplace) {
        snprintf(why, len, "uses the send buffer although it is MPI_IN_PLACE");
        return 1;
    }
    if (g->off < 0 || g->off > size || bytes > size - g->off) {
        snprintf(why, len, "region [%lld, %lld) outside the %s of %lld bytes", (long long)g->off,
                 (long long)(g->off + bytes), buf_name(g->buf), (long long)size);
        return 1;
    }
    return 0;
}

/* Size of communicator comm as seen from schedule s (a mapped child: its group). */
static int comm_size(const convoy__topo *t, const convoy__schedule *s, int comm)
{
    return comm == CONVOY_COMM_NODE   ? t->ppn
           : comm == CONVOY_COMM_LANE ? t->lane_size
           : comm == CONVOY_COMM_MAP  ? s->nmap
                                      : t->size;
}

/* Checks what can be known without running: kinds, peers, tags, flags, regions in
 * bounds. comm: the communicator this schedule's ALL means. */
static int validate(const vctx *v, const convoy__schedule *s, int comm, const char *where,
                    char *why, size_t len)
{
    char w2[256];
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        char r[512] = "";
        const int pc = st->comm == CONVOY_COMM_ALL ? comm : st->comm;
        for (int k = 0; k < st->ndeps && !r[0]; k++) {
            int d = st->dep_first + k < s->ndeps ? s->deps[st->dep_first + k] : -1;
            if (d < 0 || d >= i) snprintf(r, sizeof r, "dependency on step %d", d);
        }
        if (r[0]) {
        } else if (st->kind >= CONVOY_NSTEP_KINDS) {
            snprintf(r, sizeof r, "unknown kind %d", st->kind);
        } else if (st->kind == CONVOY_STEP_SEND || st->kind == CONVOY_STEP_RECV) {
            const convoy__region *g = st->kind == CONVOY_STEP_SEND ? &st->src : &st->dst;
            if (st->comm > CONVOY_COMM_LANE)
                snprintf(r, sizeof r, "unknown communicator %d", st->comm);
            else if (st->peer < 0 || st->peer >= comm_size(v->t, s, pc))
                snprintf(r, sizeof r, "peer %d outside the communicator of %d", st->peer,
                         comm_size(v->t, s, pc));
            else if (st->tag < 0 || st->tag >= CONVOY_STEP_TAGS)
                snprintf(r, sizeof r, "tag %d outside 0..%d", st->tag, CONVOY_STEP_TAGS - 1);
            else if (!check_region(v, s, g, r, sizeof r) && st->kind == CONVOY_STEP_RECV)
                indexed_overlap(v, s, g, r, sizeof r);
        } else if (st->kind == CONVOY_STEP_REDUCE || st->kind == CONVOY_STEP_COPY) {
            if (!check_region(v, s, &st->src, r, sizeof r) &&
                !check_region(v, s, &st->dst, r, sizeof r)) {
                int64_t sb = st->src.count * v->tsb[st->src.tslot];
                int64_t db = st->dst.count * v->tsb[st->dst.tslot];
                if (sb != db)
                    snprintf(r, sizeof r, "source of %lld bytes, target of %lld bytes",
                             (long long)sb, (long long)db);
            }
        } else if (st->kind == CONVOY_STEP_NOTIFY || st->kind == CONVOY_STEP_WAIT) {
            if (st->flag < 0 || st->flag >= s->nflags)
                snprintf(r, sizeof r, "flag %d outside the schedule's %d flags", st->flag,
                         s->nflags);
            else if (st->value == 0)
                snprintf(r, sizeof r, "notification value 0 (values start at 1)");
            else if (st->kind == CONVOY_STEP_WAIT && (st->peer < 0 || st->peer >= v->t->ppn))
                snprintf(r, sizeof r, "node rank %d outside the node of %d", st->peer, v->t->ppn);
        } else if (st->kind == CONVOY_STEP_PUBLISH || st->kind == CONVOY_STEP_READ) {
            const convoy__region *slot = st->kind == CONVOY_STEP_PUBLISH ? &st->dst : &st->src;
            const convoy__region *data = st->kind == CONVOY_STEP_PUBLISH ? &st->src : &st->dst;
            if (slot->buf != CONVOY_BUF_SHM || slot->tslot != CONVOY_T_BYTE || slot->count != 8)
                snprintf(r, sizeof r, "%s address word that is not 8 bytes of the segment",
                         convoy__step_kind_name(st->kind));
            else if (st->kind == CONVOY_STEP_READ &&
                     (st->peer < 0 || st->peer >= v->t->ppn || st->peer == v->t->node_rank))
                snprintf(r, sizeof r, "read from node rank %d (node of %d, mine %d)", st->peer,
                         v->t->ppn, v->t->node_rank);
            else if (st->kind == CONVOY_STEP_READ && data->tslot != CONVOY_T_BYTE)
                snprintf(r, sizeof r, "read into a region of type slot %d (bytes only)",
                         data->tslot);
            else if (!check_region(v, s, slot, r, sizeof r))
                check_region(v, s, data, r, sizeof r);
        } else if (st->kind == CONVOY_STEP_NESTED) {
            if (st->child < 0 || st->child >= s->nchildren || !s->children[st->child])
                snprintf(r, sizeof r, "child %d of %d", st->child, s->nchildren);
            else if (st->comm != CONVOY_COMM_NODE && st->comm != CONVOY_COMM_LANE &&
                     st->comm != CONVOY_COMM_MAP)
                snprintf(r, sizeof r, "nested schedule on communicator %d", st->comm);
            else {
                /* The child's buffers start where the step rebased them; a mapped child's
                 * group must be ranks of this schedule's communicator. */
                const convoy__schedule *c = s->children[st->child];
                vctx cv = *v;
                cv.sbytes = buf_size(v, s, st->src.buf) - st->src.off;
                cv.rbytes = buf_size(v, s, st->dst.buf) - st->dst.off;
                cv.inplace = st->src.buf == CONVOY_BUF_SEND && v->inplace;
                for (int k = 0; st->comm == CONVOY_COMM_MAP && k < c->nmap && !r[0]; k++)
                    if (c->map[k] < 0 || c->map[k] >= comm_size(v->t, s, comm))
                        snprintf(r, sizeof r, "group member %d is rank %d outside 0..%d", k,
                                 c->map[k], comm_size(v->t, s, comm) - 1);
                if (st->src.buf >= CONVOY_NBUF || st->dst.buf >= CONVOY_NBUF || cv.sbytes < 0 ||
                    cv.rbytes < 0)
                    snprintf(r, sizeof r, "child buffers rebased outside the parent's buffers");
                snprintf(w2, sizeof w2, "%snested schedule of step %d, ", where, i);
                if (!r[0] && validate(&cv, c, st->comm, w2, why, len)) return 1;
            }
        }
        if (r[0]) {
            snprintf(why, len, "%sstep %d (%s): %s", where, i, convoy__step_kind_name(st->kind), r);
            return 1;
        }
    }
    return 0;
}

/* Marks the scratch bytes region g covers (plain, strided or indexed) in w. */
static void mark_tmp(const vctx *v, const convoy__schedule *s, const convoy__region *g,
                     unsigned char *w)
{
    if (g->buf != CONVOY_BUF_TMP || g->count <= 0) return;
    const int64_t eb = v->tsb[g->tslot];
    const int64_t *tab = g->indexed ? convoy__reg_table(s, g) : NULL;
    const int nb = g->indexed ? g->nblk : g->nblk > 1 ? g->nblk : 1;
    for (int k = 0; k < nb; k++) {
        int64_t lo = g->off + (tab ? tab[2 * k] : k * g->stride);
        int64_t hi = lo + (tab ? tab[2 * k + 1] : g->count) * eb;
        if (lo < 0) lo = 0;
        if (hi > s->tmp_bytes) hi = s->tmp_bytes;
        if (hi > lo) memset(w + lo, 1, (size_t)(hi - lo));
    }
}

/* Scratch bytes of s and its nested schedules that no step writes into (-1: no memory). */
static int64_t tmp_unwritten(const vctx *v, const convoy__schedule *s)
{
    int64_t n = 0;
    for (int i = 0; i < s->nchildren; i++) {
        const int64_t c = s->children[i] ? tmp_unwritten(v, s->children[i]) : 0;
        if (c < 0) return -1;
        n += c;
    }
    if (s->tmp_bytes <= 0) return n;
    unsigned char *w = calloc((size_t)s->tmp_bytes, 1);
    if (!w) return -1;
    for (int i = 0; i < s->nsteps; i++) {
        const convoy__step *st = &s->steps[i];
        if (st->kind == CONVOY_STEP_RECV || st->kind == CONVOY_STEP_COPY ||
            st->kind == CONVOY_STEP_REDUCE || st->kind == CONVOY_STEP_READ)
            mark_tmp(v, s, &st->dst, w);
    }
    for (int64_t b = 0; b < s->tmp_bytes; b++)
        n += !w[b];
    free(w);
    return n;
}

/* --- one case ------------------------------------------------------------------------ */

typedef struct casedata {
    int P, coll, inplace;
    int root;                   /* rooted collectives */
    int64_t cb;                 /* cell bytes */
    int64_t *rcounts, *displs;  /* allgatherv; gather(v), scatter(v): the root's vector */
    int64_t rcells;             /* allgatherv: receive buffer cells; rooted: the root's vector */
    int64_t *bcounts, *bdispls; /* rooted, off the root: block bytes and packed offsets */
    int64_t n; /* allreduce, reduce, scans: elements; reduce_scatter: the whole vector;
                  alltoall: elements per block */
    ar_ctx ar;
} casedata;

/* Reduce_scatter: rcounts are the blocks, displs their offsets in the vector (prefix sums),
 * n the vector; the receive buffer holds the vector in place, else the own block. */
static int is_rs(const casedata *d)
{
    return d->coll == CONVOY_COLL_REDUCE_SCATTER;
}

static int64_t rs_rcells(const casedata *d, int rank)
{
    return d->inplace ? d->n : d->rcounts[rank];
}

/* Gather(v), Scatter(v) (vector collectives with a root) and Bcast. */
static int is_gs(const casedata *d)
{
    return d->coll == CONVOY_COLL_GATHER || d->coll == CONVOY_COLL_GATHERV ||
           d->coll == CONVOY_COLL_SCATTER || d->coll == CONVOY_COLL_SCATTERV;
}

static int is_gather(const casedata *d)
{
    return d->coll == CONVOY_COLL_GATHER || d->coll == CONVOY_COLL_GATHERV;
}

/* Cells of a rank's send and receive buffers. */
static int64_t rank_scells(const casedata *d, int i)
{
    if (d->coll == CONVOY_COLL_ALLGATHERV) return d->rcounts[i];
    if (d->coll == CONVOY_COLL_BCAST) return 0;
    if (is_gs(d)) {
        if (is_gather(d)) return d->inplace && i == d->root ? 0 : d->rcounts[i];
        return i == d->root ? d->rcells : 0;
    }
    if (d->coll == CONVOY_COLL_ALLTOALL) return d->P * d->n;
    return d->n;
}

static int64_t rank_rcells(const casedata *d, int i)
{
    if (d->coll == CONVOY_COLL_ALLGATHERV) return d->rcells;
    if (is_rs(d)) return rs_rcells(d, i);
    if (is_gs(d)) {
        if (is_gather(d)) return i == d->root ? d->rcells : 0;
        return d->inplace && i == d->root ? 0 : d->rcounts[i];
    }
    if (d->coll == CONVOY_COLL_REDUCE) return i == d->root ? d->n : 0;
    if (d->coll == CONVOY_COLL_ALLTOALL) return d->P * d->n;
    return d->n;
}

/* The root's vector: poison, with rank i's cells at displs[i]. */
static void vector_image(const casedata *d, int op, unsigned char *img)
{
    memset(img, CHK_POISON, (size_t)(d->rcells * d->cb));
    for (int i = 0; i < d->P; i++)
        for (int64_t k = 0; k < d->rcounts[i]; k++) {
            uint64_t v = ag_cell(op, i, k);
            memcpy(img + (d->displs[i] + k) * d->cb, &v, sizeof v);
        }
}

/* Rooted collectives: the input buffers, and what rank i's receive buffer must hold. */
static void rooted_fill(const casedata *d, int op, int rank, unsigned char *sb, unsigned char *rb)
{
    memset(rb, CHK_POISON, (size_t)(rank_rcells(d, rank) * d->cb));
    memset(sb, CHK_POISON, (size_t)(rank_scells(d, rank) * d->cb));
    if (d->coll == CONVOY_COLL_BCAST) {
        for (int64_t k = 0; rank == d->root && k < d->n; k++) {
            uint64_t v = ag_cell(op, d->root, k);
            memcpy(rb + k * d->cb, &v, sizeof v);
        }
    } else if (!is_gather(d)) {
        if (rank == d->root) vector_image(d, op, sb);
    } else if (rank == d->root && d->inplace) {
        for (int64_t k = 0; k < d->rcounts[rank]; k++) {
            uint64_t v = ag_cell(op, rank, k);
            memcpy(rb + (d->displs[rank] + k) * d->cb, &v, sizeof v);
        }
    } else {
        for (int64_t k = 0; k < d->rcounts[rank]; k++) {
            uint64_t v = ag_cell(op, rank, k);
            memcpy(sb + k * d->cb, &v, sizeof v);
        }
    }
}

static void rooted_expect(const casedata *d, int op, int rank, unsigned char *img)
{
    if (d->coll == CONVOY_COLL_BCAST) {
        for (int64_t k = 0; k < d->n; k++) {
            uint64_t v = ag_cell(op, d->root, k);
            memcpy(img + k * d->cb, &v, sizeof v);
        }
    } else if (is_gather(d)) {
        if (rank == d->root) vector_image(d, op, img);
    } else {
        /* Scatter(v): the root's vector from its displacement on (blocks may overlap, then
         * the vector holds the last rank's cells where they do). */
        for (int64_t k = 0; k < rank_rcells(d, rank); k++) {
            const int64_t at = d->displs[rank] + k;
            uint64_t v = ag_cell(op, rank, k);
            for (int j = d->P - 1; j >= 0; j--)
                if (at >= d->displs[j] && at < d->displs[j] + d->rcounts[j]) {
                    v = ag_cell(op, j, at - d->displs[j]);
                    break;
                }
            memcpy(img + k * d->cb, &v, sizeof v);
        }
    }
}

static int is_rooted(const casedata *d)
{
    return d->coll == CONVOY_COLL_BCAST || is_gs(d);
}

/* Cells are contributor sets (reductions), or (origin, index) pairs (allgatherv, alltoall). */
static int is_red(const casedata *d)
{
    return d->coll != CONVOY_COLL_ALLGATHERV && d->coll != CONVOY_COLL_ALLTOALL && !is_rooted(d);
}

/* MPI_IN_PLACE at this rank: Reduce's is the root's alone. */
static int inplace_at(const casedata *d, int rank)
{
    return d->inplace && (d->coll != CONVOY_COLL_REDUCE || rank == d->root);
}

/* Reductions: the contributors [*lo, *hi] rank's result must hold; 0 if it has no result
 * (Reduce's non-roots, Exscan's rank 0: the receive buffer must stay as it was). */
static int red_range(const casedata *d, int rank, int *lo, int *hi)
{
    *lo = 0;
    *hi = d->P - 1;
    if (d->coll == CONVOY_COLL_REDUCE) return rank == d->root;
    if (d->coll == CONVOY_COLL_SCAN) *hi = rank;
    if (d->coll == CONVOY_COLL_EXSCAN) *hi = rank - 1;
    return *hi >= 0;
}

static int fill_buffers(const casedata *d, int op, int rank, unsigned char *sb, unsigned char *rb)
{
    if (is_rooted(d)) {
        rooted_fill(d, op, rank, sb, rb);
        return 0;
    }
    if (d->coll == CONVOY_COLL_ALLGATHERV) {
        memset(rb, CHK_POISON, (size_t)(d->rcells * d->cb));
        for (int64_t k = 0; k < d->rcounts[rank]; k++) {
            uint64_t v = ag_cell(op, rank, k);
            if (d->inplace)
                memcpy(rb + (d->displs[rank] + k) * d->cb, &v, sizeof v);
            else
                memcpy(sb + k * d->cb, &v, sizeof v);
        }
        return 0;
    }
    memset(rb, CHK_POISON, (size_t)(rank_rcells(d, rank) * d->cb));
    unsigned char *in = inplace_at(d, rank) ? rb : sb;
    if (d->coll == CONVOY_COLL_ALLTOALL) {
        /* Block j (for rank j) holds elements j n .. j n + n - 1 of this rank's data. */
        for (int64_t k = 0; k < d->P * d->n; k++) {
            uint64_t v = ag_cell(op, rank, k);
            memcpy(in + k * d->cb, &v, sizeof v);
        }
        return 0;
    }
    uint64_t *cell = d->ar.a;
    for (int64_t e = 0; e < d->n; e++) {
        memset(cell, 0, (size_t)d->cb);
        cell[0] = ar_elem(op, e);
        cell[1 + rank / 64] = 1ULL << (rank % 64);
        memcpy(in + e * d->cb, cell, (size_t)d->cb);
    }
    return 0;
}

static int verify(const casedata *d, int op, int rank, const unsigned char *rb, char *why,
                  size_t len)
{
    if (is_rooted(d)) {
        /* The first cell that differs from the expected image, described. */
        const int64_t n = rank_rcells(d, rank);
        unsigned char *img = malloc((size_t)(n * d->cb) + 1);
        if (!img) {
            snprintf(why, len, "checker out of memory");
            return 1;
        }
        rooted_expect(d, op, rank, img);
        int bad = 0;
        for (int64_t x = 0; x < n && !bad; x++) {
            if (!memcmp(rb + x * d->cb, img + x * d->cb, (size_t)d->cb)) continue;
            uint64_t got, want;
            char g[128], w[128];
            memcpy(&got, rb + x * d->cb, sizeof got);
            memcpy(&want, img + x * d->cb, sizeof want);
            ag_describe(got, d->P, op, g, sizeof g);
            ag_describe(want, d->P, op, w, sizeof w);
            snprintf(why, len, "rank %d (root %d): receive element %lld holds %s instead of %s",
                     rank, d->root, (long long)x, g, w);
            bad = 1;
        }
        free(img);
        return bad;
    }
    if (d->coll == CONVOY_COLL_ALLGATHERV) {
        /* Which block and index each receive cell belongs to. */
        for (int i = 0; i < d->P; i++) {
            for (int64_t k = 0; k < d->rcounts[i]; k++) {
                uint64_t got, want = ag_cell(op, i, k);
                int64_t x = d->displs[i] + k;
                memcpy(&got, rb + x * d->cb, sizeof got);
                if (got == want) continue;
                char g[128];
                ag_describe(got, d->P, op, g, sizeof g);
                snprintf(why, len,
                         "rank %d: receive element %lld (element %lld of rank %d's "
                         "block) holds %s",
                         rank, (long long)x, (long long)k, i, g);
                return 1;
            }
        }
        /* Outside the blocks nothing may change. */
        unsigned char *inside = calloc((size_t)d->rcells + 1, 1);
        if (!inside) {
            snprintf(why, len, "checker out of memory");
            return 1;
        }
        for (int i = 0; i < d->P; i++)
            memset(inside + d->displs[i], 1, (size_t)d->rcounts[i]);
        int bad = 0;
        for (int64_t x = 0; x < d->rcells && !bad; x++) {
            if (inside[x]) continue;
            for (int64_t b = 0; b < d->cb; b++)
                if (rb[x * d->cb + b] != CHK_POISON) bad = 1;
            if (bad) {
                uint64_t got;
                char g[128];
                memcpy(&got, rb + x * d->cb, sizeof got);
                ag_describe(got, d->P, op, g, sizeof g);
                snprintf(why, len,
                         "rank %d: receive element %lld lies outside every block (a "
                         "gap between displacements) but was overwritten with %s",
                         rank, (long long)x, g);
            }
        }
        free(inside);
        return bad;
    }
    if (d->coll == CONVOY_COLL_ALLTOALL) {
        for (int i = 0; i < d->P; i++)
            for (int64_t k = 0; k < d->n; k++) {
                uint64_t got, want = ag_cell(op, i, rank * d->n + k);
                memcpy(&got, rb + (i * d->n + k) * d->cb, sizeof got);
                if (got == want) continue;
                char g[128];
                ag_describe(got, d->P, op, g, sizeof g);
                snprintf(why, len,
                         "rank %d: element %lld of block %d (from rank %d, its element %lld) "
                         "holds %s",
                         rank, (long long)k, i, i, (long long)(rank * d->n + k), g);
                return 1;
            }
        return 0;
    }
    int lo, hi;
    if (!red_range(d, rank, &lo, &hi)) {
        snprintf(why, len,
                 "rank %d: the receive buffer changed although this rank has no result "
                 "(%s)",
                 rank, d->coll == CONVOY_COLL_EXSCAN ? "Exscan's rank 0" : "not the root");
        return 1;
    }
    uint64_t *cell = d->ar.b;
    /* Reduce_scatter: the rank's block of the vector at the buffer's start (in place, the
     * rest of the buffer is undefined, as in MPI). */
    const int64_t first = is_rs(d) ? d->displs[rank] : 0,
                  len_e = is_rs(d) ? d->rcounts[rank] : d->n;
    for (int64_t x = 0; x < len_e; x++) {
        const int64_t e = first + x;
        memcpy(cell, rb + x * d->cb, (size_t)d->cb);
        if (cell[0] != ar_elem(op, e)) {
            if (!ar_valid(cell[0]))
                snprintf(why, len, "rank %d: element %lld of the result was never written", rank,
                         (long long)e);
            else
                snprintf(why, len, "rank %d: element %lld of the result holds element %llu", rank,
                         (long long)e, (unsigned long long)(cell[0] & 0xffffffffffULL));
            return 1;
        }
        /* Exactly the bits lo..hi. */
        int full = 1;
        for (int r = 0; r < d->P; r++)
            if (((cell[1 + r / 64] >> (r % 64)) & 1) != (r >= lo && r <= hi)) full = 0;
        if (!full) {
            char have[256];
            bits_describe(cell + 1, d->P, have, sizeof have);
            snprintf(why, len,
                     "rank %d: element %lld of the result holds the contributions of "
                     "ranks {%s} instead of ranks %d-%d",
                     rank, (long long)e, have, lo, hi);
            return 1;
        }
    }
    return 0;
}

/* The receive buffer rank must end with (reduce_scatter: the whole reduced vector, of
 * which the rank's block is compared). scratch: a send buffer's worth of memory. */
static void expected_image(const casedata *d, int op, int rank, unsigned char *img,
                           unsigned char *scratch)
{
    int lo, hi;
    if (is_red(d) && !red_range(d, rank, &lo, &hi)) {
        fill_buffers(d, op, rank, scratch, img); /* unchanged */
        return;
    }
    if (d->coll == CONVOY_COLL_ALLTOALL) {
        for (int i = 0; i < d->P; i++)
            for (int64_t k = 0; k < d->n; k++) {
                uint64_t v = ag_cell(op, i, rank * d->n + k);
                memcpy(img + (i * d->n + k) * d->cb, &v, sizeof v);
            }
        return;
    }
    if (d->coll == CONVOY_COLL_ALLGATHERV) {
        memset(img, CHK_POISON, (size_t)(d->rcells * d->cb));
        for (int i = 0; i < d->P; i++)
            for (int64_t k = 0; k < d->rcounts[i]; k++) {
                uint64_t v = ag_cell(op, i, k);
                memcpy(img + (d->displs[i] + k) * d->cb, &v, sizeof v);
            }
        return;
    }
    uint64_t *cell = d->ar.a;
    memset(cell, 0, (size_t)d->cb);
    for (int r = lo; r <= hi; r++)
        cell[1 + r / 64] |= 1ULL << (r % 64);
    for (int64_t e = 0; e < d->n; e++) {
        cell[0] = ar_elem(op, e);
        memcpy(img + e * d->cb, cell, (size_t)d->cb);
    }
}

static void collect_stats(const chk_world *w, int ops, convoy__check_stats *st)
{
    memset(st, 0, sizeof *st);
    st->rounds_bound = st->rounds_exact = -1;
    const convoy__topo *t = w->topo;
    st->rounds = w->rounds;
    st->nnodes = w->nnodes;
    st->round_node_in_max = w->round_in_max;
    st->round_node_out_max = w->round_out_max;
    st->inflight_max = w->inflight_max;
    st->round_inter_max = w->round_inter_max;
    int64_t *node_out = calloc((size_t)w->nnodes, sizeof *node_out);
    int64_t *node_in = calloc((size_t)w->nnodes, sizeof *node_in);
    int64_t *lane = calloc((size_t)t->max_ppn, sizeof *lane);
    st->rank_inter_min = INT64_MAX;
    for (int i = 0; i < w->P; i++) {
        const chk_rank *r = &w->r[i];
        st->msgs += r->msgs_sent / ops;
        st->bytes += r->bytes_sent / ops;
        if (r->msgs_sent / ops > st->rank_msgs_max) st->rank_msgs_max = r->msgs_sent / ops;
        if (r->bytes_sent / ops > st->rank_bytes_max) st->rank_bytes_max = r->bytes_sent / ops;
        int64_t inter = (r->inter_sent + r->inter_recv) / ops;
        if (inter > st->rank_inter_max) st->rank_inter_max = inter;
        if (inter < st->rank_inter_min) st->rank_inter_min = inter;
        st->inter_total += r->inter_sent / ops;
        if (node_out && node_in) {
            node_out[r->node] += r->inter_sent / ops;
            node_in[r->node] += r->inter_recv / ops;
        }
        if (lane) lane[r->nrank] += r->inter_sent / ops;
        if (w->nnodes > 1) {
            st->ranks_not_sending += r->inter_msgs_sent == 0;
            st->ranks_not_receiving += r->inter_msgs_recv == 0;
        }
        if (w->reduce) st->ranks_not_reducing += r->reduces == 0;
    }
    st->node_out_min = INT64_MAX;
    /* Per node: its ranks' inter-node bytes furthest apart (max/min; 0 counts as apart). */
    double worst = -1;
    for (int n = 0; n < w->nnodes && w->nnodes > 1; n++) {
        int64_t mx = 0, mn = INT64_MAX;
        for (int k = t->node_first[n]; k < t->node_first[n + 1]; k++) {
            const chk_rank *r = &w->r[t->members[k]];
            const int64_t b = (r->inter_sent + r->inter_recv) / ops;
            if (b > mx) mx = b;
            if (b < mn) mn = b;
        }
        const double ratio = mn > 0 ? (double)mx / (double)mn : mx > 0 ? 1e300 : 1;
        if (ratio > worst) {
            worst = ratio;
            st->node_rank_inter_max = mx;
            st->node_rank_inter_min = mn;
        }
    }
    for (int n = 0; node_out && node_in && n < w->nnodes; n++) {
        if (node_out[n] > st->node_out_max) st->node_out_max = node_out[n];
        if (node_out[n] < st->node_out_min) st->node_out_min = node_out[n];
        if (node_in[n] > st->node_in_max) st->node_in_max = node_in[n];
    }
    st->lane_min = INT64_MAX;
    for (int j = 0; lane && j < t->max_ppn; j++) {
        if (lane[j] > st->lane_max) st->lane_max = lane[j];
        if (lane[j] < st->lane_min) st->lane_min = lane[j];
    }
    if (st->lane_min == INT64_MAX) st->lane_min = 0;
    if (st->node_out_min == INT64_MAX) st->node_out_min = 0;
    if (st->rank_inter_min == INT64_MAX) st->rank_inter_min = 0;
    free(node_out);
    free(node_in);
    free(lane);
}

/* One run of the world in one mode: fresh buffers, run, verify every operation's result. */
static int run_mode(const convoy__check_case *c, const casedata *d, const convoy__topo *full,
                    const convoy__topo *views, convoy__schedule *const *scheds, int mode, int ops,
                    convoy__check_result *res, int want_stats, int ports)
{
    const int P = d->P;
    chk_world w;
    memset(&w, 0, sizeof w);
    int rc = 0;
    const size_t nb = (size_t)ops * (size_t)P;
    w.P = P;
    w.nnodes = full->nnodes;
    w.ops = ops;
    w.mode = mode;
    w.smp_check = c->smp_check || chk_claims_smp(c->algo);
    w.ports = ports;
    /* Rooted collectives: in place is the root's alone, and its absent buffer is one of
     * size 0 (rank_scells, rank_rcells), so any access to it is out of bounds. Reduce:
     * in place at the root alone too, its send buffer there absent. */
    w.inplace = d->inplace && !is_rooted(d);
    w.inplace_rank = d->coll == CONVOY_COLL_REDUCE ? d->root : -1;
    w.topo = full;
    w.sched = (const convoy__schedule *const *)scheds;
    w.epoch0 = (c->seed * 5) & 0xffff;
    w.tslot_bytes[CONVOY_T_SEND] = w.tslot_bytes[CONVOY_T_RECV] = d->cb;
    w.tslot_bytes[CONVOY_T_BYTE] = 1;
    w.reduce = is_red(d) && d->coll != CONVOY_COLL_BARRIER ? ar_reduce : NULL;
    w.sync = d->coll == CONVOY_COLL_BARRIER; /* no data to check: check causality */
    w.ctx = (void *)&d->ar;
    w.r = calloc((size_t)P, sizeof *w.r);
    w.sbuf = calloc(nb, sizeof *w.sbuf);
    w.rbuf = calloc(nb, sizeof *w.rbuf);
    w.sbytes = calloc(nb, sizeof *w.sbytes);
    w.rbytes = calloc(nb, sizeof *w.rbytes);
    if (!w.r || !w.sbuf || !w.rbuf || !w.sbytes || !w.rbytes) {
        rc = CONVOY_ERR_NO_MEM;
        goto cleanup;
    }
    for (int op = 0; op < ops; op++) {
        for (int i = 0; i < P; i++) {
            size_t k = (size_t)op * P + i;
            w.sbytes[k] = rank_scells(d, i) * d->cb;
            w.rbytes[k] = rank_rcells(d, i) * d->cb;
            /* One byte more than needed: malloc(0) may give NULL, and NULL means "no
             * buffer" to the bounds checks. */
            w.sbuf[k] = malloc((size_t)w.sbytes[k] + 1);
            w.rbuf[k] = malloc((size_t)w.rbytes[k] + 1);
            if (!w.sbuf[k] || !w.rbuf[k]) {
                rc = CONVOY_ERR_NO_MEM;
                goto cleanup;
            }
            fill_buffers(d, op, i, w.sbuf[k], w.rbuf[k]);
        }
    }
    for (int i = 0; i < P; i++)
        w.r[i].topo = views[i];
    if ((rc = chk_world_init(&w, c->seed))) goto cleanup;
    chk_world_run(&w);
    for (int op = 0; op < ops && !w.failed; op++) {
        /* Compare each rank's whole receive buffer with the image it must end with, and
         * look for the first wrong element only in one that differs. */
        int64_t rb = 0, sbmax = 0;
        for (int i = 0; i < P; i++) {
            int64_t b = is_rs(d) ? d->n * d->cb : w.rbytes[(size_t)op * P + i];
            if (b > rb) rb = b;
            if (w.sbytes[(size_t)op * P + i] > sbmax) sbmax = w.sbytes[(size_t)op * P + i];
        }
        unsigned char *expect = malloc((size_t)rb + 1), *scratch = malloc((size_t)sbmax + 1);
        if (!expect || !scratch) {
            free(expect);
            free(scratch);
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        for (int i = 0; i < P && !w.failed; i++) {
            char why[1024];
            const unsigned char *got = w.rbuf[(size_t)op * P + i];
            /* Reduce_scatter: rank i's block of the reduced vector, at the buffer's start.
             * Rooted collectives: each rank's own image (verify compares it). */
            if (is_rooted(d)) {
                if (!verify(d, op, i, got, why, sizeof why)) continue;
            } else if (expected_image(d, op, i, expect, scratch),
                       is_rs(d) ? memcmp(got, expect + d->displs[i] * d->cb,
                                         (size_t)(d->rcounts[i] * d->cb)) == 0
                                : memcmp(got, expect, (size_t)w.rbytes[(size_t)op * P + i]) == 0) {
                continue;
            } else if (!verify(d, op, i, got, why, sizeof why))
                snprintf(why, sizeof why,
                         "rank %d: the receive buffer differs from the expected "
                         "result",
                         i);
            if (ops > 1)
                chk_fail(&w, "operation %d of %d: %s", op + 1, ops, why);
            else
                chk_fail(&w, "%s", why);
        }
        free(expect);
        free(scratch);
    }
    if (w.failed) {
        res->status = CONVOY_CHECK_FAIL;
        snprintf(res->reason, sizeof res->reason, "%s: %.4000s",
                 mode == CONVOY_CHECK_LOCKSTEP ? "lockstep" : "shuffled", w.reason);
    }
    if (want_stats) collect_stats(&w, ops, &res->st);
cleanup:
    chk_world_free(&w);
    for (size_t k = 0; w.sbuf && k < nb; k++)
        free(w.sbuf[k]);
    for (size_t k = 0; w.rbuf && k < nb; k++)
        free(w.rbuf[k]);
    free(w.sbuf);
    free(w.rbuf);
    free(w.sbytes);
    free(w.rbytes);
    free(w.r);
    return rc;
}

/* Names of the displacement patterns (convoy__check_case.displs). */
static const char *const displ_names[] = {"seeded",   "packed",   "stride", "gaps",
                                          "reversed", "shuffled", "overlap"};

int convoy__check_displs_known(const char *name)
{
    for (size_t i = 0; i < sizeof displ_names / sizeof *displ_names; i++)
        if (!strcmp(name, displ_names[i])) return 1;
    return 0;
}

static void make_displs(casedata *d, uint64_t seed, const char *pattern)
{
    uint64_t s = seed ^ 0x5eed0d15b1ac5ULL;
    const char *pt = pattern ? pattern : "seeded";
    int *perm = malloc((size_t)d->P * sizeof *perm);
    for (int i = 0; i < d->P; i++)
        perm[i] = !strcmp(pt, "reversed") ? d->P - 1 - i : i;
    /* seeded: odd seeds place the blocks in a shuffled order (non-monotone displacements);
     * seeded, reversed, shuffled leave gaps of 0..2 elements that must stay untouched. */
    if (perm && ((!strcmp(pt, "seeded") && (seed & 1)) || !strcmp(pt, "shuffled")))
        for (int i = d->P - 1; i > 0; i--) {
            int j = (int)(convoy__splitmix64(&s) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    int64_t pos = (int64_t)(convoy__splitmix64(&s) % 2), end = 0;
    for (int k = 0; k < d->P; k++) {
        int i = perm ? perm[k] : k;
        d->displs[i] = pos;
        if (pos + d->rcounts[i] > end) end = pos + d->rcounts[i];
        if (!strcmp(pt, "packed"))
            pos += d->rcounts[i];
        else if (!strcmp(pt, "stride"))
            pos += d->rcounts[i] + 1;
        else if (!strcmp(pt, "gaps"))
            pos += d->rcounts[i] + 1 + i % 3;
        else if (!strcmp(pt, "overlap"))
            pos += d->rcounts[i] / 2; /* every block overlaps the next one by half */
        else
            pos += d->rcounts[i] + (int64_t)(convoy__splitmix64(&s) % 3);
    }
    if (pos > end) end = pos;
    d->rcells = end + 1 + (int64_t)(convoy__splitmix64(&s) % 2);
    free(perm);
}

int convoy__check_run(const convoy__check_case *c, convoy__check_result *res)
{
    memset(res, 0, sizeof *res);
    res->status = CONVOY_CHECK_PASS;
    const int P = c->procs;
    /* Allgather and Reduce_scatter_block are their v-forms' cases with equal counts. */
    const int coll = convoy__coll_base(c->coll);
    if (P < 1 || !c->algo || !c->algo->build || c->ppn < 1 || coll < 0 || coll >= CONVOY_NCOLL ||
        c->count < 0 || c->root < 0 || c->root >= P)
        return CONVOY_ERR_ARG;
    int rc = 0;
    int64_t unwritten = 0; /* the most scratch bytes of one rank that it never writes */
    int unwritten_rank = -1;
    casedata d;
    memset(&d, 0, sizeof d);
    d.P = P;
    d.coll = coll;
    d.inplace = c->inplace;
    d.root = c->root;
    convoy__topo full;
    memset(&full, 0, sizeof full);
    int64_t *ids = malloc((size_t)P * sizeof *ids);
    convoy__topo *views = calloc((size_t)P, sizeof *views);
    convoy__args *args = calloc((size_t)P, sizeof *args);
    convoy__schedule **scheds = calloc((size_t)P, sizeof *scheds);
    if (!ids || !views || !args || !scheds) {
        rc = CONVOY_ERR_NO_MEM;
        goto cleanup;
    }
    if (c->ids)
        memcpy(ids, c->ids, (size_t)P * sizeof *ids);
    else if ((rc = convoy__layout_ids(c->layout, P, c->ppn, c->seed, ids)))
        goto cleanup;
    if (make_views(P, ids, &full, views, res->reason, sizeof res->reason)) {
        res->status = CONVOY_CHECK_FAIL;
        goto cleanup;
    }

    if (c->displs && !strcmp(c->displs, "overlap") && coll != CONVOY_COLL_SCATTERV) {
        /* MPI allows overlapping blocks only where they are sent (Scatterv's). */
        res->status = CONVOY_CHECK_SKIP;
        snprintf(res->reason, sizeof res->reason, "overlapping receive blocks are erroneous");
        goto cleanup;
    }
    if (coll == CONVOY_COLL_ALLGATHERV || is_gs(&d)) {
        /* Rooted: the root's vector like an allgatherv's receive buffer (gaps, shuffled
         * blocks); Gather and Scatter with c->count per rank. */
        d.cb = 8;
        d.rcounts = malloc((size_t)P * sizeof *d.rcounts);
        d.displs = malloc((size_t)P * sizeof *d.displs);
        d.bcounts = malloc((size_t)P * sizeof *d.bcounts);
        d.bdispls = malloc((size_t)P * sizeof *d.bdispls);
        if (!d.rcounts || !d.displs || !d.bcounts || !d.bdispls) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        if (coll == CONVOY_COLL_GATHER || coll == CONVOY_COLL_SCATTER) {
            for (int i = 0; i < P; i++)
                d.rcounts[i] = c->count;
        } else if ((rc = convoy__dist_counts(c->counts, P, c->base, c->seed, d.rcounts))) {
            goto cleanup;
        }
        if (c->coll == CONVOY_COLL_ALLGATHER || coll == CONVOY_COLL_GATHER ||
            coll == CONVOY_COLL_SCATTER) {
            /* MPI_Allgather's, MPI_Gather's and MPI_Scatter's blocks are packed in rank
             * order (the v-forms have gaps and shuffled blocks). */
            for (int i = 0; i < P; i++)
                d.displs[i] = i * d.rcounts[i];
            d.rcells = P * d.rcounts[0];
        } else {
            make_displs(&d, c->seed, c->displs);
        }
        for (int i = 0, pos = 0; is_gs(&d) && i < P; pos += (int)(d.rcounts[i++] * d.cb)) {
            d.bcounts[i] = d.rcounts[i] * d.cb;
            d.bdispls[i] = pos;
        }
    } else if (coll == CONVOY_COLL_BCAST) {
        d.cb = 8;
        d.n = c->count;
    } else if (coll == CONVOY_COLL_REDUCE_SCATTER) {
        /* Blocks from the distribution, packed in rank order (MPI has no displacements). */
        d.rcounts = malloc((size_t)P * sizeof *d.rcounts);
        d.displs = malloc((size_t)P * sizeof *d.displs);
        if (!d.rcounts || !d.displs) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        if ((rc = convoy__dist_counts(c->counts, P, c->base, c->seed, d.rcounts))) goto cleanup;
        for (int i = 0; i < P; i++) {
            d.displs[i] = d.n;
            d.n += d.rcounts[i];
        }
    } else {
        /* A barrier is an allreduce of nothing: empty buffers, only causality to check. */
        d.n = coll == CONVOY_COLL_BARRIER ? 0 : c->count;
    }
    if (coll == CONVOY_COLL_ALLTOALL) {
        /* The builders' view of the blocks: n elements each, packed in rank order. */
        d.rcounts = malloc((size_t)P * sizeof *d.rcounts);
        d.displs = malloc((size_t)P * sizeof *d.displs);
        if (!d.rcounts || !d.displs) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        for (int i = 0; i < P; i++) {
            d.rcounts[i] = d.n;
            d.displs[i] = i * d.n;
        }
        d.cb = 8;
    }
    if (is_red(&d)) {
        d.ar.P = P;
        d.ar.W = (P + 63) / 64;
        d.ar.cb = 8 * (int64_t)(d.ar.W + 1);
        d.ar.order = !c->commutative && !c->idempotent;
        d.ar.idem = c->idempotent;
        d.cb = d.ar.cb;
    }
    /* Scratch cells for fill/verify/reduce; also gives allgatherv something to point at. */
    d.ar.a = calloc((size_t)(d.cb / 8 + 1), sizeof *d.ar.a);
    d.ar.b = calloc((size_t)(d.cb / 8 + 1), sizeof *d.ar.b);
    d.ar.pa = calloc((size_t)(d.cb / 8 + 1), sizeof *d.ar.pa);
    d.ar.pb = calloc((size_t)(d.cb / 8 + 1), sizeof *d.ar.pb);
    if (!d.ar.a || !d.ar.b || !d.ar.pa || !d.ar.pb) {
        rc = CONVOY_ERR_NO_MEM;
        goto cleanup;
    }

    const convoy__dtype cell = {d.cb, d.cb, 0, d.cb}, byte = {1, 1, 0, 1};
    int napp = 0;
    for (int i = 0; i < P; i++) {
        convoy__args *a = &args[i];
        a->coll = c->coll;
        a->topo = &views[i];
        a->count = coll == CONVOY_COLL_ALLGATHERV ? d.rcounts[i] : d.n;
        a->rcounts = d.rcounts;
        a->displs = d.displs;
        a->stype = a->rtype = cell;
        a->root = c->root;
        if (is_gs(&d)) {
            /* The root's own count (none in place); off the root, the vector is bytes. */
            a->count = c->inplace && i == c->root ? 0 : d.rcounts[i];
            if (i != c->root) {
                a->rcounts = d.bcounts;
                a->displs = d.bdispls;
                *(is_gather(&d) ? &a->rtype : &a->stype) = byte;
            }
        }
        a->inplace = is_rooted(&d) ? c->inplace && i == c->root : inplace_at(&d, i);
        a->commutative = is_red(&d) ? c->commutative || c->idempotent : 1;
        a->idempotent = convoy__coll_reduces(coll) && c->idempotent;
        a->shm_bytes = c->shm_bytes;
        a->cma = c->cma && c->shm_bytes > 0;
        a->machine = c->machine;
        a->nparams = c->nparams;
        memcpy(a->params, c->params, sizeof a->params);
        int app = !is_red(&d) || c->commutative || c->idempotent ||
                  (c->algo->props & CONVOY_ALGO_NONCOMMUTATIVE);
        if (app && c->algo->applicable) app = c->algo->applicable(a) != 0;
        napp += app;
    }
    if (napp == 0) {
        res->status = CONVOY_CHECK_SKIP;
        snprintf(res->reason, sizeof res->reason, "not applicable");
        goto cleanup;
    }
    if (napp != P) {
        res->status = CONVOY_CHECK_FAIL;
        snprintf(res->reason, sizeof res->reason,
                 "the applicability predicate answers differently on different ranks (%d of %d "
                 "say yes)",
                 napp, P);
        goto cleanup;
    }

    int uses_shm = 0, alt = 0;
    for (int i = 0; i < P; i++) {
        scheds[i] = malloc(sizeof *scheds[i]);
        if (!scheds[i]) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        convoy__sched_init(scheds[i]);
        int brc = c->algo->build(&args[i], scheds[i]);
        if (brc || scheds[i]->err) {
            res->status = CONVOY_CHECK_FAIL;
            snprintf(res->reason, sizeof res->reason, "the builder failed on rank %d with %d", i,
                     brc ? brc : scheds[i]->err);
            goto cleanup;
        }
        if (c->mutate) {
            int m = c->mutate(c->mutate_ctx, &args[i], scheds[i]);
            if (m < 0) {
                rc = m;
                goto cleanup;
            }
            res->mutated += m > 0;
        }
        if (scheds[i]->nflags > 0 || scheds[i]->shm_bytes > 0) uses_shm = 1;
        if (scheds[i]->shm_alt) alt = 1;
        /* An alternating schedule must fit half the segment its builder saw. */
        if (scheds[i]->shm_alt && scheds[i]->shm_bytes > args[i].shm_bytes / 2 / 64 * 64) {
            res->status = CONVOY_CHECK_FAIL;
            snprintf(res->reason, sizeof res->reason,
                     "invalid schedule: rank %d alternates (shm_alt) with %lld segment bytes, "
                     "more than half of the %lld it may use",
                     i, (long long)scheds[i]->shm_bytes, (long long)args[i].shm_bytes);
            goto cleanup;
        }
    }
    /* Static checks need each rank's buffer sizes and its node's segment. */
    for (int i = 0; i < P; i++) {
        const convoy__topo *t = &views[i];
        int64_t seg = 0;
        for (int q = 0; q < t->ppn; q++) {
            int64_t b = scheds[convoy__topo_rank_at(t, t->node, q)]->shm_bytes;
            if (b > seg) seg = b;
        }
        const int64_t tsb[CONVOY_NTSLOT] = {d.cb, d.cb, 1};
        /* In place, the send buffer is absent -- except for Scatter, where the root's
         * receive buffer is (rank_rcells is 0 there). */
        const int no_send = args[i].inplace && (!is_gs(&d) || is_gather(&d));
        vctx v = {t, no_send, rank_scells(&d, i) * d.cb, rank_rcells(&d, i) * d.cb, seg, tsb};
        char where[32], why[1024];
        snprintf(where, sizeof where, "rank %d: ", i);
        if (validate(&v, scheds[i], CONVOY_COMM_ALL, where, why, sizeof why)) {
            res->status = CONVOY_CHECK_FAIL;
            snprintf(res->reason, sizeof res->reason, "invalid schedule: %s", why);
            goto cleanup;
        }
        const int64_t un = tmp_unwritten(&v, scheds[i]);
        if (un < 0) {
            rc = CONVOY_ERR_NO_MEM;
            goto cleanup;
        }
        if (un > unwritten) unwritten = un, unwritten_rank = i;
    }

    /* Two operations show the segment's reuse; three, where schedules alternate, the reuse
     * of a half while a peer may still be in the operation between. */
    const int ops = c->ops > 0 ? c->ops : (alt ? 3 : uses_shm ? 2 : 1);
    const int modes = c->modes ? c->modes : CONVOY_CHECK_LOCKSTEP | CONVOY_CHECK_SHUFFLE;
    if (modes & CONVOY_CHECK_LOCKSTEP) {
        rc = run_mode(c, &d, &full, views, scheds, CONVOY_CHECK_LOCKSTEP, 1, res, 1,
                      chk_lockstep_ports(c, args));
        if (rc || res->status != CONVOY_CHECK_PASS) goto cleanup;
        char why[1024];
        if (chk_rounds_verdict(c, args, (const convoy__schedule *const *)scheds, &res->st, why,
                               sizeof why)) {
            res->status = CONVOY_CHECK_FAIL;
            snprintf(res->reason, sizeof res->reason, "lockstep: %s", why);
            goto cleanup;
        }
    }
    if (modes & CONVOY_CHECK_SHUFFLE)
        rc = run_mode(c, &d, &full, views, scheds, CONVOY_CHECK_SHUFFLE, ops, res,
                      !(modes & CONVOY_CHECK_LOCKSTEP), 1);
    res->st.cell_bytes = d.cb;
    res->st.tmp_unwritten = unwritten;
    res->st.tmp_unwritten_rank = unwritten_rank;
    for (int i = 0; i < P; i++) {
        const int64_t b = convoy__lane_tree_tmp(scheds[i]);
        if (b > res->st.tmp_max) res->st.tmp_max = b;
        res->st.tmp_total += b;
        if (is_rooted(&d) && i == c->root) res->st.tmp_root = b;
        if (is_rooted(&d) && i != c->root && full.node_of[i] == full.node_of[c->root] &&
            b > res->st.tmp_peers)
            res->st.tmp_peers = b;
    }

cleanup:
    for (int i = 0; scheds && i < P; i++) {
        if (!scheds[i]) continue;
        convoy__sched_free(scheds[i]);
        free(scheds[i]);
    }
    free(scheds);
    free(args);
    free(views);
    convoy__topo_free(&full);
    free(ids);
    free(d.rcounts);
    free(d.displs);
    free(d.bcounts);
    free(d.bdispls);
    free(d.ar.a);
    free(d.ar.b);
    free(d.ar.pa);
    free(d.ar.pb);
    return rc;
}
