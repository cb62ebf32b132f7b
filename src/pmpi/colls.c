/*
 * The MPI_* wrappers of Convoy's collectives, generated from one table. Adding a
 * collective: its id and name in DROPIN_COLLS (dropin.h), its parameter and argument lists
 * (P_/A_ below, the communicator named `comm`), and one DROPIN_WRAP line; a collective
 * with scalar counts also gets PC_/FIT_/AI_ lines and a DROPIN_WRAP_C line for MPI-4's
 * large-count names.
 *
 * Every form first asks dropin_handback (CONVOY_DISABLE, intercommunicators, device
 * buffers, after MPI_Finalize). A handed-back call is the MPI library's own: same
 * arguments, so the same results and the same errors on the same handler.
 *
 * Which of the library's collectives a handed-back blocking call makes must be the same on
 * every process (MPI's blocking and nonblocking collectives do not match each other: a
 * process in MPI_Barrier and one in MPI_Ibarrier hang, tested: tests/pmpi handback_kind),
 * and a process blocked in the library's blocking collective runs none of Convoy's pending
 * operations, which a peer may be waiting for. So it depends on one setting, read once
 * (stats.c), never on what a process has pending:
 *  - by default (CONVOY_NATIVE_BLOCKING unset or 1) the library's blocking collective, as
 *    for Convoy's own native choice (api/request.c), and the nonblocking and persistent
 *    forms are the library's too (dropin_handback_nb, reason blocking_only): no Convoy
 *    operation is ever pending, so no process owes a peer progress. A handed-back call costs
 *    the wrapper and nothing else (the memo below): never slower than the library.
 *  - CONVOY_NATIVE_BLOCKING=0: Convoy serves the nonblocking and persistent forms too, and a
 *    handed-back blocking call runs as the library's nonblocking one plus a wait that
 *    progresses Convoy's pending operations (MPI promises progress on all pending operations
 *    while a process blocks in any call): Open MPI 4.1's nonblocking collectives cost about
 *    twice its blocking ones at small counts.
 */
#include "pmpi/dropin.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* --- parameter and argument lists, one pair per collective ------------------------------ */

#define P_Allgather                                                                                \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,       \
        MPI_Datatype recvtype, MPI_Comm comm
#define A_Allgather sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm

#define P_Allgatherv                                                                               \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                      \
        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm
#define A_Allgatherv sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm

#define P_Allreduce                                                                                \
    const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define A_Allreduce sendbuf, recvbuf, count, datatype, op, comm

#define P_Barrier MPI_Comm comm
#define A_Barrier comm

#define P_Reduce_scatter                                                                           \
    const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,  \
        MPI_Comm comm
#define A_Reduce_scatter sendbuf, recvbuf, recvcounts, datatype, op, comm

#define P_Reduce_scatter_block                                                                     \
    const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,           \
        MPI_Comm comm
#define A_Reduce_scatter_block sendbuf, recvbuf, recvcount, datatype, op, comm

#define P_Bcast void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm
#define A_Bcast buffer, count, datatype, root, comm

#define P_Gather                                                                                   \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,       \
        MPI_Datatype recvtype, int root, MPI_Comm comm
#define A_Gather sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm

#define P_Gatherv                                                                                  \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                      \
        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm
#define A_Gatherv sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm

#define P_Scatter P_Gather
#define A_Scatter A_Gather

#define P_Scatterv                                                                                 \
    const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,        \
        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define A_Scatterv sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm

#define P_Reduce                                                                                   \
    const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,     \
        MPI_Comm comm
#define A_Reduce sendbuf, recvbuf, count, datatype, op, root, comm

#define P_Scan P_Allreduce
#define A_Scan A_Allreduce
#define P_Exscan P_Allreduce
#define A_Exscan A_Allreduce

#define P_Alltoall P_Allgather
#define A_Alltoall A_Allgather

/* --- the three forms ------------------------------------------------------------------- */

/* Persistent collectives: MPI-4 names (MPICH 4), Open MPI 4.1's MPIX_ extension. */
#if MPI_VERSION >= 4
#define DROPIN_HAVE_INIT 1
#define INIT_NAME(Name) MPI_##Name##_init
#define PINIT_NAME(Name) PMPI_##Name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define DROPIN_HAVE_INIT 1
#define INIT_NAME(Name) MPIX_##Name##_init
#define PINIT_NAME(Name) PMPIX_##Name##_init
#else
#define DROPIN_HAVE_INIT 0
#endif

#if DROPIN_HAVE_INIT
#define DROPIN_WRAP_INIT(Name, ID)                                                                 \
    int INIT_NAME(Name)(P_##Name, MPI_Info info, MPI_Request * request)                            \
    {                                                                                              \
        if (!request || dropin_handback_nb(DROPIN_##ID, comm))                                     \
            return PINIT_NAME(Name)(A_##Name, info, request);                                      \
        convoy_request cr;                                                                         \
        int rc = convoy_##Name##_init(A_##Name, info, &cr);                                        \
        return rc ? rc : dropin_persistent(DROPIN_##ID, cr, request);                              \
    }
#else
#define DROPIN_WRAP_INIT(Name, ID)
#endif

/* --- the memo of blocking calls the MPI library serves ----------------------------------
 *
 * A blocking call that Convoy hands to the library's blocking collective (its model, a
 * forced or tuned native, no algorithm) costs, through convoy_*, about 450 instructions
 * over the library's own and a few dozen cache lines of Convoy's state (its communicator
 * state, kept request, plan): about 0.3 us per call at np 4 as 2 x 2 on this 2-core host,
 * against 0.05 us for the wrapper alone (CONVOY_DISABLE=all). So each thread remembers, per
 * collective, the last call Convoy kept as such (convoy__fast_direct: its fast path's
 * direct entry, which holds every condition of Convoy's own fast path: named datatypes,
 * predefined operations, no verbose, CONVOY_CHECK_ARGS or watchdog, a ready state) with
 * every argument but the buffers' addresses (their predicates MPI_IN_PLACE, NULL, send ==
 * recv are kept); an equal call on the same communicator, with no communicator state freed
 * since (a freed handle may come back as another communicator), the settings unchanged
 * and, for Barrier, the same tuned n, is the library's call at once, counted for the same
 * reason. Convoy's choice for a call is a function of those alone, so it is the one Convoy
 * would make (count vectors compared by content, as Convoy's fast path does; Convoy
 * keeps no Gatherv or Scatterv on more than one process, whose counts only the root
 * knows, so those are never remembered). Per thread: the communicator Convoy found last is per
 * thread too, and a record is never read while another thread writes it. */

typedef struct dropin_key {
    MPI_Comm comm;
    int count, count2, root;
    unsigned preds;
    MPI_Datatype t1, t2;
    MPI_Op op;
    const int *v1, *v2; /* count vectors (compared by content), or NULL */
} dropin_key;

typedef struct dropin_memo {
    int valid, why;
    dropin_key k; /* v1, v2: NULL or not, as the call's */
    int n;        /* the communicator's size: entries of v1 and of v2 in vec */
    int *vec, cap;
    uint64_t gen;
    unsigned long freed;
    const convoy__cstate *cs;
    int barrier_n;
} dropin_memo;

static unsigned preds(const void *s, const void *r)
{
    return (s == MPI_IN_PLACE) | (r == MPI_IN_PLACE) << 1 | (s == r) << 2 | (s == NULL) << 3 |
           (r == NULL) << 4;
}

#define KEY(s, r, n, n2, rt, t1_, t2_, op_, v1_, v2_)                                              \
    {                                                                                              \
        .comm = comm, .count = (n), .count2 = (n2), .root = (rt), .preds = preds((s), (r)),        \
        .t1 = (t1_), .t2 = (t2_), .op = (op_), .v1 = (v1_), .v2 = (v2_)                            \
    }
#define KEY_Allgather                                                                              \
    KEY(sendbuf, recvbuf, sendcount, recvcount, 0, sendtype, recvtype, MPI_OP_NULL, NULL, NULL)
#define KEY_Allgatherv                                                                             \
    KEY(sendbuf, recvbuf, sendcount, 0, 0, sendtype, recvtype, MPI_OP_NULL, recvcounts, displs)
#define KEY_Allreduce KEY(sendbuf, recvbuf, count, 0, 0, datatype, datatype, op, NULL, NULL)
#define KEY_Barrier                                                                                \
    KEY(NULL, NULL, 0, 0, 0, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_OP_NULL, NULL, NULL)
#define KEY_Reduce_scatter KEY(sendbuf, recvbuf, 0, 0, 0, datatype, datatype, op, recvcounts, NULL)
#define KEY_Reduce_scatter_block                                                                   \
    KEY(sendbuf, recvbuf, recvcount, 0, 0, datatype, datatype, op, NULL, NULL)
#define KEY_Bcast KEY(NULL, buffer, count, 0, root, datatype, datatype, MPI_OP_NULL, NULL, NULL)
#define KEY_Gather                                                                                 \
    KEY(sendbuf, recvbuf, sendcount, recvcount, root, sendtype, recvtype, MPI_OP_NULL, NULL, NULL)
#define KEY_Gatherv                                                                                \
    KEY(sendbuf, recvbuf, sendcount, 0, root, sendtype, recvtype, MPI_OP_NULL, recvcounts, displs)
#define KEY_Scatter KEY_Gather
#define KEY_Scatterv                                                                               \
    KEY(sendbuf, recvbuf, recvcount, 0, root, sendtype, recvtype, MPI_OP_NULL, sendcounts, displs)
#define KEY_Reduce KEY(sendbuf, recvbuf, count, 0, root, datatype, datatype, op, NULL, NULL)
#define KEY_Scan KEY_Allreduce
#define KEY_Exscan KEY_Allreduce
#define KEY_Alltoall KEY_Allgather

static CONVOY_TLS_FAST dropin_memo *memos; /* DROPIN_NCOLL records, this thread's */
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;

static void memo_free(void *p)
{
    dropin_memo *m = p;
    for (int c = 0; c < DROPIN_NCOLL; c++)
        free(m[c].vec);
    free(m);
}

static void memo_key_make(void)
{
    pthread_key_create(&memo_key, memo_free);
}

static int same_key(const dropin_memo *m, const dropin_key *b)
{
    const dropin_key *a = &m->k;
    const size_t n = (size_t)m->n * sizeof(int);
    return a->comm == b->comm && a->count == b->count && a->count2 == b->count2 &&
           a->root == b->root && a->preds == b->preds && a->t1 == b->t1 && a->t2 == b->t2 &&
           a->op == b->op && !a->v1 == !b->v1 && !a->v2 == !b->v2 &&
           (!b->v1 || memcmp(m->vec, b->v1, n) == 0) &&
           (!b->v2 || memcmp(m->vec + m->n, b->v2, n) == 0);
}

/* 1 (counted) if the call is the library's blocking collective by the memo. */
static int memo_hit(int coll, const dropin_key *k)
{
    const dropin_memo *m = memos ? &memos[coll] : NULL;
    if (!m || !m->valid || !same_key(m, k) ||
        (atomic_load_explicit(&dropin_off_mask, memory_order_relaxed) >> coll & 1) ||
        m->freed != convoy__states_freed() || m->gen != convoy__config_gen() ||
        (coll == DROPIN_BARRIER && convoy__cstate_barrier_n(m->cs) != m->barrier_n))
        return 0;
    dropin_count_why(coll, m->why);
    return 1;
}

/* After a blocking call through convoy_* that succeeded: remembers it if Convoy kept it as
 * the library's blocking call, else forgets the collective's record. */
static void memo_record(int coll, int ccoll, const dropin_key *k)
{
    if (!memos) {
        pthread_once(&memo_once, memo_key_make);
        if (!(memos = calloc(DROPIN_NCOLL, sizeof *memos))) return;
        pthread_setspecific(memo_key, memos);
    }
    dropin_memo *m = &memos[coll];
    m->valid = 0;
    const unsigned long freed = convoy__states_freed(); /* before: the state is valid since */
    const char *why;
    uint64_t gen;
    const convoy__cstate *cs = convoy__cstate_cached(k->comm);
    if (!cs || !convoy__fast_direct(k->comm, ccoll, &gen, &why) || !gen) return;
    const int n = (k->v1 || k->v2) ? cs->topo.size : 0;
    if (2 * n > m->cap) {
        int *v = realloc(m->vec, 2 * (size_t)n * sizeof *v);
        if (!v) return;
        m->vec = v;
        m->cap = 2 * n;
    }
    if (k->v1) memcpy(m->vec, k->v1, (size_t)n * sizeof *m->vec);
    if (k->v2) memcpy(m->vec + n, k->v2, (size_t)n * sizeof *m->vec);
    m->n = n;
    m->k = *k;
    m->why = dropin_why_index(why);
    m->gen = gen;
    m->freed = freed;
    m->cs = cs;
    m->barrier_n = convoy__cstate_barrier_n(cs);
    m->valid = 1;
}

#define DROPIN_WRAP(Name, IName, ID)                                                               \
    int MPI_##Name(P_##Name)                                                                       \
    {                                                                                              \
        const dropin_key k_ = KEY_##Name;                                                          \
        if (memo_hit(DROPIN_##ID, &k_)) return PMPI_##Name(A_##Name);                              \
        if (dropin_handback(DROPIN_##ID, comm)) {                                                  \
            if (dropin_native_blocking()) return PMPI_##Name(A_##Name);                            \
            MPI_Request r;                                                                         \
            int rc = PMPI_##IName(A_##Name, &r);                                                   \
            return rc ? rc : dropin_wait_native(&r, MPI_STATUS_IGNORE);                            \
        }                                                                                          \
        int rc = convoy_##Name(A_##Name);                                                          \
        dropin_count_last(DROPIN_##ID);                                                            \
        if (rc == MPI_SUCCESS) memo_record(DROPIN_##ID, CONVOY_COLL_##ID, &k_);                    \
        return rc;                                                                                 \
    }                                                                                              \
    int MPI_##IName(P_##Name, MPI_Request *request)                                                \
    {                                                                                              \
        if (!request || dropin_handback_nb(DROPIN_##ID, comm))                                     \
            return PMPI_##IName(A_##Name, request);                                                \
        convoy_request cr;                                                                         \
        int rc = convoy_##IName(A_##Name, &cr);                                                    \
        return rc ? rc : dropin_nonblocking(DROPIN_##ID, cr, request);                             \
    }                                                                                              \
    DROPIN_WRAP_INIT(Name, ID)

DROPIN_WRAP(Allgather, Iallgather, ALLGATHER)
DROPIN_WRAP(Allgatherv, Iallgatherv, ALLGATHERV)
DROPIN_WRAP(Allreduce, Iallreduce, ALLREDUCE)
DROPIN_WRAP(Barrier, Ibarrier, BARRIER)
DROPIN_WRAP(Reduce_scatter, Ireduce_scatter, REDUCE_SCATTER)
DROPIN_WRAP(Reduce_scatter_block, Ireduce_scatter_block, REDUCE_SCATTER_BLOCK)
DROPIN_WRAP(Bcast, Ibcast, BCAST)
DROPIN_WRAP(Gather, Igather, GATHER)
DROPIN_WRAP(Gatherv, Igatherv, GATHERV)
DROPIN_WRAP(Scatter, Iscatter, SCATTER)
DROPIN_WRAP(Scatterv, Iscatterv, SCATTERV)
DROPIN_WRAP(Reduce, Ireduce, REDUCE)
DROPIN_WRAP(Scan, Iscan, SCAN)
DROPIN_WRAP(Exscan, Iexscan, EXSCAN)
DROPIN_WRAP(Alltoall, Ialltoall, ALLTOALL)

/* --- MPI-4 large-count names ----------------------------------------------------------- */
#if MPI_VERSION >= 4

static int fits(MPI_Count c)
{
    return c >= 0 && c <= INT_MAX;
}

/* A _c call whose counts fit an int is the int call (so it is checked and counted there);
 * else the MPI library's, counted as handed back for its count. FIT_ of a vector
 * collective makes int copies of its arrays in ic, id (Convoy copies what it keeps, so
 * they are freed when the call returns). */
#define DROPIN_C_FORM(name, iname, pname, ID, extra_p, extra_a)                                    \
    int name(PC_##pname extra_p)                                                                   \
    {                                                                                              \
        int *ic = NULL, *id = NULL, rc;                                                            \
        (void)id;                                                                                  \
        if (!(FIT_##pname)) {                                                                      \
            dropin_count_why(DROPIN_##ID, DROPIN_WHY_COUNT);                                       \
            return P##name(A_##pname extra_a);                                                     \
        }                                                                                          \
        rc = iname(AI_##pname extra_a);                                                            \
        free(ic);                                                                                  \
        return rc;                                                                                 \
    }
#define COMMA ,
#define DROPIN_WRAP_C(Name, IName, ID)                                                             \
    DROPIN_C_FORM(MPI_##Name##_c, MPI_##Name, Name, ID, , )                                        \
    DROPIN_C_FORM(MPI_##IName##_c, MPI_##IName, Name, ID, COMMA MPI_Request *request,              \
                  COMMA request)                                                                   \
    DROPIN_C_FORM(MPI_##Name##_init_c, MPI_##Name##_init, Name, ID,                                \
                  COMMA MPI_Info info COMMA MPI_Request *request, COMMA info COMMA request)

#define PC_Allgather                                                                               \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define FIT_Allgather (fits(sendcount) && fits(recvcount))
#define AI_Allgather sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm

#define PC_Allreduce                                                                               \
    const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,         \
        MPI_Comm comm
#define FIT_Allreduce fits(count)
#define AI_Allreduce sendbuf, recvbuf, (int)count, datatype, op, comm

#define PC_Reduce_scatter_block                                                                    \
    const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,     \
        MPI_Comm comm
#define FIT_Reduce_scatter_block fits(recvcount)
#define AI_Reduce_scatter_block sendbuf, recvbuf, (int)recvcount, datatype, op, comm

#define PC_Bcast void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm
#define FIT_Bcast fits(count)
#define AI_Bcast buffer, (int)count, datatype, root, comm

#define PC_Reduce                                                                                  \
    const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,         \
        int root, MPI_Comm comm
#define FIT_Reduce fits(count)
#define AI_Reduce sendbuf, recvbuf, (int)count, datatype, op, root, comm
#define PC_Scan PC_Allreduce
#define FIT_Scan FIT_Allreduce
#define AI_Scan AI_Allreduce
#define PC_Exscan PC_Allreduce
#define FIT_Exscan FIT_Allreduce
#define AI_Exscan AI_Allreduce

/* Alltoall: both counts matter on every rank. */
#define PC_Alltoall PC_Allgather
#define FIT_Alltoall (fits(sendcount) && fits(recvcount))
#define AI_Alltoall AI_Allgather

/* Gather(v) and Scatter(v): counts significant at the root only cannot decide alike on
 * every rank without communication, so their _c forms are always the MPI library's. */
#define PC_Gather                                                                                  \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define FIT_Gather 0
#define AI_Gather sendbuf, 0, sendtype, recvbuf, 0, recvtype, root, comm
#define PC_Scatter PC_Gather
#define FIT_Scatter 0
#define AI_Scatter AI_Gather
#define PC_Gatherv                                                                                 \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,    \
        MPI_Comm comm
#define FIT_Gatherv 0
#define AI_Gatherv sendbuf, 0, sendtype, recvbuf, NULL, NULL, recvtype, root, comm
#define PC_Scatterv                                                                                \
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],                    \
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,          \
        int root, MPI_Comm comm
#define FIT_Scatterv 0
#define AI_Scatterv sendbuf, NULL, NULL, sendtype, recvbuf, 0, recvtype, root, comm

/* Vector collectives: the counts (and displacements) of every rank, as ints. */
#define PC_Allgatherv                                                                              \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,              \
        MPI_Comm comm
#define FIT_Allgatherv                                                                             \
    (fits(sendcount) && ints_of(comm, recvcounts, displs, &ic, &id) == MPI_SUCCESS)
#define AI_Allgatherv sendbuf, (int)sendcount, sendtype, recvbuf, ic, id, recvtype, comm

#define PC_Reduce_scatter                                                                          \
    const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,       \
        MPI_Op op, MPI_Comm comm
#define FIT_Reduce_scatter (ints_of(comm, recvcounts, NULL, &ic, NULL) == MPI_SUCCESS)
#define AI_Reduce_scatter sendbuf, recvbuf, ic, datatype, op, comm

/* The int copies of a vector call's counts and displacements; fails if one does not fit or the
 * communicator is not valid (then the MPI library reports it). */
static int ints_of(MPI_Comm comm, const MPI_Count *c, const MPI_Aint *d, int **ic, int **id)
{
    int n, rc;
    if (!c || (rc = PMPI_Comm_size(comm, &n)) != MPI_SUCCESS) return MPI_ERR_ARG;
    int *a = malloc(2 * (size_t)n * sizeof *a);
    if (!a) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        if (!fits(c[i]) || (d && (d[i] < INT_MIN || d[i] > INT_MAX))) {
            free(a);
            return MPI_ERR_COUNT;
        }
        a[i] = (int)c[i];
        a[n + i] = d ? (int)d[i] : 0;
    }
    *ic = a;
    if (id) *id = a + n;
    return MPI_SUCCESS;
}

DROPIN_WRAP_C(Allgather, Iallgather, ALLGATHER)
DROPIN_WRAP_C(Allgatherv, Iallgatherv, ALLGATHERV)
DROPIN_WRAP_C(Allreduce, Iallreduce, ALLREDUCE)
DROPIN_WRAP_C(Reduce_scatter, Ireduce_scatter, REDUCE_SCATTER)
DROPIN_WRAP_C(Reduce_scatter_block, Ireduce_scatter_block, REDUCE_SCATTER_BLOCK)
DROPIN_WRAP_C(Bcast, Ibcast, BCAST)
DROPIN_WRAP_C(Gather, Igather, GATHER)
DROPIN_WRAP_C(Gatherv, Igatherv, GATHERV)
DROPIN_WRAP_C(Scatter, Iscatter, SCATTER)
DROPIN_WRAP_C(Scatterv, Iscatterv, SCATTERV)
DROPIN_WRAP_C(Reduce, Ireduce, REDUCE)
DROPIN_WRAP_C(Scan, Iscan, SCAN)
DROPIN_WRAP_C(Exscan, Iexscan, EXSCAN)
DROPIN_WRAP_C(Alltoall, Ialltoall, ALLTOALL)

#endif
