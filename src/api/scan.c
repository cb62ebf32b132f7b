/* convoy_Scan, convoy_Exscan and their nonblocking and persistent forms: one entry point,
 * the collective (CONVOY_COLL_SCAN or _EXSCAN) tells them apart. */
#include "api/internal.h"

static int native_start(convoy_request r)
{
    const void *sb = r->inplace ? MPI_IN_PLACE : r->sendbuf;
    if (r->coll == CONVOY_COLL_EXSCAN)
        return CONVOY_NATIVE(r, PMPI_Exscan, PMPI_Iexscan, sb, r->recvbuf, r->count, r->rtype,
                             r->op, r->comm);
    return CONVOY_NATIVE(r, PMPI_Scan, PMPI_Iscan, sb, r->recvbuf, r->count, r->rtype, r->op,
                         r->comm);
}

static const char *const agree_names[] = {"count", "datatype size", "op", "MPI_IN_PLACE use"};

static int plan(convoy_request r)
{
    return convoy__plan_vector_reduction(r, r->inplace, agree_names);
}

static int entry(int coll, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                 MPI_Op op, MPI_Comm comm, int mode, convoy_request *request)
{
    const convoy__call call = {.coll = coll,
                               .send = sendbuf,
                               .recv = recvbuf,
                               .count = count,
                               .stype = dt,
                               .rtype = dt,
                               .op = op};
    convoy_request r;
    int rc, inter = 0;
    if (mode != CONVOY_BLOCKING && !request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    if (mode == CONVOY_BLOCKING && convoy__fast_try(comm, &call, &rc))
        return convoy__error(comm, rc);
    if ((rc = convoy__check_comm(comm))) return convoy__error(comm, rc);
    /* Scans are defined on intracommunicators only (MPI-4.0 §6.11). */
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) return convoy__error(comm, MPI_ERR_COMM);
    if (count < 0) return convoy__error(comm, MPI_ERR_COUNT);
    if ((rc = convoy__check_type(dt)) || (rc = convoy__check_op(op, dt)))
        return convoy__error(comm, rc);
    if (count > 0 && sendbuf == recvbuf) return convoy__error(comm, MPI_ERR_BUFFER);
    if ((rc = convoy__req_new(coll == CONVOY_COLL_SCAN ? "Scan" : "Exscan", comm, &r)))
        return convoy__error(comm, rc);
    r->coll = coll;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->inplace = sendbuf == MPI_IN_PLACE;
    r->sendbuf = r->inplace ? NULL : sendbuf;
    r->recvbuf = recvbuf;
    r->count = count;
    rc = convoy__req_reduction_route(r, op, dt, mode, &r);
    if (!rc && mode == CONVOY_BLOCKING)
        rc = convoy__req_launch_call(r, &call);
    else if (!rc)
        rc = convoy__req_launch(r, mode, request);
    return convoy__error(comm, rc);
}

int convoy_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return entry(CONVOY_COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm, CONVOY_BLOCKING,
                 NULL);
}

int convoy_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, convoy_request *request)
{
    return entry(CONVOY_COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm, CONVOY_NONBLOCKING,
                 request);
}

int convoy_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    return entry(CONVOY_COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm, CONVOY_PERSISTENT,
                 request);
}

int convoy_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return entry(CONVOY_COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm, CONVOY_BLOCKING,
                 NULL);
}

int convoy_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, convoy_request *request)
{
    return entry(CONVOY_COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm,
                 CONVOY_NONBLOCKING, request);
}

int convoy_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    return entry(CONVOY_COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm, CONVOY_PERSISTENT,
                 request);
}
