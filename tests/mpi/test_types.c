/*
 * Datatypes that differ by rank: MPI asks the ranks of a collective only for equal type
 * signatures, so each rank may describe the same ints its own way. Here rank r's receive
 * type is role r % 4 and its send type role (r + 1) % 4: ints; pairs of ints (a contiguous
 * type, half the count); pairs with a hole (an int, a gap, an int; extent 4 ints); ints
 * padded to 8 bytes (a resized int). Allgatherv (blocks in reverse rank order, one empty,
 * in place and not), Allgather and Bcast (every root), every registered algorithm forced and
 * the default choice, at counts that cut into units, pipeline blocks and lanes at different
 * elements for each type (2 to 200002 ints per block). Expected values are derived by hand
 * (int t of rank i's block: a hash of i and t); the gaps of receive buffers must keep their
 * poison. The virtual nodes come from CONVOY_PPN / CONVOY_NODEMAP (tests/mpi/CMakeLists.txt).
 *
 *   test_types [--quick]    (--quick: counts up to 4098 ints)
 */
#include "common.h"

#include "api/api.h"
#include "convoy.h"
#include "select/select.h"

enum { R_INT, R_PAIR, R_HOLEY, R_PADDED, NROLES };
static MPI_Datatype role_type[NROLES];
static const int role_ints[NROLES] = {1, 2, 2, 1}; /* ints per element */
static const int POISON = 0x7eadbeef;

static void make_types(void)
{
    MPI_Datatype v;
    role_type[R_INT] = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &role_type[R_PAIR]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * sizeof(int), &role_type[R_HOLEY]);
    MPI_Type_free(&v);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &role_type[R_PADDED]);
    for (int k = R_PAIR; k < NROLES; k++)
        MPI_Type_commit(&role_type[k]);
}

/* Where int j of a stream of ints lies in a buffer of this role (in ints). */
static int64_t at(int role, int64_t j)
{
    switch (role) {
    case R_HOLEY: return j / 2 * 4 + j % 2 * 2;
    case R_PADDED: return 2 * j;
    default: return j;
    }
}

static int value(int rank, int64_t j)
{
    return (int)(tc_hash(77, rank, j) & 0x3fffffff);
}

/* A buffer of n ints of this role, poisoned. */
static int *make_buf(int role, int64_t n)
{
    const size_t len = (size_t)(n > 0 ? at(role, n - 1) + 2 : 1); /* and the gap after */
    int *b = malloc(len * sizeof *b);
    for (size_t i = 0; i < len; i++)
        b[i] = POISON;
    return b;
}

/* Whether ints [off, off + n) of buffer b (this role) hold rank `src`'s ints from 0, and
 * the gaps before the next block still the poison. */
static int holds(int role, const int *b, int64_t off, int64_t n, int src)
{
    for (int64_t j = 0; j < n; j++)
        if (b[at(role, off + j)] != value(src, j)) return 0;
    for (int64_t j = 0; j < n; j++)
        if (at(role, off + j) + 1 < at(role, off + j + 1) && b[at(role, off + j) + 1] != POISON)
            return 0;
    return 1;
}

static void check(MPI_Comm comm, int ok, const char *coll, const char *algo, int64_t n,
                  const char *how)
{
    char what[200];
    snprintf(what, sizeof what, "%s algo=%s ints=%lld %s", coll, algo ? algo : "default",
             (long long)n, how);
    tc_case(what);
    tc_check(comm, ok, what, "wrong data or poison overwritten");
}

/* Allgatherv: rank i contributes c[i] ints (one rank none), placed in reverse rank order. */
static void case_allgatherv(MPI_Comm comm, const char *algo, int64_t n, int inplace)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const int rr = rank % NROLES, sr = (rank + 1) % NROLES;
    int64_t *c = malloc((size_t)p * sizeof *c), *d = malloc((size_t)p * sizeof *d), total = 0;
    for (int i = 0; i < p; i++)
        c[i] = p > 2 && i == 1 ? 0 : n / 2 * (1 + i % 3) / 3 * 2, total += c[i];
    for (int i = p - 1, off = 0; i >= 0; off += (int)c[i], i--)
        d[i] = off;
    int *rc = malloc((size_t)p * sizeof *rc), *rd = malloc((size_t)p * sizeof *rd);
    for (int i = 0; i < p; i++)
        rc[i] = (int)(c[i] / role_ints[rr]), rd[i] = (int)(d[i] / role_ints[rr]);
    int *rb = make_buf(rr, total), *sb = make_buf(sr, c[rank]);
    int *own = inplace ? rb : sb;
    const int orole = inplace ? rr : sr;
    const int64_t ooff = inplace ? d[rank] : 0;
    for (int64_t j = 0; j < c[rank]; j++)
        own[at(orole, ooff + j)] = value(rank, j);
    int err = convoy_Allgatherv(inplace ? MPI_IN_PLACE : sb, (int)(c[rank] / role_ints[sr]),
                                role_type[sr], rb, rc, rd, role_type[rr], comm);
    int ok = err == MPI_SUCCESS;
    for (int i = 0; i < p && ok; i++)
        ok = holds(rr, rb, d[i], c[i], i);
    check(comm, ok, "allgatherv", algo, n, inplace ? "in place" : "");
    free(rb), free(sb), free(rc), free(rd), free(c), free(d);
}

static void case_allgather(MPI_Comm comm, const char *algo, int64_t n)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    const int rr = rank % NROLES, sr = (rank + 1) % NROLES;
    int *rb = make_buf(rr, n * p), *sb = make_buf(sr, n);
    for (int64_t j = 0; j < n; j++)
        sb[at(sr, j)] = value(rank, j);
    int err = convoy_Allgather(sb, (int)(n / role_ints[sr]), role_type[sr], rb,
                               (int)(n / role_ints[rr]), role_type[rr], comm);
    int ok = err == MPI_SUCCESS;
    for (int i = 0; i < p && ok; i++)
        ok = holds(rr, rb, n * i, n, i);
    check(comm, ok, "allgather", algo, n, "");
    free(rb), free(sb);
}

static void case_bcast(MPI_Comm comm, const char *algo, int64_t n, int root)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    const int role = rank % NROLES;
    int *b = make_buf(role, n);
    if (rank == root)
        for (int64_t j = 0; j < n; j++)
            b[at(role, j)] = value(root, j);
    int err = convoy_Bcast(b, (int)(n / role_ints[role]), role_type[role], root, comm);
    char how[32];
    snprintf(how, sizeof how, "root=%d", root);
    check(comm, err == MPI_SUCCESS && holds(role, b, 0, n, root), "bcast", algo, n, how);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(240);
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0, rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    make_types();
    const int64_t counts[] = {2, 10, 4098, 200002};
    const int ncounts = quick ? 3 : 4;
    const char *colls[] = {"allgatherv", "allgather", "bcast"};
    const int ids[] = {CONVOY_COLL_ALLGATHERV, CONVOY_COLL_ALLGATHER, CONVOY_COLL_BCAST};
    for (int k = 0; k < 3; k++) {
        const char *algos[40];
        int na = 0;
        algos[na++] = NULL;
        for (int i = 0; i < convoy__nalgos && na < 40; i++)
            if (convoy__algo_serves(&convoy__algos[i], ids[k])) algos[na++] = convoy__algos[i].name;
        for (int a = 0; a < na; a++) {
            tc_force_algo(colls[k], algos[a]);
            for (int c = 0; c < ncounts; c++) {
                if (k == 0) {
                    case_allgatherv(MPI_COMM_WORLD, algos[a], counts[c], 0);
                    case_allgatherv(MPI_COMM_WORLD, algos[a], counts[c], 1);
                } else if (k == 1) {
                    case_allgather(MPI_COMM_WORLD, algos[a], counts[c]);
                } else {
                    for (int root = 0; root < p; root++)
                        case_bcast(MPI_COMM_WORLD, algos[a], counts[c], root);
                }
            }
        }
        tc_force_algo(colls[k], NULL);
    }
    for (int k = R_PAIR; k < NROLES; k++)
        MPI_Type_free(&role_type[k]);
    int status = tc_finish();
    MPI_Finalize();
    return status;
}
