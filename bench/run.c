/*
 * The runner: one cell's variants (a collective's algorithms and native, a guideline's
 * two sides, a lane benchmark's lane counts) validated and timed side by side.
 *
 *  1. validation: the reference once (native), then every variant once on a poisoned
 *     receive buffer; the part of the buffer that is each rank's result is compared byte
 *     for byte on every rank, and rank 0 gives the verdict to all;
 *  2. warm-up and timed repetitions interleaved across variants, in a new random order
 *     each round (shuffle), so that drift in the machine's state hits all of them alike
 *     and no variant always runs first after the bookkeeping collectives or right after
 *     the same other one; rooted collectives rotate the root with the repetition; each
 *     timed call follows an untimed one of its variant (part of its preparation), so it
 *     is a repeated call with what it touches in the caches, whoever ran before it (not
 *     in a simulation: no caches there);
 *  3. each repetition starts synchronised (sync.c): after a barrier, or at an agreed time
 *     on offset-corrected clocks (a rank that arrives after that time makes the repetition
 *     invalid; by default rooted collectives, --sync auto); its time is the slowest
 *     rank's completion time, reduced to rank 0 after the round (outside the timed region);
 *  4. rank 0 decides when the cell stops (--reps valid repetitions, the cell's time cap, or,
 *     after --min-reps, every variant's median known within +-precision at 95%) and
 *     broadcasts it, so ranks never disagree on how many calls follow and never hang. All
 *     variants of a cell stop together, so all get the same number of repetitions.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"

static char first_mismatch[1024];

const char *convoy_bench_first_mismatch(void)
{
    return first_mismatch;
}

void bench_set_first_mismatch(const char *msg)
{
    if (!msg)
        first_mismatch[0] = '\0';
    else if (!first_mismatch[0])
        snprintf(first_mismatch, sizeof first_mismatch, "%s", msg);
}

/* Running out of memory on one rank would leave the others waiting in a collective: the
 * whole job ends instead. */
void bench_out_of_memory(bench_ctx *x)
{
    fprintf(stderr, "convoy-bench: out of memory on rank %d\n", x->rank);
    MPI_Abort(x->comm, 1);
}

void bench_progress_clear(bench_ctx *x)
{
    if (x->progress_shown) {
        fprintf(stderr, "\r\033[K");
        x->progress_shown = 0;
    }
}

/* A progress line on stderr: rewritten in place on a terminal, else one line every
 * progress_every seconds (mpiexec usually hands the processes pipes, not a terminal). */
void bench_progress(bench_ctx *x, const char *what, const bench_cell *c, const char *state)
{
    if (x->rank != 0 || x->o->quiet) return;
    double now = MPI_Wtime();
    int tty = isatty(2);
    if (!tty && x->o->progress_every <= 0) return;
    if (now - x->t_progress < (tty ? 0.25 : x->o->progress_every)) return;
    x->t_progress = now;
    char cnt[32];
    bench_format_count(c->count, cnt, sizeof cnt);
    fprintf(stderr, "%sconvoy-bench: cell %d/%d %s %s count %s: %s (%.0f s)%s",
            tty ? "\r\033[K" : "", x->cells_done + 1, x->cells, what, c->dist, cnt, state,
            now - x->t_start, tty ? "" : "\n");
    x->progress_shown = tty;
    fflush(stderr);
}

double bench_cell_cap(const bench_ctx *x)
{
    double cap = x->o->time_cap;
    if (x->o->budget > 0) {
        int left = x->cells - x->cells_done;
        double rest = x->o->budget - (MPI_Wtime() - x->t_start);
        double share = rest / (left > 0 ? left : 1);
        if (share < cap) cap = share < 0.05 ? 0.05 : share;
    }
    return cap;
}

/* What one rank saw in one validation call, gathered to rank 0. */
typedef struct check_info {
    int err_class; /* MPI error class of the call, MPI_SUCCESS when it worked */
    int pad;
    int64_t first_diff; /* first element differing from the reference, or -1 */
    char got[40], want[40];
} check_info;

static void report_mismatch(bench_job *j, const char *algo, const check_info *info)
{
    bench_ctx *x = j->x;
    const bench_cell *c = j->cell;
    int nbad = 0, first = -1;
    for (int r = 0; r < x->size; r++)
        if (info[r].first_diff >= 0 && nbad++ == 0) first = r;
    char cnt[32];
    bench_format_count(c->count, cnt, sizeof cnt);
    char msg[1024];
    snprintf(msg, sizeof msg,
             "convoy-bench: MISMATCH %s algorithm '%s' (dist %s, count %s, %s, %s): rank %d "
             "differs from native first at element %lld (got %s, expected %s); %d of %d "
             "ranks differ",
             j->what, algo, c->dist, cnt, bench_type_names[c->type], bench_op_names[c->op], first,
             (long long)info[first].first_diff, info[first].got, info[first].want, nbad, x->size);
    bench_progress_clear(x);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    bench_set_first_mismatch(msg);
}

static void set_root(bench_job *j, int64_t round)
{
    if (!j->rooted) return;
    const bench_opts *o = j->x->o;
    j->cell->root = o->root < 0 ? (int)(round % j->cell->size) : o->root % j->cell->size;
}

/*
 * Step 1: one call per variant, compared with the reference's result. Sets applicable and
 * valid of every result, the same on every rank. Returns 0, or -1 when the reference
 * itself failed.
 */
static int validate(bench_job *j, bench_result *res)
{
    bench_ctx *x = j->x;
    bench_cell *c = j->cell;
    const bench_opts *o = x->o;
    size_t bytes = (size_t)(c->recv_elems * c->tsize);
    check_info mine, *all = NULL;
    if (x->rank == 0 && !(all = malloc((size_t)x->size * sizeof *all))) bench_out_of_memory(x);
    int have_ref = 0, rc = 0;
    set_root(j, 0);
    /* The reference first, into a poisoned buffer so that a variant that leaves parts of
     * the buffer untouched cannot pass by inheriting the reference's result. */
    for (int pass = o->check && j->has_ref ? -1 : 0; pass < j->nvar; pass++) {
        const char *algo = pass < 0 ? "native" : j->names[pass];
        if (pass >= 0 && have_ref && pass == j->ref_variant) {
            res[pass].applicable = res[pass].valid = 1;
            continue;
        }
        memset(c->recvbuf, 0xA5, bytes);
        j->prepare(j, pass);
        int err = j->call(j, pass);
        memset(&mine, 0, sizeof mine);
        mine.first_diff = -1;
        if (err != MPI_SUCCESS) {
            MPI_Error_class(err, &mine.err_class);
            if (mine.err_class == MPI_SUCCESS) mine.err_class = MPI_ERR_OTHER;
        }
        char *res_buf = c->recvbuf + c->res_off * c->tsize;
        if (pass >= 0 && o->inject_algo && !strcmp(o->inject_algo, algo) &&
            x->rank == (o->inject_rank < 0 ? x->size - 1 : o->inject_rank) && c->res_elems > 0) {
            int64_t i = c->res_elems / 2;
            res_buf[i * c->tsize] ^= 1;
            fprintf(stderr,
                    "convoy-bench: --inject-error: corrupted element %lld of %s's "
                    "result on rank %d\n",
                    (long long)i, algo, x->rank);
        }
        char *exp_buf = c->expected + c->res_off * c->tsize;
        size_t res_bytes = (size_t)(c->res_elems * c->tsize);
        if (pass < 0) {
            memcpy(exp_buf, res_buf, res_bytes);
        } else if (have_ref && err == MPI_SUCCESS && memcmp(res_buf, exp_buf, res_bytes)) {
            int64_t i = 0;
            while (memcmp(res_buf + i * c->tsize, exp_buf + i * c->tsize, (size_t)c->tsize) == 0)
                i++;
            mine.first_diff = i;
            bench_format_elem(c, res_buf, i, mine.got, sizeof mine.got);
            bench_format_elem(c, exp_buf, i, mine.want, sizeof mine.want);
        }
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, x->comm);
        /* Rank 0 judges and tells everyone, so all ranks time the same variants. */
        int verdict[2] = {1, 1}; /* applicable, valid */
        if (x->rank == 0) {
            int nerr = 0, nbad = 0, cls = MPI_SUCCESS;
            for (int r = 0; r < x->size; r++) {
                if (all[r].err_class != MPI_SUCCESS && nerr++ == 0) cls = all[r].err_class;
                nbad += all[r].first_diff >= 0;
            }
            if (nerr) {
                char es[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(cls, es, &len);
                bench_progress_clear(x);
                /* A forced Convoy algorithm that does not apply to this communicator or
                 * count answers MPI_ERR_ARG (CONVOY_ALGO_STRICT, which convoy-bench sets). */
                const int forced = strcmp(algo, "native") != 0 && strcmp(algo, "auto") != 0;
                if (forced && cls == MPI_ERR_ARG && nerr == x->size)
                    fprintf(stderr,
                            "convoy-bench: %s '%s' (dist %s, count %lld) does not apply here "
                            "(MPI_ERR_ARG under CONVOY_ALGO_STRICT); n/a\n",
                            j->what, algo, c->dist, (long long)c->count);
                else
                    fprintf(stderr,
                            "convoy-bench: %s '%s' (dist %s, count %lld) returned an error "
                            "on %d of %d ranks: %s%s\n",
                            j->what, algo, c->dist, (long long)c->count, nerr, x->size, es,
                            pass < 0 ? "" : "; not measured");
                verdict[0] = verdict[1] = 0;
            } else if (nbad) {
                report_mismatch(j, algo, all);
                verdict[1] = 0;
            }
        }
        MPI_Bcast(verdict, 2, MPI_INT, 0, x->comm);
        if (pass < 0) {
            if (!verdict[0]) {
                rc = -1;
                break;
            }
            have_ref = 1;
        } else {
            res[pass].applicable = verdict[0];
            res[pass].valid = verdict[0] && verdict[1];
            if (verdict[0] && !verdict[1]) x->failures++;
        }
    }
    free(all);
    return rc;
}

enum { F_TIME, F_ERR, F_LATE, F_PREP, NF }; /* per variant and rank, reduced with MAX */

/* A round's order of the variants: a permutation drawn from the round number alone (the
 * same on every rank), so that each variant runs after each other one, and first after the
 * bookkeeping, equally often on average. A call leaves the processes in a state the next
 * one inherits (who is scheduled, whose messages are in flight), which matters most where
 * processes share cores: with a rotation (A B C, B C A, C A B) a variant always follows
 * the same one, and at np 4 on 2 cores Alltoall `linear` took 1.43 of native following
 * native (native following bruck), against 0.98-1.02 with the two alone. */
static void shuffle(int *v, int n, int64_t round)
{
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(round + 1);
    for (int k = n - 1; k > 0; k--) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27; /* xorshift64* */
        const int r = (int)((x * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)(k + 1));
        const int t = v[k];
        v[k] = v[r];
        v[r] = t;
    }
}

/* Steps 2-4. Samples and summaries live on rank 0. */
static void measure(bench_job *j, bench_result *res, double t_cell)
{
    bench_ctx *x = j->x;
    const bench_opts *o = x->o;
    bench_cell *c = j->cell;
    int nv = j->nvar, window = bench_windowed(o, j->rooted);
    int *order = calloc((size_t)nv, sizeof *order);
    double *local = calloc((size_t)nv * NF, sizeof *local);
    double *slowest = calloc((size_t)nv * NF, sizeof *slowest);
    /* Rank 0 to all after every round: active flags, the next round's start, windows. */
    double *msg = calloc((size_t)(2 * nv + 1), sizeof *msg);
    bench_samples *smp = calloc((size_t)nv, sizeof *smp);
    if (!order || !local || !slowest || !msg || !smp) bench_out_of_memory(x);
    double *active = msg, *t_round = msg + nv, *win = msg + nv + 1;
    int64_t next_check = 0;
    /* In window mode the first round starts with a barrier: its times size the windows. */
    int64_t warmup = window && o->warmup < 1 ? 1 : o->warmup;
    int warming = 1;
    double cap = bench_cell_cap(x);
    j->timing = 1;
    for (int i = 0; i < nv; i++)
        active[i] = res[i].applicable;
    for (int64_t round = 0;; round++) {
        int nact = 0;
        for (int i = 0; i < nv; i++)
            if (active[i] != 0) order[nact++] = i;
        if (nact == 0) break;
        memset(local, 0, (size_t)nv * NF * sizeof *local);
        set_root(j, round);
        shuffle(order, nact, round);
        double start = *t_round;
        for (int k = 0; k < nact; k++) {
            int i = order[k];
            double tp = MPI_Wtime();
            j->prepare(j, i);
            /* The timed call repeats an untimed one of its variant, as a program's loop
             * repeats its call. Timed right after other variants (before stop 21), the
             * MPI library's np 2 Allreduce of 1 int ran from caches they had filled (Convoy's
             * default 0.67-0.75 of it, against 0.72-0.85 with both warm; three interleaved
             * runs) and Convoy's Barrier right after the full-path call that a change of
             * settings makes (bench.c), while the library's was warmed by the synchronising
             * barrier (0.78-0.80 of it, against 0.70-0.74). A simulated cluster has no
             * caches: there the call would only cost simulation time. */
#ifndef CONVOY_SIMGRID
            j->call(j, i);
            j->prepare(j, i);
#endif
            local[NF * i + F_PREP] = MPI_Wtime() - tp;
            double t0, t1;
            int err;
            if (window && round > 0) {
                local[NF * i + F_LATE] = bench_wait_until(x, start);
                t0 = start;
                err = j->call(j, i);
                t1 = bench_gtime(x);
                start += win[i];
            } else {
                PMPI_Barrier(x->comm);
                t0 = MPI_Wtime();
                err = j->call(j, i);
                t1 = MPI_Wtime();
            }
            local[NF * i + F_TIME] = t1 - t0;
            local[NF * i + F_ERR] = err != MPI_SUCCESS;
        }
        PMPI_Reduce(local, slowest, NF * nv, MPI_DOUBLE, MPI_MAX, 0, x->comm);
        if (x->rank == 0) {
            /* Warm-up ends after --warmup rounds, or early when it has used half the time
             * cap (a cell of very slow calls still gets timed repetitions). Only rank 0
             * needs to know: the other ranks run the same rounds either way. */
            if (warming && (round >= warmup || MPI_Wtime() - t_cell > cap / 2) &&
                (round >= 1 || !window))
                warming = 0;
            int warm = warming, nlive = 0;
            int64_t nmin = INT64_MAX;
            double maxprep = 0;
            for (int k = 0; k < nact; k++) {
                int i = order[k];
                if (slowest[NF * i + F_PREP] > maxprep) maxprep = slowest[NF * i + F_PREP];
                if (slowest[NF * i + F_ERR] != 0) {
                    bench_progress_clear(x);
                    fprintf(stderr,
                            "convoy-bench: %s '%s' (dist %s, count %lld) failed in "
                            "round %lld; dropped\n",
                            j->what, j->names[i], c->dist, (long long)c->count, (long long)round);
                    res[i].applicable = 0;
                    active[i] = 0;
                    x->failures++;
                    continue;
                }
                nlive++;
                if (warm) continue;
                res[i].total++;
                int late = slowest[NF * i + F_LATE] != 0;
                if (window) {
                    x->win_total++;
                    x->win_valid += !late;
                }
                /* A variant that has its --reps valid samples keeps running (until all
                 * have theirs, so the interleaving stays) but adds no more. */
                if (!late && smp[i].n < o->reps &&
                    bench_samples_add(&smp[i], slowest[NF * i + F_TIME]))
                    bench_out_of_memory(x);
                if (smp[i].n < nmin) nmin = smp[i].n;
            }
            /* The cell stops for all variants at once: one that stopped early would leave
             * the others running alone, and drift would no longer hit all alike. */
            const char *stop = NULL;
            if (!warm && nlive) {
                if (nmin >= o->reps) {
                    stop = "reps";
                } else if (MPI_Wtime() - t_cell > cap) {
                    stop = "time";
                } else if (nmin >= o->min_reps && nmin >= next_check) {
                    /* Checking sorts the samples: every round while they are few, then
                     * every n/32 rounds, which bounds the sorting to O(n log n). */
                    next_check = nmin < 64 ? nmin + 1 : nmin + nmin / 32;
                    int conv = 1;
                    for (int i = 0; i < nv && conv; i++)
                        if (active[i] != 0)
                            conv = bench_converged(smp[i].v, smp[i].n, o->min_reps, o->rel);
                    if (conv) stop = "ci";
                }
            }
            if (stop)
                for (int i = 0; i < nv; i++)
                    if (active[i] != 0) {
                        res[i].stop = stop;
                        active[i] = 0;
                    }
            if (window) {
                /* Each window holds the call at twice its last slowest time, the next
                 * variant's preparation, and some slack; the round starts a lead ahead. */
                for (int i = 0; i < nv; i++)
                    win[i] = 2.0 * slowest[NF * i + F_TIME] + 2.0 * maxprep + 20e-6;
                *t_round = bench_gtime(x) + x->clk.lead + maxprep;
            }
            bench_progress(x, j->what, c, warm ? "warm-up" : "timing");
        }
        PMPI_Bcast(msg, 2 * nv + 1, MPI_DOUBLE, 0, x->comm);
    }
    j->timing = 0;
    if (x->rank == 0)
        for (int i = 0; i < nv; i++)
            bench_summarize(smp[i].v, smp[i].n, o->rel, &res[i].s);
    for (int i = 0; i < nv; i++)
        bench_samples_free(&smp[i]);
    free(smp);
    free(order);
    free(local);
    free(slowest);
    free(msg);
}

void bench_run_job(bench_job *j, bench_result *res, double t_cell)
{
    bench_ctx *x = j->x;
    for (int i = 0; i < j->nvar; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].algo = j->names[i];
        res[i].applicable = res[i].valid = 1;
        bench_summarize(NULL, 0, x->o->rel, &res[i].s);
    }
    bench_progress(x, j->what, j->cell, "validating");
    if (validate(j, res) == 0) {
        measure(j, res, t_cell);
    } else {
        /* Without a reference nothing is comparable; count it once and move on. */
        x->failures++;
        for (int i = 0; i < j->nvar; i++)
            res[i].applicable = 0;
    }
}
