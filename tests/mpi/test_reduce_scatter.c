/*
 * Correctness of Reduce_scatter_block and Reduce_scatter, at one process count (one mpirun
 * runs all cases): every registered algorithm and the default selection, in every mode
 * (blocking, nonblocking, persistent), against a reference derived by hand (the
 * contributions folded in rank order with MPI_Reduce_local over the whole vector, then
 * rank i's block); the native collective (PMPI_Reduce_scatter(_block)) is checked against
 * the same reference, so the test cannot pass by agreeing with itself.
 *
 * Covered: every predefined op on every C type it is defined for (integers of every width
 * and signedness, MPI_AINT/OFFSET/COUNT, float, double and long double with integer values
 * so that results are exact, complex, C_BOOL, BYTE, the value-index pairs for
 * MAXLOC/MINLOC), compared value by value (padding is not data); a user-defined commutative
 * op and a non-commutative one (2x2 matrix product, which catches any change of rank
 * order); counts 0, 1, 255, odd, irregular with zeros, one rank with everything, >= 8 MB
 * (--large); MPI_IN_PLACE (the input in the receive buffer, the block at its start); guard
 * bytes after the block and an unchanged send buffer; world, reversed-rank and odd/even
 * communicators; persistent requests started 20 times with new data, the schedule built
 * once; each forced algorithm really building its schedule.
 *
 * Usage: mpirun -n P test_reduce_scatter [--large]; CONVOY_TEST_VERBOSE=1 names each case.
 */
#include "common.h"

#include <stddef.h>

#include "api/api.h"
#include "convoy.h"
#include "select/select.h"

/* --- datatypes ----------------------------------------------------------------------- */

enum cls { C_SINT, C_UINT, C_FLT, C_CPLX, C_BOOL, C_BYTE, C_PAIR, C_MAT };

typedef struct ttype {
    const char *name;
    MPI_Datatype t;
    int cls;
    int vsize; /* bytes of the value (of one component for complex) */
    int vcls;  /* pairs: the value's class (C_SINT or C_FLT) */
    int ioff;  /* pairs: offset of the int index */
    MPI_Aint extent;
} ttype;

struct fi {
    float v;
    int i;
};
struct di {
    double v;
    int i;
};
struct li {
    long v;
    int i;
};
struct ii {
    int v;
    int i;
};
struct si {
    short v;
    int i;
};
struct ldi {
    long double v;
    int i;
};

static MPI_Datatype T_mat;

#define NT 40
static ttype types[NT];
static int ntypes;

static void add_type(const char *name, MPI_Datatype t, int cls, int vsize, int vcls, int ioff)
{
    ttype *x = &types[ntypes++];
    x->name = name;
    x->t = t;
    x->cls = cls;
    x->vsize = vsize;
    x->vcls = vcls;
    x->ioff = ioff;
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, &x->extent);
}

static void make_types(void)
{
    add_type("int", MPI_INT, C_SINT, sizeof(int), 0, 0);
    add_type("long", MPI_LONG, C_SINT, sizeof(long), 0, 0);
    add_type("short", MPI_SHORT, C_SINT, sizeof(short), 0, 0);
    add_type("unsigned-short", MPI_UNSIGNED_SHORT, C_UINT, sizeof(short), 0, 0);
    add_type("unsigned", MPI_UNSIGNED, C_UINT, sizeof(unsigned), 0, 0);
    add_type("unsigned-long", MPI_UNSIGNED_LONG, C_UINT, sizeof(long), 0, 0);
    add_type("long-long", MPI_LONG_LONG_INT, C_SINT, sizeof(long long), 0, 0);
    add_type("unsigned-long-long", MPI_UNSIGNED_LONG_LONG, C_UINT, sizeof(long long), 0, 0);
    add_type("signed-char", MPI_SIGNED_CHAR, C_SINT, 1, 0, 0);
    add_type("unsigned-char", MPI_UNSIGNED_CHAR, C_UINT, 1, 0, 0);
    add_type("int8", MPI_INT8_T, C_SINT, 1, 0, 0);
    add_type("int16", MPI_INT16_T, C_SINT, 2, 0, 0);
    add_type("int32", MPI_INT32_T, C_SINT, 4, 0, 0);
    add_type("int64", MPI_INT64_T, C_SINT, 8, 0, 0);
    add_type("uint8", MPI_UINT8_T, C_UINT, 1, 0, 0);
    add_type("uint16", MPI_UINT16_T, C_UINT, 2, 0, 0);
    add_type("uint32", MPI_UINT32_T, C_UINT, 4, 0, 0);
    add_type("uint64", MPI_UINT64_T, C_UINT, 8, 0, 0);
    add_type("aint", MPI_AINT, C_SINT, sizeof(MPI_Aint), 0, 0);
    add_type("offset", MPI_OFFSET, C_SINT, sizeof(MPI_Offset), 0, 0);
    add_type("count", MPI_COUNT, C_SINT, sizeof(MPI_Count), 0, 0);
    add_type("float", MPI_FLOAT, C_FLT, sizeof(float), 0, 0);
    add_type("double", MPI_DOUBLE, C_FLT, sizeof(double), 0, 0);
    add_type("long-double", MPI_LONG_DOUBLE, C_FLT, sizeof(long double), 0, 0);
    add_type("float-complex", MPI_C_FLOAT_COMPLEX, C_CPLX, sizeof(float), 0, 0);
    add_type("double-complex", MPI_C_DOUBLE_COMPLEX, C_CPLX, sizeof(double), 0, 0);
    add_type("bool", MPI_C_BOOL, C_BOOL, sizeof(_Bool), 0, 0);
    add_type("byte", MPI_BYTE, C_BYTE, 1, 0, 0);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &T_mat);
    MPI_Type_commit(&T_mat);
    add_type("mat2x2", T_mat, C_MAT, sizeof(unsigned), 0, 0);
}

/* The MAXLOC/MINLOC pairs, apart: they only take those two ops. */
static ttype pairs[6];
static void make_pairs(void)
{
    int save = ntypes;
    add_type("float-int", MPI_FLOAT_INT, C_PAIR, sizeof(float), C_FLT, offsetof(struct fi, i));
    add_type("double-int", MPI_DOUBLE_INT, C_PAIR, sizeof(double), C_FLT, offsetof(struct di, i));
    add_type("long-int", MPI_LONG_INT, C_PAIR, sizeof(long), C_SINT, offsetof(struct li, i));
    add_type("2int", MPI_2INT, C_PAIR, sizeof(int), C_SINT, offsetof(struct ii, i));
    add_type("short-int", MPI_SHORT_INT, C_PAIR, sizeof(short), C_SINT, offsetof(struct si, i));
    add_type("long-double-int", MPI_LONG_DOUBLE_INT, C_PAIR, sizeof(long double), C_FLT,
             offsetof(struct ldi, i));
    memcpy(pairs, &types[save], sizeof pairs);
    ntypes = save;
}

/* --- values -------------------------------------------------------------------------- */

static void put_int(void *p, int size, int64_t v)
{
    switch (size) {
    case 1: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        int16_t x = (int16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static int64_t get_int(const void *p, int size)
{
    switch (size) {
    case 1: {
        int8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    case 2: {
        int16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    case 4: {
        int32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    default: {
        int64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static void put_flt(void *p, int size, int64_t v)
{
    if (size == sizeof(float)) {
        float x = (float)v;
        memcpy(p, &x, sizeof x);
    } else if (size == sizeof(double)) {
        double x = (double)v;
        memcpy(p, &x, sizeof x);
    } else {
        long double x = (long double)v;
        memcpy(p, &x, sizeof x);
    }
}

static long double get_flt(const void *p, int size)
{
    if (size == sizeof(float)) {
        float x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    if (size == sizeof(double)) {
        double x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    long double x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* Value classes: ranges chosen per op so that nothing overflows a signed type and every
 * floating-point partial result is an exact integer (for up to 8 processes). */
enum vclass { V_SUM, V_PROD, V_MINMAX, V_BIT, V_LAND, V_LOR, V_LXOR, V_LOC, V_MODMUL, V_MAT };

static int g_size;

static int64_t gen_scalar(int vc, int cls, int vsize, uint64_t h)
{
    static const int64_t s4[4] = {1, 2, -1, -2};
    const int sign = cls == C_SINT || cls == C_FLT;
    switch (vc) {
    case V_SUM: return sign ? (int64_t)(h % 7) - 3 : (int64_t)(h % 4);
    case V_PROD:
        if (!sign) return 1 + (int64_t)(h % 3); /* unsigned: wraps the same in any order */
        return vsize == 1 ? ((h & 1) ? 1 : -1) : s4[h % 4];
    case V_MINMAX: return sign ? (int64_t)(h % 201) - 100 : (int64_t)(h % 201);
    case V_BIT: return (int64_t)(h >> 3);
    case V_LAND: return (h % (uint64_t)(2 * g_size + 1) == 0) ? 0 : 1 + (int64_t)(h % 3);
    case V_LOR: return (h % (uint64_t)(2 * g_size + 1) == 0) ? 1 + (int64_t)(h % 3) : 0;
    case V_LXOR: return (h & 1) ? 0 : 1 + (int64_t)(h % 3);
    case V_LOC: return (int64_t)(h % 4);
    case V_MODMUL: return 1 + (int64_t)(h % 65520);
    default: return (int64_t)(h % 4);
    }
}

/* Writes element e of rank's contribution. */
static void gen(const ttype *t, int vc, char *p, uint64_t seed, int rank, int64_t e)
{
    uint64_t h = tc_hash(seed, rank, e);
    switch (t->cls) {
    case C_SINT:
    case C_UINT: put_int(p, t->vsize, gen_scalar(vc, t->cls, t->vsize, h)); break;
    case C_FLT: put_flt(p, t->vsize, gen_scalar(vc, C_FLT, t->vsize, h)); break;
    case C_CPLX: {
        /* Gaussian integers: products of {1, i, -1, 1+i} stay small and exact. */
        static const int pr[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {1, 1}};
        int64_t re, im;
        if (vc == V_PROD) {
            re = pr[h % 4][0];
            im = pr[h % 4][1];
        } else {
            re = (int64_t)(h % 7) - 3;
            im = (int64_t)((h >> 8) % 7) - 3;
        }
        put_flt(p, t->vsize, re);
        put_flt(p + t->vsize, t->vsize, im);
        break;
    }
    case C_BOOL: {
        _Bool b = gen_scalar(vc, C_SINT, 1, h) != 0;
        memcpy(p, &b, sizeof b);
        break;
    }
    case C_BYTE: {
        unsigned char b = (unsigned char)(h >> 11);
        memcpy(p, &b, 1);
        break;
    }
    case C_PAIR: {
        int64_t v = (int64_t)(h % 4);
        int idx = (int)((h >> 8) % 10) - 5;
        if (t->vcls == C_FLT)
            put_flt(p, t->vsize, v);
        else
            put_int(p, t->vsize, v);
        memcpy(p + t->ioff, &idx, sizeof idx);
        break;
    }
    case C_MAT: {
        unsigned m[4];
        for (int k = 0; k < 4; k++)
            m[k] = (unsigned)((h >> (8 * k)) % 4);
        memcpy(p, m, sizeof m);
        break;
    }
    }
}

static void fill(const ttype *t, int vc, char *p, int64_t n, uint64_t seed, int rank)
{
    for (int64_t e = 0; e < n; e++)
        gen(t, vc, p + e * t->extent, seed, rank, e);
}

/* Whether two elements hold the same values (padding ignored). */
static int elem_equal(const ttype *t, const char *a, const char *b)
{
    switch (t->cls) {
    case C_SINT:
    case C_UINT: return get_int(a, t->vsize) == get_int(b, t->vsize);
    case C_FLT: return get_flt(a, t->vsize) == get_flt(b, t->vsize);
    case C_CPLX:
        return get_flt(a, t->vsize) == get_flt(b, t->vsize) &&
               get_flt(a + t->vsize, t->vsize) == get_flt(b + t->vsize, t->vsize);
    case C_BOOL: {
        _Bool x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    case C_BYTE: return *(const unsigned char *)a == *(const unsigned char *)b;
    case C_PAIR: {
        int ia, ib;
        memcpy(&ia, a + t->ioff, sizeof ia);
        memcpy(&ib, b + t->ioff, sizeof ib);
        int same = t->vcls == C_FLT ? get_flt(a, t->vsize) == get_flt(b, t->vsize)
                                    : get_int(a, t->vsize) == get_int(b, t->vsize);
        return same && ia == ib;
    }
    default: return memcmp(a, b, (size_t)t->extent) == 0;
    }
}

/* --- ops ----------------------------------------------------------------------------- */

static int g_bad_op_type;

static void op_modmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT) g_bad_op_type = 1;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (int)(((int64_t)a[i] * b[i]) % 65521);
}

/* Non-commutative: inout = in x inout (in holds the lower ranks). */
static void op_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != T_mat) g_bad_op_type = 1;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        unsigned r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0;
        b[1] = r1;
        b[2] = r2;
        b[3] = r3;
    }
}

static MPI_Op OP_modmul, OP_matmul;

typedef struct opdesc {
    const char *name;
    MPI_Op op;
    int vc, commutative;
} opdesc;

static opdesc O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, O_MAXLOC,
    O_MINLOC, O_MODMUL, O_MATMUL;

static void make_ops(void)
{
    MPI_Op_create(op_modmul, 1, &OP_modmul);
    MPI_Op_create(op_matmul, 0, &OP_matmul);
    O_SUM = (opdesc){"SUM", MPI_SUM, V_SUM, 1};
    O_PROD = (opdesc){"PROD", MPI_PROD, V_PROD, 1};
    O_MAX = (opdesc){"MAX", MPI_MAX, V_MINMAX, 1};
    O_MIN = (opdesc){"MIN", MPI_MIN, V_MINMAX, 1};
    O_BAND = (opdesc){"BAND", MPI_BAND, V_BIT, 1};
    O_BOR = (opdesc){"BOR", MPI_BOR, V_BIT, 1};
    O_BXOR = (opdesc){"BXOR", MPI_BXOR, V_BIT, 1};
    O_LAND = (opdesc){"LAND", MPI_LAND, V_LAND, 1};
    O_LOR = (opdesc){"LOR", MPI_LOR, V_LOR, 1};
    O_LXOR = (opdesc){"LXOR", MPI_LXOR, V_LXOR, 1};
    O_MAXLOC = (opdesc){"MAXLOC", MPI_MAXLOC, V_LOC, 1};
    O_MINLOC = (opdesc){"MINLOC", MPI_MINLOC, V_LOC, 1};
    O_MODMUL = (opdesc){"user-modmul(commutative)", OP_modmul, V_MODMUL, 1};
    O_MATMUL = (opdesc){"user-matmul(non-commutative)", OP_matmul, V_MAT, 0};
}

/* Which predefined ops apply to a class (MPI-4.0 §6.9.2). */
static int op_fits(const opdesc *o, const ttype *t)
{
    const int integer = t->cls == C_SINT || t->cls == C_UINT;
    if (o == &O_MAX || o == &O_MIN) return integer || t->cls == C_FLT;
    if (o == &O_SUM || o == &O_PROD) return integer || t->cls == C_FLT || t->cls == C_CPLX;
    if (o == &O_LAND || o == &O_LOR || o == &O_LXOR) return integer || t->cls == C_BOOL;
    if (o == &O_BAND || o == &O_BOR || o == &O_BXOR) return integer || t->cls == C_BYTE;
    if (o == &O_MAXLOC || o == &O_MINLOC) return t->cls == C_PAIR;
    return 0;
}

/* --- running one call ---------------------------------------------------------------- */

enum mode { M_BLOCKING = 1, M_NONBLOCKING = 2, M_PERSISTENT = 4 };
static const char *mode_name(int m)
{
    return m == M_BLOCKING ? "blocking" : m == M_NONBLOCKING ? "nonblocking" : "persistent";
}

/* Both forms' variables: each form reads its own table's (CONVOY_REDUCE_SCATTER_ALGO,
 * CONVOY_REDUCE_SCATTER_BLOCK_ALGO); the lists below only name algorithms of that table. */
static void force_algo(const char *name)
{
    if (name) {
        setenv("CONVOY_REDUCE_SCATTER_ALGO", name, 1);
        setenv("CONVOY_REDUCE_SCATTER_BLOCK_ALGO", name, 1);
    } else {
        unsetenv("CONVOY_REDUCE_SCATTER_ALGO");
        unsetenv("CONVOY_REDUCE_SCATTER_BLOCK_ALGO");
    }
}

static int form_coll(int block)
{
    return block ? CONVOY_COLL_REDUCE_SCATTER_BLOCK : CONVOY_COLL_REDUCE_SCATTER;
}

/* block: the Reduce_scatter_block form with rc[0] per rank, else Reduce_scatter. */
static int run_rs(int block, int mode, const void *sb, void *rb, const int *rc, MPI_Datatype t,
                  MPI_Op op, MPI_Comm comm)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    int err;
    if (mode == M_BLOCKING)
        return block ? convoy_Reduce_scatter_block(sb, rb, rc[0], t, op, comm)
                     : convoy_Reduce_scatter(sb, rb, rc, t, op, comm);
    if (mode == M_NONBLOCKING) {
        err = block ? convoy_Ireduce_scatter_block(sb, rb, rc[0], t, op, comm, &req)
                    : convoy_Ireduce_scatter(sb, rb, rc, t, op, comm, &req);
        if (err) return err;
        int flag = 0;
        for (int k = 0; k < 3 && !flag && !err; k++)
            err = convoy_test(&req, &flag);
        if (!err && !flag) err = convoy_wait(&req);
        if (!err && req != CONVOY_REQUEST_NULL) return MPI_ERR_REQUEST;
        return err;
    }
    err = block ? convoy_Reduce_scatter_block_init(sb, rb, rc[0], t, op, comm, MPI_INFO_NULL, &req)
                : convoy_Reduce_scatter_init(sb, rb, rc, t, op, comm, MPI_INFO_NULL, &req);
    if (err) return err;
    err = convoy_start(&req);
    if (!err) err = convoy_wait(&req);
    if (!err && req == CONVOY_REQUEST_NULL) return MPI_ERR_REQUEST;
    int err2 = convoy_request_free(&req);
    return err ? err : err2;
}

/* --- the communicator a case runs on ------------------------------------------------- */

typedef struct tcomm {
    MPI_Comm comm;
    char name[32];
    int rank, size;
} tcomm;

static void make_comm(tcomm *c, MPI_Comm comm, const char *name)
{
    c->comm = comm;
    snprintf(c->name, sizeof c->name, "%s", name);
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
}

/* NULL (the default selection) first, then every algorithm of the form's table (for a
 * non-commutative op only those that declare they keep rank order). */
static int algo_list(int block, int noncommutative, const char **names, int max)
{
    int n = 0;
    names[n++] = NULL;
    for (int i = 0; i < convoy__nalgos && n < max; i++) {
        if (!convoy__algo_serves(&convoy__algos[i], form_coll(block))) continue;
        if (noncommutative && !(convoy__algos[i].props & CONVOY_ALGO_NONCOMMUTATIVE)) continue;
        names[n++] = convoy__algos[i].name;
    }
    return n;
}

static int g_verbose, g_large, g_mpich;
static double g_t0;

static void say(const tcomm *c, const char *what)
{
    tc_case(what);
    if (g_verbose && c->rank == 0) {
        fprintf(stderr, "[w%d %.2f s] %s\n", tc_world_rank(), MPI_Wtime() - g_t0, what);
        fflush(stderr);
    }
}

/* --- counts -------------------------------------------------------------------------- */

enum ckind { K_BLOCK, K_ODD, K_IRREG, K_ONE_RANK, K_LARGE };
static const char *const ckind_name[] = {"equal", "odd", "irregular-with-zeros", "one-rank",
                                         "large"};

/* Per-rank counts: equal (`n` each), odd (2r + 1 + n), irregular with zeros (0..9, at
 * least one zero when p > 1), one rank (the middle one) with n + 3, large (>= 8 MB). */
static void make_counts(int *cnt, int p, int kind, int n, int64_t esize, uint64_t seed)
{
    for (int r = 0; r < p; r++) {
        uint64_t h = tc_hash(seed, 77, r);
        switch (kind) {
        case K_BLOCK: cnt[r] = n; break;
        case K_ODD: cnt[r] = 2 * r + 1 + n; break;
        case K_IRREG: cnt[r] = (h % 3 == 0) ? 0 : (int)(h % 10); break;
        case K_ONE_RANK: cnt[r] = r == p / 2 ? n + 3 : 0; break;
        default: {
            /* >= 8 MB in all, irregular: ranks differ by up to a quarter. */
            int64_t per = (8 * 1024 * 1024 + esize * p - 1) / (esize * p) + 1;
            cnt[r] = (int)(per + (int64_t)(h % (uint64_t)(per / 4 + 1)));
            break;
        }
        }
    }
    if (kind == K_IRREG && p > 1) cnt[(int)(seed % (uint64_t)p)] = 0;
}

/* --- one case ------------------------------------------------------------------------ */

#define GUARD 64

/* Checks rank's block (cnt elements) against the reference at element `first`, and the
 * guard bytes after it (not in place: the buffer is the block). */
static int verify(const ttype *t, const char *got, const char *ref, int64_t first, int cnt,
                  int guard, char *detail, size_t len)
{
    for (int64_t k = 0; k < cnt; k++)
        if (!elem_equal(t, got + k * t->extent, ref + (first + k) * t->extent)) {
            snprintf(detail, len, "element %lld of the block (%lld of the vector) differs",
                     (long long)k, (long long)(first + k));
            return 0;
        }
    for (int64_t g = cnt * t->extent; guard && g < cnt * t->extent + GUARD; g++)
        if ((unsigned char)got[g] != (unsigned char)(0xA5 ^ (g % GUARD))) {
            snprintf(detail, len, "guard byte %lld after the block was overwritten",
                     (long long)(g - cnt * t->extent));
            return 0;
        }
    return 1;
}

static void guard_fill(char *p, int64_t bytes)
{
    for (int64_t g = 0; g < bytes; g++)
        p[g] = (char)(0xA5 ^ (g % GUARD));
}

/* One configuration: the native result and every algorithm in every mode of `modes`
 * against the reference. block: the _block form (counts all equal). */
static void case_rs(const tcomm *c, const ttype *t, const opdesc *o, int kind, int n, int block,
                    int inplace, int modes, uint64_t seed)
{
    char what[512], detail[512], e[300];
    const int p = c->size, me = c->rank;
    g_size = p;
    int *cnt = malloc((size_t)p * sizeof *cnt);
    make_counts(cnt, p, block ? K_BLOCK : kind, n, (int64_t)t->extent, seed);
    if (block && kind == K_LARGE) make_counts(cnt, p, K_LARGE, 0, (int64_t)t->extent, 0);
    if (block)
        for (int r = 1; r < p; r++)
            cnt[r] = cnt[0];
    int64_t total = 0, first = 0;
    for (int r = 0; r < p; r++) {
        if (r == me) first = total;
        total += cnt[r];
    }
    snprintf(what, sizeof what, "%s comm=%s type=%s op=%s counts=%s(%d..) total=%lld%s",
             block ? "reduce_scatter_block" : "reduce_scatter", c->name, t->name, o->name,
             block ? "equal" : ckind_name[kind], cnt[0], (long long)total,
             inplace ? " in-place" : "");
    say(c, what);
    const size_t vbytes = (size_t)total * (size_t)t->extent + 1;
    const size_t rbytes = (inplace ? vbytes : (size_t)cnt[me] * (size_t)t->extent) + GUARD;
    char *ref = malloc(vbytes), *tmp = malloc(vbytes), *sb = malloc(vbytes), *sb0 = malloc(vbytes);
    char *rb = malloc(rbytes);
    if (!ref || !tmp || !sb || !sb0 || !rb) {
        tc_check(c->comm, 0, what, "out of memory");
        goto done;
    }
    /* Reference: x_0 op (x_1 op (... op x_{p-1})), as MPI_Reduce_local folds. */
    fill(t, o->vc, ref, total, seed, p - 1);
    for (int r = p - 2; r >= 0; r--) {
        fill(t, o->vc, tmp, total, seed, r);
        if (total > 0) MPI_Reduce_local(tmp, ref, (int)total, t->t, o->op);
    }
    fill(t, o->vc, sb, total, seed, me);
    memcpy(sb0, sb, vbytes);

    /* The native collective against the reference (else the test itself is wrong). MPICH
     * 4.0's in-place Reduce_scatter moves a rank's block to the buffer's start with a memcpy
     * that asserts when the two overlap (0 < offset < count), ending the run: not called
     * there (Convoy's result is still checked against the reference). */
    int overlap = 0;
    for (int r = 0, off = 0; r < p; off += cnt[r], r++)
        overlap |= inplace && off > 0 && off < cnt[r];
    if (!(overlap && g_mpich)) {
        char w2[600];
        snprintf(w2, sizeof w2, "%s algo=native(PMPI)", what);
        guard_fill(rb, (int64_t)rbytes);
        if (inplace) memcpy(rb, sb, vbytes - 1);
        int rc =
            block ? PMPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sb, rb, cnt[0], t->t, o->op,
                                              c->comm)
                  : PMPI_Reduce_scatter(inplace ? MPI_IN_PLACE : sb, rb, cnt, t->t, o->op, c->comm);
        int ok = rc == MPI_SUCCESS &&
                 verify(t, rb, ref, first, cnt[me], !inplace, detail, sizeof detail);
        if (rc != MPI_SUCCESS) snprintf(detail, sizeof detail, "%s", tc_errstr(rc, e, sizeof e));
        tc_check(c->comm, ok, w2, detail);
    }

    const char *algos[16];
    int na = algo_list(block, !o->commutative, algos, 16);
    for (int a = 0; a < na; a++)
        for (int m = M_BLOCKING; m <= M_PERSISTENT; m <<= 1) {
            if (!(modes & m)) continue;
            char w2[700];
            snprintf(w2, sizeof w2, "%s algo=%s mode=%s", what, algos[a] ? algos[a] : "default",
                     mode_name(m));
            force_algo(algos[a]);
            tc_case(w2);
            guard_fill(rb, (int64_t)rbytes);
            if (inplace) memcpy(rb, sb, vbytes - 1);
            g_bad_op_type = 0;
            int rc = run_rs(block, m, inplace ? MPI_IN_PLACE : sb, rb, cnt, t->t, o->op, c->comm);
            int ok = rc == MPI_SUCCESS &&
                     verify(t, rb, ref, first, cnt[me], !inplace, detail, sizeof detail);
            if (rc != MPI_SUCCESS)
                snprintf(detail, sizeof detail, "%s", tc_errstr(rc, e, sizeof e));
            if (ok && memcmp(sb, sb0, vbytes) != 0) {
                ok = 0;
                snprintf(detail, sizeof detail, "the send buffer was changed");
            }
            if (ok && g_bad_op_type) {
                ok = 0;
                snprintf(detail, sizeof detail, "a user op was called with another datatype");
            }
            tc_check(c->comm, ok, w2, detail);
        }
    force_algo(NULL);
done:
    free(ref), free(tmp), free(sb), free(sb0), free(rb), free(cnt);
}

static const ttype *find_type(const char *name)
{
    for (int i = 0; i < ntypes; i++)
        if (!strcmp(types[i].name, name)) return &types[i];
    return NULL;
}

static void suite(const tcomm *c, uint64_t seed, int full)
{
    const opdesc *ops[] = {&O_SUM, &O_PROD, &O_MAX,  &O_MIN, &O_BAND,
                           &O_BOR, &O_BXOR, &O_LAND, &O_LOR, &O_LXOR};
    const int all = M_BLOCKING | M_NONBLOCKING | M_PERSISTENT;
    uint64_t s = seed;
    /* Every predefined op on every type it is defined for: one element per rank (block
     * form) and irregular counts with zeros (general form). */
    if (full) {
        for (int i = 0; i < ntypes; i++)
            for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
                if (!op_fits(ops[k], &types[i])) continue;
                case_rs(c, &types[i], ops[k], K_BLOCK, 1, 1, 0, M_BLOCKING, s++);
                case_rs(c, &types[i], ops[k], K_IRREG, 0, 0, 0, M_BLOCKING, s++);
            }
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 2; k++) {
                const opdesc *o = k ? &O_MINLOC : &O_MAXLOC;
                case_rs(c, &pairs[i], o, K_BLOCK, 1, 1, 0, M_BLOCKING, s++);
                case_rs(c, &pairs[i], o, K_IRREG, 0, 0, 0, M_BLOCKING, s++);
            }
    }
    /* Counts and modes on a few combinations, user ops included. */
    const ttype *ti = find_type("int"), *td = find_type("double"), *tm = find_type("mat2x2");
    const struct {
        const ttype *t;
        const opdesc *o;
    } sel[] = {{ti, &O_SUM}, {td, &O_SUM}, {ti, &O_MODMUL}, {tm, &O_MATMUL}, {td, &O_PROD}};
    for (size_t i = 0; i < sizeof sel / sizeof *sel; i++) {
        const ttype *t = sel[i].t;
        const opdesc *o = sel[i].o;
        case_rs(c, t, o, K_BLOCK, 0, 1, 0, all, s++); /* all counts zero */
        case_rs(c, t, o, K_BLOCK, 1, 1, 0, all, s++);
        case_rs(c, t, o, K_BLOCK, 255, 1, 0, all, s++);
        case_rs(c, t, o, K_BLOCK, 37, 1, 1, all, s++); /* odd, in place */
        case_rs(c, t, o, K_ODD, 0, 0, 0, all, s++);
        case_rs(c, t, o, K_IRREG, 0, 0, 0, all, s++);
        case_rs(c, t, o, K_IRREG, 0, 0, 1, all, s++); /* in place */
        case_rs(c, t, o, K_ONE_RANK, 5, 0, 0, all, s++);
        case_rs(c, t, o, K_ODD, 100, 0, 1, M_BLOCKING, s++);
        case_rs(c, t, o, K_BLOCK, 0, 0, 0, M_BLOCKING, s++); /* general form, all zero */
    }
    if (g_large) {
        case_rs(c, ti, &O_SUM, K_LARGE, 0, 1, 0, M_BLOCKING | M_NONBLOCKING, s++);
        case_rs(c, ti, &O_SUM, K_LARGE, 0, 0, 0, M_BLOCKING, s++);
        case_rs(c, td, &O_SUM, K_LARGE, 0, 0, 1, M_BLOCKING, s++);
        case_rs(c, tm, &O_MATMUL, K_LARGE, 0, 0, 0, M_BLOCKING, s++);
    }
}

/* --- persistent: 20 starts with new data, the schedule built once -------------------- */

static void case_persistent(const tcomm *c, const char *algo, int block, uint64_t seed)
{
    char what[256], detail[256] = "";
    const int p = c->size, me = c->rank;
    snprintf(what, sizeof what, "persistent %s comm=%s algo=%s: 20 starts, built once",
             block ? "reduce_scatter_block" : "reduce_scatter", c->name, algo);
    say(c, what);
    int *cnt = malloc((size_t)p * sizeof *cnt);
    make_counts(cnt, p, block ? K_BLOCK : K_ODD, 3, 4, seed);
    int total = 0, first = 0;
    for (int r = 0; r < p; r++) {
        if (r == me) first = total;
        total += cnt[r];
    }
    int *sb = malloc(((size_t)total + 1) * sizeof *sb), *rb = malloc(((size_t)cnt[me] + 1) * 4);
    force_algo(algo);
    convoy_request req = CONVOY_REQUEST_NULL;
    long b0 = convoy__build_count();
    int rc = block ? convoy_Reduce_scatter_block_init(sb, rb, cnt[0], MPI_INT, MPI_SUM, c->comm,
                                                      MPI_INFO_NULL, &req)
                   : convoy_Reduce_scatter_init(sb, rb, cnt, MPI_INT, MPI_SUM, c->comm,
                                                MPI_INFO_NULL, &req);
    force_algo(NULL);
    int ok = rc == MPI_SUCCESS;
    for (int it = 0; it < 20 && ok; it++) {
        for (int e = 0; e < total; e++)
            sb[e] = (int)(tc_hash(seed + (uint64_t)it, me, e) % 1000);
        rc = convoy_start(&req);
        if (!rc) rc = convoy_wait(&req);
        ok = rc == MPI_SUCCESS;
        for (int k = 0; ok && k < cnt[me]; k++) {
            int want = 0;
            for (int r = 0; r < p; r++)
                want += (int)(tc_hash(seed + (uint64_t)it, r, first + k) % 1000);
            if (rb[k] != want) {
                ok = 0;
                snprintf(detail, sizeof detail, "start %d: element %d is %d, want %d", it, k, rb[k],
                         want);
            }
        }
    }
    long builds = convoy__build_count() - b0;
    if (req != CONVOY_REQUEST_NULL) convoy_request_free(&req);
    if (ok && builds != 1) {
        ok = 0;
        snprintf(detail, sizeof detail, "the builder ran %ld times", builds);
    }
    if (!ok && !detail[0]) snprintf(detail, sizeof detail, "rc %d", rc);
    tc_check(c->comm, ok, what, detail);
    free(cnt), free(sb), free(rb);
}

/* A blocking call with counts no other case uses and the algorithm forced: its builder
 * must run (not a fallback to native or to another algorithm's cached schedule). All
 * algorithms get the same arguments, so a forcing that is ignored hits the cache. */
static void case_forced_builds(const tcomm *c, uint64_t seed)
{
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (!convoy__algo_serves(al, CONVOY_COLL_REDUCE_SCATTER_BLOCK)) continue;
        char what[256], detail[256];
        snprintf(what, sizeof what, "reduce_scatter algo=%s comm=%s: forcing it builds it",
                 al->name, c->name);
        int n = 3001 + (int)(seed % 1000) * 2;
        int *in = calloc((size_t)n * (size_t)c->size, sizeof(int)), *out = calloc((size_t)n, 4);
        force_algo(al->name);
        long b0 = convoy__build_count();
        int rc = convoy_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, c->comm);
        long b1 = convoy__build_count();
        force_algo(NULL);
        snprintf(detail, sizeof detail, "rc %d, builder ran %ld times", rc, b1 - b0);
        tc_check(c->comm, rc == MPI_SUCCESS && b1 - b0 == 1, what, detail);
        free(in), free(out);
    }
}

/* Nonblocking and persistent calls on a communicator without Convoy state yet (served by
 * the MPI library while the setup runs), then a blocking one. */
static void case_fresh_comm(uint64_t seed)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    tcomm c;
    make_comm(&c, d, "fresh");
    case_rs(&c, find_type("int"), &O_SUM, K_IRREG, 0, 0, 0, M_NONBLOCKING | M_PERSISTENT, seed);
    case_rs(&c, find_type("int"), &O_SUM, K_ODD, 0, 0, 0, M_BLOCKING, seed + 1);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(100);
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--large") == 0) g_large = 1;
    if (getenv("CONVOY_TEST_LARGE") && atoi(getenv("CONVOY_TEST_LARGE"))) g_large = 1;
    g_verbose = getenv("CONVOY_TEST_VERBOSE") && atoi(getenv("CONVOY_TEST_VERBOSE"));
    {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        g_mpich = strstr(v, "MPICH") != NULL;
    }
    force_algo(NULL);
    make_types();
    make_pairs();
    make_ops();
    g_t0 = tc_now();

    /* The fresh-communicator case first: MPI_COMM_WORLD itself must not have state yet
     * for it to mean anything, and it uses a duplicate. */
    case_fresh_comm(11);

    tcomm world, evenodd, rev;
    make_comm(&world, MPI_COMM_WORLD, "world");
    MPI_Comm c_eo, c_rev;
    MPI_Comm_split(MPI_COMM_WORLD, wr % 2, wr, &c_eo);
    make_comm(&evenodd, c_eo, wr % 2 ? "odd" : "even");
    MPI_Comm_split(MPI_COMM_WORLD, 0, ws - wr, &c_rev);
    make_comm(&rev, c_rev, "reversed");

    const tcomm *comms[] = {&world, &rev, &evenodd};
    for (int k = 0; k < 3; k++) {
        const tcomm *c = comms[k];
        if (k == 2 && ws < 2) continue;
        uint64_t seed = 1000003ull * (uint64_t)(k + 1);
        suite(c, seed, k == 0);
        case_forced_builds(c, seed);
        for (int i = 0; i < convoy__nalgos; i++)
            for (int block = 0; block < 2; block++)
                if (convoy__algo_serves(&convoy__algos[i], form_coll(block)))
                    case_persistent(c, convoy__algos[i].name, block, seed + 7 + (uint64_t)i);
    }

    MPI_Comm_free(&c_eo);
    MPI_Comm_free(&c_rev);
    MPI_Op_free(&OP_modmul);
    MPI_Op_free(&OP_matmul);
    MPI_Type_free(&T_mat);
    if (wr == 0 && g_verbose) fprintf(stderr, "test_reduce_scatter: %.1f s\n", tc_now() - g_t0);
    int status = tc_finish();
    MPI_Finalize();
    return status;
}
