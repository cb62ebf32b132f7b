/*
 * Self-consistent performance guidelines (papers/004 §3; Hunold, Träff et al.): a
 * collective should be no slower than a mock-up of it made of other collectives of the
 * same library, e.g. MPI_Bcast(c) <= MPI_Scatter(c/p) + MPI_Allgather(c/p). If it is, the
 * library could replace it by the mock-up: a performance defect.
 *
 * Each guideline is timed as one cell with the runner (run.c): the left side and the
 * mock-up executed for real, interleaved, for the MPI library ("native", everything through
 * PMPI) and, when Convoy implements any collective the guideline uses, for Convoy as a
 * program linked with it sees the collectives (Convoy's where it has one, native
 * elsewhere: bench_lib_fn). The mock-up's result is validated against the native left
 * side on the first repetition, like any algorithm. A guideline is violated when the left
 * side's median exceeds the mock-up's by more than --guideline-tol; "significant" when the
 * two 95% confidence intervals of the medians do not overlap. Counts are the left side's
 * count per process, rounded up to a multiple of p where the mock-up splits it in p blocks.
 *
 * Adding a guideline is one entry in the table at the end: its buffers, and its two sides
 * written against a bench_lib. Convoy's entries for Allgather, Reduce_scatter_block and
 * Barrier (lib.c) bring the guidelines that use them to Convoy without a change here.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    GL_DIVP = 1,    /* the count is split into p blocks: rounded up to a multiple of p */
    GL_REDUCES = 2, /* applies --op */
    GL_ROOTED = 4,  /* the root rotates (or --root) */
    GL_ONE = 8      /* one cell at count 1, whatever --guideline-count says */
};

typedef struct guideline {
    const char *name; /* command line, CSV */
    const char *text; /* for people */
    int uses[4];      /* the collectives of both sides (BC_*), -1 terminated */
    unsigned flags;
    /* Buffers for c->count: 0, -1 out of memory, 1 cannot run (reason in why). */
    int (*setup)(bench_cell *c, char *why, int whylen);
    void (*prepare)(bench_cell *c); /* untimed, before each call; sets the result region */
    int (*lhs)(bench_cell *c, const bench_lib *L);
    int (*rhs)(bench_cell *c, const bench_lib *L);
} guideline;

/* Calls through L, with the fallback to native where L lacks the collective. */
#define CALL(L, id, type) ((type)bench_lib_fn((L), (id)))

static int fits(int64_t n, char *why, int whylen)
{
    if (n <= 0x7fffffff) return 1;
    snprintf(why, (size_t)whylen, "%lld elements do not fit MPI's int counts", (long long)n);
    return 0;
}

static void fill(const bench_cell *c, char *buf, int64_t n, int reduces)
{
    for (int64_t i = 0; i < n; i++)
        bench_store(c, buf, i,
                    reduces ? bench_reduce_value(c, c->rank, i) : bench_data_value(c->rank, i));
}

static void all_result(bench_cell *c)
{
    c->res_off = 0;
    c->res_elems = c->recv_elems;
}

/* send: n elements, recv: m, aux: a; filled for reductions or data movement. */
static int alloc_fill(bench_cell *c, int64_t n, int64_t m, int64_t a, int reduces)
{
    c->send_elems = n;
    c->recv_elems = m;
    c->aux_elems = a;
    if (bench_cell_alloc(c)) return -1;
    fill(c, c->sendbuf, n, reduces);
    return 0;
}

/* --- Bcast(c) <= Scatter(c/p) + Allgather(c/p) ----------------------------------------- */

static int bcast_setup(bench_cell *c, char *why, int whylen)
{
    if (!fits(c->count, why, whylen)) return 1;
    c->bytes = c->count * c->tsize;
    return alloc_fill(c, c->count, c->count, 0, 0);
}

static void bcast_prepare(bench_cell *c)
{
    all_result(c);
    if (c->rank == c->root) memcpy(c->recvbuf, c->sendbuf, (size_t)(c->count * c->tsize));
}

static int bcast_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_BCAST, bench_bcast_fn)(c->recvbuf, (int)c->count, c->dtype, c->root, c->comm);
}

static int bcast_rhs(bench_cell *c, const bench_lib *L)
{
    int b = (int)(c->count / c->size), root = c->rank == c->root;
    char *mine = c->recvbuf + (int64_t)c->rank * b * c->tsize;
    int rc = CALL(L, BC_SCATTER, bench_rooted_fn)(
        c->recvbuf, b, c->dtype, root ? MPI_IN_PLACE : mine, b, c->dtype, c->root, c->comm);
    if (rc != MPI_SUCCESS) return rc;
    return CALL(L, BC_ALLGATHER, bench_a2a_fn)(MPI_IN_PLACE, 0, c->dtype, c->recvbuf, b, c->dtype,
                                               c->comm);
}

/* --- reductions over c elements: Allreduce, Reduce, Scan ---------------------------------- */

static int reduce_setup(bench_cell *c, char *why, int whylen)
{
    if (!fits(c->count, why, whylen)) return 1;
    c->bytes = c->count * c->tsize;
    return alloc_fill(c, c->count, c->count, 0, 1);
}

static void prepare_all(bench_cell *c)
{
    all_result(c);
}

static int allreduce_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_ALLREDUCE, bench_allreduce_fn)(c->sendbuf, c->recvbuf, (int)c->count,
                                                     c->dtype, c->mop, c->comm);
}

/* Allreduce(c) <= Reduce(c) + Bcast(c) */
static int reduce_bcast_rhs(bench_cell *c, const bench_lib *L)
{
    int rc = CALL(L, BC_REDUCE, bench_reduce_fn)(c->sendbuf, c->recvbuf, (int)c->count, c->dtype,
                                                 c->mop, c->root, c->comm);
    if (rc != MPI_SUCCESS) return rc;
    return CALL(L, BC_BCAST, bench_bcast_fn)(c->recvbuf, (int)c->count, c->dtype, c->root, c->comm);
}

/* Allreduce(c) <= Reduce_scatter_block(c/p) + Allgather(c/p) */
static int rsb_allgather_rhs(bench_cell *c, const bench_lib *L)
{
    int b = (int)(c->count / c->size);
    int rc = CALL(L, BC_REDUCE_SCATTER_BLOCK, bench_allreduce_fn)(
        c->sendbuf, c->recvbuf + (int64_t)c->rank * b * c->tsize, b, c->dtype, c->mop, c->comm);
    if (rc != MPI_SUCCESS) return rc;
    return CALL(L, BC_ALLGATHER, bench_a2a_fn)(MPI_IN_PLACE, 0, c->dtype, c->recvbuf, b, c->dtype,
                                               c->comm);
}

/* Reduce(c) <= Allreduce(c): the result is the root's. */
static void reduce_prepare(bench_cell *c)
{
    c->res_off = 0;
    c->res_elems = c->rank == c->root ? c->count : 0;
}

static int reduce_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_REDUCE, bench_reduce_fn)(c->sendbuf, c->recvbuf, (int)c->count, c->dtype,
                                               c->mop, c->root, c->comm);
}

/* Scan(c) <= Exscan(c) + Reduce_local(c) */
static int scan_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_SCAN, bench_allreduce_fn)(c->sendbuf, c->recvbuf, (int)c->count, c->dtype,
                                                c->mop, c->comm);
}

static int exscan_rhs(bench_cell *c, const bench_lib *L)
{
    int rc = CALL(L, BC_EXSCAN, bench_allreduce_fn)(c->sendbuf, c->recvbuf, (int)c->count, c->dtype,
                                                    c->mop, c->comm);
    if (rc != MPI_SUCCESS) return rc;
    if (c->rank == 0) { /* Exscan leaves rank 0's result undefined: its scan is its input */
        memcpy(c->recvbuf, c->sendbuf, (size_t)(c->count * c->tsize));
        return MPI_SUCCESS;
    }
    return CALL(L, BC_REDUCE_LOCAL, bench_reduce_local_fn)(c->sendbuf, c->recvbuf, (int)c->count,
                                                           c->dtype, c->mop);
}

/* --- gathers: Allgather(c) against Allgatherv, Alltoall, Gather + Bcast; Gather(c) -------- */

static int gather_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (!fits(all, why, whylen)) return 1;
    c->bytes = all * c->tsize;
    c->rcounts = malloc((size_t)c->size * sizeof *c->rcounts);
    c->displs = malloc((size_t)c->size * sizeof *c->displs);
    if (!c->rcounts || !c->displs) return -1;
    for (int r = 0; r < c->size; r++) {
        c->rcounts[r] = (int)c->count;
        c->displs[r] = (int)(r * c->count);
    }
    if (alloc_fill(c, c->count, all, all, 0)) return -1;
    /* For Alltoall: p copies of the own block, so that its result is Allgather's. */
    for (int r = 0; r < c->size; r++)
        memcpy(c->aux + r * c->count * c->tsize, c->sendbuf, (size_t)(c->count * c->tsize));
    return 0;
}

static int allgather_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_ALLGATHER, bench_a2a_fn)(c->sendbuf, (int)c->count, c->dtype, c->recvbuf,
                                               (int)c->count, c->dtype, c->comm);
}

static int allgatherv_rhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_ALLGATHERV, bench_allgatherv_fn)(
        c->sendbuf, (int)c->count, c->dtype, c->recvbuf, c->rcounts, c->displs, c->dtype, c->comm);
}

static int alltoall_rhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_ALLTOALL, bench_a2a_fn)(c->aux, (int)c->count, c->dtype, c->recvbuf,
                                              (int)c->count, c->dtype, c->comm);
}

static int gather_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_GATHER, bench_rooted_fn)(c->sendbuf, (int)c->count, c->dtype, c->recvbuf,
                                               (int)c->count, c->dtype, c->root, c->comm);
}

static int gather_bcast_rhs(bench_cell *c, const bench_lib *L)
{
    int rc = gather_lhs(c, L);
    if (rc != MPI_SUCCESS) return rc;
    return CALL(L, BC_BCAST, bench_bcast_fn)(c->recvbuf, (int)(c->count * c->size), c->dtype,
                                             c->root, c->comm);
}

static void gather_prepare(bench_cell *c)
{
    c->res_off = 0;
    c->res_elems = c->rank == c->root ? c->recv_elems : 0;
}

/* --- Reduce_scatter_block(c) <= Reduce(p c) + Scatter(c) ---------------------------------- */

static int rsb_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (!fits(all, why, whylen)) return 1;
    c->bytes = c->count * c->tsize;
    return alloc_fill(c, all, c->count, all, 1);
}

static int rsb_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_REDUCE_SCATTER_BLOCK, bench_allreduce_fn)(
        c->sendbuf, c->recvbuf, (int)c->count, c->dtype, c->mop, c->comm);
}

static int reduce_scatter_rhs(bench_cell *c, const bench_lib *L)
{
    int all = (int)(c->count * c->size);
    int rc = CALL(L, BC_REDUCE, bench_reduce_fn)(c->sendbuf, c->aux, all, c->dtype, c->mop, c->root,
                                                 c->comm);
    if (rc != MPI_SUCCESS) return rc;
    return CALL(L, BC_SCATTER, bench_rooted_fn)(c->aux, (int)c->count, c->dtype, c->recvbuf,
                                                (int)c->count, c->dtype, c->root, c->comm);
}

/* --- Barrier <= Allreduce(1) -------------------------------------------------------------- */

static int barrier_lhs(bench_cell *c, const bench_lib *L)
{
    return CALL(L, BC_BARRIER, bench_barrier_fn)(c->comm);
}

static void barrier_prepare(bench_cell *c)
{
    c->res_elems = 0; /* a barrier has no result to compare */
}

/* --- the table ----------------------------------------------------------------------------- */

static const guideline guidelines[] = {
    {"bcast<=scatter+allgather",
     "Bcast(c) <= Scatter(c/p) + Allgather(c/p)",
     {BC_BCAST, BC_SCATTER, BC_ALLGATHER, -1},
     GL_DIVP | GL_ROOTED,
     bcast_setup,
     bcast_prepare,
     bcast_lhs,
     bcast_rhs},
    {"allreduce<=reduce+bcast",
     "Allreduce(c) <= Reduce(c) + Bcast(c)",
     {BC_ALLREDUCE, BC_REDUCE, BC_BCAST, -1},
     GL_REDUCES | GL_ROOTED,
     reduce_setup,
     prepare_all,
     allreduce_lhs,
     reduce_bcast_rhs},
    {"allreduce<=reduce_scatter_block+allgather",
     "Allreduce(c) <= Reduce_scatter_block(c/p) + Allgather(c/p)",
     {BC_ALLREDUCE, BC_REDUCE_SCATTER_BLOCK, BC_ALLGATHER, -1},
     GL_DIVP | GL_REDUCES,
     reduce_setup,
     prepare_all,
     allreduce_lhs,
     rsb_allgather_rhs},
    {"allgather<=allgatherv",
     "Allgather(c) <= Allgatherv(c, regular counts)",
     {BC_ALLGATHER, BC_ALLGATHERV, -1},
     0,
     gather_setup,
     prepare_all,
     allgather_lhs,
     allgatherv_rhs},
    {"allgather<=alltoall",
     "Allgather(c) <= Alltoall(c)",
     {BC_ALLGATHER, BC_ALLTOALL, -1},
     0,
     gather_setup,
     prepare_all,
     allgather_lhs,
     alltoall_rhs},
    {"allgather<=gather+bcast",
     "Allgather(c) <= Gather(c) + Bcast(p c)",
     {BC_ALLGATHER, BC_GATHER, BC_BCAST, -1},
     GL_ROOTED,
     gather_setup,
     prepare_all,
     allgather_lhs,
     gather_bcast_rhs},
    {"gather<=allgather",
     "Gather(c) <= Allgather(c)",
     {BC_GATHER, BC_ALLGATHER, -1},
     GL_ROOTED,
     gather_setup,
     gather_prepare,
     gather_lhs,
     allgather_lhs},
    {"reduce<=allreduce",
     "Reduce(c) <= Allreduce(c)",
     {BC_REDUCE, BC_ALLREDUCE, -1},
     GL_REDUCES | GL_ROOTED,
     reduce_setup,
     reduce_prepare,
     reduce_lhs,
     allreduce_lhs},
    {"reduce_scatter_block<=reduce+scatter",
     "Reduce_scatter_block(c) <= Reduce(p c) + Scatter(c)",
     {BC_REDUCE_SCATTER_BLOCK, BC_REDUCE, BC_SCATTER, -1},
     GL_REDUCES | GL_ROOTED,
     rsb_setup,
     prepare_all,
     rsb_lhs,
     reduce_scatter_rhs},
    {"scan<=exscan+reduce_local",
     "Scan(c) <= Exscan(c) + Reduce_local(c)",
     {BC_SCAN, BC_EXSCAN, BC_REDUCE_LOCAL, -1},
     GL_REDUCES,
     reduce_setup,
     prepare_all,
     scan_lhs,
     exscan_rhs},
    {"barrier<=allreduce",
     "Barrier <= Allreduce(1)",
     {BC_BARRIER, BC_ALLREDUCE, -1},
     GL_ONE | GL_REDUCES,
     reduce_setup,
     barrier_prepare,
     barrier_lhs,
     allreduce_lhs},
};
enum { NGL = (int)(sizeof guidelines / sizeof guidelines[0]) };

static int selected(const bench_opts *o, const guideline *g)
{
    for (int i = 0; i < o->ngl_names; i++)
        if (!strcmp(o->gl_names[i], "all") || !strcmp(o->gl_names[i], g->name)) return 1;
    return 0;
}

int bench_guideline_check_names(const bench_opts *o, char *err, int errlen)
{
    for (int i = 0; i < o->ngl_names; i++) {
        int found = !strcmp(o->gl_names[i], "all");
        for (int g = 0; g < NGL; g++)
            found |= !strcmp(o->gl_names[i], guidelines[g].name);
        if (!found) {
            snprintf(err, (size_t)errlen, "unknown guideline '%s' (try --list)", o->gl_names[i]);
            return -1;
        }
    }
    return 0;
}

void bench_list_guidelines(FILE *f)
{
    fprintf(f, "# guidelines (--guideline NAME): name  statement  [for Convoy too]\n");
    for (int g = 0; g < NGL; g++) {
        int convoy = 0;
        for (int k = 0; guidelines[g].uses[k] >= 0; k++)
            convoy |= bench_lib_has(&bench_convoy, guidelines[g].uses[k]);
        fprintf(f, "guideline %s  %s%s\n", guidelines[g].name, guidelines[g].text,
                convoy ? "  [native and Convoy]" : "  [native]");
    }
}

int bench_guideline_cells(const bench_opts *o, int size)
{
    (void)size;
    int n = 0;
    for (int g = 0; g < NGL; g++)
        if (selected(o, &guidelines[g])) n += (guidelines[g].flags & GL_ONE) ? 1 : o->ngl_counts;
    return n;
}

/* The variants: both sides for native, and for Convoy when it applies. */
static const char *const gl_names[] = {"native", "native-mockup", "convoy", "convoy-mockup"};

static void gl_prepare(bench_job *j, int v)
{
    (void)v;
    ((const guideline *)j->ctx)->prepare(j->cell);
}

static int gl_call(bench_job *j, int v)
{
    const guideline *g = j->ctx;
    const bench_lib *L = v >= 2 ? &bench_convoy : &bench_native;
    return v < 0 || v % 2 == 0 ? g->lhs(j->cell, L) : g->rhs(j->cell, L);
}

static void add_verdict(bench_ctx *x, const guideline *g, const bench_cell *c,
                        const bench_result *lhs, const bench_result *mock, const char *lib)
{
    if (!lhs->applicable || !mock->applicable || !lhs->valid || !mock->valid) return;
    if (lhs->s.n == 0 || mock->s.n == 0 || !(mock->s.median > 0)) return;
    if (x->nverdicts == x->capverdicts) {
        int cap = x->capverdicts ? 2 * x->capverdicts : 32;
        bench_gl_verdict *v = realloc(x->verdicts, (size_t)cap * sizeof *v);
        if (!v) bench_out_of_memory(x);
        x->verdicts = v;
        x->capverdicts = cap;
    }
    bench_gl_verdict *v = &x->verdicts[x->nverdicts++];
    v->guideline = g->name;
    v->text = g->text;
    v->lib = lib;
    v->count = c->count;
    v->lhs_us = lhs->s.median * 1e6;
    v->mock_us = mock->s.median * 1e6;
    v->factor = lhs->s.median / mock->s.median;
    v->violated = v->factor > 1.0 + x->o->gl_tol;
    v->significant = !isnan(lhs->s.ci_lo) && !isnan(mock->s.ci_hi) && lhs->s.ci_lo > mock->s.ci_hi;
    if (v->violated && !x->o->quiet)
        printf("    ^ %s %s VIOLATED at count %lld: %.2f us vs mock-up %.2f us, factor %.2f%s\n",
               lib, g->name, (long long)c->count, v->lhs_us, v->mock_us, v->factor,
               v->significant ? " (CIs disjoint)" : "");
}

static void run_guideline_cell(bench_ctx *x, const guideline *g, int64_t count)
{
    const bench_opts *o = x->o;
    double t_cell = MPI_Wtime();
    bench_cell c;
    bench_cell_init(&c, x->comm, o, (g->flags & GL_REDUCES) != 0);
    c.inplace = 0;
    c.user = g;
    if (g->flags & GL_DIVP) count = (count + c.size - 1) / c.size * c.size;
    c.count = count;
    char why[256] = "";
    int st = g->setup(&c, why, sizeof why), all_st;
    st = st < 0 ? 2 : st > 0 ? 1 : 0;
    MPI_Allreduce(&st, &all_st, 1, MPI_INT, MPI_MAX, x->comm);
    if (all_st) {
        if (x->rank == 0)
            fprintf(stderr, "convoy-bench: guideline %s count %lld %s: %s\n", g->name,
                    (long long)count, all_st == 2 ? "failed" : "skipped",
                    all_st == 2 ? "out of memory" : why);
        if (all_st == 2) x->failures++;
        bench_cell_free(&c);
        x->cells_done++;
        return;
    }
    int convoy = 0;
    for (int k = 0; g->uses[k] >= 0; k++)
        convoy |= bench_lib_has(&bench_convoy, g->uses[k]);
    bench_clear_algo_env(); /* Convoy as a program sees it: its own choices */
    bench_job j = {.x = x,
                   .what = g->name,
                   .cell = &c,
                   .nvar = convoy ? 4 : 2,
                   .names = (char **)gl_names,
                   .rooted = (g->flags & GL_ROOTED) != 0,
                   .prepare = gl_prepare,
                   .call = gl_call,
                   .has_ref = 1,
                   .ref_variant = 0,
                   .ctx = g};
    bench_result res[4];
    bench_run_job(&j, res, t_cell);
    bench_row_ctx rc = {
        "guideline", g->name, 0, (g->flags & GL_REDUCES) != 0, (g->flags & GL_ROOTED) != 0, NULL};
    bench_emit(x, &rc, &c, res, j.nvar);
    if (x->rank == 0) {
        add_verdict(x, g, &c, &res[0], &res[1], "native");
        if (convoy) add_verdict(x, g, &c, &res[2], &res[3], "convoy");
        fflush(stdout);
    }
    x->cells_done++;
    bench_cell_free(&c);
}

void bench_run_guidelines(bench_ctx *x)
{
    const bench_opts *o = x->o;
    for (int g = 0; g < NGL; g++) {
        if (!selected(o, &guidelines[g])) continue;
        if (x->rank == 0 && !o->quiet) {
            char title[160];
            snprintf(title, sizeof title, "guideline %s (%s%s%s)", guidelines[g].text,
                     bench_type_names[o->type], (guidelines[g].flags & GL_REDUCES) ? ", " : "",
                     (guidelines[g].flags & GL_REDUCES) ? bench_op_names[o->op] : "");
            int convoy = 0;
            for (int k = 0; guidelines[g].uses[k] >= 0; k++)
                convoy |= bench_lib_has(&bench_convoy, guidelines[g].uses[k]);
            bench_print_table_head(stdout, title, (char **)gl_names, convoy ? 4 : 2);
        }
        if (guidelines[g].flags & GL_ONE)
            run_guideline_cell(x, &guidelines[g], 1);
        else
            for (int k = 0; k < o->ngl_counts; k++)
                run_guideline_cell(x, &guidelines[g], o->gl_counts[k]);
    }
}

void bench_print_guideline_summary(FILE *f, const bench_ctx *x)
{
    int nviol = 0;
    for (int i = 0; i < x->nverdicts; i++)
        nviol += x->verdicts[i].violated;
    fprintf(f,
            "\n# performance guidelines: %d of %d comparisons violated (left side slower "
            "than its mock-up by more than %g%%)\n",
            nviol, x->nverdicts, x->o->gl_tol * 100.0);
    for (int i = 0; i < x->nverdicts; i++) {
        const bench_gl_verdict *v = &x->verdicts[i];
        if (!v->violated) continue;
        fprintf(f, "#   %-7s %-42s count %-8lld %10.2f us > mock-up %10.2f us: factor %.2f%s\n",
                v->lib, v->text, (long long)v->count, v->lhs_us, v->mock_us, v->factor,
                v->significant ? " (significant)" : "");
    }
}
