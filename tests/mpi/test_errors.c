/*
 * Errors, as MPI reports them.
 *
 *   test_errors args      Each bad argument of every entry point returns the MPI error class
 *                         MPI gives (MPI_Error_class of the return code) with
 *                         MPI_ERRORS_RETURN on the communicator, and a user error handler
 *                         (MPI_Comm_create_errhandler) is called with that class and the
 *                         user's communicator. For MPI_COMM_NULL the handler that the native
 *                         library calls (PMPI_ probe in the same run) must be the one called.
 *   test_errors check     Under CONVOY_CHECK_ARGS=1: arguments inconsistent across ranks
 *                         (counts, op, MPI_IN_PLACE use, receive counts) give every rank an
 *                         error instead of a hang, with a message on stderr naming what
 *                         differs; consistent calls (user ops, derived types, per-rank send
 *                         counts) pass, and the communicator still works afterwards.
 *   test_errors watchdog  Under CONVOY_WATCHDOG=2: the last rank enters an Allreduce 5 s
 *                         late; the others' stderr names the step, the peer and the tag they
 *                         are stuck on, and the operation completes with the right result.
 *
 * stderr is captured in-process (fd 2 redirected to a file around the call), so no wrapper
 * script is needed.
 */
#include "common.h"

#include <ctype.h>
#include <fcntl.h>

#include "convoy.h"

/* --- capturing this process's stderr ------------------------------------------------------- */

static int cap_saved = -1;
static char cap_path[64];

static void cap_begin(const char *label)
{
    tc_case(label);
    fflush(stderr);
    snprintf(cap_path, sizeof cap_path, "/tmp/convoy-test-stderr-XXXXXX");
    int fd = mkstemp(cap_path);
    if (fd < 0) return;
    cap_saved = dup(2);
    tc_guard_fd = cap_saved;
    dup2(fd, 2);
    close(fd);
}

/* Ends the capture; returns what was written (malloc'd, NUL-terminated). */
static char *cap_end(void)
{
    fflush(stderr);
    if (cap_saved < 0) return calloc(1, 1);
    dup2(cap_saved, 2);
    tc_guard_fd = 2;
    close(cap_saved);
    cap_saved = -1;
    FILE *f = fopen(cap_path, "r");
    char *s = calloc(1, 1);
    size_t n = 0;
    if (f) {
        char buf[4096];
        size_t k;
        while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
            char *t = realloc(s, n + k + 1);
            if (!t) break;
            s = t;
            memcpy(s + n, buf, k);
            n += k;
            s[n] = '\0';
        }
        fclose(f);
    }
    unlink(cap_path);
    return s;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return 1;
    }
    return 0;
}

/* --- error classes --------------------------------------------------------------------------- */

static const char *class_name(int c)
{
    switch (c) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    default: return "another class";
    }
}

/* A user error handler: records its calls. */
static int eh_calls, eh_class;
static MPI_Comm eh_comm = MPI_COMM_NULL;
static void user_handler(MPI_Comm *comm, int *code, ...)
{
    eh_calls++;
    MPI_Error_class(*code, &eh_class);
    eh_comm = *comm;
}

/* rc must have one of the classes (up to 2; -1 unused). */
static void expect_class(MPI_Comm comm, const char *what, int rc, int c1, int c2)
{
    int cls = -1;
    char detail[512], e[300];
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    int ok = rc != MPI_SUCCESS && (cls == c1 || (c2 >= 0 && cls == c2));
    snprintf(detail, sizeof detail, "expected %s%s%s, got %s", class_name(c1),
             c2 >= 0 ? " or " : "", c2 >= 0 ? class_name(c2) : "",
             rc == MPI_SUCCESS ? "MPI_SUCCESS" : tc_errstr(rc, e, sizeof e));
    tc_check(comm, ok, what, detail);
}

/* The families of every collective: blocking, nonblocking, persistent. */
enum { F_BLOCKING, F_NONBLOCKING, F_PERSISTENT, F_NFAM };

/* "convoy_Iallreduce: desc" and the like: the entry point of coll in family f. */
static const char *fam_name(char *buf, size_t n, int f, const char *coll, const char *desc)
{
    snprintf(buf, n, "convoy_%s%s%s: %s", f == F_NONBLOCKING ? "I" : "", coll,
             f == F_PERSISTENT ? "_init" : "", desc);
    return buf;
}

/* The end of one call: a nonblocking request completed (its error, if the call's was none,
 * is the result: CONVOY_CHECK_ARGS reports at completion), any request freed. An erroneous
 * call must not have made a request; this cleans up if it did anyway. */
static int end_call(int fam, convoy_request *req, int rc)
{
    if (*req != CONVOY_REQUEST_NULL) {
        const int w = fam == F_NONBLOCKING ? convoy_wait(req) : MPI_SUCCESS;
        if (!rc) rc = w;
        convoy_request_free(req);
    }
    return rc;
}

/* rc came from a call on comm with the user handler installed (eh_reset before it): the
 * handler ran once, with class cls and the user's communicator, and rc has class cls. */
static void eh_reset(void)
{
    eh_calls = 0, eh_class = -1, eh_comm = MPI_COMM_NULL;
}
static void expect_handler(MPI_Comm comm, const char *call, int rc, int cls)
{
    int cmp = MPI_UNEQUAL, rcls = -1;
    if (eh_comm != MPI_COMM_NULL) MPI_Comm_compare(eh_comm, comm, &cmp);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &rcls);
    char what[320], detail[320];
    snprintf(what, sizeof what,
             "user error handler called by %s: once, with %s and the user's communicator", call,
             class_name(cls));
    snprintf(detail, sizeof detail, "handler calls %d, class %s, communicator %s, return class %s",
             eh_calls, class_name(eh_class),
             cmp == MPI_IDENT ? "the user's" : "another one (a private duplicate?)",
             class_name(rcls));
    tc_check(MPI_COMM_WORLD, eh_calls == 1 && eh_class == cls && cmp == MPI_IDENT && rcls == cls,
             what, detail);
}

/* One argument case of test_*: the family f's entry point of coll called as `call` must
 * return class c1 (or c2). */
#define ARG_CASE(coll, desc, c1, c2, call)                                                         \
    expect_class(MPI_COMM_WORLD, fam_name(what, sizeof what, f, coll, desc), call, c1, c2)

static int call_allreduce(int fam, const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm, int nullreq)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    convoy_request *rp = nullreq ? NULL : &req;
    int rc;
    if (fam == F_BLOCKING)
        rc = convoy_Allreduce(sb, rb, n, t, op, comm);
    else if (fam == F_NONBLOCKING)
        rc = convoy_Iallreduce(sb, rb, n, t, op, comm, rp);
    else
        rc = convoy_Allreduce_init(sb, rb, n, t, op, comm, MPI_INFO_NULL, rp);
    return end_call(fam, &req, rc);
}

static int call_allgatherv(int fam, const void *sb, int sc, MPI_Datatype st, void *rb,
                           const int *rcounts, const int *displs, MPI_Datatype rt, MPI_Comm comm,
                           int nullreq)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    convoy_request *rp = nullreq ? NULL : &req;
    int rc;
    if (fam == F_BLOCKING)
        rc = convoy_Allgatherv(sb, sc, st, rb, rcounts, displs, rt, comm);
    else if (fam == F_NONBLOCKING)
        rc = convoy_Iallgatherv(sb, sc, st, rb, rcounts, displs, rt, comm, rp);
    else
        rc = convoy_Allgatherv_init(sb, sc, st, rb, rcounts, displs, rt, comm, MPI_INFO_NULL, rp);
    return end_call(fam, &req, rc);
}

static int call_allgather(int fam, const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,
                          MPI_Datatype rt, MPI_Comm comm)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    int rc;
    if (fam == F_BLOCKING)
        rc = convoy_Allgather(sb, sc, st, rb, rcount, rt, comm);
    else if (fam == F_NONBLOCKING)
        rc = convoy_Iallgather(sb, sc, st, rb, rcount, rt, comm, &req);
    else
        rc = convoy_Allgather_init(sb, sc, st, rb, rcount, rt, comm, MPI_INFO_NULL, &req);
    return end_call(fam, &req, rc);
}

/* A valid Allreduce and Allgatherv on comm, checked by hand: the communicator still works. */
static void still_works(MPI_Comm comm, const char *after)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int in[7], out[7];
    for (int i = 0; i < 7; i++)
        in[i] = rank * 10 + i, out[i] = -1;
    int rc = convoy_Allreduce(in, out, 7, MPI_INT, MPI_SUM, comm);
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < 7 && ok; i++)
        ok = out[i] == 10 * size * (size - 1) / 2 + size * i;
    int *rc_ = malloc((size_t)size * sizeof(int)), *dp = malloc((size_t)size * sizeof(int));
    int *all = malloc((size_t)size * 2 * sizeof(int));
    for (int r = 0; r < size; r++)
        rc_[r] = r % 2 + 1, dp[r] = 2 * (size - 1 - r);
    for (int r = 0; r < 2 * size; r++)
        all[r] = -7;
    int mine[2] = {100 + rank, 200 + rank};
    if (ok) rc = convoy_Allgatherv(mine, rank % 2 + 1, MPI_INT, all, rc_, dp, MPI_INT, comm);
    ok = ok && rc == MPI_SUCCESS;
    for (int r = 0; r < size && ok; r++) {
        ok = all[dp[r]] == 100 + r &&
             (r % 2 == 0 ? all[dp[r] + 1] == -7 : all[dp[r] + 1] == 200 + r);
    }
    char what[256], e[300];
    snprintf(what, sizeof what, "valid Allreduce and Allgatherv after %s", after);
    tc_check(comm, ok, what, rc == MPI_SUCCESS ? "wrong result" : tc_errstr(rc, e, sizeof e));
    free(rc_), free(dp), free(all);
}

static void test_args(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    /* A first valid call makes the communicator's Convoy state, so that the nonblocking
     * and persistent calls below take Convoy's path, not only the native fallback. */
    still_works(comm, "nothing");

    int sb[64], rb[64], rcounts[64], displs[64], badcounts[64];
    for (int i = 0; i < 64; i++)
        sb[i] = i, rb[i] = 0;
    for (int r = 0; r < size; r++)
        rcounts[r] = 2, displs[r] = 2 * r, badcounts[r] = 2;
    badcounts[size - 1] = -1;
    MPI_Datatype uncommitted, vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    char what[256];

    for (int f = 0; f < F_NFAM; f++) {
#define AR(desc, c1, c2, ...) ARG_CASE("allreduce", desc, c1, c2, call_allreduce(f, __VA_ARGS__))
        /* Open MPI and MPICH report a bad datatype of a reduction as MPI_ERR_OP (they check
         * the op against the type first); MPI_ERR_TYPE is what the standard's wording
         * suggests. Either is accepted there, nothing else. */
        AR("count -1", MPI_ERR_COUNT, -1, sb, rb, -1, MPI_INT, MPI_SUM, comm, 0);
        AR("MPI_DATATYPE_NULL", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, 1, MPI_DATATYPE_NULL, MPI_SUM,
           comm, 0);
        AR("uncommitted derived datatype", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, 1, uncommitted,
           MPI_SUM, comm, 0);
        AR("MPI_OP_NULL", MPI_ERR_OP, -1, sb, rb, 1, MPI_INT, MPI_OP_NULL, comm, 0);
        AR("MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, -1, sb, rb, 1, MPI_DOUBLE, MPI_BAND, comm, 0);
        AR("MPI_MAXLOC on MPI_INT", MPI_ERR_OP, -1, sb, rb, 1, MPI_INT, MPI_MAXLOC, comm, 0);
        AR("MPI_SUM on MPI_2INT", MPI_ERR_OP, -1, sb, rb, 1, MPI_2INT, MPI_SUM, comm, 0);
        AR("MPI_SUM on a derived type", MPI_ERR_OP, -1, sb, rb, 1, vec, MPI_SUM, comm, 0);
        AR("MPI_COMM_NULL", MPI_ERR_COMM, -1, sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, 0);
        AR("sendbuf == recvbuf (not MPI_IN_PLACE)", MPI_ERR_BUFFER, -1, sb, sb, 4, MPI_INT, MPI_SUM,
           comm, 0);
#undef AR
#define AG(desc, c1, c2, ...) ARG_CASE("allgatherv", desc, c1, c2, call_allgatherv(f, __VA_ARGS__))
        AG("sendcount -1", MPI_ERR_COUNT, -1, sb, -1, MPI_INT, rb, rcounts, displs, MPI_INT, comm,
           0);
        AG("a receive count -1", MPI_ERR_COUNT, -1, sb, 2, MPI_INT, rb, badcounts, displs, MPI_INT,
           comm, 0);
        AG("sendtype MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, sb, 2, MPI_DATATYPE_NULL, rb, rcounts,
           displs, MPI_INT, comm, 0);
        AG("recvtype MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, sb, 2, MPI_INT, rb, rcounts, displs,
           MPI_DATATYPE_NULL, comm, 0);
        AG("uncommitted sendtype", MPI_ERR_TYPE, -1, sb, 1, uncommitted, rb, rcounts, displs,
           MPI_INT, comm, 0);
        AG("uncommitted recvtype", MPI_ERR_TYPE, -1, sb, 2, MPI_INT, rb, rcounts, displs,
           uncommitted, comm, 0);
        AG("recvcounts NULL", MPI_ERR_ARG, MPI_ERR_COUNT, sb, 2, MPI_INT, rb, NULL, displs, MPI_INT,
           comm, 0);
        AG("displs NULL", MPI_ERR_ARG, -1, sb, 2, MPI_INT, rb, rcounts, NULL, MPI_INT, comm, 0);
        AG("MPI_COMM_NULL", MPI_ERR_COMM, -1, sb, 2, MPI_INT, rb, rcounts, displs, MPI_INT,
           MPI_COMM_NULL, 0);
#undef AG
#define AA(desc, c1, ...) ARG_CASE("allgather", desc, c1, -1, call_allgather(f, __VA_ARGS__))
        AA("sendcount -1", MPI_ERR_COUNT, sb, -1, MPI_INT, rb, 2, MPI_INT, comm);
        AA("recvcount -1", MPI_ERR_COUNT, sb, 2, MPI_INT, rb, -1, MPI_INT, comm);
        AA("recvtype MPI_DATATYPE_NULL", MPI_ERR_TYPE, sb, 2, MPI_INT, rb, 2, MPI_DATATYPE_NULL,
           comm);
        AA("uncommitted sendtype", MPI_ERR_TYPE, sb, 1, uncommitted, rb, 2, MPI_INT, comm);
        AA("MPI_COMM_NULL", MPI_ERR_COMM, sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_NULL);
#undef AA
    }

    /* Requests: starting a null request is an error (MPI_Start: MPI_ERR_REQUEST). */
    {
        convoy_request nreq = CONVOY_REQUEST_NULL;
        expect_class(MPI_COMM_WORLD, "convoy_start(CONVOY_REQUEST_NULL)", convoy_start(&nreq),
                     MPI_ERR_REQUEST, MPI_ERR_ARG);
        int flag = 0, rc = convoy_test(&nreq, &flag);
        tc_check(MPI_COMM_WORLD, rc == MPI_SUCCESS && flag == 1,
                 "convoy_test(CONVOY_REQUEST_NULL) completes at once", "flag 0 or error");
        rc = convoy_wait(&nreq);
        tc_check(MPI_COMM_WORLD, rc == MPI_SUCCESS, "convoy_wait(CONVOY_REQUEST_NULL) succeeds",
                 "error");
        flag = 0;
        rc = convoy_wait_timeout(&nreq, 0.01, &flag);
        tc_check(MPI_COMM_WORLD, rc == MPI_SUCCESS && flag == 1,
                 "convoy_wait_timeout(CONVOY_REQUEST_NULL) completes at once", "flag 0 or error");
    }

    /* The user's error handler is called, with the class and the user's communicator. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(user_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    for (int f = 0; f < F_NFAM; f++) {
        eh_reset();
        int rc = call_allreduce(f, sb, rb, -1, MPI_INT, MPI_SUM, comm, 0);
        expect_handler(comm, fam_name(what, sizeof what, f, "allreduce", "count -1"), rc,
                       MPI_ERR_COUNT);
        eh_reset();
        rc = call_allgatherv(f, sb, 2, MPI_INT, rb, rcounts, displs, MPI_DATATYPE_NULL, comm, 0);
        expect_handler(comm, fam_name(what, sizeof what, f, "allgatherv", "recvtype null"), rc,
                       MPI_ERR_TYPE);
    }
    /* A valid call does not call the handler. */
    eh_calls = 0;
    still_works(comm, "errors with a user handler");
    tc_check(MPI_COMM_WORLD, eh_calls == 0, "no handler call for valid operations",
             "the handler was called");

    /* MPI_COMM_NULL: the error goes to the handler the native library uses for it. */
    {
        MPI_Errhandler ehw, ehs;
        MPI_Comm_create_errhandler(user_handler, &ehw);
        MPI_Comm_create_errhandler(user_handler, &ehs);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, ehw);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, ehs);
        eh_calls = 0, eh_comm = MPI_COMM_NULL, eh_class = -1;
        int nrc = PMPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
        int native_calls = eh_calls, native_class = eh_class;
        MPI_Comm native_comm = eh_comm;
        eh_calls = 0, eh_comm = MPI_COMM_NULL, eh_class = -1;
        int crc = convoy_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
        char detail[512];
        snprintf(detail, sizeof detail,
                 "native: %d handler calls on %s, class %s; convoy: %d calls on %s, class %s",
                 native_calls,
                 native_comm == MPI_COMM_WORLD  ? "MPI_COMM_WORLD"
                 : native_comm == MPI_COMM_SELF ? "MPI_COMM_SELF"
                                                : "?",
                 class_name(native_class), eh_calls,
                 eh_comm == MPI_COMM_WORLD  ? "MPI_COMM_WORLD"
                 : eh_comm == MPI_COMM_SELF ? "MPI_COMM_SELF"
                                            : "?",
                 class_name(eh_class));
        (void)nrc;
        (void)crc;
        tc_check(MPI_COMM_WORLD,
                 eh_calls == native_calls && eh_comm == native_comm && eh_class == MPI_ERR_COMM,
                 "MPI_COMM_NULL: the same error handler as the native library, with MPI_ERR_COMM",
                 detail);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&ehw);
        MPI_Errhandler_free(&ehs);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* The default handler of a fresh communicator is MPI_ERRORS_ARE_FATAL: not tested (it
     * would end the run); everything above ran with MPI_ERRORS_RETURN or a user handler. */
    still_works(comm, "all the argument errors");

    /* Last, as a library that dereferences the null pointer ends the run here. */
    for (int f = F_NONBLOCKING; f < F_NFAM; f++) {
        ARG_CASE("allreduce", "NULL request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG,
                 call_allreduce(f, sb, rb, 1, MPI_INT, MPI_SUM, comm, 1));
        ARG_CASE("allgatherv", "NULL request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG,
                 call_allgatherv(f, sb, 2, MPI_INT, rb, rcounts, displs, MPI_INT, comm, 1));
    }
    MPI_Type_free(&uncommitted);
    MPI_Type_free(&vec);
    MPI_Comm_free(&comm);
}

/* --- CONVOY_CHECK_ARGS ------------------------------------------------------------------------ */

/* Sum of ints, on MPI_INT or a contiguous type of ints. */
static void op_usersum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size;
    MPI_Type_size(*dt, &size);
    const int n = *len * (size / (int)sizeof(int));
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < n; i++)
        b[i] += a[i];
}

/* Runs one inconsistent call: every rank must get an error (none may hang) and some rank's
 * stderr must name the mismatch (one of the keywords). */
static void mismatch(MPI_Comm comm, const char *what, int rc, const char *msg,
                     const char *const *keywords)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    char detail[1024], e[300];
    snprintf(detail, sizeof detail, "this rank returned %s",
             rc == MPI_SUCCESS ? "MPI_SUCCESS" : tc_errstr(rc, e, sizeof e));
    char w2[512];
    snprintf(w2, sizeof w2, "CONVOY_CHECK_ARGS, %s: every rank gets an error", what);
    tc_check(comm, rc != MPI_SUCCESS, w2, detail);
    if (getenv("CONVOY_TEST_VERBOSE")) fprintf(stderr, "[%s] rank %d stderr: %s", what, rank, msg);
    /* A message naming the mismatch, on some rank's stderr. */
    int named = 0;
    for (const char *const *k = keywords; *k; k++)
        named |= contains_ci(msg, *k);
    int mentioned = contains_ci(msg, "convoy") && named, any = 0;
    PMPI_Allreduce(&mentioned, &any, 1, MPI_INT, MPI_MAX, comm);
    snprintf(w2, sizeof w2, "CONVOY_CHECK_ARGS, %s: stderr names the mismatch (%s...)", what,
             keywords[0]);
    snprintf(detail, sizeof detail, "no rank printed it; this rank's stderr: \"%.600s\"", msg);
    tc_check(comm, any, w2, rank == 0 ? detail : "");
}

static int wait_nb(int rc, convoy_request *req)
{
    if (rc != MPI_SUCCESS) {
        if (*req != CONVOY_REQUEST_NULL) convoy_wait(req);
        return rc;
    }
    return convoy_wait(req);
}

static void test_check(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    still_works(comm, "nothing (first use)");

    int sb[128], rb[128];
    for (int i = 0; i < 128; i++)
        sb[i] = rank + i, rb[i] = 0;
    int *rcounts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int r = 0; r < size; r++)
        rcounts[r] = 3, displs[r] = 3 * r;
    const int last = size - 1;
    char *msg;
    int rc;

    static const char *const kw_count[] = {"count", NULL};
    static const char *const kw_op[] = {" op ", " op:", " op,", "MPI_Op", NULL};
    static const char *const kw_inplace[] = {"in_place", "in-place", "inplace", NULL};
    static const char *const kw_rcounts[] = {"count", NULL};

    cap_begin("Allreduce, the last rank passes count 5, the others 4");
    rc = convoy_Allreduce(sb, rb, rank == last ? 5 : 4, MPI_INT, MPI_SUM, comm);
    msg = cap_end();
    mismatch(comm, "Allreduce, the last rank passes count 5, the others 4", rc, msg, kw_count);
    free(msg);
    still_works(comm, "a count mismatch");

    cap_begin("Allreduce, rank 0 passes MPI_SUM, the others MPI_MAX");
    rc = convoy_Allreduce(sb, rb, 4, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, comm);
    msg = cap_end();
    mismatch(comm, "Allreduce, rank 0 passes MPI_SUM, the others MPI_MAX", rc, msg, kw_op);
    free(msg);

    cap_begin("Allreduce, rank 0 passes MPI_IN_PLACE, the others do not");
    if (rank == 0) memcpy(rb, sb, sizeof sb);
    rc = convoy_Allreduce(rank == 0 ? MPI_IN_PLACE : (void *)sb, rb, 4, MPI_INT, MPI_SUM, comm);
    msg = cap_end();
    mismatch(comm, "Allreduce, rank 0 passes MPI_IN_PLACE, the others do not", rc, msg, kw_inplace);
    free(msg);

    {
        convoy_request req = CONVOY_REQUEST_NULL;
        cap_begin("Iallreduce, rank 0 passes count 9, the others 8");
        rc = convoy_Iallreduce(sb, rb, rank == 0 ? 9 : 8, MPI_INT, MPI_SUM, comm, &req);
        rc = wait_nb(rc, &req);
        msg = cap_end();
        mismatch(comm, "Iallreduce, rank 0 passes count 9, the others 8", rc, msg, kw_count);
        free(msg);
    }

    {
        /* Rank 0 thinks the last rank contributes 4 elements; everyone else says 3. */
        int *bad = malloc((size_t)size * sizeof(int));
        for (int r = 0; r < size; r++)
            bad[r] = rcounts[r];
        if (rank == 0) bad[last] = 4;
        cap_begin("Allgatherv, rank 0's recvcounts differ from the others'");
        rc = convoy_Allgatherv(sb, 3, MPI_INT, rb, bad, displs, MPI_INT, comm);
        msg = cap_end();
        mismatch(comm, "Allgatherv, rank 0's recvcounts differ from the others'", rc, msg,
                 kw_rcounts);
        free(msg);
        free(bad);
    }

    cap_begin("Allgatherv, the last rank passes MPI_IN_PLACE, the others do not");
    if (rank == last) memcpy(rb + 3 * last, sb, 3 * sizeof(int));
    rc = convoy_Allgatherv(rank == last ? MPI_IN_PLACE : (void *)sb, 3, MPI_INT, rb, rcounts,
                           displs, MPI_INT, comm);
    msg = cap_end();
    mismatch(comm, "Allgatherv, the last rank passes MPI_IN_PLACE, the others do not", rc, msg,
             kw_inplace);
    free(msg);

    {
        convoy_request req = CONVOY_REQUEST_NULL;
        cap_begin("persistent Allreduce, the last rank passes count 2, the others 3");
        rc = convoy_Allreduce_init(sb, rb, rank == last ? 2 : 3, MPI_INT, MPI_SUM, comm,
                                   MPI_INFO_NULL, &req);
        if (rc == MPI_SUCCESS) {
            rc = convoy_start(&req);
            if (rc == MPI_SUCCESS) rc = convoy_wait(&req);
        }
        if (req != CONVOY_REQUEST_NULL) convoy_request_free(&req);
        msg = cap_end();
        mismatch(comm, "persistent Allreduce, the last rank passes count 2, the others 3", rc, msg,
                 kw_count);
        free(msg);
    }
    still_works(comm, "all the mismatches");

    /* Consistent calls must pass the check: a user op (its handle differs between
     * processes in Open MPI), a derived datatype, per-rank send counts, in-place everywhere,
     * count 0. */
    {
        MPI_Op uop;
        MPI_Op_create(op_usersum, 1, &uop);
        MPI_Datatype vec;
        MPI_Type_contiguous(2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int ok = 1;
        char detail[512] = "", e[300];
        rc = convoy_Allreduce(sb, rb, 8, MPI_INT, uop, comm);
        ok = rc == MPI_SUCCESS;
        for (int i = 0; i < 8 && ok; i++)
            ok = rb[i] == size * (size - 1) / 2 + size * i;
        if (!ok) snprintf(detail, sizeof detail, "user op: %s", tc_errstr(rc, e, sizeof e));
        for (int i = 0; i < 8; i++)
            rb[i] = rank + i;
        if (ok) {
            rc = convoy_Allreduce(MPI_IN_PLACE, rb, 4, vec, uop, comm);
            ok = rc == MPI_SUCCESS;
            if (!ok)
                snprintf(detail, sizeof detail, "derived type, in place: %s",
                         tc_errstr(rc, e, sizeof e));
        }
        for (int i = 0; i < 8 && ok; i++)
            ok = rb[i] == size * (size - 1) / 2 + size * i;
        if (!ok && !detail[0])
            snprintf(detail, sizeof detail, "derived type, in place: wrong result");
        if (ok) {
            rc = convoy_Allreduce(sb, rb, 0, MPI_INT, MPI_SUM, comm);
            ok = rc == MPI_SUCCESS;
            if (!ok) snprintf(detail, sizeof detail, "count 0: %s", tc_errstr(rc, e, sizeof e));
        }
        if (ok) {
            int *vc = malloc((size_t)size * sizeof(int)), *vd = malloc((size_t)size * sizeof(int));
            int pos = 0;
            for (int r = 0; r < size; r++)
                vc[r] = r % 3, vd[r] = pos, pos += r % 3;
            for (int i = 0; i < 128; i++)
                rb[i] = -1;
            rc = convoy_Allgatherv(sb, rank % 3, MPI_INT, rb, vc, vd, MPI_INT, comm);
            ok = rc == MPI_SUCCESS;
            for (int r = 0; r < size && ok; r++)
                for (int i = 0; i < vc[r]; i++)
                    ok &= rb[vd[r] + i] == r + i;
            if (!ok)
                snprintf(detail, sizeof detail, "Allgatherv with per-rank counts: %s",
                         rc ? tc_errstr(rc, e, sizeof e) : "wrong result");
            free(vc), free(vd);
        }
        tc_check(comm, ok,
                 "CONVOY_CHECK_ARGS: consistent calls pass (user op, derived type, in place, "
                 "count 0, per-rank counts)",
                 detail);
        MPI_Op_free(&uop);
        MPI_Type_free(&vec);
    }
    /* The last rank sends 2 elements where everyone's recvcounts say 3: only its own
     * arguments show it, yet every rank must get the error (else the others would hang). Last: a
     * library that hangs here ends the run (tc_guard reports it). */
    cap_begin("Allgatherv, the last rank's sendcount 2 differs from recvcounts[last] 3");
    rc = convoy_Allgatherv(sb, rank == last ? 2 : 3, MPI_INT, rb, rcounts, displs, MPI_INT, comm);
    msg = cap_end();
    mismatch(comm, "Allgatherv, the last rank's sendcount 2 differs from recvcounts[last] 3", rc,
             msg, kw_count);
    free(msg);

    free(rcounts);
    free(displs);
    MPI_Comm_free(&comm);
}

/* --- Reduce_scatter(_block) ----------------------------------------------------------------- */

/* block: convoy_Reduce_scatter_block with counts[0], else convoy_Reduce_scatter. */
static int call_rs(int fam, int block, const void *sb, void *rb, const int *counts, MPI_Datatype t,
                   MPI_Op op, MPI_Comm comm, int nullreq)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    convoy_request *rp = nullreq ? NULL : &req;
    int rc;
    if (fam == F_BLOCKING)
        rc = block ? convoy_Reduce_scatter_block(sb, rb, counts ? counts[0] : 0, t, op, comm)
                   : convoy_Reduce_scatter(sb, rb, counts, t, op, comm);
    else if (fam == F_NONBLOCKING)
        rc = block ? convoy_Ireduce_scatter_block(sb, rb, counts ? counts[0] : 0, t, op, comm, rp)
                   : convoy_Ireduce_scatter(sb, rb, counts, t, op, comm, rp);
    else
        rc = block ? convoy_Reduce_scatter_block_init(sb, rb, counts ? counts[0] : 0, t, op, comm,
                                                      MPI_INFO_NULL, rp)
                   : convoy_Reduce_scatter_init(sb, rb, counts, t, op, comm, MPI_INFO_NULL, rp);
    return end_call(fam, &req, rc);
}

/* A valid Reduce_scatter on comm, checked by hand. */
static void rs_still_works(MPI_Comm comm, const char *after)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *cnt = malloc((size_t)size * sizeof(int)), total = 0, first = 0;
    for (int r = 0; r < size; r++) {
        cnt[r] = r % 3;
        if (r == rank) first = total;
        total += cnt[r];
    }
    int *in = malloc(((size_t)total + 1) * sizeof(int)), out[3] = {-1, -1, -1};
    for (int i = 0; i < total; i++)
        in[i] = rank * 100 + i;
    int rc = convoy_Reduce_scatter(in, out, cnt, MPI_INT, MPI_SUM, comm);
    int ok = rc == MPI_SUCCESS;
    for (int k = 0; k < cnt[rank] && ok; k++)
        ok = out[k] == 100 * size * (size - 1) / 2 + size * (first + k);
    char what[256], e[300];
    snprintf(what, sizeof what, "valid Reduce_scatter after %s", after);
    tc_check(comm, ok, what, rc == MPI_SUCCESS ? "wrong result" : tc_errstr(rc, e, sizeof e));
    free(cnt), free(in);
}

static void test_args_reduce_scatter(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rs_still_works(comm, "nothing");
    int sb[256], rb[256], counts[64], badcounts[64], minus[1] = {-1};
    for (int i = 0; i < 256; i++)
        sb[i] = i, rb[i] = 0;
    for (int r = 0; r < size; r++)
        counts[r] = 2, badcounts[r] = 2;
    badcounts[size - 1] = -1;
    MPI_Datatype uncommitted;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    char what[256];
    for (int f = 0; f < F_NFAM; f++)
        for (int block = 0; block < 2; block++) {
#define RS(desc, c1, c2, ...)                                                                      \
    ARG_CASE(block ? "reduce_scatter_block" : "reduce_scatter", desc, c1, c2,                      \
             call_rs(f, block, __VA_ARGS__))
            if (block)
                RS("recvcount -1", MPI_ERR_COUNT, -1, sb, rb, minus, MPI_INT, MPI_SUM, comm, 0);
            else
                RS("a receive count -1", MPI_ERR_COUNT, -1, sb, rb, badcounts, MPI_INT, MPI_SUM,
                   comm, 0);
            if (!block)
                RS("recvcounts NULL", MPI_ERR_ARG, MPI_ERR_COUNT, sb, rb, NULL, MPI_INT, MPI_SUM,
                   comm, 0);
            RS("MPI_DATATYPE_NULL", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, counts, MPI_DATATYPE_NULL,
               MPI_SUM, comm, 0);
            RS("uncommitted derived datatype", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, counts,
               uncommitted, MPI_SUM, comm, 0);
            RS("MPI_OP_NULL", MPI_ERR_OP, -1, sb, rb, counts, MPI_INT, MPI_OP_NULL, comm, 0);
            RS("MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, -1, sb, rb, counts, MPI_DOUBLE, MPI_BAND, comm,
               0);
            RS("MPI_MAXLOC on MPI_INT", MPI_ERR_OP, -1, sb, rb, counts, MPI_INT, MPI_MAXLOC, comm,
               0);
            RS("MPI_COMM_NULL", MPI_ERR_COMM, -1, sb, rb, counts, MPI_INT, MPI_SUM, MPI_COMM_NULL,
               0);
            RS("sendbuf == recvbuf (not MPI_IN_PLACE)", MPI_ERR_BUFFER, -1, sb, sb, counts, MPI_INT,
               MPI_SUM, comm, 0);
            if (f != F_BLOCKING)
                RS("NULL request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG, sb, rb, counts, MPI_INT,
                   MPI_SUM, comm, 1);
#undef RS
        }
    /* Zero counts everywhere are valid (and sendbuf == recvbuf is then no aliasing). */
    {
        int zeros[64] = {0}, rc1, rc2;
        rc1 = convoy_Reduce_scatter_block(sb, rb, 0, MPI_INT, MPI_SUM, comm);
        rc2 = convoy_Reduce_scatter(sb, rb, zeros, MPI_INT, MPI_SUM, comm);
        tc_check(MPI_COMM_WORLD, rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS,
                 "Reduce_scatter(_block) with all counts 0 succeeds", "an error");
    }
    /* The user's error handler gets the class and the user's communicator. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(user_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    for (int f = 0; f < F_NFAM; f++) {
        eh_reset();
        int rc = call_rs(f, 1, sb, rb, minus, MPI_INT, MPI_SUM, comm, 0);
        expect_handler(comm, fam_name(what, sizeof what, f, "reduce_scatter_block", "recvcount -1"),
                       rc, MPI_ERR_COUNT);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    rs_still_works(comm, "the argument errors");
    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&comm);
}

/* CONVOY_CHECK_ARGS for Reduce_scatter(_block): mismatches give every rank an error and a
 * message; consistent calls (user op, in place, irregular counts) pass. */
static void test_check_reduce_scatter(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rs_still_works(comm, "nothing (first use)");
    int sb[256], rb[256];
    for (int i = 0; i < 256; i++)
        sb[i] = rank + i, rb[i] = 0;
    int *counts = malloc((size_t)size * sizeof(int));
    for (int r = 0; r < size; r++)
        counts[r] = 3;
    const int last = size - 1;
    static const char *const kw_count[] = {"count", NULL};
    static const char *const kw_op[] = {" op ", " op:", " op,", "MPI_Op", NULL};
    static const char *const kw_inplace[] = {"in_place", "in-place", "inplace", NULL};
    char *msg;
    int rc;

    cap_begin("Reduce_scatter_block, the last rank passes recvcount 5, the others 4");
    rc = convoy_Reduce_scatter_block(sb, rb, rank == last ? 5 : 4, MPI_INT, MPI_SUM, comm);
    msg = cap_end();
    mismatch(comm, "Reduce_scatter_block, the last rank passes recvcount 5, the others 4", rc, msg,
             kw_count);
    free(msg);

    cap_begin("Reduce_scatter, rank 0's recvcounts differ from the others'");
    {
        int *bad = malloc((size_t)size * sizeof(int));
        for (int r = 0; r < size; r++)
            bad[r] = counts[r];
        if (rank == 0) bad[last] = 4;
        rc = convoy_Reduce_scatter(sb, rb, bad, MPI_INT, MPI_SUM, comm);
        free(bad);
    }
    msg = cap_end();
    mismatch(comm, "Reduce_scatter, rank 0's recvcounts differ from the others'", rc, msg,
             kw_count);
    free(msg);

    cap_begin("Reduce_scatter, rank 0 passes MPI_SUM, the others MPI_MAX");
    rc = convoy_Reduce_scatter(sb, rb, counts, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, comm);
    msg = cap_end();
    mismatch(comm, "Reduce_scatter, rank 0 passes MPI_SUM, the others MPI_MAX", rc, msg, kw_op);
    free(msg);

    {
        convoy_request req = CONVOY_REQUEST_NULL;
        cap_begin("Ireduce_scatter_block, rank 0 passes MPI_IN_PLACE, the others do not");
        if (rank == 0) memcpy(rb, sb, sizeof sb);
        rc = convoy_Ireduce_scatter_block(rank == 0 ? MPI_IN_PLACE : (void *)sb, rb, 3, MPI_INT,
                                          MPI_SUM, comm, &req);
        rc = wait_nb(rc, &req);
        msg = cap_end();
        mismatch(comm, "Ireduce_scatter_block, rank 0 passes MPI_IN_PLACE, the others do not", rc,
                 msg, kw_inplace);
        free(msg);
    }
    rs_still_works(comm, "the mismatches");

    /* Consistent: a user op (handles differ between processes) in place. */
    {
        MPI_Op uop;
        MPI_Op_create(op_usersum, 1, &uop);
        for (int i = 0; i < 3 * size; i++)
            rb[i] = rank + i;
        rc = convoy_Reduce_scatter_block(MPI_IN_PLACE, rb, 3, MPI_INT, uop, comm);
        int ok = rc == MPI_SUCCESS;
        for (int k = 0; k < 3 && ok; k++)
            ok = rb[k] == size * (size - 1) / 2 + size * (3 * rank + k);
        tc_check(comm, ok,
                 "CONVOY_CHECK_ARGS: a consistent Reduce_scatter_block passes (user op, in place)",
                 rc ? "an error" : "wrong result");
        MPI_Op_free(&uop);
    }
    free(counts);
    MPI_Comm_free(&comm);
}

/* --- Reduce, Scan, Exscan, Alltoall ---------------------------------------------------------- */

enum { X_REDUCE, X_SCAN, X_EXSCAN, X_ALLTOALL, X_N };
static const char *const x_name[X_N] = {"reduce", "scan", "exscan", "alltoall"};

/* One call of collective x in family f; count is Alltoall's sendcount and recvcount. */
static int call_x(int x, int f, const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op,
                  int root, MPI_Comm comm, int nullreq)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    convoy_request *rp = nullreq ? NULL : &req;
    MPI_Info in = MPI_INFO_NULL;
    int rc = MPI_SUCCESS;
    switch (x * F_NFAM + f) {
    case X_REDUCE *F_NFAM + F_BLOCKING: rc = convoy_Reduce(sb, rb, count, t, op, root, comm); break;
    case X_REDUCE *F_NFAM + F_NONBLOCKING:
        rc = convoy_Ireduce(sb, rb, count, t, op, root, comm, rp);
        break;
    case X_REDUCE *F_NFAM + F_PERSISTENT:
        rc = convoy_Reduce_init(sb, rb, count, t, op, root, comm, in, rp);
        break;
    case X_SCAN *F_NFAM + F_BLOCKING: rc = convoy_Scan(sb, rb, count, t, op, comm); break;
    case X_SCAN *F_NFAM + F_NONBLOCKING: rc = convoy_Iscan(sb, rb, count, t, op, comm, rp); break;
    case X_SCAN *F_NFAM + F_PERSISTENT:
        rc = convoy_Scan_init(sb, rb, count, t, op, comm, in, rp);
        break;
    case X_EXSCAN *F_NFAM + F_BLOCKING: rc = convoy_Exscan(sb, rb, count, t, op, comm); break;
    case X_EXSCAN *F_NFAM + F_NONBLOCKING:
        rc = convoy_Iexscan(sb, rb, count, t, op, comm, rp);
        break;
    case X_EXSCAN *F_NFAM + F_PERSISTENT:
        rc = convoy_Exscan_init(sb, rb, count, t, op, comm, in, rp);
        break;
    case X_ALLTOALL *F_NFAM + F_BLOCKING:
        rc = convoy_Alltoall(sb, count, t, rb, count, t, comm);
        break;
    case X_ALLTOALL *F_NFAM + F_NONBLOCKING:
        rc = convoy_Ialltoall(sb, count, t, rb, count, t, comm, rp);
        break;
    default: rc = convoy_Alltoall_init(sb, count, t, rb, count, t, comm, in, rp); break;
    }
    return end_call(f, &req, rc);
}

/* A valid Reduce, Scan and Alltoall on comm, checked by hand. */
static void rsa_still_works(MPI_Comm comm, const char *after)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int in = rank + 1, red = -1, scan = -1, *a = malloc(2 * (size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        a[i] = rank * 1000 + i;
    int rc = convoy_Reduce(&in, &red, 1, MPI_INT, MPI_SUM, size - 1, comm);
    if (!rc) rc = convoy_Scan(&in, &scan, 1, MPI_INT, MPI_SUM, comm);
    if (!rc) rc = convoy_Alltoall(a, 1, MPI_INT, a + size, 1, MPI_INT, comm);
    int ok = !rc && (rank != size - 1 || red == size * (size + 1) / 2) &&
             scan == (rank + 1) * (rank + 2) / 2;
    for (int i = 0; i < size && ok; i++)
        ok = a[size + i] == i * 1000 + rank;
    char what[256], e[300];
    snprintf(what, sizeof what, "valid Reduce, Scan and Alltoall after %s", after);
    tc_check(comm, ok, what, rc == MPI_SUCCESS ? "wrong result" : tc_errstr(rc, e, sizeof e));
    free(a);
}

static void test_args_rsa(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rsa_still_works(comm, "nothing");
    MPI_Comm self;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    int sb[256], rb[256];
    for (int i = 0; i < 256; i++)
        sb[i] = i, rb[i] = 0;
    MPI_Datatype uncommitted;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    char what[256];
    for (int x = 0; x < X_N; x++)
        for (int f = 0; f < F_NFAM; f++) {
            const int red = x != X_ALLTOALL;
#define XA(desc, c1, c2, ...) ARG_CASE(x_name[x], desc, c1, c2, call_x(x, f, __VA_ARGS__))
            XA("count -1", MPI_ERR_COUNT, -1, sb, rb, -1, MPI_INT, MPI_SUM, 0, comm, 0);
            XA("MPI_DATATYPE_NULL", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, 1, MPI_DATATYPE_NULL, MPI_SUM,
               0, comm, 0);
            XA("uncommitted derived datatype", MPI_ERR_TYPE, MPI_ERR_OP, sb, rb, 1, uncommitted,
               MPI_SUM, 0, comm, 0);
            XA("MPI_COMM_NULL", MPI_ERR_COMM, -1, sb, rb, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL, 0);
            /* Reduce: only the root's buffers may not alias; a communicator of one process
             * makes every rank a root (elsewhere the others would run the reduction). */
            XA("sendbuf == recvbuf (not MPI_IN_PLACE)", MPI_ERR_BUFFER, MPI_ERR_ARG, sb, sb, 2,
               MPI_INT, MPI_SUM, 0, x == X_REDUCE ? self : comm, 0);
            if (red) {
                XA("MPI_OP_NULL", MPI_ERR_OP, -1, sb, rb, 1, MPI_INT, MPI_OP_NULL, 0, comm, 0);
                XA("MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, -1, sb, rb, 1, MPI_DOUBLE, MPI_BAND, 0,
                   comm, 0);
                XA("MPI_MAXLOC on MPI_INT", MPI_ERR_OP, -1, sb, rb, 1, MPI_INT, MPI_MAXLOC, 0, comm,
                   0);
            }
            if (x == X_REDUCE) {
                XA("root -1", MPI_ERR_ROOT, -1, sb, rb, 1, MPI_INT, MPI_SUM, -1, comm, 0);
                XA("root = size", MPI_ERR_ROOT, -1, sb, rb, 1, MPI_INT, MPI_SUM, size, comm, 0);
                /* MPI_IN_PLACE is the root's: every rank but the root errs; the root is not
                 * called (it would wait for the others) and checks a stand-in error. */
                ARG_CASE("reduce", "MPI_IN_PLACE at a non-root", MPI_ERR_BUFFER, MPI_ERR_ARG,
                         rank == 0
                             ? MPI_ERR_BUFFER
                             : call_x(x, f, MPI_IN_PLACE, rb, 1, MPI_INT, MPI_SUM, 0, comm, 0));
            }
            if (f != F_BLOCKING)
                XA("NULL request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG, sb, rb, 1, MPI_INT,
                   MPI_SUM, 0, comm, 1);
#undef XA
        }
    /* Zero counts are valid (and sendbuf == recvbuf is then no aliasing). */
    {
        int ok = 1;
        for (int x = 0; x < X_N; x++)
            ok &= call_x(x, F_BLOCKING, sb, sb, 0, MPI_INT, MPI_SUM, 0, comm, 0) == MPI_SUCCESS;
        tc_check(MPI_COMM_WORLD, ok, "Reduce, Scan, Exscan, Alltoall with count 0 succeed",
                 "an error");
    }
    /* The user's error handler gets the class and the user's communicator. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(user_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    for (int x = 0; x < X_N; x++) {
        eh_reset();
        int rc = call_x(x, F_NONBLOCKING, sb, rb, -1, MPI_INT, MPI_SUM, 0, comm, 0);
        expect_handler(comm, fam_name(what, sizeof what, F_NONBLOCKING, x_name[x], "count -1"), rc,
                       MPI_ERR_COUNT);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    rsa_still_works(comm, "the argument errors");
    MPI_Comm_free(&self);
    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&comm);
}

/* CONVOY_CHECK_ARGS for Reduce, Scan, Exscan, Alltoall: mismatches give every rank an error
 * and a message; consistent calls (in place at the root only, a user op) pass. */
static void test_check_rsa(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rsa_still_works(comm, "nothing (first use)");
    int sb[256], rb[256];
    for (int i = 0; i < 256; i++)
        sb[i] = rank + i, rb[i] = 0;
    const int last = size - 1;
    static const char *const kw_count[] = {"count", NULL};
    static const char *const kw_root[] = {"root", NULL};
    static const char *const kw_op[] = {" op ", " op:", " op,", "MPI_Op", NULL};
    static const char *const kw_inplace[] = {"in_place", "in-place", "inplace", NULL};
    static const char *const kw_block[] = {"block", "count", NULL};
    struct {
        const char *what;
        int x, count, root, inplace;
        MPI_Op op;
        const char *const *kw;
    } cases[] = {
        {"Reduce, the last rank passes root 1, the others root 0", X_REDUCE, 3, -2, 0, MPI_SUM,
         kw_root},
        {"Reduce, the last rank passes count 5, the others 4", X_REDUCE, -5, 0, 0, MPI_SUM,
         kw_count},
        {"Scan, rank 0 passes MPI_SUM, the others MPI_MAX", X_SCAN, 3, 0, 0, MPI_OP_NULL, kw_op},
        {"Exscan, rank 0 passes MPI_IN_PLACE, the others do not", X_EXSCAN, 3, 0, 1, MPI_SUM,
         kw_inplace},
        {"Alltoall, the last rank passes count 5, the others 4", X_ALLTOALL, -5, 0, 0, MPI_SUM,
         kw_block},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int count = cases[i].count > 0 ? cases[i].count : rank == last ? 5 : 4;
        const int root = cases[i].root >= 0 ? cases[i].root : rank == last;
        const MPI_Op op = cases[i].op != MPI_OP_NULL ? cases[i].op : rank == 0 ? MPI_SUM : MPI_MAX;
        const int ip = cases[i].inplace && rank == 0;
        cap_begin(cases[i].what);
        int rc = call_x(cases[i].x, F_BLOCKING, ip ? MPI_IN_PLACE : (void *)sb, rb, count, MPI_INT,
                        op, root, comm, 0);
        char *msg = cap_end();
        mismatch(comm, cases[i].what, rc, msg, cases[i].kw);
        free(msg);
    }
    rsa_still_works(comm, "the mismatches");
    /* Consistent: MPI_IN_PLACE at the root alone, a user op (handles differ). */
    {
        MPI_Op uop;
        MPI_Op_create(op_usersum, 1, &uop);
        for (int i = 0; i < 3; i++)
            rb[i] = rank + i;
        const int root = last;
        int rc = convoy_Reduce(rank == root ? MPI_IN_PLACE : (void *)rb, rank == root ? rb : rb + 8,
                               3, MPI_INT, uop, root, comm);
        int ok = rc == MPI_SUCCESS;
        for (int k = 0; k < 3 && ok && rank == root; k++)
            ok = rb[k] == size * (size - 1) / 2 + size * k;
        tc_check(comm, ok,
                 "CONVOY_CHECK_ARGS: a consistent Reduce passes (user op, in place at the root)",
                 rc ? "an error" : "wrong result");
        MPI_Op_free(&uop);
    }
    MPI_Comm_free(&comm);
}

/* --- CONVOY_WATCHDOG ------------------------------------------------------------------------- */

static void test_watchdog(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    still_works(comm, "nothing (first use)");
    const int late = size - 1, n = 1000;
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = rank * 1000 + i, out[i] = -1;

    PMPI_Barrier(comm);
    cap_begin("CONVOY_WATCHDOG=2, one rank 5 s late: the Allreduce completes correctly");
    double t0 = tc_now();
    if (rank == late) tc_sleep(5.0);
    int rc = convoy_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
    double t = tc_now() - t0;
    char *msg = cap_end();
    if (getenv("CONVOY_TEST_VERBOSE")) fprintf(stderr, "rank %d stderr: %s", rank, msg);

    char detail[1024], e[300];
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < n && ok; i++)
        ok = out[i] == 1000 * size * (size - 1) / 2 + size * i;
    snprintf(detail, sizeof detail, "%s", rc ? tc_errstr(rc, e, sizeof e) : "wrong result");
    tc_check(comm, ok, "CONVOY_WATCHDOG=2, one rank 5 s late: the Allreduce completes correctly",
             detail);

    /* Every rank that waited (not the late one) printed a report naming a step, a peer and
     * a tag (or, waiting in the node segment, a flag); some rank names the late rank as the
     * peer it waits for. */
    int reported = 1, names_late = 0;
    if (rank != late && size > 1) {
        reported = contains_ci(msg, "watchdog") && contains_ci(msg, "step") &&
                   (contains_ci(msg, "tag") || contains_ci(msg, "flag")) &&
                   (contains_ci(msg, "rank") || contains_ci(msg, "peer"));
        char pat[4][64];
        snprintf(pat[0], sizeof pat[0], "from rank %d ", late);
        snprintf(pat[1], sizeof pat[1], "to rank %d ", late);
        snprintf(pat[2], sizeof pat[2], "peer %d", late);
        snprintf(pat[3], sizeof pat[3], "of rank %d ", late);
        for (int k = 0; k < 4; k++)
            names_late |= contains_ci(msg, pat[k]);
    }
    snprintf(detail, sizeof detail, "waited %.1f s; stderr: \"%.700s\"", t, msg);
    tc_check(comm, reported,
             "CONVOY_WATCHDOG=2: each waiting rank reports the step, peer and tag it is stuck on",
             detail);
    int any = 0;
    PMPI_Allreduce(&names_late, &any, 1, MPI_INT, MPI_MAX, comm);
    tc_check(comm, size == 1 || any, "CONVOY_WATCHDOG=2: a report names the late rank as the peer",
             rank == 0 ? detail : "");
    /* The report came while waiting: the waiting ranks waited ~5 s, longer than the limit. */
    tc_check(comm, rank == late || size == 1 || t > 3.0,
             "CONVOY_WATCHDOG=2: the waiting ranks really waited for the late one", detail);
    free(msg);

    /* Quick operations print nothing. */
    cap_begin("CONVOY_WATCHDOG=2: no report for a quick operation");
    still_works(comm, "the watchdog case");
    msg = cap_end();
    snprintf(detail, sizeof detail, "stderr: \"%.700s\"", msg);
    tc_check(comm, !contains_ci(msg, "watchdog"),
             "CONVOY_WATCHDOG=2: no report for a quick operation", detail);
    free(msg);
    free(in);
    free(out);
    MPI_Comm_free(&comm);
}

/* --- rooted collectives -------------------------------------------------------------- */

/* One rooted call (coll: 'b'cast, 'g'ather, 'G'atherv, 's'catter, 'S'catterv) in family fam.
 * Gather: (sb, sc, st) own, (rb, rc | rcs, ds, rt) the root's; Scatter: (sb, sc | rcs, ds, st)
 * the root's, (rb, rc, rt) own; Bcast: (rb, rc, rt). */
static int call_rooted(int fam, char coll, const void *sb, int sc, MPI_Datatype st, void *rb,
                       int rc_, const int *rcs, const int *ds, MPI_Datatype rt, int root,
                       MPI_Comm comm)
{
    convoy_request req = CONVOY_REQUEST_NULL, *q = &req;
    const MPI_Info in = MPI_INFO_NULL;
    int rc = MPI_SUCCESS;
#define FAM(name, ...)                                                                             \
    rc = fam == F_BLOCKING      ? convoy_##name(__VA_ARGS__)                                       \
         : fam == F_NONBLOCKING ? convoy_I##name(__VA_ARGS__, q)                                   \
                                : convoy_##name##_init(__VA_ARGS__, in, q)
#define convoy_IBcast convoy_Ibcast
#define convoy_IGather convoy_Igather
#define convoy_IGatherv convoy_Igatherv
#define convoy_IScatter convoy_Iscatter
#define convoy_IScatterv convoy_Iscatterv
    switch (coll) {
    case 'b': FAM(Bcast, rb, rc_, rt, root, comm); break;
    case 'g': FAM(Gather, sb, sc, st, rb, rc_, rt, root, comm); break;
    case 'G': FAM(Gatherv, sb, sc, st, rb, rcs, ds, rt, root, comm); break;
    case 's': FAM(Scatter, sb, sc, st, rb, rc_, rt, root, comm); break;
    default: FAM(Scatterv, sb, rcs, ds, st, rb, rc_, rt, root, comm); break;
    }
#undef FAM
    return end_call(fam, &req, rc);
}

static const char *rooted_name(char coll)
{
    return coll == 'b'   ? "bcast"
           : coll == 'g' ? "gather"
           : coll == 'G' ? "gatherv"
           : coll == 's' ? "scatter"
                         : "scatterv";
}

/* Argument errors of the rooted collectives. An argument significant at the root only is
 * wrong at the root while every other rank passes a wrong argument of its own, so that
 * every rank returns an error (none is left waiting in the collective). */
static void test_args_rooted(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    still_works(comm, "nothing");
    int sb[64], rb[64], counts[64], displs[64];
    for (int i = 0; i < 64; i++)
        sb[i] = i, rb[i] = 0, counts[i] = 2, displs[i] = 2 * i;
    MPI_Datatype uncommitted;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    const int me_root = rank == 0; /* root 0 in the cases below */
    char what[256];
    for (int f = 0; f < F_NFAM; f++) {
#define RT(coll, desc, c1, c2, ...)                                                                \
    ARG_CASE(rooted_name(coll), desc, c1, c2, call_rooted(f, coll, __VA_ARGS__))
        RT('b', "root -1", MPI_ERR_ROOT, -1, NULL, 0, MPI_INT, rb, 2, NULL, NULL, MPI_INT, -1,
           comm);
        RT('b', "root = size", MPI_ERR_ROOT, -1, NULL, 0, MPI_INT, rb, 2, NULL, NULL, MPI_INT, size,
           comm);
        RT('b', "count -1", MPI_ERR_COUNT, -1, NULL, 0, MPI_INT, rb, -1, NULL, NULL, MPI_INT, 0,
           comm);
        RT('b', "MPI_DATATYPE_NULL", MPI_ERR_TYPE, -1, NULL, 0, MPI_INT, rb, 2, NULL, NULL,
           MPI_DATATYPE_NULL, 0, comm);
        RT('b', "uncommitted datatype", MPI_ERR_TYPE, -1, NULL, 0, MPI_INT, rb, 1, NULL, NULL,
           uncommitted, 0, comm);
        RT('b', "buffer MPI_IN_PLACE", MPI_ERR_BUFFER, -1, NULL, 0, MPI_INT, MPI_IN_PLACE, 2, NULL,
           NULL, MPI_INT, 0, comm);
        RT('b', "MPI_COMM_NULL", MPI_ERR_COMM, -1, NULL, 0, MPI_INT, rb, 2, NULL, NULL, MPI_INT, 0,
           MPI_COMM_NULL);
        for (const char *c = "gGsS"; *c; c++) {
            const int g = *c == 'g' || *c == 'G', v = *c == 'G' || *c == 'S';
            /* own side wrong off the root, the root's side wrong at the root */
            const int own_count = me_root ? 2 : -1, vec_count = me_root ? -1 : 2;
            int bad[64];
            for (int i = 0; i < 64; i++)
                bad[i] = i == size - 1 ? -1 : 2;
            RT(*c, "root -1", MPI_ERR_ROOT, -1, sb, 2, MPI_INT, rb, 2, counts, displs, MPI_INT, -1,
               comm);
            RT(*c, "root = size", MPI_ERR_ROOT, -1, sb, 2, MPI_INT, rb, 2, counts, displs, MPI_INT,
               size, comm);
            if (g) {
                RT(*c, "MPI_IN_PLACE as recvbuf at the root and as sendbuf elsewhere",
                   MPI_ERR_BUFFER, -1, me_root ? (void *)sb : MPI_IN_PLACE, 2, MPI_INT,
                   me_root ? MPI_IN_PLACE : (void *)rb, 2, counts, displs, MPI_INT, 0, comm);
                RT(*c, "sendcount -1 off the root, a receive count -1 at the root", MPI_ERR_COUNT,
                   -1, sb, own_count, MPI_INT, rb, vec_count, v ? bad : counts, displs, MPI_INT, 0,
                   comm);
                RT(*c, "sendtype NULL off the root, recvtype NULL at the root", MPI_ERR_TYPE, -1,
                   sb, 2, me_root ? MPI_INT : MPI_DATATYPE_NULL, rb, 2, counts, displs,
                   me_root ? MPI_DATATYPE_NULL : MPI_INT, 0, comm);
                RT(*c, "sendbuf == recvbuf at the root, sendcount -1 elsewhere", MPI_ERR_BUFFER,
                   MPI_ERR_COUNT, sb, own_count, MPI_INT, me_root ? sb : rb, 2, counts, displs,
                   MPI_INT, 0, comm);
                if (v)
                    RT(*c, "recvcounts NULL at the root, sendcount -1 elsewhere", MPI_ERR_ARG,
                       MPI_ERR_COUNT, sb, own_count, MPI_INT, rb, 2, me_root ? NULL : counts,
                       displs, MPI_INT, 0, comm);
            } else {
                RT(*c, "MPI_IN_PLACE as sendbuf at the root and as recvbuf elsewhere",
                   MPI_ERR_BUFFER, -1, me_root ? MPI_IN_PLACE : (void *)sb, 2, MPI_INT,
                   me_root ? (void *)rb : MPI_IN_PLACE, 2, counts, displs, MPI_INT, 0, comm);
                RT(*c, "recvcount -1 off the root, a send count -1 at the root", MPI_ERR_COUNT, -1,
                   sb, vec_count, MPI_INT, rb, own_count, v ? bad : counts, displs, MPI_INT, 0,
                   comm);
                RT(*c, "recvtype NULL off the root, sendtype NULL at the root", MPI_ERR_TYPE, -1,
                   sb, 2, me_root ? MPI_DATATYPE_NULL : MPI_INT, rb, 2, counts, displs,
                   me_root ? MPI_INT : MPI_DATATYPE_NULL, 0, comm);
                if (v)
                    RT(*c, "displs NULL at the root, recvcount -1 elsewhere", MPI_ERR_ARG,
                       MPI_ERR_COUNT, sb, 2, MPI_INT, rb, own_count, counts,
                       me_root ? NULL : displs, MPI_INT, 0, comm);
            }
        }
#undef RT
    }
    /* The communicator still works after all of them, and the error handler is called. */
    still_works(comm, "the rooted argument errors");
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(user_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    eh_reset();
    expect_handler(comm, "convoy_Bcast: root = size", convoy_Bcast(rb, 2, MPI_INT, size, comm),
                   MPI_ERR_ROOT);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&comm);
}

/* CONVOY_CHECK_ARGS on the rooted collectives: a root or a block size that differs across
 * ranks is an error on every rank, named on stderr, instead of a hang. */
static void test_check_rooted(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    still_works(comm, "nothing (first use)");
    const int last = size - 1;
    int sb[64], rb[256], counts[64], displs[64];
    for (int i = 0; i < 64; i++)
        sb[i] = i, counts[i] = 2, displs[i] = 2 * i;
    static const char *const kw_root[] = {"root", NULL};
    static const char *const kw_bytes[] = {"bytes", "count", NULL};
    char *msg;
    int rc;
    for (int f = F_BLOCKING; f <= F_NONBLOCKING; f++) {
        const char *fam = f == F_BLOCKING ? "" : " (nonblocking)";
        char what[256];
        snprintf(what, sizeof what, "Bcast%s, the last rank passes root 1, the others 0", fam);
        cap_begin(what);
        rc = call_rooted(f, 'b', NULL, 0, MPI_INT, rb, 4, NULL, NULL, MPI_INT, rank == last, comm);
        msg = cap_end();
        mismatch(comm, what, rc, msg, kw_root);
        free(msg);
        snprintf(what, sizeof what, "Gatherv%s, the last rank passes root 1, the others 0", fam);
        cap_begin(what);
        rc =
            call_rooted(f, 'G', sb, 2, MPI_INT, rb, 0, counts, displs, MPI_INT, rank == last, comm);
        msg = cap_end();
        mismatch(comm, what, rc, msg, kw_root);
        free(msg);
        snprintf(what, sizeof what, "Gather%s, the last rank sends 3 ints, the root takes 2", fam);
        cap_begin(what);
        rc = call_rooted(f, 'g', sb, rank == last ? 3 : 2, MPI_INT, rb, 2, NULL, NULL, MPI_INT, 0,
                         comm);
        msg = cap_end();
        mismatch(comm, what, rc, msg, kw_bytes);
        free(msg);
    }
    still_works(comm, "the rooted mismatches");
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(30);
    const char *mode = argc > 1 ? argv[1] : "args";
    if (strcmp(mode, "args") == 0) {
        test_args();
        test_args_reduce_scatter();
        test_args_rooted();
        test_args_rsa();
    } else if (strcmp(mode, "check") == 0) {
        test_check();
        test_check_reduce_scatter();
        test_check_rooted();
        test_check_rsa();
    } else if (strcmp(mode, "watchdog") == 0)
        test_watchdog();
    else {
        if (tc_world_rank() == 0) fprintf(stderr, "usage: test_errors args|check|watchdog\n");
        tc_check(MPI_COMM_WORLD, 0, "usage", mode);
    }
    int status = tc_finish();
    MPI_Finalize();
    return status;
}
