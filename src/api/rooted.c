/*
 * convoy_Gather, convoy_Gatherv, convoy_Scatter, convoy_Scatterv and their nonblocking and
 * persistent forms (Gather and Scatter are their v-forms with equal counts, as separate
 * collectives with tables of their own), and the root checks all rooted collectives share.
 *
 * The request holds the root's vector in rcounts/displs (Gather, Scatter: the one count
 * repeated) and the vector's datatype in rtype (Gather) or stype (Scatter); count and the
 * other type are this rank's own contribution or result. Arguments MPI declares
 * significant only at the root are neither checked nor kept elsewhere: off the root, the
 * vector's type slot holds the own type (the native call ignores it there).
 *
 * The builders need every block's size on every rank (coll/coll.h). Gather and Scatter
 * know it from the own count; a blocking or persistent Gatherv or Scatterv broadcasts the
 * root's block sizes once (on the private communicator, before planning); a nonblocking
 * one cannot block, so it plans with counts_local (the linear algorithms).
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int convoy__check_root(MPI_Comm comm, int root)
{
    int inter, size;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        PMPI_Comm_remote_size(comm, &size);
        return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < size)
                   ? MPI_SUCCESS
                   : MPI_ERR_ROOT;
    }
    PMPI_Comm_size(comm, &size);
    return root >= 0 && root < size ? MPI_SUCCESS : MPI_ERR_ROOT;
}

int convoy__agree_root(convoy_request r)
{
    if (!r->cfg.check_args) return MPI_SUCCESS;
    int64_t v[2] = {r->root, -(int64_t)r->root};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, r->cs->priv);
    if (rc) return rc;
    if (v[0] == -v[1]) return MPI_SUCCESS;
    fprintf(stderr,
            "convoy: CONVOY_CHECK_ARGS: rank %d: MPI_%s called with arguments that differ "
            "across ranks: root ranges from %lld to %lld (this rank: %d)\n",
            r->cs->topo.rank, r->what, (long long)-v[1], (long long)v[0], r->root);
    return MPI_ERR_ROOT;
}

static int gathers_coll(int coll)
{
    return coll == CONVOY_COLL_GATHER || coll == CONVOY_COLL_GATHERV;
}

static int gathers(const convoy_request r)
{
    return gathers_coll(r->coll);
}

static int is_root(const convoy_request r)
{
    int inter, rank;
    PMPI_Comm_test_inter(r->comm, &inter);
    if (inter) return r->root == MPI_ROOT;
    PMPI_Comm_rank(r->comm, &rank);
    return rank == r->root;
}

static int native_start(convoy_request r)
{
    const int root = is_root(r);
    const int rc = root && r->rcounts ? r->rcounts[0] : r->count;
    void *const rb = r->inplace ? MPI_IN_PLACE : r->recvbuf;
    const void *const sb = r->inplace ? MPI_IN_PLACE : r->sendbuf;
    switch (r->coll) {
    case CONVOY_COLL_GATHER:
        return CONVOY_NATIVE(r, PMPI_Gather, PMPI_Igather, sb, r->count, r->stype, r->recvbuf, rc,
                             r->rtype, r->root, r->comm);
    case CONVOY_COLL_GATHERV:
        return CONVOY_NATIVE(r, PMPI_Gatherv, PMPI_Igatherv, sb, r->count, r->stype, r->recvbuf,
                             r->rcounts, r->displs, r->rtype, r->root, r->comm);
    case CONVOY_COLL_SCATTER:
        return CONVOY_NATIVE(r, PMPI_Scatter, PMPI_Iscatter, r->sendbuf, rc, r->stype, rb, r->count,
                             r->rtype, r->root, r->comm);
    default:
        return CONVOY_NATIVE(r, PMPI_Scatterv, PMPI_Iscatterv, r->sendbuf, r->rcounts, r->displs,
                             r->stype, rb, r->count, r->rtype, r->root, r->comm);
    }
}

static const char *const agree_names[] = {"root", "bytes per block (count x datatype size)",
                                          "whether the own count matches the root's (1: yes)"};

static int plan(convoy_request r)
{
    const convoy__topo *t = &r->cs->topo;
    const int size = t->size, rank = t->rank, g = gathers(r), at_root = rank == r->root;
    const int vform = r->coll == CONVOY_COLL_GATHERV || r->coll == CONVOY_COLL_SCATTERV;
    convoy__args a = {.coll = r->coll,
                      .topo = t,
                      .root = r->root,
                      .count = r->inplace ? 0 : r->count,
                      .inplace = r->inplace};
    convoy__dtype *own = g ? &a.stype : &a.rtype, *vec = g ? &a.rtype : &a.stype;
    int rc;
    if ((!r->inplace && (rc = convoy__describe_type(g ? r->stype : r->rtype, own))) ||
        (at_root && (rc = convoy__describe_type(g ? r->rtype : r->stype, vec))))
        return rc;
    /* Counts, displacements, and the block bytes a v-form's root broadcasts. */
    int64_t *c64 = convoy__req_i64(r, 3 * (int64_t)size);
    if (!c64) return MPI_ERR_NO_MEM;
    int64_t *bytes = c64 + 2 * size;
    if (!at_root) *vec = (convoy__dtype){1, 1, 0, 1};
    for (int i = 0; i < size && at_root; i++) {
        c64[i] = r->rcounts[i];
        c64[size + i] = r->displs ? r->displs[i] : (int64_t)i * r->rcounts[0];
    }
    /* (On one process the root's vector is the own: nothing to learn.) */
    if (vform && size > 1 && r->may_block && !r->deferred) {
        /* Every rank learns every block's bytes from the root. */
        if ((rc = convoy__agree_root(r))) return rc;
        for (int i = 0; i < size && at_root; i++)
            bytes[i] = c64[i] * vec->size;
        if ((rc = PMPI_Bcast(bytes, size, MPI_INT64_T, r->root, r->cs->priv))) return rc;
        for (int i = 0; i < size && !at_root; i++)
            c64[i] = bytes[i];
    } else if (vform && size > 1) {
        a.counts_local = 1;
    } else {
        for (int i = 0; i < size && !at_root; i++)
            c64[i] = a.count * own->size;
    }
    int64_t pos = 0; /* off the root: blocks packed in rank order */
    for (int i = 0; i < size && !at_root && !a.counts_local; i++) {
        c64[size + i] = pos;
        pos += c64[i];
    }
    a.rcounts = a.counts_local && !at_root ? NULL : c64;
    a.displs = a.counts_local && !at_root ? NULL : c64 + size;
    /* MPI requires the own signature to match the root's block. Under CONVOY_CHECK_ARGS the
     * verdict joins the agreement, so that no other rank hangs. */
    const int64_t block = a.rcounts ? a.rcounts[rank] * vec->size : -1;
    if (!r->inplace && block >= 0 && a.count * own->size != block) {
        if (!r->cfg.check_args || r->deferred) return MPI_ERR_TRUNCATE;
        r->local_err = MPI_ERR_TRUNCATE;
    }
    rc = r->local_err ? MPI_SUCCESS : convoy__plan(r, &a);
    if (!rc && !r->deferred && r->cfg.check_args) {
        /* Gather, Scatter: every rank's block has the root's size. */
        int64_t v[3] = {r->root,
                        vform        ? 0
                        : block >= 0 ? block
                                     : a.count * own->size,
                        !r->local_err};
        convoy__agree_set(r, v, 3, agree_names);
    }
    return rc;
}

/* Which arguments MPI reads where: the root's vector (vcounts, vdispls, vtype; regular: the
 * one count vcount) at the root only; the own buffer, count and type everywhere but at an
 * in-place root. own_buf is the send buffer for Gather, the receive buffer for Scatter. */
typedef struct rooted_call {
    int coll;
    const void *sendbuf;
    void *recvbuf;
    int vcount;
    const int *vcounts, *vdispls;
    MPI_Datatype vtype;
    int count; /* own */
    MPI_Datatype type;
    int root;
    MPI_Comm comm;
} rooted_call;

static int setup(const rooted_call *c, int mode, convoy_request *out)
{
    static const char *const names[] = {[CONVOY_COLL_GATHER] = "Gather",
                                        [CONVOY_COLL_GATHERV] = "Gatherv",
                                        [CONVOY_COLL_SCATTER] = "Scatter",
                                        [CONVOY_COLL_SCATTERV] = "Scatterv"};
    const int g = c->coll == CONVOY_COLL_GATHER || c->coll == CONVOY_COLL_GATHERV;
    const int vform = c->coll == CONVOY_COLL_GATHERV || c->coll == CONVOY_COLL_SCATTERV;
    int rc, size, rank, inter;
    if ((rc = convoy__check_comm(c->comm))) return rc;
    if ((rc = convoy__check_root(c->comm, c->root))) return rc;
    PMPI_Comm_test_inter(c->comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(c->comm, &size);
    else
        PMPI_Comm_size(c->comm, &size);
    PMPI_Comm_rank(c->comm, &rank);
    const int at_root = inter ? c->root == MPI_ROOT : rank == c->root;
    const int sends = inter ? c->root >= 0 : 1; /* has an own block (intercomm: the leaf group) */
    const void *own_buf = g ? c->sendbuf : c->recvbuf;
    const void *vec_buf = g ? c->recvbuf : c->sendbuf;
    const int inplace = !inter && at_root && own_buf == MPI_IN_PLACE;
    if ((at_root && vec_buf == MPI_IN_PLACE) || (!at_root && own_buf == MPI_IN_PLACE))
        return MPI_ERR_BUFFER;
    if (at_root) {
        if (vform && (!c->vcounts || !c->vdispls)) return MPI_ERR_ARG;
        for (int i = 0; i < (vform ? size : 1); i++)
            if ((vform ? c->vcounts[i] : c->vcount) < 0) return MPI_ERR_COUNT;
        if ((rc = convoy__check_type(c->vtype))) return rc;
    }
    if (sends && !inplace && (!inter || !at_root)) {
        if (c->count < 0) return MPI_ERR_COUNT;
        if ((rc = convoy__check_type(c->type))) return rc;
        /* The root's own block and its vector must not overlap (MPI forbids aliasing). */
        if (at_root && own_buf == vec_buf && c->count > 0) return MPI_ERR_BUFFER;
    }

    convoy_request r;
    if ((rc = convoy__req_new(names[c->coll], c->comm, &r))) return rc;
    r->coll = c->coll;
    r->plan = plan;
    r->native_start = native_start;
    r->persistent = mode == CONVOY_PERSISTENT;
    r->may_block = mode != CONVOY_NONBLOCKING;
    r->regular = !vform;
    r->root = c->root;
    r->inplace = inplace;
    r->count = inplace ? 0 : c->count;
    r->op_type = MPI_DATATYPE_NULL;
    /* Only what MPI reads on this rank is kept (intercommunicators: all of it, as given). */
    r->sendbuf = g ? (inplace ? NULL : c->sendbuf) : (at_root || inter ? c->sendbuf : NULL);
    r->recvbuf = g ? (at_root || inter ? c->recvbuf : NULL) : (inplace ? NULL : c->recvbuf);
    MPI_Datatype own_t = inplace ? c->vtype : c->type, vec_t = at_root ? c->vtype : own_t;
    if (at_root) {
        if ((rc = convoy__req_counts(r, size, vform))) goto fail;
        for (int i = 0; i < size; i++)
            r->rcounts[i] = vform ? c->vcounts[i] : c->vcount;
        if (vform) memcpy(r->displs, c->vdispls, (size_t)size * sizeof *r->displs);
    }
    /* The user may free derived datatypes while a persistent request lives. */
    r->owns_types = r->persistent && !inter;
    MPI_Datatype *own_slot = g ? &r->stype : &r->rtype, *vec_slot = g ? &r->rtype : &r->stype;
    *own_slot = *vec_slot = MPI_DATATYPE_NULL;
    if (!r->owns_types) {
        *own_slot = own_t;
        *vec_slot = vec_t;
    } else if ((rc = convoy__type_keep(own_t, own_slot))) {
        goto fail;
    } else if (!at_root) {
        *vec_slot = *own_slot; /* one hold; req_free drops it once */
    } else if ((rc = convoy__type_keep(vec_t, vec_slot))) {
        goto fail;
    }
    if ((rc = convoy__req_route(r, mode))) goto fail;
    *out = r;
    return MPI_SUCCESS;
fail:
    convoy__req_free(r);
    return rc;
}

static int run(const rooted_call *c, int mode, convoy_request *request)
{
    /* (Gatherv and Scatterv are kept on one process only, where the vectors are the own:
     * fast.c.) */
    const int g = gathers_coll(c->coll);
    const convoy__call call = {.coll = c->coll,
                               .send = c->sendbuf,
                               .recv = c->recvbuf,
                               .count = c->count,
                               .count2 = c->vcount,
                               .root = c->root,
                               .stype = g ? c->type : c->vtype,
                               .rtype = g ? c->vtype : c->type,
                               .v1 = c->vcounts,
                               .v2 = c->vdispls};
    convoy_request r;
    int rc;
    if (mode != CONVOY_BLOCKING && !request)
        return convoy__error(c->comm, convoy__check_comm(c->comm) ? MPI_ERR_COMM : MPI_ERR_REQUEST);
    if (mode == CONVOY_BLOCKING && convoy__fast_try(c->comm, &call, &rc))
        return convoy__error(c->comm, rc);
    rc = setup(c, mode, &r);
    if (!rc && mode == CONVOY_BLOCKING)
        rc = convoy__req_launch_call(r, &call);
    else if (!rc)
        rc = convoy__req_launch(r, mode, request);
    return convoy__error(c->comm, rc);
}

#define GATHER_CALL(coll, vc, vcs, vds)                                                            \
    ((rooted_call){coll, sendbuf, recvbuf, vc, vcs, vds, recvtype, sendcount, sendtype, root, comm})
#define SCATTER_CALL(coll, vc, vcs, vds)                                                           \
    ((rooted_call){coll, sendbuf, recvbuf, vc, vcs, vds, sendtype, recvcount, recvtype, root, comm})

int convoy_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHER, recvcount, NULL, NULL);
    return run(&c, CONVOY_BLOCKING, NULL);
}

int convoy_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   convoy_request *request)
{
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHER, recvcount, NULL, NULL);
    return run(&c, CONVOY_NONBLOCKING, request);
}

int convoy_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       convoy_request *request)
{
    (void)info;
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHER, recvcount, NULL, NULL);
    return run(&c, CONVOY_PERSISTENT, request);
}

int convoy_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm)
{
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHERV, 0, recvcounts, displs);
    return run(&c, CONVOY_BLOCKING, NULL);
}

int convoy_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, convoy_request *request)
{
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHERV, 0, recvcounts, displs);
    return run(&c, CONVOY_NONBLOCKING, request);
}

int convoy_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    rooted_call c = GATHER_CALL(CONVOY_COLL_GATHERV, 0, recvcounts, displs);
    return run(&c, CONVOY_PERSISTENT, request);
}

int convoy_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTER, sendcount, NULL, NULL);
    return run(&c, CONVOY_BLOCKING, NULL);
}

int convoy_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    convoy_request *request)
{
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTER, sendcount, NULL, NULL);
    return run(&c, CONVOY_NONBLOCKING, request);
}

int convoy_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Info info, convoy_request *request)
{
    (void)info;
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTER, sendcount, NULL, NULL);
    return run(&c, CONVOY_PERSISTENT, request);
}

int convoy_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm)
{
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTERV, 0, sendcounts, displs);
    return run(&c, CONVOY_BLOCKING, NULL);
}

int convoy_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, convoy_request *request)
{
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTERV, 0, sendcounts, displs);
    return run(&c, CONVOY_NONBLOCKING, request);
}

int convoy_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root, MPI_Comm comm, MPI_Info info, convoy_request *request)
{
    (void)info;
    rooted_call c = SCATTER_CALL(CONVOY_COLL_SCATTERV, 0, sendcounts, displs);
    return run(&c, CONVOY_PERSISTENT, request);
}
