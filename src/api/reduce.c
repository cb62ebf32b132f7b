/* convoy_Reduce, convoy_Ireduce, convoy_Reduce_init. */
#include "api/internal.h"

static int native_start(convoy_request r)
{
    return CONVOY_NATIVE(r, PMPI_Reduce, PMPI_Ireduce, r->inplace ? MPI_IN_PLACE : r->sendbuf,
                         r->recvbuf, r->count, r->rtype, r->op, r->root, r->comm);
}

/* MPI_IN_PLACE is the root's alone, so it is not agreed on. */
static const char *const agree_names[] = {"count", "datatype size", "op", "root"};

static int plan(convoy_request r)
{
    return convoy__plan_vector_reduction(r, r->root, agree_names);
}

static int setup(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                 int root, MPI_Comm comm, int mode, convoy_request *out)
{
    int rc, rank = 0, inter = 0;
    if ((rc = convoy__check_comm(comm))) return rc;
    if (count < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(dt))) return rc;
    if ((rc = convoy__check_op(op, dt))) return rc;
    PMPI_Comm_test_inter(comm, &inter);
    if ((rc = convoy__check_root(comm, root))) return rc;
    if (!inter) PMPI_Comm_rank(comm, &rank);
    const int is_root = !inter && rank == root;
    /* MPI_IN_PLACE is for the root (MPI-4.0 §6.9.1); the root's buffers must not alias. */
    if (!inter && !is_root && sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    if (is_root && count > 0 && sendbuf == recvbuf) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new("Reduce", comm, &r))) return rc;
    r->coll = CONVOY_COLL_REDUCE;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = sendbuf == MPI_IN_PLACE;
    r->sendbuf = r->inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = count;
    r->root = root;
    return convoy__req_reduction_route(r, op, dt, mode, out);
}

static int entry(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                 int root, MPI_Comm comm, int mode, convoy_request *request)
{
    const convoy__call call = {.coll = CONVOY_COLL_REDUCE,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = count,
                               .root = root,
                               .stype = dt,
                               .rtype = dt,
                               .op = op};
    convoy_request r;
    int rc;
    if (mode != CONVOY_BLOCKING && !request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    if (mode == CONVOY_BLOCKING && convoy__fast_try(comm, &call, &rc))
        return convoy__error(comm, rc);
    rc = setup(sendbuf, recvbuf, count, dt, op, root, comm, mode, &r);
    if (!rc && mode == CONVOY_BLOCKING)
        rc = convoy__req_launch_call(r, &call);
    else if (!rc)
        rc = convoy__req_launch(r, mode, request);
    return convoy__error(comm, rc);
}

int convoy_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  int root, MPI_Comm comm)
{
    return entry(sendbuf, recvbuf, count, datatype, op, root, comm, CONVOY_BLOCKING, NULL);
}

int convoy_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   int root, MPI_Comm comm, convoy_request *request)
{
    return entry(sendbuf, recvbuf, count, datatype, op, root, comm, CONVOY_NONBLOCKING, request);
}

int convoy_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    return entry(sendbuf, recvbuf, count, datatype, op, root, comm, CONVOY_PERSISTENT, request);
}
