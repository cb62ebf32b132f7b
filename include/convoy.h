/*
 * Convoy: topology-aware collective operations for MPI programs.
 *
 * Every function takes the arguments of its MPI namesake and returns an MPI error code;
 * errors are also raised on the communicator's error handler, as MPI does. Nonblocking
 * and persistent operations return a convoy_request, completed with convoy_test or
 * convoy_wait (or convoy_wait_timeout, for split-phase use as with GASPI's GASPI_TEST).
 *
 * No initialisation call is needed: a communicator's Convoy state (a private duplicate,
 * its node and lane decomposition) is made by its first blocking Convoy collective and
 * freed with the communicator. A nonblocking or persistent call on a communicator that
 * has none yet is served by the MPI library's own collective.
 *
 * Environment: CONVOY_<COLL>_ALGO=name forces an algorithm (convoy-check --list names
 * them), CONVOY_PPN=k or CONVOY_NODEMAP=0,0,1,... cut real nodes into virtual ones,
 * CONVOY_SEGMENT_BYTES sizes the node segment, CONVOY_CHECK_ARGS=1 checks that all ranks
 * passed consistent arguments, CONVOY_WATCHDOG=seconds reports a stuck operation,
 * CONVOY_BCAST_KLANE_BLOCKS=b sets the pipeline blocks of the klane_pipeline Bcast,
 * CONVOY_VERBOSE=1 prints the choices made, CONVOY_DISSEM_N=k|auto sets the fan-out of the
 * n-way dissemination Barrier (auto: timed on the communicator's first blocking Barrier),
 * CONVOY_TUNING_FILE=file.json overrides the cost model with rules (convoy-tune writes
 * them), CONVOY_NATIVE_CANDIDATE=0|1 makes the MPI library's own collective a candidate in
 * every choice (default: 1 under libconvoy_pmpi, else 0).
 * libconvoy_pmpi (the MPI_* names, for unmodified programs) also reads CONVOY_STATS=1|path
 * (calls served and handed back, at MPI_Finalize), CONVOY_DISABLE=coll,coll|all (hand
 * collectives back whole), CONVOY_DEVICE=auto|host|device (whether buffers may be GPU memory).
 * Allgather and Reduce_scatter_block have tables of their own (CONVOY_ALLGATHER_ALGO,
 * CONVOY_REDUCE_SCATTER_BLOCK_ALGO; their v-forms' algorithms are in them too), with the
 * full-lane `lane` and hierarchical `hier` decompositions of papers/004 (also for
 * Allgatherv, Allreduce, Reduce_scatter).
 * The CONVOY_* settings are read once and kept: a call only checks that the environment's
 * entries are the same strings (setenv and unsetenv are seen); a program that changes a
 * setting without them (writing into a putenv'd string) calls convoy_config_refresh(), or
 * sets CONVOY_CONFIG_REFRESH=1 to have every call read the environment again.
 * CONVOY_WAIT_SPIN / CONVOY_WAIT_YIELD (poll counts) override the wait policy (poll, then
 * yield, then sleep; chosen from whether the host is oversubscribed).
 * CONVOY_KERNEL=0 runs every repeated blocking call through the executor: by default one
 * whose schedule is a one-node flag protocol runs its compiled steps from the entry point
 * (the direct kernel), and one of messages in phases (one round, or rounds each waiting
 * for the last) posts each phase at once and waits once per phase.
 * CONVOY_NATIVE_BLOCKING=1: a blocking call served by the MPI library makes its blocking
 * collective (faster at small counts) instead of its nonblocking one under Convoy's wait;
 * only for programs that never have a Convoy nonblocking or persistent collective pending
 * across a blocking one (it would not progress meanwhile), set alike on every rank. Under
 * libconvoy_pmpi it also hands the MPI_I<coll> and persistent forms to the library, so that
 * no Convoy operation is ever pending: safe for every program.
 * CONVOY_SCAN_BLOCK=elements sets the block of the pipelined Scan/Exscan (`linear`).
 * CONVOY_CMA=0 forbids single copies between processes of a node by cross-memory attach
 * (process_vm_readv; used where the setup's probe finds it permitted, said under
 * CONVOY_VERBOSE=1; by default Allgatherv node_segment and Allreduce node_ring use it where
 * their cost models, with the read rate the setup measures, say it pays);
 * CONVOY_ALLGATHERV_CMA_MIN=bytes (the Allgatherv result) and CONVOY_ALLREDUCE_CMA_MIN=bytes
 * (the Allreduce vector) force it from that size on.
 * CONVOY_TRIAL=0 makes every choice the model's: by default the first blocking calls of each
 * kind of Allgather(v), Alltoall and Barrier predicted at CONVOY_TRIAL_MIN (seconds, default
 * 0.001) or more take turns among Convoy's algorithms predicted within CONVOY_TRIAL_WITHIN
 * (default 3) times the best, and the fastest beyond the noise serves the kind from then on
 * (calls of CONVOY_TRIAL_BYTES, default 1048576, or more per process whatever their
 * predicted time, among those within twice CONVOY_TRIAL_WITHIN, and the fastest by the
 * median serves);
 * where the library's collective is a candidate, it is timed against Convoy's in those of
 * Allreduce and Reduce_scatter(_block) too, and at every size (off under SimGrid unless 1).
 * SimGrid builds (make sim): CONVOY_SIM_COPY_BW and CONVOY_SIM_REDUCE_BW (bytes/s) charge
 * copies and reductions simulated time, CONVOY_NODE_OF_HOST=regex makes a node of several
 * simulated hosts, CONVOY_SIM_POLL (s) bounds a polling wait.
 * docs/architecture.md has the rest.
 */
#ifndef CONVOY_H
#define CONVOY_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVOY_VERSION_MAJOR 0
#define CONVOY_VERSION_MINOR 1

typedef struct convoy_request_s *convoy_request;

/* Makes the next call read the CONVOY_* environment again (see above). */
int convoy_config_refresh(void);
#define CONVOY_REQUEST_NULL ((convoy_request)0)

int convoy_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      MPI_Comm comm);
int convoy_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       MPI_Comm comm, convoy_request *request);
int convoy_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Info info, convoy_request *request);

int convoy_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int convoy_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, convoy_request *request);
int convoy_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          convoy_request *request);

int convoy_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm);
int convoy_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, convoy_request *request);
int convoy_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request);

int convoy_Barrier(MPI_Comm comm);
int convoy_Ibarrier(MPI_Comm comm, convoy_request *request);
int convoy_Barrier_init(MPI_Comm comm, MPI_Info info, convoy_request *request);

/* Reduce_scatter_block: every rank gets recvcount elements (block i of the reduced vector
 * of size * recvcount elements goes to rank i); Reduce_scatter: rank i gets recvcounts[i].
 * With MPI_IN_PLACE the input vector is read from recvbuf, which receives the block at its
 * start. */
int convoy_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int convoy_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 convoy_request *request);
int convoy_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     convoy_request *request);
int convoy_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int convoy_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                           convoy_request *request);
int convoy_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               convoy_request *request);

/* Rooted collectives, as in MPI: the root's rank in the communicator; MPI_IN_PLACE as the
 * root's send buffer (Gather, Gatherv: its block is already in place in recvbuf) or
 * receive buffer (Scatter, Scatterv: its block stays in sendbuf), nowhere else. Arguments
 * MPI declares significant only at the root are read only there. A blocking or persistent
 * Gatherv/Scatterv sends the root's counts to all ranks first (one small broadcast), so
 * that tree and topology-aware algorithms apply; a nonblocking one uses the linear
 * algorithm or the MPI library's. */
int convoy_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int convoy_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  convoy_request *request);
int convoy_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, convoy_request *request);
int convoy_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int convoy_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   convoy_request *request);
int convoy_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       convoy_request *request);
int convoy_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm);
int convoy_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, convoy_request *request);
int convoy_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, convoy_request *request);
int convoy_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int convoy_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    convoy_request *request);
int convoy_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Info info, convoy_request *request);
int convoy_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm);
int convoy_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, convoy_request *request);
int convoy_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root, MPI_Comm comm, MPI_Info info, convoy_request *request);

/* Reduce, Scan, Exscan, Alltoall (papers/004's regular collectives): MPI's semantics.
 * Reduce: MPI_IN_PLACE at the root only, recvbuf significant at the root only. Scan and
 * Exscan: MPI_IN_PLACE on every rank or none; Exscan never writes rank 0's recvbuf.
 * Non-commutative operations keep rank order (algorithms that cannot are not chosen).
 * Alltoall: MPI_IN_PLACE (sendcount, sendtype ignored) exchanges the blocks of recvbuf. */
int convoy_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  int root, MPI_Comm comm);
int convoy_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   int root, MPI_Comm comm, convoy_request *request);
int convoy_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, convoy_request *request);
int convoy_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm);
int convoy_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, convoy_request *request);
int convoy_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request);
int convoy_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm);
int convoy_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, convoy_request *request);
int convoy_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, convoy_request *request);
int convoy_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int convoy_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, convoy_request *request);
int convoy_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         convoy_request *request);

/* Starts an inactive persistent request. */
int convoy_start(convoy_request *request);
/* *flag = 1 if the operation completed; a nonblocking request is then freed and set to
 * CONVOY_REQUEST_NULL, a persistent one becomes inactive. A null or inactive request
 * tests complete. */
int convoy_test(convoy_request *request, int *flag);
int convoy_wait(convoy_request *request);
/* As convoy_wait, but gives up after `seconds` (then *flag = 0 and the operation goes on;
 * test or wait again later). */
int convoy_wait_timeout(convoy_request *request, double seconds, int *flag);
/* Frees an inactive persistent request, or a completed one; sets it to CONVOY_REQUEST_NULL. */
int convoy_request_free(convoy_request *request);

#ifdef __cplusplus
}
#endif

#endif
