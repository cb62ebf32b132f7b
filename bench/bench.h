/*
 * convoy-bench internals: options, the benchmark cell (one collective at one count and
 * distribution, with its buffers), the table of benchmarked collectives, and output.
 *
 * The benchmark is a library (convoy_benchlib) whose entry point convoy_bench_main() runs
 * inside an MPI program that is already initialised, so the MPI tests call it in-process
 * and inspect its results; bench/main.c only adds MPI_Init and MPI_Finalize.
 *
 * Growing it (issue 5): a new collective is one more bench_coll in colls.c; a new output
 * format is one more writer in output.c fed with the same bench_result rows.
 */
#ifndef CONVOY_BENCH_H
#define CONVOY_BENCH_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

enum { BENCH_MAX_COLLS = 16 };
enum bench_type { BT_INT, BT_DOUBLE, BT_FLOAT, BT_LONG, BT_CHAR, BT_NTYPES };
enum bench_op { BO_SUM, BO_MAX, BO_MIN, BO_PROD, BO_NOPS };

extern const char *const bench_type_names[BT_NTYPES];
extern const char *const bench_op_names[BO_NOPS];

typedef struct bench_opts {
    char **colls;
    int ncolls;
    char **algos; /* names, "all", "native", "auto" */
    int nalgos;
    char **dists;
    int ndists;
    int64_t *counts[BENCH_MAX_COLLS]; /* per collective (index into bench_colls) */
    int ncounts[BENCH_MAX_COLLS];
    int type, op, inplace;
    int64_t reps, warmup, min_reps;
    double time_cap; /* seconds per cell */
    double rel;      /* stop when the 95% CI of the median is within +-rel of it */
    uint64_t seed;   /* for the random distribution */
    const char *csv;
    int check, quiet, list;
    const char *inject_algo; /* hidden: corrupt this algorithm's result before comparing */
    int inject_rank;         /* -1: the last rank */
    char inject_buf[128];
    double progress_every;   /* seconds between progress lines when stderr is not a tty */
} bench_opts;

/* One cell: a collective at one count and distribution, with its buffers. */
typedef struct bench_cell {
    MPI_Comm comm;
    int rank, size;
    int type, op, inplace;
    MPI_Datatype dtype;
    MPI_Op mop;
    int64_t tsize; /* bytes per element */
    const char *dist; /* distribution name, or "-" */
    int64_t count;    /* base count c (v-collectives) or count */
    uint64_t seed;
    int *rcounts, *displs; /* v-collectives: per rank, in elements */
    char *sendbuf;         /* the input (own block for gathers) */
    char *recvbuf;         /* the result compared bytewise with native's */
    char *expected;        /* native's result, for validation */
    int64_t send_elems, recv_elems;
    int64_t bytes; /* reported size: bytes of the result per rank */
} bench_cell;

typedef struct bench_coll {
    const char *name; /* as on the command line and in the CSV */
    int convoy_coll;  /* enum convoy__coll */
    int vector;       /* takes counts from a distribution (--dist) */
    int reduces;      /* applies --op */
    /* Allocates and fills the cell's buffers; returns 0, a positive value when the cell
     * cannot run (counts do not fit MPI's int arguments: skipped, not an error), or -1 when
     * out of memory. */
    int (*setup)(bench_cell *c, char *why, int whylen);
    /* Makes recvbuf ready for a call: restores the in-place input, which a previous call
     * may have overwritten. Outside the timed region. */
    void (*prepare)(bench_cell *c);
    int (*native)(bench_cell *c);
    int (*convoy)(bench_cell *c);
} bench_coll;

extern const bench_coll bench_colls[];
extern const int bench_ncolls;
const bench_coll *bench_coll_find(const char *name);
void bench_cell_free(bench_cell *c);
/* Formats element i of a typed buffer as a number, for mismatch reports. */
void bench_format_elem(const bench_cell *c, const char *buf, int64_t i, char *out, int len);

/* What one algorithm measured in one cell (meaningful on rank 0). */
typedef struct bench_result {
    const char *algo;
    int applicable; /* the call succeeded (a forced algorithm may not apply) */
    int valid;      /* matched native (or --no-check) */
    bench_summary s;
    const char *stop; /* "ci", "reps" or "time" */
} bench_result;

/* Run metadata for the output header and the CSV. */
typedef struct bench_meta {
    char mpi_version[256]; /* first line of MPI_Get_library_version */
    int np, nodes, ppn, topo_flags;
    int oversubscribed, host_procs;
    long host_cores;
    char date[64];
    const char *convoy_ppn, *convoy_nodemap; /* the environment overrides, if set */
} bench_meta;

/* Output (rank 0 only). */
void bench_print_header(FILE *f, const bench_meta *m, const bench_opts *o);
void bench_print_table_head(FILE *f, const bench_coll *coll, const bench_opts *o,
                            char **algos, int nalgos);
void bench_print_table_row(FILE *f, const bench_cell *c, const bench_coll *coll,
                           const bench_result *r, int nr);
void bench_csv_head(FILE *f);
void bench_csv_rows(FILE *f, const bench_meta *m, const bench_opts *o, const bench_cell *c,
                    const bench_coll *coll, const bench_result *r, int nr);

/* The benchmark (see the file comment). MPI must be initialised. Returns 0 when every
 * algorithm matched native, 1 when a mismatch or failure was found, 2 on a usage error. */
int convoy_bench_main(int argc, char **argv, MPI_Comm comm);
/* For tests: the first mismatch report of the last run (rank 0), or "". */
const char *convoy_bench_first_mismatch(void);

#endif
