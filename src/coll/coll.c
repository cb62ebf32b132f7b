/* Helpers shared by the builders. */
#include "coll/coll.h"

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
    return r;
}
