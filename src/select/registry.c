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

    /* allreduce */
    {CONVOY_COLL_ALLREDUCE, "recdbl", convoy__allreduce_recdbl, NULL, convoy__allreduce_recdbl_cost,
     "", CONVOY_ALGO_REPRODUCIBLE | CONVOY_ALGO_NONCOMMUTATIVE},
};
const int convoy__nalgos = (int)(sizeof convoy__algos / sizeof convoy__algos[0]);
