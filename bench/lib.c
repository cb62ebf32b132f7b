/*
 * The two "libraries" the benchmark compares: the MPI library's own collectives, called
 * through PMPI_* (an LD_PRELOADed Convoy, or Convoy's MPI_* wrappers linked in, cannot
 * intercept them), and Convoy's.
 *
 * Convoy gaining a collective is one line in bench_convoy below; a collective Convoy lacks
 * is timed natively only (and its guidelines use the native side).
 */
#include "bench.h"

#include "convoy.h"

#define FN(f) ((bench_fn)(f))

const bench_lib bench_native = {
    "native",
    {
        [BC_ALLGATHERV] = FN(PMPI_Allgatherv),
        [BC_ALLREDUCE] = FN(PMPI_Allreduce),
        [BC_BARRIER] = FN(PMPI_Barrier),
        [BC_BCAST] = FN(PMPI_Bcast),
        [BC_SCATTER] = FN(PMPI_Scatter),
        [BC_GATHER] = FN(PMPI_Gather),
        [BC_ALLGATHER] = FN(PMPI_Allgather),
        [BC_ALLTOALL] = FN(PMPI_Alltoall),
        [BC_REDUCE] = FN(PMPI_Reduce),
        [BC_REDUCE_SCATTER_BLOCK] = FN(PMPI_Reduce_scatter_block),
        [BC_SCAN] = FN(PMPI_Scan),
        [BC_EXSCAN] = FN(PMPI_Exscan),
        [BC_REDUCE_LOCAL] = FN(PMPI_Reduce_local),
        [BC_GATHERV] = FN(PMPI_Gatherv),
        [BC_SCATTERV] = FN(PMPI_Scatterv),
    },
};

const bench_lib bench_convoy = {
    "convoy",
    {
        [BC_ALLGATHERV] = FN(convoy_Allgatherv),
        [BC_ALLREDUCE] = FN(convoy_Allreduce),
        [BC_BARRIER] = FN(convoy_Barrier),
        [BC_ALLGATHER] = FN(convoy_Allgather),
        [BC_REDUCE_SCATTER_BLOCK] = FN(convoy_Reduce_scatter_block),
        [BC_BCAST] = FN(convoy_Bcast),
        [BC_SCATTER] = FN(convoy_Scatter),
        [BC_GATHER] = FN(convoy_Gather),
        [BC_GATHERV] = FN(convoy_Gatherv),
        [BC_SCATTERV] = FN(convoy_Scatterv),
    },
};

bench_fn bench_lib_fn(const bench_lib *L, int id)
{
    return L->fn[id] ? L->fn[id] : bench_native.fn[id];
}

int bench_lib_has(const bench_lib *L, int id)
{
    return L->fn[id] != NULL;
}
