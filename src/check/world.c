/*
 * The symbolic world: P ranks in one process, each running the real executor over a
 * transport implemented here, and the scheduler that decides what happens next.
 *
 * Zero buffering: isend and irecv only queue a request on its channel (source,
 * destination, tag); a send completes when the scheduler matches it with the oldest
 * receive of the same channel, which is also when the data moves (shuffled, the executor
 * learns of it at a random later test). A program that is only
 * correct because MPI happens to buffer small messages therefore deadlocks here.
 *
 * Every memory access goes through this transport, so it can check bounds (each rank may
 * touch only its own buffers, its executor's scratch memory and its node's segment) and
 * the ordering of segment accesses: a read of segment data written by another node
 * process must come after the reader observed a notification the writer issued after the
 * write, and a write must come after the previous readers and writer released the bytes
 * the same way. Vector clocks over notifications make that exact, including the
 * transitive case (w notifies x, x notifies r).
 */
#include "check/check_int.h"
#include "util/splitmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The smallest tag bound MPI allows: the executor must fit its epochs into it. */
enum { CHK_TAG_UB = 32767 };

int chk_fail(chk_world *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->reason, sizeof w->reason, fmt, ap);
        va_end(ap);
        w->failed = 1;
    }
    return CONVOY_ERR_INTERN;
}

static void mark_dirty(chk_world *w, chk_rank *r)
{
    if (r->dirty || r->done) return;
    r->dirty = 1;
    w->dirtyq[w->ndirty++] = r;
}

/* --- channels ------------------------------------------------------------------------ */

static uint64_t chan_key(int src, int dst, int tag)
{
    return ((uint64_t)(uint32_t)src << 42) | ((uint64_t)(uint32_t)dst << 20) | (uint32_t)tag;
}

static uint64_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static int rehash(chk_world *w)
{
    int cap = w->hashcap ? w->hashcap * 2 : 256;
    int32_t *h = calloc((size_t)cap, sizeof *h);
    if (!h) return CONVOY_ERR_NO_MEM;
    for (int i = 0; i < w->nchans; i++) {
        size_t j = hash64(w->chans[i].key) & (size_t)(cap - 1);
        while (h[j])
            j = (j + 1) & (size_t)(cap - 1);
        h[j] = i + 1;
    }
    free(w->hash);
    w->hash = h;
    w->hashcap = cap;
    return 0;
}

/* Index of the channel with this key, created on first use; -1 when out of memory. */
static int chan_get(chk_world *w, uint64_t key)
{
    if ((w->nchans + 1) * 2 > w->hashcap && rehash(w)) return -1;
    size_t mask = (size_t)w->hashcap - 1, j = hash64(key) & mask;
    while (w->hash[j]) {
        if (w->chans[w->hash[j] - 1].key == key) return w->hash[j] - 1;
        j = (j + 1) & mask;
    }
    if (w->nchans == w->capchans) {
        int cap = w->capchans ? w->capchans * 2 : 256;
        chk_chan *c = realloc(w->chans, (size_t)cap * sizeof *c);
        if (!c) return -1;
        w->chans = c;
        w->capchans = cap;
    }
    chk_chan *c = &w->chans[w->nchans];
    memset(c, 0, sizeof *c);
    c->key = key;
    c->mpos = -1;
    w->hash[j] = w->nchans + 1;
    return w->nchans++;
}

/* Keeps the list of channels with both a send and a receive waiting up to date. */
static int update_match(chk_world *w, int ci)
{
    chk_chan *c = &w->chans[ci];
    int m = c->sh && c->rh;
    if (m && c->mpos < 0) {
        if (w->nmatch == w->capmatch) {
            int cap = w->capmatch ? w->capmatch * 2 : 256;
            int *p = realloc(w->match, (size_t)cap * sizeof *p);
            if (!p) return chk_fail(w, "checker out of memory");
            w->match = p;
            w->capmatch = cap;
        }
        c->mpos = w->nmatch;
        w->match[w->nmatch++] = ci;
    } else if (!m && c->mpos >= 0) {
        int last = w->match[--w->nmatch];
        w->match[c->mpos] = last;
        w->chans[last].mpos = c->mpos;
        c->mpos = -1;
    }
    return 0;
}

/* --- memory: bounds and the node segment --------------------------------------------- */

static int within(uintptr_t p, int64_t bytes, const void *base, int64_t size)
{
    uintptr_t b = (uintptr_t)base;
    return base && p >= b && p - b <= (uintptr_t)size && (uintptr_t)bytes <= b + size - p;
}

static int in_tmp(const convoy__exec *x, uintptr_t p, int64_t bytes)
{
    if (!x->s) return 0;
    if (x->tmp_alloc && within(p, bytes, x->tmp_alloc, x->s->tmp_bytes)) return 1;
    if (x->child)
        for (int i = 0; i < x->s->nsteps; i++)
            if (x->child[i].s && in_tmp(&x->child[i], p, bytes)) return 1;
    return 0;
}

/* Says where an out-of-bounds pointer points, relative to the nearest memory of rank r. */
static void where(const chk_rank *r, uintptr_t p, char *buf, size_t len)
{
    const chk_node *nd = &r->w->nodes[r->node];
    const void *base[4] = {r->sendbuf, r->recvbuf, r->running ? r->x.tmp_alloc : NULL, nd->seg};
    int64_t size[4] = {r->sbytes, r->rbytes, r->running && r->x.s ? r->x.s->tmp_bytes : 0,
                       nd->bytes};
    static const char *const name[4] = {"send buffer", "receive buffer", "scratch memory",
                                        "node segment"};
    const int64_t near = 1 << 20;
    for (int i = 0; i < 4; i++) {
        uintptr_t b = (uintptr_t)base[i];
        if (!base[i]) continue;
        int64_t off = p >= b ? (int64_t)(p - b) : -(int64_t)(b - p);
        if (off >= -near && off <= size[i] + near) {
            snprintf(buf, len, "at offset %lld of its %s of %lld bytes", (long long)off, name[i],
                     (long long)size[i]);
            return;
        }
    }
    snprintf(buf, len, "not near any of its buffers%s",
             r->w->inplace ? " (the send buffer is MPI_IN_PLACE)" : "");
}

/* Checks that [ptr, ptr+bytes) is memory rank r may access; *shm_off >= 0 if it lies in
 * the node segment. */
static int resolve(chk_rank *r, const void *ptr, int64_t bytes, int write, const char *what,
                   int64_t *shm_off)
{
    chk_world *w = r->w;
    const chk_node *nd = &w->nodes[r->node];
    uintptr_t p = (uintptr_t)ptr;
    *shm_off = -1;
    if (bytes < 0) return chk_fail(w, "rank %d: %s of %lld bytes", r->rank, what, (long long)bytes);
    if (bytes == 0) return 0;
    if (within(p, bytes, r->sendbuf, r->sbytes)) {
        if (write) return chk_fail(w, "rank %d: %s writes into the send buffer", r->rank, what);
        return 0;
    }
    if (within(p, bytes, r->recvbuf, r->rbytes)) return 0;
    if (within(p, bytes, nd->seg, nd->bytes)) {
        *shm_off = (int64_t)(p - (uintptr_t)nd->seg);
        return 0;
    }
    if (r->running && in_tmp(&r->x, p, bytes)) return 0;
    char at[256];
    where(r, p, at, sizeof at);
    return chk_fail(w, "rank %d: %s of %lld bytes out of bounds, %s", r->rank, what,
                    (long long)bytes, at);
}

/* --- causality: who has heard from whom ---------------------------------------------- */

static uint64_t *know_of(const chk_world *w, int rank)
{
    return w->know + (size_t)rank * (size_t)w->kw;
}

/* Rank r learns what a message or notification of operation op carried. One of a later
 * operation (a peer that went on first: alternating schedules, shm_alt) carries all that
 * its sender knew when it finished r's operation, which know_check found to be every
 * rank: causality is transitive across operations. */
static void know_merge(chk_world *w, chk_rank *r, int op, const uint64_t *set)
{
    if (op < r->op) return;
    uint64_t *k = know_of(w, r->rank);
    for (int i = 0; i < w->kw; i++)
        k[i] |= op > r->op ? ~UINT64_C(0) : set[i];
}

static void know_reset(chk_world *w, chk_rank *r)
{
    uint64_t *k = know_of(w, r->rank);
    memset(k, 0, (size_t)w->kw * sizeof *k);
    k[r->rank / 64] |= 1ULL << (r->rank % 64);
}

/* Rank r finished its operation: it must have heard from every rank. */
static void know_check(chk_world *w, chk_rank *r)
{
    const uint64_t *k = know_of(w, r->rank);
    char miss[256];
    size_t used = 0;
    int nmiss = 0;
    miss[0] = '\0';
    for (int q = 0; q < w->P; q++) {
        if (k[q / 64] >> (q % 64) & 1) continue;
        if (nmiss++ < 8 && used + 16 < sizeof miss) {
            int n = snprintf(miss + used, sizeof miss - used, "%s%d", used ? "," : "", q);
            if (n > 0) used += (size_t)n;
        }
    }
    if (!nmiss) return;
    chk_fail(w,
             "causality: rank %d completes %s without having heard from %d rank%s {%s%s} (a "
             "barrier must not complete anywhere before every rank entered it)",
             r->rank, w->ops > 1 ? "an operation" : "the barrier", nmiss, nmiss == 1 ? "" : "s",
             miss, nmiss > 8 ? ",..." : "");
}

static int node_world_rank(const chk_world *w, int node, int nr)
{
    return convoy__topo_rank_at(w->topo, node, nr);
}

/* A read of segment bytes [off, off+len) by rank r; pending: the read lasts until the
 * request completes (a send from the segment). */
static int shm_read(chk_world *w, chk_rank *r, int64_t off, int64_t len, int pending)
{
    chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    const uint32_t *vc = nd->vc + (size_t)a * n;
    for (int64_t b = off; b < off + len; b++) {
        int wr = nd->wr[b];
        if (wr < 0)
            return chk_fail(w,
                            "read of the segment before its notification: rank %d reads node %d "
                            "segment offset %lld, which no process wrote",
                            r->rank, r->node, (long long)b);
        if (wr != a && vc[wr] < nd->wneed[b])
            return chk_fail(w,
                            "read of the segment before its notification: writer rank %d, "
                            "reader rank %d, node %d segment offset %lld",
                            node_world_rank(w, r->node, wr), r->rank, r->node, (long long)b);
    }
    uint32_t st = pending ? CHK_PENDING : vc[a] + 1;
    for (int64_t b = off; b < off + len; b++)
        nd->rneed[b * n + a] = st;
    return 0;
}

/* A write of segment bytes by rank r; pending: the data lands any time until the request
 * completes (a receive into the segment). */
static int shm_write(chk_world *w, chk_rank *r, int64_t off, int64_t len, int pending)
{
    chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    const uint32_t *vc = nd->vc + (size_t)a * n;
    for (int64_t b = off; b < off + len; b++) {
        int wr = nd->wr[b];
        if (wr >= 0 && wr != a && vc[wr] < nd->wneed[b])
            return chk_fail(w,
                            "write to the segment races with an earlier write: rank %d wrote node "
                            "%d segment offset %lld, rank %d overwrites it before seeing a "
                            "notification issued after that write",
                            node_world_rank(w, r->node, wr), r->node, (long long)b, r->rank);
        for (int q = 0; q < n; q++) {
            uint32_t need = nd->rneed[b * n + q];
            if (q != a && need && vc[q] < need)
                return chk_fail(w,
                                "write to the segment before the previous read of it was "
                                "released: reader rank %d, writer rank %d, node %d segment "
                                "offset %lld (no notification from the reader after its read)",
                                node_world_rank(w, r->node, q), r->rank, r->node, (long long)b);
        }
    }
    for (int64_t b = off; b < off + len; b++) {
        nd->wr[b] = a;
        nd->wneed[b] = pending ? CHK_PENDING : vc[a] + 1;
        memset(nd->rneed + b * n, 0, (size_t)n * sizeof *nd->rneed);
    }
    return 0;
}

/* A request on the segment completed: its access is over as of now. */
static void shm_complete(chk_world *w, chk_req *q)
{
    chk_rank *r = q->owner;
    chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    uint32_t now = nd->vc[(size_t)a * n + a] + 1;
    for (int64_t b = q->shm_off; b < q->shm_off + q->bytes; b++) {
        if (q->is_send) {
            if (nd->rneed[b * n + a] == CHK_PENDING) nd->rneed[b * n + a] = now;
        } else if (nd->wr[b] == a && nd->wneed[b] == CHK_PENDING) {
            nd->wneed[b] = now;
        }
    }
}

/* --- single copy: node peers reading a rank's buffers (cross-memory attach) ----------- */

/* Offset of [p, p+bytes) in rank r's send-then-receive buffer space, or -1. */
static int64_t x_off(const chk_rank *r, const void *p, int64_t bytes)
{
    const uintptr_t q = (uintptr_t)p;
    if (bytes <= 0) return -1;
    if (within(q, bytes, r->sendbuf, r->sbytes)) return (int64_t)(q - (uintptr_t)r->sendbuf);
    if (within(q, bytes, r->recvbuf, r->rbytes))
        return r->sbytes + (int64_t)(q - (uintptr_t)r->recvbuf);
    return -1;
}

/* Does reader q (node rank) still hold byte b of r's buffers: has r not seen q's
 * notification after its read? Returns the reader or -1. */
static int x_held(const chk_world *w, const chk_rank *r, int64_t b)
{
    const chk_node *nd = &w->nodes[r->node];
    const int n = nd->n;
    const uint32_t *vc = nd->vc + (size_t)r->nrank * n;
    for (int q = 0; q < n; q++) {
        const uint32_t need = r->xr[b * n + q];
        if (q != r->nrank && need && vc[q] < need) return q;
    }
    return -1;
}

/* Rank r writes [p, p+bytes) (pending: a receive lands there until it completes): no node
 * peer may still be reading it, and readers of the new data must see r's next notification. */
static int x_write(chk_world *w, chk_rank *r, const void *p, int64_t bytes, int pending)
{
    const int64_t off = r->xw ? x_off(r, p, bytes) : -1;
    if (off < 0) return 0;
    const chk_node *nd = &w->nodes[r->node];
    const int n = nd->n;
    for (int64_t b = off; b < off + bytes; b++) {
        const int q = x_held(w, r, b);
        if (q >= 0)
            return chk_fail(w,
                            "rank %d overwrites byte %lld of its buffers that rank %d read "
                            "(cross-memory attach) before seeing the reader's notification "
                            "after the read",
                            r->rank, (long long)b, node_world_rank(w, r->node, q));
        r->xw[b] = pending ? CHK_PENDING : nd->vc[(size_t)r->nrank * n + r->nrank] + 1;
        memset(r->xr + b * n, 0, (size_t)n * sizeof *r->xr);
    }
    return 0;
}

/* A receive into r's buffers completed: its data is there as of now. */
static void x_complete(chk_world *w, chk_rank *r, const chk_req *q)
{
    const chk_node *nd = &w->nodes[r->node];
    const uint32_t now = nd->vc[(size_t)r->nrank * nd->n + r->nrank] + 1;
    for (int64_t k = 0; k < q->nblk; k++) {
        const int64_t len = q->blk[2 * k + 1], off = x_off(r, q->buf + q->blk[2 * k], len);
        for (int64_t b = off; off >= 0 && b < off + len; b++)
            if (r->xw[b] == CHK_PENDING) r->xw[b] = now;
    }
}

/* Rank r finishes its operation (its buffers go back to the user): every node peer that
 * read them must have said so. */
static void x_release(chk_world *w, chk_rank *r)
{
    for (int64_t b = 0; r->xw && b < r->sbytes + r->rbytes; b++) {
        const int q = x_held(w, r, b);
        if (q >= 0) {
            chk_fail(w,
                     "rank %d finishes while rank %d may still read byte %lld of its buffers "
                     "(no notification from the reader after its read)",
                     r->rank, node_world_rank(w, r->node, q), (long long)b);
            return;
        }
    }
}

static int x_start(chk_world *w, chk_rank *r)
{
    const int64_t nb = r->sbytes + r->rbytes, n = w->nodes[r->node].n;
    free(r->xw);
    free(r->xr);
    r->xw = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *r->xw);
    r->xr = calloc((size_t)(nb > 0 ? nb : 1) * (size_t)n, sizeof *r->xr);
    if (!r->xw || !r->xr) return chk_fail(w, "checker out of memory");
    /* The send buffer holds data from the start (its address still has to be published);
     * the receive buffer only in place. */
    for (int64_t b = 0; b < nb; b++)
        r->xw[b] = b < r->sbytes || !r->sendbuf ? 0 : CHK_NEVER;
    return 0;
}

static int t_publish(void *ctx, const void *addr, void *slot)
{
    chk_rank *r = ctx;
    int64_t so;
    if (resolve(r, slot, 8, 1, "published address word", &so)) return CONVOY_ERR_INTERN;
    if (so < 0) return chk_fail(r->w, "rank %d publishes an address outside the segment", r->rank);
    if (shm_write(r->w, r, so, 8, 0)) return CONVOY_ERR_INTERN;
    const uint64_t a = (uint64_t)(uintptr_t)addr;
    memcpy(slot, &a, sizeof a);
    return 0;
}

static int t_peer_read(void *ctx, int q, const void *slot, void *dst, int64_t bytes)
{
    chk_rank *r = ctx;
    chk_world *w = r->w;
    const chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    int64_t so, dso;
    if (q < 0 || q >= n || q == a)
        return chk_fail(w, "rank %d: read from node rank %d (node of %d)", r->rank, q, n);
    if (resolve(r, slot, 8, 0, "read's address word", &so)) return CONVOY_ERR_INTERN;
    if (so < 0) return chk_fail(w, "rank %d reads an address from outside the segment", r->rank);
    if (shm_read(w, r, so, 8, 0)) return CONVOY_ERR_INTERN;
    if (bytes == 0) return 0;
    uint64_t addr;
    memcpy(&addr, slot, sizeof addr);
    chk_rank *o = &w->r[node_world_rank(w, r->node, q)];
    const void *src = (const void *)(uintptr_t)addr;
    const int64_t off = o->running && o->op == r->op ? x_off(o, src, bytes) : -1;
    if (off < 0)
        return chk_fail(w,
                        "rank %d reads %lld bytes from rank %d outside that rank's buffers of "
                        "this operation (a stale or wrong address, or the owner finished)",
                        r->rank, (long long)bytes, o->rank);
    const uint32_t *vc = nd->vc + (size_t)a * n;
    for (int64_t b = off; b < off + bytes; b++)
        if (o->xw[b] >= CHK_NEVER || vc[q] < o->xw[b])
            return chk_fail(w,
                            "read before the owner's notification that the data is in place: "
                            "rank %d reads byte %lld of rank %d's buffers (%s)",
                            r->rank, (long long)b, o->rank,
                            o->xw[b] == CHK_NEVER     ? "never written"
                            : o->xw[b] == CHK_PENDING ? "a receive is landing there"
                                                      : "written after the last notification "
                                                        "the reader saw");
    if (resolve(r, dst, bytes, 1, "read target", &dso) ||
        (dso >= 0 && shm_write(w, r, dso, bytes, 0)) || x_write(w, r, dst, bytes, 0))
        return CONVOY_ERR_INTERN;
    for (int64_t b = off; b < off + bytes; b++)
        o->xr[b * n + a] = vc[a] + 1;
    memcpy(dst, src, (size_t)bytes);
    return 0;
}

/* --- the transport ------------------------------------------------------------------- */

static void req_free(chk_req *q)
{
    if (q && q->blk != q->one) free(q->blk);
    free(q);
}

/* Posts a message of count elements of tslot at buf; shape: a strided or indexed region
 * (a derived type: its blocks, ix an indexed region's (byte offset, elements) pairs), or
 * NULL for one contiguous block. */
static int post(chk_rank *r, int is_send, int peer, int tag, void *buf, int64_t count, int tslot,
                const convoy__region *shape, const int64_t *ix, void **req)
{
    chk_world *w = r->w;
    const char *what = is_send ? "send" : "receive";
    *req = NULL;
    if (peer < 0 || peer >= w->P)
        return chk_fail(w, "rank %d: %s with peer %d (communicator of %d)", r->rank, what, peer,
                        w->P);
    if (tag < 0 || tag > CHK_TAG_UB)
        return chk_fail(w, "rank %d: %s with tag %d beyond the tag bound %d", r->rank, what, tag,
                        CHK_TAG_UB);
    if (tslot < 0 || tslot >= CONVOY_NTSLOT || count < 0)
        return chk_fail(w, "rank %d: %s of %lld elements of type slot %d", r->rank, what,
                        (long long)count, tslot);
    const int64_t tb = w->tslot_bytes[tslot];
    const int indexed = shape && shape->indexed;
    if (indexed && !ix) return chk_fail(w, "rank %d: indexed %s without its table", r->rank, what);
    const int64_t nblk = indexed ? shape->nblk : shape && shape->nblk > 1 ? shape->nblk : 1;
    if (nblk < 1) return chk_fail(w, "rank %d: %s of %lld blocks", r->rank, what, (long long)nblk);
    chk_req *q = calloc(1, sizeof *q + (size_t)w->kw * sizeof(uint64_t));
    if (!q) return chk_fail(w, "checker out of memory");
    q->blk = nblk > 1 ? malloc(2 * (size_t)nblk * sizeof *q->blk) : q->one;
    if (!q->blk) {
        req_free(q);
        return chk_fail(w, "checker out of memory");
    }
    /* The blocks: a strided region's nblk of count elements stride bytes apart, an indexed
     * one's from its table (their counts must add up to the region's), else one. */
    int64_t total = 0, so = -1;
    for (int64_t k = 0; k < nblk; k++) {
        q->blk[2 * k] = indexed ? ix[2 * k] : k * (shape ? shape->stride : 0);
        q->blk[2 * k + 1] = (indexed ? ix[2 * k + 1] : count) * tb;
        if (q->blk[2 * k + 1] < 0) {
            const long long b = (long long)q->blk[2 * k + 1];
            req_free(q);
            return chk_fail(w, "rank %d: %s block of %lld bytes", r->rank, what, b);
        }
        total += q->blk[2 * k + 1];
    }
    if (indexed && total != count * tb) {
        req_free(q);
        return chk_fail(w, "rank %d: indexed %s of %lld bytes whose blocks hold %lld", r->rank,
                        what, (long long)(count * tb), (long long)total);
    }
    /* Every block in bounds; a derived type's never in the segment. */
    for (int64_t k = 0; k < nblk; k++) {
        if (resolve(r, (char *)buf + q->blk[2 * k], q->blk[2 * k + 1], !is_send, what, &so)) {
            req_free(q);
            return CONVOY_ERR_INTERN;
        }
        if (so >= 0 && nblk > 1) {
            req_free(q);
            return chk_fail(w, "rank %d: %s of %lld blocks in the node segment", r->rank, what,
                            (long long)nblk);
        }
    }
    if (so >= 0 && (is_send ? shm_read(w, r, so, total, 1) : shm_write(w, r, so, total, 1))) {
        req_free(q);
        return CONVOY_ERR_INTERN;
    }
    for (int64_t k = 0; !is_send && k < nblk; k++)
        if (x_write(w, r, (char *)buf + q->blk[2 * k], q->blk[2 * k + 1], 1)) {
            req_free(q);
            return CONVOY_ERR_INTERN;
        }
    if (is_send && w->topo->node_of[peer] != r->node && ++w->inflight > w->inflight_max)
        w->inflight_max = w->inflight;
    int ci = chan_get(w, is_send ? chan_key(r->rank, peer, tag) : chan_key(peer, r->rank, tag));
    if (ci < 0) {
        req_free(q);
        return chk_fail(w, "checker out of memory");
    }
    q->owner = r;
    q->is_send = is_send;
    q->peer = peer;
    q->tag = tag;
    q->chan = ci;
    q->buf = buf;
    q->bytes = total;
    q->nblk = nblk;
    q->seq = w->seq++;
    q->shm_off = so;
    q->x_pending = !is_send && r->xw;
    if (w->sync && is_send) {
        q->know_op = r->op;
        memcpy(q->know, know_of(w, r->rank), (size_t)w->kw * sizeof *q->know);
    }
    chk_chan *c = &w->chans[ci];
    chk_req **head = is_send ? &c->sh : &c->rh, **tail = is_send ? &c->st : &c->rt;
    if (*tail)
        (*tail)->next = q;
    else
        *head = q;
    *tail = q;
    *req = q;
    return update_match(w, ci);
}

static int t_isend(void *ctx, int peer, int tag, const void *buf, int64_t count, int tslot,
                   void **req)
{
    return post(ctx, 1, peer, tag, (void *)buf, count, tslot, NULL, NULL, req);
}

static int t_irecv(void *ctx, int peer, int tag, void *buf, int64_t count, int tslot, void **req)
{
    return post(ctx, 0, peer, tag, buf, count, tslot, NULL, NULL, req);
}

static int t_isendv(void *ctx, int peer, int tag, const void *buf, const convoy__region *r,
                    const int64_t *ix, void **req)
{
    return post(ctx, 1, peer, tag, (void *)buf, r->count, r->tslot, r, ix, req);
}

static int t_irecvv(void *ctx, int peer, int tag, void *buf, const convoy__region *r,
                    const int64_t *ix, void **req)
{
    return post(ctx, 0, peer, tag, buf, r->count, r->tslot, r, ix, req);
}

static int t_test(void *ctx, void **req, int *done)
{
    chk_rank *r = ctx;
    chk_req *q = *req;
    *done = 0;
    if (!q) return chk_fail(r->w, "rank %d: test of a request that does not exist", r->rank);
    if (!q->done) return 0;
    /* MPI matches the messages of a channel in the order they were posted but reports
     * their completion in any order: shuffled, a matched request is found done only now
     * and then (its rank comes back to test it again), so a later message of a channel can
     * be seen done before an earlier one and whatever depends on it start first. */
    if (r->w->mode != CONVOY_CHECK_LOCKSTEP && (convoy__splitmix64(&r->w->rng) & 1)) {
        mark_dirty(r->w, r);
        return 0;
    }
    if (q->shm_off >= 0) shm_complete(r->w, q);
    if (q->x_pending) x_complete(r->w, r, q);
    if (r->w->sync && !q->is_send) know_merge(r->w, r, q->know_op, q->know);
    req_free(q);
    *req = NULL;
    *done = 1;
    return 0;
}

static void unlink_req(chk_world *w, chk_req *q)
{
    chk_chan *c = &w->chans[q->chan];
    chk_req **head = q->is_send ? &c->sh : &c->rh, **tail = q->is_send ? &c->st : &c->rt;
    chk_req *prev = NULL;
    for (chk_req *p = *head; p; prev = p, p = p->next) {
        if (p != q) continue;
        if (prev)
            prev->next = p->next;
        else
            *head = p->next;
        if (*tail == q) *tail = prev;
        break;
    }
    update_match(w, q->chan);
}

static void t_cancel(void *ctx, void **req)
{
    chk_rank *r = ctx;
    chk_req *q = *req;
    if (!q) return;
    if (!q->done) {
        unlink_req(r->w, q);
        if (q->is_send && r->w->topo->node_of[q->peer] != r->node) r->w->inflight--;
    }
    req_free(q);
    *req = NULL;
}

static int overlap(const void *a, int64_t na, const void *b, int64_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na > 0 && nb > 0 && x < y + (uintptr_t)nb && y < x + (uintptr_t)na;
}

static int t_copy(void *ctx, const void *src, int64_t scount, int stslot, void *dst, int64_t dcount,
                  int dtslot)
{
    chk_rank *r = ctx;
    chk_world *w = r->w;
    if (stslot < 0 || stslot >= CONVOY_NTSLOT || dtslot < 0 || dtslot >= CONVOY_NTSLOT ||
        scount < 0 || dcount < 0)
        return chk_fail(w, "rank %d: copy with type slots %d/%d, counts %lld/%lld", r->rank, stslot,
                        dtslot, (long long)scount, (long long)dcount);
    int64_t sb = scount * w->tslot_bytes[stslot], db = dcount * w->tslot_bytes[dtslot], so, dof;
    if (sb != db) {
        char st[128];
        chk_active_step(r, CONVOY_STEP_COPY, st, sizeof st);
        return chk_fail(w,
                        "rank %d, %s: copy of %lld bytes into %lld bytes (type signatures differ)",
                        r->rank, st, (long long)sb, (long long)db);
    }
    if (resolve(r, src, sb, 0, "copy source", &so) || resolve(r, dst, db, 1, "copy target", &dof))
        return CONVOY_ERR_INTERN;
    if (src != dst && overlap(src, sb, dst, db)) {
        char st[128];
        chk_active_step(r, CONVOY_STEP_COPY, st, sizeof st);
        return chk_fail(w, "rank %d, %s: copy between overlapping regions", r->rank, st);
    }
    if (so >= 0 && shm_read(w, r, so, sb, 0)) return CONVOY_ERR_INTERN;
    if (dof >= 0 && shm_write(w, r, dof, db, 0)) return CONVOY_ERR_INTERN;
    if (x_write(w, r, dst, db, 0)) return CONVOY_ERR_INTERN;
    if (sb > 0 && src != dst) memcpy(dst, src, (size_t)sb);
    return 0;
}

static int t_reduce(void *ctx, const void *in, void *inout, int64_t count, int tslot)
{
    chk_rank *r = ctx;
    chk_world *w = r->w;
    if (tslot != CONVOY_T_SEND && tslot != CONVOY_T_RECV)
        return chk_fail(w,
                        "rank %d: reduce on type slot %d (only the operation's datatype "
                        "can be reduced)",
                        r->rank, tslot);
    if (count < 0)
        return chk_fail(w, "rank %d: reduce of %lld elements", r->rank, (long long)count);
    int64_t bytes = count * w->tslot_bytes[tslot], io, oo;
    if (resolve(r, in, bytes, 0, "reduce input", &io) ||
        resolve(r, inout, bytes, 1, "reduce target", &oo))
        return CONVOY_ERR_INTERN;
    if (overlap(in, bytes, inout, bytes)) {
        char st[128];
        chk_active_step(r, CONVOY_STEP_REDUCE, st, sizeof st);
        return chk_fail(w, "rank %d, %s: reduce of a region into itself", r->rank, st);
    }
    if (io >= 0 && shm_read(w, r, io, bytes, 0)) return CONVOY_ERR_INTERN;
    if (oo >= 0 && (shm_read(w, r, oo, bytes, 0) || shm_write(w, r, oo, bytes, 0)))
        return CONVOY_ERR_INTERN;
    if (x_write(w, r, inout, bytes, 0)) return CONVOY_ERR_INTERN;
    if (count == 0) return 0;
    r->reduces++;
    if (!w->reduce)
        return chk_fail(w, "rank %d: reduce in a collective without reduction", r->rank);
    return w->reduce(w, r, in, inout, count);
}

static int t_notify(void *ctx, int flag, uint64_t value)
{
    chk_rank *r = ctx;
    chk_world *w = r->w;
    chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    if (flag < 0 || flag >= nd->nflags)
        return chk_fail(w, "rank %d: notify of flag %d, the node has %d flags per process", r->rank,
                        flag, nd->nflags);
    size_t fi = (size_t)a * nd->nflags + flag;
    if (value < nd->fval[fi])
        return chk_fail(w,
                        "rank %d: notification flag %d goes down from %#llx to %#llx (a waiter "
                        "may already have passed the larger value)",
                        r->rank, flag, (unsigned long long)nd->fval[fi], (unsigned long long)value);
    uint32_t *vc = nd->vc + (size_t)a * n;
    vc[a]++;
    nd->fval[fi] = value;
    memcpy(nd->fvc + fi * n, vc, (size_t)n * sizeof *vc);
    if (w->sync) {
        nd->fknow_op[fi] = r->op;
        memcpy(nd->fknow + fi * (size_t)w->kw, know_of(w, r->rank), (size_t)w->kw * 8);
    }
    /* Whoever waits on this flag may go on now. */
    for (int q = 0; q < n; q++)
        mark_dirty(w, &w->r[node_world_rank(w, r->node, q)]);
    return 0;
}

static int t_flag_test(void *ctx, int q, int flag, uint64_t value, int *done)
{
    chk_rank *r = ctx;
    chk_world *w = r->w;
    chk_node *nd = &w->nodes[r->node];
    const int n = nd->n, a = r->nrank;
    *done = 0;
    if (q < 0 || q >= n || flag < 0 || flag >= nd->nflags)
        return chk_fail(w, "rank %d: wait for node rank %d flag %d (node of %d, %d flags each)",
                        r->rank, q, flag, n, nd->nflags);
    size_t fi = (size_t)q * nd->nflags + flag;
    if (nd->fval[fi] < value) return 0;
    *done = 1;
    /* Acquire: everything the notifier had seen is now seen by r too. */
    uint32_t *vc = nd->vc + (size_t)a * n;
    const uint32_t *fv = nd->fvc + fi * n;
    for (int k = 0; k < n; k++)
        if (fv[k] > vc[k]) vc[k] = fv[k];
    if (w->sync) know_merge(w, r, nd->fknow_op[fi], nd->fknow + fi * (size_t)w->kw);
    return 0;
}

/* --- scheduling ---------------------------------------------------------------------- */

static void do_match(chk_world *w, int ci)
{
    chk_chan *c = &w->chans[ci];
    chk_req *s = c->sh, *d = c->rh;
    c->sh = s->next;
    if (!c->sh) c->st = NULL;
    c->rh = d->next;
    if (!c->rh) c->rt = NULL;
    s->next = d->next = NULL;
    if (update_match(w, ci)) return;
    chk_rank *sr = s->owner, *dr = d->owner;
    if (s->bytes > d->bytes) {
        chk_fail(w,
                 "message truncated: rank %d sends %lld bytes to rank %d (tag %d), the "
                 "receive has room for %lld",
                 sr->rank, (long long)s->bytes, dr->rank, s->tag, (long long)d->bytes);
        return;
    }
    /* The data moves as one stream of bytes from the sender's blocks into the receiver's,
     * each side's blocks in their order (a derived type's type map). */
    for (int64_t k = 0, sb = 0, so = 0, db = 0, doff = 0; k < s->bytes;) {
        while (so == s->blk[2 * sb + 1])
            sb++, so = 0;
        while (doff == d->blk[2 * db + 1])
            db++, doff = 0;
        int64_t n = s->blk[2 * sb + 1] - so;
        if (n > d->blk[2 * db + 1] - doff) n = d->blk[2 * db + 1] - doff;
        memmove(d->buf + d->blk[2 * db] + doff, s->buf + s->blk[2 * sb] + so, (size_t)n);
        k += n, so += n, doff += n;
    }
    if (w->sync) {
        d->know_op = s->know_op;
        memcpy(d->know, s->know, (size_t)w->kw * sizeof *d->know);
    }
    s->done = d->done = 1;
    sr->msgs_sent++;
    sr->bytes_sent += s->bytes;
    dr->msgs_recv++;
    dr->bytes_recv += s->bytes;
    if (sr->node != dr->node) {
        sr->inter_sent += s->bytes;
        dr->inter_recv += s->bytes;
        sr->inter_msgs_sent++;
        dr->inter_msgs_recv++;
        w->inflight--;
        w->round_inter++;
        w->round_out[sr->node]++;
        w->round_in[dr->node]++;
    }
    mark_dirty(w, sr);
    mark_dirty(w, dr);
}

static int start_op(chk_world *w, chk_rank *r)
{
    const int k = r->op, i = k * w->P + r->rank;
    const convoy__schedule *s = w->sched[r->rank];
    const int inplace = w->inplace && (w->inplace_rank < 0 || w->inplace_rank == r->rank);
    r->sendbuf = inplace ? NULL : w->sbuf[i];
    r->sbytes = inplace ? 0 : w->sbytes[i];
    r->recvbuf = w->rbuf[i];
    r->rbytes = w->rbytes[i];
    r->t.shm_seq = (s->nflags > 0 || s->shm_bytes > 0) ? (uint64_t)k : 0;
    /* Every operation runs the same schedule: an alternating one alternates from the
     * first on, so from the second on the gate waits for the one before the last only. */
    r->t.shm_alt = s->shm_alt && s->shm_bytes <= w->nodes[r->node].half;
    r->t.shm_prev_alt = r->t.shm_alt && k > 0;
    int rc = convoy__exec_start(&r->x, s, &r->t, &r->topo, r->sendbuf, r->recvbuf,
                                w->epoch0 + (uint64_t)k);
    if (rc) return chk_fail(w, "rank %d: convoy__exec_start failed with %d", r->rank, rc);
    r->running = 1;
    if (w->xreads && x_start(w, r)) return CONVOY_ERR_INTERN;
    if (w->sync) know_reset(w, r);
    if (r->x.tmp_alloc) memset(r->x.tmp_alloc, CHK_POISON, (size_t)s->tmp_bytes);
    mark_dirty(w, r);
    return 0;
}

static void progress(chk_world *w, chk_rank *r)
{
    int done = 0;
    /* Its own last notification may have queued a rank that finished in the same call. */
    if (r->done || !r->running) return;
    int rc = convoy__exec_progress(&r->x, &done);
    if (w->failed) return;
    if (rc) {
        char d[1024];
        convoy__exec_describe(&r->x, d, sizeof d);
        chk_fail(w, "rank %d: the executor returned error %d (%s)", r->rank, rc, d);
        return;
    }
    if (!done) return;
    x_release(w, r);
    if (w->failed) return;
    if (w->sync) {
        know_check(w, r);
        if (w->failed) return;
    }
    convoy__exec_free(&r->x);
    r->running = 0;
    if (++r->op < w->ops) {
        start_op(w, r);
    } else {
        r->done = 1;
        w->ndone++;
    }
}

static void deadlock(chk_world *w)
{
    char buf[sizeof w->reason];
    size_t len = 0;
    int omitted = 0;
    len += (size_t)snprintf(buf, sizeof buf, "deadlock: %d of %d ranks cannot finish",
                            w->P - w->ndone, w->P);
    /* Every stuck rank with the steps it waits for, as long as the line has room. */
    for (int i = 0; i < w->P; i++) {
        chk_rank *r = &w->r[i];
        if (r->done) continue;
        char d[400], one[480];
        convoy__exec_describe(&r->x, d, sizeof d);
        int n = snprintf(
            one, sizeof one, "; rank %d%s: %s", r->rank,
            w->ops > 1 ? (r->op ? " (in a later operation)" : " (first operation)") : "", d);
        if (n > 0 && len + (size_t)n + 40 < sizeof buf) {
            memcpy(buf + len, one, (size_t)n + 1);
            len += (size_t)n;
        } else {
            omitted++;
        }
    }
    if (omitted) snprintf(buf + len, sizeof buf - len, "; and %d more ranks", omitted);
    chk_fail(w, "%s", buf);
}

struct cand {
    int64_t seq;
    int ci;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Lockstep: all local work first, then one round in which every rank completes at most
 * one send and one receive (w->ports of each for multi-port algorithms), oldest sends
 * first. */
static void run_lockstep(chk_world *w)
{
    struct cand *cand = NULL;
    int capcand = 0;
    for (;;) {
        while (w->ndirty > 0 && !w->failed) {
            chk_rank *r = w->dirtyq[--w->ndirty];
            r->dirty = 0;
            progress(w, r);
        }
        if (w->failed || w->ndone == w->P || w->nmatch == 0) break;
        if (w->nmatch > capcand) {
            capcand = w->nmatch * 2;
            struct cand *c = realloc(cand, (size_t)capcand * sizeof *c);
            if (!c) {
                chk_fail(w, "checker out of memory");
                break;
            }
            cand = c;
        }
        int m = w->nmatch;
        for (int k = 0; k < m; k++) {
            cand[k].ci = w->match[k];
            cand[k].seq = w->chans[w->match[k]].sh->seq;
        }
        qsort(cand, (size_t)m, sizeof *cand, cand_cmp);
        const int64_t round = ++w->rounds;
        memset(w->round_in, 0, (size_t)w->nnodes * sizeof *w->round_in);
        memset(w->round_out, 0, (size_t)w->nnodes * sizeof *w->round_out);
        w->round_inter = 0;
        for (int k = 0; k < m && !w->failed; k++) {
            chk_chan *c = &w->chans[cand[k].ci];
            if (!c->sh || !c->rh) continue;
            chk_rank *s = c->sh->owner, *d = c->rh->owner;
            const int ports = w->ports > 1 ? w->ports : 1;
            if ((s->send_round == round && s->send_cnt >= ports) ||
                (d->recv_round == round && d->recv_cnt >= ports))
                continue;
            if (s->send_round != round) s->send_cnt = 0;
            if (d->recv_round != round) d->recv_cnt = 0;
            s->send_round = round;
            d->recv_round = round;
            s->send_cnt++;
            d->recv_cnt++;
            do_match(w, cand[k].ci);
        }
        if (w->round_inter > w->round_inter_max) w->round_inter_max = w->round_inter;
        for (int n = 0; n < w->nnodes && !w->failed; n++) {
            if (w->round_in[n] > w->round_in_max) w->round_in_max = w->round_in[n];
            if (w->round_out[n] > w->round_out_max) w->round_out_max = w->round_out[n];
            if (w->smp_check && (w->round_in[n] > 1 || w->round_out[n] > 1))
                chk_fail(w,
                         "not SMP-aware: in round %lld node %d receives %lld and sends %lld "
                         "inter-node messages (at most one each)",
                         (long long)round, n, (long long)w->round_in[n],
                         (long long)w->round_out[n]);
        }
    }
    free(cand);
}

/* Shuffle: each step progresses a random rank with work or completes a random matchable
 * pair, and t_test reports a completed request at a random later test, so completions
 * reach the executors in every possible order over the seeds. */
static void run_shuffle(chk_world *w)
{
    while (!w->failed) {
        int n = w->ndirty + w->nmatch;
        if (n == 0) break;
        int k = (int)(convoy__splitmix64(&w->rng) % (uint64_t)n);
        if (k < w->ndirty) {
            chk_rank *r = w->dirtyq[k];
            w->dirtyq[k] = w->dirtyq[--w->ndirty];
            r->dirty = 0;
            progress(w, r);
        } else {
            do_match(w, w->match[k - w->ndirty]);
        }
    }
}

int chk_world_run(chk_world *w)
{
    for (int i = 0; i < w->P && !w->failed; i++)
        start_op(w, &w->r[i]);
    if (!w->failed) {
        if (w->mode == CONVOY_CHECK_LOCKSTEP)
            run_lockstep(w);
        else
            run_shuffle(w);
    }
    if (!w->failed && w->ndone < w->P) deadlock(w);
    return 0;
}

static int has_reads(const convoy__schedule *s)
{
    for (int i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == CONVOY_STEP_READ ||
            (s->steps[i].kind == CONVOY_STEP_NESTED && has_reads(s->children[s->steps[i].child])))
            return 1;
    return 0;
}

int chk_world_init(chk_world *w, uint64_t seed)
{
    const int P = w->P;
    w->rng = seed * 0x2545f4914f6cdd1dULL + 0x1234567ULL;
    w->dirtyq = malloc((size_t)P * sizeof *w->dirtyq);
    w->nodes = calloc((size_t)w->nnodes, sizeof *w->nodes);
    w->round_in = calloc((size_t)w->nnodes, sizeof *w->round_in);
    w->round_out = calloc((size_t)w->nnodes, sizeof *w->round_out);
    if (!w->dirtyq || !w->nodes || !w->round_in || !w->round_out) return CONVOY_ERR_NO_MEM;
    if (w->sync) {
        w->kw = (P + 63) / 64;
        w->know = calloc((size_t)P * (size_t)w->kw, sizeof *w->know);
        if (!w->know) return CONVOY_ERR_NO_MEM;
    }
    w->xreads = 0;
    for (int i = 0; i < P; i++)
        w->xreads |= has_reads(w->sched[i]);
    for (int nn = 0; nn < w->nnodes; nn++) {
        chk_node *nd = &w->nodes[nn];
        nd->n = w->topo->node_size[nn];
        int nflags = 0, alt = 0;
        for (int q = 0; q < nd->n; q++) {
            const convoy__schedule *s = w->sched[node_world_rank(w, nn, q)];
            if (s->shm_bytes > nd->bytes) nd->bytes = s->shm_bytes;
            if (s->nflags > nflags) nflags = s->nflags;
            alt |= s->shm_alt;
        }
        /* Alternating schedules: two halves, each as large as the largest footprint (in
         * lines, as the library's halves), the second used by odd operations. */
        if (alt) {
            nd->half = (nd->bytes + 63) / 64 * 64;
            nd->bytes = 2 * nd->half;
        }
        nd->nflags = nflags + 1; /* the executor's release flag comes first */
        const size_t n = (size_t)nd->n, nb = (size_t)nd->bytes;
        nd->fval = calloc(n * (size_t)nd->nflags, sizeof *nd->fval);
        nd->fvc = calloc(n * (size_t)nd->nflags * n, sizeof *nd->fvc);
        nd->vc = calloc(n * n, sizeof *nd->vc);
        if (!nd->fval || !nd->fvc || !nd->vc) return CONVOY_ERR_NO_MEM;
        if (w->sync) {
            nd->fknow = calloc(n * (size_t)nd->nflags * (size_t)w->kw, sizeof *nd->fknow);
            nd->fknow_op = calloc(n * (size_t)nd->nflags, sizeof *nd->fknow_op);
            if (!nd->fknow || !nd->fknow_op) return CONVOY_ERR_NO_MEM;
        }
        if (nb > 0) {
            nd->seg = malloc(nb);
            nd->wr = malloc(nb * sizeof *nd->wr);
            nd->wneed = calloc(nb, sizeof *nd->wneed);
            nd->rneed = calloc(nb * n, sizeof *nd->rneed);
            if (!nd->seg || !nd->wr || !nd->wneed || !nd->rneed) return CONVOY_ERR_NO_MEM;
            memset(nd->seg, CHK_POISON, nb);
            for (size_t b = 0; b < nb; b++)
                nd->wr[b] = -1;
        }
    }
    for (int i = 0; i < P; i++) {
        chk_rank *r = &w->r[i];
        r->w = w;
        r->rank = i;
        r->node = w->topo->node_of[i];
        r->nrank = w->topo->node_rank_of[i];
        convoy__transport *t = &r->t;
        memset(t, 0, sizeof *t);
        t->ctx = r;
        t->tag_ub = CHK_TAG_UB;
        t->isend = t_isend;
        t->irecv = t_irecv;
        t->isendv = t_isendv;
        t->irecvv = t_irecvv;
        t->test = t_test;
        t->cancel = t_cancel;
        t->copy = t_copy;
        t->reduce = t_reduce;
        t->shm_base = w->nodes[r->node].seg;
        t->shm_half = w->nodes[r->node].half;
        t->notify = t_notify;
        t->flag_test = t_flag_test;
        t->publish = t_publish;
        t->peer_read = t_peer_read;
    }
    return 0;
}

void chk_world_free(chk_world *w)
{
    for (int i = 0; w->r && i < w->P; i++) {
        if (w->r[i].running) convoy__exec_free(&w->r[i].x);
        free(w->r[i].xw);
        free(w->r[i].xr);
        w->r[i].xw = w->r[i].xr = NULL;
    }
    /* Requests the executors no longer know of (there should be none). */
    for (int c = 0; c < w->nchans; c++) {
        for (chk_req *q = w->chans[c].sh, *nx; q; q = nx) {
            nx = q->next;
            req_free(q);
        }
        for (chk_req *q = w->chans[c].rh, *nx; q; q = nx) {
            nx = q->next;
            req_free(q);
        }
    }
    for (int nn = 0; w->nodes && nn < w->nnodes; nn++) {
        chk_node *nd = &w->nodes[nn];
        free(nd->seg);
        free(nd->wr);
        free(nd->wneed);
        free(nd->rneed);
        free(nd->fval);
        free(nd->fvc);
        free(nd->vc);
        free(nd->fknow);
        free(nd->fknow_op);
    }
    free(w->nodes);
    free(w->chans);
    free(w->hash);
    free(w->match);
    free(w->dirtyq);
    free(w->round_in);
    free(w->round_out);
    free(w->know);
    w->know = NULL;
    w->nodes = NULL;
    w->chans = NULL;
    w->hash = NULL;
    w->match = NULL;
    w->dirtyq = NULL;
    w->round_in = w->round_out = NULL;
}

static int describe_active(const convoy__exec *x, int kind, char *buf, size_t len)
{
    if (x->s && x->straight && x->pc < x->s->nsteps && x->s->steps[x->pc].kind == kind) {
        snprintf(buf, len, "step %d", x->pc); /* (step order: the step at hand) */
        return 1;
    }
    if (!x->s || !x->state) return 0;
    for (int i = 0; i < x->s->nsteps; i++) {
        if (x->state[i] != CONVOY_S_ACTIVE) continue;
        const convoy__step *st = &x->s->steps[i];
        if (st->kind == kind) {
            snprintf(buf, len, "step %d", i);
            return 1;
        }
        if (st->kind == CONVOY_STEP_NESTED && x->child && x->child[i].s) {
            char in[96];
            if (describe_active(&x->child[i], kind, in, sizeof in)) {
                snprintf(buf, len, "%s of the nested schedule at step %d", in, i);
                return 1;
            }
        }
    }
    return 0;
}

void chk_active_step(const chk_rank *r, int kind, char *buf, size_t len)
{
    if (!r->running || !describe_active(&r->x, kind, buf, len)) snprintf(buf, len, "unknown step");
}
