/*
 * Machine parameters (src/api/machine.c): measured once at the first blocking setup, the
 * same on every rank of a communicator (ranks must choose alike), reused by later
 * communicators, replaced by the built-in values under CONVOY_REPRODUCIBLE=1 and by
 * CONVOY_ALPHA/_BETA per call (CONVOY_BETA for every message size); the large message's
 * beta is measured too; the gaps (a further message's cost) are measured too; and
 * the pipelined ring's block size follows them (eq. (2)
 * of papers/002: B grows with the square root of alpha / beta).
 */
#include "tests/mpi/common.h" /* first: it sets _POSIX_C_SOURCE */

#include "api/internal.h"

/* The values agree on all ranks of comm: their MIN and MAX are equal. */
static int agreed(MPI_Comm comm, const convoy__machine *m)
{
    double v[7] = {m->alpha, m->beta, m->gamma, m->gap, m->gap_node, m->xgap_node, m->beta_large},
           lo[7], hi[7];
    MPI_Allreduce(v, lo, 7, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(v, hi, 7, MPI_DOUBLE, MPI_MAX, comm);
    return memcmp(lo, hi, sizeof lo) == 0;
}

static convoy__cstate *state_of(MPI_Comm comm)
{
    int x = 1, y;
    convoy_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm); /* makes the state */
    convoy__cstate *cs = NULL;
    convoy__cstate_get(comm, 1, &cs, NULL);
    return cs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char detail[256];

    /* First communicator: measured, plausible, agreed. */
    MPI_Comm a;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    convoy__cstate *cs = state_of(a);
    tc_check(MPI_COMM_WORLD, cs != NULL, "communicator state exists", "none");
    if (!cs) {
        int st = tc_finish();
        MPI_Finalize();
        return st;
    }
    const convoy__machine m = cs->machine;
    snprintf(detail, sizeof detail, "how=%s alpha=%g beta=%g (large %g) gamma=%g", cs->machine_how,
             m.alpha, m.beta, m.beta_large, m.gamma);
    tc_check(MPI_COMM_WORLD, strcmp(cs->machine_how, "measured") == 0,
             "first communicator measures the machine", detail);
    tc_check(MPI_COMM_WORLD,
             m.alpha > 1e-9 && m.alpha < 1e-2 && m.beta > 1e-14 && m.beta < 1e-6 &&
                 m.beta_large > 1e-14 && m.beta_large < 1e-6 && m.gamma > 1e-14 && m.gamma < 1e-6,
             "measured values are plausible (1 ns < alpha < 10 ms, betas and gamma < 1 us/B)",
             detail);
    tc_check(MPI_COMM_WORLD, agreed(a, &m), "every rank has the same values", detail);
    /* The gaps (coll.h): measured on the pair and, rank 0's node having 2 processes
     * (CONVOY_PPN=2), on the node pair and its exchange; each a positive time below 10 ms. */
    snprintf(detail, sizeof detail, "gap=%g+%g/B node=%g+%g/B exchange=%g+%g/B", m.gap, m.gap_b,
             m.gap_node, m.gap_node_b, m.xgap_node, m.xgap_node_b);
    tc_check(MPI_COMM_WORLD,
             m.gap > 0 && m.gap < 1e-2 && m.gap_node > 0 && m.gap_node < 1e-2 && m.xgap_node > 0 &&
                 m.xgap_node < 1e-2 && m.gap_b >= 0 && m.gap_b < 1e-6 && m.gap_node_b >= 0 &&
                 m.gap_node_b < 1e-6 && m.xgap_node_b >= 0 && m.xgap_node_b < 1e-6,
             "gaps measured and plausible (0 < gap < 10 ms, per byte < 1 us/B)", detail);

    /* A later communicator (other rank 0) reuses them without measuring. */
    MPI_Comm b;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b);
    convoy__cstate *cb = state_of(b);
    tc_check(MPI_COMM_WORLD,
             cb && strcmp(cb->machine_how, "measured earlier") == 0 &&
                 memcmp(&cb->machine, &m, sizeof m) == 0,
             "a later communicator reuses the measurement", cb ? cb->machine_how : "no state");

    /* Per call: reproducible means built-in; CONVOY_ALPHA overrides one value. */
    convoy__config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.alpha = cfg.beta = cfg.gamma = -1;
    convoy__machine got, builtin;
    convoy__machine_builtin(&builtin);
    cfg.reproducible = 1;
    convoy__machine_of_call(&cfg, cs, &got);
    tc_check(MPI_COMM_WORLD, memcmp(&got, &builtin, sizeof got) == 0,
             "CONVOY_REPRODUCIBLE plans with the built-in machine", "measured values used");
    cfg.reproducible = 0;
    cfg.alpha = 5e-6;
    convoy__machine_of_call(&cfg, cs, &got);
    tc_check(MPI_COMM_WORLD, got.alpha == 5e-6 && got.beta == m.beta,
             "CONVOY_ALPHA overrides alpha only", "other values changed");
    cfg.alpha = -1;
    cfg.beta = 2e-10;
    convoy__machine_of_call(&cfg, cs, &got);
    tc_check(MPI_COMM_WORLD, got.beta == 2e-10 && got.beta_large == 0 && got.alpha == m.alpha,
             "CONVOY_BETA gives one beta for every message size", "large value kept");

    /* eq. (2): B = sqrt(m alpha / (beta c)); four times alpha, twice the block. */
    if (size >= 3) {
        int64_t *rc = calloc((size_t)size, sizeof *rc), *dp = calloc((size_t)size, sizeof *dp);
        for (int i = 0; i < size; i++)
            rc[i] = i == 0 ? 1 << 22 : 1 << 10, dp[i] = i ? dp[i - 1] + rc[i - 1] : 0;
        convoy__args ar = {.coll = CONVOY_COLL_ALLGATHERV,
                           .topo = &cs->topo,
                           .count = rc[rank],
                           .rcounts = rc,
                           .displs = dp,
                           .stype = {1, 1, 0, 1},
                           .rtype = {1, 1, 0, 1},
                           .machine = {1e-6, 1e-9, 1e-9}};
        const int64_t b1 = convoy__allgatherv_pipelined_block(&ar);
        ar.machine.alpha = 4e-6;
        const int64_t b4 = convoy__allgatherv_pipelined_block(&ar);
        snprintf(detail, sizeof detail, "B = %lld at alpha 1 us, %lld at 4 us", (long long)b1,
                 (long long)b4);
        tc_check(MPI_COMM_WORLD, b1 > 1 && llabs(b4 - 2 * b1) <= 2,
                 "the pipelined block size follows alpha / beta as eq. (2) says", detail);
        char line[512];
        convoy__allgatherv_pipelined_explain(&ar, line, sizeof line);
        tc_check(MPI_COMM_WORLD, strstr(line, "eq. (2)") != NULL,
                 "CONVOY_VERBOSE's line names eq. (2)", line);
        free(rc);
        free(dp);
    }

    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    int st = tc_finish();
    MPI_Finalize();
    return st;
}
