/*
 * Correctness of every registered Allgatherv and Allreduce algorithm, at one process
 * count (one mpirun runs all cases): each result is compared byte for byte with a result
 * derived by hand (Allgatherv: every block placed where its displacement says, gaps
 * untouched; Allreduce: the contributions folded in rank order with MPI_Reduce_local),
 * and the native collective (PMPI_) is checked against the same reference.
 *
 * Covered: counts 0, 1, 255, odd, random with zeros, all zero, one non-zero; packed and
 * non-monotone displacements with gaps (canaries in the gaps); MPI_IN_PLACE; really
 * non-contiguous derived datatypes (resized vectors, one with a negative lower bound,
 * different send and receive types); int, double and float (integer values, so results
 * are exact), long, char, unsigned, short, MPI_2INT; every predefined op that applies,
 * MAXLOC/MINLOC, a user-defined commutative op, a user-defined non-commutative op (2x2
 * matrix product) and a user op on a derived type; MPI_COMM_WORLD, odd/even and
 * reversed-rank sub-communicators, several communicators at once, communicators freed
 * and made again; blocking, nonblocking (test loops, wait) and persistent (100 starts,
 * the schedule built once); overlapping operations on one communicator mixed with the
 * user's own point-to-point traffic (same tags, a wildcard receive). Large counts
 * (>= 8 MB) with --large (or CONVOY_TEST_LARGE=1).
 *
 * Every registered algorithm is forced in turn with CONVOY_<COLL>_ALGO (read per call), and
 * the default selection runs too. For a non-commutative op only algorithms that declare
 * CONVOY_ALGO_NONCOMMUTATIVE are forced; the default selection must avoid the others.
 *
 * The decomposition Convoy uses for each communicator is checked against the one derived
 * by hand from CONVOY_NODEMAP / CONVOY_PPN (when all processes share one host).
 *
 * Usage: mpirun -n P test_coll [--large] [--quick] [--stream] [--cma [--deny-cma]];
 * CONVOY_TEST_VERBOSE=1 names each case. --stream runs only Allgatherv data about 300 node
 * segments large (run it with a small CONVOY_SEGMENT_BYTES and virtual nodes): the default
 * choice and node_segment. --cma runs the single-copy paths (see check_cma_line); with
 * --deny-cma world rank 1 first makes itself unreadable by its peers, as a hardened host
 * would (see deny_cma), and every process must then do without the reads.
 */
#define _GNU_SOURCE /* syscall (--deny-cma) */
#include "common.h"

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "api/api.h"
#include "check/dist.h"
#include "convoy.h"
#include "select/select.h"

/* --- datatypes ------------------------------------------------------------------------ */

enum kind {
    K_INT,
    K_DOUBLE,
    K_FLOAT,
    K_LONG,
    K_SCHAR,
    K_CHAR,
    K_UNSIGNED,
    K_SHORT,
    K_2INT,
    K_MAT,
    /* the remaining predefined reduction types (allreduce_types_suite) */
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_LDOUBLE,
    K_BOOL,
    K_CFLOAT,
    K_CDOUBLE,
    K_FLOAT_INT, /* the MINLOC/MAXLOC pair types */
    K_DOUBLE_INT,
    K_LONG_INT,
    K_SHORT_INT,
    K_LDOUBLE_INT
};

/* A datatype and where its basic elements lie: element e's b-th basic element is at byte
 * e * extent + offs[b] from the buffer pointer. lb < 0 means bytes before the pointer
 * belong to the first element's extent. */
typedef struct layout {
    const char *name;
    MPI_Datatype type;
    int kind;
    int bsize; /* bytes of one basic element */
    int nb;    /* basic elements per element */
    int offs[4];
    MPI_Aint lb, extent;
    /* Types with padding inside an element (pair types, x87 long double): the data bytes
     * [doff[d], doff[d] + dlen[d]); the others are not compared (ndata 0: all are). */
    int ndata, doff[2], dlen[2];
} layout;

/* Zeroes the padding bytes of count elements (MPI moves only data bytes; a reduction may
 * copy a whole struct, padding included, out of scratch memory). */
static void unpad(const layout *l, int64_t count, char *p)
{
    if (!l->ndata) return;
    for (int64_t e = 0; e < count; e++) {
        char *el = p + e * (int64_t)l->extent;
        for (int64_t b = 0; b < (int64_t)l->extent; b++) {
            int data = 0;
            for (int d = 0; d < l->ndata; d++)
                data |= b >= l->doff[d] && b < l->doff[d] + l->dlen[d];
            if (!data) el[b] = 0;
        }
    }
}

static layout L_int, L_double, L_float, L_long, L_schar, L_char, L_unsigned, L_short, L_2int, L_mat,
    L_vec, L_vec3, L_vecneg;
static MPI_Datatype T_mat, T_vec, T_vec3, T_vecneg;

static void layout_basic(layout *l, const char *name, MPI_Datatype t, int kind, int bsize)
{
    memset(l, 0, sizeof *l);
    l->name = name;
    l->type = t;
    l->kind = kind;
    l->bsize = bsize;
    l->nb = 1;
    l->offs[0] = 0;
    l->lb = 0;
    l->extent = bsize;
}

static void make_types(void)
{
    layout_basic(&L_int, "int", MPI_INT, K_INT, (int)sizeof(int));
    layout_basic(&L_double, "double", MPI_DOUBLE, K_DOUBLE, (int)sizeof(double));
    layout_basic(&L_float, "float", MPI_FLOAT, K_FLOAT, (int)sizeof(float));
    layout_basic(&L_long, "long", MPI_LONG, K_LONG, (int)sizeof(long));
    layout_basic(&L_schar, "signed-char", MPI_SIGNED_CHAR, K_SCHAR, 1);
    layout_basic(&L_char, "char", MPI_CHAR, K_CHAR, 1);
    layout_basic(&L_unsigned, "unsigned", MPI_UNSIGNED, K_UNSIGNED, (int)sizeof(unsigned));
    layout_basic(&L_short, "short", MPI_SHORT, K_SHORT, (int)sizeof(short));
    layout_basic(&L_2int, "2int", MPI_2INT, K_2INT, 2 * (int)sizeof(int));

    MPI_Type_contiguous(4, MPI_UNSIGNED, &T_mat);
    MPI_Type_commit(&T_mat);
    layout_basic(&L_mat, "mat2x2", T_mat, K_MAT, 4 * (int)sizeof(unsigned));

    /* vec: ints at 0 and 8, extent 20 (5 ints): gaps at 4..8 and 12..20. */
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 20, &T_vec);
    MPI_Type_commit(&T_vec);
    /* vecneg: the same ints, lower bound -8, extent 24: gaps before, between and after. */
    MPI_Type_create_resized(v, -8, 24, &T_vecneg);
    MPI_Type_commit(&T_vecneg);
    MPI_Type_free(&v);
    /* vec3: ints at 0, 8 and 16, extent 28. */
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 28, &T_vec3);
    MPI_Type_commit(&T_vec3);
    MPI_Type_free(&v);

    layout_basic(&L_vec, "vec(2x1,stride2,ext20)", T_vec, K_INT, (int)sizeof(int));
    L_vec.nb = 2;
    L_vec.offs[1] = 8;
    L_vec.extent = 20;
    layout_basic(&L_vecneg, "vec(lb-8,ext24)", T_vecneg, K_INT, (int)sizeof(int));
    L_vecneg.nb = 2;
    L_vecneg.offs[1] = 8;
    L_vecneg.lb = -8;
    L_vecneg.extent = 24;
    layout_basic(&L_vec3, "vec(3x1,stride2,ext28)", T_vec3, K_INT, (int)sizeof(int));
    L_vec3.nb = 3;
    L_vec3.offs[1] = 8;
    L_vec3.offs[2] = 16;
    L_vec3.extent = 28;
}

static void free_types(void)
{
    MPI_Type_free(&T_mat);
    MPI_Type_free(&T_vec);
    MPI_Type_free(&T_vecneg);
    MPI_Type_free(&T_vec3);
}

/* A buffer of n elements of a layout with canaries everywhere: `pad` bytes before the
 * pointer (for a negative lower bound) and a guard after the last element. */
typedef struct tbuf {
    unsigned char *alloc;
    size_t bytes;
    char *p; /* the pointer handed to MPI */
} tbuf;

#define GUARD 64

static void canary(tbuf *b)
{
    for (size_t i = 0; i < b->bytes; i++)
        b->alloc[i] = (unsigned char)(0xA5 ^ (i * 31));
}

static int tbuf_alloc(tbuf *b, const layout *l, int64_t n)
{
    size_t pad = l->lb < 0 ? (size_t)(-l->lb) + 8 : 8;
    b->bytes = pad + (size_t)(n > 0 ? n : 0) * (size_t)l->extent + GUARD;
    b->alloc = malloc(b->bytes);
    if (!b->alloc) return 0;
    b->p = (char *)b->alloc + pad;
    canary(b);
    return 1;
}

static void tbuf_free(tbuf *b)
{
    free(b->alloc);
    b->alloc = NULL;
}

/* --- values ----------------------------------------------------------------------------- */

/* Value classes: what range the generated values have, chosen per op so that no integer
 * overflows and every floating-point partial result is an exact integer. */
enum vclass { V_SUM, V_PROD, V_MINMAX, V_BIT, V_LAND, V_LOR, V_LOC, V_MODMUL, V_MAT, V_ANY };

static int g_size; /* processes of the communicator a case runs on (for V_LAND/V_LOR) */

static void store(int kind, void *p, int64_t v)
{
    switch (kind) {
    case K_INT: {
        int x = (int)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_DOUBLE: {
        double x = (double)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_FLOAT: {
        float x = (float)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_LONG: {
        long x = (long)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_SCHAR: {
        signed char x = (signed char)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_CHAR: {
        char x = (char)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_UNSIGNED: {
        unsigned x = (unsigned)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case K_SHORT: {
        short x = (short)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    default: break;
    }
}

static int is_signed_kind(int kind)
{
    return kind != K_UNSIGNED && kind != K_U8 && kind != K_U16 && kind != K_U32 && kind != K_U64 &&
           kind != K_BOOL;
}

/* The extra kinds: integers of every width, long double, bool, complex. */
static int store_extra(int kind, int vc, void *p, int64_t v, uint64_t h)
{
#define ST(T)                                                                                      \
    {                                                                                              \
        T x = (T)v;                                                                                \
        memcpy(p, &x, sizeof x);                                                                   \
        return 1;                                                                                  \
    }
    switch (kind) {
    case K_I8: ST(int8_t)
    case K_U8: ST(uint8_t)
    case K_I16: ST(int16_t)
    case K_U16: ST(uint16_t)
    case K_I32: ST(int32_t)
    case K_U32: ST(uint32_t)
    case K_I64: ST(int64_t)
    case K_U64: ST(uint64_t)
    case K_BOOL: ST(_Bool)
    case K_LDOUBLE: {
        long double x = (long double)v;
        memcpy(p, &x, sizeof x < 10 ? sizeof x : 10); /* x87: 10 data bytes, then padding */
        return 1;
    }
    /* Complex products get real factors 1, 2 (no sums that cancel to a zero whose sign
     * depends on the order); sums imaginary parts -1, 0, 1. */
    case K_CFLOAT: {
        float x[2] = {vc == V_PROD ? (float)(1 + (h >> 5) % 2) : (float)v,
                      vc == V_PROD ? 0.0f : (float)((int)((h >> 5) % 3) - 1)};
        memcpy(p, x, sizeof x);
        return 1;
    }
    case K_CDOUBLE: {
        double x[2] = {vc == V_PROD ? (double)(1 + (h >> 5) % 2) : (double)v,
                       vc == V_PROD ? 0.0 : (double)((int)((h >> 5) % 3) - 1)};
        memcpy(p, x, sizeof x);
        return 1;
    }
    default: return 0;
    }
#undef ST
}

/* Where the int of a pair type lies (as in the C struct {T v; int i;}) and sizeof(T). */
static int pair_ioff(int kind, int *vsize)
{
#define OFF(T)                                                                                     \
    {                                                                                              \
        struct pr {                                                                                \
            T v;                                                                                   \
            int i;                                                                                 \
        };                                                                                         \
        *vsize = (int)sizeof(T);                                                                   \
        return (int)offsetof(struct pr, i);                                                        \
    }
    switch (kind) {
    case K_FLOAT_INT: OFF(float)
    case K_DOUBLE_INT: OFF(double)
    case K_LONG_INT: OFF(long)
    case K_SHORT_INT: OFF(short)
    case K_LDOUBLE_INT: OFF(long double)
    default: *vsize = (int)sizeof(int); return (int)sizeof(int);
    }
#undef OFF
}

/* A MINLOC/MAXLOC pair {value, int}: few distinct values (ties), any indices. */
static int store_pair(int kind, void *p, uint64_t h)
{
    const int v = (int)(h % 4), idx = (int)((h >> 8) % 10) - 5;
#define PAIR(T)                                                                                    \
    {                                                                                              \
        struct {                                                                                   \
            T v;                                                                                   \
            int i;                                                                                 \
        } x;                                                                                       \
        T tv = (T)v;                                                                               \
        memcpy(p, &tv, sizeof tv < 10 ? sizeof tv : 10); /* long double: 10 data bytes */          \
        memcpy((char *)p + ((char *)&x.i - (char *)&x), &idx, sizeof idx);                         \
        return 1;                                                                                  \
    }
    switch (kind) {
    case K_FLOAT_INT: PAIR(float)
    case K_DOUBLE_INT: PAIR(double)
    case K_LONG_INT: PAIR(long)
    case K_SHORT_INT: PAIR(short)
    case K_LDOUBLE_INT: PAIR(long double)
    default: return 0;
    }
#undef PAIR
}

/* Writes the value of basic element (rank, i) of class vc at p. */
static void gen_value(int kind, int vc, void *p, uint64_t seed, int rank, int64_t i)
{
    uint64_t h = tc_hash(seed, rank, i);
    int64_t v = 0;
    const bool small =
        kind == K_SCHAR || kind == K_CHAR || kind == K_I8 || kind == K_U8 || kind == K_BOOL;
    if (store_pair(kind, p, h)) return;
    if (kind == K_2INT) {
        /* MAXLOC/MINLOC: few distinct values (ties), any indices. */
        int x[2] = {(int)(h % 4), (int)((h >> 8) % 10) - 5};
        memcpy(p, x, sizeof x);
        return;
    }
    if (kind == K_MAT) {
        unsigned m[4];
        for (int k = 0; k < 4; k++)
            m[k] = (unsigned)((h >> (8 * k)) % 4);
        memcpy(p, m, sizeof m);
        return;
    }
    switch (vc) {
    case V_SUM:
        if (!is_signed_kind(kind))
            v = (int64_t)(h % 101);
        else if (small)
            v = (int64_t)(h % 31) - 15;
        else
            v = (int64_t)(h % 201) - 100;
        break;
    case V_PROD: {
        /* |product| <= 2^8 for 8 processes; chars only see +-1. */
        static const int64_t s4[4] = {1, 2, -1, -2};
        if (!is_signed_kind(kind))
            v = 1 + (int64_t)(h % 2);
        else if (small)
            v = (h & 1) ? 1 : -1;
        else
            v = s4[h % 4];
        break;
    }
    case V_MINMAX:
        if (!is_signed_kind(kind))
            v = (int64_t)(h % 2001);
        else if (small)
            v = (int64_t)(h % 201) - 100;
        else
            v = (int64_t)(h % 2001) - 1000;
        break;
    case V_BIT: v = (int64_t)(h >> 1); break;
    case V_LAND: /* mostly true, so that the result is not always false */
        v = (h % (uint64_t)(2 * g_size + 1) == 0) ? 0 : 1 + (int64_t)(h % 3);
        break;
    case V_LOR: /* mostly false */
        v = (h % (uint64_t)(2 * g_size + 1) == 0) ? 1 + (int64_t)(h % 3) : 0;
        break;
    case V_MODMUL: v = 1 + (int64_t)(h % 65520); break;
    case V_ANY:
    default:
        if (kind == K_DOUBLE || kind == K_FLOAT)
            v = (int64_t)(h % 2000001) - 1000000;
        else
            v = (int64_t)(h >> 3);
        break;
    }
    if (store_extra(kind, vc, p, v, h)) return;
    store(kind, p, v);
}

/* Writes n basic elements of rank's contribution into a buffer of layout l, starting at
 * element first_elem. */
static void fill(const layout *l, int vc, char *p, int64_t first_elem, int64_t nbasic,
                 uint64_t seed, int rank)
{
    for (int64_t j = 0; j < nbasic; j++) {
        int64_t e = first_elem + j / l->nb;
        int b = (int)(j % l->nb);
        gen_value(l->kind, vc, p + e * (int64_t)l->extent + l->offs[b], seed, rank, j);
    }
}

/* Compares two buffers of the same shape; describes the first difference. */
static int same(const tbuf *got, const tbuf *exp, const layout *l, char *detail, size_t len)
{
    if (memcmp(got->alloc, exp->alloc, exp->bytes) == 0) return 1;
    size_t i = 0;
    while (i < exp->bytes && got->alloc[i] == exp->alloc[i])
        i++;
    long off = (long)((char *)exp->alloc + i - exp->p);
    int ndiff = 0;
    for (size_t k = 0; k < exp->bytes; k++)
        ndiff += got->alloc[k] != exp->alloc[k];
    snprintf(detail, len,
             "%d bytes differ; first at byte %ld from the buffer (element %ld of %s, byte %ld "
             "in it): got 0x%02x, expected 0x%02x%s",
             ndiff, off, off >= 0 ? off / (long)l->extent : -1L, l->name,
             off >= 0 ? off % (long)l->extent : off, got->alloc[i], exp->alloc[i],
             off < 0 || (size_t)(off) >= exp->bytes - GUARD - ((char *)exp->p - (char *)exp->alloc)
                 ? " (outside the data: a canary was overwritten)"
                 : "");
    return 0;
}

/* --- user-defined ops --------------------------------------------------------------------- */

static int g_bad_op_type; /* a user op was called with a datatype it was not given */

/* Commutative: product modulo 65521 (a prime), on MPI_INT. */
static void op_modmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT) g_bad_op_type = 1;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (int)(((int64_t)a[i] * b[i]) % 65521);
}

/* Non-commutative: 2x2 matrix product inout = in x inout (in holds the lower ranks). */
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

/* Commutative sum over the resized vector T_vec: touches only its two ints per element. */
static void op_vecsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != T_vec) {
        g_bad_op_type = 1;
        return;
    }
    const char *a = in;
    char *b = inout;
    for (int i = 0; i < *len; i++) {
        for (int k = 0; k < 2; k++) {
            int x, y;
            memcpy(&x, a + (int64_t)i * 20 + 8 * k, sizeof x);
            memcpy(&y, b + (int64_t)i * 20 + 8 * k, sizeof y);
            y += x;
            memcpy(b + (int64_t)i * 20 + 8 * k, &y, sizeof y);
        }
    }
}

static MPI_Op OP_modmul, OP_matmul, OP_vecsum;

typedef struct opdesc {
    const char *name;
    MPI_Op *op; /* pointer, so that user ops made at run time can sit in a static table */
    int vc;
    int commutative;
} opdesc;

static MPI_Op P_SUM = MPI_OP_NULL, P_PROD, P_MAX, P_MIN, P_BAND, P_BOR, P_BXOR, P_LAND, P_LOR,
              P_MAXLOC, P_MINLOC;

static opdesc O_SUM = {"SUM", &P_SUM, V_SUM, 1}, O_PROD = {"PROD", &P_PROD, V_PROD, 1},
              O_MAX = {"MAX", &P_MAX, V_MINMAX, 1}, O_MIN = {"MIN", &P_MIN, V_MINMAX, 1},
              O_BAND = {"BAND", &P_BAND, V_BIT, 1}, O_BOR = {"BOR", &P_BOR, V_BIT, 1},
              O_BXOR = {"BXOR", &P_BXOR, V_BIT, 1}, O_LAND = {"LAND", &P_LAND, V_LAND, 1},
              O_LOR = {"LOR", &P_LOR, V_LOR, 1}, O_MAXLOC = {"MAXLOC", &P_MAXLOC, V_LOC, 1},
              O_MINLOC = {"MINLOC", &P_MINLOC, V_LOC, 1},
              O_MODMUL = {"user-modmul(commutative)", &OP_modmul, V_MODMUL, 1},
              O_MATMUL = {"user-matmul(non-commutative)", &OP_matmul, V_MAT, 0},
              O_VECSUM = {"user-vecsum(derived type)", &OP_vecsum, V_SUM, 1};

static void make_ops(void)
{
    P_SUM = MPI_SUM;
    P_PROD = MPI_PROD;
    P_MAX = MPI_MAX;
    P_MIN = MPI_MIN;
    P_BAND = MPI_BAND;
    P_BOR = MPI_BOR;
    P_BXOR = MPI_BXOR;
    P_LAND = MPI_LAND;
    P_LOR = MPI_LOR;
    P_MAXLOC = MPI_MAXLOC;
    P_MINLOC = MPI_MINLOC;
    MPI_Op_create(op_modmul, 1, &OP_modmul);
    MPI_Op_create(op_matmul, 0, &OP_matmul);
    MPI_Op_create(op_vecsum, 1, &OP_vecsum);
}

static void free_ops(void)
{
    MPI_Op_free(&OP_modmul);
    MPI_Op_free(&OP_matmul);
    MPI_Op_free(&OP_vecsum);
}

/* --- algorithms and modes ------------------------------------------------------------------ */

enum mode { M_BLOCKING = 1, M_NONBLOCKING = 2, M_PERSISTENT = 4 };
static const char *mode_name(int m)
{
    return m == M_BLOCKING ? "blocking" : m == M_NONBLOCKING ? "nonblocking" : "persistent";
}

/* CONVOY_<COLL>_ALGO for the collective's own table (convoy_Allgather reads
 * CONVOY_ALLGATHER_ALGO). */
static void force_algo(int coll, const char *name)
{
    tc_force_algo(convoy__coll_name(coll), name);
}

/* Completes a nonblocking request: a few convoy_test calls (split phase), then wait. A
 * request that tests complete must have been set to CONVOY_REQUEST_NULL. */
static int complete_nb(convoy_request *req, char *why, size_t len)
{
    int flag = 0, rc = MPI_SUCCESS;
    for (int k = 0; k < 3 && !flag && rc == MPI_SUCCESS; k++)
        rc = convoy_test(req, &flag);
    if (rc != MPI_SUCCESS) {
        snprintf(why, len, "convoy_test failed");
        return rc;
    }
    if (flag && *req != CONVOY_REQUEST_NULL) {
        snprintf(why, len, "convoy_test reported completion but left the request non-null");
        return MPI_ERR_OTHER;
    }
    if (!flag) rc = convoy_wait(req);
    if (rc == MPI_SUCCESS && *req != CONVOY_REQUEST_NULL) {
        snprintf(why, len, "convoy_wait left a nonblocking request non-null");
        return MPI_ERR_OTHER;
    }
    if (rc != MPI_SUCCESS) snprintf(why, len, "convoy_wait failed");
    return rc;
}

static int run_allreduce(int mode, const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op,
                         MPI_Comm comm, char *why, size_t len)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    int rc;
    why[0] = '\0';
    switch (mode) {
    case M_BLOCKING: return convoy_Allreduce(sb, rb, count, t, op, comm);
    case M_NONBLOCKING:
        rc = convoy_Iallreduce(sb, rb, count, t, op, comm, &req);
        if (rc != MPI_SUCCESS) return rc;
        return complete_nb(&req, why, len);
    default:
        rc = convoy_Allreduce_init(sb, rb, count, t, op, comm, MPI_INFO_NULL, &req);
        if (rc != MPI_SUCCESS) return rc;
        rc = convoy_start(&req);
        if (rc == MPI_SUCCESS) rc = convoy_wait(&req);
        if (rc == MPI_SUCCESS && req == CONVOY_REQUEST_NULL) {
            snprintf(why, len, "convoy_wait freed a persistent request");
            return MPI_ERR_OTHER;
        }
        {
            int rc2 = convoy_request_free(&req);
            if (rc == MPI_SUCCESS) rc = rc2;
        }
        if (rc == MPI_SUCCESS && req != CONVOY_REQUEST_NULL) {
            snprintf(why, len, "convoy_request_free left the request non-null");
            return MPI_ERR_OTHER;
        }
        return rc;
    }
}

/* Allgatherv, or Allgather (regular: rcounts all equal, displs rank * count). */
static int run_allgatherv(int mode, int regular, const void *sb, int scount, MPI_Datatype st,
                          void *rb, const int *rcounts, const int *displs, MPI_Datatype rt,
                          MPI_Comm comm, char *why, size_t len)
{
    convoy_request req = CONVOY_REQUEST_NULL;
    int rc;
    why[0] = '\0';
    switch (mode) {
    case M_BLOCKING:
        return regular ? convoy_Allgather(sb, scount, st, rb, rcounts[0], rt, comm)
                       : convoy_Allgatherv(sb, scount, st, rb, rcounts, displs, rt, comm);
    case M_NONBLOCKING:
        rc = regular ? convoy_Iallgather(sb, scount, st, rb, rcounts[0], rt, comm, &req)
                     : convoy_Iallgatherv(sb, scount, st, rb, rcounts, displs, rt, comm, &req);
        if (rc != MPI_SUCCESS) return rc;
        return complete_nb(&req, why, len);
    default:
        rc = regular ? convoy_Allgather_init(sb, scount, st, rb, rcounts[0], rt, comm,
                                             MPI_INFO_NULL, &req)
                     : convoy_Allgatherv_init(sb, scount, st, rb, rcounts, displs, rt, comm,
                                              MPI_INFO_NULL, &req);
        if (rc != MPI_SUCCESS) return rc;
        rc = convoy_start(&req);
        if (rc == MPI_SUCCESS) rc = convoy_wait(&req);
        {
            int rc2 = convoy_request_free(&req);
            if (rc == MPI_SUCCESS) rc = rc2;
        }
        return rc;
    }
}

/* --- the communicator a case runs on ------------------------------------------------------- */

typedef struct tcomm {
    MPI_Comm comm;
    char name[32];
    int rank, size;
} tcomm;

/* Whether an algorithm applies on this communicator: its predicate, asked with the
 * communicator's real decomposition and node segment and one element per rank. (The
 * predicates so far depend on the decomposition and the segment, not the counts.
 * Collective: it may make the state.) */
static int applies(const tcomm *c, const convoy__algo *al)
{
    if (!al->applicable) return 1;
    const convoy__topo *topo;
    int64_t shm_bytes;
    if (convoy__comm_topo(c->comm, &topo) != MPI_SUCCESS ||
        convoy__comm_shm_bytes(c->comm, &shm_bytes) != MPI_SUCCESS)
        return 0;
    int64_t *v = malloc(2 * (size_t)c->size * sizeof *v);
    for (int r = 0; r < c->size; r++)
        v[r] = 1, v[c->size + r] = r;
    convoy__dtype t = {.size = sizeof(int), .extent = sizeof(int), .true_extent = sizeof(int)};
    convoy__args a = {.coll = al->coll,
                      .topo = topo,
                      .count = 1,
                      .rcounts = v,
                      .displs = v + c->size,
                      .stype = t,
                      .rtype = t,
                      .commutative = 1,
                      .shm_bytes = shm_bytes};
    int ok = al->applicable(&a);
    free(v);
    return ok;
}

/* The algorithms to run for a collective: NULL (the default selection) first, then every
 * registered one that applies on this communicator (for a non-commutative Allreduce only
 * those that declare it). Forcing one that does not apply would test the fallback. */
/* --cma: the one algorithm per collective forced besides the default */
static const char *g_only_agv, *g_only_ar;

static int algo_list(const tcomm *c, int coll, int noncommutative, const char **names, int max)
{
    int n = 0;
    names[n++] = NULL;
    for (int i = 0; i < convoy__nalgos && n < max; i++) {
        if (!convoy__algo_serves(&convoy__algos[i], coll) || !applies(c, &convoy__algos[i]))
            continue;
        const char *only = coll == CONVOY_COLL_ALLREDUCE ? g_only_ar : g_only_agv;
        if (only && strcmp(convoy__algos[i].name, only) != 0) continue;
        if (noncommutative && !(convoy__algos[i].props & CONVOY_ALGO_NONCOMMUTATIVE)) continue;
        names[n++] = convoy__algos[i].name;
    }
    return n;
}

static int g_verbose, g_large, g_quick;
static double g_t0;

static void say(const tcomm *c, const char *what)
{
    tc_case(what);
    if (g_verbose && c->rank == 0) {
        fprintf(stderr, "[w%d %.2f s] %s\n", tc_world_rank(), MPI_Wtime() - g_t0, what);
        fflush(stderr);
    }
}

/* --- Allreduce cases ------------------------------------------------------------------------ */

/* The reference: every process's contribution folded in rank order with MPI_Reduce_local
 * (acc = x_{p-1}; acc = x_r op acc for r = p-2 .. 0), i.e. x_0 op x_1 op ... op x_{p-1}. */
static int allreduce_expected(const layout *l, const opdesc *o, int count, int p, uint64_t seed,
                              tbuf *exp)
{
    tbuf tmp;
    if (!tbuf_alloc(exp, l, count)) return 0;
    if (!tbuf_alloc(&tmp, l, count)) return 0;
    fill(l, o->vc, exp->p, 0, (int64_t)count * l->nb, seed, p - 1);
    for (int r = p - 2; r >= 0; r--) {
        fill(l, o->vc, tmp.p, 0, (int64_t)count * l->nb, seed, r);
        if (count > 0) MPI_Reduce_local(tmp.p, exp->p, count, l->type, *o->op);
    }
    tbuf_free(&tmp);
    return 1;
}

/* One Allreduce configuration: the native result and every algorithm in every mode of
 * `modes` against the hand-derived reference. */
static void case_allreduce(const tcomm *c, const layout *l, const opdesc *o, int count, int inplace,
                           int modes, uint64_t seed)
{
    char what[512], detail[1024], why[256], e[300];
    tbuf exp, sb, rb;
    g_size = c->size;
    snprintf(what, sizeof what, "allreduce comm=%s type=%s op=%s count=%d%s", c->name, l->name,
             o->name, count, inplace ? " in-place" : "");
    say(c, what);
    if (!allreduce_expected(l, o, count, c->size, seed, &exp) || !tbuf_alloc(&sb, l, count) ||
        !tbuf_alloc(&rb, l, count)) {
        tc_check(c->comm, 0, what, "out of memory");
        return;
    }
    fill(l, o->vc, sb.p, 0, (int64_t)count * l->nb, seed, c->rank);
    unpad(l, count, exp.p);

    /* The native collective must agree with the reference (else the test is wrong). */
    {
        char w2[600];
        snprintf(w2, sizeof w2, "%s algo=native(PMPI)", what);
        canary(&rb);
        if (inplace) fill(l, o->vc, rb.p, 0, (int64_t)count * l->nb, seed, c->rank);
        int rc =
            PMPI_Allreduce(inplace ? MPI_IN_PLACE : sb.p, rb.p, count, l->type, *o->op, c->comm);
        unpad(l, count, rb.p);
        int ok = rc == MPI_SUCCESS && same(&rb, &exp, l, detail, sizeof detail);
        if (rc != MPI_SUCCESS) snprintf(detail, sizeof detail, "%s", tc_errstr(rc, e, sizeof e));
        tc_check(c->comm, ok, w2, detail);
    }

    const char *algos[32];
    int na = algo_list(c, CONVOY_COLL_ALLREDUCE, !o->commutative, algos, 32);
    for (int a = 0; a < na; a++) {
        for (int m = M_BLOCKING; m <= M_PERSISTENT; m <<= 1) {
            if (!(modes & m)) continue;
            char w2[700];
            snprintf(w2, sizeof w2, "%s algo=%s mode=%s", what, algos[a] ? algos[a] : "default",
                     mode_name(m));
            force_algo(CONVOY_COLL_ALLREDUCE, algos[a]);
            tc_case(w2);
            canary(&rb);
            if (inplace) fill(l, o->vc, rb.p, 0, (int64_t)count * l->nb, seed, c->rank);
            g_bad_op_type = 0;
            int rc = run_allreduce(m, inplace ? MPI_IN_PLACE : sb.p, rb.p, count, l->type, *o->op,
                                   c->comm, why, sizeof why);
            unpad(l, count, rb.p);
            int ok = rc == MPI_SUCCESS && same(&rb, &exp, l, detail, sizeof detail);
            if (rc != MPI_SUCCESS)
                snprintf(detail, sizeof detail, "%s %s", why, tc_errstr(rc, e, sizeof e));
            if (ok && g_bad_op_type) {
                ok = 0;
                snprintf(detail, sizeof detail, "a user op was called with another datatype");
            }
            tc_check(c->comm, ok, w2, detail);
        }
    }
    force_algo(CONVOY_COLL_ALLREDUCE, NULL);
    tbuf_free(&exp);
    tbuf_free(&sb);
    tbuf_free(&rb);
}

typedef struct tcombo {
    const layout *l;
    const opdesc *o;
} tcombo;

static void allreduce_suite(const tcomm *c, uint64_t seed)
{
    const layout *arith[] = {&L_int, &L_double, &L_float, &L_long, &L_schar, &L_unsigned, &L_short};
    const layout *integ[] = {&L_int, &L_long, &L_schar, &L_unsigned, &L_short};
    const opdesc *aops[] = {&O_SUM, &O_PROD, &O_MAX, &O_MIN};
    const opdesc *iops[] = {&O_BAND, &O_BOR, &O_BXOR, &O_LAND, &O_LOR};
    tcombo combos[64];
    int nc = 0;
    for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
        for (size_t k = 0; k < sizeof aops / sizeof *aops; k++)
            combos[nc++] = (tcombo){arith[i], aops[k]};
    for (size_t i = 0; i < sizeof integ / sizeof *integ; i++)
        for (size_t k = 0; k < sizeof iops / sizeof *iops; k++)
            combos[nc++] = (tcombo){integ[i], iops[k]};
    combos[nc++] = (tcombo){&L_2int, &O_MAXLOC};
    combos[nc++] = (tcombo){&L_2int, &O_MINLOC};
    combos[nc++] = (tcombo){&L_int, &O_MODMUL};
    combos[nc++] = (tcombo){&L_mat, &O_MATMUL};
    combos[nc++] = (tcombo){&L_vec, &O_VECSUM};

    /* Every type and op: counts 1 and 255 blocking; an odd count also nonblocking. */
    for (int i = 0; i < nc; i++) {
        case_allreduce(c, combos[i].l, combos[i].o, 1, 0, M_BLOCKING, seed + (uint64_t)i);
        if (g_quick) continue;
        case_allreduce(c, combos[i].l, combos[i].o, 255, 0, M_BLOCKING, seed + 100 + (uint64_t)i);
        case_allreduce(c, combos[i].l, combos[i].o, 37 + 2 * i, 0, M_BLOCKING | M_NONBLOCKING,
                       seed + 200 + (uint64_t)i);
    }
    /* In place: every op on int, SUM on every type, the user ops. */
    for (int i = 0; i < nc; i++) {
        if (combos[i].l != &L_int && combos[i].o != &O_SUM && combos[i].o->op != &OP_matmul &&
            combos[i].o->op != &OP_vecsum)
            continue;
        case_allreduce(c, combos[i].l, combos[i].o, 93, 1, M_BLOCKING | M_NONBLOCKING,
                       seed + 300 + (uint64_t)i);
    }
    /* Count 0, and every mode (persistent once each). */
    case_allreduce(c, &L_int, &O_SUM, 0, 0, M_BLOCKING | M_NONBLOCKING | M_PERSISTENT, seed + 400);
    case_allreduce(c, &L_double, &O_MAX, 0, 1, M_BLOCKING | M_NONBLOCKING, seed + 401);
    case_allreduce(c, &L_double, &O_SUM, 1001, 0, M_BLOCKING | M_NONBLOCKING | M_PERSISTENT,
                   seed + 402);
    case_allreduce(c, &L_mat, &O_MATMUL, 129, 1, M_BLOCKING | M_NONBLOCKING | M_PERSISTENT,
                   seed + 403);
    case_allreduce(c, &L_vec, &O_VECSUM, 77, 0, M_BLOCKING | M_NONBLOCKING | M_PERSISTENT,
                   seed + 404);
    /* Larger than a typical eager limit / segment chunk. */
    case_allreduce(c, &L_int, &O_SUM, 40000 + 3, 0, M_BLOCKING, seed + 405);
    case_allreduce(c, &L_2int, &O_MINLOC, 20001, 1, M_BLOCKING, seed + 406);
    if (g_large) {
        /* >= 8 MB per process. */
        case_allreduce(c, &L_int, &O_SUM, (8 << 20) / 4 + 1, 0, M_BLOCKING, seed + 407);
        case_allreduce(c, &L_double, &O_MAX, (8 << 20) / 8 + 5, 1, M_BLOCKING, seed + 408);
    }
}

/* Every predefined reduction type not covered above, with every predefined op defined for
 * it (MPI-3.1 §5.9.2): C integers of every width (and the fixed-width ones), long double,
 * C bool (logical ops), MPI_BYTE (bitwise ops), complex (SUM, PROD), and MINLOC/MAXLOC
 * on every pair type. Integer values throughout, so floating results compare exactly.
 * Counts 1 and an odd count, blocking; MPI_IN_PLACE once per type. */
static void allreduce_types_suite(const tcomm *c, uint64_t seed)
{
    static MPI_Op P_LXOR;
    static opdesc O_LXOR = {"LXOR", &P_LXOR, V_LOR, 1};
    P_LXOR = MPI_LXOR;
    struct {
        const char *name;
        MPI_Datatype t;
        int kind, size, cls; /* cls: 0 integer, 1 floating, 2 bool, 3 byte, 4 complex, 5 pair */
    } ts[] = {
        {"unsigned-char", MPI_UNSIGNED_CHAR, K_U8, 1, 0},
        {"unsigned-short", MPI_UNSIGNED_SHORT, K_U16, 2, 0},
        {"unsigned-long", MPI_UNSIGNED_LONG, sizeof(long) == 8 ? K_U64 : K_U32, (int)sizeof(long),
         0},
        {"long-long", MPI_LONG_LONG, K_I64, 8, 0},
        {"unsigned-long-long", MPI_UNSIGNED_LONG_LONG, K_U64, 8, 0},
        {"int8", MPI_INT8_T, K_I8, 1, 0},
        {"uint8", MPI_UINT8_T, K_U8, 1, 0},
        {"int16", MPI_INT16_T, K_I16, 2, 0},
        {"uint16", MPI_UINT16_T, K_U16, 2, 0},
        {"int32", MPI_INT32_T, K_I32, 4, 0},
        {"uint32", MPI_UINT32_T, K_U32, 4, 0},
        {"int64", MPI_INT64_T, K_I64, 8, 0},
        {"uint64", MPI_UINT64_T, K_U64, 8, 0},
        {"long-double", MPI_LONG_DOUBLE, K_LDOUBLE, (int)sizeof(long double), 1},
        {"c-bool", MPI_C_BOOL, K_BOOL, (int)sizeof(_Bool), 2},
        {"byte", MPI_BYTE, K_U8, 1, 3},
        {"c-float-complex", MPI_C_FLOAT_COMPLEX, K_CFLOAT, 8, 4},
        {"c-double-complex", MPI_C_DOUBLE_COMPLEX, K_CDOUBLE, 16, 4},
        {"float-int", MPI_FLOAT_INT, K_FLOAT_INT, 0, 5},
        {"double-int", MPI_DOUBLE_INT, K_DOUBLE_INT, 0, 5},
        {"long-int", MPI_LONG_INT, K_LONG_INT, 0, 5},
        {"short-int", MPI_SHORT_INT, K_SHORT_INT, 0, 5},
        {"long-double-int", MPI_LONG_DOUBLE_INT, K_LDOUBLE_INT, 0, 5},
        {"2int", MPI_2INT, K_2INT, 0, 5}, /* MAXLOC/MINLOC above; again with LOC odd counts */
    };
    const opdesc *arith[] = {&O_SUM, &O_PROD, &O_MAX, &O_MIN};
    const opdesc *bits[] = {&O_BAND, &O_BOR, &O_BXOR};
    const opdesc *logic[] = {&O_LAND, &O_LOR, &O_LXOR};
    const opdesc *cplx[] = {&O_SUM, &O_PROD};
    const opdesc *loc[] = {&O_MAXLOC, &O_MINLOC};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        layout l;
        MPI_Aint lb, ext;
        MPI_Type_get_extent(ts[i].t, &lb, &ext);
        layout_basic(&l, ts[i].name, ts[i].t, ts[i].kind, ts[i].size ? ts[i].size : (int)ext);
        l.extent = ext;
        const int ld = sizeof(long double) == 16 ? 10 : (int)sizeof(long double); /* x87 */
        if (ts[i].kind == K_LDOUBLE && ld < (int)ext) {
            l.ndata = 1;
            l.dlen[0] = ld;
        }
        if (ts[i].cls == 5) { /* {value, int}: where the int lies, as in the C struct */
            int vsize = 0;
            l.ndata = 2;
            l.doff[1] = pair_ioff(ts[i].kind, &vsize);
            l.dlen[0] = ts[i].kind == K_LDOUBLE_INT ? ld : vsize;
            l.dlen[1] = (int)sizeof(int);
        }
        const opdesc *ops[12];
        int no = 0;
        if (ts[i].cls == 0 || ts[i].cls == 1)
            for (int k = 0; k < 4; k++)
                ops[no++] = arith[k];
        if (ts[i].cls == 0 || ts[i].cls == 3)
            for (int k = 0; k < 3; k++)
                ops[no++] = bits[k];
        if (ts[i].cls == 0 || ts[i].cls == 2)
            for (int k = 0; k < 3; k++)
                ops[no++] = logic[k];
        if (ts[i].cls == 4)
            for (int k = 0; k < 2; k++)
                ops[no++] = cplx[k];
        if (ts[i].cls == 5)
            for (int k = 0; k < 2; k++)
                ops[no++] = loc[k];
        for (int k = 0; k < no; k++) {
            const uint64_t sd = seed + 1000 + 50 * (uint64_t)i + (uint64_t)k;
            case_allreduce(c, &l, ops[k], 1, 0, M_BLOCKING, sd);
            if (g_quick) continue;
            case_allreduce(c, &l, ops[k], 41 + 2 * k, k == 0, M_BLOCKING, sd + 20);
        }
    }
}

/* --- Allgatherv cases ----------------------------------------------------------------------- */

/* C_DIST + d: the six distributions of papers/002 §3 (check/dist.h), base count DIST_BASE. */
enum ckind { C_RANDOM0, C_ZEROS, C_ONE, C_255, C_ODD, C_SINGLE, C_LARGE, C_STREAM, C_DIST };
static const char *ckind_name[] = {"random-with-zeros", "all-zero", "all-1", "all-255", "odd",
                                   "one-nonzero",       "large",    "stream"};
static const char *const dist_names[] = {"regular",  "broadcast",  "spike",
                                         "halffull", "decreasing", "geometric"};
enum { NDIST = 6, DIST_BASE = 40 };

static const char *ckind_str(int ck)
{
    return ck >= C_DIST ? dist_names[ck - C_DIST] : ckind_name[ck];
}
/* --stream: the receive buffer bytes the C_STREAM counts aim at (about 300 node segments). */
static int64_t g_stream_bytes;
enum dkind { D_PACKED, D_GAPPED };

typedef struct gv {
    int *rcounts, *displs;
    int64_t total; /* receive buffer elements */
} gv;

/* Counts (in units of the receive type, each a multiple of `mult`) and displacements. */
static void make_counts(gv *g, int p, int ck, int dk, int mult, int64_t large_elems, uint64_t seed)
{
    g->rcounts = calloc((size_t)p, sizeof(int));
    g->displs = calloc((size_t)p, sizeof(int));
    int64_t *dist = NULL;
    if (ck >= C_DIST) {
        dist = calloc((size_t)p, sizeof *dist);
        convoy__dist_counts(dist_names[ck - C_DIST], p, DIST_BASE, seed, dist);
    }
    int nonzero = 0;
    for (int r = 0; r < p; r++) {
        uint64_t h = tc_hash(seed, 1000 + r, 7);
        int c = dist ? (int)dist[r] : 0;
        switch (ck) {
        case C_RANDOM0: c = (h % 3 == 0) ? 0 : (int)(h % 40) + 1; break;
        case C_ZEROS: c = 0; break;
        case C_ONE: c = 1; break;
        case C_255: c = 255; break;
        case C_ODD: c = 2 * (int)(h % 50) + 1; break;
        case C_SINGLE: c = r == (int)(seed % (uint64_t)p) ? 57 : 0; break;
        case C_LARGE: c = (int)(large_elems / p) + r; break;
        case C_STREAM: /* one empty rank (p >= 4), the others 1/2 .. 3/2 of the average */
            c = p >= 4 && r == (int)(seed % (uint64_t)p)
                    ? 0
                    : (int)(large_elems / p / 2 + h % (uint64_t)(large_elems / p + 1));
            break;
        }
        g->rcounts[r] = c * mult;
        nonzero += c != 0;
    }
    free(dist);
    if (ck == C_RANDOM0 && nonzero == 0) g->rcounts[p / 2] = 5 * mult;
    /* Displacements: packed in rank order, or blocks in a shuffled order with gaps of 0..3
     * elements; a zero-count rank's displacement points into another rank's block. */
    int *order = malloc((size_t)p * sizeof(int));
    for (int r = 0; r < p; r++)
        order[r] = r;
    if (dk == D_GAPPED)
        for (int r = p - 1; r > 0; r--) {
            int k = (int)(tc_hash(seed, 2000 + r, 3) % (uint64_t)(r + 1));
            int t = order[r];
            order[r] = order[k];
            order[k] = t;
        }
    int64_t pos = dk == D_GAPPED ? 2 : 0;
    for (int i = 0; i < p; i++) {
        int r = order[i];
        g->displs[r] = (int)pos;
        pos += g->rcounts[r];
        if (dk == D_GAPPED) pos += 1 + (int64_t)(tc_hash(seed, 3000 + i, 5) % 3);
    }
    if (dk == D_GAPPED)
        for (int r = 0; r < p; r++)
            if (g->rcounts[r] == 0) g->displs[r] = g->displs[order[0]];
    g->total = pos + 1;
    free(order);
}

static void free_counts(gv *g)
{
    free(g->rcounts);
    free(g->displs);
}

/* Reference receive buffer: canaries everywhere, each rank's block where its displacement
 * says, element by element in the receive layout. */
static void allgatherv_expected(const layout *rl, const gv *g, int p, uint64_t seed, tbuf *exp)
{
    for (int r = 0; r < p; r++)
        fill(rl, V_ANY, exp->p, g->displs[r], (int64_t)g->rcounts[r] * rl->nb, seed, r);
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* MPICH 4.0's MPI_Allgatherv on a 1-process communicator copies the block to the start of
 * the receive buffer, ignoring the displacement. Where the native library does that, its
 * result is not compared there (Convoy's still is, with the hand-derived reference). */
static int g_native_self_displs_ok = 1;

static void probe_native(void)
{
    int sb = 42, rb[4] = {-1, -1, -1, -1}, rc = 1, d = 2;
    PMPI_Allgatherv(&sb, 1, MPI_INT, rb, &rc, &d, MPI_INT, MPI_COMM_SELF);
    g_native_self_displs_ok = rb[2] == 42 && rb[0] == -1 && rb[1] == -1 && rb[3] == -1;
    if (!g_native_self_displs_ok && tc_world_rank() == 0)
        fprintf(stderr, "test_coll: note: the native MPI_Allgatherv ignores displacements on a "
                        "1-process communicator; its result is not compared there\n");
}

static void case_allgatherv(const tcomm *c, const layout *sl, const layout *rl, int ck, int dk,
                            int inplace, int modes, uint64_t seed)
{
    char what[512], detail[1024], why[256], e[300];
    gv g;
    /* Each rank's count in receive elements must give whole send elements. */
    int mult = sl->nb / gcd(sl->nb, rl->nb);
    int64_t large_elems =
        (ck == C_STREAM ? g_stream_bytes : (int64_t)(8 << 20)) / (rl->bsize * rl->nb) + 1;
    make_counts(&g, c->size, ck, dk, mult, large_elems, seed);
    int scount = (int)((int64_t)g.rcounts[c->rank] * rl->nb / sl->nb);
    snprintf(what, sizeof what, "allgatherv comm=%s send=%s recv=%s counts=%s displs=%s%s", c->name,
             inplace ? "IN_PLACE" : sl->name, rl->name, ckind_str(ck),
             dk == D_PACKED ? "packed" : "shuffled-with-gaps", inplace ? " in-place" : "");
    say(c, what);
    tbuf exp, sb, rb;
    if (!tbuf_alloc(&exp, rl, g.total) || !tbuf_alloc(&rb, rl, g.total) ||
        !tbuf_alloc(&sb, sl, scount)) {
        tc_check(c->comm, 0, what, "out of memory");
        free_counts(&g);
        return;
    }
    allgatherv_expected(rl, &g, c->size, seed, &exp);
    fill(sl, V_ANY, sb.p, 0, (int64_t)scount * sl->nb, seed, c->rank);

    if (c->size > 1 || g_native_self_displs_ok) {
        char w2[600];
        snprintf(w2, sizeof w2, "%s algo=native(PMPI)", what);
        canary(&rb);
        if (inplace)
            fill(rl, V_ANY, rb.p, g.displs[c->rank], (int64_t)g.rcounts[c->rank] * rl->nb, seed,
                 c->rank);
        int rc = PMPI_Allgatherv(inplace ? MPI_IN_PLACE : sb.p, scount, sl->type, rb.p, g.rcounts,
                                 g.displs, rl->type, c->comm);
        int ok = rc == MPI_SUCCESS && same(&rb, &exp, rl, detail, sizeof detail);
        if (rc != MPI_SUCCESS) snprintf(detail, sizeof detail, "%s", tc_errstr(rc, e, sizeof e));
        tc_check(c->comm, ok, w2, detail);
    }

    const char *algos[32];
    int na = algo_list(c, CONVOY_COLL_ALLGATHERV, 0, algos, 32);
    if (ck == C_STREAM) {
        /* Streaming through the segment: the default choice and the node-segment algorithm,
         * which must apply, on data at least 100 segments large. */
        int64_t seg = 0, bytes = 0;
        convoy__comm_shm_bytes(c->comm, &seg);
        for (int r = 0; r < c->size; r++)
            bytes += (int64_t)g.rcounts[r] * rl->bsize * rl->nb;
        int found = 0;
        for (int a = 1; a < na; a++)
            if (strcmp(algos[a], "node_segment") == 0) found = 1;
        snprintf(detail, sizeof detail, "segment %lld bytes, data %lld bytes, node_segment %s",
                 (long long)seg, (long long)bytes, found ? "applies" : "does not apply");
        tc_check(c->comm, seg > 0 && bytes >= 100 * seg && found, what, detail);
        algos[1] = "node_segment";
        na = found ? 2 : 1;
    }
    /* Equal counts, packed: convoy_Allgather too. */
    int regular = dk == D_PACKED;
    for (int r = 0; r < c->size; r++)
        regular &= g.rcounts[r] == g.rcounts[0];
    for (int a = 0; a < na; a++) {
        for (int m = M_BLOCKING; m <= (regular ? M_PERSISTENT << 3 : M_PERSISTENT); m <<= 1) {
            const int ag = m > M_PERSISTENT, mode = ag ? m >> 3 : m;
            if (!(modes & mode)) continue;
            char w2[700];
            snprintf(w2, sizeof w2, "%s algo=%s mode=%s%s", what, algos[a] ? algos[a] : "default",
                     mode_name(mode), ag ? " as convoy_Allgather" : "");
            force_algo(ag ? CONVOY_COLL_ALLGATHER : CONVOY_COLL_ALLGATHERV, algos[a]);
            tc_case(w2);
            canary(&rb);
            if (inplace)
                fill(rl, V_ANY, rb.p, g.displs[c->rank], (int64_t)g.rcounts[c->rank] * rl->nb, seed,
                     c->rank);
            int rc = run_allgatherv(mode, ag, inplace ? MPI_IN_PLACE : sb.p, scount, sl->type, rb.p,
                                    g.rcounts, g.displs, rl->type, c->comm, why, sizeof why);
            int ok = rc == MPI_SUCCESS && same(&rb, &exp, rl, detail, sizeof detail);
            if (rc != MPI_SUCCESS)
                snprintf(detail, sizeof detail, "%s %s", why, tc_errstr(rc, e, sizeof e));
            tc_check(c->comm, ok, w2, detail);
        }
    }
    force_algo(CONVOY_COLL_ALLGATHERV, NULL);
    force_algo(CONVOY_COLL_ALLGATHER, NULL);
    tbuf_free(&exp);
    tbuf_free(&sb);
    tbuf_free(&rb);
    free_counts(&g);
}

static void allgatherv_suite(const tcomm *c, uint64_t seed)
{
    const int B = M_BLOCKING, BN = M_BLOCKING | M_NONBLOCKING,
              ALL = M_BLOCKING | M_NONBLOCKING | M_PERSISTENT;
    /* Every type, random counts with zeros, shuffled displacements with gaps. */
    const layout *types[] = {&L_int,  &L_double,   &L_float, &L_long,
                             &L_char, &L_unsigned, &L_short, &L_2int};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        case_allgatherv(c, types[i], types[i], C_RANDOM0, D_GAPPED, 0, B, seed + i);
    /* Every count kind, both displacement kinds. */
    for (int ck = C_RANDOM0; ck <= C_SINGLE; ck++)
        for (int dk = D_PACKED; dk <= D_GAPPED; dk++) {
            if (g_quick && dk == D_PACKED) continue;
            case_allgatherv(c, &L_int, &L_int, ck, dk, 0, ck == C_RANDOM0 ? ALL : BN,
                            seed + 20 + (uint64_t)(ck * 2 + dk));
        }
    /* The six distributions of papers/002 §3. */
    for (int d = 0; d < NDIST; d++)
        case_allgatherv(c, &L_int, &L_int, C_DIST + d, D_GAPPED, 0, BN, seed + 70 + (uint64_t)d);
    /* In place. */
    case_allgatherv(c, &L_int, &L_int, C_RANDOM0, D_GAPPED, 1, ALL, seed + 40);
    case_allgatherv(c, &L_double, &L_double, C_ODD, D_PACKED, 1, BN, seed + 41);
    case_allgatherv(c, &L_int, &L_int, C_ZEROS, D_GAPPED, 1, B, seed + 42);
    /* Equal counts: also as convoy_Allgather (in place, derived types, zero). */
    case_allgatherv(c, &L_int, &L_int, C_255, D_PACKED, 0, ALL, seed + 43);
    case_allgatherv(c, &L_double, &L_double, C_ONE, D_PACKED, 1, BN, seed + 44);
    case_allgatherv(c, &L_int, &L_vec, C_255, D_PACKED, 0, BN, seed + 45);
    case_allgatherv(c, &L_int, &L_int, C_ZEROS, D_PACKED, 1, B, seed + 46);
    /* Derived types with gaps: different send and receive types. */
    case_allgatherv(c, &L_int, &L_vec, C_RANDOM0, D_GAPPED, 0, ALL, seed + 50);
    case_allgatherv(c, &L_vec, &L_int, C_RANDOM0, D_GAPPED, 0, BN, seed + 51);
    case_allgatherv(c, &L_vec, &L_vec3, C_ODD, D_GAPPED, 0, BN, seed + 52);
    case_allgatherv(c, &L_vec3, &L_vecneg, C_RANDOM0, D_PACKED, 0, BN, seed + 53);
    case_allgatherv(c, &L_vecneg, &L_vec, C_255, D_GAPPED, 0, B, seed + 54);
    case_allgatherv(c, &L_int, &L_vecneg, C_RANDOM0, D_GAPPED, 1, BN, seed + 55);
    case_allgatherv(c, &L_vec, &L_vec, C_SINGLE, D_GAPPED, 1, B, seed + 56);
    if (g_large) case_allgatherv(c, &L_int, &L_int, C_LARGE, D_GAPPED, 0, B, seed + 60);
}

/* --stream (run with a small CONVOY_SEGMENT_BYTES and virtual nodes): Allgatherv data about
 * 300 segments large streams through the node segment; types, in place, every mode. */
static void stream_suite(const tcomm *c, uint64_t seed)
{
    const int BN = M_BLOCKING | M_NONBLOCKING, ALL = BN | M_PERSISTENT;
    int64_t seg = 0;
    convoy__comm_shm_bytes(c->comm, &seg);
    g_stream_bytes = 300 * (seg > 0 ? seg : 4096); /* >= 3/8 of it: > 100 segments */
    case_allgatherv(c, &L_int, &L_int, C_STREAM, D_GAPPED, 0, ALL, seed);
    case_allgatherv(c, &L_double, &L_double, C_STREAM, D_PACKED, 1, BN, seed + 1);
    case_allgatherv(c, &L_int, &L_vec, C_STREAM, D_GAPPED, 0, BN, seed + 2);
    case_allgatherv(c, &L_vec3, &L_vecneg, C_STREAM, D_GAPPED, 0, M_BLOCKING, seed + 3);
    case_allgatherv(c, &L_2int, &L_2int, C_STREAM, D_GAPPED, 1, M_BLOCKING, seed + 4);
}

/* --deny-cma: the operating system forbids the reads, as on hosts where a process may not
 * read another's memory (containers without CAP_SYS_PTRACE and non-dumpable processes, Yama
 * ptrace_scope 2 or 3). process_vm_readv needs the right to ptrace the target: a reader with
 * the target's user id may, unless the target is not dumpable and the reader lacks
 * CAP_SYS_PTRACE. So world rank 1 gives up the capability and becomes non-dumpable before
 * the first Convoy call, whose setup probes the reads: its node peer's probe of it fails,
 * its own probe of the peer succeeds, and on more nodes the others' probes succeed, so the
 * test also proves that every rank agrees on the one verdict. Run it with the MPI library's
 * own single copy off (Open MPI's vader reads by process_vm_readv too). At the end the
 * process is dumpable again, so that the leak checker may stop its threads. Returns whether
 * the reads of this process are forbidden. */
static int g_deny_cma;
static int deny_cma(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &h, d) != 0) return 0;
    d[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective &= ~CAP_TO_MASK(CAP_SYS_PTRACE);
    d[CAP_TO_INDEX(CAP_SYS_PTRACE)].permitted &= ~CAP_TO_MASK(CAP_SYS_PTRACE);
    if (syscall(SYS_capset, &h, d) != 0) return 0;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
}

/* --cma (run with CONVOY_ALLGATHERV_CMA_MIN=0, so that every size takes the single-copy
 * path): what CONVOY_VERBOSE says at setup about cross-memory attach, on a new
 * communicator: "used" unless CONVOY_CMA=0, which must say so (this machine permits the
 * reads between a user's processes; CONVOY_TEST_CMA=0 where it does not), or unless
 * --deny-cma forbade them, where the failed probe must say why. */
static void check_cma_line(void)
{
    char what[] = "cross-memory attach: the setup's verbose line";
    tc_case(what);
    const char *env = getenv("CONVOY_CMA"), *t = getenv("CONVOY_TEST_CMA");
    const char *want = (env && !strcmp(env, "0")) ? "not used: CONVOY_CMA=0"
                       : (t && !strcmp(t, "0"))   ? "not used"
                       : g_deny_cma
                           ? "not used: the probe read between node processes failed on some node: "
                             "Operation not permitted"
                           : "used for large node transfers";
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int rank, one = 1, sum;
    MPI_Comm_rank(comm, &rank);
    fflush(stderr);
    FILE *f = rank == 0 ? tmpfile() : NULL;
    const int saved = rank == 0 ? dup(2) : -1;
    if (f) dup2(fileno(f), 2);
    setenv("CONVOY_VERBOSE", "1", 1);
    int rc = convoy_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm); /* makes the state */
    unsetenv("CONVOY_VERBOSE");
    fflush(stderr);
    char text[8192] = "";
    if (f) {
        dup2(saved, 2);
        close(saved);
        rewind(f);
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    int64_t seg = 0;
    convoy__comm_shm_bytes(comm, &seg);
    const char *line = strstr(text, "cross-memory attach (process_vm_readv): ");
    const int ok =
        rc == MPI_SUCCESS && (rank != 0 || (seg == 0 ? !line : line && strstr(line, want) != NULL));
    char detail[256];
    snprintf(detail, sizeof detail, "segment %lld bytes; expected \"%s\", got: %.120s",
             (long long)seg, seg ? want : "no line", line ? line : "nothing");
    tc_check(comm, ok, what, detail);
    MPI_Comm_free(&comm);
}

/* --- persistent: 100 starts, changing contents, the schedule built once ------------------ */

static void case_persistent(const tcomm *c, int coll, const char *algo, int inplace, uint64_t seed)
{
    char what[512], detail[1024], e[300];
    const int iters = 100;
    const layout *l = &L_int;
    const opdesc *o = &O_SUM;
    /* A count no other case uses, so that no cached schedule can serve it. */
    const int count = 611 + (int)(seed % 89);
    snprintf(what, sizeof what, "persistent %s comm=%s algo=%s%s x%d starts",
             coll == CONVOY_COLL_ALLREDUCE ? "allreduce" : "allgatherv", c->name,
             algo ? algo : "default", inplace ? " in-place" : "", iters);
    say(c, what);
    force_algo(coll, algo);
    gv g = {0};
    tbuf exp, sb, rb;
    int64_t n = count;
    int scount = count;
    if (coll == CONVOY_COLL_ALLGATHERV) {
        /* Random counts with zeros, blocks in reverse rank order with gaps. */
        make_counts(&g, c->size, C_RANDOM0, D_GAPPED, 1, 0, seed);
        g.rcounts[c->size - 1] = 7 + c->size;
        int64_t pos = 3;
        for (int r = c->size - 1; r >= 0; r--) {
            g.displs[r] = (int)pos;
            pos += g.rcounts[r] + 2;
        }
        g.total = pos + 1;
        n = g.total;
        scount = g.rcounts[c->rank];
    }
    if (!tbuf_alloc(&exp, l, n) || !tbuf_alloc(&sb, l, scount) || !tbuf_alloc(&rb, l, n)) {
        tc_check(c->comm, 0, what, "out of memory");
        return;
    }
    convoy_request req = CONVOY_REQUEST_NULL;
    long b0 = convoy__build_count();
    int rc;
    if (coll == CONVOY_COLL_ALLREDUCE)
        rc = convoy_Allreduce_init(inplace ? MPI_IN_PLACE : sb.p, rb.p, count, MPI_INT, MPI_SUM,
                                   c->comm, MPI_INFO_NULL, &req);
    else
        rc = convoy_Allgatherv_init(inplace ? MPI_IN_PLACE : sb.p, scount, MPI_INT, rb.p, g.rcounts,
                                    g.displs, MPI_INT, c->comm, MPI_INFO_NULL, &req);
    /* From here on the environment must not matter: the choice was made at init. */
    force_algo(coll, NULL);
    int ok = rc == MPI_SUCCESS;
    if (!ok) snprintf(detail, sizeof detail, "init: %s", tc_errstr(rc, e, sizeof e));
    int bad_iter = -1;
    for (int it = 0; it < iters && ok; it++) {
        uint64_t s = seed * 1000 + (uint64_t)it;
        canary(&exp);
        canary(&rb);
        canary(&sb);
        if (coll == CONVOY_COLL_ALLREDUCE) {
            tbuf_free(&exp);
            allreduce_expected(l, o, count, c->size, s, &exp);
            fill(l, o->vc, inplace ? rb.p : sb.p, 0, count, s, c->rank);
        } else {
            allgatherv_expected(l, &g, c->size, s, &exp);
            if (inplace)
                fill(l, V_ANY, rb.p, g.displs[c->rank], g.rcounts[c->rank], s, c->rank);
            else
                fill(l, V_ANY, sb.p, 0, scount, s, c->rank);
        }
        rc = convoy_start(&req);
        if (rc == MPI_SUCCESS) {
            int flag = 0;
            if (it % 2) rc = convoy_test(&req, &flag);
            if (rc == MPI_SUCCESS && !flag) rc = convoy_wait(&req);
        }
        if (rc != MPI_SUCCESS) {
            ok = 0;
            snprintf(detail, sizeof detail, "start %d: %s", it, tc_errstr(rc, e, sizeof e));
        } else if (req == CONVOY_REQUEST_NULL) {
            ok = 0;
            snprintf(detail, sizeof detail, "start %d: completion freed the persistent request",
                     it);
        } else if (!same(&rb, &exp, l, detail, sizeof detail)) {
            ok = 0;
            bad_iter = it;
        }
    }
    if (bad_iter >= 0) {
        char d2[sizeof detail];
        snprintf(d2, sizeof d2, "%s", detail);
        snprintf(detail, sizeof detail, "start %d: %.900s", bad_iter, d2);
    }
    long b1 = convoy__build_count();
    if (req != CONVOY_REQUEST_NULL) {
        rc = convoy_request_free(&req);
        if (ok && (rc != MPI_SUCCESS || req != CONVOY_REQUEST_NULL)) {
            ok = 0;
            snprintf(detail, sizeof detail, "convoy_request_free: %s", tc_errstr(rc, e, sizeof e));
        }
    }
    tc_check(c->comm, ok, what, detail);

    /* The builder ran exactly once for init and all the starts (the count is new, so the
     * schedule cache cannot have served it). */
    char w2[600];
    snprintf(w2, sizeof w2, "%s: schedule built once (convoy__build_count)", what);
    snprintf(detail, sizeof detail, "builder ran %ld times for init + %d starts", b1 - b0, iters);
    tc_check(c->comm, b1 - b0 == 1, w2, detail);

    tbuf_free(&exp);
    tbuf_free(&sb);
    tbuf_free(&rb);
    free_counts(&g);
}

static void persistent_suite(const tcomm *c, uint64_t seed)
{
    const char *algos[32];
    int na = algo_list(c, CONVOY_COLL_ALLREDUCE, 0, algos, 32);
    for (int a = 0; a < na; a++)
        case_persistent(c, CONVOY_COLL_ALLREDUCE, algos[a], a & 1, seed + (uint64_t)a);
    na = algo_list(c, CONVOY_COLL_ALLGATHERV, 0, algos, 32);
    for (int a = 0; a < na; a++)
        case_persistent(c, CONVOY_COLL_ALLGATHERV, algos[a], !(a & 1), seed + 50 + (uint64_t)a);
}

/* --- each forced algorithm really runs (not a fallback) ---------------------------------- */

/* A blocking call with arguments no other case uses, with the algorithm forced: its builder
 * must run exactly once (the native fallback builds nothing; a cached schedule cannot
 * exist). The results are checked by the suites; this checks that the suites tested the
 * algorithm they name. */
static void case_forced_builds(const tcomm *c, uint64_t seed)
{
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        /* Other collectives have their own programs (test_barrier, test_reduce_scatter). */
        if (al->coll != CONVOY_COLL_ALLREDUCE && al->coll != CONVOY_COLL_ALLGATHERV) continue;
        if (!applies(c, al)) continue;
        char what[256], detail[256];
        snprintf(what, sizeof what, "%s algo=%s comm=%s: forcing it builds its schedule",
                 convoy__coll_name(al->coll), al->name, c->name);
        int n = 3001 + (int)(seed % 1000) * 2 + i, rc;
        int *in = calloc((size_t)n * (size_t)c->size, sizeof(int));
        int *out = calloc((size_t)n * (size_t)c->size, sizeof(int));
        int *rcounts = malloc((size_t)c->size * sizeof(int));
        int *displs = malloc((size_t)c->size * sizeof(int));
        for (int r = 0; r < c->size; r++)
            rcounts[r] = n, displs[r] = n * (c->size - 1 - r);
        force_algo(al->coll, al->name);
        long b0 = convoy__build_count();
        if (al->coll == CONVOY_COLL_ALLREDUCE)
            rc = convoy_Allreduce(in, out, n, MPI_INT, MPI_SUM, c->comm);
        else
            rc = convoy_Allgatherv(in, n, MPI_INT, out, rcounts, displs, MPI_INT, c->comm);
        long b1 = convoy__build_count();
        force_algo(al->coll, NULL);
        snprintf(detail, sizeof detail, "rc %d, builder ran %ld times", rc, b1 - b0);
        tc_check(c->comm, rc == MPI_SUCCESS && b1 - b0 == 1, what, detail);
        free(in), free(out), free(rcounts), free(displs);
    }
}

/* --- overlapping operations and the user's own traffic ------------------------------------ */

/* One nonblocking operation of the overlap cases, with its buffers and reference. */
typedef struct ovop {
    int coll; /* CONVOY_COLL_ALLREDUCE or CONVOY_COLL_ALLGATHERV */
    const layout *l;
    const opdesc *o;
    int n, inplace;
    gv g;
    tbuf exp, sb, rb;
    convoy_request req;
} ovop;

static void ovop_make(ovop *v, const tcomm *c, int coll, const layout *l, const opdesc *o, int n,
                      int inplace, uint64_t seed)
{
    memset(v, 0, sizeof *v);
    v->coll = coll, v->l = l, v->o = o, v->n = n, v->inplace = inplace;
    v->req = CONVOY_REQUEST_NULL;
    g_size = c->size;
    if (coll == CONVOY_COLL_ALLREDUCE) {
        allreduce_expected(l, o, n, c->size, seed, &v->exp);
        tbuf_alloc(&v->sb, l, n);
        tbuf_alloc(&v->rb, l, n);
        fill(l, o->vc, inplace ? v->rb.p : v->sb.p, 0, (int64_t)n * l->nb, seed, c->rank);
    } else {
        make_counts(&v->g, c->size, C_RANDOM0, D_GAPPED, 1, 0, seed);
        tbuf_alloc(&v->exp, l, v->g.total);
        tbuf_alloc(&v->rb, l, v->g.total);
        tbuf_alloc(&v->sb, l, v->g.rcounts[c->rank]);
        allgatherv_expected(l, &v->g, c->size, seed, &v->exp);
        fill(l, V_ANY, inplace ? v->rb.p + (int64_t)v->g.displs[c->rank] * l->extent : v->sb.p, 0,
             v->g.rcounts[c->rank], seed, c->rank);
    }
}

static int ovop_start(ovop *v, const tcomm *c)
{
    if (v->coll == CONVOY_COLL_ALLREDUCE)
        return convoy_Iallreduce(v->inplace ? MPI_IN_PLACE : v->sb.p, v->rb.p, v->n, v->l->type,
                                 *v->o->op, c->comm, &v->req);
    return convoy_Iallgatherv(v->inplace ? MPI_IN_PLACE : v->sb.p, v->g.rcounts[c->rank],
                              v->l->type, v->rb.p, v->g.rcounts, v->g.displs, v->l->type, c->comm,
                              &v->req);
}

static void ovop_free(ovop *v)
{
    if (v->req != CONVOY_REQUEST_NULL) convoy_wait(&v->req);
    tbuf_free(&v->exp), tbuf_free(&v->sb), tbuf_free(&v->rb);
    free_counts(&v->g);
}

/* Four nonblocking operations in flight on one communicator, two of them with identical
 * arguments (the same schedule and step tags, different data), completed in an order that
 * differs between any two ranks whose numbers differ in one bit (the partners of recursive
 * doubling and of a ring's neighbours alike): without an epoch in the tags, one
 * operation's message would be taken by the other. In between, the user's own messages
 * on the same communicator (tags 0 and 1, as a builder's step tags would be) and a
 * wildcard receive posted before any of them, which must get the user's message and
 * nothing of Convoy's. */
static void case_overlap(const tcomm *c, const char *aalgo, const char *galgo, int mixed,
                         uint64_t seed)
{
    char what[512], detail[1024] = "", e[300];
    snprintf(what, sizeof what,
             "overlap comm=%s allreduce-algo=%s allgatherv-algo=%s (4 ops in flight, completed "
             "in %s order, + user p2p, wildcard receive)",
             c->name, aalgo ? aalgo : "default", galgo ? galgo : "default",
             mixed ? "a rank-dependent" : "the same");
    say(c, what);
    const int p = c->size, me = c->rank, next = (me + 1) % p, prev = (me + p - 1) % p;
    int ok = 1, rc;
    enum { NOV = 4 };
    ovop ov[NOV];
    /* A and D: the same schedule (int SUM, 301), different data; B: Allgatherv with gaps;
     * C: double MAX in place. */
    ovop_make(&ov[0], c, CONVOY_COLL_ALLREDUCE, &L_int, &O_SUM, 301, 0, seed + 2);
    ovop_make(&ov[1], c, CONVOY_COLL_ALLGATHERV, &L_int, NULL, 0, 0, seed + 1);
    ovop_make(&ov[2], c, CONVOY_COLL_ALLREDUCE, &L_double, &O_MAX, 57, 1, seed + 3);
    ovop_make(&ov[3], c, CONVOY_COLL_ALLREDUCE, &L_int, &O_SUM, 301, 0, seed + 4);

    int u_in[3][4], u_out[3][4], any_in[4];
    MPI_Request ur[5], last;
    MPI_Status ust[5];
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 4; k++) {
            u_out[t][k] = 1000000 * t + 1000 * me + k;
            u_in[t][k] = -1;
        }
    for (int k = 0; k < 4; k++)
        any_in[k] = -1;
    PMPI_Irecv(u_in[0], 4, MPI_INT, prev, 0, c->comm, &ur[0]);
    PMPI_Irecv(u_in[1], 4, MPI_INT, prev, 1, c->comm, &ur[1]);
    PMPI_Irecv(any_in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, &ur[2]);

    force_algo(CONVOY_COLL_ALLREDUCE, aalgo);
    force_algo(CONVOY_COLL_ALLGATHERV, galgo);
    for (int i = 0; i < NOV; i++) {
        if ((rc = ovop_start(&ov[i], c)) != MPI_SUCCESS && ok) {
            ok = 0;
            snprintf(detail, sizeof detail, "start of operation %d: %s", i,
                     tc_errstr(rc, e, sizeof e));
        }
        if (i < 2) PMPI_Isend(u_out[i], 4, MPI_INT, next, i, c->comm, &ur[3 + i]);
    }
    force_algo(CONVOY_COLL_ALLREDUCE, NULL);
    force_algo(CONVOY_COLL_ALLGATHERV, NULL);

    /* Completion order: the same everywhere, or by the parity of the number of one bits in
     * the rank. MPI lets processes complete nonblocking collectives in different orders, so
     * waiting for one operation must progress the others; a wait that does not is caught by
     * a time limit (then all are completed round-robin, to go on with the other cases). */
    int bits = 0;
    for (int x = me; x; x >>= 1)
        bits += x & 1;
    static const int order[2][NOV] = {{3, 0, 2, 1}, {0, 3, 1, 2}};
    const int *ord = order[mixed ? bits & 1 : 0];
    int stuck = 0;
    for (int k = 0; k < NOV; k++) {
        ovop *v = &ov[ord[k]];
        int flag = 0;
        double t0 = tc_now();
        while (ok && !flag && !stuck) {
            if (k % 2 == 0)
                rc = convoy_test(&v->req, &flag);
            else
                rc = convoy_wait_timeout(&v->req, 0.2, &flag);
            if (rc != MPI_SUCCESS) {
                ok = 0;
                snprintf(detail, sizeof detail, "%s of operation %c: %s", k % 2 ? "wait" : "test",
                         "ABCD"[ord[k]], tc_errstr(rc, e, sizeof e));
            } else if (!flag && tc_now() - t0 > 3.0) {
                stuck = 1;
                ok = 0;
                snprintf(detail, sizeof detail,
                         "operation %c did not complete in 3 s of waiting for it alone, while "
                         "other ranks wait for another one first: waiting must progress every "
                         "outstanding operation",
                         "ABCD"[ord[k]]);
            }
        }
        if (k == 1) {
            /* The user's tagged messages; then the one for the wildcard receive, sent while
             * Convoy's remaining traffic is still under way. */
            PMPI_Waitall(2, &ur[3], MPI_STATUSES_IGNORE);
            PMPI_Waitall(2, ur, ust);
            PMPI_Isend(u_out[2], 4, MPI_INT, next, 7, c->comm, &last);
        }
    }
    /* After a failure: every remaining operation, round-robin, until all are done. */
    for (int done = 0; !done;) {
        done = 1;
        for (int i = 0; i < NOV; i++) {
            int flag = 1;
            if (ov[i].req != CONVOY_REQUEST_NULL && convoy_test(&ov[i].req, &flag) != MPI_SUCCESS)
                ov[i].req = CONVOY_REQUEST_NULL; /* already reported; give it up */
            done &= flag;
        }
    }
    PMPI_Wait(&ur[2], &ust[2]);
    PMPI_Wait(&last, MPI_STATUS_IGNORE);

    for (int i = 0; i < NOV && ok; i++)
        if (!same(&ov[i].rb, &ov[i].exp, ov[i].l, detail, sizeof detail)) {
            ok = 0;
            char d2[64];
            snprintf(d2, sizeof d2, " (operation %c)", "ABCD"[i]);
            strncat(detail, d2, sizeof detail - strlen(detail) - 1);
        }
    for (int t = 0; t < 2 && ok; t++)
        for (int k = 0; k < 4; k++)
            if (u_in[t][k] != 1000000 * t + 1000 * prev + k) {
                ok = 0;
                snprintf(detail, sizeof detail, "user message tag %d: got %d, expected %d", t,
                         u_in[t][k], 1000000 * t + 1000 * prev + k);
                break;
            }
    if (ok &&
        (ust[2].MPI_SOURCE != prev || ust[2].MPI_TAG != 7 || any_in[0] != 2000000 + 1000 * prev)) {
        ok = 0;
        snprintf(detail, sizeof detail,
                 "the wildcard receive got source %d tag %d value %d, expected source %d tag 7 "
                 "value %d (Convoy traffic on the user's communicator?)",
                 ust[2].MPI_SOURCE, ust[2].MPI_TAG, any_in[0], prev, 2000000 + 1000 * prev);
    }
    tc_check(c->comm, ok, what, detail);
    for (int i = 0; i < NOV; i++)
        ovop_free(&ov[i]);
}

/* Nonblocking operations in flight on two communicators at once, completed crosswise. */
static void case_two_comms(const tcomm *c1, const tcomm *c2, uint64_t seed)
{
    char what[512], detail[1024] = "", e[300];
    snprintf(what, sizeof what, "two communicators at once: %s and %s", c1->name, c2->name);
    say(c1, what);
    int ok = 1, rc;
    const int n1 = 123, n2 = 45;
    tbuf e1, s1, r1, e2, r2, eg, sg, rg;
    gv g;
    g_size = c1->size;
    allreduce_expected(&L_long, &O_BXOR, n1, c1->size, seed, &e1);
    tbuf_alloc(&s1, &L_long, n1);
    tbuf_alloc(&r1, &L_long, n1);
    fill(&L_long, V_BIT, s1.p, 0, n1, seed, c1->rank);
    g_size = c2->size;
    allreduce_expected(&L_mat, &O_MATMUL, n2, c2->size, seed + 1, &e2);
    tbuf_alloc(&r2, &L_mat, n2);
    fill(&L_mat, V_MAT, r2.p, 0, n2, seed + 1, c2->rank);
    make_counts(&g, c2->size, C_ODD, D_GAPPED, 1, 0, seed + 2);
    tbuf_alloc(&eg, &L_short, g.total);
    tbuf_alloc(&rg, &L_short, g.total);
    tbuf_alloc(&sg, &L_short, g.rcounts[c2->rank]);
    allgatherv_expected(&L_short, &g, c2->size, seed + 2, &eg);
    fill(&L_short, V_ANY, sg.p, 0, g.rcounts[c2->rank], seed + 2, c2->rank);

    convoy_request q[3] = {CONVOY_REQUEST_NULL, CONVOY_REQUEST_NULL, CONVOY_REQUEST_NULL};
    rc = convoy_Iallreduce(s1.p, r1.p, n1, MPI_LONG, MPI_BXOR, c1->comm, &q[0]);
    if (rc == MPI_SUCCESS)
        rc = convoy_Iallreduce(MPI_IN_PLACE, r2.p, n2, T_mat, OP_matmul, c2->comm, &q[1]);
    if (rc == MPI_SUCCESS)
        rc = convoy_Iallgatherv(sg.p, g.rcounts[c2->rank], MPI_SHORT, rg.p, g.rcounts, g.displs,
                                MPI_SHORT, c2->comm, &q[2]);
    if (rc != MPI_SUCCESS) {
        ok = 0;
        snprintf(detail, sizeof detail, "start: %s", tc_errstr(rc, e, sizeof e));
    }
    /* Round-robin tests until all are done, then waits (also on requests already null). */
    for (int spin = 0; spin < 1000000 && ok; spin++) {
        int all = 1;
        for (int k = 0; k < 3; k++) {
            int f = 0;
            rc = convoy_test(&q[(k + spin) % 3], &f);
            if (rc != MPI_SUCCESS) {
                ok = 0;
                snprintf(detail, sizeof detail, "test: %s", tc_errstr(rc, e, sizeof e));
            }
            all &= f;
        }
        if (all) break;
    }
    for (int k = 2; k >= 0; k--)
        if ((rc = convoy_wait(&q[k])) != MPI_SUCCESS && ok) {
            ok = 0;
            snprintf(detail, sizeof detail, "wait: %s", tc_errstr(rc, e, sizeof e));
        }
    if (ok && !same(&r1, &e1, &L_long, detail, sizeof detail)) ok = 0, strcat(detail, " (comm 1)");
    if (ok && !same(&r2, &e2, &L_mat, detail, sizeof detail)) ok = 0, strcat(detail, " (comm 2)");
    if (ok && !same(&rg, &eg, &L_short, detail, sizeof detail))
        ok = 0, strcat(detail, " (comm 2 allgatherv)");
    tc_check(MPI_COMM_WORLD, ok, what, detail);
    tbuf_free(&e1), tbuf_free(&s1), tbuf_free(&r1), tbuf_free(&e2), tbuf_free(&r2);
    tbuf_free(&eg), tbuf_free(&sg), tbuf_free(&rg);
    free_counts(&g);
}

/* --- the decomposition ----------------------------------------------------------------------- */

/* Node id of a world rank as CONVOY_NODEMAP / CONVOY_PPN define it, all on one host. */
static int64_t *g_world_ids;

static void world_ids(int wsize)
{
    g_world_ids = calloc((size_t)wsize, sizeof(int64_t));
    const char *map = getenv("CONVOY_NODEMAP");
    const char *ppn = getenv("CONVOY_PPN");
    if (map && *map) {
        const char *s = map;
        for (int w = 0; w < wsize; w++) {
            g_world_ids[w] = strtoll(s, (char **)&s, 10);
            if (*s == ',') s++;
        }
    } else if (ppn && *ppn) {
        long k = strtol(ppn, NULL, 10);
        for (int w = 0; w < wsize; w++)
            g_world_ids[w] = k > 0 ? w / k : 0;
    }
}

/* The i-th rank (ascending) of node k. */
static int nth_member(const int *node_of, int p, int k, int i)
{
    for (int r = 0; r < p; r++)
        if (node_of[r] == k && i-- == 0) return r;
    return -1;
}

static void check_topo(const tcomm *c)
{
    char what[256], detail[1024] = "";
    snprintf(what, sizeof what, "decomposition of comm=%s (CONVOY_NODEMAP=%s CONVOY_PPN=%s)",
             c->name, getenv("CONVOY_NODEMAP") ? getenv("CONVOY_NODEMAP") : "-",
             getenv("CONVOY_PPN") ? getenv("CONVOY_PPN") : "-");
    const convoy__topo *t = NULL;
    int rc = convoy__comm_topo(c->comm, &t);
    int ok = rc == MPI_SUCCESS && t;
    if (!ok) {
        snprintf(detail, sizeof detail, "convoy__comm_topo failed (rc %d)", rc);
        tc_check(c->comm, 0, what, detail);
        return;
    }
    const int p = c->size;
    MPI_Group g, wg;
    MPI_Comm_group(c->comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *ranks = malloc((size_t)p * sizeof(int)), *w = malloc((size_t)p * sizeof(int));
    for (int r = 0; r < p; r++)
        ranks[r] = r;
    MPI_Group_translate_ranks(g, p, ranks, wg, w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* Expected: nodes numbered by their lowest rank, members by rank. */
    int *node_of = calloc((size_t)p, sizeof(int)), *nrank = calloc((size_t)p, sizeof(int));
    int *nsize = calloc((size_t)p, sizeof(int));
    int64_t *nid = malloc((size_t)p * sizeof(int64_t));
    int nn = 0;
    for (int r = 0; r < p; r++) {
        int64_t id = g_world_ids[w[r]];
        int k = 0;
        while (k < nn && nid[k] != id)
            k++;
        if (k == nn) nid[nn++] = id;
        node_of[r] = k;
        nrank[r] = nsize[k]++;
    }
    int maxppn = 0, regular = 1, consecutive = 1;
    for (int k = 0; k < nn; k++) {
        if (nsize[k] > maxppn) maxppn = nsize[k];
        if (nsize[k] != nsize[0]) regular = 0;
    }
    for (int r = 1; r < p; r++)
        if (node_of[r] != node_of[r - 1] && node_of[r] != node_of[r - 1] + 1) consecutive = 0;
    const int me = c->rank, my = node_of[me];
    int lane_size = 0, lane_rank = 0;
    for (int k = 0; k < nn; k++)
        if (nsize[k] > nrank[me]) {
            if (k < my) lane_rank++;
            lane_size++;
        }
    int flags = (regular ? CONVOY_TOPO_REGULAR : 0) | (consecutive ? CONVOY_TOPO_CONSECUTIVE : 0) |
                (regular && consecutive ? CONVOY_TOPO_UNIFORM : 0);
#define TOPO_EQ(got, exp, name)                                                                    \
    do {                                                                                           \
        if (ok && (got) != (exp)) {                                                                \
            ok = 0;                                                                                \
            snprintf(detail, sizeof detail, "%s: got %ld, expected %ld", name, (long)(got),        \
                     (long)(exp));                                                                 \
        }                                                                                          \
    } while (0)
    TOPO_EQ(t->size, p, "size");
    TOPO_EQ(t->rank, me, "rank");
    TOPO_EQ(t->nnodes, nn, "nnodes");
    TOPO_EQ(t->flags, flags, "flags");
    TOPO_EQ(t->max_ppn, maxppn, "max_ppn");
    TOPO_EQ(t->node, my, "node");
    TOPO_EQ(t->node_rank, nrank[me], "node_rank");
    TOPO_EQ(t->ppn, nsize[my], "ppn");
    TOPO_EQ(t->lane_size, lane_size, "lane_size");
    TOPO_EQ(t->lane_rank, lane_rank, "lane_rank");
    for (int r = 0; r < p && ok; r++) {
        char n[64];
        snprintf(n, sizeof n, "node_of[%d]", r);
        TOPO_EQ(t->node_of[r], node_of[r], n);
        snprintf(n, sizeof n, "node_rank_of[%d]", r);
        TOPO_EQ(t->node_rank_of[r], nrank[r], n);
    }
    for (int k = 0; k < nn && ok; k++) {
        char n[64];
        snprintf(n, sizeof n, "node_size[%d]", k);
        TOPO_EQ(t->node_size[k], nsize[k], n);
        for (int i = 0; i < nsize[k] && ok; i++) {
            snprintf(n, sizeof n, "member %d of node %d", i, k);
            TOPO_EQ(convoy__topo_rank_at(t, k, i), nth_member(node_of, p, k, i), n);
        }
    }
#undef TOPO_EQ
    tc_check(c->comm, ok, what, detail);
    free(ranks), free(w), free(node_of), free(nrank), free(nsize), free(nid);
}

/* --- main ------------------------------------------------------------------------------------ */

static void make_comm(tcomm *c, MPI_Comm comm, const char *name)
{
    c->comm = comm;
    snprintf(c->name, sizeof c->name, "%s", name);
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

/* A nonblocking and a persistent call on a communicator with no Convoy state yet (the
 * library serves them with the native collective) must still be right. */
static void case_fresh_comm(uint64_t seed)
{
    MPI_Comm d;
    tcomm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    make_comm(&c, d, "fresh-dup");
    case_allreduce(&c, &L_int, &O_SUM, 19, 0, M_NONBLOCKING, seed);
    MPI_Comm_free(&d);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    make_comm(&c, d, "fresh-dup");
    case_allgatherv(&c, &L_int, &L_vec, C_RANDOM0, D_GAPPED, 0, M_PERSISTENT, seed + 1);
    MPI_Comm_free(&d);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    make_comm(&c, d, "fresh-dup");
    case_allreduce(&c, &L_mat, &O_MATMUL, 3, 1, M_PERSISTENT, seed + 2);
    MPI_Comm_free(&d);
}

/* Communicators made and freed in turn (a new one may get a freed one's handle): each must
 * get its own decomposition and correct results. */
static void case_comm_churn(uint64_t seed)
{
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    for (int k = 0; k < 4; k++) {
        MPI_Comm d;
        tcomm c;
        int color = k % 2 ? wr % 2 : (wr < (ws + 1) / 2);
        int key = k >= 2 ? ws - wr : wr;
        MPI_Comm_split(MPI_COMM_WORLD, color, key, &d);
        char name[32];
        snprintf(name, sizeof name, "churn%d", k);
        make_comm(&c, d, name);
        case_allreduce(&c, &L_int, &O_SUM, 5 + k, 0, M_BLOCKING, seed + (uint64_t)k);
        case_allgatherv(&c, &L_int, &L_int, C_RANDOM0, D_GAPPED, 0, M_BLOCKING,
                        seed + 10 + (uint64_t)k);
        check_topo(&c);
        MPI_Comm_free(&d);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(100);
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    int stream = 0, cma = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stream") == 0) stream = 1;
        if (strcmp(argv[i], "--cma") == 0)
            cma = 1, g_only_agv = "node_segment", g_only_ar = "node_ring";
        if (strcmp(argv[i], "--deny-cma") == 0) g_deny_cma = 1;
        if (strcmp(argv[i], "--large") == 0) g_large = 1;
        if (strcmp(argv[i], "--quick") == 0) g_quick = 1;
    }
    if (g_deny_cma)
        tc_check(MPI_COMM_WORLD, wr != 1 || deny_cma(), "--deny-cma: reads of rank 1 forbidden",
                 "capset or prctl(PR_SET_DUMPABLE) failed");
    if (getenv("CONVOY_TEST_LARGE") && atoi(getenv("CONVOY_TEST_LARGE"))) g_large = 1;
    g_verbose = getenv("CONVOY_TEST_VERBOSE") && atoi(getenv("CONVOY_TEST_VERBOSE"));
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    unsetenv("CONVOY_ALLGATHERV_ALGO");
    unsetenv("CONVOY_ALLGATHER_ALGO");
    make_types();
    make_ops();
    world_ids(ws);
    probe_native();
    double t0 = tc_now();
    g_t0 = t0;

    /* Is every process on one host? Then the decomposition follows from the environment. */
    MPI_Comm host;
    int hsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &hsize);
    MPI_Comm_free(&host);
    const int one_host = hsize == ws;

    tcomm world, evenodd, rev;
    make_comm(&world, MPI_COMM_WORLD, "world");
    MPI_Comm c_eo, c_rev;
    MPI_Comm_split(MPI_COMM_WORLD, wr % 2, wr, &c_eo);
    make_comm(&evenodd, c_eo, wr % 2 ? "odd" : "even");
    MPI_Comm_split(MPI_COMM_WORLD, 0, ws - wr, &c_rev);
    make_comm(&rev, c_rev, "reversed");

    /* The cases run on each communicator in turn; the blocking ones come first, so that the
     * nonblocking and persistent ones find the communicator's Convoy state made. */
    const tcomm *comms[] = {&world, &evenodd, &rev};
    for (int k = 0; stream && k < 3; k += 2)
        stream_suite(comms[k], 1000003ull * (uint64_t)(k + 1));
    if (cma) check_cma_line();
    for (int k = 0; cma && k < 3; k += 2) {
        allgatherv_suite(comms[k], 1000003ull * (uint64_t)(k + 1));
        case_persistent(comms[k], CONVOY_COLL_ALLGATHERV, "node_segment", k == 2, 4242);
        /* Allreduce node_ring's single copy (CONVOY_ALLREDUCE_CMA_MIN=0): every type and
         * op (non-contiguous types fall back to the slots), in place, zero counts. */
        allreduce_suite(comms[k], 2000003ull * (uint64_t)(k + 1));
        case_persistent(comms[k], CONVOY_COLL_ALLREDUCE, "node_ring", k == 2, 4343);
    }
    stream |= cma;
    for (int k = 0; !stream && k < 3; k++) {
        const tcomm *c = comms[k];
        uint64_t seed = 1000003ull * (uint64_t)(k + 1);
        if (k == 1 && ws < 2) continue; /* odd/even is the world again */
        allreduce_suite(c, seed);
        if (k == 0) allreduce_types_suite(c, seed); /* the world only: enough */
        allgatherv_suite(c, seed + 5000);
        if (one_host) check_topo(c);
        case_forced_builds(c, seed);
        persistent_suite(c, seed + 9000);
        const char *aal[32], *gal[32];
        int naa = algo_list(c, CONVOY_COLL_ALLREDUCE, 0, aal, 32);
        int nga = algo_list(c, CONVOY_COLL_ALLGATHERV, 0, gal, 32);
        for (int a = 0; a < (naa > nga ? naa : nga); a++)
            for (int mixed = 0; mixed < 2; mixed++)
                case_overlap(c, aal[a % naa], gal[a % nga], mixed, seed + 9500 + (uint64_t)a);
    }
    if (!stream) {
        case_two_comms(&world, &rev, 777);
        case_two_comms(&rev, &evenodd, 778);
        case_fresh_comm(888);
        case_comm_churn(999);
    }

    MPI_Comm_free(&c_eo);
    MPI_Comm_free(&c_rev);
    free_ops();
    free_types();
    free(g_world_ids);
    double t1 = tc_now();
    if (wr == 0 && g_verbose) fprintf(stderr, "test_coll: %.1f s\n", t1 - t0);
    int status = tc_finish();
    if (g_deny_cma && wr == 1) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    MPI_Finalize();
    return status;
}
