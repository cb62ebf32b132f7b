/*
 * The registry: one line per algorithm, in sections by collective. Adding an algorithm is
 * its file under src/coll/<coll>/ (builder and cost model), their declarations in
 * coll/coll.h and one line here, at the end of its collective's section.
 */
#include "select/select.h"

const convoy__algo convoy__algos[] = {
    /* allgatherv */
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "ring",
     .build = convoy__allgatherv_ring,
     .cost = convoy__allgatherv_ring_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "recdbl",
     .build = convoy__allgatherv_recdbl,
     .cost = convoy__allgatherv_recdbl_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "bruck",
     .build = convoy__allgatherv_bruck,
     .cost = convoy__allgatherv_bruck_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "gatherv_bcast",
     .build = convoy__allgatherv_gatherv_bcast,
     .cost = convoy__allgatherv_gatherv_bcast_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "neighbor",
     .build = convoy__allgatherv_neighbor,
     .applicable = convoy__allgatherv_neighbor_applicable,
     .cost = convoy__allgatherv_neighbor_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLGATHERV,
     .name = "pipelined",
     .build = convoy__allgatherv_pipelined,
     .cost = convoy__allgatherv_pipelined_cost,
     .params = "CONVOY_ALLGATHERV_BLOCK",
     .props = CONVOY_ALGO_REPRODUCIBLE,
     .explain = convoy__allgatherv_pipelined_explain},

    /* allreduce */
    {.coll = CONVOY_COLL_ALLREDUCE,
     .name = "recdbl",
     .build = convoy__allreduce_recdbl,
     .cost = convoy__allreduce_recdbl_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
    {.coll = CONVOY_COLL_ALLREDUCE,
     .name = "ring",
     .build = convoy__allreduce_ring,
     .cost = convoy__allreduce_ring_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_ALLREDUCE,
     .name = "rabenseifner",
     .build = convoy__allreduce_rabenseifner,
     .cost = convoy__allreduce_rabenseifner_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
    {.coll = CONVOY_COLL_ALLREDUCE,
     .name = "reduce_bcast",
     .build = convoy__allreduce_reduce_bcast,
     .cost = convoy__allreduce_reduce_bcast_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},

    /* barrier */
    {.coll = CONVOY_COLL_BARRIER,
     .name = "dissem",
     .build = convoy__barrier_dissem,
     .cost = convoy__barrier_dissem_cost,
     .params = "CONVOY_DISSEM_N",
     .props = CONVOY_ALGO_REPRODUCIBLE,
     .explain = convoy__barrier_dissem_explain},

    /* reduce_scatter */
    {.coll = CONVOY_COLL_REDUCE_SCATTER,
     .name = "ring",
     .build = convoy__reduce_scatter_ring,
     .cost = convoy__reduce_scatter_ring_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE},
    {.coll = CONVOY_COLL_REDUCE_SCATTER,
     .name = "rechalving",
     .build = convoy__reduce_scatter_rechalving,
     .cost = convoy__reduce_scatter_rechalving_cost,
     .props = CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
};
const int convoy__nalgos = (int)(sizeof convoy__algos / sizeof convoy__algos[0]);
