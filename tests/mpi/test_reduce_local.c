/*
 * Convoy's local reductions (src/sched/reduce_local_mpi.c) against the MPI library's
 * MPI_Reduce_local, bit for bit: every predefined operation on every named type the
 * library reduces, random bit patterns (overflowing sums and products, and for float and
 * double also NaNs, infinities and signed zeros), counts below and above the inline limit.
 * Pairs Convoy leaves to the library must come back NULL from convoy__local_op_find, and
 * the pairs any correct library agrees on must not (a lost fast path fails the test too);
 * where a library's loop differs (MAX and MIN compare unsigned types as signed: Open MPI 4.1
 * on MPI_UNSIGNED_LONG, MPICH 4.0 on all of them) Convoy must leave the pair to it, which
 * the random values here catch otherwise.
 *
 * Open MPI: run with OMPI_MCA_op=^avx (its AVX component saturates 8- and 16-bit sums,
 * which Convoy leaves to it anyway; the 32- and 64-bit results are compared).
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/transport_mpi.h"

static uint64_t seed = 88172645463325252ULL;

static uint64_t next(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

typedef struct {
    const char *name;
    MPI_Datatype type;
    int size, floating;
    int must, may; /* bit k: Convoy computes op k itself on any library / may, where the
                      library's loop agrees (not where it compares unsigned types as signed;
                      not floating sums where the compiler picked the other operand order) */
} tdesc;

enum { NOPS = 7, MAXN = 2000 };

static const double special[5] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};

/* Element i of a float (size 4) or double array, set to v. */
static void put(unsigned char *buf, int i, int size, double v)
{
    if (size == 4) {
        const float x = (float)v;
        memcpy(buf + (size_t)i * 4, &x, 4);
    } else {
        memcpy(buf + (size_t)i * 8, &v, 8);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *const opname[NOPS] = {"SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR"};
    const MPI_Op ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR};
    const int all = (1 << NOPS) - 1;
    const tdesc types[] = {
        {"int", MPI_INT, sizeof(int), 0, all, all},
        {"unsigned", MPI_UNSIGNED, sizeof(unsigned), 0, 0, all},
        {"long", MPI_LONG, sizeof(long), 0, 0, all},
        {"unsigned long", MPI_UNSIGNED_LONG, sizeof(unsigned long), 0, 0, all},
        {"long long", MPI_LONG_LONG, sizeof(long long), 0, 0, all},
        {"unsigned long long", MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), 0, 0, all},
        {"int32_t", MPI_INT32_T, 4, 0, 0, all},
        {"uint32_t", MPI_UINT32_T, 4, 0, 0, all},
        {"int64_t", MPI_INT64_T, 8, 0, all, all},
        {"uint64_t", MPI_UINT64_T, 8, 0, 0, all},
        {"short", MPI_SHORT, sizeof(short), 0, 0, 0},
        {"signed char", MPI_SIGNED_CHAR, 1, 0, 0, 0},
        {"float", MPI_FLOAT, sizeof(float), 1, 0, 1},
        {"double", MPI_DOUBLE, sizeof(double), 1, 0, 1},
    };
    const int ns[] = {1, 7, 1000, MAXN};
    unsigned char *src = malloc(MAXN * 8), *mine = malloc(MAXN * 8), *lib = malloc(MAXN * 8);
    long checked = 0;
    int fails = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        const tdesc *t = &types[ti];
        for (int k = 0; k < NOPS; k++) {
            /* Floating types take SUM, PROD, MAX, MIN only (bitwise ops are not defined). */
            if (t->floating && k > 3) continue;
            const convoy__local_op f = convoy__local_op_find(ops[k], t->type);
            if ((f && !(t->may & (1 << k))) || (!f && (t->must & (1 << k)))) {
                printf("FAIL %s %s: convoy__local_op_find %s\n", opname[k], t->name,
                       f ? "takes a pair it must leave to the library" : "lost its fast path");
                fails++;
            }
            for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
                const int n = ns[ni];
                for (int i = 0; i < n * t->size; i++) {
                    src[i] = (unsigned char)next();
                    mine[i] = lib[i] = (unsigned char)next();
                }
                if (t->floating) /* NaN, +-inf, +-0 among the operands, on both sides */
                    for (int i = 0; i < n; i++) {
                        if (i % 5 == 0) put(src, i, t->size, special[(i / 5) % 5]);
                        if (i % 7 == 0) {
                            put(mine, i, t->size, special[(i / 7) % 5]);
                            put(lib, i, t->size, special[(i / 7) % 5]);
                        }
                    }
                if (convoy__local_reduce(f, src, mine, n, t->type, ops[k]) != MPI_SUCCESS ||
                    PMPI_Reduce_local(src, lib, n, t->type, ops[k]) != MPI_SUCCESS) {
                    printf("FAIL %s %s n %d: an error\n", opname[k], t->name, n);
                    fails++;
                    continue;
                }
                checked++;
                if (memcmp(mine, lib, (size_t)n * t->size) != 0) {
                    int e = 0;
                    while (memcmp(mine + (size_t)e * t->size, lib + (size_t)e * t->size,
                                  (size_t)t->size) == 0)
                        e++;
                    printf("FAIL %s %s n %d: element %d differs from MPI_Reduce_local's\n",
                           opname[k], t->name, n, e);
                    fails++;
                }
            }
        }
    }
    printf("%s: %ld reductions compared with MPI_Reduce_local, %d failures\n",
           fails ? "FAIL" : "PASS", checked, fails);
    free(src);
    free(mine);
    free(lib);
    MPI_Finalize();
    return fails != 0;
}
