/*
 * convoy_Reduce_scatter_block, convoy_Reduce_scatter and their nonblocking and persistent
 * forms. The builders are shared: they see the per-rank counts (equal for the block form),
 * their offsets in the vector and the whole vector's length (coll/coll.h); the block form
 * has its own table (CONVOY_COLL_REDUCE_SCATTER_BLOCK, listing the general form's
 * algorithms too) and CONVOY_REDUCE_SCATTER_BLOCK_ALGO.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

/* The block form keeps r->rcounts NULL and its count in r->count; the native call is the
 * block form's own (a library may serve it better than the general one). */
static int native_start(convoy_request r)
{
    const void *sb = r->inplace ? MPI_IN_PLACE : r->sendbuf;
    if (!r->rcounts)
        return CONVOY_NATIVE(r, PMPI_Reduce_scatter_block, PMPI_Ireduce_scatter_block, sb,
                             r->recvbuf, r->count, r->rtype, r->op, r->comm);
    return CONVOY_NATIVE(r, PMPI_Reduce_scatter, PMPI_Ireduce_scatter, sb, r->recvbuf, r->rcounts,
                         r->rtype, r->op, r->comm);
}

/* A leading '~' marks a hash: the message says it differs, without values. */
static const char *const agree_names[] = {"~the receive counts (bytes per rank)", "datatype size",
                                          "op", "MPI_IN_PLACE use"};
static const char *const agree_names_block[] = {"recvcount", "datatype size", "op",
                                                "MPI_IN_PLACE use"};

static int plan(convoy_request r)
{
    const int size = r->cs->topo.size;
    int commute, rc;
    if ((rc = PMPI_Op_commutative(r->op, &commute))) return rc;
    convoy__args a = {.coll = r->coll,
                      .topo = &r->cs->topo,
                      .inplace = r->inplace,
                      .commutative = commute,
                      .idempotent = convoy__op_is_idempotent(r->op)};
    if ((rc = convoy__describe_type(r->rtype, &a.rtype))) return rc;
    a.stype = a.rtype;
    int64_t *c64 = convoy__req_i64(r, 2 * (int64_t)size);
    if (!c64) return MPI_ERR_NO_MEM;
    uint64_t h = 0xcbf29ce484222325ULL;
    int64_t total = 0;
    for (int i = 0; i < size; i++) {
        c64[i] = r->rcounts ? r->rcounts[i] : r->count;
        c64[size + i] = total;
        total += c64[i];
        h = (h ^ (uint64_t)(c64[i] * a.rtype.size)) * 0x100000001b3ULL;
    }
    a.count = total;
    a.rcounts = c64;
    a.displs = c64 + size;
    rc = convoy__plan(r, &a);
    if (!rc && !r->deferred && r->cfg.check_args) {
        /* Predefined ops by index; user ops only by commutativity (handles differ). */
        int64_t v[4] = {r->rcounts ? (int64_t)(h >> 1) : r->count, a.rtype.size,
                        convoy__op_is_predefined(r->op) ? convoy__op_is_predefined(r->op)
                                                        : -1 - commute,
                        r->inplace};
        convoy__agree_set(r, v, 4, r->rcounts ? agree_names : agree_names_block);
    }
    return rc;
}

/* recvcounts NULL: the block form with recvcount elements per rank. */
static int setup(const char *what, const void *sendbuf, void *recvbuf, int recvcount,
                 const int recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int mode,
                 convoy_request *out)
{
    int rc, size;
    if ((rc = convoy__check_comm(comm))) return rc;
    /* The counts describe the local group's blocks (for an intercommunicator too). */
    PMPI_Comm_size(comm, &size);
    int64_t total = 0;
    if (recvcounts) {
        for (int i = 0; i < size; i++) {
            if (recvcounts[i] < 0) return MPI_ERR_COUNT;
            total += recvcounts[i];
        }
    } else {
        if (recvcount < 0) return MPI_ERR_COUNT;
        total = (int64_t)recvcount * size;
    }
    if ((rc = convoy__check_type(dt))) return rc;
    if ((rc = convoy__check_op(op, dt))) return rc;
    if (total > 0 && sendbuf == recvbuf) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new(what, comm, &r))) return rc;
    r->coll = recvcounts ? CONVOY_COLL_REDUCE_SCATTER : CONVOY_COLL_REDUCE_SCATTER_BLOCK;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = sendbuf == MPI_IN_PLACE;
    r->sendbuf = r->inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = recvcounts ? 0 : recvcount;
    if (recvcounts) {
        if (convoy__req_counts(r, size, 0)) {
            convoy__req_free(r);
            return MPI_ERR_NO_MEM;
        }
        memcpy(r->rcounts, recvcounts, (size_t)size * sizeof *r->rcounts);
    }
    return convoy__req_reduction_route(r, op, dt, mode, out);
}

static int entry(const char *what, const void *sendbuf, void *recvbuf, int recvcount,
                 const int recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int mode,
                 convoy_request *request)
{
    const convoy__call call = {.coll = recvcounts ? CONVOY_COLL_REDUCE_SCATTER
                                                  : CONVOY_COLL_REDUCE_SCATTER_BLOCK,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = recvcount,
                               .stype = dt,
                               .rtype = dt,
                               .op = op,
                               .v1 = recvcounts};
    convoy_request r;
    int rc;
    if (mode != CONVOY_BLOCKING && !request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    if (mode == CONVOY_BLOCKING && convoy__fast_try(comm, &call, &rc))
        return convoy__error(comm, rc);
    rc = setup(what, sendbuf, recvbuf, recvcount, recvcounts, dt, op, comm, mode, &r);
    if (!rc && mode == CONVOY_BLOCKING)
        rc = convoy__req_launch_call(r, &call);
    else if (!rc)
        rc = convoy__req_launch(r, mode, request);
    return convoy__error(comm, rc);
}

static const char block_name[] = "Reduce_scatter_block", v_name[] = "Reduce_scatter";

int convoy_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return entry(block_name, sendbuf, recvbuf, recvcount, NULL, datatype, op, comm, CONVOY_BLOCKING,
                 NULL);
}

int convoy_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 convoy_request *request)
{
    return entry(block_name, sendbuf, recvbuf, recvcount, NULL, datatype, op, comm,
                 CONVOY_NONBLOCKING, request);
}

int convoy_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     convoy_request *request)
{
    (void)info;
    return entry(block_name, sendbuf, recvbuf, recvcount, NULL, datatype, op, comm,
                 CONVOY_PERSISTENT, request);
}

int convoy_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!recvcounts && !convoy__check_comm(comm)) return convoy__error(comm, MPI_ERR_ARG);
    return entry(v_name, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, CONVOY_BLOCKING,
                 NULL);
}

int convoy_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, convoy_request *request)
{
    if (!recvcounts && !convoy__check_comm(comm)) return convoy__error(comm, MPI_ERR_ARG);
    return entry(v_name, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, CONVOY_NONBLOCKING,
                 request);
}

int convoy_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               convoy_request *request)
{
    (void)info;
    if (!recvcounts && !convoy__check_comm(comm)) return convoy__error(comm, MPI_ERR_ARG);
    return entry(v_name, sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, CONVOY_PERSISTENT,
                 request);
}
