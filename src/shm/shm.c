/*
 * The node segment on MPI-3 shared memory windows. Every process allocates the same
 * share (SimGrid's SMPI needs equal sizes, see shared/notes/simgrid.md) and the window is
 * contiguous, so the node's memory is one array starting at node rank 0's base: first the
 * flags (one cache line or more per process, so that flag writes of different processes do
 * not share a line), then the data area.
 */
#define _GNU_SOURCE /* nanosleep, sched_yield */
#include "shm/shm.h"
#include "platform/platform.h"
#include "sched/sched.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LINE = 64 };

static atomic_int segments_in_use;

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

int convoy__shm_reserve(void)
{
    const char *v = getenv("CONVOY_MAX_SEGMENTS");
    int cap = v && *v ? atoi(v) : 16;
    int cur = atomic_load(&segments_in_use);
    while (cur < cap)
        if (atomic_compare_exchange_weak(&segments_in_use, &cur, cur + 1)) return 1;
    return 0;
}

void convoy__shm_unreserve(void)
{
    atomic_fetch_sub(&segments_in_use, 1);
}

int convoy__shm_create(MPI_Comm node_comm, int64_t bytes, int nflags, convoy__shm **out)
{
    *out = NULL;
    convoy__shm *seg = calloc(1, sizeof *seg);
    if (!seg) return MPI_ERR_NO_MEM;
    int rc = PMPI_Comm_size(node_comm, &seg->node_size);
    if (!rc) rc = PMPI_Comm_rank(node_comm, &seg->node_rank);
    if (rc) goto fail;
    seg->nflags = nflags;
    seg->bytes = bytes;
    seg->flag_stride = (int)(round_up((int64_t)nflags * 8, LINE) / 8);
    const int64_t flag_bytes = (int64_t)seg->node_size * seg->flag_stride * 8;
    const int64_t share =
        round_up((flag_bytes + bytes + seg->node_size - 1) / seg->node_size, LINE);

    MPI_Info info;
    rc = PMPI_Info_create(&info);
    if (rc) goto fail;
    PMPI_Info_set(info, "alloc_shared_noncontig", "false");
    void *mine = NULL;
    rc = PMPI_Win_allocate_shared((MPI_Aint)share, 1, info, node_comm, &mine, &seg->win);
    PMPI_Info_free(&info);
    if (rc) goto fail;
    char *base;
    rc = convoy__plat_shared_base(seg->win, 0, (MPI_Aint)share, &base);
    if (rc) goto fail_win;
    /* Each process clears its own share; the barrier publishes the zeros. */
    memset(mine, 0, (size_t)share);
    rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, seg->win);
    if (!rc) rc = PMPI_Win_sync(seg->win);
    if (!rc) rc = PMPI_Barrier(node_comm);
    if (!rc) rc = PMPI_Win_sync(seg->win);
    if (rc) goto fail_win;
    seg->flags = (_Atomic uint64_t *)base;
    seg->data = base + flag_bytes;
    *out = seg;
    return 0;
fail_win:
    PMPI_Win_free(&seg->win);
fail:
    free(seg);
    return rc ? rc : MPI_ERR_INTERN;
}

int convoy__shm_free(convoy__shm *seg)
{
    if (!seg) return 0;
    int rc = PMPI_Win_unlock_all(seg->win);
    int rc2 = PMPI_Win_free(&seg->win);
    free(seg);
    return rc ? rc : rc2;
}

void convoy__shm_notify(convoy__shm *seg, int flag, uint64_t value)
{
    atomic_store_explicit(&seg->flags[(int64_t)seg->node_rank * seg->flag_stride + flag], value,
                          memory_order_release);
    convoy__plat_notified();
}

int convoy__shm_reached(const convoy__shm *seg, int node_peer, int flag, uint64_t value)
{
    return atomic_load_explicit(&seg->flags[(int64_t)node_peer * seg->flag_stride + flag],
                                memory_order_acquire) >= value;
}

void convoy__backoff(unsigned *iter)
{
    convoy__plat_wait(iter);
}
