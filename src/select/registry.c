/*
 * The registry: one line per algorithm. Adding an algorithm is its builder file under
 * src/coll/<coll>/, its declaration in coll/coll.h and one line here (with its cost
 * model below, next to the others so that they stay comparable).
 */
#include "select/select.h"

#include <string.h>

static double ceil_log2(int p)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    return k;
}

/* Linear ring (papers/002 §2.1): p - 1 rounds, each as long as the largest block. */
static double cost_allgatherv_ring(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    int64_t big = 0;
    for (int i = 0; i < p; i++)
        if (a->rcounts[i] > big) big = a->rcounts[i];
    return (p - 1) * (m->alpha + m->beta * (double)(big * a->rtype.size));
}

static double cost_allreduce_recdbl(const convoy__args *a, const convoy__machine *m)
{
    const int p = a->topo->size;
    const double bytes = (double)(a->count * a->rtype.size);
    int pp = 1;
    while (pp * 2 <= p)
        pp *= 2;
    double t = ceil_log2(pp) * (m->alpha + (m->beta + m->gamma) * bytes);
    if (p > pp) t += 2 * (m->alpha + m->beta * bytes) + m->gamma * bytes;
    return t;
}

const convoy__algo convoy__algos[] = {
    {CONVOY_COLL_ALLGATHERV, "ring", convoy__allgatherv_ring, NULL, cost_allgatherv_ring, "",
     CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLREDUCE, "recdbl", convoy__allreduce_recdbl, NULL, cost_allreduce_recdbl, "",
     CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
};
const int convoy__nalgos = (int)(sizeof convoy__algos / sizeof convoy__algos[0]);
