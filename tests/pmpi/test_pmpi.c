/*
 * libconvoy_pmpi against the MPI library, in one run: the program calls the plain MPI_*
 * names (which this test links before the MPI library, as a user would; the preload tests
 * run the same binary with LD_PRELOAD) and computes every reference through PMPI_*, which
 * no interposition reaches.
 *
 * Per covered collective and count: blocking; nonblocking completed by MPI_Wait, by an
 * MPI_Test loop, by MPI_Waitall over the collective and a ring of point-to-point requests,
 * by MPI_Waitany/MPI_Testany; persistent (MPI_Start twice with new data, MPI_Startall,
 * MPI_Request_free) where the MPI library has persistent collectives. Then the
 * first-call-nonblocking NBX pattern (Issend + Ibarrier + Iprobe on a fresh communicator),
 * an intercommunicator, a zero-size large-count call (MPI-4), and the CONVOY_STATS counts
 * of every hand-back reason (CONVOY_DISABLE and CONVOY_DEVICE runs check theirs).
 */
#include "../mpi/common.h"
#include "pmpi/dropin.h"

#include <dlfcn.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#if MPI_VERSION >= 4
#define HAVE_INIT 1
#define INIT(Name) MPI_##Name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HAVE_INIT 1
#define INIT(Name) MPIX_##Name##_init
#else
#define HAVE_INIT 0
#endif

static int P, me;

/* The library's counts, found at run time: this binary is linked with libconvoy_pmpi
 * (test_pmpi) or gets it preloaded (test_pmpi_plain); without it every check fails. */
static long (*stats_get)(int, const char *);
#define dropin_stats_get(c, n) (stats_get ? stats_get(c, n) : -1000)

#define CHECK(ok, ...)                                                                             \
    do {                                                                                           \
        char what_[256];                                                                           \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                \
        tc_check(MPI_COMM_WORLD, (ok), what_, NULL);                                               \
    } while (0)

/* CONVOY_NATIVE_BLOCKING (the drop-in's default; 0 turns it off): the nonblocking and
 * persistent forms are the library's. */
static int native_blocking(void)
{
    const char *nb = getenv("CONVOY_NATIVE_BLOCKING");
    return !nb || !*nb || strcmp(nb, "0") != 0;
}

/* The reason the drop-in hands back every call of a collective (CONVOY_DISABLE,
 * CONVOY_DEVICE), or NULL. */
static const char *off_wrapper(const char *name)
{
    const char *dis = getenv("CONVOY_DISABLE"), *dev = getenv("CONVOY_DEVICE");
    if (dev && strcmp(dev, "device") == 0) return "device";
    size_t n = strlen(name);
    for (const char *p = dis; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
        if (strcspn(p, ",") == n && strncmp(p, name, n) == 0) return "disabled";
    return NULL;
}

/* The reason Convoy hands back every call it plans: CONVOY_<COLL>_ALGO=native, or the
 * tuning file of the pmpi_tuning run (tuning.json: Allreduce native at every size). */
static const char *off_convoy(const char *name)
{
    char var[64];
    snprintf(var, sizeof var, "CONVOY_%s_ALGO", name);
    for (char *c = var; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    const char *v = getenv(var);
    if (v && strcmp(v, "native") == 0) return "forced";
    if (getenv("CONVOY_TUNING_FILE") && strcmp(name, "allreduce") == 0) return "tuning";
    return NULL;
}

static const char *off(const char *name)
{
    return off_wrapper(name) ? off_wrapper(name) : off_convoy(name);
}

enum { NATIVE, BLOCKING, NONBLOCKING, PERSISTENT };

/* One collective: runs it in a mode on in/out (in: P * n ints, out: P * n + P ints). */
typedef struct coll {
    const char *name;
    int id; /* DROPIN_* */
    int (*run)(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r);
} coll;

static int counts[64], displs[64];

/* Irregular counts n + i % 3 for the vector collectives, displacements with a gap. */
static void vec(int n)
{
    for (int i = 0, d = 0; i < P; i++) {
        counts[i] = n + i % 3;
        displs[i] = d;
        d += counts[i] + 1;
    }
}

#define FORMS(native, blocking, nb, init)                                                          \
    switch (mode) {                                                                                \
    case NATIVE: return native;                                                                    \
    case BLOCKING: return blocking;                                                                \
    case NONBLOCKING: return nb;                                                                   \
    default: return init;                                                                          \
    }

#if HAVE_INIT
#define INIT_CALL(Name, ...) INIT(Name)(__VA_ARGS__, MPI_INFO_NULL, r)
#else
#define INIT_CALL(Name, ...) MPI_ERR_OTHER
#endif

static int run_allgather(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, n, MPI_INT, out, n, MPI_INT, c
    FORMS(PMPI_Allgather(A), MPI_Allgather(A), MPI_Iallgather(A, r), INIT_CALL(Allgather, A))
#undef A
}

static int run_allgatherv(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    vec(n);
#define A in, counts[me], MPI_INT, out, counts, displs, MPI_INT, c
    FORMS(PMPI_Allgatherv(A), MPI_Allgatherv(A), MPI_Iallgatherv(A, r), INIT_CALL(Allgatherv, A))
#undef A
}

static int run_allreduce(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, out, n, MPI_INT, MPI_SUM, c
    FORMS(PMPI_Allreduce(A), MPI_Allreduce(A), MPI_Iallreduce(A, r), INIT_CALL(Allreduce, A))
#undef A
}

static int run_barrier(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    (void)n, (void)in, (void)out;
    FORMS(PMPI_Barrier(c), MPI_Barrier(c), MPI_Ibarrier(c, r), INIT_CALL(Barrier, c))
}

static int run_reduce_scatter(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    vec(n);
#define A in, out, counts, MPI_INT, MPI_SUM, c
    FORMS(PMPI_Reduce_scatter(A), MPI_Reduce_scatter(A), MPI_Ireduce_scatter(A, r),
          INIT_CALL(Reduce_scatter, A))
#undef A
}

static int run_reduce_scatter_block(int mode, int n, const int *in, int *out, MPI_Comm c,
                                    MPI_Request *r)
{
#define A in, out, n, MPI_INT, MPI_SUM, c
    FORMS(PMPI_Reduce_scatter_block(A), MPI_Reduce_scatter_block(A),
          MPI_Ireduce_scatter_block(A, r), INIT_CALL(Reduce_scatter_block, A))
#undef A
}

/* Rooted collectives: the last rank is the root (Bcast sends from `in`, receives in `out`). */
static int run_bcast(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    const int root = P - 1;
    void *b = me == root ? (void *)in : out;
#define A b, n, MPI_INT, root, c
    FORMS(PMPI_Bcast(A), MPI_Bcast(A), MPI_Ibcast(A, r), INIT_CALL(Bcast, A))
#undef A
}

static int run_gather(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, n, MPI_INT, out, n, MPI_INT, P - 1, c
    FORMS(PMPI_Gather(A), MPI_Gather(A), MPI_Igather(A, r), INIT_CALL(Gather, A))
#undef A
}

static int run_gatherv(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    vec(n);
#define A in, counts[me], MPI_INT, out, counts, displs, MPI_INT, P - 1, c
    FORMS(PMPI_Gatherv(A), MPI_Gatherv(A), MPI_Igatherv(A, r), INIT_CALL(Gatherv, A))
#undef A
}

static int run_scatter(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, n, MPI_INT, out, n, MPI_INT, P - 1, c
    FORMS(PMPI_Scatter(A), MPI_Scatter(A), MPI_Iscatter(A, r), INIT_CALL(Scatter, A))
#undef A
}

static int run_scatterv(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
    vec(n);
#define A in, counts, displs, MPI_INT, out, counts[me], MPI_INT, P - 1, c
    FORMS(PMPI_Scatterv(A), MPI_Scatterv(A), MPI_Iscatterv(A, r), INIT_CALL(Scatterv, A))
#undef A
}

static int run_reduce(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, out, n, MPI_INT, MPI_SUM, P - 1, c
    FORMS(PMPI_Reduce(A), MPI_Reduce(A), MPI_Ireduce(A, r), INIT_CALL(Reduce, A))
#undef A
}

static int run_scan(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, out, n, MPI_INT, MPI_SUM, c
    FORMS(PMPI_Scan(A), MPI_Scan(A), MPI_Iscan(A, r), INIT_CALL(Scan, A))
#undef A
}

static int run_exscan(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, out, n, MPI_INT, MPI_SUM, c
    FORMS(PMPI_Exscan(A), MPI_Exscan(A), MPI_Iexscan(A, r), INIT_CALL(Exscan, A))
#undef A
}

/* Alltoall: n ints per block, so in is read as P blocks of n (in holds P * n ints). */
static int run_alltoall(int mode, int n, const int *in, int *out, MPI_Comm c, MPI_Request *r)
{
#define A in, n, MPI_INT, out, n, MPI_INT, c
    FORMS(PMPI_Alltoall(A), MPI_Alltoall(A), MPI_Ialltoall(A, r), INIT_CALL(Alltoall, A))
#undef A
}

static const coll colls[] = {
    {"allgather", DROPIN_ALLGATHER, run_allgather},
    {"allgatherv", DROPIN_ALLGATHERV, run_allgatherv},
    {"allreduce", DROPIN_ALLREDUCE, run_allreduce},
    {"barrier", DROPIN_BARRIER, run_barrier},
    {"reduce_scatter", DROPIN_REDUCE_SCATTER, run_reduce_scatter},
    {"reduce_scatter_block", DROPIN_REDUCE_SCATTER_BLOCK, run_reduce_scatter_block},
    {"bcast", DROPIN_BCAST, run_bcast},
    {"gather", DROPIN_GATHER, run_gather},
    {"gatherv", DROPIN_GATHERV, run_gatherv},
    {"scatter", DROPIN_SCATTER, run_scatter},
    {"scatterv", DROPIN_SCATTERV, run_scatterv},
    {"reduce", DROPIN_REDUCE, run_reduce},
    {"scan", DROPIN_SCAN, run_scan},
    {"exscan", DROPIN_EXSCAN, run_exscan},
    {"alltoall", DROPIN_ALLTOALL, run_alltoall},
};
enum { NCOLLS = sizeof colls / sizeof colls[0] };

static void fill(int *in, size_t len, int seed)
{
    for (size_t i = 0; i < len; i++)
        in[i] = (int)((me + 1) * 1000003u + i * 7919u + (unsigned)seed * 104729u) % 100000;
}

/* Compares out with the native result on the same input (every rank, logical AND). */
static void compare(const coll *k, const char *how, int n, const int *in, const int *out,
                    size_t len)
{
    int *ref = calloc(len, sizeof *ref);
    k->run(NATIVE, n, in, ref, MPI_COMM_WORLD, NULL);
    size_t bad = 0;
    while (bad < len && ref[bad] == out[bad])
        bad++;
    if (bad < len)
        tc_logf("%s %s n=%d: element %zu is %d, native %d", k->name, how, n, bad, out[bad],
                ref[bad]);
    CHECK(bad == len, "%s %s n=%d P=%d", k->name, how, n, P);
    free(ref);
}

/* A ring of point-to-point messages mixed into the same waits. */
static void ring_post(int *sbuf, int *rbuf, MPI_Request *rq)
{
    *sbuf = me;
    PMPI_Irecv(rbuf, 1, MPI_INT, (me + P - 1) % P, 77, MPI_COMM_WORLD, &rq[0]);
    PMPI_Isend(sbuf, 1, MPI_INT, (me + 1) % P, 77, MPI_COMM_WORLD, &rq[1]);
}

static void run_coll(const coll *k, int n)
{
    const size_t len = (size_t)P * (n + 3) + P;
    int *in = malloc(len * sizeof *in), *out = calloc(len, sizeof *out);
    MPI_Request r, rq[3];
    fill(in, len, 1);

    CHECK(k->run(BLOCKING, n, in, out, MPI_COMM_WORLD, NULL) == MPI_SUCCESS, "%s blocking rc",
          k->name);
    compare(k, "blocking", n, in, out, len);

    memset(out, 0, len * sizeof *out);
    k->run(NONBLOCKING, n, in, out, MPI_COMM_WORLD, &r);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "%s MPI_Wait",
          k->name);
    compare(k, "MPI_Wait", n, in, out, len);

    memset(out, 0, len * sizeof *out);
    k->run(NONBLOCKING, n, in, out, MPI_COMM_WORLD, &r);
    for (int flag = 0; !flag;)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    compare(k, "MPI_Test loop", n, in, out, len);

    int sbuf, rbuf = -1;
    memset(out, 0, len * sizeof *out);
    ring_post(&sbuf, &rbuf, rq);
    k->run(NONBLOCKING, n, in, out, MPI_COMM_WORLD, &rq[2]);
    MPI_Status st[3];
    CHECK(MPI_Waitall(3, rq, st) == MPI_SUCCESS && rbuf == (me + P - 1) % P &&
              st[0].MPI_SOURCE == (me + P - 1) % P,
          "%s MPI_Waitall with point-to-point", k->name);
    compare(k, "MPI_Waitall", n, in, out, len);

    memset(out, 0, len * sizeof *out);
    ring_post(&sbuf, &rbuf, rq);
    k->run(NONBLOCKING, n, in, out, MPI_COMM_WORLD, &rq[2]);
    for (int left = 3; left > 0;) {
        int idx, flag = 0;
        if (left == 2)
            MPI_Testany(3, rq, &idx, &flag, MPI_STATUS_IGNORE);
        else
            MPI_Waitany(3, rq, &idx, MPI_STATUS_IGNORE), flag = 1;
        if (flag) left--;
    }
    compare(k, "MPI_Waitany/Testany", n, in, out, len);

#if HAVE_INIT
#ifdef MPICH
    /* MPICH 4.0's own persistent Allgather, Gather and Scatter return stale data from the
     * second start on (the own block is copied when the request is made: two starts of
     * MPI_Allgather_init on 2 processes give "100 1" for "100 101", without Convoy): only
     * compared where Convoy serves them (not under CONVOY_NATIVE_BLOCKING: the library's). */
    if ((off_wrapper(k->name) || native_blocking()) &&
        (!strcmp(k->name, "allgather") || !strcmp(k->name, "gather") ||
         !strcmp(k->name, "scatter")))
        goto done;
#endif
    MPI_Request p[2];
    memset(out, 0, len * sizeof *out);
    CHECK(k->run(PERSISTENT, n, in, out, MPI_COMM_WORLD, &p[0]) == MPI_SUCCESS,
          "%s persistent init", k->name);
    for (int round = 0; round < 2; round++) {
        fill(in, len, 10 + round); /* new data at every start */
        MPI_Start(&p[0]);
        MPI_Wait(&p[0], MPI_STATUS_IGNORE);
        CHECK(p[0] != MPI_REQUEST_NULL, "%s persistent handle kept", k->name);
        compare(k, "persistent", n, in, out, len);
    }
    /* Startall over the persistent collective and a persistent receive. */
    PMPI_Recv_init(&rbuf, 1, MPI_INT, (me + P - 1) % P, 78, MPI_COMM_WORLD, &p[1]);
    fill(in, len, 20);
    MPI_Startall(2, p);
    PMPI_Send(&me, 1, MPI_INT, (me + 1) % P, 78, MPI_COMM_WORLD);
    MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
    compare(k, "MPI_Startall", n, in, out, len);
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    CHECK(p[0] == MPI_REQUEST_NULL, "%s MPI_Request_free", k->name);
#ifdef MPICH
done:
#endif
#endif
    free(in);
    free(out);
}

/* NBX (Hoefler et al.): synchronous sends to two neighbours, then probe for messages;
 * once the sends are matched, a nonblocking barrier; done when it completes. The
 * Ibarrier is the first Convoy call on the communicator: it must not block for setup. */
static void nbx(void)
{
    MPI_Comm c;
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    const int nto = P > 2 ? 2 : P - 1;
    int data[2] = {me, me}, got = 0, barrier_active = 0, done = 0;
    MPI_Request sr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, br = MPI_REQUEST_NULL;
    for (int i = 0; i < nto; i++)
        MPI_Issend(&data[i], 1, MPI_INT, (me + 1 + i) % P, 5, c, &sr[i]);
    const char *why = off_wrapper("barrier") ? off_wrapper("barrier")
                      : native_blocking()    ? "blocking_only"
                                             : "setup";
    long setup0 = dropin_stats_get(DROPIN_BARRIER, why);
    while (!done) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, 5, c, &flag, &st);
        if (flag) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 5, c, MPI_STATUS_IGNORE);
            got++;
        }
        if (barrier_active) {
            MPI_Test(&br, &done, MPI_STATUS_IGNORE);
        } else {
            MPI_Testall(2, sr, &flag, MPI_STATUSES_IGNORE);
            if (flag) {
                MPI_Ibarrier(c, &br);
                barrier_active = 1;
            }
        }
    }
    CHECK(got == nto, "NBX: %d messages received, %d expected", got, nto);
    CHECK(P == 1 || dropin_stats_get(DROPIN_BARRIER, why) == setup0 + 1,
          "NBX: the first Ibarrier is handed back (%s)", why);
    /* The communicator's later calls are Convoy's (or the cost model's or the trial's
     * choice: src/api/trial.c). */
    why = off("allreduce") ? off("allreduce") : "served";
    long served0 = dropin_stats_get(DROPIN_ALLREDUCE, why) +
                   (off("allreduce") ? 0
                                     : dropin_stats_get(DROPIN_ALLREDUCE, "model") +
                                           dropin_stats_get(DROPIN_ALLREDUCE, "trial"));
    int x = me, s;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, c);
    CHECK(s == P * (P - 1) / 2, "allreduce after NBX");
    CHECK(dropin_stats_get(DROPIN_ALLREDUCE, why) +
                  (off("allreduce") ? 0
                                    : dropin_stats_get(DROPIN_ALLREDUCE, "model") +
                                          dropin_stats_get(DROPIN_ALLREDUCE, "trial")) ==
              served0 + 1,
          "allreduce after NBX counted (%s)", why);
    MPI_Comm_free(&c);
}

/* A pending Convoy collective progresses while the program blocks in point-to-point calls:
 * rank 1 finishes its Iallreduce before it sends to rank 0, which sits in MPI_Recv (then
 * MPI_Probe and MPI_Sendrecv) with its own part of the Iallreduce still to do. */
static void p2p_progress(void)
{
    if (P < 2) return;
    enum { N = 20000 };
    int *x = malloc(N * sizeof *x), *y = calloc(N, sizeof *y), *ref = calloc(N, sizeof *ref);
    for (int i = 0; i < N; i++)
        x[i] = me + i;
    for (int round = 0; round < 3; round++) {
        MPI_Request r;
        int v = me, got = -1;
        MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        if (me == 0) {
            MPI_Status st;
            if (round == 0) MPI_Recv(&got, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (round == 1) {
                MPI_Probe(1, 31, MPI_COMM_WORLD, &st);
                MPI_Recv(&got, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            if (round == 2)
                MPI_Sendrecv(&v, 1, MPI_INT, 1, 32, &got, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, &st);
        } else if (me == 1) {
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            if (round == 2)
                MPI_Sendrecv(&v, 1, MPI_INT, 0, 31, &got, 1, MPI_INT, 0, 32, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            else
                MPI_Send(&v, 1, MPI_INT, 0, 31, MPI_COMM_WORLD);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        PMPI_Allreduce(x, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(memcmp(y, ref, N * sizeof *y) == 0 && (me == 0                 ? got == 1
                                                     : me == 1 && round == 2 ? got == 0
                                                                             : 1),
              "Iallreduce progresses in blocking point-to-point (round %d)", round);
    }
    free(x), free(y), free(ref);
}

/* A handed-back blocking collective while the processes differ in what of Convoy's is
 * pending: rank 0 enters MPI_Barrier with its part of an MPI_Iallgather still to do, the
 * others complete theirs first (they need rank 0's progress). Every process must make the
 * same kind of native call: MPI's blocking and nonblocking collectives do not match. */
static void handback_kind(void)
{
    if (P < 2 || !off_wrapper("barrier")) return;
    enum { N = 20000 };
    int *x = malloc(N * sizeof *x), *y = malloc((size_t)P * N * sizeof *y),
        *ref = malloc((size_t)P * N * sizeof *ref);
    fill(x, N, me);
    MPI_Request r;
    MPI_Iallgather(x, N, MPI_INT, y, N, MPI_INT, MPI_COMM_WORLD, &r);
    if (me == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PMPI_Allgather(x, N, MPI_INT, ref, N, MPI_INT, MPI_COMM_WORLD);
    CHECK(memcmp(y, ref, (size_t)P * N * sizeof *y) == 0,
          "handed-back Barrier with an Iallgather pending on rank 0 only");
    free(x), free(y), free(ref);
}

/* The drop-in's memo of calls the library serves with its blocking collective (colls.c):
 * repeated calls forced native (CONVOY_<COLL>_ALGO=native, set alike on every rank
 * between calls), their arguments changing one at a time (buffer, root, count, in place,
 * op, an Allgatherv's counts by content at the same address), each against the library's result and
 * counted once as forced; a changed setting seen at the next call (binomial serves it); a freed
 * communicator's handle, reused by a new one, goes to Convoy again (it has state after the call).
 */
static void memo(void)
{
    if (!native_blocking() || off_wrapper("bcast") || off_wrapper("allreduce") ||
        off_wrapper("barrier") || off_wrapper("allgatherv") || P > 16)
        return;
    /* Convoy's state for a communicator, if this thread's last blocking call found it. */
    void *(*state)(MPI_Comm) = (void *(*)(MPI_Comm))dlsym(RTLD_DEFAULT, "convoy__cstate_cached");
    MPI_Comm c;
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    const long b0 = dropin_stats_get(DROPIN_BCAST, "forced"),
               a0 = dropin_stats_get(DROPIN_ALLREDUCE, "forced"),
               r0 = dropin_stats_get(DROPIN_BARRIER, "forced"),
               v0 = dropin_stats_get(DROPIN_ALLGATHERV, "forced");
    setenv("CONVOY_BCAST_ALGO", "native", 1);
    setenv("CONVOY_ALLREDUCE_ALGO", "native", 1);
    setenv("CONVOY_BARRIER_ALGO", "native", 1);
    setenv("CONVOY_ALLGATHERV_ALGO", "native", 1);
    int vc[16], vd[16], vin[3], vout[64], vref[64];
    enum { CALLS = 24 };
    int bufs[2][4], bad = 0;
    for (int i = 0; i < CALLS; i++) {
        const int root = (i / 3) % P, n = 1 + (i / 8), *want;
        int *buf = bufs[i % 2];
        for (int k = 0; k < n; k++)
            buf[k] = me == root ? 100 * i + k : -1;
        MPI_Bcast(buf, n, MPI_INT, root, c);
        for (int k = 0; k < n; k++)
            bad += buf[k] != 100 * i + k;
        int x[2] = {me + i, 2 * me - i}, y[2] = {0, 0}, ref[2];
        MPI_Op op = i % 5 == 4 ? MPI_MAX : MPI_SUM;
        PMPI_Allreduce(x, ref, 2, MPI_INT, op, c);
        if (i % 4 == 3) {
            MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_INT, op, c);
            want = x;
        } else {
            MPI_Allreduce(x, y, 2, MPI_INT, op, c);
            want = y;
        }
        bad += want[0] != ref[0] || want[1] != ref[1];
        MPI_Barrier(c);
        /* The counts change by content at the same address after 12 calls. */
        for (int q = 0, d = 0; q < P; q++, d += 3)
            vc[q] = i < 12 ? 1 + q % 2 : 2 - q % 2, vd[q] = d;
        for (int k = 0; k < 3; k++)
            vin[k] = 10 * me + k + i;
        memset(vout, 0, sizeof vout);
        memset(vref, 0, sizeof vref);
        MPI_Allgatherv(vin, vc[me], MPI_INT, vout, vc, vd, MPI_INT, c);
        PMPI_Allgatherv(vin, vc[me], MPI_INT, vref, vc, vd, MPI_INT, c);
        bad += memcmp(vout, vref, sizeof vout) != 0;
    }
    CHECK(bad == 0,
          "memo: %d calls of Bcast, Allreduce and Allgatherv forced native, as the library's",
          CALLS);
    CHECK(dropin_stats_get(DROPIN_ALLGATHERV, "forced") - v0 == CALLS,
          "memo: every Allgatherv counted forced (%ld of %d)",
          dropin_stats_get(DROPIN_ALLGATHERV, "forced") - v0, CALLS);
    CHECK(dropin_stats_get(DROPIN_BCAST, "forced") - b0 == CALLS &&
              dropin_stats_get(DROPIN_ALLREDUCE, "forced") - a0 == CALLS &&
              dropin_stats_get(DROPIN_BARRIER, "forced") - r0 == CALLS,
          "memo: every call counted forced (bcast %ld, allreduce %ld, barrier %ld of %d)",
          dropin_stats_get(DROPIN_BCAST, "forced") - b0,
          dropin_stats_get(DROPIN_ALLREDUCE, "forced") - a0,
          dropin_stats_get(DROPIN_BARRIER, "forced") - r0, CALLS);
    /* A changed setting: the same call is Convoy's binomial now. */
    setenv("CONVOY_BCAST_ALGO", "binomial", 1);
    const long bin0 = dropin_stats_get(DROPIN_BCAST, "binomial");
    int v = me == 0 ? 7 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, c);
    CHECK(v == 7 && dropin_stats_get(DROPIN_BCAST, "binomial") == bin0 + 1,
          "memo: a changed CONVOY_BCAST_ALGO is seen at the next call");
    /* A freed communicator's handle: a new communicator may get it. */
    setenv("CONVOY_BCAST_ALGO", "native", 1);
    for (int i = 0; i < 3; i++) {
        v = me == 0 ? i : -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, c);
    }
    MPI_Comm_free(&c);
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK(state && !state(c), "memo: a new communicator has no Convoy state");
    v = me == 0 ? 9 : -1;
    MPI_Bcast(&v, 1, MPI_INT, 0, c);
    CHECK(v == 9 && state && state(c),
          "memo: the first call on a new communicator (a freed one's handle) goes to Convoy");
    unsetenv("CONVOY_BCAST_ALGO");
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    unsetenv("CONVOY_BARRIER_ALGO");
    unsetenv("CONVOY_ALLGATHERV_ALGO");
    PMPI_Comm_free(&c);
}

static void intercomm(void)
{
    if (P < 2) return;
    MPI_Comm half, inter;
    int color = me < P / 2;
    PMPI_Comm_split(MPI_COMM_WORLD, color, me, &half);
    PMPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? P / 2 : 0, 9, &inter);
    const char *why = off_wrapper("allreduce") ? off_wrapper("allreduce") : "intercomm";
    long n0 = dropin_stats_get(DROPIN_ALLREDUCE, why);
    int x = me + 1, s = 0, want = 0;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < P; i++)
        if ((i < P / 2) != color) want += i + 1; /* the remote group's sum */
    CHECK(s == want, "intercommunicator allreduce: %d, expected %d", s, want);
    CHECK(dropin_stats_get(DROPIN_ALLREDUCE, why) == n0 + 1, "intercommunicator counted (%s)", why);
    PMPI_Comm_free(&inter);
    PMPI_Comm_free(&half);
}

#if MPI_VERSION >= 4
/* A count past INT_MAX of a zero-size type moves nothing: the MPI library's. */
static void large_count(void)
{
    MPI_Datatype empty;
    PMPI_Type_contiguous(0, MPI_INT, &empty);
    PMPI_Type_commit(&empty);
    char b = 0, c = 0;
    long n0 = dropin_stats_get(DROPIN_ALLGATHER, "count");
    CHECK(MPI_Allgather_c(&b, (MPI_Count)1 << 31, empty, &c, (MPI_Count)1 << 31, empty,
                          MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Allgather_c past INT_MAX");
    CHECK(dropin_stats_get(DROPIN_ALLGATHER, "count") == n0 + 1, "large count counted");
    int x = me, s = 0;
    long s0 = dropin_stats_get(DROPIN_ALLREDUCE, "served") +
              dropin_stats_get(DROPIN_ALLREDUCE, "handed_back");
    MPI_Allreduce_c(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(s == P * (P - 1) / 2 && dropin_stats_get(DROPIN_ALLREDUCE, "served") +
                                          dropin_stats_get(DROPIN_ALLREDUCE, "handed_back") ==
                                      s0 + 1,
          "MPI_Allreduce_c within int range goes through the wrapper");
    PMPI_Type_free(&empty);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    stats_get = (long (*)(int, const char *))dlsym(RTLD_DEFAULT, "dropin_stats_get");
    PMPI_Comm_size(MPI_COMM_WORLD, &P);
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    static const int ns[] = {1, 5, 3000};
    for (int i = 0; i < NCOLLS; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
            run_coll(&colls[i], ns[j]);
    nbx();
    p2p_progress();
    handback_kind();
    memo();
    intercomm();
#if MPI_VERSION >= 4
    large_count();
#endif
    /* Each collective's calls were counted once each; disabled or device ones all as such. */
    const char *nc = getenv("CONVOY_NATIVE_CANDIDATE");
    for (int i = 0; i < NCOLLS; i++) {
        const coll *k = &colls[i];
        long served = dropin_stats_get(k->id, "served");
        long back = dropin_stats_get(k->id, "handed_back");
        if (off(k->name))
            CHECK(served == 0 && dropin_stats_get(k->id, off(k->name)) > 0,
                  "%s handed back whole (%s): served %ld", k->name, off(k->name), served);
        else if (nc && !strcmp(nc, "0"))
            CHECK(served > 0, "%s served by Convoy (native no candidate)", k->name);
        else
            CHECK(served + back > 0, "%s counted", k->name);
        if (native_blocking() && !off(k->name))
            CHECK(dropin_stats_get(k->id, "blocking_only") > 0,
                  "%s: nonblocking and persistent forms handed back (blocking_only)", k->name);
        /* tuning.json serves every planned Allgatherv with ring. */
        if (getenv("CONVOY_TUNING_FILE") && k->id == DROPIN_ALLGATHERV)
            CHECK(served > 0 && dropin_stats_get(k->id, "ring") == served,
                  "allgatherv by the tuning file's ring: %ld of %ld",
                  dropin_stats_get(k->id, "ring"), served);
        if (me == 0) fprintf(stderr, "%s: served %ld, handed back %ld\n", k->name, served, back);
    }
    CHECK(stats_get != NULL, "libconvoy_pmpi is loaded");
    int rc = tc_finish();
    MPI_Finalize();
    return rc;
}
