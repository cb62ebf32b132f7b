/*
 * Topology math: from a node id per rank to nodes, node ranks, lanes and flags; the test
 * layouts; CONVOY_NODEMAP parsing. Pure functions, shared by the library and the checker.
 */
#include "topo/topo.h"
#include "util/splitmix.h"
#include "sched/sched.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void convoy__topo_free(convoy__topo *t)
{
    free(t->node_of);
    free(t->node_rank_of);
    free(t->node_size);
    free(t->node_first);
    free(t->members);
    memset(t, 0, sizeof *t);
}

int convoy__topo_from_ids(convoy__topo *t, int size, int rank, const int64_t *ids)
{
    memset(t, 0, sizeof *t);
    if (size < 1 || rank < 0 || rank >= size) return CONVOY_ERR_ARG;
    t->size = size;
    t->rank = rank;
    t->node_of = malloc((size_t)size * sizeof *t->node_of);
    t->node_rank_of = malloc((size_t)size * sizeof *t->node_rank_of);
    t->node_size = calloc((size_t)size, sizeof *t->node_size);
    t->node_first = calloc((size_t)size + 1, sizeof *t->node_first);
    t->members = malloc((size_t)size * sizeof *t->members);
    int *first_rank = malloc((size_t)size * sizeof *first_rank);
    if (!t->node_of || !t->node_rank_of || !t->node_size || !t->node_first || !t->members ||
        !first_rank) {
        free(first_rank);
        convoy__topo_free(t);
        return CONVOY_ERR_NO_MEM;
    }
    /* Nodes are numbered in the order of their lowest rank: a rank whose id was not seen
     * at a lower rank opens a new node. The quadratic search is over nodes seen so far and
     * runs once per communicator. */
    for (int r = 0; r < size; r++) {
        int n = 0;
        while (n < t->nnodes && ids[first_rank[n]] != ids[r])
            n++;
        if (n == t->nnodes) first_rank[t->nnodes++] = r;
        t->node_of[r] = n;
        t->node_rank_of[r] = t->node_size[n]++;
    }
    free(first_rank);
    for (int n = 0; n < t->nnodes; n++)
        t->node_first[n + 1] = t->node_first[n] + t->node_size[n];
    for (int r = 0; r < size; r++)
        t->members[t->node_first[t->node_of[r]] + t->node_rank_of[r]] = r;

    int regular = 1, consecutive = 1;
    for (int n = 0; n < t->nnodes; n++) {
        if (t->node_size[n] > t->max_ppn) t->max_ppn = t->node_size[n];
        if (t->node_size[n] != t->node_size[0]) regular = 0;
        /* Consecutive: node n's members are exactly node_first[n] .. node_first[n+1]-1. */
        for (int k = t->node_first[n]; k < t->node_first[n + 1]; k++)
            if (t->members[k] != k) consecutive = 0;
    }
    t->flags = (regular ? CONVOY_TOPO_REGULAR : 0) | (consecutive ? CONVOY_TOPO_CONSECUTIVE : 0) |
               (regular && consecutive ? CONVOY_TOPO_UNIFORM : 0);
    t->node = t->node_of[rank];
    t->node_rank = t->node_rank_of[rank];
    t->ppn = t->node_size[t->node];
    t->lane_size = 0;
    for (int n = 0; n < t->nnodes; n++) {
        if (t->node_size[n] <= t->node_rank) continue;
        if (n == t->node) t->lane_rank = t->lane_size;
        t->lane_size++;
    }
    return 0;
}

int convoy__topo_copy(convoy__topo *dst, const convoy__topo *src)
{
    int64_t *ids = malloc((size_t)src->size * sizeof *ids);
    if (!ids) return CONVOY_ERR_NO_MEM;
    for (int r = 0; r < src->size; r++)
        ids[r] = src->node_of[r];
    int rc = convoy__topo_from_ids(dst, src->size, src->rank, ids);
    free(ids);
    return rc;
}

int convoy__topo_lane_peer(const convoy__topo *t, int l)
{
    for (int n = 0; n < t->nnodes; n++) {
        if (t->node_size[n] <= t->node_rank) continue;
        if (l-- == 0) return convoy__topo_rank_at(t, n, t->node_rank);
    }
    return -1;
}

int convoy__topo_lane_rank_of(const convoy__topo *t, int rank)
{
    int nr = t->node_rank_of[rank], l = 0;
    for (int n = 0; n < t->node_of[rank]; n++)
        if (t->node_size[n] > nr) l++;
    return l;
}

int convoy__layout_ids(int layout, int size, int ppn, uint64_t seed, int64_t *ids)
{
    if (size < 1 || ppn < 1) return CONVOY_ERR_ARG;
    uint64_t s = seed;
    switch (layout) {
    case CONVOY_LAYOUT_REGULAR:
        for (int r = 0; r < size; r++)
            ids[r] = r / ppn;
        return 0;
    case CONVOY_LAYOUT_NONUNIFORM: {
        int node = 0, left = 0;
        for (int r = 0; r < size; r++) {
            if (left == 0) {
                left = 1 + (int)(convoy__splitmix64(&s) % (uint64_t)(2 * ppn - 1));
                if (r > 0) node++;
            }
            ids[r] = node;
            left--;
        }
        return 0;
    }
    case CONVOY_LAYOUT_SCATTERED: {
        /* Deal ranks to nodes of ppn in a shuffled order: node ids of a shuffled regular
         * layout, so each node keeps ppn processes but its ranks are not consecutive. */
        for (int r = 0; r < size; r++)
            ids[r] = r / ppn;
        for (int r = size - 1; r > 0; r--) {
            int j = (int)(convoy__splitmix64(&s) % (uint64_t)(r + 1));
            int64_t tmp = ids[r];
            ids[r] = ids[j];
            ids[j] = tmp;
        }
        return 0;
    }
    default: return CONVOY_ERR_ARG;
    }
}

static const char *const layout_names[] = {"regular", "nonuniform", "scattered"};

int convoy__layout_parse(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(name, layout_names[i]) == 0) return i;
    return -1;
}

const char *convoy__layout_name(int layout)
{
    return layout >= 0 && layout < 3 ? layout_names[layout] : "?";
}

int convoy__nodemap_parse(const char *s, int64_t *ids, int max)
{
    int n = 0;
    const char *p = s;
    if (!*p) return -1;
    while (*p) {
        if (!isdigit((unsigned char)*p)) return -1;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno == ERANGE || n >= max) return -1;
        ids[n++] = v;
        p = end;
        if (*p == ',') {
            p++;
            if (!*p) return -1; /* trailing comma */
        } else if (*p) {
            return -1;
        }
    }
    return n;
}
