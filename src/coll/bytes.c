/*
 * The call in bytes, for algorithms that cut a rank's block at element positions (Allgatherv
 * node_segment and pipelined, Bcast scatter_allgather, lane and klane_pipeline: their public
 * builders, cost models and explanations wrap their own with the functions here).
 *
 * MPI asks the ranks of a call only for equal type signatures, so they may describe the same
 * data with different datatypes (rank 0 receiving pairs of ints, the others ints). A cut
 * after ceil(E / n) elements then falls on different bytes on different ranks, and the
 * pieces no longer match (wrong data, MPI_ERR_TRUNCATE, a hang). Built on the call in
 * bytes, every rank cuts at the same byte:
 * - a rank whose types are dense (each element its size, nothing around it: the basic and
 *   contiguous types) sees its buffers as bytes: the builder gets byte counts and
 *   displacements, and its regions' type slots become CONVOY_T_BYTE (the whole tree);
 * - a rank with a type that is not dense packs (as MPICH's Bcast does): the schedule built
 *   on bytes runs on scratch memory; its data to send (Allgatherv's send block, in place
 *   its own block; the Bcast root's buffer) is packed there first, and the received data
 *   (Allgatherv's blocks, the Bcast buffer off the root) unpacked last. The schedule tree
 *   keeps its shape (no nesting added), so tag blocks agree with ranks that do not pack.
 * The cost models and explanations get the byte counts too, so every rank predicts the same
 * times and makes the same choice.
 * Cost: none for dense types; a pack and an unpack of the data on a rank that packs, and the
 * packed data in scratch.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int dense(const convoy__dtype *d)
{
    return d->size == 0 || (d->size == d->extent && d->true_lb == 0 && d->true_extent == d->size);
}

static void bytes_slots(convoy__schedule *s)
{
    for (int i = 0; i < s->nsteps; i++)
        s->steps[i].src.tslot = s->steps[i].dst.tslot = CONVOY_T_BYTE;
    for (int i = 0; i < s->nchildren; i++)
        bytes_slots(s->children[i]);
}

/* Where a rank that packs keeps the byte schedule's buffers in its scratch memory (-1: the
 * user's buffer, dense), after the byte schedule's own scratch. */
typedef struct packing {
    int64_t send_off, recv_off;
} packing;

static convoy__region packed_reg(const void *ctx, convoy__region r)
{
    const packing *p = ctx;
    const int64_t off = r.buf == CONVOY_BUF_SEND   ? p->send_off
                        : r.buf == CONVOY_BUF_RECV ? p->recv_off
                                                   : -1;
    if (off >= 0) {
        r.buf = CONVOY_BUF_TMP;
        r.off += off;
    }
    r.tslot = CONVOY_T_BYTE;
    return r;
}

/* s: the pack steps (already added), then x's steps on the packed buffers (those without
 * dependencies after every pack step), then the unpack steps (unpack below). x's children
 * move to s. */
static void append_packed(convoy__schedule *s, convoy__schedule *x, const packing *p)
{
    s->children = x->children;
    s->nchildren = x->nchildren;
    s->nnested = x->nnested;
    s->map = x->map;
    s->nmap = x->nmap;
    x->children = NULL;
    x->nchildren = 0;
    x->map = NULL;
    for (int i = 0; i < s->nchildren; i++)
        bytes_slots(s->children[i]);
    convoy__append_steps(s, x, 0, s->nsteps, packed_reg, p);
    if (x->nflags > s->nflags) s->nflags = x->nflags;
    s->shm_bytes = x->shm_bytes;
    s->shm_alt = x->shm_alt;
    s->tag_blocks = x->tag_blocks;
}

/* The unpack steps: n copies, the first after every step nothing depends on, each next one
 * after the one before. */
static int unpack_deps(const convoy__schedule *s, int **out)
{
    char *used = calloc((size_t)(s->nsteps > 0 ? s->nsteps : 1), 1);
    int *d = malloc((size_t)(s->nsteps > 0 ? s->nsteps : 1) * sizeof *d), n = 0;
    if (!used || !d) {
        free(used);
        free(d);
        return -1;
    }
    for (int i = 0; i < s->ndeps; i++)
        used[s->deps[i]] = 1;
    for (int i = 0; i < s->nsteps; i++)
        if (!used[i]) d[n++] = i;
    free(used);
    *out = d;
    return n;
}

static void add_unpack(convoy__schedule *s, int *last, convoy__region src, convoy__region dst)
{
    if (*last >= 0) {
        *last = convoy__add_copy(s, src, dst, CONVOY_DEP(*last));
        return;
    }
    int *d = NULL, n = unpack_deps(s, &d);
    if (n < 0) {
        s->err = CONVOY_ERR_NO_MEM;
        return;
    }
    *last = convoy__add_copy(s, src, dst, n, d);
    free(d);
}

static int64_t round64(int64_t n)
{
    return (n + 63) / 64 * 64;
}

/* b: the call a in bytes; its count vectors in v (2 p entries, Allgather(v) only; NULL
 * for Bcast), the displacements packed in rank order unless the receive type is dense.
 * Returns the bytes of the Bcast buffer or of all blocks together. */
static int64_t byte_args(const convoy__args *a, int recv_dense, convoy__args *b, int64_t *v)
{
    const convoy__dtype byte = {.size = 1, .extent = 1, .true_lb = 0, .true_extent = 1};
    *b = *a;
    b->stype = b->rtype = byte;
    if (!v) return b->count = a->count * a->rtype.size;
    const int p = a->topo->size;
    int64_t total = 0;
    for (int i = 0; i < p; i++) {
        v[i] = a->rcounts[i] * a->rtype.size;
        v[p + i] = recv_dense ? a->displs[i] * a->rtype.extent : total;
        total += v[i];
    }
    b->count = a->count * a->stype.size;
    b->rcounts = v;
    b->displs = v + p;
    return total;
}

enum { VEC_STACK = 128 };

/* The count vectors' memory for byte_args: buf (VEC_STACK entries) when 2 p entries fit,
 * else malloc'd (NULL: none needed, or out of memory: *err); release with vectors_free. */
static int64_t *vectors(const convoy__args *a, int64_t *buf, int *err)
{
    *err = 0;
    if (convoy__coll_base(a->coll) != CONVOY_COLL_ALLGATHERV) return NULL;
    const int p = a->topo->size;
    int64_t *v = 2 * p <= VEC_STACK ? buf : malloc(2 * (size_t)p * sizeof *v);
    *err = !v;
    return v;
}

static void vectors_free(int64_t *v, const int64_t *buf)
{
    if (v != buf) free(v);
}

/* (A model that rounded to elements, Bcast lane's pieces, node_segment's units, pipelined's
 * block, predicted other times on a rank with other elements.) */
double convoy__cost_in_bytes(const convoy__args *a, const convoy__machine *m, convoy__cost cost)
{
    int64_t buf[VEC_STACK], *v;
    int err;
    if ((v = vectors(a, buf, &err)), err) return INFINITY;
    convoy__args b;
    byte_args(a, 1, &b, v);
    const double t = cost(&b, m);
    vectors_free(v, buf);
    return t;
}

void convoy__explain_in_bytes(const convoy__args *a, char *buf, size_t len,
                              convoy__explainer explain)
{
    int64_t vb[VEC_STACK], *v;
    int err;
    if ((v = vectors(a, vb, &err)), err) {
        snprintf(buf, len, "(out of memory)");
        return;
    }
    convoy__args b;
    byte_args(a, 1, &b, v);
    explain(&b, buf, len);
    vectors_free(v, vb);
}

int convoy__build_in_bytes(const convoy__args *a, convoy__schedule *s, convoy__builder build)
{
    const int agv = convoy__coll_base(a->coll) == CONVOY_COLL_ALLGATHERV;
    if (!agv && a->coll != CONVOY_COLL_BCAST) return CONVOY_ERR_INTERN;
    const int p = a->topo->size, me = a->topo->rank;
    const int send_dense = !agv || a->inplace || dense(&a->stype), recv_dense = dense(&a->rtype);
    int64_t vb[VEC_STACK], *v;
    int err;
    if ((v = vectors(a, vb, &err)), err) return CONVOY_ERR_NO_MEM;
    convoy__args b;
    const int64_t total = byte_args(a, recv_dense, &b, v);
    int rc;
    if (send_dense && recv_dense) {
        rc = build(&b, s);
        if (!rc) bytes_slots(s);
        vectors_free(v, vb);
        return rc;
    }
    convoy__schedule x;
    convoy__sched_init(&x);
    rc = build(&b, &x);
    if (!rc) rc = x.err;
    if (rc) {
        convoy__sched_free(&x);
        vectors_free(v, vb);
        return rc;
    }
    packing pk = {-1, -1};
    int64_t end = round64(x.tmp_bytes);
    if (!recv_dense) pk.recv_off = end, end = round64(end + total);
    if (!send_dense) pk.send_off = end, end += b.count;
    s->tmp_bytes = end;
    /* Pack what this rank contributes. */
    if (!send_dense && a->count > 0)
        convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                         convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, pk.send_off, b.count), 0, NULL);
    if (!recv_dense && agv && a->inplace && a->rcounts[me] > 0)
        convoy__add_copy(s,
                         convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                     a->displs[me] * a->rtype.extent, a->rcounts[me]),
                         convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, pk.recv_off + v[p + me], v[me]),
                         0, NULL);
    if (!recv_dense && !agv && me == a->root && a->count > 0)
        convoy__add_copy(s, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count),
                         convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, pk.recv_off, total), 0, NULL);
    append_packed(s, &x, &pk);
    convoy__sched_free(&x);
    /* Unpack what it received. */
    int last = -1;
    for (int i = 0; !recv_dense && agv && i < p; i++)
        if (a->rcounts[i] > 0 && !(a->inplace && i == me))
            add_unpack(s, &last,
                       convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, pk.recv_off + v[p + i], v[i]),
                       convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * a->rtype.extent,
                                   a->rcounts[i]));
    if (!recv_dense && !agv && me != a->root && a->count > 0)
        add_unpack(s, &last, convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, pk.recv_off, total),
                   convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count));
    vectors_free(v, vb);
    return s->err;
}
