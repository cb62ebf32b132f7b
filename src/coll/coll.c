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
