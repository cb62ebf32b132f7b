/*
 * Finding the nodes of a real communicator: the shared-memory domain of each process
 * (MPI_Comm_split_type), refined by the virtual-node override CONVOY_PPN=k or
 * CONVOY_NODEMAP=id,id,... (indexed by MPI_COMM_WORLD rank). A virtual node never spans
 * two real ones: where the override asks for that, the node is split along the real
 * nodes and rank 0 says so.
 */
#include "topo/topo_mpi.h"

#include <stdio.h>
#include <stdlib.h>

/* The virtual node of world rank wr, or -1 without an override, or -2 if malformed. */
static int64_t virtual_node(int wr, int wsize)
{
    const char *map = getenv("CONVOY_NODEMAP");
    if (map && *map) {
        int64_t *ids = malloc((size_t)wsize * sizeof *ids);
        if (!ids) return -2;
        int n = convoy__nodemap_parse(map, ids, wsize);
        int64_t v = n == wsize ? ids[wr] : -2;
        free(ids);
        return v;
    }
    const char *ppn = getenv("CONVOY_PPN");
    if (ppn && *ppn) {
        char *end;
        long k = strtol(ppn, &end, 10);
        return *end == '\0' && k > 0 ? wr / k : -2;
    }
    return -1;
}

int convoy__topo_mpi(MPI_Comm comm, convoy__topo *topo, MPI_Comm *node_comm)
{
    int rank, size, wr, wsize, rc;
    MPI_Comm shm = MPI_COMM_NULL;
    int64_t *all = NULL, *ids = NULL;
    *node_comm = MPI_COMM_NULL;
    if ((rc = PMPI_Comm_rank(comm, &rank)) || (rc = PMPI_Comm_size(comm, &size)) ||
        (rc = PMPI_Comm_rank(MPI_COMM_WORLD, &wr)) || (rc = PMPI_Comm_size(MPI_COMM_WORLD, &wsize)))
        return rc;
    rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    if (rc) goto out;
    int real;
    rc = PMPI_Allreduce(&rank, &real, 1, MPI_INT, MPI_MIN, shm);
    if (rc) goto out;
    int64_t mine[2] = {real, virtual_node(wr, wsize)};
    all = malloc((size_t)size * 2 * sizeof *all);
    ids = malloc((size_t)size * sizeof *ids);
    if (!all || !ids) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = PMPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm);
    if (rc) goto out;
    int malformed = 0, spans = 0;
    for (int r = 0; r < size; r++) {
        if (all[2 * r + 1] == -2) malformed = 1;
        for (int q = 0; q < r && !spans; q++)
            if (all[2 * q + 1] >= 0 && all[2 * q + 1] == all[2 * r + 1] && all[2 * q] != all[2 * r])
                spans = 1;
    }
    if (rank == 0 && malformed)
        fprintf(stderr, "convoy: CONVOY_NODEMAP must list one node id per MPI_COMM_WORLD rank "
                        "(%d of them) and CONVOY_PPN must be a positive integer; ignoring the "
                        "virtual-node override\n",
                wsize);
    if (rank == 0 && spans && !malformed)
        fprintf(stderr, "convoy: a virtual node of CONVOY_PPN/CONVOY_NODEMAP spans processes "
                        "that do not share memory; it is split along the real nodes\n");
    /* A node is a (real node, virtual node) pair; the real node is its lowest rank. */
    for (int r = 0; r < size; r++) {
        int64_t v = malformed ? -1 : all[2 * r + 1];
        ids[r] = all[2 * r] * ((int64_t)wsize + 1) + (v + 1);
    }
    rc = convoy__topo_from_ids(topo, size, rank, ids);
    if (rc) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = PMPI_Comm_split(shm, topo->node, rank, node_comm);
out:
    if (shm != MPI_COMM_NULL) PMPI_Comm_free(&shm);
    free(all);
    free(ids);
    return rc;
}
