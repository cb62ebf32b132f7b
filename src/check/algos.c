/*
 * Algorithms the checker knows beyond the registry: test builders that prove machinery
 * rather than serve users. The streaming node-segment allgatherv lives with the tests
 * (tests/common/shm_stream.c, also run for real by the MPI tests); the build adds it to
 * the checker library so that `convoy-check --algo shm_stream` and
 * `convoy-check --mutate shmread` can show it.
 */
#include "check/check.h"

#include "../../tests/common/shm_stream.h"

#include <string.h>

/* Node-local only: a complete allgatherv when the layout has a single node. */
static int shm_stream_applicable(const convoy__args *a)
{
    return a->topo->nnodes == 1 && convoy__param_get(a, "CONVOY_SEGMENT_BYTES", a->shm_bytes) > 0;
}

const convoy__algo convoy__check_extra_algos[] = {
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "shm_stream",
     .build = convoy__test_shm_stream,
     .applicable = shm_stream_applicable,
     .params = "CONVOY_SEGMENT_BYTES CONVOY_SHM_STREAM_SLOTS",
     .props = CONVOY_ALGO_REPRODUCIBLE},
};
const int convoy__check_nextra_algos =
    (int)(sizeof convoy__check_extra_algos / sizeof convoy__check_extra_algos[0]);

const convoy__algo *convoy__check_algo_find(int coll, const char *name)
{
    const convoy__algo *al = convoy__algo_find(coll, name);
    for (int i = 0; !al && i < convoy__check_nextra_algos; i++)
        if (convoy__check_extra_algos[i].coll == coll &&
            strcmp(convoy__check_extra_algos[i].name, name) == 0)
            al = &convoy__check_extra_algos[i];
    return al;
}
