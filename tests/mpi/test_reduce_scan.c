/*
 * Correctness of Reduce, Scan, Exscan and Alltoall at one process count (one mpirun runs
 * all cases): the default selection and every registered algorithm (forced by name under
 * CONVOY_ALGO_STRICT=1, so a forced algorithm that does not apply is an error, and
 * convoy__comm_last_algo confirms it ran), blocking, nonblocking and persistent (started
 * twice with new data), against a result derived by hand: reductions fold the generated
 * contributions in rank order with MPI_Reduce_local (rank i of Scan gets 0..i, of Exscan
 * 0..i-1, Reduce's root 0..P-1), Alltoall places block j of rank i at block i of rank j.
 * The native collective (PMPI_) is checked against the same reference in every
 * configuration, so the test cannot pass by agreeing with itself.
 *
 * Covered: int with MPI_SUM; a derived type with holes (vector of 2 ints, stride 2, resized
 * to 4 ints) with a commutative user op; a non-commutative user op (2x2 matrix product mod
 * 2^32) that catches any change of rank order, and, for algorithms that do not declare
 * rank order, that forcing them on it is refused (and that the default then serves it);
 * counts 0, 1, 7, 1000 and 70000 elements (Alltoall: per block); MPI_IN_PLACE (Reduce at
 * the root, Scan, Exscan, Alltoall); every root of Reduce; Exscan's rank 0 and Reduce's
 * other ranks left untouched; guard bytes after every buffer and unchanged send buffers;
 * Alltoall with different send and receive types (int <-> the derived type); the world
 * and a reversed-rank communicator (with CONVOY_NODEMAP / CONVOY_PPN: irregular and
 * non-consecutive virtual nodes).
 *
 * Usage: mpirun -n P test_reduce_scan; CONVOY_TEST_VERBOSE=1 names each case.
 */
#include "common.h"

#include "api/api.h"
#include "convoy.h"
#include "select/select.h"

enum { K_REDUCE, K_SCAN, K_EXSCAN, K_ALLTOALL, K_N };
static const char *const kname[K_N] = {"Reduce", "Scan", "Exscan", "Alltoall"};
static const int kcoll[K_N] = {CONVOY_COLL_REDUCE, CONVOY_COLL_SCAN, CONVOY_COLL_EXSCAN,
                               CONVOY_COLL_ALLTOALL};
static const char *const kenv[K_N] = {"CONVOY_REDUCE_ALGO", "CONVOY_SCAN_ALGO",
                                      "CONVOY_EXSCAN_ALGO", "CONVOY_ALLTOALL_ALGO"};
enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT, M_N };
static const char *const mname[M_N] = {"blocking", "nonblocking", "persistent"};

/* --- types: ints laid out in elements ------------------------------------------------- */

typedef struct ttype {
    const char *name;
    MPI_Datatype t;
    MPI_Op op;   /* reductions */
    int w;       /* ints of data per element */
    int off[4];  /* their positions (in ints) within the element */
    int ext;     /* element extent in ints */
    int commute; /* the op */
} ttype;

static void vsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        b[4 * i] += a[4 * i];
        b[4 * i + 2] += a[4 * i + 2];
    }
}

/* inout = in x inout, 2x2 matrices mod 2^32: in holds the lower ranks. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        unsigned r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

static ttype T_int, T_vec, T_mat;

static void make_types(void)
{
    T_int = (ttype){"int", MPI_INT, MPI_SUM, 1, {0}, 1, 1};
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    T_vec = (ttype){"vec-with-holes", MPI_DATATYPE_NULL, MPI_OP_NULL, 2, {0, 2}, 4, 1};
    MPI_Type_create_resized(v, 0, 4 * sizeof(int), &T_vec.t);
    MPI_Type_free(&v);
    MPI_Type_commit(&T_vec.t);
    MPI_Op_create(vsum, 1, &T_vec.op);
    T_mat = (ttype){"mat2x2", MPI_DATATYPE_NULL, MPI_OP_NULL, 4, {0, 1, 2, 3}, 4, 0};
    MPI_Type_contiguous(4, MPI_UNSIGNED, &T_mat.t);
    MPI_Type_commit(&T_mat.t);
    MPI_Op_create(matmul, 0, &T_mat.op);
}

static void free_types(void)
{
    MPI_Type_free(&T_vec.t);
    MPI_Type_free(&T_mat.t);
    MPI_Op_free(&T_vec.op);
    MPI_Op_free(&T_mat.op);
}

#define SENTINEL 0x5A5A5A5A
#define GUARD 16 /* ints after every buffer */

/* A buffer of n elements of t (plus the guard), all SENTINEL. */
static int *buf_new(const ttype *t, int64_t n)
{
    size_t ints = (size_t)(n * t->ext + GUARD);
    int *b = malloc(ints * sizeof *b);
    for (size_t i = 0; i < ints; i++)
        b[i] = SENTINEL;
    return b;
}

static size_t buf_bytes(const ttype *t, int64_t n)
{
    return (size_t)(n * t->ext + GUARD) * sizeof(int);
}

/* Integer m of a stream laid out in t's elements. */
static int *at(const ttype *t, int *b, int64_t m)
{
    return b + (m / t->w) * t->ext + t->off[m % t->w];
}

static int value(uint64_t seed, int rank, int64_t m, const ttype *t)
{
    uint64_t h = tc_hash(seed, rank, m);
    return t->commute ? (int)(h % 1000) - 500 : (int)(unsigned)h;
}

/* Rank r's input: n elements of t. */
static void fill(const ttype *t, int *b, int64_t n, uint64_t seed, int r)
{
    for (int64_t m = 0; m < n * t->w; m++)
        *at(t, b, m) = value(seed, r, m, t);
}

/* --- calls -------------------------------------------------------------------------- */

typedef struct call {
    int k;
    const void *sb;
    void *rb;
    int scount, rcount;
    MPI_Datatype st, rt;
    MPI_Op op;
    int root;
    MPI_Comm comm;
} call;

static int native(const call *c)
{
    switch (c->k) {
    case K_REDUCE: return PMPI_Reduce(c->sb, c->rb, c->rcount, c->rt, c->op, c->root, c->comm);
    case K_SCAN: return PMPI_Scan(c->sb, c->rb, c->rcount, c->rt, c->op, c->comm);
    case K_EXSCAN: return PMPI_Exscan(c->sb, c->rb, c->rcount, c->rt, c->op, c->comm);
    default: return PMPI_Alltoall(c->sb, c->scount, c->st, c->rb, c->rcount, c->rt, c->comm);
    }
}

static int start(const call *c, int mode, convoy_request *req)
{
    const void *sb = c->sb;
    void *rb = c->rb;
    const int n = c->rcount;
    if (mode == M_BLOCKING) {
        switch (c->k) {
        case K_REDUCE: return convoy_Reduce(sb, rb, n, c->rt, c->op, c->root, c->comm);
        case K_SCAN: return convoy_Scan(sb, rb, n, c->rt, c->op, c->comm);
        case K_EXSCAN: return convoy_Exscan(sb, rb, n, c->rt, c->op, c->comm);
        default: return convoy_Alltoall(sb, c->scount, c->st, rb, n, c->rt, c->comm);
        }
    }
    if (mode == M_NONBLOCKING) {
        switch (c->k) {
        case K_REDUCE: return convoy_Ireduce(sb, rb, n, c->rt, c->op, c->root, c->comm, req);
        case K_SCAN: return convoy_Iscan(sb, rb, n, c->rt, c->op, c->comm, req);
        case K_EXSCAN: return convoy_Iexscan(sb, rb, n, c->rt, c->op, c->comm, req);
        default: return convoy_Ialltoall(sb, c->scount, c->st, rb, n, c->rt, c->comm, req);
        }
    }
    MPI_Info i = MPI_INFO_NULL;
    switch (c->k) {
    case K_REDUCE: return convoy_Reduce_init(sb, rb, n, c->rt, c->op, c->root, c->comm, i, req);
    case K_SCAN: return convoy_Scan_init(sb, rb, n, c->rt, c->op, c->comm, i, req);
    case K_EXSCAN: return convoy_Exscan_init(sb, rb, n, c->rt, c->op, c->comm, i, req);
    default: return convoy_Alltoall_init(sb, c->scount, c->st, rb, n, c->rt, c->comm, i, req);
    }
}

/* --- one configuration -------------------------------------------------------------- */

typedef struct tcomm {
    MPI_Comm comm;
    const char *name;
    int rank, size;
} tcomm;

typedef struct cfg {
    int k;
    const ttype *st, *rt; /* reductions: st == rt */
    int64_t n;            /* elements (Alltoall: of rt per block) */
    int sf;               /* Alltoall: send elements per receive element (1, or 2 / 1/2) */
    int inplace, root;
    uint64_t seed;
} cfg;

static int g_verbose;

/* The input and the expected receive buffer of this rank; sbuf NULL when in place (the
 * input is then in *rin, the receive buffer's initial image). */
typedef struct bufs {
    int *sbuf, *sref; /* send buffer and its expected (unchanged) image */
    int *rin, *rexp;  /* receive buffer's initial and expected image */
    size_t sbytes, rbytes;
    int64_t scount; /* elements of st */
} bufs;

static int64_t recv_elems(const cfg *f, int P)
{
    return f->k == K_ALLTOALL ? P * f->n : f->n;
}

static int has_result(const cfg *f, int rank)
{
    return f->k == K_REDUCE ? rank == f->root : f->k == K_EXSCAN ? rank > 0 : 1;
}

static void make_bufs(const cfg *f, const tcomm *c, uint64_t seed, bufs *b)
{
    const int P = c->size, r = c->rank;
    const ttype *st = f->st, *rt = f->rt;
    const int64_t rn = recv_elems(f, P);
    const int own_inplace = f->inplace && (f->k != K_REDUCE || r == f->root);
    b->scount = f->k == K_ALLTOALL ? (int64_t)P * f->n * rt->w / st->w : f->n;
    b->sbytes = buf_bytes(st, b->scount);
    b->rbytes = buf_bytes(rt, rn);
    b->sbuf = own_inplace ? NULL : buf_new(st, b->scount);
    b->rin = buf_new(rt, rn);
    b->rexp = buf_new(rt, rn);
    if (b->sbuf) fill(st, b->sbuf, b->scount, seed, r);
    if (own_inplace) fill(rt, b->rin, rn, seed, r);
    b->sref = b->sbuf ? malloc(b->sbytes) : NULL;
    if (b->sref) memcpy(b->sref, b->sbuf, b->sbytes);
    memcpy(b->rexp, b->rin, b->rbytes);
    if (!has_result(f, r)) return;
    if (f->k == K_ALLTOALL) {
        /* Block i: sender i's ints for block r, its stream positions r n w ... */
        const int64_t per = f->n * rt->w;
        for (int i = 0; i < P; i++)
            for (int64_t m = 0; m < per; m++)
                *at(rt, b->rexp, i * per + m) = value(seed, i, r * per + m, rt);
        return;
    }
    /* Fold ranks lo..hi in rank order: acc = x_hi, then acc = x_j op acc downwards. */
    const int lo = 0, hi = f->k == K_EXSCAN ? r - 1 : f->k == K_SCAN ? r : P - 1;
    int *x = buf_new(rt, f->n);
    fill(rt, b->rexp, f->n, seed, hi);
    for (int j = hi - 1; j >= lo && f->n > 0; j--) {
        fill(rt, x, f->n, seed, j);
        MPI_Reduce_local(x, b->rexp, (int)f->n, rt->t, rt->op);
    }
    free(x);
}

static void free_bufs(bufs *b)
{
    free(b->sbuf);
    free(b->sref);
    free(b->rin);
    free(b->rexp);
}

/* First differing int, for the report. */
static int diff(const int *a, const int *b, size_t bytes, char *why, size_t len, const char *what)
{
    if (!memcmp(a, b, bytes)) return 0;
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    snprintf(why, len, "%s: int %zu is %d, expected %d", what, i, a[i], b[i]);
    return 1;
}

/* The receive (and send) buffer after a call, against the reference. */
static int verify(const bufs *b, const int *rb, char *why, size_t len)
{
    if (diff(rb, b->rexp, b->rbytes, why, len, "receive buffer")) return 0;
    if (b->sbuf && diff(b->sbuf, b->sref, b->sbytes, why, len, "send buffer changed")) return 0;
    return 1;
}

static void describe(const cfg *f, const tcomm *c, const char *algo, int mode, char *s, size_t len)
{
    char root[16] = "";
    if (f->k == K_REDUCE) snprintf(root, sizeof root, " root %d", f->root);
    snprintf(s, len, "%s %s on %s, %s%s%s, n %lld%s, %s, algorithm %s", kname[f->k], mname[mode],
             c->name, f->st->name, f->k == K_ALLTOALL ? " -> " : "",
             f->k == K_ALLTOALL ? f->rt->name : "", (long long)f->n, root,
             f->inplace ? "in place" : "not in place", algo ? algo : "default");
}

static void set_algo(int k, const char *algo)
{
    if (algo)
        setenv(kenv[k], algo, 1);
    else
        unsetenv(kenv[k]);
}

/* Runs the configuration through Convoy with the algorithm (NULL: default) in the mode. */
static void run_convoy(const cfg *f, const tcomm *c, const char *algo, int mode)
{
    char what[256], why[256] = "";
    describe(f, c, algo, mode, what, sizeof what);
    tc_case(what);
    if (g_verbose && c->rank == 0) fprintf(stderr, "%s\n", what);
    set_algo(f->k, algo);
    bufs b;
    make_bufs(f, c, f->seed, &b);
    int *rb = malloc(b.rbytes);
    memcpy(rb, b.rin, b.rbytes);
    call cl = {f->k,      b.sbuf ? (const void *)b.sbuf : MPI_IN_PLACE,
               rb,        (int)(f->k == K_ALLTOALL ? b.scount / c->size : f->n),
               (int)f->n, f->st->t,
               f->rt->t,  f->rt->op,
               f->root,   c->comm};
    convoy_request req = CONVOY_REQUEST_NULL;
    int ok = 1, rc = start(&cl, mode, &req);
    /* An algorithm with restrictions (lane and hier: layouts) refuses a layout it does not
     * apply to under CONVOY_ALGO_STRICT, on every rank alike: nothing to compare then. */
    const convoy__algo *al = algo ? convoy__algo_find(kcoll[f->k], algo) : NULL;
    if (rc == MPI_ERR_ARG && al && al->applicable) {
        free(rb);
        free_bufs(&b);
        set_algo(f->k, NULL);
        return;
    }
    if (rc) snprintf(why, sizeof why, "returned %d", rc);
    if (!rc && mode != M_BLOCKING) {
        if (mode == M_PERSISTENT) rc = convoy_start(&req);
        if (!rc) rc = convoy_wait(&req);
        if (rc) snprintf(why, sizeof why, "wait returned %d", rc);
    }
    ok = !rc && verify(&b, rb, why, sizeof why);
    /* The forced algorithm ran (the default's choice is whatever it is; without
     * CONVOY_ALGO_STRICT a forced algorithm that does not apply falls back to it). */
    const char *ran = convoy__comm_last_algo(c->comm);
    if (ok && algo && f->n > 0 && getenv("CONVOY_ALGO_STRICT") && (!ran || strcmp(ran, algo))) {
        ok = 0;
        snprintf(why, sizeof why, "ran %s", ran ? ran : "nothing");
    }
    if (mode == M_PERSISTENT && !rc) {
        /* A second start with new data, the same request. */
        bufs b2;
        make_bufs(f, c, f->seed + 77, &b2);
        if (b.sbuf) memcpy(b.sbuf, b2.sbuf, b.sbytes);
        memcpy(rb, b2.rin, b.rbytes);
        rc = convoy_start(&req);
        if (!rc) rc = convoy_wait(&req);
        if (b.sbuf) memcpy(b2.sbuf, b.sbuf, b.sbytes);
        if (ok && (rc || !verify(&b2, rb, why, sizeof why))) {
            ok = 0;
            if (rc) snprintf(why, sizeof why, "second start: %d", rc);
        }
        free_bufs(&b2);
        convoy_request_free(&req);
    }
    tc_check(c->comm, ok, what, why);
    free(rb);
    free_bufs(&b);
    set_algo(f->k, NULL);
}

/* The native collective against the reference (its untouched buffers are not checked:
 * MPI leaves Exscan's rank 0 and Reduce's other ranks undefined). */
static int g_mpich;

static void run_native(const cfg *f, const tcomm *c)
{
    /* MPICH 4.0's MPI_Reduce crashes (SIGSEGV in its reduce-scatter + gather path) with
     * MPI_IN_PLACE at a root other than 0 from about 1000 ints on: not called there. */
    if (g_mpich && f->k == K_REDUCE && f->inplace && f->root != 0 && f->n >= 256) return;
    char what[256], why[256] = "";
    describe(f, c, "native", M_BLOCKING, what, sizeof what);
    tc_case(what);
    if (g_verbose && c->rank == 0) fprintf(stderr, "%s\n", what);
    bufs b;
    make_bufs(f, c, f->seed, &b);
    int *rb = malloc(b.rbytes);
    memcpy(rb, b.rin, b.rbytes);
    call cl = {f->k,      b.sbuf ? (const void *)b.sbuf : MPI_IN_PLACE,
               rb,        (int)(f->k == K_ALLTOALL ? b.scount / c->size : f->n),
               (int)f->n, f->st->t,
               f->rt->t,  f->rt->op,
               f->root,   c->comm};
    int rc = native(&cl);
    int ok = !rc && (!has_result(f, c->rank) || verify(&b, rb, why, sizeof why));
    if (rc) snprintf(why, sizeof why, "returned %d", rc);
    tc_check(c->comm, ok, what, why);
    free(rb);
    free_bufs(&b);
}

/* Every algorithm of the collective (NULL: the default first), those that keep rank order
 * only for a non-commutative op. */
static int algos(int k, int noncomm, const char **out, int max, int declined)
{
    int n = 0;
    if (!declined) out[n++] = NULL;
    for (int i = 0; i < convoy__nalgos && n < max; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (!convoy__algo_serves(al, kcoll[k])) continue;
        int keeps = (al->props & CONVOY_ALGO_NONCOMMUTATIVE) != 0;
        if (declined ? noncomm && !keeps : !noncomm || keeps) out[n++] = al->name;
    }
    return n;
}

/* Forcing an algorithm that does not keep rank order on a non-commutative op is refused
 * under CONVOY_ALGO_STRICT (an error on every rank, nothing hangs); without it the default
 * serves the call correctly. */
static void run_declined(const cfg *f, const tcomm *c, const char *algo)
{
    char what[256], why[64] = "";
    describe(f, c, algo, M_BLOCKING, what, sizeof what);
    strncat(what, ": refused", sizeof what - strlen(what) - 1);
    tc_case(what);
    set_algo(f->k, algo);
    bufs b;
    make_bufs(f, c, f->seed, &b);
    int *rb = malloc(b.rbytes);
    memcpy(rb, b.rin, b.rbytes);
    call cl = {f->k,      b.sbuf ? (const void *)b.sbuf : MPI_IN_PLACE,
               rb,        (int)f->n,
               (int)f->n, f->st->t,
               f->rt->t,  f->rt->op,
               f->root,   c->comm};
    int rc = start(&cl, M_BLOCKING, NULL);
    if (!rc) snprintf(why, sizeof why, "it ran");
    tc_check(c->comm, rc != MPI_SUCCESS, what, why);
    free(rb);
    free_bufs(&b);
    unsetenv("CONVOY_ALGO_STRICT");
    run_convoy(f, c, algo, M_BLOCKING); /* not strict: the default serves it */
    setenv("CONVOY_ALGO_STRICT", "1", 1);
    set_algo(f->k, NULL);
}

/* Every algorithm in every mode for one configuration, after the native check. */
static void run_all(const cfg *f, const tcomm *c, int modes)
{
    run_native(f, c);
    const char *names[32];
    const int noncomm = f->k != K_ALLTOALL && !f->rt->commute;
    int n = algos(f->k, noncomm, names, 32, 0);
    for (int a = 0; a < n; a++)
        for (int m = 0; m < M_N; m++)
            if (modes & (1 << m)) run_convoy(f, c, names[a], m);
    if (noncomm) {
        n = algos(f->k, 1, names, 32, 1);
        for (int a = 0; a < n; a++)
            run_declined(f, c, names[a]);
    }
}

/* The modes per count index (bits of enum mode): every mode at 7 elements; the others in
 * fewer modes, to keep the run short (the schedules do not depend on the mode). */
static const int count_modes[] = {1, 3, 7, 5, 1};

/* first: the first count index to run (the reversed-rank communicator skips 0 and 1). */
static void run_comm(const tcomm *c, int large, int first)
{
    const int P = c->size;
    const int64_t counts[] = {0, 1, 7, 1000, 70000};
    const int ncounts = large ? 5 : 4;
    const ttype *rtypes[] = {&T_int, &T_vec, &T_mat};
    uint64_t seed = 1;
    /* Reductions: every type, count, in place or not, all modes; the root rotates. */
    for (int k = K_REDUCE; k <= K_EXSCAN; k++)
        for (int t = 0; t < 3; t++)
            for (int ci = first; ci < ncounts; ci++)
                for (int ip = 0; ip < 2; ip++) {
                    cfg f = {k, rtypes[t], rtypes[t], counts[ci], 1, ip, (int)(seed % P), seed};
                    seed++;
                    /* The large count: blocking only, to keep the run short. */
                    run_all(&f, c, count_modes[ci]);
                }
    /* Every root of Reduce, every algorithm, blocking, int and the ordered op. */
    for (int root = 0; root < P; root++)
        for (int t = 0; t < 3; t += 2)
            for (int ip = 0; ip < 2; ip++) {
                cfg f = {K_REDUCE, rtypes[t], rtypes[t], 7, 1, ip, root, seed++};
                run_all(&f, c, 1);
            }
    /* Alltoall: int -> int, int -> derived (two ints per element) and back, in place. */
    const ttype *pairs[][2] = {{&T_int, &T_int}, {&T_int, &T_vec}, {&T_vec, &T_int}};
    for (int pi = 0; pi < 3; pi++)
        for (int ci = first; ci < ncounts; ci++)
            for (int ip = 0; ip < 2; ip++) {
                const ttype *st = pairs[pi][0], *rt = pairs[pi][1];
                if (ip) st = rt; /* in place: the receive type only */
                if (ip && pi == 2) continue;
                int64_t n = counts[ci] > 1000 ? counts[ci] / P : counts[ci];
                if (n % 2 && st->w > rt->w) n++; /* whole send elements per block */
                cfg f = {K_ALLTOALL, st, rt, n, 1, ip, 0, seed++};
                run_all(&f, c, count_modes[ci]);
            }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(120);
    g_verbose = getenv("CONVOY_TEST_VERBOSE") != NULL;
    int large = argc > 1 && !strcmp(argv[1], "--large");
    setenv("CONVOY_ALGO_STRICT", "1", 1);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    g_mpich = strstr(lib, "MPICH") != NULL;
    make_types();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tcomm w = {MPI_COMM_NULL, "world", rank, size}, rev = w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w.comm);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev.comm);
    MPI_Comm_rank(rev.comm, &rev.rank);
    rev.name = "reversed ranks";
    MPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(rev.comm, MPI_ERRORS_RETURN);
    run_comm(&w, large, 0);
    run_comm(&rev, 0, 2);
    MPI_Comm_free(&w.comm);
    MPI_Comm_free(&rev.comm);
    free_types();
    int rc = tc_finish();
    MPI_Finalize();
    return rc;
}
