/*
 * convoy-bench: the driver. It parses the options, measures the clock offsets when asked,
 * then runs one cell after another — every chosen collective at every distribution and
 * count (its variants: native and Convoy's algorithms), the performance guidelines, the
 * lane benchmarks — through the runner (run.c), and writes each cell as it finishes.
 *
 * Convoy's algorithms are forced per call with CONVOY_<COLL>_ALGO, which Convoy reads on
 * every call; setenv() runs in the untimed preparation of the call.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/internal.h"
#include "check/dist.h"
#include "parse.h"
#include "select/select.h"
#include "topo/topo.h"

#ifdef CONVOY_SIMGRID
#include <simgrid/host.h>

#include "platform/platform.h"
#endif

/* The columns of one collective's table: the requested variants that exist for it, in the
 * order asked, without duplicates. Convoy's algorithms only where Convoy has the
 * collective. */
static int resolve_algos(const bench_opts *o, const bench_coll *coll, char ***out, int *nout)
{
    int cap = 3 + convoy__nalgos + o->nalgos, n = 0;
    char **v = calloc((size_t)cap, sizeof *v);
    if (!v) return -1;
    int convoy = bench_lib_has(&bench_convoy, coll->id), cc = bench_coll_convoy(coll);
    for (int i = 0; i < o->nalgos; i++) {
        const char *a = o->algos[i];
        const char *cand[64];
        int nc = 0;
        if (!strcmp(a, "all")) {
            cand[nc++] = "native";
            int nreg = 0;
            for (int k = 0; convoy && k < convoy__nalgos && nc < 63; k++)
                if (convoy__algo_serves(&convoy__algos[k], cc)) {
                    cand[nc++] = convoy__algos[k].name;
                    nreg++;
                }
            /* Convoy has the collective but no registered algorithm to force: its own
             * choice is all there is to time. */
            if (convoy && nreg == 0) cand[nc++] = "auto";
        } else if (!strcmp(a, "native")) {
            cand[nc++] = a;
        } else if (convoy && (!strcmp(a, "auto") || (cc >= 0 && convoy__algo_find(cc, a)))) {
            cand[nc++] = a;
        }
        for (int k = 0; k < nc; k++) {
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= strcmp(v[j], cand[k]) == 0;
            if (!dup) v[n++] = (char *)cand[k];
        }
    }
    *out = v;
    *nout = n;
    return 0;
}

/* Every distribution named must be known (when a chosen collective takes one). */
static int check_dist_names(const bench_opts *o, int size, char *err, int errlen)
{
    int vector = 0;
    for (int c = 0; c < o->ncolls; c++)
        vector |= (bench_coll_find(o->colls[c])->flags & BENCH_VECTOR) != 0;
    int64_t *tmp = malloc((size_t)size * sizeof *tmp);
    int rc = tmp ? 0 : -1;
    for (int i = 0; vector && !rc && i < o->ndists; i++)
        if (convoy__dist_counts(o->dists[i], size, 1, o->seed, tmp) != 0) {
            snprintf(err, (size_t)errlen, "unknown distribution '%s' (try --help)", o->dists[i]);
            rc = -1;
        }
    free(tmp);
    return rc;
}

/* Every algorithm named must exist for at least one of the chosen collectives. */
static int check_algo_names(const bench_opts *o, char *err, int errlen)
{
    for (int i = 0; i < o->nalgos; i++) {
        const char *a = o->algos[i];
        if (!strcmp(a, "all") || !strcmp(a, "native") || !strcmp(a, "auto")) continue;
        int found = 0;
        for (int c = 0; c < o->ncolls; c++) {
            const bench_coll *coll = bench_coll_find(o->colls[c]);
            int cc = bench_coll_convoy(coll);
            found |= cc >= 0 && convoy__algo_find(cc, a) != NULL;
        }
        if (!found) {
            snprintf(err, (size_t)errlen, "no algorithm '%s' for %s (try --list)", a,
                     o->ncolls == 1 ? o->colls[0] : "the chosen collectives");
            return -1;
        }
    }
    return 0;
}

static void list_algos(FILE *f)
{
    fprintf(f, "# collective variant [parameters]   (native: the MPI library through PMPI; "
               "auto: Convoy's choice)\n");
    for (int c = 0; c < bench_ncolls; c++) {
        const bench_coll *coll = &bench_colls[c];
        fprintf(f, "%s native\n", coll->name);
        if (!bench_lib_has(&bench_convoy, coll->id)) continue;
        fprintf(f, "%s auto\n", coll->name);
        int cc = bench_coll_convoy(coll);
        for (int k = 0; k < convoy__nalgos; k++)
            if (cc >= 0 && convoy__algo_serves(&convoy__algos[k], cc))
                fprintf(f, "%s %s %s\n", coll->name, convoy__algos[k].name,
                        convoy__algos[k].params ? convoy__algos[k].params : "");
    }
    bench_list_guidelines(f);
}

/* --- a collective's cell ------------------------------------------------------------------ */

typedef struct coll_job {
    const bench_coll *coll;
    char env[64];     /* CONVOY_<COLL>_ALGO */
    int after_auto;   /* the last call prepared was the "auto" variant's */
    const char *pick; /* Convoy's record of its choice after the last "auto" call */
    /* What this rank last set env to ("": unset; NULL: not yet). Not read back from the
     * environment: under SimGrid all ranks share one, and each must decide alike. */
    const char *set;
} coll_job;

static void coll_prepare(bench_job *j, int v)
{
    coll_job *cj = (coll_job *)j->ctx; /* run_cell's own, writable */
    const char *algo = v < 0 ? "native" : j->names[v];
    /* Convoy's choice is read here, outside the timed call, after "auto" ran. */
    if (cj->after_auto) cj->pick = convoy__comm_last_algo(j->cell->comm);
    cj->after_auto = !strcmp(algo, "auto");
    const char *want = !strcmp(algo, "auto") ? "" : strcmp(algo, "native") ? algo : NULL;
    int changed = 0;
    if (want) {
        changed = !cj->set || strcmp(cj->set, want) != 0;
        cj->set = want;
        if (*want)
            setenv(cj->env, want, 1);
        else
            unsetenv(cj->env);
    }
    cj->coll->prepare(j->cell);
    /* A program calls one collective the same way over and over, and Convoy keeps such a
     * call (its plan, request and compiled schedule) until the settings change; forcing
     * the next variant's algorithm changes them. So while timing, a variant whose setting
     * just changed makes one untimed call first: the timed call is the repeated call a
     * program makes, not the first after a change of settings. (Not while validating: the
     * poisoned receive buffer must see only the validated call.) */
    if (changed && j->timing) {
        cj->coll->run(j->cell, bench_convoy.fn[cj->coll->id]);
        cj->coll->prepare(j->cell);
    }
    /* Convoy's default times its close candidates in a kind's first calls (the trial,
     * src/api/trial.c): "auto" is timed in the steady state a program's loop reaches, so
     * its trial runs to the end first, untimed. */
    for (int i = 0; j->timing && cj->after_auto && convoy__comm_trials_open(j->cell->comm) > 0 &&
                    i < CONVOY_TRIAL_CALLS_MAX;
         i++) {
        cj->coll->run(j->cell, bench_convoy.fn[cj->coll->id]);
        cj->coll->prepare(j->cell);
    }
}

static int coll_call(bench_job *j, int v)
{
    const coll_job *cj = j->ctx;
    int native = v < 0 || !strcmp(j->names[v], "native");
    return cj->coll->run(j->cell, (native ? &bench_native : &bench_convoy)->fn[cj->coll->id]);
}

/* What Convoy's default chooses for the cell: the library's record of its choice after the
 * "auto" variant's last call when it ran and stayed applicable, else after untimed calls
 * without forcing, one or as many as its trial takes (NULL where Convoy lacks the
 * collective). */
static const char *default_pick(bench_job *j, coll_job *cj, const bench_result *res)
{
    if (!bench_lib_has(&bench_convoy, cj->coll->id)) return NULL;
    if (cj->after_auto) cj->pick = convoy__comm_last_algo(j->cell->comm);
    cj->after_auto = 0;
    for (int i = 0; i < j->nvar; i++)
        if (!strcmp(j->names[i], "auto") && res[i].applicable && cj->pick) return cj->pick;
    char *saved = getenv(cj->env) ? strdup(getenv(cj->env)) : NULL;
    unsetenv(cj->env);
    /* (Past the trial, src/api/trial.c: the choice it settles on, which the first call after
     * the trial's last makes. The last timed call ran a side, its first for 5 sides: read
     * there, every large Allgatherv of make bench reported the model's choice.) */
    const char *pick = NULL;
    for (int i = 0; i <= CONVOY_TRIAL_CALLS_MAX + 1; i++) {
        const int open = convoy__comm_trials_open(j->cell->comm);
        cj->coll->prepare(j->cell);
        if (cj->coll->run(j->cell, bench_convoy.fn[cj->coll->id]) != MPI_SUCCESS) {
            pick = NULL;
            break;
        }
        pick = convoy__comm_last_algo(j->cell->comm);
        if (!open && convoy__comm_trials_open(j->cell->comm) == 0) break;
    }
    if (saved) setenv(cj->env, saved, 1);
    free(saved);
    return pick;
}

static void bound_refresh(const bench_ctx *x, int64_t bytes);

/* One cell, start to finish. Errors are counted in x->failures. */
static void run_cell(bench_ctx *x, const bench_coll *coll, const char *dist, int64_t count,
                     char **algos, int nalgos)
{
    const bench_opts *o = x->o;
    double t_cell = MPI_Wtime();
    bench_cell c;
    bench_cell_init(&c, x->comm, o, (coll->flags & BENCH_REDUCES) != 0);
    c.dist = dist;
    c.count = count;
    if (!(coll->flags & BENCH_INPLACE)) c.inplace = 0;

    char why[256] = "";
    int st = coll->setup(&c, why, sizeof why), all_st;
    st = st < 0 ? 2 : st > 0 ? 1 : 0;
    MPI_Allreduce(&st, &all_st, 1, MPI_INT, MPI_MAX, x->comm);
    if (all_st) {
        if (x->rank == 0) {
            bench_progress_clear(x);
            fprintf(stderr, "convoy-bench: %s dist %s count %lld %s: %s\n", coll->name, dist,
                    (long long)count, all_st == 2 ? "failed" : "skipped",
                    all_st == 2 ? "out of memory" : why);
        }
        bench_cell_free(&c);
        if (all_st == 2) x->failures++;
        x->cells_done++;
        return;
    }
    coll_job cj = {.coll = coll};
    const char *n = coll->convoy_name ? coll->convoy_name : coll->name;
    int k = snprintf(cj.env, sizeof cj.env, "CONVOY_");
    for (; *n && k < 50; n++)
        cj.env[k++] = (char)toupper((unsigned char)*n);
    snprintf(cj.env + k, sizeof cj.env - (size_t)k, "_ALGO");

    bench_job j = {.x = x,
                   .what = coll->name,
                   .cell = &c,
                   .nvar = nalgos,
                   .names = algos,
                   .rooted = (coll->flags & BENCH_ROOTED) != 0,
                   .prepare = coll_prepare,
                   .call = coll_call,
                   .has_ref = 1,
                   .ref_variant = -1,
                   .ctx = &cj};
    for (int i = 0; i < nalgos; i++)
        if (!strcmp(algos[i], "native")) j.ref_variant = i;
    bench_result *res = calloc((size_t)nalgos, sizeof *res);
    if (!res) bench_out_of_memory(x);
    bench_run_job(&j, res, t_cell);
    bound_refresh(x, c.bytes);
    bench_row_ctx rc = {"coll",
                        coll->name,
                        (coll->flags & BENCH_VECTOR) != 0,
                        (coll->flags & BENCH_REDUCES) != 0,
                        (coll->flags & BENCH_ROOTED) != 0,
                        default_pick(&j, &cj, res)};
    bench_emit(x, &rc, &c, res, nalgos);
    x->cells_done++;
    free(res);
    bench_cell_free(&c);
}

void bench_emit(bench_ctx *x, const bench_row_ctx *rc, const bench_cell *c, const bench_result *r,
                int nr)
{
    if (x->rank != 0) return;
    bench_progress_clear(x);
    if (!x->o->quiet) bench_print_table_row(stdout, rc, c, r, nr);
    if (x->csv) bench_csv_rows(x->csv, &x->meta, x->o, rc, c, r, nr);
    if (x->json) bench_json_rows(x, rc, c, r, nr);
}

/* Bytes per second of one core's memcpy between two 32 MiB buffers (beyond the caches),
 * the fastest of 20 after the pages are touched; the processes of `together` (when not
 * MPI_COMM_NULL) copy at once, meeting in a barrier before each copy. *cma: the same for a
 * cross-memory read of the buffer (process_vm_readv of this process's own pages: the
 * kernel's copy between processes, which the MPI library and Convoy use for large data
 * inside a node), timed after each memcpy the same way; 0 where not permitted (cma NULL:
 * not timed). Under simulation a memcpy takes no simulated time (only MPI_Wtime's own 10
 * ns: millions of GB/s); a copy costs what the platform layer charges for it
 * (CONVOY_SIM_COPY_BW), so that charge is what is timed, and there are no cross-memory
 * reads. */
double bench_copy_bandwidth(MPI_Comm together, double *cma)
{
    const size_t n = (size_t)32 << 20;
    if (cma) *cma = 0;
#ifdef CONVOY_SIMGRID
    (void)together;
    const double t0 = MPI_Wtime();
    convoy__plat_charge_copy((int64_t)n);
    const double ts = MPI_Wtime() - t0;
    return ts > 0 ? (double)n / ts : 0;
#else
    char *a = malloc(n), *b = malloc(n);
    int ok = a && b, all = ok;
    if (together != MPI_COMM_NULL) MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, together);
    double best = 0, best_cma = 0;
    if (all) {
        memset(a, 1, n);
        memset(b, 2, n);
        for (int i = 0; i < 20; i++) {
            if (together != MPI_COMM_NULL) MPI_Barrier(together);
            double t = MPI_Wtime();
            memcpy(b, a, n);
            t = MPI_Wtime() - t;
            if (t > 0 && (best == 0 || t < best)) best = t;
            a[i] = b[n - 1 - (size_t)i]; /* (keeps the copies) */
            if (!cma) continue;
            if (together != MPI_COMM_NULL) MPI_Barrier(together);
            t = convoy__shm_cma_rate(b, a, (int64_t)n, 1) * (double)n;
            if (t > 0 && (best_cma == 0 || t < best_cma)) best_cma = t;
        }
    }
    free(a);
    free(b);
    if (cma && best_cma > 0) *cma = (double)n / best_cma;
    return best > 0 ? (double)n / best : 0;
#endif
}

#ifndef CONVOY_SIMGRID
/* A barrier whose waiters sleep between tests, so that processes not copying leave the
 * cores to those that do (oversubscribed, a polling waiter would share a copier's core). */
static void barrier_sleeping(MPI_Comm c)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(c, &r);
    for (MPI_Test(&r, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&r, &done, MPI_STATUS_IGNORE))
        nanosleep(&(struct timespec){0, 200000}, NULL);
}
#endif

#ifndef CONVOY_SIMGRID
/* The together part of copy_bandwidth_all: the mean rate of the copying processes, on every
 * rank (*cma: of their cross-memory reads, 0 where not permitted). */
static double copy_bandwidth_together(const bench_ctx *x, double *cma)
{
    /* Rank 0's host (collect_meta's host_of) and this rank's place among its processes. */
    const bench_meta *m = &x->meta;
    int hrank = 0;
    for (int i = 0; i < x->rank; i++)
        hrank += m->host_of[i] == 0;
    const int hprocs = m->host_procs;
    const int k = m->host_cores > 0 && m->host_cores < hprocs ? (int)m->host_cores : hprocs;
    const int copies = m->host_of[x->rank] == 0 && hrank < k;
    MPI_Comm together;
    MPI_Comm_split(x->comm, copies ? 0 : MPI_UNDEFINED, x->rank, &together);
    double v[4] = {0, 0, 0, 0}, sum[4];
    if (copies) {
        v[0] = bench_copy_bandwidth(together, &v[2]);
        v[1] = v[0] > 0, v[3] = v[2] > 0;
        MPI_Comm_free(&together);
    }
    barrier_sleeping(x->comm);
    MPI_Allreduce(v, sum, 4, MPI_DOUBLE, MPI_SUM, x->comm);
    *cma = sum[3] > 0 ? sum[2] / sum[3] : 0;
    return sum[1] > 0 ? sum[0] / sum[1] : 0;
}
#endif

/* The copy bandwidth per core for the single-copy bound, with as many processes of rank 0's
 * host copying at once as the bound lets work in parallel (its processes, at most one per
 * core): the mean of their rates, on every rank; the others sleep meanwhile. *alone: rank 0's rate
 * copying alone (the others wait). A bound from one core's rate assumes it holds with every core
 * copying; on this development host (2-core EPYC virtual machine) two cores copying 32 MiB at once
 * ran 18.3-20.2 GB/s each against 19.7-25.0 for one alone (6 alternated runs, load 9). */
static double copy_bandwidth_all(const bench_ctx *x, double *alone, double *cma)
{
    *cma = 0;
    *alone = x->rank == 0 ? bench_copy_bandwidth(MPI_COMM_NULL, NULL) : 0;
#ifndef CONVOY_SIMGRID
    barrier_sleeping(x->comm);
#endif
    MPI_Bcast(alone, 1, MPI_DOUBLE, 0, x->comm);
#ifdef CONVOY_SIMGRID
    return *alone; /* (the platform charges every copy alike) */
#else
    return copy_bandwidth_together(x, cma);
#endif
}

/* Before the row of a cell of at least BOUND_REFRESH_BYTES: the copy bandwidth measured
 * again, the bound's kept where faster. A host shared with others copies at different rates
 * from minute to minute (this development VM: 4.7-11.8 GB/s per core within 16 s, and 4.7 to
 * 9.6 GB/s at the start of runs an hour apart), and a bound from a slow moment at the start
 * was no bound: cells came in at 0.4 of it. The fastest rate seen so far keeps it a lower
 * bound as far as this run can tell; each bound line names the rate it used. Collective. */
enum { BOUND_REFRESH_BYTES = 1 << 20 };
static void bound_refresh(const bench_ctx *x, int64_t bytes)
{
#ifdef CONVOY_SIMGRID
    (void)x, (void)bytes; /* (the platform's rate does not change) */
#else
    if (bench_bound_cfg.bw <= 0 || bytes < BOUND_REFRESH_BYTES) return;
    double cma;
    const double bw = copy_bandwidth_together(x, &cma);
    if (bw > bench_bound_cfg.bw) bench_bound_cfg.bw = bw;
    if (cma > bench_bound_cfg.cma) bench_bound_cfg.cma = cma;
#endif
}

/* --- metadata ------------------------------------------------------------------------------ */

static void collect_meta(bench_ctx *x, const convoy__topo *topo)
{
    bench_meta *m = &x->meta;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    snprintf(m->mpi_full, sizeof m->mpi_full, "%.*s", (int)sizeof m->mpi_full - 1, lib);
    lib[strcspn(lib, "\r\n")] = '\0';
    snprintf(m->mpi_version, sizeof m->mpi_version, "%.*s", (int)sizeof m->mpi_version - 1, lib);
    MPI_Get_version(&m->mpi_major, &m->mpi_minor);
    m->np = x->size;
    m->nodes = topo->nnodes;
    m->ppn = topo->max_ppn;
    m->topo_flags = topo->flags;
    m->convoy_ppn = getenv("CONVOY_PPN");
    m->convoy_nodemap = getenv("CONVOY_NODEMAP");
    const char *shape = (topo->flags & CONVOY_TOPO_UNIFORM)       ? "uniform"
                        : (topo->flags & CONVOY_TOPO_REGULAR)     ? "regular, not consecutive"
                        : (topo->flags & CONVOY_TOPO_CONSECUTIVE) ? "consecutive, not regular"
                                                                  : "irregular";
    if (m->convoy_nodemap)
        snprintf(m->layout, sizeof m->layout, "%s (virtual nodes, CONVOY_NODEMAP)", shape);
    else if (m->convoy_ppn)
        snprintf(m->layout, sizeof m->layout, "%s (virtual nodes, CONVOY_PPN=%.20s)", shape,
                 m->convoy_ppn);
    else
        snprintf(m->layout, sizeof m->layout, "%s (shared-memory nodes%s)", shape,
                 getenv("CONVOY_NODE_OF_HOST") ? ", CONVOY_NODE_OF_HOST" : "");
    /* Oversubscribed: more processes on some real host than it has online cores. The host
     * is the shared-memory communicator, not Convoy's (possibly virtual) node. */
    MPI_Comm host;
    MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    int hrank;
    MPI_Comm_size(host, &m->host_procs);
    MPI_Comm_rank(host, &hrank);
    int mine[2] = {x->rank, 0};
    MPI_Allreduce(&x->rank, &mine[0], 1, MPI_INT, MPI_MIN, host);
    MPI_Comm_free(&host);
    int leader = hrank == 0;
    MPI_Allreduce(&leader, &m->hosts, 1, MPI_INT, MPI_SUM, x->comm);
    m->host_cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CONVOY_SIMGRID
    /* Simulated time: the hosts and their cores are the platform's, not this machine's. */
    m->host_cores = sg_host_core_count(sg_host_self());
#endif
    /* Where the ranks are, for the single-copy bound: each one's host (its lowest rank) and
     * that host's cores. */
    mine[1] = (int)m->host_cores;
    int *where = malloc(2 * (size_t)x->size * sizeof *where);
    m->host_of = malloc((size_t)x->size * sizeof *m->host_of);
    m->cores_of = malloc((size_t)x->size * sizeof *m->cores_of);
    if (!where || !m->host_of || !m->cores_of) {
        fprintf(stderr, "convoy-bench: out of memory\n");
        MPI_Abort(x->comm, 1);
    }
    MPI_Allgather(mine, 2, MPI_INT, where, 2, MPI_INT, x->comm);
    for (int i = 0; i < x->size; i++)
        m->host_of[i] = where[2 * i], m->cores_of[i] = where[2 * i + 1];
    free(where);
    int over = m->host_cores > 0 && m->host_procs > m->host_cores;
    MPI_Allreduce(&over, &m->oversubscribed, 1, MPI_INT, MPI_MAX, x->comm);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

static void meta_free(bench_meta *m)
{
    free(m->host_of);
    free(m->cores_of);
    bench_bound_cfg.host_of = bench_bound_cfg.cores_of = NULL;
}

static int count_cells(const bench_opts *o, const convoy__topo *topo, int size)
{
    int cells = 0;
    for (int ci = 0; ci < o->ncolls; ci++) {
        const bench_coll *coll = bench_coll_find(o->colls[ci]);
        int kc = (int)(coll - bench_colls);
        if (coll->flags & BENCH_NOCOUNT)
            cells += 1;
        else
            cells += ((coll->flags & BENCH_VECTOR) ? o->ndists : 1) * o->ncounts[kc];
    }
    if (o->guidelines) cells += bench_guideline_cells(o, size);
    cells += bench_lane_cells(o, topo->max_ppn);
    return cells;
}

int convoy_bench_main(int argc, char **argv, MPI_Comm comm_in)
{
    bench_opts o;
    bench_ctx x;
    char err[512] = "";
    memset(&x, 0, sizeof x);
    bench_set_first_mismatch(NULL);
    MPI_Comm_rank(comm_in, &x.rank);
    MPI_Comm_size(comm_in, &x.size);
    int prc = bench_parse_args(argc, argv, &o, err, sizeof err);
    if (prc == 0 && !o.list) prc = check_algo_names(&o, err, sizeof err);
    if (prc == 0 && !o.list) prc = check_dist_names(&o, x.size, err, sizeof err);
    if (prc != 0 || o.list) {
        if (x.rank == 0) {
            if (prc < 0) fprintf(stderr, "convoy-bench: %s\n", err);
            if (prc > 0) bench_usage(stdout);
            if (prc == 0) list_algos(stdout);
        }
        bench_opts_free(&o);
        return prc < 0 ? 2 : 0;
    }
    x.o = &o;
    /* A forced algorithm that does not apply to a call must fail the call rather than
     * quietly run Convoy's default choice, which would be timed under the forced name.
     * Convoy honours this setting (see src/api/plan.c); the user may still override it. */
    setenv("CONVOY_ALGO_STRICT", "1", 0);
    /* A private communicator whose errors return, so that an algorithm that does not apply
     * reports an error code instead of aborting the job. */
    MPI_Comm_dup(comm_in, &x.comm);
    MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
    x.t_start = x.t_progress = MPI_Wtime();
    /* The node definition is the library's own (real nodes cut by CONVOY_PPN or
     * CONVOY_NODEMAP), so the lane benchmarks and the metadata agree with the algorithms. */
    const convoy__topo *topo;
    int rc = convoy__comm_topo(x.comm, &topo);
    int fatal = 0;
    if (rc != MPI_SUCCESS) {
        if (x.rank == 0) fprintf(stderr, "convoy-bench: no topology for the communicator\n");
        MPI_Comm_free(&x.comm);
        bench_opts_free(&o);
        return 1;
    }
    x.topo = topo;
    collect_meta(&x, topo);
    /* The copy bandwidth per core for the single-copy bound, with the host's cores copying
     * at once (and rank 0's alone, for the header). */
    double bw_alone, cma;
    const double bw = copy_bandwidth_all(&x, &bw_alone, &cma);
    bench_bound_cfg = (bench_bound){.bw = bw,
                                    .bw_alone = bw_alone,
                                    .cma = cma,
                                    .procs = x.meta.host_procs,
                                    .cores = (int)x.meta.host_cores,
                                    .root = o.root,
                                    .host_of = x.meta.host_of,
                                    .cores_of = x.meta.cores_of,
                                    .overhead = o.overhead};
    bench_sync_init(&x);

    if (x.rank == 0 && o.csv) {
        if (!(x.csv = fopen(o.csv, "w"))) {
            perror(o.csv);
            fatal = 1;
        } else {
            bench_csv_head(x.csv);
        }
    }
    if (x.rank == 0 && o.json && !fatal) {
        if (!(x.json = fopen(o.json, "w"))) {
            perror(o.json);
            fatal = 1;
        } else {
            bench_json_begin(x.json, &x.meta, &o);
        }
    }
    MPI_Bcast(&fatal, 1, MPI_INT, 0, x.comm);
    if (fatal) {
        if (x.csv) fclose(x.csv);
        if (x.json) fclose(x.json);
        meta_free(&x.meta);
        MPI_Comm_free(&x.comm);
        bench_opts_free(&o);
        return 2;
    }
    x.cells = count_cells(&o, topo, x.size);
    if (x.rank == 0 && !o.quiet) bench_print_header(stdout, &x.meta, &o);

    for (int ci = 0; ci < o.ncolls; ci++) {
        const bench_coll *coll = bench_coll_find(o.colls[ci]);
        char **algos = NULL;
        int nalgos = 0;
        if (resolve_algos(&o, coll, &algos, &nalgos)) bench_out_of_memory(&x);
        if (nalgos == 0) {
            free(algos);
            continue;
        }
        if (x.rank == 0 && !o.quiet) {
            char title[128];
            if (coll->flags & BENCH_REDUCES)
                snprintf(title, sizeof title, "%s (%s, %s)", coll->name, bench_type_names[o.type],
                         bench_op_names[o.op]);
            else if (coll->flags & BENCH_NOCOUNT)
                snprintf(title, sizeof title, "%s", coll->name);
            else
                snprintf(title, sizeof title, "%s (%s)", coll->name, bench_type_names[o.type]);
            bench_print_table_head(stdout, title, algos, nalgos);
        }
        int ndist = (coll->flags & BENCH_VECTOR) ? o.ndists : 1, kc = (int)(coll - bench_colls);
        int ncount = (coll->flags & BENCH_NOCOUNT) ? 1 : o.ncounts[kc];
        for (int di = 0; di < ndist; di++)
            for (int k = 0; k < ncount; k++)
                run_cell(&x, coll, (coll->flags & BENCH_VECTOR) ? o.dists[di] : "-",
                         (coll->flags & BENCH_NOCOUNT) ? 0 : o.counts[kc][k], algos, nalgos);
        free(algos);
    }
    if (o.guidelines) bench_run_guidelines(&x);
    if (o.lane_pattern || o.lane_multi) bench_run_lanes(&x);

    double secs = MPI_Wtime() - x.t_start;
    if (x.rank == 0) {
        bench_progress_clear(&x);
        if (x.csv) fclose(x.csv);
        if (x.json) bench_json_end(&x, secs);
        if (!o.quiet) {
            if (o.guidelines) bench_print_guideline_summary(stdout, &x);
            printf("\n# %d cells in %.1f s; %s", x.cells_done, secs,
                   x.failures ? "" : "every result matched native\n");
            if (x.failures) printf("%d MISMATCHES OR FAILURES (see stderr)\n", x.failures);
            if (x.win_total)
                printf("# window starts: %lld of %lld timed repetitions valid (%.1f%%)\n",
                       (long long)x.win_valid, (long long)x.win_total,
                       x.win_total ? 100.0 * (double)x.win_valid / (double)x.win_total : 0.0);
            if (o.csv) printf("# CSV: %s\n", o.csv);
            if (o.json) printf("# JSON: %s\n", o.json);
            fflush(stdout);
        }
    }
    /* Rank 0 counted the failures it judged; every rank returns the same status. */
    MPI_Bcast(&x.failures, 1, MPI_INT, 0, x.comm);
    rc = x.failures ? 1 : 0;
    free(x.verdicts);
    meta_free(&x.meta);
    MPI_Comm_free(&x.comm);
    bench_opts_free(&o);
    return rc;
}
