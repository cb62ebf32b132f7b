/*
 * The trial (src/api/trial.c): the first blocking calls of each kind take turns among
 * sides, and the side timed fastest serves the kind from then on, on every rank alike. Where
 * the MPI library's collective is a candidate (CONVOY_NATIVE_CANDIDATE=1, as in the drop-in)
 * side 0 is the library's, then come Convoy's close candidates; without it, side 0 is the
 * model's choice and only the collectives that move data are timed.
 *
 * Each kind's sides are learnt from the choices of its first calls on a communicator of
 * their own (side 0, then the others, until side 1 comes round again: trial.c rotates the
 * order by one each cycle). The program then makes sides slow: rank 0 sleeps before every
 * timed call of those sides, so every other rank waits for it inside the call. A side not
 * slowed must be the verdict: side 0 where all others were slowed, another where side 0
 * was, the last side where every other was; every rank must report the same choice on
 * every later call, and every call's result must equal the hand-derived one (the turns must
 * not corrupt anything, and a rank on another side than its peers would hang, which the
 * guard reports). A kind with one side (without the library: the reductions) must keep it
 * whatever the delays. Two kinds are timed at once (their calls interleaved): Allgatherv
 * with two count vectors of the same total, which must get records of their own, and the
 * other timed collectives; and one kind in two forms, rank 0 receiving in a datatype of its
 * own in every other call, which must count as one. Under CONVOY_TRIAL=0 the choice must
 * not depend on the delays (the model's alone). Large calls are timed whatever their
 * predicted time (large_sides).
 */
#include "common.h"

#include "api/api.h"
#include "api/internal.h"
#include "convoy.h"

enum { AFTER = 6, COUNT_MAX = 512, MAX_SIDES = CONVOY_TRIAL_SIDES };
static double delay = 5e-3; /* seconds; --delay s */

enum { ALLREDUCE, ALLGATHER, ALLGATHERV_A, ALLGATHERV_B, ALLTOALL, BARRIER, RSB, RS, NKINDS };
/* Two more kinds for large_sides (not in the pairs): Allgatherv of LARGE_COUNT ints per rank
 * (1 MiB each: every process ends with at least CONVOY_TRIAL_BYTES's default) and of 256
 * (1 KiB each: at most 8 KiB in all at np 8). */
enum { AGV_LARGE = NKINDS, AGV_SMALL, LARGE_COUNT = 1 << 18 };
static int *big_send, *big_recv;
static const char *const kind_name[NKINDS] = {"Allreduce 3 ints",       "Allgather 256 ints",
                                              "Allgatherv (vector a)",  "Allgatherv (vector b)",
                                              "Alltoall 4 ints",        "Barrier",
                                              "Reduce_scatter_block 8", "Reduce_scatter"};

static int rank, size;
static int *sendbuf, *recvbuf, *counts, *displs;

/* Allgatherv's vectors: a = rank + 1 elements each, b = the same total, reversed. */
static void vector(int kind, int *c, int *d)
{
    int off = 0;
    for (int i = 0; i < size; i++) {
        c[i] = kind == ALLGATHERV_A ? i + 1 : size - i;
        d[i] = off;
        off += c[i];
    }
}

static int value(int r, int i)
{
    return (int)(tc_hash(7, r, i) % 1000);
}

/* One call of the kind on comm; 1 if its result is the hand-derived one. */
static int call(int kind, MPI_Comm comm)
{
    int n = 0, ok = 1;
    switch (kind) {
    case ALLREDUCE:
        for (int i = 0; i < 3; i++)
            sendbuf[i] = value(rank, i);
        convoy_Allreduce(sendbuf, recvbuf, 3, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < 3; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += value(r, i);
            ok &= recvbuf[i] == want;
        }
        return ok;
    case ALLGATHER:
        for (int i = 0; i < 256; i++)
            sendbuf[i] = value(rank, i);
        convoy_Allgather(sendbuf, 256, MPI_INT, recvbuf, 256, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 256; i++)
                ok &= recvbuf[r * 256 + i] == value(r, i);
        return ok;
    case ALLGATHERV_A:
    case ALLGATHERV_B:
        vector(kind, counts, displs);
        for (int i = 0; i < counts[rank]; i++)
            sendbuf[i] = value(rank, i);
        convoy_Allgatherv(sendbuf, counts[rank], MPI_INT, recvbuf, counts, displs, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++)
                ok &= recvbuf[displs[r] + i] == value(r, i);
        return ok;
    case ALLTOALL:
        for (int i = 0; i < 4 * size; i++)
            sendbuf[i] = value(rank, i);
        convoy_Alltoall(sendbuf, 4, MPI_INT, recvbuf, 4, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 4; i++)
                ok &= recvbuf[r * 4 + i] == value(r, rank * 4 + i);
        return ok;
    case AGV_LARGE:
    case AGV_SMALL:
        n = kind == AGV_LARGE ? LARGE_COUNT : 256;
        for (int r = 0; r < size; r++)
            counts[r] = n, displs[r] = r * n;
        for (int i = 0; i < n; i++)
            big_send[i] = value(rank, i);
        convoy_Allgatherv(big_send, n, MPI_INT, big_recv, counts, displs, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                ok &= big_recv[r * n + i] == value(r, i);
        return ok;
    case BARRIER: return convoy_Barrier(comm) == MPI_SUCCESS;
    case RSB:
    case RS:
        for (int r = 0; r < size; r++) {
            counts[r] = kind == RSB ? 8 : 1 + r % 3;
            displs[r] = n;
            n += counts[r];
        }
        for (int i = 0; i < n; i++)
            sendbuf[i] = value(rank, i);
        if (kind == RSB)
            convoy_Reduce_scatter_block(sendbuf, recvbuf, 8, MPI_INT, MPI_SUM, comm);
        else
            convoy_Reduce_scatter(sendbuf, recvbuf, counts, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < counts[rank]; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += value(r, displs[rank] + i);
            ok &= recvbuf[i] == want;
        }
        return ok;
    }
    return 0;
}

/* The choice the last call on comm ran, the same on every rank: "native", an algorithm's
 * name, or "(ranks differ)". */
static const char *agreed_choice(MPI_Comm comm)
{
    const char *mine = convoy__comm_last_algo(comm);
    uint64_t h = 0;
    for (const char *p = mine; p && *p; p++)
        h = tc_mix(h ^ (uint64_t)(unsigned char)*p);
    uint64_t lo = 0, hi = 0;
    PMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    PMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    return lo != hi ? "(ranks differ)" : mine ? mine : "(none)";
}

/* A kind's sides as its trial runs them: side 0 first (the library's where it is a
 * candidate, "native"; else the model's choice), then Convoy's other candidates, one untimed
 * call each; then the next cycle, which trial.c's rotation starts with side 1. Learnt from
 * the choices of its first calls on a communicator of their own (the sides are a function
 * of the call). Returns how many (1: not timed, side 0's choice again; 0 if the ranks
 * disagreed or the order was none of these); names[s]: side s's choice. */
static int learn_sides(int kind, const char *names[MAX_SIDES])
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int n = 0;
    for (int i = 0; i <= MAX_SIDES; i++) {
        call(kind, comm);
        const char *c = agreed_choice(comm);
        if (c[0] == '(') break;
        if (i == 1 && strcmp(c, names[0]) == 0) {
            n = 1;
            break;
        }
        if (i >= 2 && strcmp(c, names[1]) == 0) {
            n = i;
            break;
        }
        names[i] = c;
    }
    MPI_Comm_free(&comm);
    return n;
}

/* The side of a kind's call i (from its first) among n sides, as trial.c's next_side turns
 * them: one call per side in each cycle, the order rotated by one from cycle to cycle. */
static int side_of(int i, int n)
{
    return (i % n + i / n) % n;
}

/* Times kinds x and y at once (calls interleaved) on a new communicator, rank 0 sleeping
 * before every timed call of the sides that slow[k] names (a bit per side, side 0 the
 * lowest); then AFTER more calls of each. Writes the choices after each kind's trial;
 * returns 1 if every result was right and every later call of a kind made the same choice
 * on every rank. */
static int trial_pair(const int kind[2], const int sides[2], const unsigned slow[2],
                      const char *chosen[2])
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int ok = 1;
    const int calls[2] = {(1 + CONVOY_TRIAL_CALLS) * sides[0], (1 + CONVOY_TRIAL_CALLS) * sides[1]};
    const int end = (calls[0] > calls[1] ? calls[0] : calls[1]) + AFTER;
    for (int i = 0; i < end; i++)
        for (int k = 0; k < 2; k++) {
            if (kind[k] < 0 || i >= calls[k] + AFTER) continue;
            const int timed = i >= sides[k] && i < calls[k];
            const int side = side_of(i, sides[k]);
            if (rank == 0 && timed && (slow[k] >> side & 1)) tc_sleep(delay);
            ok &= call(kind[k], comm);
            if (i >= calls[k]) {
                const char *c = agreed_choice(comm);
                if (i == calls[k]) chosen[k] = c;
                ok &= strcmp(c, chosen[k]) == 0 && c[0] != '(';
            }
        }
    MPI_Comm_free(&comm);
    return ok;
}

/* Allgatherv of one vector of bytes in two forms, interleaved: every rank receiving ints,
 * and rank 0 receiving pairs of ints (a datatype of its own, half the counts; MPI asks
 * only for equal type signatures). Both are one kind on every rank, or rank 0 would count
 * other calls than its peers and take another side. 1 if every result was right and every
 * call made one choice on every rank. */
static int mixed_types(void)
{
    /* (Allgatherv `node_segment`, which the trial may time here, cuts blocks into units:
     * built on bytes, at the same byte in both forms, src/coll/bytes.c.) */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int ok = 1, *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    int off = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = 2 * (r + 1);
        displs[r] = off;
        off += counts[r];
    }
    for (int j = 0; j < counts[rank]; j++)
        sendbuf[j] = value(rank, j);
    /* (Every side's calls and then some, in pairs of calls.) */
    for (int i = 0; i < CONVOY_TRIAL_CALLS_MAX / 2 + AFTER; i++)
        for (int k = 0; k < 2; k++) {
            const int pairs = k == 1 && rank == 0;
            for (int r = 0; r < size; r++) {
                rc[r] = pairs ? counts[r] / 2 : counts[r];
                rd[r] = pairs ? displs[r] / 2 : displs[r];
            }
            convoy_Allgatherv(sendbuf, counts[rank], MPI_INT, recvbuf, rc, rd,
                              pairs ? pair : MPI_INT, comm);
            for (int r = 0; r < size; r++)
                for (int j = 0; j < counts[r]; j++)
                    ok &= recvbuf[displs[r] + j] == value(r, j);
            ok &= agreed_choice(comm)[0] != '(';
        }
    free(rc);
    free(rd);
    MPI_Type_free(&pair);
    MPI_Comm_free(&comm);
    return ok;
}

/* Large calls are timed whatever the model predicts (trial.c, open_sides): with
 * CONVOY_TRIAL_MIN beyond any prediction, Allgatherv of 1 MiB per rank must have Convoy's
 * choice and at least one more of its candidates as sides (after the library's call where
 * it is a candidate), and of 1 KiB per rank Convoy's choice alone; every result right. And
 * in the large kind side 0 is slowed in the first SLOWED of its 16 timed cycles, every
 * other side in the rest: each other side is faster by the median ratio, in too few cycles
 * for the margin (3 of 4). Without the library (an open kind: side 0 is only the model's
 * guess) another side must serve the kind; with the margin, side 0 would. */
enum { SLOWED = 9 };
static void large_sides(int native)
{
    char *saved = getenv("CONVOY_TRIAL_MIN") ? strdup(getenv("CONVOY_TRIAL_MIN")) : NULL;
    setenv("CONVOY_TRIAL_MIN", "1e9", 1);
    big_send = malloc(sizeof(int) * LARGE_COUNT);
    big_recv = malloc(sizeof(int) * LARGE_COUNT * (size_t)size);
    for (int k = AGV_LARGE; k <= AGV_SMALL; k++) {
        const char *names[MAX_SIDES] = {0};
        const int n = learn_sides(k, names), want = native + (k == AGV_LARGE ? 2 : 1);
        char what[160], detail[160];
        snprintf(what, sizeof what, "trial: Allgatherv of %s per rank, CONVOY_TRIAL_MIN=1e9: %s",
                 k == AGV_LARGE ? "1 MiB" : "1 KiB",
                 k == AGV_LARGE ? "timed among Convoy's candidates" : "Convoy's choice alone");
        snprintf(detail, sizeof detail,
                 "%d sides learnt from the first calls (%s first), want %s%d", n,
                 names[0] ? names[0] : "none", k == AGV_LARGE ? ">= " : "", want);
        tc_check(MPI_COMM_WORLD, k == AGV_LARGE ? n >= want : n == want, what, detail);
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        int ok = 1;
        /* (The delays without the library only: with it, its call may be the slower one here
         * for good, these runs turning its own single copy off.) */
        const int slowing = k == AGV_LARGE && n > 1 && !native;
        for (int i = 0; i < (1 + CONVOY_TRIAL_CALLS) * n + AFTER; i++) {
            const int cycle = i / n;
            if (rank == 0 && slowing && cycle >= 1 && cycle <= CONVOY_TRIAL_CALLS &&
                (side_of(i, n) == 0) == (cycle <= SLOWED))
                tc_sleep(10 * delay); /* (calls of 4 MiB take milliseconds here) */
            ok &= call(k, comm);
        }
        const char *chosen = agreed_choice(comm);
        MPI_Comm_free(&comm);
        tc_check(MPI_COMM_WORLD, ok, "trial: Allgatherv's results through its trial", what);
        if (!slowing) continue;
        snprintf(what, sizeof what,
                 "trial: Allgatherv of 1 MiB per rank, side 0 slowed in %d of %d cycles: "
                 "another side serves it (open)",
                 SLOWED, CONVOY_TRIAL_CALLS);
        snprintf(detail, sizeof detail, "%s chosen, side 0 %s", chosen, names[0]);
        tc_check(MPI_COMM_WORLD, chosen[0] != '(' && strcmp(chosen, names[0]) != 0, what, detail);
    }
    free(big_send);
    free(big_recv);
    if (saved)
        setenv("CONVOY_TRIAL_MIN", saved, 1);
    else
        unsetenv("CONVOY_TRIAL_MIN");
    free(saved);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(120);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && strcmp(argv[1], "--delay") == 0) delay = atof(argv[2]);
    sendbuf = malloc(sizeof(int) * COUNT_MAX * (size_t)size);
    recvbuf = malloc(sizeof(int) * COUNT_MAX * (size_t)size);
    counts = malloc(sizeof(int) * (size_t)size);
    displs = malloc(sizeof(int) * (size_t)size);
    const char *v = getenv("CONVOY_TRIAL"), *w = getenv("CONVOY_TRIAL_WITHIN"),
               *mn = getenv("CONVOY_TRIAL_MIN"), *nc = getenv("CONVOY_NATIVE_CANDIDATE");
    const int trial = !v || strcmp(v, "0") != 0, wide = w && atof(w) >= 100 && mn && atof(mn) == 0,
              native = nc && strcmp(nc, "0") != 0;
    /* Each kind's sides. With the library a candidate every kind is timed; else those that
     * move data only, and where every applicable algorithm is let in (wide: any factor, any
     * predicted time) they have several candidates here. Under CONVOY_TRIAL=0 there are none to
     * learn: two, for the delays' pattern. */
    int sides[NKINDS];
    const char *names[NKINDS][MAX_SIDES] = {{0}};
    for (int k = 0; k < NKINDS; k++) {
        sides[k] = trial ? learn_sides(k, names[k]) : 2;
        if (!trial) continue;
        const int moves = k != ALLREDUCE && k != RSB && k != RS, want = native || moves ? 2 : 1;
        char what[160], detail[120];
        snprintf(what, sizeof what, "trial: %s: %s", kind_name[k],
                 want == 1 ? "not timed without the library (it reduces)"
                 : native  ? "the library's call, then Convoy's candidates"
                           : "Convoy's candidates, the model's choice first");
        snprintf(detail, sizeof detail, "%d sides learnt from the first calls (%s first)", sides[k],
                 names[k][0] ? names[k][0] : "none");
        tc_check(MPI_COMM_WORLD,
                 want == 1 ? sides[k] == 1 : sides[k] >= 2 || (!native && !wide && sides[k] == 1),
                 what, detail);
        if (native)
            tc_check(MPI_COMM_WORLD, names[k][0] && !strcmp(names[k][0], "native"),
                     "trial: the library's call first", detail);
        if (sides[k] < 1) sides[k] = 1;
    }
    /* Pairs: each kind once with side 0 slowed, once with every other side slowed. */
    static const int pairs[][2] = {{ALLGATHERV_A, ALLGATHERV_B},
                                   {ALLGATHERV_B, ALLGATHERV_A},
                                   {ALLREDUCE, ALLGATHER},
                                   {ALLGATHER, ALLREDUCE},
                                   {ALLTOALL, BARRIER},
                                   {BARRIER, ALLTOALL},
                                   {RSB, RS},
                                   {RS, RSB}};
    const char *first_slow[NKINDS] = {0}, *rest_slow[NKINDS] = {0};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        const int x = pairs[p][0], y = pairs[p][1];
        char what[160];
        snprintf(what, sizeof what, "trial: %s (side 0 slowed) with %s (the others slowed)",
                 kind_name[x], kind_name[y]);
        tc_case(what);
        const char *chosen[2] = {0};
        const int ok =
            trial_pair(pairs[p], (int[]){sides[x], sides[y]}, (unsigned[]){1, ~1u}, chosen);
        first_slow[x] = chosen[0];
        rest_slow[y] = chosen[1];
        tc_check(MPI_COMM_WORLD, ok, what, "a wrong result, or ranks that chose differently");
    }
    tc_case("trial: Allgatherv, rank 0 receiving in a datatype of its own");
    tc_check(MPI_COMM_WORLD, mixed_types(),
             "trial: Allgatherv, rank 0 receiving in a datatype of its own",
             "a wrong result, or ranks that chose differently");
    for (int k = 0; k < NKINDS; k++) {
        char what[160], detail[200];
        const char *a = first_slow[k] ? first_slow[k] : "(none)",
                   *b = rest_slow[k] ? rest_slow[k] : "(none)";
        snprintf(detail, sizeof detail, "side 0 (%s) slowed: %s; the others slowed: %s",
                 names[k][0] ? names[k][0] : "?", a, b);
        if (trial && sides[k] >= 2) {
            snprintf(what, sizeof what, "trial: %s served by a side not slowed", kind_name[k]);
            tc_check(MPI_COMM_WORLD,
                     strcmp(a, names[k][0]) != 0 && a[0] != '(' && strcmp(b, names[k][0]) == 0,
                     what, detail);
        } else if (trial) {
            snprintf(what, sizeof what, "trial: %s untimed, side 0 whatever the delays",
                     kind_name[k]);
            tc_check(MPI_COMM_WORLD, strcmp(a, names[k][0]) == 0 && strcmp(b, names[k][0]) == 0,
                     what, detail);
        } else {
            snprintf(what, sizeof what, "CONVOY_TRIAL=0: %s chosen by the model alone",
                     kind_name[k]);
            tc_check(MPI_COMM_WORLD, strcmp(a, b) == 0 && a[0] != '(', what, detail);
        }
    }
    /* The last side (Convoy's last candidate) the only one not slowed: it must serve the
     * kind, over side 0 and the model's choice. Every kind with three sides or more; under
     * wide settings (every applicable algorithm a candidate) at least one. */
    int several = 0;
    for (int k = 0; trial && k < NKINDS; k++) {
        if (sides[k] < 3) continue;
        several++;
        char what[160], detail[200];
        snprintf(what, sizeof what, "trial: %s served by the last of %d sides (the others slowed)",
                 kind_name[k], sides[k]);
        tc_case(what);
        const char *want = names[k][sides[k] - 1], *chosen[2] = {0};
        const unsigned all = (1u << sides[k]) - 1, slow = all & ~(1u << (sides[k] - 1));
        const int ok =
            trial_pair((int[]){k, -1}, (int[]){sides[k], 0}, (unsigned[]){slow, 0}, chosen);
        snprintf(detail, sizeof detail, "%s chosen, %s not slowed",
                 chosen[0] ? chosen[0] : "(none)", want);
        tc_check(MPI_COMM_WORLD, ok && chosen[0] && strcmp(chosen[0], want) == 0, what, detail);
    }
    if (trial && wide)
        tc_check(MPI_COMM_WORLD, several > 0,
                 "trial: CONVOY_TRIAL_WITHIN=100, CONVOY_TRIAL_MIN=0: some kind has three sides",
                 "no kind had");
    if (trial) large_sides(native);
    free(sendbuf);
    free(recvbuf);
    free(counts);
    free(displs);
    const int rc = tc_finish();
    MPI_Finalize();
    return rc;
}
