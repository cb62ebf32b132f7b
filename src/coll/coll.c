/* Helpers shared by the builders. */
#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t convoy__param_get(const convoy__args *a, const char *name, int64_t def)
{
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].name, name) == 0) return a->params[i].value;
    return def;
}

int convoy__log2_floor(int64_t v)
{
    int k = 0;
    while (v >= 2) {
        v >>= 1;
        k++;
    }
    return k;
}

double convoy__gap(const convoy__machine *m, double bytes)
{
    const double whole = m->alpha + m->beta * bytes;
    if (m->gap <= 0) return m->alpha / 2 + m->beta * bytes;
    const double g = m->gap + m->gap_b * bytes;
    return g < whole ? g : whole;
}

double convoy__xgap(const convoy__machine *m, double bytes)
{
    if (m->xgap_node <= 0) return 0;
    const convoy__machine l = convoy__machine_levels(m);
    const double g = m->xgap_node + m->xgap_node_b * bytes,
                 most = 2 * (l.alpha_node + l.beta_node * bytes);
    return g < most ? g : most;
}

double convoy__posted_cost(const convoy__machine *m, int k, double bytes)
{
    if (k <= 0) return 0;
    return m->alpha + m->beta * bytes + (k - 1) * convoy__gap(m, bytes);
}

double convoy__round_cost(const convoy__machine *m, int q, int off, double bytes)
{
    const convoy__machine l = convoy__machine_levels(m);
    if (off <= 0) return l.alpha_node + q * l.beta_node * bytes;
    const double each = q * l.beta, lanes = off * l.beta_nic;
    return l.alpha + (each > lanes ? each : lanes) * bytes;
}

int convoy__round_off_shift(const convoy__topo *t, int64_t d, int n)
{
    const int P = t->size, n0 = t->node_of[0];
    int off = 0;
    for (int j = t->node_first[n0]; j < t->node_first[n0 + 1]; j++) {
        const int r = t->members[j];
        for (int i = 1; i <= n; i++)
            off += t->node_of[(r + (int64_t)i * d) % P] != n0;
    }
    return off;
}

double convoy__exchange_cost(const convoy__machine *m, int k, double bytes)
{
    if (k <= 0) return 0;
    if (m->xgap_node <= 0) return convoy__posted_cost(m, k, bytes);
    return m->alpha + m->beta * bytes + (k - 1) * convoy__xgap(m, bytes);
}

double convoy__binomial_bcast_cost(const convoy__machine *m, int p, double bytes)
{
    if (p <= 1) return 0;
    /* f(q): the time a subtree of q processes takes once its root has the data. The root's
     * children sit at offsets span/2, span/4, ..., 1 (those below q), the child at offset
     * o heading a subtree of min(o, q - o) processes, sent i-th (i = 0 first). Subtree
     * sizes are at most p, and f of each size below q is known when q is reached. */
    double *f = malloc((size_t)(p + 1) * sizeof *f);
    if (!f) return (convoy__log2_floor(p - 1) + 1) * (m->alpha + m->beta * bytes);
    const double whole = m->alpha + m->beta * bytes, share = convoy__gap(m, bytes);
    f[0] = f[1] = 0;
    for (int q = 2; q <= p; q++) {
        int span = 1;
        while (span < q)
            span <<= 1;
        double worst = 0;
        int i = 0;
        for (int o = span / 2; o >= 1; o /= 2) {
            if (o >= q) continue;
            const int sub = o < q - o ? o : q - o;
            const double t = whole + i * share + f[sub];
            if (t > worst) worst = t;
            i++;
        }
        f[q] = worst;
    }
    const double t = f[p];
    free(f);
    return t;
}

convoy__region convoy__agv_block(const convoy__args *a, int i)
{
    return convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * a->rtype.extent,
                       a->rcounts[i]);
}

convoy__region convoy__agv_own(const convoy__args *a)
{
    return a->inplace ? convoy__agv_block(a, a->topo->rank)
                      : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count);
}

int convoy__agv_copy_own(const convoy__args *a, convoy__schedule *s)
{
    const int r = a->topo->rank;
    if (a->inplace || a->rcounts[r] == 0) return -1;
    return convoy__add_copy(s, convoy__agv_own(a), convoy__agv_block(a, r), 0, NULL);
}

int convoy__coll_base(int coll)
{
    return coll == CONVOY_COLL_ALLGATHER              ? CONVOY_COLL_ALLGATHERV
           : coll == CONVOY_COLL_REDUCE_SCATTER_BLOCK ? CONVOY_COLL_REDUCE_SCATTER
                                                      : coll;
}

convoy__machine convoy__machine_levels(const convoy__machine *m)
{
    convoy__machine r = *m;
    if (r.alpha_node <= 0) r.alpha_node = r.alpha;
    if (r.beta_node <= 0) r.beta_node = r.beta;
    if (r.beta_nic < 0) r.beta_nic = 0;
    if (r.gap_node <= 0) r.gap_node = r.gap, r.gap_node_b = r.gap_b;
    return r;
}

convoy__machine convoy__machine_sized(const convoy__machine *m, double bytes)
{
    convoy__machine r = *m;
    r.beta_large = r.beta_node_large = 0;
    if (bytes <= CONVOY_BETA_BYTES) return r;
    double w =
        log(bytes / CONVOY_BETA_BYTES) / log((double)CONVOY_BETA_LARGE_BYTES / CONVOY_BETA_BYTES);
    if (w > 1) w = 1;
    /* Only upwards. The other per-byte terms (the lanes', the gaps') stay: measured apart,
     * they need not share the pair's luck, and scaled by its ratio one low probe made them
     * several times dearer (np 4 as 2 x 2, 0.015 ns/B at 32 KiB against 0.067 at 1 MiB:
     * the gap's 0.10 ns/B became 0.47 and Bcast `lane` 2.1 ms, measured 1.0). */
    if (m->beta_large > m->beta) r.beta += w * (m->beta_large - m->beta);
    if (m->beta_node_large > m->beta_node && m->beta_node > 0)
        r.beta_node += w * (m->beta_node_large - m->beta_node);
    return r;
}

convoy__region convoy__a2a_rblock(const convoy__args *a, int i)
{
    return convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * a->rtype.extent,
                       a->rcounts[i]);
}

convoy__region convoy__a2a_sblock(const convoy__args *a, int j)
{
    if (a->inplace)
        return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV,
                           a->displs[j] * a->rtype.extent - a->rtype.true_lb, a->rcounts[j]);
    return convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, j * a->count * a->stype.extent, a->count);
}

int convoy__a2a_stage(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size;
    const int64_t total = a->displs[p - 1] + a->rcounts[p - 1];
    if (!a->inplace || total == 0) return -1;
    const int64_t bytes = a->rtype.true_extent + (total - 1) * a->rtype.extent;
    if (s->tmp_bytes < bytes) s->tmp_bytes = bytes;
    return convoy__add_copy(s, convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, total),
                            convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, -a->rtype.true_lb, total), 0,
                            NULL);
}
