/* Running a hand-made schedule for real: the tests' way into the executor and segment. */
#include "api/internal.h"

int convoy__run_schedule(const convoy__schedule *s, const void *sendbuf, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Datatype recvtype, MPI_Comm comm)
{
    convoy__cstate *cs;
    int rc = convoy__cstate_get(comm, 1, &cs, NULL);
    if (rc) return rc;
    if (!cs) return MPI_ERR_COMM;
    if (s->nflags > 0 || s->shm_bytes > 0) {
        /* The executor shifts schedule flags up by one (flag 0 is its own). */
        if (!cs->shm || s->shm_bytes > cs->shm->bytes || s->nflags + 1 > cs->shm->nflags)
            return MPI_ERR_NO_MEM;
    }
    convoy_request r;
    if ((rc = convoy__req_new("run_schedule", comm, &r))) return rc;
    convoy__centry e = {.sched = *s, .refs = 1};
    r->cs = cs;
    r->entry = &e;
    r->sendbuf = sendbuf;
    r->recvbuf = recvbuf;
    r->stype = sendtype;
    r->rtype = recvtype;
    r->op = MPI_OP_NULL;
    r->op_type = MPI_DATATYPE_NULL;
    rc = convoy__req_start(r);
    if (!rc) rc = convoy__req_wait(r);
    r->entry = NULL; /* the schedule is the caller's */
    convoy__req_free(r);
    return rc;
}
