/* convoy_Alltoall, convoy_Ialltoall, convoy_Alltoall_init. */
#include "api/internal.h"

#include <stdlib.h>

/* r->count: sendcount; r->rcounts[0]: recvcount (one entry). */
static int native_start(convoy_request r)
{
    return CONVOY_NATIVE(r, PMPI_Alltoall, PMPI_Ialltoall, r->inplace ? MPI_IN_PLACE : r->sendbuf,
                         r->count, r->stype, r->recvbuf, r->rcounts[0], r->rtype, r->comm);
}

static const char *const agree_names[] = {"bytes per block (recvcount times the type size)",
                                          "MPI_IN_PLACE use",
                                          "whether the send and receive blocks match (1: yes)"};

static int plan(convoy_request r)
{
    const int size = r->cs->topo.size;
    convoy__args a = {.coll = CONVOY_COLL_ALLTOALL, .topo = &r->cs->topo, .inplace = r->inplace};
    int rc;
    if ((rc = convoy__describe_type(r->rtype, &a.rtype))) return rc;
    if (r->inplace)
        a.stype = a.rtype;
    else if ((rc = convoy__describe_type(r->stype, &a.stype)))
        return rc;
    a.count = r->inplace ? r->rcounts[0] : r->count;
    /* MPI requires the send block's signature to match the receive block's. Under
     * CONVOY_CHECK_ARGS the verdict joins the agreement, so that no other rank hangs. */
    if (a.stype.size * a.count != a.rtype.size * r->rcounts[0]) {
        if (!r->cfg.check_args || r->deferred) return MPI_ERR_TRUNCATE;
        r->local_err = MPI_ERR_TRUNCATE;
    }
    int64_t *c64 = convoy__req_i64(r, 2 * (int64_t)size);
    if (!c64) return MPI_ERR_NO_MEM;
    for (int i = 0; i < size; i++) {
        c64[i] = r->rcounts[0];
        c64[size + i] = (int64_t)i * r->rcounts[0];
    }
    a.rcounts = c64;
    a.displs = c64 + size;
    rc = r->local_err ? MPI_SUCCESS : convoy__plan(r, &a);
    if (!rc && !r->deferred && r->cfg.check_args) {
        int64_t v[3] = {r->rcounts[0] * a.rtype.size, r->inplace, !r->local_err};
        convoy__agree_set(r, v, 3, agree_names);
    }
    return rc;
}

static int setup(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int mode, convoy_request *out)
{
    int rc;
    if ((rc = convoy__check_comm(comm))) return rc;
    const int inplace = sendbuf == MPI_IN_PLACE;
    if (recvcount < 0 || (!inplace && sendcount < 0)) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(recvtype))) return rc;
    if (!inplace && (rc = convoy__check_type(sendtype))) return rc;
    if (!inplace && recvcount > 0 && sendbuf == recvbuf) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new("Alltoall", comm, &r))) return rc;
    r->coll = CONVOY_COLL_ALLTOALL;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = inplace;
    r->sendbuf = inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = inplace ? 0 : sendcount;
    r->stype = inplace ? MPI_DATATYPE_NULL : sendtype;
    r->rtype = recvtype;
    r->op_type = MPI_DATATYPE_NULL;
    if ((rc = convoy__req_counts(r, 1, 0))) goto fail;
    r->rcounts[0] = recvcount;
    if (r->persistent) {
        /* The user may free derived datatypes while a persistent request lives. */
        r->owns_types = 1;
        r->stype = r->rtype = MPI_DATATYPE_NULL;
        if ((rc = convoy__type_keep(recvtype, &r->rtype)) ||
            (!inplace && (rc = convoy__type_keep(sendtype, &r->stype))))
            goto fail;
    }
    /* In place the data to send is the receive buffer's: builders that stage it in
     * scratch address it through the send type slot, which is then the receive type. */
    if (inplace) r->stype = r->rtype;
    if ((rc = convoy__req_route(r, mode))) goto fail;
    *out = r;
    return MPI_SUCCESS;
fail:
    convoy__req_free(r);
    return rc;
}

static int entry(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int mode,
                 convoy_request *request)
{
    const convoy__call call = {.coll = CONVOY_COLL_ALLTOALL,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = sendcount,
                               .count2 = recvcount,
                               .stype = sendtype,
                               .rtype = recvtype};
    convoy_request r;
    int rc;
    if (mode != CONVOY_BLOCKING && !request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    if (mode == CONVOY_BLOCKING && convoy__fast_try(comm, &call, &rc))
        return convoy__error(comm, rc);
    rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, mode, &r);
    if (!rc && mode == CONVOY_BLOCKING)
        rc = convoy__req_launch_call(r, &call);
    else if (!rc)
        rc = convoy__req_launch(r, mode, request);
    return convoy__error(comm, rc);
}

int convoy_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, CONVOY_BLOCKING,
                 NULL);
}

int convoy_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, convoy_request *request)
{
    return entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                 CONVOY_NONBLOCKING, request);
}

int convoy_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         convoy_request *request)
{
    (void)info;
    return entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                 CONVOY_PERSISTENT, request);
}
