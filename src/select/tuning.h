/*
 * CONVOY_TUNING_FILE: rules that override the cost model (tuning.c has the format). Pure C.
 */
#ifndef CONVOY_SELECT_TUNING_H
#define CONVOY_SELECT_TUNING_H

#include "select/select.h"

typedef struct convoy__tuning_rule {
    int coll;
    int64_t bytes_lo, bytes_hi;                 /* [lo, hi) */
    int64_t nodes_lo, nodes_hi, ppn_lo, ppn_hi; /* inclusive */
    const convoy__algo *algo;                   /* NULL: the MPI library's collective */
    int nparams;
    convoy__param params[CONVOY_MAX_PARAMS];
} convoy__tuning_rule;

typedef struct convoy__tuning {
    int n;
    convoy__tuning_rule *rules;
} convoy__tuning;

/* 0, or -1 with one line in err (where, what, the valid values); t is then empty. */
int convoy__tuning_parse(const char *text, size_t len, convoy__tuning *t, char *err, size_t errlen);
int convoy__tuning_load(const char *path, convoy__tuning *t, char *err, size_t errlen);
void convoy__tuning_free(convoy__tuning *t);
/* The first rule matching the call (collective, bytes, nodes, largest ppn), or NULL. */
const convoy__tuning_rule *convoy__tuning_find(const convoy__tuning *t, const convoy__args *a);
/* The call's data in bytes as rules see it: the whole vector. */
int64_t convoy__args_bytes(const convoy__args *a);

#endif
