/* Selection: the cheapest applicable algorithm under the cost model, or a forced one. */
#include "select/select.h"

#include <stdlib.h>
#include <string.h>

static const char *const coll_names[CONVOY_NCOLL] = {
    "allgatherv", "allreduce", "barrier", "reduce_scatter", "allgather", "reduce_scatter_block",
    "bcast",      "gather",    "gatherv", "scatter",        "scatterv",  "reduce",
    "scan",       "exscan",    "alltoall"};

const char *convoy__coll_name(int coll)
{
    return coll >= 0 && coll < CONVOY_NCOLL ? coll_names[coll] : "?";
}

int convoy__coll_parse(const char *name)
{
    for (int c = 0; c < CONVOY_NCOLL; c++)
        if (strcmp(name, coll_names[c]) == 0) return c;
    return -1;
}

int convoy__algo_serves(const convoy__algo *al, int coll)
{
    return al->coll == coll || (al->also != 0 && al->also == coll);
}

const convoy__algo *convoy__algo_find(int coll, const char *name)
{
    for (int i = 0; i < convoy__nalgos; i++)
        if (convoy__algo_serves(&convoy__algos[i], coll) &&
            strcmp(convoy__algos[i].name, name) == 0)
            return &convoy__algos[i];
    return NULL;
}

void convoy__machine_builtin(convoy__machine *m)
{
    /* Shared-memory transport on one host: a few microseconds per message, a few GB/s.
     * Only the ratios matter for choosing; the benchmark measures the real values. */
    *m = (convoy__machine){.alpha = 2e-6,
                           .beta = 2.5e-10,
                           .gamma = 2.5e-10,
                           /* the level fields 0: unknown (convoy__machine_levels) */
                           .overhead = 1e-6}; /* Convoy's own work per call (machine.c) */
}

static int usable(const convoy__algo *al, const convoy__args *a, int reproducible)
{
    if (!convoy__algo_serves(al, a->coll)) return 0;
    if (reproducible && !(al->props & CONVOY_ALGO_REPRODUCIBLE)) return 0;
    if (convoy__coll_reduces(a->coll) && !a->commutative &&
        !(al->props & CONVOY_ALGO_NONCOMMUTATIVE))
        return 0;
    return !al->applicable || al->applicable(a);
}

const convoy__algo *convoy__select(const convoy__args *a, const convoy__machine *m,
                                   const char *forced, int reproducible)
{
    if (forced && *forced) {
        const convoy__algo *al = convoy__algo_find(a->coll, forced);
        return al && usable(al, a, reproducible) ? al : NULL;
    }
    const convoy__algo *best = NULL;
    double best_t = 0;
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (!usable(al, a, reproducible)) continue;
        double t = convoy__algo_time(al, a, m);
        if (!best || t < best_t) {
            best = al;
            best_t = t;
        }
    }
    return best;
}

int convoy__select_close(const convoy__args *a, const convoy__machine *m, double within,
                         const convoy__algo **out, int max)
{
    const convoy__algo *best = convoy__select(a, m, NULL, 0);
    if (!best || max < 1) return 0;
    if (max > CONVOY_CLOSE_MAX) max = CONVOY_CLOSE_MAX;
    double t[CONVOY_CLOSE_MAX] = {convoy__algo_time(best, a, m)};
    const double limit = within * t[0];
    int n = 1;
    out[0] = best;
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (al == best || !usable(al, a, 0)) continue;
        const double ti = convoy__algo_time(al, a, m);
        if (ti > limit) continue;
        /* Into its place by predicted time (after equal ones: the registry's order, as
         * convoy__select's); the slowest falls off a full list. */
        int j = n;
        while (j > 0 && t[j - 1] > ti)
            j--;
        if (j >= max) continue;
        if (n < max) n++;
        for (int k = n - 1; k > j; k--) {
            out[k] = out[k - 1];
            t[k] = t[k - 1];
        }
        out[j] = al;
        t[j] = ti;
    }
    return n;
}

double convoy__algo_cost(const convoy__algo *al, const convoy__args *a, const convoy__machine *m)
{
    if (!al->cost) return 0;
    if (!(al->props & (CONVOY_ALGO_FLAT | CONVOY_ALGO_BASELINE)) || a->topo->nnodes < 2 ||
        a->topo->max_ppn < 2)
        return al->cost(a, m);
    convoy__machine f = convoy__machine_levels(m);
    if (f.alpha_node > f.alpha) f.alpha = f.alpha_node;
    if (f.beta_node > f.beta) f.beta = f.beta_node;
    if (f.gap_node > f.gap) f.gap = f.gap_node;
    if (f.gap_node_b > f.gap_b) f.gap_b = f.gap_node_b;
    return al->cost(a, &f);
}

double convoy__algo_time(const convoy__algo *al, const convoy__args *a, const convoy__machine *m)
{
    return convoy__algo_cost(al, a, m) + m->overhead;
}

int convoy__native_preferred(const convoy__algo *al, const convoy__args *a,
                             const convoy__machine *m, double *tn)
{
    *tn = convoy__native_cost(a, m);
    return al && *tn >= 0 && convoy__algo_time(al, a, m) >= CONVOY_NATIVE_MARGIN * *tn;
}

double convoy__native_cost(const convoy__args *a, const convoy__machine *m)
{
    /* The library's collectives send on its own blocking path (alpha_native), not through
     * Convoy's executor (alpha): at small counts that, with the overhead, is the gap. That
     * path is never slower than Convoy's, which sends through the same library: a larger
     * measured alpha_native is noise of the setup's measurement (a loaded machine), and
     * would let Convoy's copy of a flat algorithm replace the library's own. */
    convoy__machine nm = convoy__machine_levels(m);
    if (m->alpha_native > 0 && m->alpha_native < m->alpha) {
        nm.alpha_node *= m->alpha_native / m->alpha; /* not measured: the same ratio */
        nm.alpha = m->alpha_native;
    }
    double best = -1;
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *al = &convoy__algos[i];
        if (!(al->props & CONVOY_ALGO_BASELINE) || !al->cost || !usable(al, a, 0)) continue;
        double t = convoy__algo_cost(al, a, &nm);
        if (best < 0 || t < best) best = t;
    }
    return best;
}
