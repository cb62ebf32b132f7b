/*
 * Finding the nodes of a real communicator: the shared-memory domain of each process,
 * refined by the virtual-node override CONVOY_PPN=k or CONVOY_NODEMAP=id,id,... (indexed by
 * MPI_COMM_WORLD rank). A virtual node never spans two real ones: where the override asks
 * for that, the node is split along the real nodes and rank 0 says so.
 *
 * Each process contributes a pair (real node key, virtual node); equal pairs share a node.
 * The blocking path keys real nodes by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); the
 * nonblocking path (which may not block on a split) by a hash of the processor name.
 */
#include "topo/topo_mpi.h"
#include "platform/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int convoy__topo_key(int64_t real, int64_t key[2])
{
    int wr, wsize, rc;
    if ((rc = PMPI_Comm_rank(MPI_COMM_WORLD, &wr)) || (rc = PMPI_Comm_size(MPI_COMM_WORLD, &wsize)))
        return rc;
    key[0] = real;
    key[1] = virtual_node(wr, wsize);
    return MPI_SUCCESS;
}

int64_t convoy__host_key(void)
{
    return convoy__plat_node_key();
}

int convoy__topo_from_keys(convoy__topo *topo, int size, int rank, const int64_t *keys)
{
    int malformed = 0, spans = 0, wsize;
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int64_t *ids = malloc((size_t)size * sizeof *ids);
    if (!ids) return MPI_ERR_NO_MEM;
    for (int r = 0; r < size; r++)
        if (keys[2 * r + 1] == -2) malformed = 1;
    /* A node is a (real key, virtual node) pair, named by the first rank that has it. */
    for (int r = 0; r < size; r++) {
        int64_t v = malformed ? -1 : keys[2 * r + 1];
        ids[r] = r;
        for (int q = 0; q < r; q++) {
            int64_t vq = malformed ? -1 : keys[2 * q + 1];
            if (vq != v) continue;
            if (keys[2 * q] == keys[2 * r]) {
                ids[r] = ids[q];
                break;
            }
            if (v >= 0) spans = 1;
        }
    }
    if (rank == 0 && malformed)
        fprintf(stderr,
                "convoy: CONVOY_NODEMAP must list one node id per MPI_COMM_WORLD rank (%d of "
                "them) and CONVOY_PPN must be a positive integer; ignoring the virtual-node "
                "override\n",
                wsize);
    if (rank == 0 && spans)
        fprintf(stderr, "convoy: a virtual node of CONVOY_PPN/CONVOY_NODEMAP spans processes "
                        "that do not share memory; it is split along the real nodes\n");
    int rc = convoy__topo_from_ids(topo, size, rank, ids);
    free(ids);
    return rc ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

int convoy__topo_mpi(MPI_Comm comm, convoy__topo *topo)
{
    int rank, size, rc;
    MPI_Comm shm = MPI_COMM_NULL;
    int64_t *keys = NULL;
    if ((rc = PMPI_Comm_rank(comm, &rank)) || (rc = PMPI_Comm_size(comm, &size))) return rc;
    if ((rc = convoy__plat_split_node(comm, rank, &shm))) return rc;
    int real;
    int64_t key[2];
    if ((rc = PMPI_Allreduce(&rank, &real, 1, MPI_INT, MPI_MIN, shm))) goto out;
    if ((rc = convoy__topo_key(real, key))) goto out;
    if (!(keys = malloc((size_t)size * 2 * sizeof *keys))) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((rc = PMPI_Allgather(key, 2, MPI_INT64_T, keys, 2, MPI_INT64_T, comm))) goto out;
    rc = convoy__topo_from_keys(topo, size, rank, keys);
out:
    PMPI_Comm_free(&shm);
    free(keys);
    return rc;
}

int convoy__node_comm_mpi(MPI_Comm comm, const convoy__topo *topo, MPI_Comm *node_comm)
{
    MPI_Comm shm;
    int rc = convoy__plat_split_node(comm, topo->rank, &shm);
    if (rc) return rc;
    rc = PMPI_Comm_split(shm, topo->node, topo->rank, node_comm);
    PMPI_Comm_free(&shm);
    return rc;
}
