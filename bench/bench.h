/*
 * convoy-bench internals: options, the benchmark cell (one configuration with its buffers),
 * the implementations of the collectives (a "library": the MPI library's own, or Convoy's),
 * the table of benchmarked collectives, the runner that times a set of variants side by
 * side, and output.
 *
 * The benchmark is a library (convoy_benchlib) whose entry point convoy_bench_main() runs
 * inside an MPI program that is already initialised, so the MPI tests call it in-process
 * and inspect its results; bench/main.c only adds MPI_Init and MPI_Finalize.
 *
 * Files:
 *   options.c     command line -> bench_opts
 *   lib.c         bench_native (PMPI_*) and bench_convoy (convoy_*, where Convoy has one)
 *   colls.c       the collective table: buffers, one call, the part of the result to compare
 *   run.c         validation against a reference and the interleaved, timed repetitions
 *   sync.c        barrier and window-based (clock-offset corrected) start of a repetition,
 *                 on clocksync.c's clocks (shared with convoy-dropin-bench)
 *   guidelines.c  self-consistent performance guidelines (papers/004 §3)
 *   lanes.c       lane pattern and multi-collective benchmarks (papers/004 §2)
 *   output.c      terminal table and CSV;  json.c  JSON
 *   bench.c       the driver: cells, metadata, convoy_bench_main()
 *   stats.c, parse.c, clock.c   pure C (no MPI), unit-tested alone
 *
 * Growing it: a new collective is one BC_* id, one line in each bench_lib of lib.c that has
 * it, and one bench_coll entry in colls.c. Convoy gaining a collective is one line in
 * bench_convoy (lib.c); bench/CMakeLists.txt even adds it by itself when include/convoy.h
 * declares the function. A new guideline is one entry in guidelines.c.
 */
#ifndef CONVOY_BENCH_H
#define CONVOY_BENCH_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "clocksync.h"
#include "stats.h"

enum { BENCH_MAX_COLLS = 24 };
enum bench_type { BT_INT, BT_DOUBLE, BT_FLOAT, BT_LONG, BT_CHAR, BT_NTYPES };
enum bench_op { BO_SUM, BO_MAX, BO_MIN, BO_PROD, BO_NOPS };
/* How a repetition starts (sync.c): after a barrier; at an agreed time (window); or, the
 * default, at an agreed time for rooted collectives and after a barrier for the others. */
enum bench_sync { BS_BARRIER, BS_WINDOW, BS_AUTO };

extern const char *const bench_type_names[BT_NTYPES];
extern const char *const bench_op_names[BO_NOPS];

/* --- the collectives and their implementations ------------------------------------------ */

/* Every collective the benchmark knows: an index into a bench_lib. */
enum bench_cid {
    BC_ALLGATHERV,
    BC_ALLREDUCE,
    BC_BARRIER,
    BC_BCAST,
    BC_SCATTER,
    BC_GATHER,
    BC_ALLGATHER,
    BC_ALLTOALL,
    BC_REDUCE,
    BC_REDUCE_SCATTER_BLOCK,
    BC_SCAN,
    BC_EXSCAN,
    BC_REDUCE_LOCAL,
    BC_GATHERV,
    BC_SCATTERV,
    BC_N
};

/* An implementation of collectives with MPI's signatures, by BC_* id (NULL: not
 * implemented). Stored as a generic function pointer; call through the typed helpers. */
typedef void (*bench_fn)(void);
typedef struct bench_lib {
    const char *name;
    bench_fn fn[BC_N];
} bench_lib;

typedef int (*bench_barrier_fn)(MPI_Comm);
typedef int (*bench_bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);
/* Gather and Scatter */
typedef int (*bench_rooted_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int,
                               MPI_Comm);
typedef int (*bench_gatherv_fn)(const void *, int, MPI_Datatype, void *, const int[], const int[],
                                MPI_Datatype, int, MPI_Comm);
typedef int (*bench_scatterv_fn)(const void *, const int[], const int[], MPI_Datatype, void *, int,
                                 MPI_Datatype, int, MPI_Comm);
/* Allgather and Alltoall */
typedef int (*bench_a2a_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*bench_allgatherv_fn)(const void *, int, MPI_Datatype, void *, const int[],
                                   const int[], MPI_Datatype, MPI_Comm);
/* Allreduce, Scan, Exscan, Reduce_scatter_block */
typedef int (*bench_allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*bench_reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*bench_reduce_local_fn)(const void *, void *, int, MPI_Datatype, MPI_Op);

extern const bench_lib bench_native; /* the MPI library, through PMPI_* */
extern const bench_lib bench_convoy; /* Convoy's collectives; NULL where it has none */
/* What a program linked with Convoy gets for collective id: L's own, else native's. */
bench_fn bench_lib_fn(const bench_lib *L, int id);
/* L implements id itself (not through the fallback). */
int bench_lib_has(const bench_lib *L, int id);

/* --- options ------------------------------------------------------------------------------ */

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
    int root; /* fixed root of rooted collectives, or -1: rotate (rank = repetition mod p) */
    int sync; /* enum bench_sync */
    int64_t reps, warmup, min_reps;
    double time_cap; /* seconds per cell, all variants together */
    double budget;   /* seconds for the whole run (0: none): caps shrink to fit */
    double rel;      /* stop when the 95% CI of the median is within +-rel of it */
    uint64_t seed;   /* for the random distribution */
    const char *csv, *json;
    int check, quiet, list;
    /* performance guidelines */
    int guidelines;
    int overhead;    /* --overhead: every collective at np and count 1, native against auto,
                        with the difference (the per-call cost) printed per cell */
    char **gl_names; /* "all" or names */
    int ngl_names;
    int64_t *gl_counts;
    int ngl_counts;
    double gl_tol; /* a violation: left side slower than the mock-up by more than this */
    /* lane benchmarks */
    int lane_pattern, lane_multi;
    int64_t *lane_counts;
    int nlane_counts;
    int64_t *lane_k; /* virtual lanes to try; NULL: 1..ppn */
    int nlane_k;
    int64_t lane_iters;
    const char *inject_algo; /* hidden: corrupt this algorithm's result before comparing */
    int inject_rank;         /* -1: the last rank */
    char inject_buf[128];
    double progress_every; /* seconds between progress lines when stderr is not a tty */
    char cmdline[1024];    /* the options as given, for the metadata */
} bench_opts;

/* Parses argv (options.c). Returns 0, 1 after --help, or -1 (message in err). Every rank
 * parses the same argv, so all reach the same verdict without talking. */
int bench_parse_args(int argc, char **argv, bench_opts *o, char *err, int errlen);
void bench_opts_free(bench_opts *o);
void bench_usage(FILE *f);

/* --- cells -------------------------------------------------------------------------------- */

/* One configuration: a collective (or guideline, or lane benchmark) at one count and
 * distribution, with its buffers. */
typedef struct bench_cell {
    MPI_Comm comm;
    int rank, size;
    int type, op, inplace;
    MPI_Datatype dtype;
    MPI_Op mop;
    int64_t tsize;    /* bytes per element */
    const char *dist; /* distribution name, or "-" */
    int64_t count;    /* base count c (v-collectives) or count */
    uint64_t seed;
    int root;              /* of this repetition (rooted collectives) */
    int *rcounts, *displs; /* v-collectives: per rank, in elements */
    char *sendbuf;         /* the input */
    char *recvbuf;         /* the result compared bytewise with the reference's */
    char *aux;             /* a second input or scratch, as the collective needs */
    char *expected;        /* the reference's result, for validation */
    int64_t send_elems, recv_elems, aux_elems;
    int64_t res_off, res_elems; /* the part of recvbuf that is this rank's result */
    int64_t bytes;              /* reported size: bytes of the result per rank */
    const void *user;           /* the guideline or lane benchmark the cell belongs to */
} bench_cell;

/* Fills the cell's common fields (datatype, op, ...) from the options. */
void bench_cell_init(bench_cell *c, MPI_Comm comm, const bench_opts *o, int reduces);
void bench_cell_free(bench_cell *c);
/* --shared-buffers (simulation builds): the cells' buffers are SMPI_SHARED_MALLOC memory,
 * one copy for all ranks (their data alias: no validation). */
extern int bench_shared_buffers;
/* Allocates send_elems, recv_elems, aux_elems elements and the reference; sets the result
 * region to the whole receive buffer. Returns 0 or -1. */
int bench_cell_alloc(bench_cell *c);
/* Input values: element i of rank r's data, exact under any order of reduction. */
void bench_store(const bench_cell *c, char *buf, int64_t i, long v);
long bench_data_value(int r, int64_t i);
long bench_reduce_value(const bench_cell *c, int r, int64_t i);
/* Formats element i of a typed buffer as a number, for mismatch reports. */
void bench_format_elem(const bench_cell *c, const char *buf, int64_t i, char *out, int len);

enum {
    BENCH_VECTOR = 1,  /* counts from a distribution (--dist) */
    BENCH_REDUCES = 2, /* applies --op */
    BENCH_ROOTED = 4,  /* has a root: rotating or --root */
    BENCH_NOCOUNT = 8, /* no data: one cell, count 0 */
    BENCH_INPLACE = 16 /* supports --inplace */
};

/*
 * One collective of the table (colls.c). To add one: an id in enum bench_cid, the
 * native function in bench_native (lib.c), and an entry here with
 *   setup    buffers and input for the cell's count (and distribution); 0, a positive
 *            value when the cell cannot run (skipped, reason in why), -1 out of memory;
 *            sets res_off/res_elems when only part of recvbuf is this rank's result;
 *   prepare  before every call, untimed: restores inputs a call may overwrite (in place,
 *            the root's buffer of a broadcast for the current c->root);
 *   run      one call through f, an implementation of this collective (native's,
 *            Convoy's) with MPI's signature.
 */
typedef struct bench_coll {
    const char *name;        /* as on the command line and in the CSV */
    int id;                  /* enum bench_cid */
    const char *convoy_name; /* Convoy's name for it (CONVOY_<NAME>_ALGO, the registry) */
    unsigned flags;
    int (*setup)(bench_cell *c, char *why, int whylen);
    void (*prepare)(bench_cell *c);
    int (*run)(bench_cell *c, bench_fn f);
} bench_coll;

extern const bench_coll bench_colls[];
extern const int bench_ncolls;
const bench_coll *bench_coll_find(const char *name);
const bench_coll *bench_coll_by_id(int id);
/* Convoy's collective number (enum convoy__coll) for its registry, or -1. */
int bench_coll_convoy(const bench_coll *coll);
/* Unsets every CONVOY_<COLL>_ALGO, so that Convoy chooses by itself. */
void bench_clear_algo_env(void);

/* --- results -------------------------------------------------------------------------------- */

/* What one variant measured in one cell (meaningful on rank 0). */
typedef struct bench_result {
    const char *algo;
    int applicable; /* the call succeeded (a forced algorithm may not apply) */
    int valid;      /* matched the reference (or --no-check) */
    bench_summary s;
    int64_t total;    /* timed repetitions, including those invalid under --sync window */
    const char *stop; /* "ci", "reps" or "time" */
} bench_result;

/* Run metadata for the output header, the CSV and the JSON. */
typedef struct bench_meta {
    char mpi_version[256]; /* first line of MPI_Get_library_version */
    char mpi_full[1024];   /* all of it */
    int mpi_major, mpi_minor;
    int np, nodes, ppn, topo_flags;
    int oversubscribed, host_procs, hosts;
    long host_cores;
    int *host_of, *cores_of; /* per rank: the lowest rank on its host, and that host's cores */
    char date[64];
    char layout[96]; /* uniform / regular / consecutive / irregular, and how nodes were made */
    const char *convoy_ppn, *convoy_nodemap; /* the environment overrides, if set */
} bench_meta;

/* One guideline comparison for one library at one count (for the summary and JSON). */
typedef struct bench_gl_verdict {
    const char *guideline, *text, *lib;
    int64_t count;
    double lhs_us, mock_us, factor;
    int violated, significant;
} bench_gl_verdict;

/* A row of output: what a variant of a cell measured. */
typedef struct bench_row_ctx {
    const char *kind; /* "coll", "guideline", "lane" */
    const char *name; /* collective, guideline or lane benchmark */
    int vector, reduces, rooted;
    const char *pick; /* the algorithm Convoy's default chose for the cell, or NULL */
} bench_row_ctx;

/* --- the run's state, and the runner -------------------------------------------------------- */

typedef struct bench_ctx {
    const bench_opts *o;
    bench_meta meta;
    MPI_Comm comm;
    int rank, size;
    FILE *csv, *json;
    int json_rows;
    int failures; /* mismatches and failed calls */
    int cells, cells_done;
    double t_start, t_progress;
    int progress_shown;
    bench_clock clk;
    int64_t win_valid, win_total; /* window-synchronised repetitions, over the run */
    bench_gl_verdict *verdicts;
    int nverdicts, capverdicts;
    const void *topo; /* const convoy__topo *: the node definition the library uses */
} bench_ctx;

/*
 * A set of variants timed side by side in one cell: the algorithms of a collective, the
 * two sides of a guideline, the lane counts of a lane benchmark.
 */
typedef struct bench_job {
    bench_ctx *x;
    const char *what; /* for messages */
    bench_cell *cell;
    int nvar;
    char **names;
    int rooted; /* c->root rotates with the repetition unless --root */
    int timing; /* set by the runner while it times (0 while it validates) */
    /* Before every call of variant v, untimed. */
    void (*prepare)(struct bench_job *j, int v);
    /* One call of variant v; v = -1 is the reference (validation only). */
    int (*call)(struct bench_job *j, int v);
    int has_ref;     /* validate every variant against call(-1) on the first repetition */
    int ref_variant; /* the variant that is call(-1) itself (not compared), or -1 */
    const void *ctx;
} bench_job;

/* Validation, warm-up and timed repetitions of one cell (run.c); res[nvar]. */
void bench_run_job(bench_job *j, bench_result *res, double t_cell);
/* The per-cell time cap now: --time-cap, shrunk to what --budget leaves per cell. */
double bench_cell_cap(const bench_ctx *x);
void bench_progress(bench_ctx *x, const char *what, const bench_cell *c, const char *state);
void bench_progress_clear(bench_ctx *x);
void bench_out_of_memory(bench_ctx *x);
/* Writes a finished cell: table row, CSV rows, JSON rows (rank 0). */
void bench_emit(bench_ctx *x, const bench_row_ctx *rc, const bench_cell *c, const bench_result *r,
                int nr);

/* Start of a repetition (sync.c). */
int bench_sync_init(bench_ctx *x); /* collective; measures the clock offsets once */
/* Whether a job of rooted collectives (or of others) starts its repetitions in windows, and
 * the name of how they start ("window" or "barrier"). */
int bench_windowed(const bench_opts *o, int rooted);
const char *bench_sync_name(const bench_opts *o, int rooted);
double bench_gtime(const bench_ctx *x);
/* Waits until global time t; returns 1 if this rank arrived after t (the repetition is
 * invalid), else 0. */
int bench_wait_until(const bench_ctx *x, double t);

/* Guidelines and lanes (collective over x->comm; rank 0 prints and records). */
int bench_guideline_check_names(const bench_opts *o, char *err, int errlen);
int bench_guideline_cells(const bench_opts *o, int size);
void bench_run_guidelines(bench_ctx *x);
void bench_print_guideline_summary(FILE *f, const bench_ctx *x);
void bench_list_guidelines(FILE *f);
int bench_lane_cells(const bench_opts *o, int ppn);
void bench_run_lanes(bench_ctx *x);

/* Output (rank 0 only; output.c, json.c). */
void bench_print_header(FILE *f, const bench_meta *m, const bench_opts *o);
/* The single-copy bound (output.c): set at start from the copy bandwidth of a core while
 * the host's cores copy at once (bytes/s, measured by bench_copy_bandwidth; raised where a
 * measurement before a large cell is faster: bench.c bound_refresh), and where the ranks
 * are; a cell's bound is bound.h's bench_bound_time. */
typedef struct bench_bound {
    double bw;       /* bytes/s of one core's memcpy with the host's cores copying at once
                        (min(procs, cores) of them), 0: no bound column */
    double bw_alone; /* bytes/s of rank 0's memcpy alone (the header says it too) */
    double cma;      /* bytes/s of one core's cross-memory read (process_vm_readv) with the
                        same cores reading at once, the fastest seen; 0: not permitted */
    int procs;       /* processes per host */
    int cores;       /* cores of the host */
    int root;        /* --root: the cells' root, or -1 (rotating) */
    const int *host_of, *cores_of; /* bench_meta's */
    int overhead;
} bench_bound;
extern bench_bound bench_bound_cfg;
double bench_copy_bandwidth(MPI_Comm together, double *cma);
void bench_print_table_head(FILE *f, const char *title, char **algos, int nalgos);
void bench_print_table_row(FILE *f, const bench_row_ctx *rc, const bench_cell *c,
                           const bench_result *r, int nr);
void bench_csv_head(FILE *f);
void bench_csv_rows(FILE *f, const bench_meta *m, const bench_opts *o, const bench_row_ctx *rc,
                    const bench_cell *c, const bench_result *r, int nr);
void bench_json_begin(FILE *f, const bench_meta *m, const bench_opts *o);
void bench_json_rows(bench_ctx *x, const bench_row_ctx *rc, const bench_cell *c,
                     const bench_result *r, int nr);
void bench_json_end(bench_ctx *x, double seconds);
/* A JSON string literal of s (quotes included). */
void bench_json_string(FILE *f, const char *s);

/* The benchmark (see the file comment). MPI must be initialised. Returns 0 when every
 * algorithm matched native, 1 when a mismatch or failure was found, 2 on a usage error. */
int convoy_bench_main(int argc, char **argv, MPI_Comm comm);
/* For tests: the first mismatch report of the last run (rank 0), or "". */
const char *convoy_bench_first_mismatch(void);
void bench_set_first_mismatch(const char *msg);

#ifdef CONVOY_SIMGRID
/* charged.c: the native reducing collectives with their reductions charged. */
int bench_charged_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c);
int bench_charged_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                         MPI_Comm c);
int bench_charged_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                                       MPI_Comm c);
int bench_charged_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c);
int bench_charged_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c);
int bench_charged_Reduce_local(const void *in, void *inout, int n, MPI_Datatype t, MPI_Op op);
#endif

#endif
