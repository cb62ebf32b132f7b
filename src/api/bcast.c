/* convoy_Bcast, convoy_Ibcast, convoy_Bcast_init. The buffer is the request's receive
 * buffer on every rank (the root's input, everyone's output; coll/coll.h). */
#include "api/internal.h"

static int native_start(convoy_request r)
{
    return CONVOY_NATIVE(r, PMPI_Bcast, PMPI_Ibcast, r->recvbuf, r->count, r->rtype, r->root,
                         r->comm);
}

static const char *const agree_names[] = {"root", "bytes (count x datatype size)"};

static int plan(convoy_request r)
{
    convoy__args a = {
        .coll = CONVOY_COLL_BCAST, .topo = &r->cs->topo, .count = r->count, .root = r->root};
    int rc;
    if ((rc = convoy__describe_type(r->rtype, &a.rtype))) return rc;
    a.stype = a.rtype;
    if ((rc = convoy__plan(r, &a))) return rc;
    if (!r->deferred && r->cfg.check_args) {
        int64_t v[2] = {r->root, r->count * a.rtype.size};
        convoy__agree_set(r, v, 2, agree_names);
    }
    return MPI_SUCCESS;
}

static int setup(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, int mode,
                 convoy_request *out)
{
    int rc;
    if ((rc = convoy__check_comm(comm))) return rc;
    if ((rc = convoy__check_root(comm, root))) return rc;
    if (count < 0) return MPI_ERR_COUNT;
    if ((rc = convoy__check_type(dt))) return rc;
    if (buffer == MPI_IN_PLACE) return MPI_ERR_BUFFER;

    convoy_request r;
    if ((rc = convoy__req_new("Bcast", comm, &r))) return rc;
    r->coll = CONVOY_COLL_BCAST;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->recvbuf = buffer;
    r->count = count;
    r->root = root;
    r->op_type = MPI_DATATYPE_NULL;
    r->rtype = r->stype = dt;
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

int convoy_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const convoy__call call = {.coll = CONVOY_COLL_BCAST,
                               .recv = buffer,
                               .count = count,
                               .root = root,
                               .stype = datatype,
                               .rtype = datatype};
    convoy_request r;
    int rc;
    if (convoy__fast_try(comm, &call, &rc)) return convoy__error(comm, rc);
    rc = setup(buffer, count, datatype, root, comm, CONVOY_BLOCKING, &r);
    if (!rc) rc = convoy__req_launch_call(r, &call);
    return convoy__error(comm, rc);
}

int convoy_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  convoy_request *request)
{
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(buffer, count, datatype, root, comm, CONVOY_NONBLOCKING, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_NONBLOCKING, request);
    return convoy__error(comm, rc);
}

int convoy_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, convoy_request *request)
{
    (void)info;
    convoy_request r;
    if (!request)
        return convoy__error(comm, convoy__check_comm(comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    int rc = setup(buffer, count, datatype, root, comm, CONVOY_PERSISTENT, &r);
    if (!rc) rc = convoy__req_launch(r, CONVOY_PERSISTENT, request);
    return convoy__error(comm, rc);
}
