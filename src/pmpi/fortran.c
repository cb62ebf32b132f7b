/*
 * Fortran names for Open MPI. Open MPI's Fortran bindings (mpif.h and `use mpi`:
 * mpi_allreduce_; mpi_f08: ompi_allreduce_f) convert the handles and call PMPI_Allreduce,
 * PMPI_Wait, ... directly, so a Fortran program would never reach the C wrappers; MPICH's
 * call MPI_Allreduce, MPI_Wait, ... and need nothing here (tests/pmpi/test_fortran.F90
 * checks both).
 *
 * The collectives, in their three forms (blocking, MPI_I<coll>, persistent: MPI-4's
 * MPI_<coll>_INIT, Open MPI 4.1's MPIX_<coll>_INIT), convert the handles (MPI_*_f2c) and
 * Fortran's MPI_IN_PLACE / MPI_BOTTOM sentinels, then call the C wrapper, which decides
 * serve or hand back and counts; a request goes back through MPI_Request_c2f (a
 * generalized request or a persistent receive: both the library's own). MPI_START,
 * MPI_STARTALL and MPI_REQUEST_FREE call the C wrappers too (they start or free the Convoy
 * operation behind a persistent request). MPI_FINALIZE runs the C wrapper, so
 * CONVOY_STATS is printed.
 *
 * The completion calls (MPI_WAIT, MPI_TEST and their -ALL, -ANY, -SOME forms,
 * MPI_REQUEST_GET_STATUS) and the blocking point-to-point calls (MPI_SEND, MPI_SSEND,
 * MPI_RECV, MPI_PROBE, MPI_SENDRECV) do what their C wrappers do (requests.c), with the
 * library's own Fortran entries for the rest, so that statuses, MPI_STATUS_IGNORE and
 * handle conversions stay the library's: with nothing of Convoy's pending they are the
 * library's entries, untouched; else they run Convoy's pending operations and wait by
 * testing (the library's Fortran MPI_TEST...) or run as the nonblocking form plus that
 * wait. The library's entries are found with dlsym(RTLD_NEXT), after this library in the
 * search order (preloaded, or linked before the MPI library).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NEXT */
#include "pmpi/dropin.h"

#if defined(OPEN_MPI) && OPEN_MPI

#include "shm/shm.h" /* convoy__backoff */

#include <dlfcn.h>
#include <mpi-ext.h>

/* Fortran INTEGER arrays (counts, displacements) are passed to the C calls as they are. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be a C int");

typedef MPI_Fint F; /* a Fortran INTEGER (or default LOGICAL) argument, by reference */

/* Fortran's MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS_IGNORE are common blocks of the MPI
 * library (gfortran's names); a buffer at their address stands for the C constant. */
static void *in_place, *bottom;
static F *status_ignore;
static void look_up_sentinels(void)
{
    static int looked;
    if (looked) return; /* benign race: every thread finds the same addresses */
    in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
    bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
    looked = 1;
}

static void *fbuf(void *b)
{
    look_up_sentinels();
    if (b && b == in_place) return MPI_IN_PLACE;
    if (b && b == bottom) return MPI_BOTTOM;
    return b;
}

#define CB(b) fbuf((void *)(b))
#define COMM PMPI_Comm_f2c(*comm)
#define TYPE(t) PMPI_Type_f2c(*t)
#define OP PMPI_Op_f2c(*op)

/* Both names of one Fortran entry: <pfx>_<name>_ (mpif.h, use mpi) and o<pfx>_<name>_f
 * (mpi_f08's, and the one the first is an alias of inside Open MPI); pfx is mpi or mpix. */
#define F_ENTRY(pfx, name, params, ...)                                                            \
    void o##pfx##_##name##_f params;                                                               \
    void pfx##_##name##_ params;                                                                   \
    void o##pfx##_##name##_f params __VA_ARGS__ void pfx##_##name##_ params __VA_ARGS__

/* --- the collectives ------------------------------------------------------------------- */

/* Per collective: its Fortran parameters (FP_) and the C call's arguments (FA_). */
#define FP_allgather void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm
#define FA_allgather CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), COMM
#define FP_allgatherv void *sb, F *sc, F *st, void *rb, F *rcs, F *ds, F *rt, F *comm
#define FA_allgatherv CB(sb), *sc, TYPE(st), CB(rb), rcs, ds, TYPE(rt), COMM
#define FP_allreduce void *sb, void *rb, F *n, F *t, F *op, F *comm
#define FA_allreduce CB(sb), CB(rb), *n, TYPE(t), OP, COMM
#define FP_barrier F *comm
#define FA_barrier COMM
#define FP_reduce_scatter void *sb, void *rb, F *rcs, F *t, F *op, F *comm
#define FA_reduce_scatter CB(sb), CB(rb), rcs, TYPE(t), OP, COMM
#define FP_reduce_scatter_block void *sb, void *rb, F *rc, F *t, F *op, F *comm
#define FA_reduce_scatter_block CB(sb), CB(rb), *rc, TYPE(t), OP, COMM
#define FP_bcast void *b, F *n, F *t, F *root, F *comm
#define FA_bcast CB(b), *n, TYPE(t), *root, COMM
#define FP_gather void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm
#define FA_gather CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), *root, COMM
#define FP_gatherv void *sb, F *sc, F *st, void *rb, F *rcs, F *ds, F *rt, F *root, F *comm
#define FA_gatherv CB(sb), *sc, TYPE(st), CB(rb), rcs, ds, TYPE(rt), *root, COMM
#define FP_scatter FP_gather
#define FA_scatter FA_gather
#define FP_scatterv void *sb, F *scs, F *ds, F *st, void *rb, F *rc, F *rt, F *root, F *comm
#define FA_scatterv CB(sb), scs, ds, TYPE(st), CB(rb), *rc, TYPE(rt), *root, COMM
#define FP_reduce void *sb, void *rb, F *n, F *t, F *op, F *root, F *comm
#define FA_reduce CB(sb), CB(rb), *n, TYPE(t), OP, *root, COMM
#define FP_scan FP_allreduce
#define FA_scan FA_allreduce
#define FP_exscan FP_allreduce
#define FA_exscan FA_allreduce
#define FP_alltoall FP_allgather
#define FA_alltoall FA_allgather

/* A form that returns a request: the C call (its request in r), then the request's
 * Fortran handle. */
#define F_REQUEST(call)                                                                            \
    {                                                                                              \
        MPI_Request r;                                                                             \
        *ierr = call;                                                                              \
        if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);                                      \
    }

/* Persistent collectives: MPI-4's names, or Open MPI 4.1's MPIX_ extension. */
#define F_INIT_AS(pfx, cname, name)                                                                \
    F_ENTRY(pfx, name##_init, (FP_##name, F * info, F * req, F * ierr),                            \
            F_REQUEST(cname(FA_##name, PMPI_Info_f2c(*info), &r)))
#if MPI_VERSION >= 4
#define F_INIT(name, Name) F_INIT_AS(mpi, MPI_##Name##_init, name)
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define F_INIT(name, Name) F_INIT_AS(mpix, MPIX_##Name##_init, name)
#else
#define F_INIT(name, Name)
#endif

/* The three forms of one collective: mpi_<name>_, mpi_i<name>_, and the persistent one. */
#define F_COLL(name, Name)                                                                         \
    F_ENTRY(mpi, name, (FP_##name, F * ierr), { *ierr = MPI_##Name(FA_##name); })                  \
    F_ENTRY(mpi, i##name, (FP_##name, F * req, F * ierr), F_REQUEST(MPI_I##name(FA_##name, &r)))   \
    F_INIT(name, Name)

F_COLL(allgather, Allgather)
F_COLL(allgatherv, Allgatherv)
F_COLL(allreduce, Allreduce)
F_COLL(barrier, Barrier)
F_COLL(reduce_scatter, Reduce_scatter)
F_COLL(reduce_scatter_block, Reduce_scatter_block)
F_COLL(bcast, Bcast)
F_COLL(gather, Gather)
F_COLL(gatherv, Gatherv)
F_COLL(scatter, Scatter)
F_COLL(scatterv, Scatterv)
F_COLL(reduce, Reduce)
F_COLL(scan, Scan)
F_COLL(exscan, Exscan)
F_COLL(alltoall, Alltoall)
F_ENTRY(mpi, finalize, (F * ierr), { *ierr = MPI_Finalize(); })

/* --- persistent requests: start and free the Convoy operation too ----------------------- */

F_ENTRY(mpi, start, (F * req, F *ierr), {
    MPI_Request r = PMPI_Request_f2c(*req);
    *ierr = MPI_Start(&r); /* a persistent request keeps its handle */
})
F_ENTRY(mpi, startall, (F * count, F *reqs, F *ierr), {
    *ierr = *count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;
    for (int i = 0; i < *count && *ierr == MPI_SUCCESS; i++) {
        MPI_Request r = PMPI_Request_f2c(reqs[i]);
        *ierr = MPI_Start(&r);
    }
})
F_ENTRY(mpi, request_free, (F * req, F *ierr), {
    MPI_Request r = PMPI_Request_f2c(*req);
    *ierr = MPI_Request_free(&r);
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);
})

/* --- completion and blocking point-to-point: the library's entries, driving Convoy ------ */

/* The library's own Fortran entry o<pfx>_<name>_f, of type `type`, found once. */
#define LIB(type, name)                                                                            \
    static type lib_##name;                                                                        \
    if (!lib_##name) *(void **)&lib_##name = dlsym(RTLD_NEXT, "ompi_" #name "_f");                 \
    if (!lib_##name) {                                                                             \
        *ierr = MPI_ERR_INTERN;                                                                    \
        return;                                                                                    \
    }

typedef void (*fn_wait)(F *, F *, F *);
typedef void (*fn_test)(F *, F *, F *, F *);
typedef void (*fn_waitall)(F *, F *, F *, F *);
typedef void (*fn_testall)(F *, F *, F *, F *, F *);
typedef void (*fn_waitany)(F *, F *, F *, F *, F *);
typedef void (*fn_testany)(F *, F *, F *, F *, F *, F *);
typedef void (*fn_waitsome)(F *, F *, F *, F *, F *, F *);
typedef void (*fn_reqstat)(F *, F *, F *, F *);
typedef void (*fn_send)(void *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_isend)(void *, F *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_recv)(void *, F *, F *, F *, F *, F *, F *, F *);
typedef void (*fn_probe)(F *, F *, F *, F *, F *);
typedef void (*fn_iprobe)(F *, F *, F *, F *, F *, F *);
typedef void (*fn_sendrecv)(void *, F *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *, F *);

/* A wait: with Convoy's operations pending, run them and test (the library's test, `done`
 * when it says so) until done or none is pending; then the library's wait. */
#define WAIT_BY_TESTING(wait_call, test_call, done)                                                \
    unsigned iter = 0;                                                                             \
    for (;;) {                                                                                     \
        if (dropin_pending()) dropin_drive();                                                      \
        if (!dropin_pending()) {                                                                   \
            wait_call;                                                                             \
            return;                                                                                \
        }                                                                                          \
        test_call;                                                                                 \
        if (*ierr != MPI_SUCCESS || (done)) return;                                                \
        convoy__backoff(&iter);                                                                    \
    }

/* MPI_WAIT is also the blocking point-to-point calls' wait (a C function so they can call
 * it). */
static void f_wait(F *req, F *status, F *ierr)
{
    LIB(fn_wait, wait)
    LIB(fn_test, test)
    F flag = 0;
    WAIT_BY_TESTING(lib_wait(req, status, ierr), lib_test(req, &flag, status, ierr), flag)
}
F_ENTRY(mpi, wait, (F * req, F *status, F *ierr), { f_wait(req, status, ierr); })
F_ENTRY(mpi, waitall, (F * n, F *reqs, F *statuses, F *ierr), {
    LIB(fn_waitall, waitall)
    LIB(fn_testall, testall)
    F flag = 0;
    WAIT_BY_TESTING(lib_waitall(n, reqs, statuses, ierr),
                    lib_testall(n, reqs, &flag, statuses, ierr), flag)
})
F_ENTRY(mpi, waitany, (F * n, F *reqs, F *index, F *status, F *ierr), {
    LIB(fn_waitany, waitany)
    LIB(fn_testany, testany)
    F flag = 0;
    WAIT_BY_TESTING(lib_waitany(n, reqs, index, status, ierr),
                    lib_testany(n, reqs, index, &flag, status, ierr), flag)
})
F_ENTRY(mpi, waitsome, (F * n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr),
        {LIB(fn_waitsome, waitsome) LIB(fn_waitsome, testsome)
             WAIT_BY_TESTING(lib_waitsome(n, reqs, outcount, indices, statuses, ierr),
                             lib_testsome(n, reqs, outcount, indices, statuses, ierr),
                             *outcount != 0)})

/* The tests: Convoy's pending operations first, then the library's test. */
#define F_TEST(name, type, params, args)                                                           \
    F_ENTRY(mpi, name, params, {                                                                   \
        LIB(type, name)                                                                            \
        if (dropin_pending()) dropin_drive();                                                      \
        lib_##name args;                                                                           \
    })
F_TEST(test, fn_test, (F * req, F *flag, F *status, F *ierr), (req, flag, status, ierr))
F_TEST(testall, fn_testall, (F * n, F *reqs, F *flag, F *statuses, F *ierr),
       (n, reqs, flag, statuses, ierr))
F_TEST(testany, fn_testany, (F * n, F *reqs, F *index, F *flag, F *status, F *ierr),
       (n, reqs, index, flag, status, ierr))
F_TEST(testsome, fn_waitsome, (F * n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr),
       (n, reqs, outcount, indices, statuses, ierr))
F_TEST(request_get_status, fn_reqstat, (F * req, F *flag, F *status, F *ierr),
       (req, flag, status, ierr))

/* Blocking sends and receives: with Convoy's operations pending, the nonblocking form and
 * f_wait (a peer may need this process's part of a pending Convoy collective first). */
#define F_P2P(name, iname, type, itype, params, args, status)                                      \
    F_ENTRY(mpi, name, params, {                                                                   \
        LIB(type, name)                                                                            \
        if (!dropin_pending()) {                                                                   \
            lib_##name args;                                                                       \
            return;                                                                                \
        }                                                                                          \
        LIB(itype, iname)                                                                          \
        F req;                                                                                     \
        look_up_sentinels();                                                                       \
        lib_##iname(buf, n, t, peer, tag, comm, &req, ierr);                                       \
        if (*ierr == MPI_SUCCESS) f_wait(&req, status, ierr);                                      \
    })
#define P2P_PARAMS (void *buf, F *n, F *t, F *peer, F *tag, F *comm, F *ierr)
F_P2P(send, isend, fn_send, fn_isend, P2P_PARAMS, (buf, n, t, peer, tag, comm, ierr), status_ignore)
F_P2P(ssend, issend, fn_send, fn_isend, P2P_PARAMS, (buf, n, t, peer, tag, comm, ierr),
      status_ignore)
F_P2P(recv, irecv, fn_recv, fn_isend,
      (void *buf, F *n, F *t, F *peer, F *tag, F *comm, F *status, F *ierr),
      (buf, n, t, peer, tag, comm, status, ierr), status)

F_ENTRY(mpi, probe, (F * src, F *tag, F *comm, F *status, F *ierr), {
    LIB(fn_probe, probe)
    LIB(fn_iprobe, iprobe)
    F flag = 0;
    WAIT_BY_TESTING(lib_probe(src, tag, comm, status, ierr),
                    lib_iprobe(src, tag, comm, &flag, status, ierr), flag)
})

F_ENTRY(mpi, sendrecv,
        (void *sb, F *sc, F *st, F *dest, F *stag, void *rb, F *rc, F *rt, F *src, F *rtag, F *comm,
         F *status, F *ierr),
        {
            LIB(fn_sendrecv, sendrecv)
            if (!dropin_pending()) {
                lib_sendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, status, ierr);
                return;
            }
            LIB(fn_isend, irecv)
            LIB(fn_isend, isend)
            F rr, sr, serr;
            lib_irecv(rb, rc, rt, src, rtag, comm, &rr, ierr);
            if (*ierr != MPI_SUCCESS) return;
            lib_isend(sb, sc, st, dest, stag, comm, &sr, ierr);
            if (*ierr != MPI_SUCCESS) return; /* the receive stays posted, as in C's MPI */
            look_up_sentinels();
            f_wait(&sr, status_ignore, &serr);
            f_wait(&rr, status, ierr);
            if (*ierr == MPI_SUCCESS) *ierr = serr;
        })

#endif
