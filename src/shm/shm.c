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

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/uio.h>
#endif

enum {
    LINE = 64,
    INFO_WORDS = 2 /* after a process's flags: its pid, its probe word */
};

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
    seg->seen = calloc((size_t)seg->node_size, sizeof *seg->seen);
    if (!seg->seen) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    seg->flag_stride =
        (int)(round_up((int64_t)(CONVOY_SHM_FLAG1_WORD - 1 + nflags + INFO_WORDS) * 8, LINE) / 8);
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
    free((void *)seg->seen);
    free(seg);
    return rc ? rc : MPI_ERR_INTERN;
}

int convoy__shm_free(convoy__shm *seg)
{
    if (!seg) return 0;
    int rc = PMPI_Win_unlock_all(seg->win);
    int rc2 = PMPI_Win_free(&seg->win);
    free((void *)seg->seen);
    free(seg);
    return rc ? rc : rc2;
}

static _Atomic uint64_t *info(const convoy__shm *seg, int node_rank)
{
    return seg->flags + convoy__shm_flag_word(seg, node_rank, seg->nflags);
}

#define PROBE_MAGIC UINT64_C(0x436f6e766f79) /* "Convoy" */
static const uint64_t probe_word = PROBE_MAGIC;

int convoy__shm_cma_read(const convoy__shm *seg, int node_peer, uint64_t addr, void *dst,
                         int64_t bytes)
{
#if defined(__linux__) && !defined(CONVOY_SIMGRID)
    const pid_t pid = (pid_t)atomic_load_explicit(info(seg, node_peer), memory_order_relaxed);
    char *d = dst;
    /* The kernel may move fewer bytes than asked (it stops at a page it cannot map). */
    while (bytes > 0) {
        struct iovec l = {d, (size_t)bytes}, r = {(void *)(uintptr_t)addr, (size_t)bytes};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0) return MPI_ERR_OTHER;
        d += n, addr += (uint64_t)n, bytes -= n;
    }
    return 0;
#else
    (void)seg, (void)node_peer, (void)addr, (void)dst;
    return bytes > 0 ? MPI_ERR_OTHER : 0;
#endif
}

double convoy__shm_cma_rate(void *dst, const void *src, int64_t bytes, int reps)
{
#if defined(__linux__) && !defined(CONVOY_SIMGRID)
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        struct iovec l = {dst, (size_t)bytes}, r = {(void *)(uintptr_t)src, (size_t)bytes};
        const double t0 = PMPI_Wtime();
        if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)bytes) return 0;
        const double t = PMPI_Wtime() - t0;
        if (t < best) best = t;
    }
    return bytes > 0 ? best / (double)bytes : 0;
#else
    (void)dst, (void)src, (void)bytes, (void)reps;
    return 0;
#endif
}

int convoy__shm_cma_probe(convoy__shm *seg, MPI_Comm node_comm)
{
    _Atomic uint64_t *me = info(seg, seg->node_rank);
    atomic_store_explicit(&me[0], (uint64_t)getpid(), memory_order_relaxed);
    atomic_store_explicit(&me[1], (uint64_t)(uintptr_t)&probe_word, memory_order_relaxed);
    int rc = PMPI_Win_sync(seg->win);
    if (!rc) rc = PMPI_Barrier(node_comm);
    if (!rc) rc = PMPI_Win_sync(seg->win);
    if (rc) return -EIO;
    if (seg->node_size == 1) return seg->cma = 1;
    const int q = (seg->node_rank + 1) % seg->node_size;
    uint64_t got = 0;
    errno = ENOSYS;
    if (convoy__shm_cma_read(seg, q, atomic_load(&info(seg, q)[1]), &got, sizeof got) == 0)
        errno = got == PROBE_MAGIC ? 0 : EIO;
    seg->cma = errno == 0;
    return seg->cma ? 1 : -errno;
}

void convoy__shm_notify(convoy__shm *seg, int flag, uint64_t value)
{
    atomic_store_explicit(&seg->flags[convoy__shm_flag_word(seg, seg->node_rank, flag)], value,
                          memory_order_release);
    convoy__plat_notified();
}

int convoy__shm_reached(const convoy__shm *seg, int node_peer, int flag, uint64_t value)
{
    if (flag == 0 && convoy__shm_seen(seg, node_peer, value)) return 1;
    return convoy__shm_reached_word(seg, node_peer, flag,
                                    convoy__shm_flag_word(seg, node_peer, flag), value);
}

/* The wait policy (see shm.h): polls before yielding, polls before sleeping. Set at each
 * communicator setup from whether this host is oversubscribed; CONVOY_WAIT_SPIN and
 * CONVOY_WAIT_YIELD override. Relaxed atomics: a racing reader sees the old or the new
 * policy, both valid. */
static atomic_uint wait_spin = 16, wait_yield = 4096;
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static double share_seen;

double convoy__host_share(void)
{
#ifdef CONVOY_SIMGRID
    return 0;
#else
    pthread_mutex_lock(&share_lock);
    const double r = share_seen;
    pthread_mutex_unlock(&share_lock);
    return r;
#endif
}

static unsigned env_count(const char *name, unsigned def)
{
    const char *v = getenv(name);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : -1;
    return n >= 0 && *end == '\0' ? (unsigned)n : def;
}

void convoy__host_cpu_mask(unsigned long mask[CONVOY_CPU_WORDS])
{
    enum { W = 8 * sizeof(unsigned long) };
    memset(mask, 0, CONVOY_CPU_WORDS * sizeof *mask);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int i = 0; i < CONVOY_CPU_WORDS * W && i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set)) mask[i / W] |= 1UL << (i % W);
        return;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < (n > 0 ? n : 1) && i < CONVOY_CPU_WORDS * W; i++)
        mask[i / W] |= 1UL << (i % W);
}

void convoy__wait_policy(int host_procs, int host_cpus)
{
    /* Oversubscribed: the peer we wait for may be waiting for our core, so yield at once.
     * Otherwise every process has a core: poll longer before yielding (a yield with no one
     * else runnable is a wasted system call) and long before sleeping (a sleep costs a
     * wake-up of tens of microseconds). The CPUs are those the host's processes may run on
     * together, not this process's alone: a launcher that binds each of 2 processes to its
     * own core (Open MPI at np 2) gives each a mask of one CPU, and 2 processes against
     * that one made every np 2 run "oversubscribed" (yield at once: Barrier 0.47 -> 0.66 us
     * against native's 0.69). Once any communicator showed more processes than CPUs the
     * host stays oversubscribed (a smaller communicator does not make it less busy). */
    pthread_mutex_lock(&share_lock);
    if (host_cpus > 0 && (double)host_procs / host_cpus > share_seen)
        share_seen = (double)host_procs / host_cpus; /* the busiest communicator's ratio */
    const int over = share_seen > 1;
    pthread_mutex_unlock(&share_lock);
    unsigned spin = env_count("CONVOY_WAIT_SPIN", over ? 0 : 64);
    unsigned yield = env_count("CONVOY_WAIT_YIELD", over ? 4096 : 16384);
    atomic_store_explicit(&wait_spin, spin, memory_order_relaxed);
    atomic_store_explicit(&wait_yield, yield < spin ? spin : yield, memory_order_relaxed);
}

void convoy__backoff(unsigned *iter)
{
#ifdef CONVOY_SIMGRID
    /* Ranks are cooperative contexts: the platform layer's wait hands the processor to
     * the simulator. */
    convoy__plat_wait(iter);
#else
    const unsigned i = (*iter)++;
    const unsigned spin = atomic_load_explicit(&wait_spin, memory_order_relaxed);
    const unsigned yield = atomic_load_explicit(&wait_yield, memory_order_relaxed);
    if (i < spin) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause(); /* (a spinning core yields its pipeline to a sibling thread) */
#endif
        return;                 /* the caller polls again at once */
    }
    if (i < yield) {
        sched_yield(); /* an oversubscribed core goes to a process that can progress */
        return;
    }
    /* Long waits (a late peer): sleep, growing to 100 us, to leave the cores to others. */
    const unsigned k = (i - yield) / 256 < 7 ? (i - yield) / 256 : 7;
    long ns = 1000L << k;
    struct timespec ts = {0, ns > 100000 ? 100000 : ns};
    nanosleep(&ts, NULL);
#endif
}
