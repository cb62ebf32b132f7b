/*
 * convoy_Barrier, convoy_Ibarrier and convoy_Barrier_init against real time: in every case
 * one rank (rotating) sleeps SLEEP seconds before it enters, and every rank's exit must come
 * after the latest entry of any rank. All processes share one host, so CLOCK_MONOTONIC
 * stamps of different processes compare. The harness itself is shown to fail on a barrier
 * that does nothing (the negative control).
 *
 * Covered: the default choice, dissem forced with CONVOY_DISSEM_N = 1..7 and auto, linear,
 * native;
 * blocking, nonblocking with a convoy_test polling loop (each call must return quickly and
 * report "not done" while the sleeper sleeps), convoy_wait_timeout and persistent requests
 * restarted several times; several Ibarriers in flight on one communicator; a reversed
 * sub-communicator; an intercommunicator (served natively); CONVOY_DISSEM_N=auto (same n on
 * every rank, chosen on the first blocking call or persistent init, never under
 * CONVOY_REPRODUCIBLE=1; its overhead is printed); errors (MPI_COMM_NULL -> MPI_ERR_COMM
 * through the error handler, a NULL request -> MPI_ERR_REQUEST).
 *
 * Usage: mpirun -n P test_barrier; CONVOY_TEST_VERBOSE=1 names each case.
 */
#include "common.h"

#include "api/api.h"
#include "convoy.h"

#define SLEEP 0.06
/* A convoy_test call must return well before the sleeper wakes. */
#define QUICK 0.03

static int verbose;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum mode { M_BLOCKING, M_TEST, M_TIMEOUT, M_PERSISTENT, M_NOOP };
static const char *mode_name[] = {"convoy_Barrier", "convoy_Ibarrier + convoy_test loop",
                                  "convoy_Ibarrier + convoy_wait_timeout",
                                  "convoy_Barrier_init + convoy_start/convoy_wait", "no-op"};

typedef struct outcome {
    int rc;
    int not_done;      /* test/wait_timeout calls that reported "not done" */
    double max_call;   /* longest single convoy_test call */
    int slow_calls;    /* convoy_test calls longer than QUICK */
    double entry, out; /* CLOCK_MONOTONIC */
} outcome;

/* One barrier on comm in the given mode; the rank `sleeper` of comm sleeps first. */
static void one(MPI_Comm comm, int rank, int sleeper, int mode, convoy_request *preq, outcome *o)
{
    memset(o, 0, sizeof *o);
    if (rank == sleeper) tc_sleep(SLEEP);
    o->entry = mono();
    convoy_request r = CONVOY_REQUEST_NULL;
    int flag = 0;
    switch (mode) {
    case M_BLOCKING: o->rc = convoy_Barrier(comm); break;
    case M_TEST:
        o->rc = convoy_Ibarrier(comm, &r);
        while (!o->rc && !flag) {
            double t = mono();
            o->rc = convoy_test(&r, &flag);
            t = mono() - t;
            if (t > o->max_call) o->max_call = t;
            o->slow_calls += t > QUICK;
            o->not_done += !flag;
        }
        break;
    case M_TIMEOUT:
        o->rc = convoy_Ibarrier(comm, &r);
        while (!o->rc && !flag) {
            o->rc = convoy_wait_timeout(&r, 0.005, &flag);
            o->not_done += !flag;
        }
        break;
    case M_PERSISTENT:
        o->rc = convoy_start(preq);
        if (!o->rc) o->rc = convoy_wait(preq);
        break;
    default: break;
    }
    o->out = mono();
}

/* Runs one case and checks it on every rank of xcomm, where the ranks compare their times
 * (comm itself, or MPI_COMM_WORLD for an intercommunicator). */
static void check_case(MPI_Comm comm, MPI_Comm xcomm, int sleeper, int mode, convoy_request *preq,
                       const char *what)
{
    int rank, xrank, xsize;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(xcomm, &xrank);
    MPI_Comm_size(xcomm, &xsize);
    char name[512], detail[512] = "";
    snprintf(name, sizeof name, "%s, %s, sleeper %d", what, mode_name[mode], sleeper);
    if (verbose && xrank == 0) printf("case %s\n", name);
    tc_case(name);
    PMPI_Barrier(xcomm);
    outcome o;
    one(comm, rank, sleeper, mode, preq, &o);
    double last_entry;
    PMPI_Allreduce(&o.entry, &last_entry, 1, MPI_DOUBLE, MPI_MAX, xcomm);
    int ok = o.rc == MPI_SUCCESS;
    if (!ok) {
        char e[256];
        snprintf(detail, sizeof detail, "returned %s", tc_errstr(o.rc, e, sizeof e));
    } else if (mode == M_NOOP) {
        /* The negative control: a rank that does nothing leaves before the sleeper came. */
        int early = o.out < last_entry, any;
        PMPI_Allreduce(&early, &any, 1, MPI_INT, MPI_MAX, xcomm);
        ok = xsize == 1 || any;
        if (!ok) snprintf(detail, sizeof detail, "the harness did not see a no-op barrier");
    } else if (o.out < last_entry) {
        ok = 0;
        snprintf(detail, sizeof detail, "left %.3f ms before the last rank entered",
                 1e3 * (last_entry - o.out));
    } else if (mode == M_TEST && o.slow_calls > 2) {
        /* A call or two may lose the core for a while on an oversubscribed host; a test
         * that blocks is also caught below (it never reports "not done"). */
        ok = 0;
        snprintf(detail, sizeof detail, "%d convoy_test calls took over %.0f ms (longest %.1f ms)",
                 o.slow_calls, 1e3 * QUICK, 1e3 * o.max_call);
    } else if ((mode == M_TEST || mode == M_TIMEOUT) && xsize > 1 && rank != sleeper &&
               o.not_done == 0 && o.entry < last_entry - SLEEP / 2) {
        /* Entered well before the sleeper: the first test must have said "not done". */
        ok = 0;
        snprintf(detail, sizeof detail, "completed at the first test, before the sleeper");
    }
    tc_check(xcomm, ok, name, detail);
}

/* Every mode on comm, the sleeper rotating; persistent: one request, three starts. */
static void all_modes(MPI_Comm comm, const char *what, int *rot)
{
    int size;
    MPI_Comm_size(comm, &size);
    for (int mode = M_BLOCKING; mode <= M_TIMEOUT; mode++)
        check_case(comm, comm, (*rot)++ % size, mode, NULL, what);
    convoy_request req = CONVOY_REQUEST_NULL;
    int rc = convoy_Barrier_init(comm, MPI_INFO_NULL, &req);
    char name[512];
    snprintf(name, sizeof name, "%s, convoy_Barrier_init", what);
    if (!tc_check(comm, rc == MPI_SUCCESS && req != CONVOY_REQUEST_NULL, name, "init failed"))
        return;
    for (int k = 0; k < 3; k++)
        check_case(comm, comm, (*rot)++ % size, M_PERSISTENT, &req, what);
    rc = convoy_request_free(&req);
    snprintf(name, sizeof name, "%s, convoy_request_free", what);
    tc_check(comm, rc == MPI_SUCCESS && req == CONVOY_REQUEST_NULL, name, "free failed");
}

static void set(const char *name, const char *v)
{
    if (v)
        setenv(name, v, 1);
    else
        unsetenv(name);
}

/* Several Ibarriers in flight on one communicator, completed in reverse order. */
static void overlapping(MPI_Comm comm, int sleeper)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    PMPI_Barrier(comm);
    if (rank == sleeper) tc_sleep(SLEEP);
    double entry = mono();
    convoy_request r[3];
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++)
        rc = convoy_Ibarrier(comm, &r[i]);
    for (int i = 2; i >= 0 && !rc; i--)
        rc = convoy_wait(&r[i]);
    double out = mono(), last;
    PMPI_Allreduce(&entry, &last, 1, MPI_DOUBLE, MPI_MAX, comm);
    char d[128];
    snprintf(d, sizeof d, "rc %d, left %.3f ms after the last entry", rc, 1e3 * (out - last));
    tc_check(comm, !rc && out >= last, "three Ibarriers in flight, waited in reverse", d);
}

/* CONVOY_DISSEM_N=auto: n chosen at the first blocking call, the same on every rank. */
static void auto_n(void)
{
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int nmax = size - 1 < 7 ? size - 1 : 7;
    set("CONVOY_BARRIER_ALGO", "dissem");
    set("CONVOY_DISSEM_N", "auto");
    char d[256];

    /* A nonblocking first use chooses nothing; the first blocking call does. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    convoy_request r;
    int rc = convoy_Ibarrier(c, &r);
    if (!rc) rc = convoy_wait(&r);
    if (!rc) rc = convoy_Ibarrier(c, &r);
    if (!rc) rc = convoy_wait(&r);
    int n0 = convoy__barrier_auto_n(c);
    snprintf(d, sizeof d, "rc %d, n %d", rc, n0);
    tc_check(c, !rc && n0 == 0, "auto: nonblocking calls choose no n", d);
    PMPI_Barrier(c);
    double t0 = mono();
    rc = convoy_Barrier(c);
    double first = mono() - t0;
    int n = convoy__barrier_auto_n(c), lo, hi;
    PMPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, c);
    PMPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, c);
    snprintf(d, sizeof d, "rc %d, n %d (all ranks %d..%d), expected 1..%d", rc, n, lo, hi,
             nmax > 1 ? nmax : 1);
    tc_check(c, !rc && lo == hi && n >= 1 && n <= (nmax > 1 ? nmax : 1),
             "auto: the first blocking Barrier chooses one n for all ranks", d);
    /* The overhead of choosing: the first call against the median of later ones. */
    double t[21];
    for (int i = 0; i < 21; i++) {
        PMPI_Barrier(c);
        double s = mono();
        convoy_Barrier(c);
        t[i] = mono() - s;
    }
    for (int i = 0; i < 21; i++)
        for (int j = i + 1; j < 21; j++)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    double worst;
    PMPI_Allreduce(&first, &worst, 1, MPI_DOUBLE, MPI_MAX, c);
    if (rank == 0)
        printf("auto: np %d chose n = %d; first Barrier %.2f ms (slowest rank), later ones "
               "%.1f us (median): choosing cost %.2f ms\n",
               size, n, 1e3 * worst, 1e6 * t[10], 1e3 * (worst - t[10]));
    int rot = 0;
    all_modes(c, "auto (chosen)", &rot);
    MPI_Comm_free(&c);

    /* A persistent init is collective: it chooses too. */
    MPI_Comm c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    rc = convoy_Barrier_init(c2, MPI_INFO_NULL, &r);
    n = convoy__barrier_auto_n(c2);
    snprintf(d, sizeof d, "rc %d, n %d", rc, n);
    tc_check(c2, !rc && n >= 1, "auto: convoy_Barrier_init chooses n", d);
    if (!rc) {
        check_case(c2, c2, 0, M_PERSISTENT, &r, "auto (persistent)");
        convoy_request_free(&r);
    }
    MPI_Comm_free(&c2);

    /* CONVOY_REPRODUCIBLE=1 freezes auto to the cost model: nothing is timed or chosen. */
    set("CONVOY_REPRODUCIBLE", "1");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    rc = convoy_Barrier(c);
    n = convoy__barrier_auto_n(c);
    snprintf(d, sizeof d, "rc %d, n %d", rc, n);
    tc_check(c, !rc && n == 0, "auto under CONVOY_REPRODUCIBLE=1 chooses nothing", d);
    check_case(c, c, size - 1, M_BLOCKING, NULL, "auto under CONVOY_REPRODUCIBLE=1");
    MPI_Comm_free(&c);
    set("CONVOY_REPRODUCIBLE", NULL);
    set("CONVOY_DISSEM_N", NULL);
    set("CONVOY_BARRIER_ALGO", NULL);
}

/* Forcing dissem really runs it: its builder runs once on a fresh communicator (native
 * builds nothing), and the schedule is then cached. */
static void forced_builds(void)
{
    const char *algo[3] = {"dissem", "dissem", "native"};
    const long want[3] = {1, 0, 0};
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int i = 0; i < 3; i++) {
        set("CONVOY_BARRIER_ALGO", algo[i]);
        long b0 = convoy__build_count();
        int rc = convoy_Barrier(c);
        long b = convoy__build_count() - b0;
        char what[128], d[128];
        snprintf(what, sizeof what, "CONVOY_BARRIER_ALGO=%s builds %ld schedule%s", algo[i],
                 want[i], i == 1 ? " (cached)" : "");
        snprintf(d, sizeof d, "rc %d, built %ld", rc, b);
        tc_check(c, rc == MPI_SUCCESS && b == want[i], what, d);
    }
    set("CONVOY_BARRIER_ALGO", NULL);
    MPI_Comm_free(&c);
}

static int handler_calls, handler_class;

static void count_handler(MPI_Comm *comm, int *err, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*err, &handler_class);
}

static void errors(void)
{
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    convoy_request r = CONVOY_REQUEST_NULL;
    struct {
        const char *what;
        int expect;
    } cases[] = {{"convoy_Barrier(MPI_COMM_NULL)", MPI_ERR_COMM},
                 {"convoy_Ibarrier(MPI_COMM_NULL)", MPI_ERR_COMM},
                 {"convoy_Barrier_init(MPI_COMM_NULL)", MPI_ERR_COMM},
                 {"convoy_Ibarrier(request NULL)", MPI_ERR_REQUEST},
                 {"convoy_Barrier_init(request NULL)", MPI_ERR_REQUEST}};
    for (int i = 0; i < 5; i++) {
        handler_calls = 0;
        handler_class = -1;
        int rc = i == 0   ? convoy_Barrier(MPI_COMM_NULL)
                 : i == 1 ? convoy_Ibarrier(MPI_COMM_NULL, &r)
                 : i == 2 ? convoy_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &r)
                 : i == 3 ? convoy_Ibarrier(MPI_COMM_WORLD, NULL)
                          : convoy_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL);
        int cls = -1;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        char d[256];
        snprintf(d, sizeof d, "class %d (want %d), handler called %d times with class %d", cls,
                 cases[i].expect, handler_calls, handler_class);
        tc_check(MPI_COMM_WORLD,
                 cls == cases[i].expect && handler_calls == 1 && handler_class == cases[i].expect &&
                     r == CONVOY_REQUEST_NULL,
                 cases[i].what, d);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(120);
    verbose = getenv("CONVOY_TEST_VERBOSE") != NULL;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rot = 0;

    check_case(MPI_COMM_WORLD, MPI_COMM_WORLD, size - 1, M_NOOP, NULL, "negative control");
    /* Default choice; the first call on a communicator is nonblocking (served natively while
     * the state is made), then the state exists. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    check_case(c, c, 0, M_TEST, NULL, "default, first use nonblocking");
    all_modes(c, "default", &rot);
    MPI_Comm_free(&c);

    char what[64], v[8];
    set("CONVOY_BARRIER_ALGO", "dissem");
    for (int n = 1; n <= 7; n++) {
        snprintf(v, sizeof v, "%d", n);
        set("CONVOY_DISSEM_N", v);
        snprintf(what, sizeof what, "dissem CONVOY_DISSEM_N=%d", n);
        all_modes(MPI_COMM_WORLD, what, &rot);
    }
    set("CONVOY_DISSEM_N", NULL);
    /* The fan-in/fan-out barrier (chosen where processes share cores), the rank 0 it
     * gathers at being the sleeper or not as the rotation goes. */
    set("CONVOY_BARRIER_ALGO", "linear");
    all_modes(MPI_COMM_WORLD, "linear", &rot);
    set("CONVOY_BARRIER_ALGO", "dissem");
    overlapping(MPI_COMM_WORLD, rot++ % size);
    set("CONVOY_BARRIER_ALGO", "native");
    all_modes(MPI_COMM_WORLD, "native", &rot);
    set("CONVOY_BARRIER_ALGO", NULL);

    /* Reversed ranks, odd and even apart. */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &sub);
    check_case(sub, sub, 0, M_BLOCKING, NULL, "odd/even reversed sub-communicator");
    check_case(sub, sub, 0, M_TEST, NULL, "odd/even reversed sub-communicator");
    MPI_Comm_free(&sub);

    /* An intercommunicator between the halves: the MPI library's barrier serves it; the
     * sleeper's group entering late must hold up the other group. */
    if (size >= 2) {
        MPI_Comm half, inter;
        int low = rank < size / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
        /* The sleeper is rank 0 of the high half (world rank size / 2). */
        check_case(inter, MPI_COMM_WORLD, low ? -1 : 0, M_BLOCKING, NULL, "intercommunicator");
        check_case(inter, MPI_COMM_WORLD, low ? -1 : 0, M_TEST, NULL, "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    forced_builds();
    auto_n();
    errors();
    int rc = tc_finish();
    MPI_Finalize();
    return rc;
}
