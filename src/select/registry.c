/*
 * The registry: one line per algorithm, in sections by collective. Adding an algorithm is
 * its file under src/coll/<coll>/ (builder and cost model), their declarations in
 * coll/coll.h and one line here, at the end of its collective's section.
 */
#include "select/select.h"

const convoy__algo convoy__algos[] = {
    /* allgatherv */
    {CONVOY_COLL_ALLGATHERV, "ring", convoy__allgatherv_ring, NULL, convoy__allgatherv_ring_cost,
     "", CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLGATHERV, "recdbl", convoy__allgatherv_recdbl, NULL,
     convoy__allgatherv_recdbl_cost, "", CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLGATHERV, "bruck", convoy__allgatherv_bruck, NULL, convoy__allgatherv_bruck_cost,
     "", CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLGATHERV, "gatherv_bcast", convoy__allgatherv_gatherv_bcast, NULL,
     convoy__allgatherv_gatherv_bcast_cost, "", CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLGATHERV, "neighbor", convoy__allgatherv_neighbor,
     convoy__allgatherv_neighbor_applicable, convoy__allgatherv_neighbor_cost, "",
     CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLGATHERV, "pipelined", convoy__allgatherv_pipelined, NULL,
     convoy__allgatherv_pipelined_cost, "CONVOY_ALLGATHERV_BLOCK", CONVOY_ALGO_REPRODUCIBLE},

    /* allreduce */
    {CONVOY_COLL_ALLREDUCE, "recdbl", convoy__allreduce_recdbl, NULL, convoy__allreduce_recdbl_cost,
     "", CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
    {CONVOY_COLL_ALLREDUCE, "ring", convoy__allreduce_ring, NULL, convoy__allreduce_ring_cost, "",
     CONVOY_ALGO_REPRODUCIBLE},
    {CONVOY_COLL_ALLREDUCE, "rabenseifner", convoy__allreduce_rabenseifner, NULL,
     convoy__allreduce_rabenseifner_cost, "",
     CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
    {CONVOY_COLL_ALLREDUCE, "reduce_bcast", convoy__allreduce_reduce_bcast, NULL,
     convoy__allreduce_reduce_bcast_cost, "",
     CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
};
const int convoy__nalgos = (int)(sizeof convoy__algos / sizeof convoy__algos[0]);
