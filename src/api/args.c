/*
 * Argument checking as MPI does it (the same error classes, raised on the communicator's
 * error handler), the datatype description builders see, algorithm parameters from the
 * environment, and the CONVOY_CHECK_ARGS agreement across ranks.
 */
#include "api/internal.h"
#include "platform/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int convoy__error(MPI_Comm comm, int err)
{
    if (err == MPI_SUCCESS) return err;
    if (err < 0)
        err = err == CONVOY_ERR_NO_MEM ? MPI_ERR_NO_MEM
              : err == CONVOY_ERR_ARG  ? MPI_ERR_ARG
                                       : MPI_ERR_INTERN;
    /* An invalid communicator has no handler of its own: MPI raises those on
     * MPI_COMM_WORLD's (MPI-3.1 §8.3; Open MPI and MPICH do so). */
    convoy__plat_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
    return err;
}

int convoy__check_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
    int size;
    return PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_COMM;
}

int convoy__check_type(MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return MPI_ERR_TYPE;
    if (combiner == MPI_COMBINER_NAMED) return MPI_SUCCESS;
    /* MPI has no query for "committed"; a send of one element to MPI_PROC_NULL checks it
     * in Open MPI and MPICH alike, and moves nothing. */
    char dummy[16];
    int rc = PMPI_Send(dummy, 1, t, MPI_PROC_NULL, 0, convoy__self_comm());
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/* Which predefined operation applies to which named type (MPI-4.0 §6.9.2). */
static int in_set(MPI_Datatype t, const MPI_Datatype *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == t) return 1;
    return 0;
}

static int op_fits(MPI_Op op, MPI_Datatype t)
{
    static const MPI_Datatype ints[] = {
        MPI_INT, MPI_LONG, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
        MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T,
        MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
        MPI_UINT64_T, MPI_CHAR, MPI_WCHAR, MPI_AINT, MPI_OFFSET, MPI_COUNT,
        /* Fortran's named types: what a Fortran program (and BLACS) reduces */
        MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype floats[] = {
        MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION,
        MPI_REAL4, MPI_REAL8,  MPI_REAL16};
    static const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
                                         MPI_2INT,      MPI_SHORT_INT,  MPI_LONG_DOUBLE_INT,
                                         MPI_2INTEGER,  MPI_2REAL,      MPI_2DOUBLE_PRECISION};
    static const MPI_Datatype complexes[] = {MPI_C_FLOAT_COMPLEX,
                                             MPI_C_DOUBLE_COMPLEX,
                                             MPI_C_LONG_DOUBLE_COMPLEX,
                                             MPI_COMPLEX,
                                             MPI_DOUBLE_COMPLEX,
                                             MPI_COMPLEX8,
                                             MPI_COMPLEX16,
                                             MPI_COMPLEX32,
                                             MPI_CXX_FLOAT_COMPLEX,
                                             MPI_CXX_DOUBLE_COMPLEX,
                                             MPI_CXX_LONG_DOUBLE_COMPLEX};
    static const MPI_Datatype bools[] = {MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL};
#define IN(set) in_set(t, set, (int)(sizeof set / sizeof set[0]))
    int is_int = IN(ints), is_float = IN(floats), is_pair = IN(pairs);
    int is_complex = IN(complexes), is_bool = IN(bools), is_byte = t == MPI_BYTE;
    if (op == MPI_MAX || op == MPI_MIN) return is_int || is_float;
    if (op == MPI_SUM || op == MPI_PROD) return is_int || is_float || is_complex;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return is_int || is_bool;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return is_int || is_byte;
    if (op == MPI_MAXLOC || op == MPI_MINLOC) return is_pair;
    return 1; /* MPI_REPLACE, MPI_NO_OP and the like: MPI decides */
}

int convoy__check_op(MPI_Op op, MPI_Datatype t)
{
    int commute;
    if (op == MPI_OP_NULL || PMPI_Op_commutative(op, &commute) != MPI_SUCCESS) return MPI_ERR_OP;
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (!convoy__op_is_predefined(op) || op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
    /* Predefined operations are defined for the named types only (MPI-4.0 §6.9.2); Open
     * MPI refuses them on derived types, so the check is the same everywhere. */
    return combiner == MPI_COMBINER_NAMED && op_fits(op, t) ? MPI_SUCCESS : MPI_ERR_OP;
}

int convoy__op_is_predefined(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                 MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                 MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i] == op) return (int)i + 1;
    return 0;
}

int convoy__op_is_idempotent(MPI_Op op)
{
    return op == MPI_MAX || op == MPI_MIN || op == MPI_BAND || op == MPI_BOR || op == MPI_LAND ||
           op == MPI_LOR || op == MPI_MAXLOC || op == MPI_MINLOC;
}

int convoy__type_keep(MPI_Datatype t, MPI_Datatype *out)
{
    *out = t;
    if (t == MPI_DATATYPE_NULL) return MPI_SUCCESS;
    int ni, na, nd, combiner;
    int rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    /* Named types cannot be freed; and Open MPI refuses predefined operations on a
     * duplicate of one ("not defined for non-intrinsic datatypes"). */
    if (rc || combiner == MPI_COMBINER_NAMED) return rc;
    return PMPI_Type_dup(t, out);
}

void convoy__type_drop(MPI_Datatype *t)
{
    int ni, na, nd, combiner;
    if (*t == MPI_DATATYPE_NULL) return;
    if (PMPI_Type_get_envelope(*t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

int convoy__describe_type(MPI_Datatype t, convoy__dtype *d)
{
    MPI_Count size, lb, extent, tlb, textent;
    int rc;
    memset(d, 0, sizeof *d);
    if (t == MPI_DATATYPE_NULL) return MPI_SUCCESS; /* the send type under MPI_IN_PLACE */
    if ((rc = PMPI_Type_size_x(t, &size)) || (rc = PMPI_Type_get_extent_x(t, &lb, &extent)) ||
        (rc = PMPI_Type_get_true_extent_x(t, &tlb, &textent)))
        return rc;
    d->size = size;
    d->extent = extent;
    d->true_lb = tlb;
    d->true_extent = textent;
    return MPI_SUCCESS;
}

void convoy__params_from_env(const convoy__config *c, const convoy__algo *al, convoy__args *a)
{
    a->nparams = 0;
    const char *p = al->params;
    while (p && *p && a->nparams < CONVOY_MAX_PARAMS) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0) break;
        char name[sizeof a->params[0].name];
        if (n < sizeof name) {
            memcpy(name, p, n);
            name[n] = '\0';
            const char *v = convoy__config_get(c, name);
            char *end;
            long long val = v ? strtoll(v, &end, 10) : 0;
            if (v && *v && *end == '\0') {
                convoy__param *pa = &a->params[a->nparams];
                memcpy(pa->name, name, n + 1);
                pa->value = val;
                a->nparams++;
            }
        }
        p += n;
    }
}

/* CONVOY_CHECK_ARGS: one MAX-allreduce over (v, -v) gives every rank the largest and the
 * smallest value of each field; any difference is an inconsistency, reported by name. It
 * runs on the private communicator, nonblocking, before the operation starts. */
void convoy__agree_set(convoy_request r, const int64_t *v, int n, const char *const *names)
{
    r->nagree = n;
    r->agree_names = names;
    memcpy(r->agree_vals, v, (size_t)n * sizeof *v);
}

int convoy__agree_start(convoy_request r)
{
    const int n = r->nagree;
    for (int i = 0; i < n; i++) {
        r->agree_buf[i] = r->agree_vals[i];
        r->agree_buf[n + i] = -r->agree_vals[i];
    }
    return PMPI_Iallreduce(MPI_IN_PLACE, r->agree_buf, 2 * n, MPI_INT64_T, MPI_MAX, r->cs->priv,
                           &r->agree_req);
}

int convoy__agree_finish(convoy_request r)
{
    int bad = 0, rank;
    PMPI_Comm_rank(r->comm, &rank);
    for (int i = 0; i < r->nagree; i++) {
        int64_t hi = r->agree_buf[i], lo = -r->agree_buf[r->nagree + i];
        if (hi == lo) continue;
        bad = 1;
        const char *name = r->agree_names[i];
        if (name[0] == '~') {
            fprintf(stderr,
                    "convoy: CONVOY_CHECK_ARGS: rank %d: MPI_%s called with arguments that "
                    "differ across ranks: %s differ between ranks\n",
                    rank, r->what, name + 1);
            continue;
        }
        fprintf(stderr,
                "convoy: CONVOY_CHECK_ARGS: rank %d: MPI_%s called with arguments that differ "
                "across ranks: %s ranges from %lld to %lld (this rank: %lld)\n",
                rank, r->what, name, (long long)lo, (long long)hi, (long long)r->agree_vals[i]);
    }
    return bad ? MPI_ERR_ARG : MPI_SUCCESS;
}
