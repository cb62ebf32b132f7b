/* convoy_Allgatherv, convoy_Allgather and their nonblocking and persistent forms. The
 * builders are shared (Allgather gives them equal counts); each has its own algorithm table
 * (CONVOY_COLL_ALLGATHER lists the allgatherv algorithms too) and CONVOY_<COLL>_ALGO. */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

static int native_start(convoy_request r)
{
    const void *sb = r->inplace ? MPI_IN_PLACE : r->sendbuf;
    if (r->regular)
        return CONVOY_NATIVE(r, PMPI_Allgather, PMPI_Iallgather, sb, r->count, r->stype, r->recvbuf,
                             r->rcounts[0], r->rtype, r->comm);
    return CONVOY_NATIVE(r, PMPI_Allgatherv, PMPI_Iallgatherv, sb, r->count, r->stype, r->recvbuf,
                         r->rcounts, r->displs, r->rtype, r->comm);
}

/* A leading '~' marks a hash: the message says it differs, without values. */
static const char *const agree_names[] = {"~the receive counts (bytes per rank)",
                                          "MPI_IN_PLACE use",
                                          "whether sendcount matches recvcounts[rank] (1: yes)"};

static int plan(convoy_request r)
{
    const int size = r->cs->topo.size, rank = r->cs->topo.rank;
    convoy__args a = {
        .coll = r->coll, .topo = &r->cs->topo, .count = r->count, .inplace = r->inplace};
    int rc;
    if ((rc = convoy__describe_type(r->stype, &a.stype)) ||
        (rc = convoy__describe_type(r->rtype, &a.rtype)))
        return rc;
    /* MPI requires the send signature to match this rank's receive block. Under
     * CONVOY_CHECK_ARGS the verdict joins the agreement, so that no other rank hangs. */
    if (!r->inplace && a.stype.size * r->count != a.rtype.size * r->rcounts[rank]) {
        if (!r->cfg.check_args || r->deferred) return MPI_ERR_TRUNCATE;
        r->local_err = MPI_ERR_TRUNCATE;
    }
    int64_t *c64 = convoy__req_i64(r, 2 * (int64_t)size);
    if (!c64) return MPI_ERR_NO_MEM;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < size; i++) {
        c64[i] = r->rcounts[i];
        c64[size + i] = r->regular ? (int64_t)i * r->rcounts[0] : r->displs[i];
        h = (h ^ (uint64_t)(c64[i] * a.rtype.size)) * 0x100000001b3ULL;
    }
    a.rcounts = c64;
    a.displs = c64 + size;
    rc = r->local_err ? MPI_SUCCESS : convoy__plan(r, &a);
    if (!rc && !r->deferred && r->cfg.check_args) {
        /* Every rank must see the same byte count for every rank. */
        int64_t v[3] = {(int64_t)(h >> 1), r->inplace, !r->local_err};
        convoy__agree_set(r, v, 3, agree_names);
    }
    return rc;
}

/* regular (Allgather): recvcounts points to the one recvcount, displs is unused. */
static int setup(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                 int regular, int mode, convoy_request *out)
{
    int rc, size, inter;
    if ((rc = convoy__check_comm(comm))) return rc;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    const int inplace = sendbuf == MPI_IN_PLACE;
    if (!recvcounts || (!regular && !displs)) return MPI_ERR_ARG;
    for (int i = 0; i < (regular ? 1 : size); i++)
        if (recvcounts[i] < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(recvtype))) return rc;
    if (!inplace && sendcount < 0) return MPI_ERR_COUNT;
    if (!inplace && (rc = convoy__check_type(sendtype))) return rc;

    convoy_request r;
    if ((rc = convoy__req_new(regular ? "Allgather" : "Allgatherv", comm, &r))) return rc;
    r->regular = regular;
    r->coll = regular ? CONVOY_COLL_ALLGATHER : CONVOY_COLL_ALLGATHERV;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = inplace;
    r->sendbuf = inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = inplace ? 0 : sendcount;
    if ((rc = convoy__req_counts(r, size, !regular))) goto fail;
    for (int i = 0; i < size; i++)
        r->rcounts[i] = recvcounts[regular ? 0 : i];
    if (!regular) memcpy(r->displs, displs, (size_t)size * sizeof *r->displs);
    r->stype = inplace ? MPI_DATATYPE_NULL : sendtype;
    r->rtype = recvtype;
    r->op_type = MPI_DATATYPE_NULL;
    if (r->persistent) {
        /* The user may free derived datatypes while a persistent request lives. */
        r->owns_types = 1;
        r->stype = r->rtype = MPI_DATATYPE_NULL;
        if ((rc = convoy__type_keep(recvtype, &r->rtype)) ||
            (!inplace && (rc = convoy__type_keep(sendtype, &r->stype))))
            goto fail;
    }
    if ((rc = convoy__req_route(r, mode))) goto fail;
    *out = r;
    return MPI_SUCCESS;
fail:
    convoy__req_free(r);
    return rc;
}

int convoy_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      MPI_Comm comm)
{
    const convoy__call call = {.coll = CONVOY_COLL_ALLGATHERV,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = sendcount,
                               .stype = sendtype,
                               .rtype = recvtype,
                               .v1 = recvcounts,
                               .v2 = displs};
    convoy_request r;
    int rc;
    if (recvcounts && displs && convoy__fast_try(comm, &call, &rc)) return convoy__error(comm, rc);
    rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0,
               CONVOY_BLOCKING, &r);
    if (!rc) rc = convoy__req_launch_call(r, &call);
    return convoy__error(comm, rc);
}

int convoy_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0,
                   CONVOY_NONBLOCKING, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_NONBLOCKING, request);
    return convoy__error(comm, rc);
}

int convoy_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0,
                   CONVOY_PERSISTENT, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_PERSISTENT, request);
    return convoy__error(comm, rc);
}

int convoy_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const convoy__call call = {.coll = CONVOY_COLL_ALLGATHER,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = sendcount,
                               .count2 = recvcount,
                               .stype = sendtype,
                               .rtype = recvtype};
    convoy_request r;
    int rc;
    if (convoy__fast_try(comm, &call, &rc)) return convoy__error(comm, rc);
    rc = setup(sendbuf, sendcount, sendtype, recvbuf, &recvcount, NULL, recvtype, comm, 1,
               CONVOY_BLOCKING, &r);
    if (!rc) rc = convoy__req_launch_call(r, &call);
    return convoy__error(comm, rc);
}

int convoy_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, &recvcount, NULL, recvtype, comm, 1,
                   CONVOY_NONBLOCKING, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_NONBLOCKING, request);
    return convoy__error(comm, rc);
}

int convoy_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          convoy_request *request)
{
    (void)info;
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, &recvcount, NULL, recvtype, comm, 1,
                   CONVOY_PERSISTENT, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_PERSISTENT, request);
    return convoy__error(comm, rc);
}
