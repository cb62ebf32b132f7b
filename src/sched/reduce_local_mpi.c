/*
 * Local reductions without the MPI library: dst[i] = src[i] op dst[i] as a plain loop, for
 * the predefined operations on the named types where the MPI library's MPI_Reduce_local
 * gives the same bits.
 *
 * Idea: a small collective's reduction is a few elements, and PMPI_Reduce_local around them
 * (argument checks, the dispatch by operation and type, an indirect call) is most of its
 * cost: 7-8 ns for 1 int or double against 1.5-3 ns for the loop, 7-8 against 2.7-5.3 for 8
 * (Open MPI 4.1, tight loops). On the critical path of a 1-int Allreduce at np 2 on one
 * node that is the 0.70-0.72 -> 0.66-0.69 of the library's Allreduce (flagfloor's
 * interquartile means, seven interleaved runs). Above LOCAL_OP_MAX elements the library's
 * own loops (Open MPI's AVX component: 52 against 104 ns for 1024 ints) take over.
 *
 * Covered: SUM, PROD, MAX, MIN, BAND, BOR, BXOR on int, long, long long, their unsigned
 * types and the 32- and 64-bit fixed-width ones (sums and products in unsigned arithmetic:
 * the wrap-around the library's loops get from the hardware); SUM on float and double as
 * dst + src (the library's operand order: a NaN's payload follows the first operand). A
 * pair is taken only if the loop gives MPI_Reduce_local's bits on a vector of edge values,
 * checked once per pair and process (agrees()), so Convoy's results stay the library's
 * where its loops differ: Open MPI 4.1 compares MPI_UNSIGNED_LONG as signed in MAX and MIN
 * (MAX(2^63, 1) = 1), MPICH 4.0 every unsigned type; an ASan build of this file adds floats
 * in the other operand order (another NaN). Everything else — 8- and 16-bit types, floating PROD,
 * MAX and MIN, logical and location operations, user-defined operations — is the library's.
 */
#include "sched/transport_mpi.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

enum { LOCAL_OP_MAX = 32 }; /* elements */

#define LOOP(name, T, expr)                                                                        \
    static void name(const void *src, void *dst, int64_t n)                                        \
    {                                                                                              \
        const T *x = src;                                                                          \
        T *y = dst;                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const T a = x[i], b = y[i];                                                            \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    }
/* The seven integer operations on an integer type T with unsigned counterpart U. */
#define INT_OPS(T, U)                                                                              \
    LOOP(sum_##T, T, (T)((U)b + (U)a))                                                             \
    LOOP(prod_##T, T, (T)((U)b * (U)a))                                                            \
    LOOP(max_##T, T, b > a ? b : a)                                                                \
    LOOP(min_##T, T, b < a ? b : a)                                                                \
    LOOP(band_##T, T, b &a)                                                                        \
    LOOP(bor_##T, T, b | a)                                                                        \
    LOOP(bxor_##T, T, b ^ a)                                                                       \
    static const convoy__local_op ops_##T[] = {sum_##T,  prod_##T, max_##T, min_##T,               \
                                               band_##T, bor_##T,  bxor_##T};

INT_OPS(int32_t, uint32_t)
INT_OPS(uint32_t, uint32_t)
INT_OPS(int64_t, uint64_t)
INT_OPS(uint64_t, uint64_t)
LOOP(sum_float, float, b + a)
LOOP(sum_double, double, b + a)

enum { NOPS = 7, NTYPES = 12, PROBE = 24 };

static const convoy__local_op float_ops[NOPS] = {sum_float}, double_ops[NOPS] = {sum_double};

/* Per operation and type: 0 not tried yet, 1 the loop gives the library's bits, -1 not. */
static _Atomic signed char verdict[NOPS][NTYPES];

/* The loop for a signed or unsigned integer type of 4 or 8 bytes. */
static const convoy__local_op *int_ops(MPI_Datatype t, int is_signed)
{
    int size = 0;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS) return NULL;
    if (size == 4) return is_signed ? ops_int32_t : ops_uint32_t;
    if (size == 8) return is_signed ? ops_int64_t : ops_uint64_t;
    return NULL;
}

/* Does the loop give MPI_Reduce_local's bits on edge values (zeros, ones, all ones, the sign
 * bit alone, the largest values, NaNs, infinities, signed zeros, then pseudo-random bits)?
 * Asked once per pair, so that a library whose loop differs — Open MPI 4.1 compares
 * MPI_UNSIGNED_LONG as signed in MAX and MIN — keeps its pair and Convoy's results stay
 * those of the library. */
static int agrees(convoy__local_op f, MPI_Op op, MPI_Datatype type)
{
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || (size != 4 && size != 8)) return 0;
    uint64_t a[PROBE], b[PROBE], c[PROBE];
    const uint64_t edge[] = {0,
                             1,
                             ~UINT64_C(0),
                             UINT64_C(1) << 63,
                             UINT64_C(0x7fffffffffffffff),
                             UINT64_C(0x80000000),
                             UINT64_C(0x7fffffff),
                             UINT64_C(0x7ff8000000000000) /* double NaN */,
                             UINT64_C(0x7ff0000000000000) /* double +inf */,
                             UINT64_C(0xfff0000000000000) /* double -inf */,
                             UINT64_C(0x7fc000007f800000) /* float NaN, +inf */,
                             UINT64_C(0xff80000080000000) /* float -inf, -0 */};
    const int nedge = (int)(sizeof edge / sizeof *edge);
    uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
    for (int i = 0; i < PROBE; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = i < nedge ? edge[i] : x;
        b[i] = i < nedge ? edge[(i * 5 + 3) % nedge] : x * 3;
    }
    const int n = PROBE * 8 / size;
    memcpy(c, b, sizeof c);
    f(a, b, n);
    return PMPI_Reduce_local(a, c, n, type, op) == MPI_SUCCESS && memcmp(b, c, sizeof b) == 0;
}

convoy__local_op convoy__local_op_find(MPI_Op op, MPI_Datatype type)
{
    if (op == MPI_OP_NULL || type == MPI_DATATYPE_NULL) return NULL;
    const MPI_Op order[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR};
    int k = 0;
    while (k < NOPS && op != order[k])
        k++;
    if (k == NOPS) return NULL;
    /* Five signed integer types, five unsigned, float, double. */
    const MPI_Datatype types[NTYPES] = {
        MPI_INT,      MPI_LONG,     MPI_LONG_LONG,     MPI_INT32_T,
        MPI_INT64_T,  MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG,
        MPI_UINT32_T, MPI_UINT64_T, MPI_FLOAT,         MPI_DOUBLE};
    int t = 0;
    while (t < NTYPES && type != types[t])
        t++;
    if (t == NTYPES) return NULL;
    const convoy__local_op *ops = t < 10 ? int_ops(type, t < 5) : t == 10 ? float_ops : double_ops;
    const convoy__local_op f = ops ? ops[k] : NULL;
    if (!f) return NULL;
    signed char v = atomic_load_explicit(&verdict[k][t], memory_order_relaxed);
    if (!v) {
        v = agrees(f, op, type) ? 1 : -1;
        atomic_store_explicit(&verdict[k][t], v, memory_order_relaxed);
    }
    return v > 0 ? f : NULL;
}

int convoy__local_reduce(convoy__local_op f, const void *src, void *dst, int64_t n,
                         MPI_Datatype type, MPI_Op op)
{
    if (n <= 0) return MPI_SUCCESS;
    if (f && n <= LOCAL_OP_MAX) {
        f(src, dst, n);
        return MPI_SUCCESS;
    }
    return PMPI_Reduce_local(src, dst, (int)n, type, op);
}
