/* convoy_Allgatherv, convoy_Iallgatherv, convoy_Allgatherv_init. */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

static int native_start(convoy_request r)
{
    return PMPI_Iallgatherv(r->sendbuf, r->count, r->stype, r->recvbuf, r->rcounts, r->displs,
                            r->rtype, r->comm, &r->native_req);
}

static const char *const agree_names[] = {"the receive counts (bytes per rank)",
                                          "MPI_IN_PLACE use"};

enum { BLOCKING, NONBLOCKING, PERSISTENT };

static int setup(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                 MPI_Comm comm, int mode, convoy_request *out)
{
    int rc, size, rank;
    if ((rc = convoy__check_comm(comm))) return rc;
    if (mode != BLOCKING && !out) return MPI_ERR_REQUEST;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    int inter;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &size);
    const int inplace = sendbuf == MPI_IN_PLACE;
    if (!recvcounts || !displs) return MPI_ERR_ARG;
    for (int i = 0; i < size; i++)
        if (recvcounts[i] < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(recvtype))) return rc;
    if (!inplace) {
        if (sendcount < 0) return MPI_ERR_COUNT;
        if ((rc = convoy__check_type(sendtype))) return rc;
    }

    convoy_request r;
    if ((rc = convoy__req_new("Allgatherv", comm, &r))) return rc;
    r->persistent = mode == PERSISTENT;
    r->sendbuf = sendbuf;
    r->recvbuf = recvbuf;
    r->count = inplace ? 0 : sendcount;
    r->stype = inplace ? MPI_DATATYPE_NULL : sendtype;
    r->rtype = recvtype;
    r->rcounts = malloc((size_t)size * sizeof *r->rcounts);
    r->displs = malloc((size_t)size * sizeof *r->displs);
    if (!r->rcounts || !r->displs) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    memcpy(r->rcounts, recvcounts, (size_t)size * sizeof *r->rcounts);
    memcpy(r->displs, displs, (size_t)size * sizeof *r->displs);
    if (r->persistent) {
        /* The user may free the datatypes while the request lives. */
        r->owns_types = 1;
        r->rtype = r->stype = MPI_DATATYPE_NULL;
        if ((rc = convoy__type_keep(recvtype, &r->rtype))) goto fail;
        if (!inplace && (rc = convoy__type_keep(sendtype, &r->stype))) goto fail;
    }
    if ((rc = convoy__cstate_get(comm, mode != NONBLOCKING, &r->cs))) goto fail;
    if (r->cs) {
        convoy__args a = {.coll = CONVOY_COLL_ALLGATHERV, .topo = &r->cs->topo,
                          .count = r->count, .inplace = inplace};
        int64_t *c64 = malloc((size_t)size * 2 * sizeof *c64);
        if (!c64) {
            rc = MPI_ERR_NO_MEM;
            goto fail;
        }
        for (int i = 0; i < size; i++) {
            c64[i] = recvcounts[i];
            c64[size + i] = displs[i];
        }
        a.rcounts = c64;
        a.displs = c64 + size;
        if (!(rc = convoy__describe_type(r->stype, &a.stype)) &&
            !(rc = convoy__describe_type(recvtype, &a.rtype))) {
            /* MPI requires the send signature to match this rank's receive block. */
            if (!inplace && a.stype.size * sendcount != a.rtype.size * recvcounts[rank])
                rc = MPI_ERR_TRUNCATE;
        }
        if (!rc) rc = convoy__plan(r, &a);
        if (!rc && convoy__env_flag("CONVOY_CHECK_ARGS")) {
            /* Every rank must see the same byte count for every rank. */
            uint64_t h = 0xcbf29ce484222325ULL;
            for (int i = 0; i < size; i++)
                h = (h ^ (uint64_t)(c64[i] * a.rtype.size)) * 0x100000001b3ULL;
            int64_t v[2] = {(int64_t)(h >> 1), inplace};
            convoy__agree_set(r, v, 2, agree_names);
        }
        free(c64);
        if (rc) goto fail;
    }
    if (!r->entry) r->native = native_start;
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
    convoy_request r;
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                   BLOCKING, &r);
    if (rc) return convoy__error(comm, rc);
    rc = convoy__req_start(r);
    if (!rc) rc = convoy__req_wait(r);
    convoy__req_free(r);
    return convoy__error(comm, rc);
}

int convoy_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                   NONBLOCKING, &r);
    if (rc) return convoy__error(comm, rc);
    if ((rc = convoy__req_start(r))) {
        convoy__req_free(r);
        return convoy__error(comm, rc);
    }
    *request = r;
    return MPI_SUCCESS;
}

int convoy_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           convoy_request *request)
{
    (void)info;
    convoy_request r;
    int rc = setup(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                   PERSISTENT, &r);
    if (rc) return convoy__error(comm, rc);
    *request = r;
    return MPI_SUCCESS;
}
