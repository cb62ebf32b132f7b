/*
 * The node segment: memory shared by the processes of a (virtual) node, with notification
 * flags (GASPI-SHAN's shared notifications, papers/000 §3, papers/001 §3).
 *
 * Protocol: a writer stores data into the segment, then sets one of its flags with release
 * order; a reader waits until the flag reaches the value with acquire order, then reads.
 * Flag values only grow (the executor adds the operation's number in the high bits), so a
 * stale flag from an earlier operation can never satisfy a later wait.
 */
#ifndef CONVOY_SHM_H
#define CONVOY_SHM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct convoy__shm {
    MPI_Win win;
    int node_size, node_rank;
    int nflags;              /* flags per process */
    int64_t bytes;           /* data area bytes */
    char *data;              /* data area, the same memory for every process of the node */
    _Atomic uint64_t *flags; /* node_size * flag_stride words */
    int flag_stride; /* words between two processes' flags (whole cache lines; flag 0 alone on
                        the first, the others from the second: shm.c) */
    int cma;         /* cross-memory attach to the node's processes works (convoy__shm_cma_probe) */
    /* Per node process, the largest value of its flag 0 (the executor's release flag) this
     * process has read: a gate that a value seen before satisfies loads nothing (the flag's
     * line is written by its owner in every operation, so a load is a cache miss). */
    _Atomic uint64_t *seen;
} convoy__shm;

/* Flag 0 (the executor's release flag) has a cache line of its own, the others start on
 * the next: node peers poll the schedule flags, and a release stored into a line a peer
 * holds needs the line back first, which stalls the next locked instruction (the fast
 * path's) for a transfer. Peers read the release line only when their cache of it
 * (seg->seen) falls short, rarely. */
enum { CONVOY_SHM_FLAG1_WORD = 64 / 8 };

/* Word of flag f of node process q, from seg->flags. */
static inline int64_t convoy__shm_flag_word(const convoy__shm *seg, int q, int f)
{
    return (int64_t)q * seg->flag_stride + (f ? CONVOY_SHM_FLAG1_WORD - 1 + f : 0);
}

/* The seen-release cache (seg->seen): whether a value of node process q's release flag this
 * process read before already reaches v (then a gate loads nothing). Acquire and release
 * on the cache chain the peer's release to every thread that uses it (plain moves on x86);
 * a racing thread may store an older value, which only costs a load later. */
static inline int convoy__shm_seen(const convoy__shm *seg, int q, uint64_t v)
{
    return atomic_load_explicit(&seg->seen[q], memory_order_acquire) >= v;
}

/* Notes that node process q's release flag has reached rel. */
static inline void convoy__shm_note_release(const convoy__shm *seg, int q, uint64_t rel)
{
    if (rel > atomic_load_explicit(&seg->seen[q], memory_order_relaxed))
        atomic_store_explicit(&seg->seen[q], rel, memory_order_release);
}

/* Whether flag f of node process q, at word w (convoy__shm_flag_word), has reached v; one
 * load, and what the value tells of q's release flag is noted: its own (flag 0), or, for a
 * schedule flag of operation k (CONVOY_FLAG_VALUE: k + 1 in the high half), at least k: a
 * process notifies in operation k only after its gate found its own release of operation
 * k - 1 (exec.c), and this acquire orders us after that store. So a small collective that
 * waited for every node peer in the last operation needs no load at the next gate. */
static inline int convoy__shm_reached_word(const convoy__shm *seg, int q, int f, int64_t w,
                                           uint64_t v)
{
    const uint64_t x = atomic_load_explicit(&seg->flags[w], memory_order_acquire);
    convoy__shm_note_release(seg, q, f == 0 ? x : x >> 32 ? (x >> 32) - 1 : 0);
    return x >= v;
}

/* Half the data area, in whole cache lines: where alternating operations run. */
static inline int64_t convoy__shm_half(const convoy__shm *seg)
{
    return seg->bytes / 2 / 64 * 64;
}

/* Collective over node_comm. Every process passes the same bytes and nflags. */
int convoy__shm_create(MPI_Comm node_comm, int64_t bytes, int nflags, convoy__shm **out);
int convoy__shm_free(convoy__shm *seg); /* collective over the node communicator */

/* Cross-memory attach (process_vm_readv): each process publishes its pid and the address
 * of a probe word in the two words after its flags, then reads the next node process's
 * probe word. Collective over node_comm. Returns 1 if the read worked (or the node has one
 * process), else -errno of the failure (EPERM: ptrace scope, capabilities or seccomp
 * forbid it, as in many containers; ENOSYS: not Linux). */
int convoy__shm_cma_probe(convoy__shm *seg, MPI_Comm node_comm);
/* Reads bytes at address addr of node process node_peer into dst (0, or an MPI error). */
int convoy__shm_cma_read(const convoy__shm *seg, int node_peer, uint64_t addr, void *dst,
                         int64_t bytes);

/* Seconds per byte of a process_vm_readv of this process's own src (bytes) into dst, the
 * fastest of reps; 0 where it fails or is not available (not Linux, SimGrid). */
double convoy__shm_cma_rate(void *dst, const void *src, int64_t bytes, int reps);

void convoy__shm_notify(convoy__shm *seg, int flag, uint64_t value);
int convoy__shm_reached(const convoy__shm *seg, int node_peer, int flag, uint64_t value);

/* Waiting politely: polls, then yields, then sleeps for growing intervals up to 100 us, so
 * that 8 processes on 2 cores all progress (and, in a SimGrid build, the simulator runs).
 * *iter counts the calls of one wait; start it at 0. The one place every wait of the
 * library passes through. */
void convoy__backoff(unsigned *iter);
/* The CPUs this process may run on (its affinity mask) as bits: CPU i is bit i % W of
 * word i / W (W bits per unsigned long); without an affinity call, the online CPUs. */
enum { CONVOY_CPU_WORDS = 1024 / (8 * sizeof(unsigned long)) };
void convoy__host_cpu_mask(unsigned long mask[CONVOY_CPU_WORDS]);
/* Sets the policy from a communicator's processes on this host and the CPUs they may run
 * on together (the union of their affinity masks; each communicator's setup): oversubscribed
 * (more processes than those CPUs, on this or any earlier communicator), yield at once and
 * sleep after 4096 polls; else poll 64 times, yield until 16384, then sleep.
 * CONVOY_WAIT_SPIN / CONVOY_WAIT_YIELD (poll counts) override. */
void convoy__wait_policy(int host_procs, int host_cpus);
/* The most processes per CPU any communicator's setup found on this host (as the wait
 * policy counts them: > 1 oversubscribed, sticky as the policy is); 0 before any setup and
 * in SimGrid builds (simulated hosts have no CPU masks). The machine parameters carry
 * rank 0's value (convoy__machine.share). */
double convoy__host_share(void);

/* Process-wide cap on node segments (CONVOY_MAX_SEGMENTS, default 16): take one, or give
 * one back. Returns 1 if one was taken. */
int convoy__shm_reserve(void);
void convoy__shm_unreserve(void);

#endif
