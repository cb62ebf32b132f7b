/* Helpers shared by the rooted builders (Bcast, Gather(v), Scatter(v)); conventions in
 * coll.h. */
#include "coll/coll.h"

#include <stdlib.h>

int convoy__rooted_gathers(const convoy__args *a)
{
    return a->coll == CONVOY_COLL_GATHER || a->coll == CONVOY_COLL_GATHERV;
}

int convoy__rooted_all_counts(const convoy__args *a)
{
    return !a->counts_local;
}

static const convoy__dtype *vtype(const convoy__args *a)
{
    return convoy__rooted_gathers(a) ? &a->rtype : &a->stype;
}

int64_t convoy__rooted_bytes(const convoy__args *a, int i)
{
    return a->rcounts[i] * vtype(a)->size;
}

int64_t convoy__rooted_total(const convoy__args *a)
{
    int64_t t = 0;
    for (int i = 0; i < a->topo->size; i++)
        t += convoy__rooted_bytes(a, i);
    return t;
}

convoy__region convoy__rooted_block(const convoy__args *a, int i)
{
    const int g = convoy__rooted_gathers(a);
    const int slot = a->packed & CONVOY_PACKED_VEC ? CONVOY_T_BYTE
                     : g                           ? CONVOY_T_RECV
                                                   : CONVOY_T_SEND;
    return convoy__reg(g ? CONVOY_BUF_RECV : CONVOY_BUF_SEND, slot, a->displs[i] * vtype(a)->extent,
                       a->rcounts[i]);
}

convoy__region convoy__rooted_own(const convoy__args *a)
{
    if (a->inplace) return convoy__rooted_block(a, a->topo->rank);
    const int g = convoy__rooted_gathers(a);
    return convoy__reg(g ? CONVOY_BUF_SEND : CONVOY_BUF_RECV,
                       a->packed & CONVOY_PACKED_OWN ? CONVOY_T_BYTE
                       : g                           ? CONVOY_T_SEND
                                                     : CONVOY_T_RECV,
                       0, a->count);
}

int convoy__binomial_span(int v, int p)
{
    if (v > 0) return v & -v;
    int m = 1;
    while (m < p)
        m <<= 1;
    return m;
}

int convoy__binomial_subtree(int v, int p)
{
    const int span = convoy__binomial_span(v, p);
    return v + span < p ? span : p - v;
}

int64_t *convoy__rooted_packed(const convoy__args *a, int v, int sub)
{
    int64_t *off = malloc((size_t)(sub + 1) * sizeof *off);
    if (!off) return NULL;
    off[0] = 0;
    for (int q = 0; q < sub; q++)
        off[q + 1] = off[q] + convoy__rooted_bytes(a, convoy__rooted_rank(a, v + q));
    return off;
}
