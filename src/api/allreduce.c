/* convoy_Allreduce, convoy_Iallreduce, convoy_Allreduce_init. */
#include "api/internal.h"

static int native_start(convoy_request r)
{
    return CONVOY_NATIVE(r, PMPI_Allreduce, PMPI_Iallreduce, r->inplace ? MPI_IN_PLACE : r->sendbuf,
                         r->recvbuf, r->count, r->rtype, r->op, r->comm);
}

static const char *const agree_names[] = {"count", "datatype size", "op", "MPI_IN_PLACE use"};

int convoy__plan_vector_reduction(convoy_request r, int64_t last, const char *const *names)
{
    int commute, rc;
    if ((rc = PMPI_Op_commutative(r->op, &commute))) return rc;
    convoy__args a = {.coll = r->coll,
                      .topo = &r->cs->topo,
                      .count = r->count,
                      .root = r->root,
                      .inplace = r->inplace,
                      .commutative = commute,
                      .idempotent = convoy__op_is_idempotent(r->op)};
    if ((rc = convoy__describe_type(r->rtype, &a.rtype))) return rc;
    a.stype = a.rtype;
    if ((rc = convoy__plan(r, &a))) return rc;
    if (!r->deferred && r->cfg.check_args) {
        /* Predefined ops by index; user ops only by commutativity (handles differ). */
        int64_t v[4] = {
            r->count, a.rtype.size,
            convoy__op_is_predefined(r->op) ? convoy__op_is_predefined(r->op) : -1 - commute, last};
        convoy__agree_set(r, v, 4, names);
    }
    return MPI_SUCCESS;
}

static int plan(convoy_request r)
{
    return convoy__plan_vector_reduction(r, r->inplace, agree_names);
}

static int setup(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm, int mode, convoy_request *out)
{
    int rc;
    if ((rc = convoy__check_comm(comm))) return rc;
    if (count < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(dt))) return rc;
    if ((rc = convoy__check_op(op, dt))) return rc;
    if (count > 0 && sendbuf == recvbuf) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new("Allreduce", comm, &r))) return rc;
    r->coll = CONVOY_COLL_ALLREDUCE;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = sendbuf == MPI_IN_PLACE;
    r->sendbuf = r->inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = count;
    return convoy__req_reduction_route(r, op, dt, mode, out);
}

int convoy__req_reduction_route(convoy_request r, MPI_Op op, MPI_Datatype dt, int mode,
                                convoy_request *out)
{
    int rc;
    r->op = op;
    r->rtype = r->op_type = dt;
    /* The user may free a derived datatype while a persistent request lives. */
    r->owns_types = r->persistent;
    if ((r->persistent && (rc = convoy__type_keep(dt, &r->rtype))) ||
        (rc = convoy__req_route(r, mode))) {
        convoy__req_free(r);
        return rc;
    }
    r->stype = r->rtype;
    *out = r;
    return MPI_SUCCESS;
}

int convoy_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    const convoy__call call = {.coll = CONVOY_COLL_ALLREDUCE,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = count,
                               .stype = datatype,
                               .rtype = datatype,
                               .op = op};
    convoy_request r;
    int rc;
    if (convoy__fast_try(comm, &call, &rc)) return convoy__error(comm, rc);
    rc = setup(sendbuf, recvbuf, count, datatype, op, comm, CONVOY_BLOCKING, &r);
    if (!rc) rc = convoy__req_launch_call(r, &call);
    return convoy__error(comm, rc);
}

int convoy_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, convoy_request *request)
{
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, recvbuf, count, datatype, op, comm, CONVOY_NONBLOCKING, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_NONBLOCKING, request);
    return convoy__error(comm, rc);
}

int convoy_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(sendbuf, recvbuf, count, datatype, op, comm, CONVOY_PERSISTENT, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_PERSISTENT, request);
    return convoy__error(comm, rc);
}
