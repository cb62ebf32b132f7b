/*
 * Nonblocking and persistent Convoy operations as real MPI requests.
 *
 * A nonblocking call returns a generalized request (MPI_Grequest_start). A persistent one
 * cannot (a generalized request cannot be restarted): it returns a persistent receive of
 * zero bytes on a private duplicate of MPI_COMM_SELF with a tag of its own; MPI_Start
 * starts the Convoy operation and the receive, and the operation's end sends the matching
 * zero-byte message. Either way the MPI library owns the request: MPI_Wait, MPI_Test,
 * MPI_Waitall over Convoy and point-to-point requests, MPI_Testany, MPI_Request_free,
 * MPI_Startall all keep their semantics, statuses and handle rules.
 *
 * Progress: the MPI library never calls back into Convoy (Open MPI 4.1's MPI_Wait on a
 * generalized request only waits for MPI_Grequest_complete; MPICH's extended requests
 * would poll, Open MPI has none), so the wrappers of the completion calls (MPI_Wait,
 * MPI_Test, their -all, -any, -some forms, MPI_Request_get_status) first run Convoy's
 * pending operations (dropin_drive) and, while any is pending, wait by testing. With nothing of
 * Convoy's pending they are the MPI library's calls, untouched. The same works on every
 * MPI library.
 */
#include "api/internal.h"
#include "pmpi/dropin.h"
#include "shm/shm.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct entry {
    int coll;
    convoy_request cr;
    int persistent;
    int err;
    MPI_Request handle; /* the program's: the generalized request or the persistent receive */
    int tag;            /* persistent: the receive's tag */
    struct entry *next; /* active list, or the persistent list */
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *active;     /* started, Convoy operation not finished */
static entry *persistent; /* every live persistent entry */
static atomic_int npending;
static MPI_Comm self = MPI_COMM_NULL;
static int next_tag, tag_ub;

int dropin_pending(void)
{
    return atomic_load_explicit(&npending, memory_order_relaxed) > 0;
}

static void push_active(entry *e)
{
    pthread_mutex_lock(&lock);
    e->next = active;
    active = e;
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&npending, 1);
}

/* Counts what served a finished operation (before convoy_test frees it). */
static void count_done(entry *e)
{
    const convoy__algo *al;
    const char *why;
    convoy__req_outcome(e->cr, &al, &why);
    dropin_count(e->coll, al, why);
}

/* Runs every pending Convoy operation once; completes the requests of finished ones. */
void dropin_drive(void)
{
    entry *done = NULL;
    if (pthread_mutex_trylock(&lock)) return; /* another thread is at it */
    for (entry **p = &active; *p;) {
        entry *e = *p;
        int fin;
        convoy__req_progress(e->cr, &fin);
        if (!fin) {
            p = &e->next;
            continue;
        }
        *p = e->next;
        e->next = done;
        done = e;
    }
    pthread_mutex_unlock(&lock);
    /* Outside the lock: completing a generalized request may run its free_fn. */
    while (done) {
        entry *e = done;
        int flag;
        done = e->next;
        atomic_fetch_sub(&npending, 1);
        count_done(e);
        e->err = convoy_test(&e->cr, &flag); /* reports it: frees or deactivates cr */
        if (e->persistent) {
            pthread_mutex_lock(&lock);
            e->next = persistent;
            persistent = e;
            pthread_mutex_unlock(&lock);
            PMPI_Send(NULL, 0, MPI_BYTE, 0, e->tag, self);
        } else {
            PMPI_Grequest_complete(e->handle);
        }
    }
}

/* --- generalized requests (nonblocking) ------------------------------------------------ */

static int query_fn(void *extra, MPI_Status *status)
{
    entry *e = extra;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return e->err; /* the error of MPI_Wait/Test (MPI-4.0 §13.2) */
}

static int free_fn(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS; /* a collective cannot be cancelled (MPI-4.0 §3.8.4) */
}

int dropin_nonblocking(int coll, convoy_request cr, MPI_Request *request)
{
    entry *e = calloc(1, sizeof *e);
    int rc = e ? PMPI_Grequest_start(query_fn, free_fn, cancel_fn, e, request) : MPI_ERR_NO_MEM;
    if (rc) {
        convoy_wait(&cr); /* already started on every rank: finish it, then report */
        free(e);
        return rc;
    }
    e->coll = coll;
    e->cr = cr;
    e->handle = *request;
    push_active(e);
    return MPI_SUCCESS;
}

/* --- persistent requests --------------------------------------------------------------- */

static int self_comm(void)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    if (self == MPI_COMM_NULL) {
        void *ub;
        int flag;
        rc = PMPI_Comm_dup(MPI_COMM_SELF, &self);
        if (!rc) rc = PMPI_Comm_get_attr(self, MPI_TAG_UB, &ub, &flag);
        tag_ub = !rc && flag ? *(int *)ub : 32767;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int dropin_persistent(int coll, convoy_request cr, MPI_Request *request)
{
    entry *e = calloc(1, sizeof *e);
    int rc = e ? self_comm() : MPI_ERR_NO_MEM;
    if (!rc) {
        pthread_mutex_lock(&lock);
        e->tag = next_tag;
        next_tag = next_tag == tag_ub ? 0 : next_tag + 1;
        pthread_mutex_unlock(&lock);
        rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, e->tag, self, request);
    }
    if (rc) {
        convoy_request_free(&cr);
        free(e);
        return rc;
    }
    e->coll = coll;
    e->cr = cr;
    e->persistent = 1;
    e->handle = *request;
    pthread_mutex_lock(&lock);
    e->next = persistent;
    persistent = e;
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

/* The persistent entry of a handle, unlinked from the persistent list (NULL: not ours). */
static entry *take_persistent(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL) return NULL;
    pthread_mutex_lock(&lock);
    entry **p = &persistent;
    while (*p && (*p)->handle != h)
        p = &(*p)->next;
    entry *e = *p;
    if (e) *p = e->next;
    pthread_mutex_unlock(&lock);
    return e;
}

static void put_persistent(entry *e)
{
    pthread_mutex_lock(&lock);
    e->next = persistent;
    persistent = e;
    pthread_mutex_unlock(&lock);
}

int MPI_Start(MPI_Request *request)
{
    entry *e = request ? take_persistent(*request) : NULL;
    if (!e) return PMPI_Start(request);
    int rc = PMPI_Start(request);
    if (!rc) rc = convoy_start(&e->cr);
    if (rc) {
        put_persistent(e);
        return rc;
    }
    e->err = MPI_SUCCESS;
    push_active(e);
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    if (count < 0 || (count > 0 && !requests)) return PMPI_Startall(count, requests);
    for (int i = 0; i < count; i++) {
        int rc = MPI_Start(&requests[i]);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    entry *e = request ? take_persistent(*request) : NULL;
    if (!e) return PMPI_Request_free(request);
    int rc = PMPI_Request_free(request);
    convoy_request_free(&e->cr);
    free(e);
    return rc;
}

/* --- the completion calls -------------------------------------------------------------- */

int dropin_wait_native(MPI_Request *request, MPI_Status *status)
{
    unsigned iter = 0;
    for (;;) {
        int flag, rc;
        dropin_drive();
        if (!dropin_pending()) return PMPI_Wait(request, status);
        if ((rc = PMPI_Test(request, &flag, status)) || flag) return rc;
        convoy__backoff(&iter);
    }
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!dropin_pending()) return PMPI_Wait(request, status);
    return dropin_wait_native(request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (dropin_pending()) dropin_drive();
    return PMPI_Test(request, flag, status);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (dropin_pending()) dropin_drive();
    return PMPI_Request_get_status(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    if (dropin_pending()) dropin_drive();
    return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    if (dropin_pending()) dropin_drive();
    return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    if (dropin_pending()) dropin_drive();
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

/* The -all, -any, -some waits: test until done while Convoy has work, then the MPI
 * library's wait for the rest. */
#define WAIT_BY_TESTING(wait_call, test_call, done)                                                \
    unsigned iter = 0;                                                                             \
    for (;;) {                                                                                     \
        int rc;                                                                                    \
        dropin_drive();                                                                            \
        if (!dropin_pending()) return wait_call;                                                   \
        if ((rc = test_call) || (done)) return rc;                                                 \
        convoy__backoff(&iter);                                                                    \
    }

/* Whether every request is complete (or null, or inactive), without completing any. */
static int all_complete(int count, MPI_Request requests[], int *rc)
{
    for (int i = 0; i < count; i++) {
        int flag;
        if ((*rc = PMPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE)) || !flag)
            return *rc != MPI_SUCCESS;
    }
    return 1;
}

/* Not by MPI_Testall: MPICH 4.0's returns MPI_ERR_IN_STATUS (MPI_ERR_PENDING for the rest)
 * while a persistent collective of its own is complete and another request is not. The
 * library's MPI_Waitall completes them once all are. */
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (count < 0 || (count > 0 && !requests)) return PMPI_Waitall(count, requests, statuses);
    unsigned iter = 0;
    for (;;) {
        int rc = MPI_SUCCESS;
        dropin_drive();
        if (!dropin_pending() || all_complete(count, requests, &rc))
            return rc ? rc : PMPI_Waitall(count, requests, statuses);
        convoy__backoff(&iter);
    }
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int flag = 0;
    WAIT_BY_TESTING(PMPI_Waitany(count, requests, index, status),
                    PMPI_Testany(count, requests, index, &flag, status), flag)
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]){
    WAIT_BY_TESTING(PMPI_Waitsome(incount, requests, outcount, indices, statuses),
                    PMPI_Testsome(incount, requests, outcount, indices, statuses), *outcount != 0)}

/* --- blocking point-to-point calls ----------------------------------------------------- */

/* While Convoy has operations pending, a blocking send, receive or probe runs as its
 * nonblocking form plus a wait that drives them: the peer may need this process's part of
 * a pending Convoy collective before it reaches the matching call (MPI promises progress).
 * With nothing pending they are the MPI library's calls. */
#define P2P_BLOCKING(Name, IName, params, args)                                                    \
    int MPI_##Name params                                                                          \
    {                                                                                              \
        if (!dropin_pending()) return PMPI_##Name args;                                            \
        MPI_Request r;                                                                             \
        int rc = PMPI_##IName(args_##IName);                                                       \
        return rc ? rc : dropin_wait_native(&r, STATUS_##IName);                                   \
    }

#define SEND_PARAMS                                                                                \
    (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
#define SEND_ARGS (buf, count, datatype, dest, tag, comm)
#define args_Isend buf, count, datatype, dest, tag, comm, &r
#define args_Issend args_Isend
#define STATUS_Isend MPI_STATUS_IGNORE
#define STATUS_Issend MPI_STATUS_IGNORE
#define args_Irecv buf, count, datatype, source, tag, comm, &r
#define STATUS_Irecv status

P2P_BLOCKING(Send, Isend, SEND_PARAMS, SEND_ARGS)
    P2P_BLOCKING(Ssend, Issend, SEND_PARAMS, SEND_ARGS)
        P2P_BLOCKING(Recv, Irecv,
                     (void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Status *status),
                     (buf, count, datatype, source, tag, comm, status))

            int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    unsigned iter = 0;
    for (;;) {
        int flag, rc;
        if (!dropin_pending()) return PMPI_Probe(source, tag, comm, status);
        dropin_drive();
        if ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) || flag) return rc;
        convoy__backoff(&iter);
    }
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    if (!dropin_pending())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Request r[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc) return rc;
    if ((rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]))) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    rc = MPI_Waitall(2, r, st);
    if (status != MPI_STATUS_IGNORE) *status = st[0];
    return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR ? st[0].MPI_ERROR : st[1].MPI_ERROR : rc;
}
