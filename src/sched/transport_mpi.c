/* The PMPI transport (see transport_mpi.h). */
#include "sched/transport_mpi.h"
#include "platform/platform.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Request) <= sizeof(void *), "an MPI_Request must fit a request slot");

static int count_ok(int64_t count)
{
    return count >= 0 && count <= INT_MAX;
}

static int isend(void *ctx, int peer, int tag, const void *buf, int64_t count, int tslot,
                 void **req)
{
    convoy__mpi_transport *m = ctx;
    MPI_Request r;
    if (!count_ok(count)) return MPI_ERR_COUNT;
    int rc = PMPI_Isend(buf, (int)count, m->type[tslot], peer, tag, m->comm, &r);
    if (!rc) memcpy(req, &r, sizeof r);
    return rc;
}

static int irecv(void *ctx, int peer, int tag, void *buf, int64_t count, int tslot, void **req)
{
    convoy__mpi_transport *m = ctx;
    MPI_Request r;
    if (!count_ok(count)) return MPI_ERR_COUNT;
    int rc = PMPI_Irecv(buf, (int)count, m->type[tslot], peer, tag, m->comm, &r);
    if (!rc) memcpy(req, &r, sizeof r);
    return rc;
}

/* A strided region's message: an hvector of the slot's type (papers/004's vector types);
 * an indexed one's: an hindexed type of its blocks (the same for uneven displacements).
 * Made per message and freed once posted (MPI keeps it alive until the message is done). */
static int post_blocks(convoy__mpi_transport *m, int send, int peer, int tag, void *buf,
                       const convoy__region *r, const int64_t *ix, void **req)
{
    MPI_Datatype vt, el = r->tslot == CONVOY_T_BYTE ? MPI_BYTE : m->type[r->tslot];
    MPI_Request q;
    int rc;
    if (r->indexed) {
        int len[32] = {0};
        MPI_Aint disp[32] = {0};
        int *pl = len;
        MPI_Aint *pd = disp;
        if (r->nblk > 32) {
            pl = malloc((size_t)r->nblk * sizeof *pl);
            pd = malloc((size_t)r->nblk * sizeof *pd);
        }
        rc = pl && pd ? 0 : MPI_ERR_NO_MEM;
        for (int k = 0; !rc && k < r->nblk; k++) {
            if (!count_ok(ix[2 * k + 1])) rc = MPI_ERR_COUNT;
            pl[k] = (int)ix[2 * k + 1];
            pd[k] = (MPI_Aint)ix[2 * k];
        }
        if (!rc) rc = PMPI_Type_create_hindexed(r->nblk, pl, pd, el, &vt);
        if (pl != len) free(pl), free(pd);
    } else {
        rc = count_ok(r->count)
                 ? PMPI_Type_create_hvector(r->nblk, (int)r->count, (MPI_Aint)r->stride, el, &vt)
                 : MPI_ERR_COUNT;
    }
    if (rc) return rc;
    rc = PMPI_Type_commit(&vt);
    if (!rc)
        rc = send ? PMPI_Isend(buf, 1, vt, peer, tag, m->comm, &q)
                  : PMPI_Irecv(buf, 1, vt, peer, tag, m->comm, &q);
    PMPI_Type_free(&vt);
    if (!rc) memcpy(req, &q, sizeof q);
    return rc;
}

static int isendv(void *ctx, int peer, int tag, const void *buf, const convoy__region *r,
                  const int64_t *ix, void **req)
{
    return post_blocks(ctx, 1, peer, tag, (void *)buf, r, ix, req);
}

static int irecvv(void *ctx, int peer, int tag, void *buf, const convoy__region *r,
                  const int64_t *ix, void **req)
{
    return post_blocks(ctx, 0, peer, tag, buf, r, ix, req);
}

static int test(void *ctx, void **req, int *done)
{
    (void)ctx;
    MPI_Request r;
    memcpy(&r, req, sizeof r);
    if (r == MPI_REQUEST_NULL) return *done = 1, 0; /* wait_any's; SMPI leaves *done unset */
    int rc = PMPI_Test(&r, done, MPI_STATUS_IGNORE);
    memcpy(req, &r, sizeof r);
    return rc;
}

static int wait_any(void *ctx, void **const *slots, int n)
{
    (void)ctx;
    MPI_Request r[CONVOY_WAIT_ANY_MAX];
    int idx, rc;
    if (n > CONVOY_WAIT_ANY_MAX) return MPI_ERR_INTERN;
    for (int k = 0; k < n; k++)
        memcpy(&r[k], slots[k], sizeof r[k]);
    if ((rc = PMPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE)) || idx == MPI_UNDEFINED) return rc;
    memcpy(slots[idx], &r[idx], sizeof r[idx]); /* MPI_REQUEST_NULL: tests as done */
    return 0;
}

static void cancel(void *ctx, void **req)
{
    (void)ctx;
    MPI_Request r;
    memcpy(&r, req, sizeof r);
    if (r == MPI_REQUEST_NULL) return;
    PMPI_Cancel(&r);
    PMPI_Request_free(&r);
}

/* Copies between two typed regions of equal type signature: memcpy when both are plain
 * blocks of the same size, otherwise pack and unpack (through a scratch buffer only when
 * neither side is plain bytes). */
static int copy(void *ctx, const void *src, int64_t scount, int stslot, void *dst, int64_t dcount,
                int dtslot)
{
    convoy__mpi_transport *m = ctx;
    int64_t bytes = scount * m->size[stslot];
    if (bytes != dcount * m->size[dtslot]) return MPI_ERR_TRUNCATE;
    if (bytes == 0) return 0;
    convoy__plat_charge_copy(bytes);
    if (m->contig[stslot] && m->contig[dtslot]) {
        memmove(dst, src, (size_t)bytes);
        return 0;
    }
    if (!count_ok(scount) || !count_ok(dcount) || bytes > INT_MAX) return MPI_ERR_COUNT;
    int pos = 0, rc;
    if (m->contig[dtslot])
        return PMPI_Pack(src, (int)scount, m->type[stslot], dst, (int)bytes, &pos, m->comm);
    if (m->contig[stslot])
        return PMPI_Unpack(src, (int)bytes, &pos, dst, (int)dcount, m->type[dtslot], m->comm);
    void *tmp = malloc((size_t)bytes);
    if (!tmp) return MPI_ERR_NO_MEM;
    rc = PMPI_Pack(src, (int)scount, m->type[stslot], tmp, (int)bytes, &pos, m->comm);
    pos = 0;
    if (!rc) rc = PMPI_Unpack(tmp, (int)bytes, &pos, dst, (int)dcount, m->type[dtslot], m->comm);
    free(tmp);
    return rc;
}

static int reduce(void *ctx, const void *in, void *inout, int64_t count, int tslot)
{
    convoy__mpi_transport *m = ctx;
    if (!count_ok(count)) return MPI_ERR_COUNT;
    (void)tslot; /* reductions are on the operation's datatype */
    convoy__plat_charge_reduce(count, m->op_type);
    return convoy__local_reduce(m->local, in, inout, count, m->op_type, m->op);
}

static int notify(void *ctx, int flag, uint64_t value)
{
    convoy__mpi_transport *m = ctx;
    convoy__shm_notify(m->shm, flag, value);
    return 0;
}

static int flag_test(void *ctx, int node_peer, int flag, uint64_t value, int *done)
{
    convoy__mpi_transport *m = ctx;
    *done = convoy__shm_reached(m->shm, node_peer, flag, value);
    return 0;
}

static int publish(void *ctx, const void *addr, void *slot)
{
    (void)ctx;
    /* Read by node peers after the NOTIFY that follows (its release orders this store). */
    const uint64_t a = (uint64_t)(uintptr_t)addr;
    memcpy(slot, &a, sizeof a);
    return 0;
}

static int peer_read(void *ctx, int node_peer, const void *slot, void *dst, int64_t bytes)
{
    convoy__mpi_transport *m = ctx;
    uint64_t a;
    memcpy(&a, slot, sizeof a);
    convoy__plat_charge_copy(bytes);
    return convoy__shm_cma_read(m->shm, node_peer, a, dst, bytes);
}

static void describe(convoy__mpi_transport *m, int slot, MPI_Datatype t)
{
    MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
    m->type[slot] = t;
    if (t == MPI_DATATYPE_NULL) return;
    PMPI_Type_size_x(t, &size);
    PMPI_Type_get_extent_x(t, &lb, &extent);
    PMPI_Type_get_true_extent_x(t, &tlb, &textent);
    m->size[slot] = size;
    /* count elements form one block iff an element is its own size with nothing around. */
    m->contig[slot] = size == extent && lb == 0 && tlb == 0 && textent == size;
}

void convoy__mpi_transport_init(convoy__mpi_transport *m, MPI_Comm comm, int tag_ub,
                                MPI_Datatype stype, MPI_Datatype rtype, MPI_Op op,
                                MPI_Datatype op_type, convoy__shm *shm, uint64_t shm_seq)
{
    memset(m, 0, sizeof *m);
    m->comm = comm;
    m->op = op;
    m->op_type = op_type;
    m->local = convoy__local_op_find(op, op_type);
    m->shm = shm;
    /* Each description is three MPI queries: once per distinct type of the call. */
    describe(m, CONVOY_T_SEND, stype);
    if (rtype == stype) {
        m->type[CONVOY_T_RECV] = rtype;
        m->size[CONVOY_T_RECV] = m->size[CONVOY_T_SEND];
        m->contig[CONVOY_T_RECV] = m->contig[CONVOY_T_SEND];
    } else {
        describe(m, CONVOY_T_RECV, rtype);
    }
    /* Packed data: a typed message may be received as MPI_PACKED and a message of packed
     * data received typed (MPI's type matching allows both; lane/hier rooted builders move
     * a block typed on one end and packed on the other). */
    m->type[CONVOY_T_BYTE] = MPI_PACKED;
    m->size[CONVOY_T_BYTE] = 1;
    m->contig[CONVOY_T_BYTE] = 1;
    convoy__transport *t = &m->t;
    t->ctx = m;
    t->tag_ub = tag_ub;
    t->isend = isend;
    t->irecv = irecv;
    t->test = test;
    t->cancel = cancel;
    t->wait_any = wait_any;
    t->isendv = isendv;
    t->irecvv = irecvv;
    t->copy = copy;
    t->reduce = reduce;
    if (shm) {
        t->shm_base = shm->data;
        t->shm_seq = shm_seq;
        t->shm_half = convoy__shm_half(shm); /* (shm_alt: the caller's, per operation) */
        t->notify = notify;
        t->flag_test = flag_test;
        t->publish = publish;
        t->peer_read = peer_read;
    }
}
