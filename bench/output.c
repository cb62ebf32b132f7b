/*
 * Output of convoy-bench: the header with the run's metadata, the OSU-like terminal table
 * (one row per cell, one column per variant) and the CSV (one row per variant per cell).
 * Rows are written as cells finish, so a long run shows results as it goes and a run that
 * dies midway still leaves its CSV. JSON is in json.c.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

#include "bound.h"
#include "parse.h"

/* Where the single-copy bound's bandwidth comes from (bench_copy_bandwidth). */
#ifdef CONVOY_SIMGRID
static const char bw_source[] = "the platform's CONVOY_SIM_COPY_BW, in simulated time";
#else
static const char bw_source[] = "memcpy with that many cores copying at once, measured at "
                                "start; before each cell of 1 MiB or more again, the faster "
                                "kept";
#endif

void bench_print_header(FILE *f, const bench_meta *m, const bench_opts *o)
{
    fprintf(f, "# convoy-bench: Convoy's algorithms and the MPI library's own collectives, "
               "side by side\n");
    fprintf(f, "# MPI: %s (MPI %d.%d)\n", m->mpi_version, m->mpi_major, m->mpi_minor);
    fprintf(f, "# np %d, %d node%s, ppn %d, layout %s", m->np, m->nodes, m->nodes == 1 ? "" : "s",
            m->ppn, m->layout);
    fprintf(f, "; %s (%d processes on %ld cores on rank 0's host, %d host%s)\n",
            m->oversubscribed ? "OVERSUBSCRIBED" : "not oversubscribed", m->host_procs,
            m->host_cores, m->hosts, m->hosts == 1 ? "" : "s");
    fprintf(f,
            "# type %s, op %s%s, root %s; reps <= %lld, warm-up %lld, time cap %g s per cell%s,"
            " stop when the 95%% CI of the median is within +-%g%% (after %lld reps)\n",
            bench_type_names[o->type], bench_op_names[o->op], o->inplace ? ", in place" : "",
            o->root < 0 ? "rotating" : "fixed", (long long)o->reps, (long long)o->warmup,
            o->time_cap, o->budget > 0 ? " (less to fit --budget)" : "", o->rel * 100.0,
            (long long)o->min_reps);
    fprintf(f, "# start of a repetition: %s; validation against native: %s\n",
            o->sync == BS_WINDOW ? "window (clock offsets to rank 0, agreed start times)"
            : o->sync == BS_AUTO
                ? "barrier, rooted collectives window (clock offsets to rank 0, agreed start "
                  "times: after a barrier a root's messages may go before the others' clocks "
                  "start, or theirs before the root's)"
                : "barrier",
            o->check ? "on" : "OFF (--no-check)");
    fprintf(f, "# date %s\n", m->date);
    if (bench_bound_cfg.bw > 0)
        fprintf(f,
                "# single-copy bound: what the processes must receive from others, the "
                "neediest's bytes at one core's copy bandwidth or a host's processes' together "
                "at %d processes per host on %d core%s (whichever takes longer), at %.2f GB/s "
                "per core (%s; one core alone: %.2f GB/s); '# ...' lines give it and each "
                "variant's ratio to it\n",
                bench_bound_cfg.procs,
                bench_bound_cfg.procs < bench_bound_cfg.cores ? bench_bound_cfg.procs
                                                              : bench_bound_cfg.cores,
                (bench_bound_cfg.procs < bench_bound_cfg.cores ? bench_bound_cfg.procs
                                                               : bench_bound_cfg.cores) == 1
                    ? ""
                    : "s",
                bench_bound_cfg.bw / 1e9, bw_source, bench_bound_cfg.bw_alone / 1e9);
#ifndef CONVOY_SIMGRID
    if (bench_bound_cfg.bw > 0 && bench_bound_cfg.cma <= 0)
        fprintf(f, "# cross-memory read (process_vm_readv): not permitted here, so large data "
                   "between processes goes through shared memory, copied twice\n");
    else if (bench_bound_cfg.bw > 0)
        fprintf(f,
                "# cross-memory read (process_vm_readv: between private buffers the one copy, "
                "where shared memory takes two) at %.2f GB/s per core with as many cores "
                "reading at once (measured with the memcpy rate at start): a single copy "
                "between processes takes %.2fx the bound's time\n",
                bench_bound_cfg.cma / 1e9, bench_bound_cfg.bw / bench_bound_cfg.cma);
#endif
    fprintf(f,
            "# time: the slowest rank's time for one call, median over repetitions, in us;"
            " (r) = time / native time, below 1 is faster than native;\n"
            "#       ~ = the median's 95%% CI is wider than +-%g%% (stopped by the time cap "
            "or --reps); reps = valid/total repetitions (fewest of the row)\n",
            o->rel * 100.0);
}

/* Width of a variant's column: room for "123456.78~ (12.34)". */
static int col_width(const char *algo)
{
    int w = (int)strlen(algo) + 2;
    return w < 20 ? 20 : w;
}

void bench_print_table_head(FILE *f, const char *title, char **algos, int nalgos)
{
    fprintf(f, "\n# %s\n", title);
    fprintf(f, "# %-11s %10s %12s", "dist", "count", "bytes");
    for (int i = 0; i < nalgos; i++)
        fprintf(f, "%*s", col_width(algos[i]), algos[i]);
    fprintf(f, "%12s  %s\n", "reps", "default choice");
    fflush(f);
}

bench_bound bench_bound_cfg;

/* The cell's single-copy bound and every variant's ratio to it; with --overhead, each
 * variant's time over native. One comment line under the row. */
static void print_bound(FILE *f, const bench_row_ctx *rc, const bench_cell *c,
                        const bench_result *r, int nr, double native)
{
    const bench_bound *b = &bench_bound_cfg;
    if (strcmp(rc->kind, "coll") != 0) return;
    const double bound = b->host_of
                             ? bench_bound_time(rc->name, c->size, c->tsize, c->count, c->rcounts,
                                                b->root, b->host_of, b->cores_of, b->bw)
                             : 0;
    if (bound <= 0 && !b->overhead) return;
    fprintf(f, "  #");
    if (bound > 0) fprintf(f, " single-copy bound %.3g us:", bound * 1e6);
    for (int i = 0, shown = 0; i < nr; i++) {
        const bench_result *x = &r[i];
        if (!x->applicable || !x->valid || x->s.n == 0) continue;
        fprintf(f, "%s %s", shown++ ? "," : "", x->algo);
        if (bound > 0) fprintf(f, " %.2fx", x->s.median / bound);
        if (b->overhead && !isnan(native) && strcmp(x->algo, "native") != 0)
            fprintf(f, " %+.2f us", (x->s.median - native) * 1e6);
    }
    if (bound > 0) fprintf(f, " (at %.2f GB/s per core)", b->bw / 1e9);
    fprintf(f, "\n");
}

void bench_print_table_row(FILE *f, const bench_row_ctx *rc, const bench_cell *c,
                           const bench_result *r, int nr)
{
    char cnt[32];
    bench_format_count(c->count, cnt, sizeof cnt);
    fprintf(f, "  %-11s %10s %12lld", rc->vector ? c->dist : "-", cnt, (long long)c->bytes);
    double native = NAN;
    for (int i = 0; i < nr; i++)
        if (strcmp(r[i].algo, "native") == 0 && r[i].applicable && r[i].s.n > 0)
            native = r[i].s.median;
    int64_t vmin = -1, tmin = 0;
    for (int i = 0; i < nr; i++) {
        char cell[64];
        const bench_result *x = &r[i];
        if (!x->applicable) {
            snprintf(cell, sizeof cell, "n/a");
        } else if (!x->valid) {
            snprintf(cell, sizeof cell, "MISMATCH");
        } else if (x->s.n == 0) {
            snprintf(cell, sizeof cell, "-");
        } else {
            double us = x->s.median * 1e6;
            const char *mark = x->s.ci_ok ? "" : "~";
            if (!isnan(native) && strcmp(x->algo, "native") != 0 && native > 0)
                snprintf(cell, sizeof cell, "%.2f%s (%.2f)", us, mark, x->s.median / native);
            else
                snprintf(cell, sizeof cell, "%.2f%s", us, mark);
        }
        if (x->applicable && (vmin < 0 || x->s.n < vmin)) {
            vmin = x->s.n;
            tmin = x->total;
        }
        fprintf(f, "%*s", col_width(x->algo), cell);
    }
    char reps[48] = "-";
    if (vmin >= 0) snprintf(reps, sizeof reps, "%lld/%lld", (long long)vmin, (long long)tmin);
    /* The default's choice, and whether it was the fastest measured variant. */
    const char *fastest = NULL;
    double tf = 0;
    for (int i = 0; i < nr; i++)
        if (r[i].applicable && r[i].valid && r[i].s.n > 0 && (!fastest || r[i].s.median < tf))
            fastest = r[i].algo, tf = r[i].s.median;
    if (rc->pick && fastest)
        fprintf(f, "%12s  %s%s%s\n", reps, rc->pick,
                strcmp(rc->pick, fastest) == 0 ? " (fastest)" : ", fastest: ",
                strcmp(rc->pick, fastest) == 0 ? "" : fastest);
    else
        fprintf(f, "%12s\n", reps);
    print_bound(f, rc, c, r, nr, native);
    fflush(f);
}

void bench_csv_head(FILE *f)
{
    /* The columns the issue fixes come first, in its order; the extras after them. */
    fprintf(f, "coll,algo,dist,count,bytes,np,nodes,ppn,median_us,min_us,max_us,reps,valid,"
               "type,op,inplace,ci_lo_us,ci_hi_us,stop,oversubscribed,mpi,reps_total,sync,root,"
               "kind\n");
    fflush(f);
}

/* A time in microseconds, or an empty field when unknown. */
static void csv_time(FILE *f, double seconds)
{
    if (isnan(seconds))
        fprintf(f, ",");
    else
        fprintf(f, ",%.3f", seconds * 1e6);
}

void bench_csv_rows(FILE *f, const bench_meta *m, const bench_opts *o, const bench_row_ctx *rc,
                    const bench_cell *c, const bench_result *r, int nr)
{
    /* The MPI version string may contain commas; keep the part before the first one. */
    char mpi[sizeof m->mpi_version];
    snprintf(mpi, sizeof mpi, "%s", m->mpi_version);
    mpi[strcspn(mpi, ",\"")] = '\0';
    char root[16] = "-";
    if (rc->rooted) {
        if (o->root < 0)
            snprintf(root, sizeof root, "rotate");
        else
            snprintf(root, sizeof root, "%d", o->root % m->np);
    }
    for (int i = 0; i < nr; i++) {
        const bench_result *x = &r[i];
        /* A variant that does not apply was not measured: no row. */
        if (!x->applicable) continue;
        fprintf(f, "%s,%s,%s,%lld,%lld,%d,%d,%d", rc->name, x->algo, rc->vector ? c->dist : "-",
                (long long)c->count, (long long)c->bytes, m->np, m->nodes, m->ppn);
        csv_time(f, x->s.median);
        csv_time(f, x->s.min);
        csv_time(f, x->s.max);
        fprintf(f, ",%lld,%d,%s,%s,%d", (long long)x->s.n, x->valid, bench_type_names[c->type],
                rc->reduces ? bench_op_names[c->op] : "-", c->inplace);
        csv_time(f, x->s.ci_lo);
        csv_time(f, x->s.ci_hi);
        fprintf(f, ",%s,%d,%s,%lld,%s,%s,%s\n", x->stop ? x->stop : "", m->oversubscribed, mpi,
                (long long)x->total, bench_sync_name(o, rc->rooted), root, rc->kind);
    }
    fflush(f);
}
