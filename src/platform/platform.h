/*
 * The platform layer: everything that differs between a real MPI library and SimGrid's
 * SMPI (CONVOY_SIMGRID builds, `make sim`) is behind these calls, so that the builders,
 * the executor, the node segment, selection and the machine measurement are the same code
 * in both. Natively every call is what the code did before (the charges are empty inline
 * functions). Under SMPI (docs/architecture.md, "Simulation"; shared/notes/simgrid.md):
 *
 *   waits        ranks are cooperative contexts in one process: a polling wait must hand
 *                the processor to the simulator, or it spins forever. A wait that can only
 *                end with a message blocks in MPI_Waitany (exact, and one simulator event);
 *                one that can only end with a notification sleeps until its host's next
 *                notification (a SimGrid semaphore); one that may end with either polls
 *                every CONVOY_SIM_POLL seconds, a notification waking it early.
 *   windows      MPI_Win_shared_query returns process 0's base for every process; with
 *                equal shares process q's memory is base(0) + q * share.
 *   nodes        a SimGrid host is one network endpoint; a Convoy node may be several
 *                hosts (one per socket, each with its own lane): CONVOY_NODE_OF_HOST=regex
 *                names a host's node (the regex's match, or its first group) and the node
 *                communicator is split by that name instead of MPI_COMM_TYPE_SHARED.
 *   setup        SMPI 3.32 has no MPI_Comm_idup: a communicator's state is made by its
 *                first blocking call, and nonblocking calls before it run natively.
 *   errors       SMPI 3.32's MPI_Comm_call_errhandler calls a null function for the
 *                predefined handlers (MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL): a crash
 *                where MPI returns the code or aborts with a message; the layer does
 *                what those handlers mean and calls only user handlers.
 *   local work   with smpi/simulate-computation:no local work is free; copies and
 *                reductions are charged simulated time from the platform's model:
 *                bytes / CONVOY_SIM_COPY_BW, bytes / CONVOY_SIM_REDUCE_BW (bytes/s, from
 *                the platform's companion .env file).
 */
#ifndef CONVOY_PLATFORM_H
#define CONVOY_PLATFORM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Zeroed memory for the setup's probes (machine.c), returned to the system when freed, the
 * program's allocator untouched: glibc raises its mmap threshold to the size of any
 * mmapped chunk freed (up to 32 MiB), so the 1.1 MiB probe buffer, freed through malloc,
 * moved the program's later buffers of up to that size from fresh mappings into the heap.
 * Measured in convoy-bench (np 2, the MPI library's own collectives, three interleaved
 * runs): Allgatherv of 16K ints per rank 30-50 us after a malloc'd probe against 13-18
 * after this one, Allreduce of 16K and 64K ints 80-111 and 309-318 against 47-68 and
 * 222-236, Allgatherv of 64K ints 46-49 against 53-61; a 16 MiB probe tried in stop 24
 * (not kept) tripled the Allgatherv of 256K ints. mmap natively; calloc under simulation
 * (SMPI's ranks share one address space). NULL if none. */
void *convoy__plat_probe_alloc(size_t bytes);
void convoy__plat_probe_free(void *p, size_t bytes);

/* Whether a wait that can only end with a message should block in MPI (MPI_Waitany)
 * instead of polling: under simulation, where every MPI_Test costs simulated time and
 * every poll a simulator round, and a blocking wait ends exactly when the message lands. */
static inline int convoy__plat_blocking_waits(void)
{
#ifdef CONVOY_SIMGRID
    return 1;
#else
    return 0;
#endif
}

/* One step of a polling wait under simulation; *iter counts the steps of one wait (start it
 * at 0). Natively, convoy__backoff (src/shm) has the wait policy. */
void convoy__plat_wait(unsigned *iter);

/* A wait that can only end with a notification of the node segment: sleeps until one
 * (simulation, when a node is one host); returns 1 if it slept, 0: poll instead. */
int convoy__plat_wait_notified(void);

/* After a notification flag was set: wakes the processes waiting for one (simulation). */
void convoy__plat_notified(void);

/* The base address of process q's share of a shared window whose processes all allocated
 * `share` bytes; 0 or an MPI error code. */
int convoy__plat_shared_base(MPI_Win win, int q, MPI_Aint share, void *base);

/* The node communicator: the processes of comm on the same node, ordered by key. */
int convoy__plat_split_node(MPI_Comm comm, int key, MPI_Comm *node);

/* A 63-bit key of this process's node (equal keys: same node), without communication. */
int64_t convoy__plat_node_key(void);

/* Raises err on comm's error handler, as MPI_Comm_call_errhandler. */
void convoy__plat_call_errhandler(MPI_Comm comm, int err);

/* The communicator Convoy's own messages travel on for comm: a duplicate (*shared = 0).
 * Under SMPI with CONVOY_SIM_SHARE_COMM=1, comm itself (*shared = 1): every new
 * communicator of 64 or more processes costs SMPI's ompi selector a ring allgather over it
 * (p^2 messages; the whole setup's cost at thousands of processes). Only for programs that
 * send no point-to-point messages on comm while Convoy runs on it (convoy-bench's scale
 * runs): Convoy's own tags are then not private, and comm keeps its error handler. */
int convoy__plat_private_comm(MPI_Comm comm, MPI_Comm *priv, int *shared);

/* Whether a nonblocking call may make its communicator's state (MPI_Comm_idup), else the
 * first blocking call makes it and nonblocking ones before it run natively. */
int convoy__plat_nonblocking_setup(void);

#ifdef CONVOY_SIMGRID
/* Charge the simulated time of copying that many bytes, or of reducing count elements of
 * type (their bytes at the reduction rate). */
void convoy__plat_charge_copy(int64_t bytes);
void convoy__plat_charge_reduce(int64_t count, MPI_Datatype type);
#else
static inline void convoy__plat_charge_copy(int64_t bytes)
{
    (void)bytes;
}
static inline void convoy__plat_charge_reduce(int64_t count, MPI_Datatype type)
{
    (void)count, (void)type;
}
#endif

#endif
