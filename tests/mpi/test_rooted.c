/*
 * The rooted collectives (Bcast, Gather, Gatherv, Scatter, Scatterv) against the MPI
 * library's own (called through PMPI_): every registered algorithm and the default choice,
 * every root, blocking, nonblocking and persistent (started twice, with new data), in place
 * at the root, a derived datatype with gaps (and mixed send/receive types of one
 * signature), zero and irregular counts, and displacements in reverse or shuffled order,
 * with uneven gaps, evenly strided or (Scatterv) overlapping (vector_layout). Receive
 * buffers start poisoned and are compared byte for byte with the native result (gaps
 * included: neither may write them). The virtual nodes come from CONVOY_PPN /
 * CONVOY_NODEMAP (tests/mpi/CMakeLists.txt), so the topology-aware algorithms see
 * irregular nodes and non-consecutive ranks.
 *
 *   test_rooted [--quick] [--verbose] [--algo NAME[,NAME...]]
 * --algo: only the registered algorithms of these names (not the default, not forced
 * native), e.g. the k-ported trees on a regular layout (their only one).
 */
#include "common.h"

#include "api/api.h"
#include "convoy.h"
#include "select/select.h"

enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT };
static const char *const mode_names[] = {"blocking", "nonblocking", "persistent"};

/* Datatype kinds: own type / vector type. */
enum { K_INT, K_GAPS, K_MIXED, NKINDS };
static const char *const kind_names[] = {"int", "vector-with-gaps", "int-vs-vector"};
static const char *g_only; /* --algo */
static MPI_Datatype T_gap; /* 2 ints at stride 2: extent 3 ints, a gap in each element */

typedef struct rcase {
    int coll, root, mode, kind, inplace, count;
    const char *algo; /* NULL: default */
    uint64_t seed;
} rcase;

static int g_verbose, g_quick;

static int is_gather(int coll)
{
    return coll == CONVOY_COLL_GATHER || coll == CONVOY_COLL_GATHERV;
}

static int is_v(int coll)
{
    return coll == CONVOY_COLL_GATHERV || coll == CONVOY_COLL_SCATTERV;
}

/* The vector type and its ints per element; the own type and its ints per element. */
static MPI_Datatype vec_type(int kind)
{
    return kind == K_INT ? MPI_INT : T_gap;
}
static MPI_Datatype own_type(int kind)
{
    return kind == K_GAPS ? T_gap : MPI_INT;
}
static int own_per_vec(int kind)
{
    return kind == K_MIXED ? 2 : 1;
}
static int64_t extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return (int64_t)ext;
}

/* Displacement patterns of the v-forms' root vector, by seed (every algorithm meets each
 * across roots and counts): blocks in reverse rank order with gaps of 2; in rank order with
 * uneven gaps (1..3); shuffled with gaps of 0..2; overlapping by half (Scatterv: MPI allows
 * overlapping send blocks; Gatherv: packed in rank order instead); evenly strided (a gap of
 * 1: a vector type where the counts are equal). */
enum { D_REVERSED, D_GAPS, D_SHUFFLED, D_OVERLAP, D_STRIDE, ND };
static const char *const displ_names[] = {"reversed", "gaps", "shuffled", "overlap", "stride"};

static int displ_pattern(const rcase *k)
{
    return (int)(k->seed % ND);
}

/* Per-rank block counts (in vector elements) and displacements of the root's vector:
 * equal counts for Gather/Scatter; for the v-forms some zeros, varying sizes, and the
 * displacements of displ_pattern. Returns the vector's elements. */
static int64_t vector_layout(const rcase *k, int p, int *counts, int *displs)
{
    if (!is_v(k->coll)) {
        for (int j = 0; j < p; j++)
            counts[j] = k->count, displs[j] = j * k->count;
        return (int64_t)p * k->count;
    }
    const int pat = displ_pattern(k);
    int *order = malloc((size_t)p * sizeof *order);
    for (int j = 0; j < p; j++) {
        counts[j] = (tc_hash(k->seed, j, 7) % 3 == 0)
                        ? 0
                        : (int)(tc_hash(k->seed, j, 8) % (uint64_t)(k->count + 1));
        order[j] = pat == D_REVERSED ? p - 1 - j : j;
    }
    for (int i = p - 1; pat == D_SHUFFLED && i > 0; i--) {
        const int r = (int)(tc_hash(k->seed, i, 9) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[r];
        order[r] = t;
    }
    int64_t pos = 1, end = 1;
    for (int i = 0; i < p; i++) {
        const int j = order[i];
        displs[j] = (int)pos;
        if (pos + counts[j] > end) end = pos + counts[j];
        pos += pat == D_REVERSED   ? counts[j] + 2
               : pat == D_GAPS     ? counts[j] + 1 + j % 3
               : pat == D_SHUFFLED ? counts[j] + (int64_t)(tc_hash(k->seed, j, 10) % 3)
               : pat == D_OVERLAP  ? (k->coll == CONVOY_COLL_SCATTERV ? counts[j] / 2 : counts[j])
                                   : counts[j] + 1;
    }
    free(order);
    return (pos > end ? pos : end) + 1;
}

static void fill(char *p, int64_t bytes, uint64_t seed, int rank)
{
    for (int64_t i = 0; i < bytes / 4; i++) {
        int v = (int)tc_hash(seed, rank, i);
        memcpy(p + 4 * i, &v, 4);
    }
}

static void force(int coll, const char *algo)
{
    tc_force_algo(convoy__coll_name(coll), algo);
}

/* One call of the collective through Convoy (mode) or natively (native = 1). */
typedef struct callargs {
    const void *sb;
    void *rb;
    int scount, rcount;
    MPI_Datatype st, rt;
    const int *counts, *displs;
} callargs;

static int call(const rcase *k, const callargs *c, MPI_Comm comm, int native, convoy_request *req)
{
    const int m = native ? -1 : k->mode;
#define PICK(blocking, nb, pers, nat, ...)                                                         \
    (m < 0                ? nat(__VA_ARGS__)                                                       \
     : m == M_BLOCKING    ? blocking(__VA_ARGS__)                                                  \
     : m == M_NONBLOCKING ? nb(__VA_ARGS__, req)                                                   \
                          : pers(__VA_ARGS__, MPI_INFO_NULL, req))
    switch (k->coll) {
    case CONVOY_COLL_BCAST:
        return PICK(convoy_Bcast, convoy_Ibcast, convoy_Bcast_init, PMPI_Bcast, c->rb, c->rcount,
                    c->rt, k->root, comm);
    case CONVOY_COLL_GATHER:
        return PICK(convoy_Gather, convoy_Igather, convoy_Gather_init, PMPI_Gather, c->sb,
                    c->scount, c->st, c->rb, c->rcount, c->rt, k->root, comm);
    case CONVOY_COLL_GATHERV:
        return PICK(convoy_Gatherv, convoy_Igatherv, convoy_Gatherv_init, PMPI_Gatherv, c->sb,
                    c->scount, c->st, c->rb, c->counts, c->displs, c->rt, k->root, comm);
    case CONVOY_COLL_SCATTER:
        return PICK(convoy_Scatter, convoy_Iscatter, convoy_Scatter_init, PMPI_Scatter, c->sb,
                    c->scount, c->st, c->rb, c->rcount, c->rt, k->root, comm);
    default:
        return PICK(convoy_Scatterv, convoy_Iscatterv, convoy_Scatterv_init, PMPI_Scatterv, c->sb,
                    c->counts, c->displs, c->st, c->rb, c->rcount, c->rt, k->root, comm);
    }
#undef PICK
}

/* Buffers of one case on one rank: the input (send buffer, or the Bcast buffer at the
 * root, or the in-place root's block) and the output, for Convoy and for the reference. */
typedef struct bufs {
    char *in, *out, *ref_in, *ref_out;
    int64_t in_bytes, out_bytes;
    callargs c, r;
} bufs;

static void bufs_free(bufs *b)
{
    free(b->in);
    free(b->out);
    free(b->ref_in);
    free(b->ref_out);
}

/* Sets up rank `rank`'s buffers and call arguments for data seed `dseed`. */
static void prepare(const rcase *k, int p, int rank, const int *counts, const int *displs,
                    int64_t vec_elems, uint64_t dseed, bufs *b)
{
    const MPI_Datatype vt = vec_type(k->kind), ot = own_type(k->kind);
    const int64_t vext = extent_of(vt), oext = extent_of(ot);
    const int at_root = rank == k->root, g = is_gather(k->coll);
    const int own = counts[rank] * own_per_vec(k->kind); /* own elements */
    callargs c = {0};
    if (k->coll == CONVOY_COLL_BCAST) {
        b->out_bytes = k->count * vext + 4;
        b->out = malloc((size_t)b->out_bytes);
        memset(b->out, 0xA5, (size_t)b->out_bytes);
        if (at_root) fill(b->out, b->out_bytes, dseed, rank);
        c = (callargs){.rb = b->out, .rcount = k->count, .rt = vt};
    } else {
        /* vector side (root) and own side */
        const int64_t vbytes = at_root ? vec_elems * vext + 4 : 0;
        const int64_t obytes = own * oext + 4;
        char *vec = calloc(1, (size_t)vbytes + 1), *mine = calloc(1, (size_t)obytes + 1);
        memset(vec, 0xA5, (size_t)vbytes);
        memset(mine, 0xA5, (size_t)obytes);
        if (g) {
            fill(mine, obytes, dseed, rank);
            if (at_root && k->inplace)
                fill(vec + displs[rank] * vext, counts[rank] * vext, dseed, rank);
        } else if (at_root) {
            fill(vec, vbytes, dseed, rank);
        }
        const int ip = at_root && k->inplace;
        if (g) {
            b->in = mine, b->in_bytes = obytes, b->out = vec, b->out_bytes = vbytes;
            c = (callargs){ip ? MPI_IN_PLACE : mine, vec, own, counts[0], ot, vt, counts, displs};
        } else {
            b->in = vec, b->in_bytes = vbytes, b->out = mine, b->out_bytes = obytes;
            c = (callargs){vec, ip ? MPI_IN_PLACE : mine, counts[0], own, vt, ot, counts, displs};
        }
        /* Arguments significant only at the root are garbage elsewhere. */
        if (!at_root) {
            if (g)
                c.rb = NULL, c.rcount = -5, c.rt = MPI_DATATYPE_NULL, c.counts = c.displs = NULL;
            else
                c.sb = NULL, c.scount = -5, c.st = MPI_DATATYPE_NULL, c.counts = c.displs = NULL;
        }
        if (!is_v(k->coll) && at_root) c.counts = c.displs = NULL;
    }
    b->c = c;
    /* The reference: copies of the same buffers. */
    b->ref_in = b->in ? malloc((size_t)b->in_bytes + 1) : NULL;
    b->ref_out = b->out ? malloc((size_t)b->out_bytes + 1) : NULL;
    if (b->in) memcpy(b->ref_in, b->in, (size_t)b->in_bytes);
    if (b->out) memcpy(b->ref_out, b->out, (size_t)b->out_bytes);
    b->r = c;
#define REBASE(f, from, to)                                                                        \
    if (b->r.f == (void *)(from) && (from)) b->r.f = (to)
    REBASE(sb, b->in, b->ref_in);
    REBASE(sb, b->out, b->ref_out);
    REBASE(rb, b->out, b->ref_out);
    REBASE(rb, b->in, b->ref_in);
#undef REBASE
    (void)p;
}

static int run_case(MPI_Comm comm, const rcase *k)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *counts = malloc((size_t)p * sizeof *counts), *displs = malloc((size_t)p * sizeof *displs);
    const int64_t vec_elems = vector_layout(k, p, counts, displs);
    char what[256], detail[256] = "";
    snprintf(what, sizeof what, "%s algo=%s root=%d %s %s inplace=%d count=%d%s%s seed=%llu",
             convoy__coll_name(k->coll), k->algo ? k->algo : "default", k->root,
             mode_names[k->mode], kind_names[k->kind], k->inplace, k->count,
             is_v(k->coll) ? " displs=" : "", is_v(k->coll) ? displ_names[displ_pattern(k)] : "",
             (unsigned long long)k->seed);
    tc_case(what);
    if (g_verbose && rank == 0) printf("%s\n", what);
    force(k->coll, k->algo);
    int ok = 1;
    bufs b = {0};
    convoy_request req = CONVOY_REQUEST_NULL;
    const int starts = k->mode == M_PERSISTENT ? 2 : 1;
    int all_ok = 1; /* every rank's verdict so far: all stop together (no hang) */
    for (int s = 0; s < starts && all_ok; s++) {
        bufs nb = {0};
        prepare(k, p, rank, counts, displs, vec_elems, k->seed * 31 + (uint64_t)s, &nb);
        if (s == 0) {
            b = nb;
        } else {
            /* A persistent request keeps its buffers: new data into the same ones. */
            if (b.in) memcpy(b.in, nb.in, (size_t)b.in_bytes);
            if (b.out) memcpy(b.out, nb.out, (size_t)b.out_bytes);
            if (b.ref_in) memcpy(b.ref_in, nb.ref_in, (size_t)b.in_bytes);
            if (b.ref_out) memcpy(b.ref_out, nb.ref_out, (size_t)b.out_bytes);
            bufs_free(&nb);
        }
        int rc = call(k, &b.r, comm, 1, NULL);
        if (rc) {
            snprintf(detail, sizeof detail, "the native collective failed");
            ok = rc = 0; /* still take part in Convoy's call: no rank may hang */
        }
        if (k->mode == M_BLOCKING) {
            rc = call(k, &b.c, comm, 0, NULL);
        } else if (k->mode == M_NONBLOCKING) {
            rc = call(k, &b.c, comm, 0, &req);
            if (!rc) rc = convoy_wait(&req);
        } else {
            if (s == 0) rc = call(k, &b.c, comm, 0, &req);
            if (!rc) rc = convoy_start(&req);
            if (!rc) rc = convoy_wait(&req);
        }
        char e[128];
        if (rc) {
            snprintf(detail, sizeof detail, "start %d: %s", s, tc_errstr(rc, e, sizeof e));
            ok = 0;
        } else if (b.out && memcmp(b.out, b.ref_out, (size_t)b.out_bytes)) {
            int64_t x = 0;
            while (b.out[x] == b.ref_out[x])
                x++;
            snprintf(detail, sizeof detail, "start %d: output byte %lld of %lld differs", s,
                     (long long)x, (long long)b.out_bytes);
            ok = 0;
        } else if (b.in && memcmp(b.in, b.ref_in, (size_t)b.in_bytes)) {
            snprintf(detail, sizeof detail, "start %d: the input buffer changed", s);
            ok = 0;
        }
        PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    }
    /* A forced algorithm must be the one that ran (blocking: the last planned call). */
    if (ok && k->algo && k->mode == M_BLOCKING && strcmp(k->algo, "native") != 0) {
        const char *ran = convoy__comm_last_algo(comm);
        if (!ran || strcmp(ran, k->algo) != 0) {
            snprintf(detail, sizeof detail, "ran %s", ran ? ran : "nothing");
            ok = 0;
        }
    }
    if (req != CONVOY_REQUEST_NULL) convoy_request_free(&req);
    bufs_free(&b);
    free(counts);
    free(displs);
    return tc_check(comm, ok, what, detail);
}

/* Whether algorithm al applies on comm to a case of this kind (as the selection sees it). */
static int applies(MPI_Comm comm, const convoy__algo *al, const rcase *k)
{
    if (!al->applicable) return 1;
    const convoy__topo *topo;
    int64_t shm_bytes;
    if (convoy__comm_topo(comm, &topo) || convoy__comm_shm_bytes(comm, &shm_bytes)) return 0;
    const int p = topo->size;
    int64_t *v = malloc(2 * (size_t)p * sizeof *v);
    for (int r = 0; r < p; r++)
        v[r] = k->count, v[p + r] = (int64_t)r * k->count;
    convoy__dtype t = {.size = 4, .extent = 4, .true_extent = 4};
    const int local = is_v(k->coll) && k->mode == M_NONBLOCKING;
    convoy__args a = {.coll = al->coll,
                      .topo = topo,
                      .count = k->count,
                      .root = k->root,
                      .rcounts = local && topo->rank != k->root ? NULL : v,
                      .displs = local && topo->rank != k->root ? NULL : v + p,
                      .stype = t,
                      .rtype = t,
                      .counts_local = local,
                      .shm_bytes = shm_bytes};
    int ok = al->applicable(&a);
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    free(v);
    return all;
}

/* Whether name is in the --algo list. */
static int listed(const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = g_only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static void suite(MPI_Comm comm, int coll, uint64_t seed)
{
    int p;
    MPI_Comm_size(comm, &p);
    const char *algos[32];
    int na = 0;
    if (!g_only) {
        algos[na++] = NULL;
        algos[na++] = "native";
    }
    for (int i = 0; i < convoy__nalgos && na < 32; i++)
        if (convoy__algo_serves(&convoy__algos[i], coll) &&
            (!g_only || listed(convoy__algos[i].name)))
            algos[na++] = convoy__algos[i].name;
    const int counts[] = {0, 1, 5, 3001};
    for (int ai = 0; ai < na; ai++) {
        const convoy__algo *al =
            algos[ai] && strcmp(algos[ai], "native") ? convoy__algo_find(coll, algos[ai]) : NULL;
        for (int root = 0; root < p; root++) {
            /* Blocking: every count, datatype kind and in-place choice at every root. */
            for (int ci = 0; ci < 4; ci++)
                for (int kind = 0; kind < NKINDS; kind++)
                    for (int ip = 0; ip <= (coll != CONVOY_COLL_BCAST); ip++) {
                        if (g_quick && (kind != (root + ci) % NKINDS || ip != (root + ci) % 2))
                            continue;
                        if (coll == CONVOY_COLL_BCAST && kind == K_MIXED) continue;
                        rcase k = {coll,       root,
                                   M_BLOCKING, kind,
                                   ip,         counts[ci],
                                   algos[ai],  seed + (uint64_t)(root * 100 + ci * 10 + kind)};
                        if (al && !applies(comm, al, &k)) continue;
                        run_case(comm, &k);
                    }
            /* Nonblocking and persistent: one count and kind per root, rotating. */
            for (int mode = M_NONBLOCKING; mode <= M_PERSISTENT; mode++) {
                rcase k = {coll,
                           root,
                           mode,
                           (root + mode) % NKINDS,
                           (root + mode) % 2,
                           counts[1 + (root + mode) % 3],
                           algos[ai],
                           seed + 7 + (uint64_t)root};
                if (coll == CONVOY_COLL_BCAST)
                    k.inplace = 0, k.kind = k.kind == K_MIXED ? K_INT : k.kind;
                if (al && !applies(comm, al, &k)) continue;
                run_case(comm, &k);
            }
        }
    }
    force(coll, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) g_quick = 1;
        if (!strcmp(argv[i], "--verbose")) g_verbose = 1;
        if (!strcmp(argv[i], "--algo") && i + 1 < argc) g_only = argv[++i];
    }
    tc_guard_init(120);
    setenv("CONVOY_ALGO_STRICT", "1", 1);
    MPI_Type_vector(2, 1, 2, MPI_INT, &T_gap);
    MPI_Type_commit(&T_gap);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    /* A blocking call first: nonblocking calls on a communicator without state go native. */
    int x = 0;
    convoy_Bcast(&x, 1, MPI_INT, 0, comm);
    const int colls[] = {CONVOY_COLL_BCAST, CONVOY_COLL_GATHER, CONVOY_COLL_GATHERV,
                         CONVOY_COLL_SCATTER, CONVOY_COLL_SCATTERV};
    for (int c = 0; c < 5; c++)
        suite(comm, colls[c], 1000 * (uint64_t)(c + 1));
    MPI_Comm_free(&comm);
    MPI_Type_free(&T_gap);
    int status = tc_finish();
    MPI_Finalize();
    return status;
}
