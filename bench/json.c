/*
 * JSON output of convoy-bench (--json FILE), for tools that want more than the CSV:
 *
 *   { "meta":    { MPI library and version, np, nodes, ppn, layout, oversubscribed, hosts,
 *                  cores, date, command line, options },
 *     "results": [ one object per variant per cell: the CSV's fields, numbers as numbers,
 *                  unknown times as null ],
 *     "guidelines": [ one object per guideline comparison: library, count, times, factor,
 *                     violated, significant ],
 *     "summary": { seconds, cells, failures, window valid/total } }
 *
 * Results are streamed as cells finish; the file is complete (valid JSON) once the run
 * ends.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

void bench_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

static void us(FILE *f, double seconds)
{
    if (isnan(seconds))
        fputs("null", f);
    else
        fprintf(f, "%.3f", seconds * 1e6);
}

static void key(FILE *f, const char *k, const char *s)
{
    bench_json_string(f, k);
    fputs(": ", f);
    bench_json_string(f, s);
}

void bench_json_begin(FILE *f, const bench_meta *m, const bench_opts *o)
{
    fputs("{\n  \"meta\": {\n    ", f);
    key(f, "tool", "convoy-bench");
    fputs(",\n    ", f);
    key(f, "mpi_library", m->mpi_version);
    fputs(",\n    ", f);
    key(f, "mpi_library_full", m->mpi_full);
    fprintf(f, ",\n    \"mpi_standard\": \"%d.%d\"", m->mpi_major, m->mpi_minor);
    fprintf(f, ",\n    \"processes\": %d,\n    \"nodes\": %d,\n    \"ppn\": %d", m->np, m->nodes,
            m->ppn);
    fputs(",\n    ", f);
    key(f, "layout", m->layout);
    fputs(",\n    \"convoy_ppn\": ", f);
    if (m->convoy_ppn)
        bench_json_string(f, m->convoy_ppn);
    else
        fputs("null", f);
    fputs(",\n    \"convoy_nodemap\": ", f);
    if (m->convoy_nodemap)
        bench_json_string(f, m->convoy_nodemap);
    else
        fputs("null", f);
    fprintf(f,
            ",\n    \"oversubscribed\": %s,\n    \"hosts\": %d,\n    \"host_processes\": %d"
            ",\n    \"host_cores\": %ld",
            m->oversubscribed ? "true" : "false", m->hosts, m->host_procs, m->host_cores);
    fputs(",\n    ", f);
    key(f, "date", m->date);
    fputs(",\n    ", f);
    key(f, "command", o->cmdline);
    fputs(",\n    \"options\": {", f);
    fprintf(f, "\"type\": \"%s\", \"op\": \"%s\", \"inplace\": %s, ", bench_type_names[o->type],
            bench_op_names[o->op], o->inplace ? "true" : "false");
    fprintf(f, "\"root\": ");
    if (o->root < 0)
        fputs("\"rotate\"", f);
    else
        fprintf(f, "%d", o->root);
    fprintf(f, ", \"sync\": \"%s\", \"reps\": %lld, \"min_reps\": %lld, \"warmup\": %lld, ",
            o->sync == BS_WINDOW ? "window"
            : o->sync == BS_AUTO ? "auto"
                                 : "barrier",
            (long long)o->reps, (long long)o->min_reps, (long long)o->warmup);
    fputs("\"time_cap_s\": ", f);
    num(f, o->time_cap);
    fputs(", \"budget_s\": ", f);
    num(f, o->budget);
    fputs(", \"precision\": ", f);
    num(f, o->rel);
    fprintf(f,
            ", \"check\": %s, \"guidelines\": %s, \"guideline_tol\": ", o->check ? "true" : "false",
            o->guidelines ? "true" : "false");
    num(f, o->gl_tol);
    fputs(", \"collectives\": [", f);
    for (int i = 0; i < o->ncolls; i++) {
        if (i) fputs(", ", f);
        bench_json_string(f, o->colls[i]);
    }
    fputs("], \"distributions\": [", f);
    for (int i = 0; i < o->ndists; i++) {
        if (i) fputs(", ", f);
        bench_json_string(f, o->dists[i]);
    }
    fputs("]}\n  },\n  \"results\": [", f);
    fflush(f);
}

void bench_json_rows(bench_ctx *x, const bench_row_ctx *rc, const bench_cell *c,
                     const bench_result *r, int nr)
{
    FILE *f = x->json;
    const bench_opts *o = x->o;
    for (int i = 0; i < nr; i++) {
        const bench_result *v = &r[i];
        if (!v->applicable) continue;
        fputs(x->json_rows++ ? ",\n    {" : "\n    {", f);
        key(f, "kind", rc->kind);
        fputs(", ", f);
        key(f, "coll", rc->name);
        fputs(", ", f);
        key(f, "algo", v->algo);
        fputs(", ", f);
        key(f, "dist", rc->vector ? c->dist : "-");
        fprintf(f, ", \"count\": %lld, \"bytes\": %lld, \"np\": %d, \"nodes\": %d, \"ppn\": %d",
                (long long)c->count, (long long)c->bytes, x->meta.np, x->meta.nodes, x->meta.ppn);
        fputs(", \"median_us\": ", f);
        us(f, v->s.median);
        fputs(", \"min_us\": ", f);
        us(f, v->s.min);
        fputs(", \"max_us\": ", f);
        us(f, v->s.max);
        fputs(", \"ci_lo_us\": ", f);
        us(f, v->s.ci_lo);
        fputs(", \"ci_hi_us\": ", f);
        us(f, v->s.ci_hi);
        fprintf(f, ", \"reps\": %lld, \"reps_total\": %lld, \"valid\": %s, \"stop\": ",
                (long long)v->s.n, (long long)v->total, v->valid ? "true" : "false");
        bench_json_string(f, v->stop ? v->stop : "");
        fprintf(f, ", \"type\": \"%s\", \"op\": \"%s\", \"inplace\": %s, \"sync\": \"%s\"}",
                bench_type_names[c->type], rc->reduces ? bench_op_names[c->op] : "-",
                c->inplace ? "true" : "false", bench_sync_name(o, rc->rooted));
    }
    fflush(f);
}

void bench_json_end(bench_ctx *x, double seconds)
{
    FILE *f = x->json;
    fputs("\n  ],\n  \"guidelines\": [", f);
    for (int i = 0; i < x->nverdicts; i++) {
        const bench_gl_verdict *v = &x->verdicts[i];
        fputs(i ? ",\n    {" : "\n    {", f);
        key(f, "guideline", v->guideline);
        fputs(", ", f);
        key(f, "statement", v->text);
        fputs(", ", f);
        key(f, "library", v->lib);
        fprintf(f, ", \"count\": %lld, \"lhs_us\": ", (long long)v->count);
        num(f, v->lhs_us);
        fputs(", \"mockup_us\": ", f);
        num(f, v->mock_us);
        fputs(", \"factor\": ", f);
        num(f, v->factor);
        fprintf(f, ", \"violated\": %s, \"significant\": %s}", v->violated ? "true" : "false",
                v->significant ? "true" : "false");
    }
    fprintf(f,
            "\n  ],\n  \"summary\": {\"seconds\": %.3f, \"cells\": %d, \"failures\": %d, "
            "\"window_valid\": %lld, \"window_total\": %lld}\n}\n",
            seconds, x->cells_done, x->failures, (long long)x->win_valid, (long long)x->win_total);
    fclose(f);
    x->json = NULL;
}
