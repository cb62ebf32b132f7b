/*
 * The API layer's own structures: a communicator's Convoy state, the schedule cache and
 * the request object shared by blocking, nonblocking and persistent calls.
 */
#ifndef CONVOY_API_INTERNAL_H
#define CONVOY_API_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "convoy.h"
#include "sched/transport_mpi.h"
#include "select/select.h"
#include "shm/shm.h"
#include "topo/topo.h"

/* The CONVOY_* settings of one call (config.c): the process's, read once and again only
 * when the environment changed, convoy_config_refresh() was called or
 * CONVOY_CONFIG_REFRESH=1 is set. */
enum { CONVOY_CONFIG_VARS = 32 };
typedef struct convoy__config {
    const char *algo[CONVOY_NCOLL]; /* CONVOY_<COLL>_ALGO, or NULL */
    int verbose, check_args;
    int strict;       /* CONVOY_ALGO_STRICT: a forced algorithm that does not apply is an
                         error (tools that time an algorithm by name), not the default */
    double watchdog;  /* seconds, 0: off */
    int reproducible; /* CONVOY_REPRODUCIBLE: only algorithms giving every rank the same bits,
                         and no timing-based choice (measured machine, CONVOY_DISSEM_N=auto) */
    double alpha, beta, gamma; /* CONVOY_ALPHA/_BETA/_GAMMA, or -1 */
    int native_candidate;      /* CONVOY_NATIVE_CANDIDATE: the MPI library's collective competes
                                  in the choice (default: on in a process running
                                  libconvoy_pmpi, off for programs calling convoy_*) */
    const char *tuning_file;   /* CONVOY_TUNING_FILE, or NULL */
    int native_blocking;       /* CONVOY_NATIVE_BLOCKING: blocking calls the MPI library serves
                                  make its blocking collective (request.c) */
    int kernel;                /* CONVOY_KERNEL (default 1): kept step-order calls run in the
                                  direct kernel (kernel.c), kept one-round message calls in
                                  round.c; 0: both through the executor */
    int trial; /* CONVOY_TRIAL (default 1; 0 under SimGrid): a blocking call's first repeats
                  time Convoy's close candidates against the library's collective where it
                  is a candidate, else against each other where they move data only
                  (trial.c) */
    double trial_within; /* CONVOY_TRIAL_WITHIN (default 3): Convoy's candidates predicted
                            within this factor of its choice's time are timed too, */
    double trial_min;    /* CONVOY_TRIAL_MIN (seconds, default 1e-3): in calls its choice is
                            predicted to take at least this long, */
    double trial_bytes;  /* CONVOY_TRIAL_BYTES (default 1 MiB): or of this many bytes per
                            process (convoy__args_bytes), from twice trial_within */
    int nvars;
    const char *vars[CONVOY_CONFIG_VARS]; /* every CONVOY_ entry, "NAME=value" */
    uint64_t gen; /* changes whenever the settings were read again (plan.c's memo) */
} convoy__config;
/* One pass over environ. */
void convoy__config_read(convoy__config *c);
/* The default of CONVOY_NATIVE_CANDIDATE (libconvoy_pmpi sets it when loaded). */
extern int convoy__native_candidate_default;
/* CONVOY_NATIVE_BLOCKING as libconvoy_pmpi read it when loaded (0 or 1; -1: from the
 * environment): the drop-in and Convoy must agree on it for the whole run. */
extern int convoy__native_blocking_fixed;
/* The process's settings (read again if the environment changed): what a call uses. */
void convoy__config_current(convoy__config *c);
const char *convoy__config_get(const convoy__config *c, const char *name);

/* The machine parameters as the nonblocking setup carries them (machine.c). */
enum { CONVOY_MACHINE_KEYS = 20 };

/* Close candidates timed against each other (trial.c): one record per kind of blocking
 * call (collective, bytes, count vector), the same on every rank. */
enum {
    CONVOY_TRIALS = 64,
    CONVOY_TRIAL_CALLS = 16, /* timed per side */
    CONVOY_TRIAL_SIDES = 5,  /* side 0 and up to 4 more */
    CONVOY_TRIAL_CALLS_MAX = (CONVOY_TRIAL_CALLS + 1) * CONVOY_TRIAL_SIDES /* a kind's trial */
};
/* A call's class: the model's choice, or the side it runs (timed, or the verdict's):
 * CONVOY_TRIAL_SIDE + the side's place in its record. */
enum { CONVOY_TRIAL_MODEL, CONVOY_TRIAL_SIDE };
typedef struct convoy__trial {
    int coll;
    int64_t bytes;
    uint64_t vhash; /* of the count vector (Allgatherv, Reduce_scatter), else 0 */
    int sides;
    /* Side 0 is the one to beat: the library's collective (NULL) where it is a candidate,
     * else the model's choice; then Convoy's other candidates, best predicted first. */
    const convoy__algo *algo[CONVOY_TRIAL_SIDES];
    int calls;   /* made so far: cycles of one call per side (trial.c) */
    int open;    /* no side preferred: large, without the library (trial.c, open_sides) */
    int verdict; /* 0 while timing, then the class of the side that serves the kind */
    double t[CONVOY_TRIAL_SIDES][CONVOY_TRIAL_CALLS]; /* seconds, per side */
} convoy__trial;

/* One cached schedule, keyed by everything a builder reads (values, never handles, so a
 * freed and reused datatype or op handle cannot hit a stale entry). */
typedef struct convoy__centry {
    uint64_t hash;
    size_t keylen;
    unsigned char *key;
    convoy__schedule sched;
    atomic_int refs; /* requests and memos using it; an entry in use is never evicted */
    uint64_t used;   /* for least-recently-used eviction */
    int cached;      /* 0: owned by one request alone (the cache was full of busy entries) */
} convoy__centry;

enum { CONVOY_CACHE_SIZE = 16 };

/* A planned call of one collective on a communicator (plan.c): a repeated call is
 * recognised by comparing its arguments with these, field by field, and reuses the choice,
 * the parameters and the schedule without building a cache key. CONVOY_MEMO_SLOTS per
 * collective, 4-way set-associative by a hash of the arguments' main fields: programs whose calls
 * cycle through a few roots and counts (BLACS' broadcasts along a process row) plan each
 * once, not on every call. */
enum { CONVOY_MEMO_SLOTS = 32, CONVOY_MEMO_WAYS = 4 };
typedef struct convoy__memo {
    int valid;
    uint64_t hash;        /* of the arguments (plan.c memo_hash); 0: never used */
    unsigned char victim; /* the set's first slot: the next slot to replace */
    uint64_t gen;         /* of the settings it was planned under */
    int key[6];           /* what a tune hook reads (may_block, barrier_n, has a hook), whether
                             args had rcounts, displs, and the call's trial class */
    convoy__args args;    /* as the collective passed them (pointers cleared) */
    int64_t *vec;         /* rcounts then displs (size each), when args had them */
    int64_t veccap;
    const convoy__algo *algo; /* NULL: the MPI library's collective */
    const char *native_why;   /* and then why (CONVOY_STATS) */
    int nparams;
    convoy__param params[CONVOY_MAX_PARAMS];
    convoy__centry *entry; /* holds a reference */
} convoy__memo;

/* A blocking call's arguments as the caller passed them (fast.c): what a repeated call
 * is recognised by before any check, description or plan. Handles are compared by value,
 * so a call is kept only when all are predefined (never freed, never reused); vectors
 * (comm size entries) by content. */
typedef struct convoy__call {
    int coll;
    const void *send, *recv; /* the buffers as given (MPI_IN_PLACE, NULL included) */
    int count, count2, root;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    const int *v1, *v2; /* count vectors, or NULL */
} convoy__call;

/* A blocking call of one collective on a communicator, kept with its finished request
 * (schedule reference, transport, executor memory, count vectors) so that an equal call
 * runs the schedule again at once (fast.c). A communicator keeps CONVOY_FAST_WAYS per
 * collective: the last calls with different arguments (rotating roots, alternating
 * counts). */
enum { CONVOY_FAST_WAYS = 4 };
/* A kept request whose executor memory is larger than this is kept alone (the other ways
 * of its collective freed), so that the ways never hold more than one large buffer. */
#define CONVOY_FAST_SMALL ((size_t)1 << 20)
typedef struct convoy__fast {
    _Atomic(convoy_request) req; /* NULL: none kept (or in use) */
    convoy__call key;            /* send/recv: the pointer predicates, v1/v2: NULL */
    unsigned preds;
    int nvec; /* entries in vec (v1 then v2) */
    int *vec;
    int64_t veccap;
    uint64_t gen;  /* the settings it was planned under */
    int barrier_n; /* what Barrier's tune hook read */
    /* Where the request's buffers come from: 0 none, 1 the call's send buffer, 2 its
     * receive buffer, 3 a constant (a call without buffers: Barrier's dummy). */
    unsigned char send_from, recv_from;
    const void *send_const, *recv_const;
    /* The MPI library served it with its blocking collective (a direct native request on
     * a ready communicator): an equal call is that call again, nothing else (fast.c). */
    unsigned char direct;
} convoy__fast;

/* A communicator's Convoy state, attached to it with an attribute. */
typedef struct convoy__cstate {
    MPI_Comm user;      /* the communicator it is attached to */
    MPI_Comm priv;      /* private duplicate: every message of Convoy travels here */
    int priv_shared;    /* priv is `user` itself (convoy__plat_private_comm): not freed */
    MPI_Comm node_comm; /* the processes of this node (for the segment) */
    convoy__topo topo;
    convoy__shm *shm; /* NULL: no segment (single process, or over the cap) */
    int cma;          /* node peers' buffers readable (probed and agreed at setup) */
    int tag_ub;
    convoy__machine machine; /* agreed by all ranks at setup (machine.c) */
    const char *machine_how; /* "built-in", "measured", "measured earlier" */
    /* The last call's choice (a registry name, or convoy__native_name), for diagnostics and
     * the benchmark; a relaxed atomic, set only when it changes (convoy__cstate_note_algo). */
    _Atomic(const char *) last_algo;
    /* Setup: blocking at once, or nonblocking (idup, then allgather of node keys). */
    int ready;         /* topology and private communicator usable */
    int segment_tried; /* node communicator and segment made (blocking calls only) */
    int setup_phase, setup_err;
    MPI_Request setup_req;
    int64_t setup_key[2 + CONVOY_MACHINE_KEYS], *setup_keys; /* node key, machine doubles */
    uint64_t epoch;   /* operations started on this communicator */
    uint64_t shm_seq; /* segment-using operations started */
    int shm_last_alt; /* the last of them alternated (convoy__transport.shm_alt) */
    pthread_mutex_t lock;
    convoy__centry *cache[CONVOY_CACHE_SIZE];
    uint64_t tick;
    convoy__memo *memo[CONVOY_NCOLL]; /* CONVOY_MEMO_SLOTS each, made on first use */
    convoy__fast fast[CONVOY_NCOLL][CONVOY_FAST_WAYS];
    unsigned char fast_last[CONVOY_NCOLL]; /* the way the last blocking call used */
    unsigned char fast_next[CONVOY_NCOLL]; /* the way the next new call replaces */
    int barrier_n; /* Barrier: n of CONVOY_DISSEM_N=auto, timed on first blocking use (0: not
                      yet); set at the same call on every rank */
    /* The trial's records (trial.c): CONVOY_TRIALS, made on the first timed call; records
     * opened in call order, never dropped; how many, and how many still timing. */
    convoy__trial *trial;
    int ntrials, trials_open;
    struct convoy__cstate *prev, *next; /* all states, freed at MPI_Finalize */
} convoy__cstate;

/* What cs->last_algo says of the MPI library's calls: one pointer, so that noting a choice
 * compares pointers. */
extern const char convoy__native_name[];

/* Notes the algorithm a call on cs ran. A plain store, and only when it changes: a mutex
 * here cost a program that alternates two collectives on one communicator (or convoy-bench,
 * which interleaves variants) a lock and an unlock per call, about 0.01 us of a 0.13 us np 2
 * Barrier (0.76-0.82 -> 0.73-0.76 of the library's). */
static inline void convoy__cstate_note_algo(convoy__cstate *cs, const char *name)
{
    if (atomic_load_explicit(&cs->last_algo, memory_order_relaxed) != name)
        atomic_store_explicit(&cs->last_algo, name, memory_order_relaxed);
}

/* The state of comm, made if there is none yet: blocking (collective: dup, splits, the
 * segment) or, for nonblocking calls, started without blocking (then *fresh is set and
 * the call is served natively; later calls wait in their progress for the setup).
 * *cs = NULL if comm cannot have one (an intercommunicator, or after MPI_Finalize began),
 * or if a nonblocking call under MPI_THREAD_MULTIPLE finds none (see comm.c). */
int convoy__cstate_get(MPI_Comm comm, int blocking, convoy__cstate **cs, int *fresh);
/* Advances a nonblocking setup; cs->ready tells when it is done. */
int convoy__cstate_progress(convoy__cstate *cs);

/* Machine parameters (machine.c). Blocking, collective: measures them once per process, or
 * takes rank 0's earlier measurement, and sets cs->machine on every rank alike. */
int convoy__machine_agree(convoy__cstate *cs);
/* For the nonblocking setup: this process's values as CONVOY_MACHINE_KEYS doubles (a flag,
 * then alpha, beta, gamma, overhead, the levels, alpha_native; returns the flag: 1 if it has
 * values), and cs's from rank 0's. */
int convoy__machine_to_keys(double v[CONVOY_MACHINE_KEYS]);
void convoy__machine_from_keys(convoy__cstate *cs, const double v[CONVOY_MACHINE_KEYS]);
/* The machine one call plans with: the communicator's (the built-in one when
 * reproducible), with the call's CONVOY_ALPHA/_BETA/_GAMMA over it. */
/* Nonzero while this thread measures Convoy's per-call overhead (no verbose output). */
int convoy__machine_measuring(void);
void convoy__machine_of_call(const convoy__config *c, const convoy__cstate *cs, convoy__machine *m);

/* A cached or fresh schedule for these arguments; release it with convoy__sched_release. */
int convoy__sched_get(convoy__cstate *cs, const convoy__algo *al, const convoy__args *a,
                      convoy__centry **out);
void convoy__sched_release(convoy__cstate *cs, convoy__centry *e);

/* Thread-local variables read on every repeated call: the initial-exec model (an offset
 * from the thread pointer) instead of a __tls_get_addr call per access, which was a tenth
 * of a repeated call's instructions. libconvoy and libconvoy_pmpi are loaded with the
 * program (linked or LD_PRELOAD); a dlopen after start-up uses glibc's static TLS
 * reserve, which these few words fit. SimGrid's SMPI loads one copy per simulated rank:
 * the default model there. */
#ifdef CONVOY_SIMGRID
#define CONVOY_TLS_FAST _Thread_local
#else
#define CONVOY_TLS_FAST _Thread_local __attribute__((tls_model("initial-exec")))
#endif

/* The operation a request performs when it falls back to the MPI library's collective. */
typedef int (*convoy__native_fn)(struct convoy_request_s *r);
/* A native_start's call: the MPI library's blocking collective when the request is direct
 * (convoy__req_start: a blocking call under CONVOY_NATIVE_BLOCKING=1; the nonblocking
 * collectives of Open MPI 4.1 (libnbc) cost twice the blocking ones at small counts), else
 * its nonblocking one into r->native_req. */
#define CONVOY_NATIVE(r, blocking, nonblocking, ...)                                               \
    ((r)->direct ? blocking(__VA_ARGS__) : nonblocking(__VA_ARGS__, &(r)->native_req))

struct convoy_request_s {
    int persistent;
    int active;   /* started, and not yet reported complete to the user */
    int finished; /* the operation is over (possibly completed by another waiter) */
    int saved_err;
    pthread_mutex_t lock;                 /* whoever runs the executor holds it */
    struct convoy_request_s *prev, *next; /* the list of unfinished requests */
    int linked;
    int blocking;     /* a blocking call: run by its caller alone, never in the list */
    const char *what; /* "Allreduce", for messages */
    convoy__config cfg;
    MPI_Comm comm; /* the user's */
    convoy__cstate *cs;
    /* Planning: the collective's own (args from the fields below, then convoy__plan);
     * deferred while the communicator's nonblocking setup is under way. */
    int coll; /* enum convoy__coll */
    int (*plan)(struct convoy_request_s *r);
    int deferred;
    int local_err; /* an argument error found here, reported after the agreement */
    /* A collective's own step of planning, after the algorithm's parameters are read
     * (NULL: none): Barrier's CONVOY_DISSEM_N=auto. may_block: a blocking call or a
     * persistent init, so the hook may run collectives on the communicator. */
    int (*tune)(struct convoy_request_s *r, const convoy__algo *al, convoy__args *a);
    int may_block;
    /* The native path: the collective's starter, and whether this request uses it. */
    convoy__native_fn native_start;
    int native;
    int direct;             /* native_start makes the blocking call (CONVOY_NATIVE) */
    const char *native_why; /* why the MPI library serves it (CONVOY_STATS): "setup",
                               "no_state", "forced", "model", "tuning", "no_algorithm",
                               "trial" */
    /* The trial (trial.c): the call's class (CONVOY_TRIAL_*), the record it is timed for
     * (NULL: none), and whether its choice is final (then fast.c may keep it). */
    int trial_cls, trial_final;
    convoy__trial *trial;
    const convoy__algo *trial_algo; /* the side's algorithm (NULL: the library's) */
    MPI_Request native_req;
    /* The Convoy path. */
    const convoy__algo *algo;
    convoy__centry *entry;
    convoy__mpi_transport tr;
    convoy__exec x;
    /* Kept when the request goes back to the pool (request.c), so that repeated blocking
     * calls allocate nothing: the executor's block and scratch, and the count vectors. */
    convoy__exec_mem xmem;
    /* The direct kernel's compiled schedule (kernel.c; kept with the request's memory too),
     * and whether it holds this request's: a kept call then runs it, not the executor. */
    convoy__kernel *kern;
    int kern_ok;
    /* The one-round message path's compiled messages (round.c; kept likewise), and whether
     * they are this request's: a kept call then posts them and waits, not the executor. */
    struct convoy__round *round;
    int round_ok;
    int *ivec; /* convoy__req_counts: rcounts and displs copies */
    int64_t ivec_cap;
    int64_t *lvec; /* convoy__req_i64 */
    int64_t lvec_cap;
    int running; /* x is started and not yet finished */
    uint64_t epoch, shm_seq;
    int shm_alt, shm_prev_alt; /* its segment operation alternates; the one before did */
    /* CONVOY_CHECK_ARGS: a segment number taken for an operation whose segment schedule
     * does not run (it uses no segment, or the agreement failed) is passed through with an
     * empty segment schedule (gate, then release), so the node's numbers stay in step. */
    int seg_taken, seg_pass, in_pass, pass_err;
    /* The call's arguments, kept for persistent restarts and the native path. */
    const void *sendbuf;
    void *recvbuf;
    int count;
    int root; /* rooted collectives */
    int inplace;
    int *rcounts, *displs;     /* Allgatherv: copies; Gather(v), Scatter(v): the root's */
    int regular;               /* Allgather: equal counts, displs NULL (rank * count) */
    MPI_Datatype stype, rtype; /* duplicates owned by persistent requests */
    int owns_types;
    MPI_Op op;
    MPI_Datatype op_type; /* the caller's datatype handle, given to a user-defined op */
    /* CONVOY_CHECK_ARGS: the agreement step in flight before the operation starts. */
    MPI_Request agree_req;
    int nagree;            /* 0: no agreement */
    int64_t agree_vals[8]; /* this rank's values */
    int64_t agree_buf[16]; /* (v, -v), reduced with MAX */
    const char *const *agree_names;
    double t_start; /* for the watchdog */
    double t_report;
};

/* Request life cycle (request.c). */
int convoy__req_new(const char *what, MPI_Comm comm, convoy_request *out);
/* Scratch of the request, kept from call to call: r->rcounts (and r->displs if with_displs)
 * for n ranks, and n 64-bit values (valid until the next call of the same function). */
int convoy__req_counts(convoy_request r, int n, int with_displs);
int64_t *convoy__req_i64(convoy_request r, int64_t n);
/* Starts the operation (first start or persistent restart). */
int convoy__req_start(convoy_request r);
/* Progress without blocking; *done = 1 when finished. */
int convoy__req_progress(convoy_request r, int *done);
void convoy__req_free(convoy_request r);
/* Blocks until done (with backoff and the watchdog). */
int convoy__req_wait(convoy_request r);
/* Takes r's segment number in call order (the same on every rank) and notes whether its
 * operation alternates (alt), as the next one will read it. */
static inline void convoy__req_seq(convoy_request r, int alt)
{
    convoy__cstate *cs = r->cs;
    r->shm_seq = cs->shm_seq++;
    r->shm_alt = alt;
    r->shm_prev_alt = cs->shm_last_alt;
    cs->shm_last_alt = alt;
}

/* Arguments and errors (args.c). */
int convoy__error(MPI_Comm comm, int err); /* raises err on comm's handler, returns it */
int convoy__check_comm(MPI_Comm comm);
int convoy__check_type(MPI_Datatype t);
int convoy__check_op(MPI_Op op, MPI_Datatype t);
int convoy__describe_type(MPI_Datatype t, convoy__dtype *d);
/* A persistent request's hold on a datatype: a duplicate of a derived type (the user may
 * free theirs), the handle itself for a named one. */
int convoy__type_keep(MPI_Datatype t, MPI_Datatype *out);
void convoy__type_drop(MPI_Datatype *t);
/* Sets the parameters of an algorithm from the call's settings. */
void convoy__params_from_env(const convoy__config *c, const convoy__algo *al, convoy__args *a);
/* CONVOY_CHECK_ARGS: sets the values to agree on (names for messages); every start of the
 * request then begins with the agreement. */
void convoy__agree_set(convoy_request r, const int64_t *v, int n, const char *const *names);
int convoy__agree_start(convoy_request r);
int convoy__agree_finish(convoy_request r);
int convoy__op_is_predefined(MPI_Op op); /* 0, or 1 + its index */
int convoy__op_is_idempotent(MPI_Op op); /* x op x = x: MAX, MIN, BAND, BOR, LAND, LOR, *LOC */
MPI_Comm convoy__self_comm(void);        /* a private MPI_COMM_SELF returning errors */

/* The name of CONVOY_<COLL>_ALGO. */
void convoy__algo_var(int coll, char env[64]);
/* Chooses the algorithm (or none: native) and gets the schedule; verbose output. */
int convoy__plan(convoy_request r, convoy__args *a);
/* The common tail of every entry point's setup: the state, then the Convoy path (planned
 * now or deferred) or the native one. mode: CONVOY_BLOCKING, _NONBLOCKING, _PERSISTENT. */
enum { CONVOY_BLOCKING, CONVOY_NONBLOCKING, CONVOY_PERSISTENT };
int convoy__req_route(convoy_request r, int mode);
/* The tail of a reduction's setup (Allreduce, Reduce_scatter): the op and datatype (a
 * persistent request keeps its own hold on it), then convoy__req_route; frees r on error. */
int convoy__req_reduction_route(convoy_request r, MPI_Op op, MPI_Datatype dt, int mode,
                                convoy_request *out);
/* The plan of a reduction over one vector (Allreduce, Reduce, Scan, Exscan: r->coll):
 * r->count elements of the op's type; CONVOY_CHECK_ARGS agrees on the count, the type's
 * size, the op and `last` (Reduce: the root; the others: the MPI_IN_PLACE use). */
int convoy__plan_vector_reduction(convoy_request r, int64_t last, const char *const *names);
/* Runs a request set up by an entry point: blocking start + wait, or hands it out. */
int convoy__req_launch(convoy_request r, int mode, convoy_request *out);
/* A blocking call's launch (c: its arguments, or NULL): start, wait, and then keep the
 * request on the communicator for c's repeats where fast.c allows, else free it. */
int convoy__req_launch_call(convoy_request r, const convoy__call *c);
/* Runs a repeated blocking call from the kept request (fast.c): 1 if it did (*rc: its
 * result), 0 if the call must take the full path (not kept, or anything differs). */
int convoy__fast_try(MPI_Comm comm, const convoy__call *c, int *rc);
/* Keeps r, which just served c, if c can be recognised again (fast.c); 0: not kept. */
int convoy__fast_keep(convoy_request r, const convoy__call *c);
/* A kept request's rerun (request.c): start, wait, outcome. */
int convoy__req_rerun(convoy_request r);
/* The rerun's parts the direct kernel shares (request.c): whether r's schedule s runs
 * alternating (s allows it, its data fits half the segment's area, and no CONVOY_CHECK_ARGS
 * agreement could turn it into a pass on some ranks); the outcome of a finished blocking
 * call (CONVOY_STATS, the communicator's last algorithm); progress of the process's other
 * unfinished requests (nothing when there are none). */
int convoy__req_alternates(convoy_request r, const convoy__schedule *s);
void convoy__req_note_outcome(convoy_request r);
void convoy__req_progress_others(void);
/* The trial (trial.c). Before the memo: the call's class (r->trial_cls; a timed call's
 * record, opened by the kind's first call); for a call served without planning (its
 * communicator's setup, a forced native), whether its choice is final. After a timed
 * blocking call: its time (dt seconds) noted, and after the last one the verdict, agreed
 * by all ranks (collective). */
int convoy__trial_state(convoy_request r, const convoy__args *a);
void convoy__trial_unplanned(convoy_request r);
int convoy__trial_note(convoy_request r, double dt);
/* The direct kernel (kernel.c): compiles a kept request's schedule if it runs in step
 * order on the node segment (1: r->kern holds it); runs it (the call's result). */
int convoy__kernel_keep(convoy_request r);
int convoy__kernel_run(convoy_request r);
/* The kept message path (round.c): a schedule whose steps are all sends and receives of
 * plain blocks in the user's buffers (and copies between them), in phases of equal
 * dependency sets that grow (convoy__sched_phases: one phase when nothing depends on
 * anything), compiled when the call is kept into the messages the executor would post
 * (1: r->round holds them); runs them (the call's result). */
enum { CONVOY_ROUND_MAX = 64 };
typedef struct convoy__rmsg {
    int send, buf, count, peer, tag; /* send: 1 send, 0 receive, 2 copy (src to dst); tag:
                                        the step's (the epoch is the call's) */
    int64_t off;
    MPI_Datatype type;
    convoy__region src, dst; /* a copy's */
} convoy__rmsg;
typedef struct convoy__round {
    int n, tag_shift, nph;
    convoy__rmsg m[CONVOY_ROUND_MAX]; /* in posting order, phase by phase */
    int ph_end[CONVOY_ROUND_MAX];     /* phase j posts m[ph_end[j - 1] .. ph_end[j]) */
    int w_first[CONVOY_ROUND_MAX], w_n[CONVOY_ROUND_MAX]; /* after waiting for */
    int w_req[CONVOY_ROUND_MAX]; /* these requests (numbered in posting order) */
} convoy__round;
int convoy__round_keep(convoy_request r);
int convoy__round_run(convoy_request r);
/* Whether the process has started, unfinished nonblocking or persistent Convoy requests
 * (request.c; a hint read without the list's lock, as the blocking waits read it). */
int convoy__req_others_pending(void);
/* Frees the communicator's kept requests (state_free). */
void convoy__fast_clear(convoy__cstate *cs);
/* The state of comm if this thread found it before and no state was freed since (NULL:
 * ask convoy__cstate_get). */
convoy__cstate *convoy__cstate_cached(MPI_Comm comm);
/* How many communicator states were freed so far (a state this thread found stays valid
 * while this is unchanged: convoy__cstate_cached). */
unsigned long convoy__states_freed(void);
/* 1 if comm's last blocking call of coll (a convoy__coll) was kept by the fast path as the
 * MPI library's blocking collective (fast.c's direct entry): then *gen is the settings'
 * generation it was planned under, *why why the library served it. comm must be the
 * communicator this thread's last blocking call used (convoy__cstate_cached). */
int convoy__fast_direct(MPI_Comm comm, int coll, uint64_t *gen, const char **why);
/* The Barrier count convoy__fast_direct's entries were planned with (its tune hook's n). */
int convoy__cstate_barrier_n(const convoy__cstate *cs);
/* The generation of the current settings if they are unchanged since they were last read
 * (a snapshot check, no copy); 0 if they must be read again. */
uint64_t convoy__config_gen(void);

long convoy__builds_inc(void);

/* What served a request: its algorithm, or NULL and why the MPI library did (native_why).
 * For blocking calls, whose request is gone when they return: the last one this thread
 * completed (libconvoy_pmpi counts them for CONVOY_STATS). */
void convoy__req_outcome(convoy_request r, const convoy__algo **algo, const char **why);
void convoy__last_outcome(const convoy__algo **algo, const char **why);
/* Records a blocking call the MPI library served for why (the fast path's direct calls). */
void convoy__last_native(const char *why);

/* Rooted collectives (rooted.c): the root argument's check (MPI_ERR_ROOT), and under
 * CONVOY_CHECK_ARGS in a blocking call, whether all ranks passed the same root (else a
 * root-to-all exchange would hang): MPI_ERR_ROOT on every rank when not. */
int convoy__check_root(MPI_Comm comm, int root);
int convoy__agree_root(convoy_request r);

#endif
