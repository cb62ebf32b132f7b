/*
 * Barrier by n-way dissemination with the adapted last round (End, Mohan, Rotaru, Reinhold,
 * "Adaption of the n-way dissemination algorithm for GASPI split-phase allreduce",
 * papers/003_0922d471b120eaa4.txt, §III-V; n-way dissemination: Hoefler, Mehlan, Mietke,
 * Rehm 2006; dissemination: Hensgen, Finkel, Manber 1988).
 *
 * Idea: in round l = 1..k, k = ceil(log_{n+1} P), rank p sends a message to
 * p + i (n+1)^(l-1) and receives one from p - i (n+1)^(l-1) (mod P), i = 1..n; the sends of
 * round l wait for all receives of the rounds before. A message carries what its sender knows:
 * after round l a rank has heard, directly or through others, from exactly the
 * W_l = (n+1)^l ranks p, p-1, ..., p - W_l + 1 (a window: round l adds n windows of W_{l-1}
 * ranks right below the one it had). No message of a barrier carries data: they are
 * zero-byte messages (MPI's cheapest, sent eagerly; arrival is the whole information, and
 * the checker's knowledge sets travel with the envelope).
 *
 * Adapted last round (the paper's data boundaries, §IV, for an idempotent "operation":
 * a barrier may hear from a rank twice, so only the count of messages matters). Before
 * round k every rank knows the window of W = (n+1)^(k-1) < P ranks; message i of round k
 * brings the window of W ranks ending at p - i W, so after messages 1..m the rank knows
 * (m+1) W consecutive ranks. The last round therefore sends only
 *
 *     m = ceil(P / W) - 1 = ceil(P / (n+1)^(k-1)) - 1    messages (1 <= m <= n),
 *
 * the fewest with (m+1) W >= P; with P = (n+1)^k it is n (the classic algorithm), with
 * P = (n+1)^(k-1) + 1 it is one. All offsets i (n+1)^(l-1) (i <= n, l < k) and i W (i <= m)
 * are distinct numbers in 1..P-1 (one non-zero digit in base n+1, m W < P), so no rank
 * talks to itself and each ordered pair exchanges at most one message: one tag per round
 * suffices and a dropped message is a missing piece of some rank's window.
 *
 * Cost: a rank sends and receives (k-1) n + m messages in k rounds. The messages of one
 * round overlap their latency; each extra one costs its injection overhead, taken as
 * alpha / 4 (DISSEM_GAP below): T(n) = k alpha + ((k-1) n + m - k) alpha / 4. The default n
 * minimizes T over n = 1..7 (ties: the smaller n, fewer messages); it depends only on P and
 * the communicator's machine parameters, so every rank chooses the same n.
 * Where processes share cores the algorithm's cost is at least the work bound
 * (convoy__shared_cores_bound in coll.h) of its k waits per rank: a round's n messages are
 * waited for together (the kept message path posts them all and waits once, round.c), so
 * the round is over when its senders have run, which they do side by side. Measured at 4
 * processes on 2 cores (np 4 as 2 x 2, convoy-bench, idle host, 23 runs over two days):
 * one round of 3 messages (n = 3) 0.74-1.11 of the library's barrier, 1.04 or more in 2
 * runs, the faster in 12; the fan-in/fan-out `linear` (barrier_linear.c: two rounds)
 * 0.67-1.06, 1.04 or more in 10. With every message counted as a wait of its own (the
 * bound before) `linear` was chosen. n is still chosen by T.
 * CONVOY_DISSEM_N=k forces n = k; CONVOY_DISSEM_N=auto times n = 1..7 on the communicator's
 * first blocking call (src/api/barrier.c, as in §V) and keeps the fastest. With n >= P - 1
 * it is one round in which every rank sends to all others.
 *
 * Lockstep rounds (one send and one receive per rank per round, as convoy-check counts
 * them): (k-1) n + m, the n messages of a round taking n of them (src/check/rounds.c).
 */
#include "coll/coll.h"

#include <stdio.h>
#include <stdlib.h>

/* An extra message within a round costs this fraction of alpha (see above). */
#define DISSEM_GAP 0.25
/* The range the cost model and CONVOY_DISSEM_N=auto choose n from (paper 003, §V). */
#define DISSEM_NMAX 7

/* Rounds and last-round messages of n-way dissemination over P ranks. */
static void shape(int P, int n, int *k, int *m)
{
    *k = 0;
    *m = 0;
    if (P <= 1) return;
    int64_t W = 1; /* (n+1)^(k-1) once the loop ends */
    int64_t reach = n + 1;
    *k = 1;
    while (reach < P) {
        W = reach;
        reach *= n + 1;
        ++*k;
    }
    *m = (int)((P + W - 1) / W) - 1;
}

static double cost_n(int P, int n, const convoy__machine *mc)
{
    int k, m;
    shape(P, n, &k, &m);
    if (k == 0) return 0;
    const int64_t msgs = (int64_t)(k - 1) * n + m;
    return k * mc->alpha + (double)(msgs - k) * DISSEM_GAP * mc->alpha;
}

/* The cost model's n (1 for P <= 2, where every n gives the same schedule). */
static int model_n(const convoy__args *a)
{
    const int P = a->topo->size;
    int best = 1;
    double best_t = cost_n(P, 1, &a->machine);
    for (int n = 2; n <= DISSEM_NMAX && n < P; n++) {
        double t = cost_n(P, n, &a->machine);
        if (t < best_t) {
            best = n;
            best_t = t;
        }
    }
    return best;
}

int convoy__barrier_dissem_n(const convoy__args *a)
{
    const int P = a->topo->size;
    int64_t n = convoy__param_get(a, "CONVOY_DISSEM_N", 0);
    if (n < 1) return model_n(a);
    /* Beyond P - 1 every n is the same single round. */
    return n > P - 1 ? (P > 1 ? P - 1 : 1) : (int)n;
}

void convoy__barrier_dissem_shape(const convoy__args *a, int *n, int *k, int *m)
{
    *n = convoy__barrier_dissem_n(a);
    shape(a->topo->size, *n, k, m);
}

int convoy__barrier_dissem(const convoy__args *a, convoy__schedule *s)
{
    const int P = a->topo->size, p = a->topo->rank;
    int n, k, m;
    convoy__barrier_dissem_shape(a, &n, &k, &m);
    if (k == 0) return 0;
    /* Zero-byte messages; the region names the receive buffer, which the API and the
     * checker always give (a barrier has no data). */
    const convoy__region none = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0);
    /* The sends of round l wait for the receives of every earlier round, not only of
     * round l - 1: receives complete in any order, and a round-(l-1) message alone says
     * nothing about the windows of rounds before it (convoy-check's causality check finds
     * a rank finishing without having heard from some rank otherwise). */
    int *deps = malloc((size_t)k * (size_t)n * sizeof *deps);
    if (!deps) return s->err = CONVOY_ERR_NO_MEM;
    int ndeps = 0;
    int64_t d = 1; /* (n+1)^(l-1) */
    for (int l = 1; l <= k && !s->err; l++, d *= n + 1) {
        const int cnt = l < k ? n : m, first = s->nsteps;
        /* Receives first and without dependencies: all rounds' receives are posted at the
         * start, so no message of the barrier arrives unexpected. */
        for (int i = 1; i <= cnt; i++)
            convoy__add_recv(s, CONVOY_COMM_ALL, (int)((p - i * d % P + P) % P), l - 1, none, 0,
                             NULL);
        for (int i = 1; i <= cnt; i++)
            convoy__add_send(s, CONVOY_COMM_ALL, (int)((p + i * d) % P), l - 1, none, ndeps, deps);
        for (int i = 0; i < cnt; i++)
            deps[ndeps++] = first + i;
    }
    free(deps);
    return s->err;
}

/* Messages each rank sends (and receives) with fan-out n. */
static double msgs_n(int P, int n)
{
    int k, m;
    shape(P, n, &k, &m);
    return k > 0 ? (double)(k - 1) * n + m : 0;
}

double convoy__barrier_dissem_cost(const convoy__args *a, const convoy__machine *m)
{
    int n, k, last;
    convoy__barrier_dissem_shape(a, &n, &k, &last);
    const double t = cost_n(a->topo->size, n, m), w = convoy__shared_cores_bound(m, k);
    return t > w ? t : w;
}

void convoy__barrier_dissem_explain(const convoy__args *a, char *buf, size_t len)
{
    int n, k, m;
    convoy__barrier_dissem_shape(a, &n, &k, &m);
    const char *how =
        convoy__param_get(a, "CONVOY_DISSEM_N", 0) > 0 ? "CONVOY_DISSEM_N" : "cost model";
    snprintf(buf, len,
             "n = %d (%s), %d round%s, last round %d of %d messages, %lld messages per rank, "
             "predicted %.1f us",
             n, how, k, k == 1 ? "" : "s", m, n, (long long)msgs_n(a->topo->size, n),
             1e6 * convoy__barrier_dissem_cost(a, &a->machine));
}
