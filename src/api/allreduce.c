/* convoy_Allreduce, convoy_Iallreduce, convoy_Allreduce_init. */
#include "api/internal.h"

#include <stdlib.h>

static int native_start(convoy_request r)
{
    return PMPI_Iallreduce(r->sendbuf, r->recvbuf, r->count, r->rtype, r->op, r->comm,
                           &r->native_req);
}

static const char *const agree_names[] = {"count", "datatype size", "op",
                                          "MPI_IN_PLACE use"};

enum { BLOCKING, NONBLOCKING, PERSISTENT };

static int setup(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm, int mode, convoy_request *out)
{
    int rc;
    if ((rc = convoy__check_comm(comm))) return rc;
    if (mode != BLOCKING && !out) return MPI_ERR_REQUEST;
    if (count < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(dt))) return rc;
    if ((rc = convoy__check_op(op, dt))) return rc;
    const int inplace = sendbuf == MPI_IN_PLACE;
    if (count > 0 && sendbuf == recvbuf) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new("Allreduce", comm, &r))) return rc;
    r->persistent = mode == PERSISTENT;
    r->sendbuf = inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = count;
    r->op = op;
    r->rtype = dt;
    if (r->persistent) {
        /* The user may free the datatype while the request lives. */
        r->owns_types = 1;
        if ((rc = convoy__type_keep(dt, &r->rtype))) goto fail;
    }
    r->stype = r->rtype;
    if ((rc = convoy__cstate_get(comm, mode != NONBLOCKING, &r->cs))) goto fail;
    if (r->cs) {
        int commute;
        PMPI_Op_commutative(op, &commute);
        convoy__args a = {.coll = CONVOY_COLL_ALLREDUCE, .topo = &r->cs->topo, .count = count,
                          .inplace = inplace, .commutative = commute};
        if ((rc = convoy__describe_type(dt, &a.rtype))) goto fail;
        a.stype = a.rtype;
        if ((rc = convoy__plan(r, &a))) goto fail;
        if (convoy__env_flag("CONVOY_CHECK_ARGS")) {
            int64_t v[4] = {count, a.rtype.size, convoy__op_is_predefined(op) - 1 + 2 * !commute,
                            inplace};
            convoy__agree_set(r, v, 4, agree_names);
        }
    }
    if (!r->entry) {
        /* The agreement runs on the private communicator, which the native path lacks. */
        r->native = native_start;
        r->sendbuf = sendbuf;
    }
    *out = r;
    return MPI_SUCCESS;
fail:
    convoy__req_free(r);
    return rc;
}

int convoy_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    convoy_request r;
    int rc = setup(sendbuf, recvbuf, count, datatype, op, comm, BLOCKING, &r);
    if (rc) return convoy__error(comm, rc);
    rc = convoy__req_start(r);
    if (!rc) rc = convoy__req_wait(r);
    convoy__req_free(r);
    return convoy__error(comm, rc);
}

int convoy_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    int rc = setup(sendbuf, recvbuf, count, datatype, op, comm, NONBLOCKING, &r);
    if (rc) return convoy__error(comm, rc);
    if ((rc = convoy__req_start(r))) {
        convoy__req_free(r);
        return convoy__error(comm, rc);
    }
    *request = r;
    return MPI_SUCCESS;
}

int convoy_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    convoy_request r;
    int rc = setup(sendbuf, recvbuf, count, datatype, op, comm, PERSISTENT, &r);
    if (rc) return convoy__error(comm, rc);
    *request = r;
    return MPI_SUCCESS;
}
