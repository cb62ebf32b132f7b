/*
 * Split-phase behaviour of nonblocking and persistent operations (as GASPI's split phase):
 * while the last rank sleeps 0.6 s before joining, on every other rank
 *   - convoy_Iallreduce / convoy_Iallgatherv / convoy_start return at once (< 0.3 s),
 *   - convoy_test returns quickly with flag 0 (the operation cannot be done yet),
 *   - convoy_wait_timeout(0.1 s) returns flag 0 after about 0.1 s,
 * and then convoy_wait completes the operation with the right result (derived by hand).
 * Also on a communicator whose first Convoy call is nonblocking (the first-use setup must
 * not block inside it). Every registered algorithm runs, and the default selection.
 */
#include "common.h"

#include "api/api.h"
#include "convoy.h"
#include "select/select.h"

/* "At once": generous for 2 oversubscribed cores, well below the peer's sleep (which
 * every case pays once: about 30 cases per run). */
#define QUICK 0.3
#define SLEEP 0.6

enum { OP_ALLREDUCE, OP_ALLGATHERV, OP_PERSISTENT_ALLREDUCE, OP_NKINDS };
static const char *kind_name[] = {"convoy_Iallreduce", "convoy_Iallgatherv",
                                  "convoy_Allreduce_init + convoy_start"};

typedef struct tcase {
    int kind;
    int n;
    int *in, *out;
    int *rcounts, *displs;
    convoy_request req;
} tcase;

static int start_op(tcase *c, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    switch (c->kind) {
    case OP_ALLREDUCE:
        return convoy_Iallreduce(c->in, c->out, c->n, MPI_INT, MPI_SUM, comm, &c->req);
    case OP_ALLGATHERV:
        return convoy_Iallgatherv(c->in, c->rcounts[rank], MPI_INT, c->out, c->rcounts, c->displs,
                                  MPI_INT, comm, &c->req);
    default: return convoy_start(&c->req);
    }
}

/* Hand-derived check of the result. */
static int result_ok(const tcase *c, int size)
{
    if (c->kind == OP_ALLGATHERV) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < c->rcounts[r]; i++)
                if (c->out[c->displs[r] + i] != 1000 * r + i) return 0;
        return 1;
    }
    for (int i = 0; i < c->n; i++)
        if (c->out[i] != 1000 * size * (size - 1) / 2 + size * i) return 0;
    return 1;
}

static void run_case(MPI_Comm comm, const char *cname, int kind, const char *algo, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int late = size - 1;
    char what[256], detail[1024] = "", e[300];
    snprintf(what, sizeof what, "%s comm=%s algo=%s count=%d, rank %d joins %.1f s late",
             kind_name[kind], cname, algo ? algo : "default", n, late, SLEEP);
    const char *var = kind == OP_ALLGATHERV ? "CONVOY_ALLGATHERV_ALGO" : "CONVOY_ALLREDUCE_ALGO";
    if (algo)
        setenv(var, algo, 1);
    else
        unsetenv(var);

    tcase c = {kind, n, NULL, NULL, NULL, NULL, CONVOY_REQUEST_NULL};
    c.rcounts = malloc((size_t)size * sizeof(int));
    c.displs = malloc((size_t)size * sizeof(int));
    int total = 0;
    for (int r = 0; r < size; r++) {
        c.rcounts[r] = kind == OP_ALLGATHERV ? n / size + r % 2 : n;
        c.displs[r] = total;
        total += c.rcounts[r];
    }
    int nin = kind == OP_ALLGATHERV ? c.rcounts[rank] : n;
    int nout = kind == OP_ALLGATHERV ? total : n;
    c.in = malloc((size_t)(nin + 1) * sizeof(int));
    c.out = malloc((size_t)(nout + 1) * sizeof(int));
    for (int i = 0; i < nin; i++)
        c.in[i] = 1000 * rank + i;
    for (int i = 0; i < nout; i++)
        c.out[i] = -1;
    int rc = MPI_SUCCESS, ok = 1;
    if (kind == OP_PERSISTENT_ALLREDUCE)
        rc = convoy_Allreduce_init(c.in, c.out, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &c.req);
    if (rc != MPI_SUCCESS) {
        ok = 0;
        snprintf(detail, sizeof detail, "init: %s", tc_errstr(rc, e, sizeof e));
    }

    PMPI_Barrier(comm);
    double t0 = tc_now(), t_start = 0, t_test = 0, t_to = 0, t_done = 0;
    int flag_test = -1, flag_to = -1;
    if (rank == late) {
        tc_sleep(SLEEP);
        if (ok) rc = start_op(&c, comm);
        if (rc == MPI_SUCCESS && ok) rc = convoy_wait(&c.req);
        t_done = tc_now() - t0;
    } else if (ok) {
        rc = start_op(&c, comm);
        t_start = tc_now() - t0;
        if (rc == MPI_SUCCESS) {
            double t = tc_now();
            rc = convoy_test(&c.req, &flag_test);
            t_test = tc_now() - t;
        }
        if (rc == MPI_SUCCESS) {
            double t = tc_now();
            rc = convoy_wait_timeout(&c.req, 0.1, &flag_to);
            t_to = tc_now() - t;
        }
        if (rc == MPI_SUCCESS) rc = convoy_wait(&c.req);
        t_done = tc_now() - t0;
    }
    unsetenv(var);
    if (ok && rc != MPI_SUCCESS) {
        ok = 0;
        snprintf(detail, sizeof detail, "%s", tc_errstr(rc, e, sizeof e));
    }
    if (ok && !result_ok(&c, size)) {
        ok = 0;
        snprintf(detail, sizeof detail, "wrong result");
    }
    char w2[400];
    snprintf(w2, sizeof w2, "%s: completes with the right result", what);
    tc_check(comm, ok, w2, detail);

    if (rank != late) {
        snprintf(detail, sizeof detail,
                 "start returned after %.3f s, test after %.3f s (flag %d), wait_timeout(0.1) "
                 "after %.3f s (flag %d), done after %.3f s",
                 t_start, t_test, flag_test, t_to, flag_to, t_done);
    } else {
        detail[0] = '\0';
    }
    int quick = rank == late || !ok || (t_start < QUICK);
    snprintf(w2, sizeof w2, "%s: the call returns at once (< %.1f s)", what, QUICK);
    tc_check(comm, quick, w2, detail);
    int split = rank == late || !ok || (flag_test == 0 && t_test < 0.1);
    snprintf(w2, sizeof w2, "%s: convoy_test returns quickly with flag 0", what);
    tc_check(comm, split, w2, detail);
    int to = rank == late || !ok || (flag_to == 0 && t_to >= 0.09 && t_to < 0.8 * SLEEP);
    snprintf(w2, sizeof w2, "%s: convoy_wait_timeout(0.1 s) gives up with flag 0 after ~0.1 s",
             what);
    tc_check(comm, to, w2, detail);
    /* No rank can finish before the late one joined: else the timings above measure
     * nothing. */
    int waited = !ok || t_done > 0.9 * SLEEP;
    snprintf(w2, sizeof w2, "%s: completion waited for the late rank", what);
    tc_check(comm, waited, w2, detail);

    if (kind == OP_PERSISTENT_ALLREDUCE && c.req != CONVOY_REQUEST_NULL)
        convoy_request_free(&c.req);
    free(c.in), free(c.out), free(c.rcounts), free(c.displs);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    tc_guard_init(60);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    unsetenv("CONVOY_ALLGATHERV_ALGO");
    if (size < 2) {
        tc_check(MPI_COMM_WORLD, 0, "test_nonblocking needs at least 2 processes", "");
        int status = tc_finish();
        MPI_Finalize();
        return status;
    }

    /* First use of a communicator is nonblocking: it must not block on the setup. */
    {
        MPI_Comm fresh;
        MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
        MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
        run_case(fresh, "fresh-dup (first Convoy call)", OP_ALLREDUCE, NULL, 100);
        MPI_Comm_free(&fresh);
    }

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* Make the communicator's Convoy state with blocking calls first, so that the cases
     * below take Convoy's own path. */
    {
        int x = 1, y = 0, rc = convoy_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
        tc_check(comm, rc == MPI_SUCCESS && y == size, "warm-up Allreduce", "");
        int *rcs = malloc((size_t)size * sizeof(int)), *dps = malloc((size_t)size * sizeof(int));
        int *all = malloc((size_t)size * sizeof(int)), me;
        MPI_Comm_rank(comm, &me);
        for (int r = 0; r < size; r++)
            rcs[r] = 1, dps[r] = r, all[r] = -1;
        rc = convoy_Allgatherv(&me, 1, MPI_INT, all, rcs, dps, MPI_INT, comm);
        int ok = rc == MPI_SUCCESS;
        for (int r = 0; r < size && ok; r++)
            ok = all[r] == r;
        tc_check(comm, ok, "warm-up Allgatherv", "");
        free(rcs), free(dps), free(all);
    }
    for (int i = 0; i < convoy__nalgos + 1; i++) {
        /* i == convoy__nalgos: the default selection, for each collective. */
        const char *name = i < convoy__nalgos ? convoy__algos[i].name : NULL;
        int coll = i < convoy__nalgos ? convoy__algos[i].coll : -1;
        if (coll == CONVOY_COLL_ALLREDUCE || coll < 0) {
            run_case(comm, "dup", OP_ALLREDUCE, name, 1000);
            run_case(comm, "dup", OP_PERSISTENT_ALLREDUCE, name, 2000);
        }
        if (coll == CONVOY_COLL_ALLGATHERV || coll < 0)
            run_case(comm, "dup", OP_ALLGATHERV, name, 3000);
    }
    run_case(comm, "dup", OP_ALLREDUCE, NULL, 1 << 18);
    MPI_Comm_free(&comm);
    int status = tc_finish();
    MPI_Finalize();
    return status;
}
