/*
 * Barrier by a fan-in to rank 0 and a fan-out from it (the "linear" barrier; Open MPI 4.1's
 * tuned component runs it for 4 to 7 processes: ompi_coll_base_barrier_intra_basic_linear).
 *
 * Idea: every rank but 0 sends rank 0 an empty message and receives one from it; rank 0
 * receives from every other rank and then sends to each. A rank leaves after rank 0's
 * message, which rank 0 sends only after hearing from everyone. Rank 0's sends wait for
 * all its receives (one dependency set), everything else is ready at start, so the kept
 * message path (src/api/round.c) runs it as one phase on the others and two on rank 0;
 * each rank posts its receive first, so rank 0's message never arrives unexpected.
 *
 * Cost: two message latencies, rank 0 handling P - 1 messages in each (DISSEM_GAP's
 * alpha / 4 per extra message, as dissemination's model counts a round's extra messages):
 * T = 2 alpha + 2 (P - 2) alpha / 4. Where processes share cores (convoy__shared_cores_bound)
 * it is at least share * 2 (P - 1) / P * alpha: 2 (P - 1) messages in all, the fewest of
 * any barrier. Measured at 4 processes on 2 cores (2 virtual nodes of 2) on a loaded host
 * (a hand-written loop, the slowest rank per repetition, median of 2000-3000, against
 * PMPI_Barrier interleaved; 4 runs, load 5.9-6.2): 1.02-1.03 of native, where
 * dissemination with n = 3 (one round) took 1.12-1.13, n = 1 and recursive doubling
 * 1.06-2.06 (two modes), a two-level barrier (flags or messages inside the virtual nodes,
 * one message between them) 1.8-2.0; at 3, 5 and 6 processes 1.01-1.05 (dissemination
 * 1.04-1.15); through Convoy (convoy-bench, 5 runs, load 15-18) 1.02 (1.00-1.05), dissem
 * 1.09 (1.06-1.12). On the idle host (23 convoy-bench runs) the two were as often the
 * faster, but this was 1.04 or more of native in 10 runs and dissem in 2, and dissem's one
 * round of messages waited for at once counts as one wait in its bound (barrier_dissem.c). With a
 * core per process dissemination's log rounds win and this is not chosen.
 */
#include "coll/coll.h"

#include <stdio.h>
#include <stdlib.h>

/* An extra message of a round costs this fraction of alpha (as barrier_dissem.c). */
#define LINEAR_GAP 0.25

int convoy__barrier_linear(const convoy__args *a, convoy__schedule *s)
{
    const int P = a->topo->size, p = a->topo->rank;
    if (P < 2) return 0;
    /* Zero-byte messages naming the receive buffer (a barrier has no data). */
    const convoy__region none = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0);
    if (p != 0) {
        convoy__add_recv(s, CONVOY_COMM_ALL, 0, 1, none, 0, NULL);
        convoy__add_send(s, CONVOY_COMM_ALL, 0, 0, none, 0, NULL);
        return s->err;
    }
    const int first = s->nsteps;
    for (int q = 1; q < P; q++)
        convoy__add_recv(s, CONVOY_COMM_ALL, q, 0, none, 0, NULL);
    if (s->err) return s->err;
    int *deps = malloc((size_t)(P - 1) * sizeof *deps);
    if (!deps) return s->err = CONVOY_ERR_NO_MEM;
    for (int q = 1; q < P; q++)
        deps[q - 1] = first + q - 1;
    for (int q = 1; q < P; q++)
        convoy__add_send(s, CONVOY_COMM_ALL, q, 1, none, P - 1, deps);
    free(deps);
    return s->err;
}

static double latency(int P, const convoy__machine *m)
{
    return P < 2 ? 0 : 2 * m->alpha + 2.0 * (P - 2) * LINEAR_GAP * m->alpha;
}

double convoy__barrier_linear_cost(const convoy__args *a, const convoy__machine *m)
{
    const int P = a->topo->size;
    if (P < 2) return 0;
    const double t = latency(P, m), w = convoy__shared_cores_bound(m, 2.0 * (P - 1) / P);
    return t > w ? t : w;
}

void convoy__barrier_linear_explain(const convoy__args *a, char *buf, size_t len)
{
    const int P = a->topo->size;
    const convoy__machine *m = &a->machine;
    snprintf(buf, len,
             "fan-in to rank 0 and fan-out, %d messages in all; latency model %.1f us, "
             "shared-cores bound %.1f us (%.2f processes per CPU)",
             P > 1 ? 2 * (P - 1) : 0, 1e6 * latency(P, m),
             1e6 * convoy__shared_cores_bound(m, P > 1 ? 2.0 * (P - 1) / P : 0), m->share);
}
