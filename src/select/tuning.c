/*
 * CONVOY_TUNING_FILE: per collective, rules "message size range x node count x processes
 * per node -> algorithm (and parameters), or native" that override the cost model where
 * one matches (the first that does). convoy-tune writes them; people may too:
 *
 *   {"convoy_tuning": 1,
 *    "allreduce": [
 *      {"bytes": [0, 4096], "nodes": [1, 8], "ppn": 2, "algorithm": "dissem",
 *       "params": {"CONVOY_DISSEM_N": 2}},
 *      {"bytes": [4096, null], "algorithm": "native"}]}
 *
 * "bytes": [lo, hi) of the call's data (the whole vector: count, or the sum of the counts,
 * times the datatype size), hi null for no bound; "nodes", "ppn": a number or [lo, hi]
 * inclusive (the communicator's nodes and largest node); a missing range matches all.
 * "algorithm": a registry name of that collective (convoy-check --list) or "native".
 * "params": parameter names the algorithm reads, integer values.
 *
 * The parser is strict JSON (RFC 8259: no comments, no trailing commas, one top value)
 * and every key is checked: a file that does not parse or names an unknown collective,
 * algorithm, parameter or key is rejected whole with one message naming the file, the
 * place (line, or the setting's path) and the valid values. Pure C, no MPI.
 */
#include "select/tuning.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- a JSON tree ----------------------------------------------------------------------- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int type;
    double num;
    char *str;        /* J_STR */
    int n;            /* J_ARR, J_OBJ: members */
    struct jv *items; /* J_ARR, J_OBJ */
    char **keys;      /* J_OBJ */
    int line;
} jv;

typedef struct parser {
    const char *p, *end;
    int line, depth;
    char *err;
    size_t errlen;
} parser;

static void jv_free(jv *v)
{
    free(v->str);
    for (int i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static int fail(parser *ps, const char *fmt, ...)
{
    if (ps->err[0]) return -1; /* the first error is the one to report */
    int w = snprintf(ps->err, ps->errlen, "line %d: ", ps->line);
    va_list ap;
    va_start(ap, fmt);
    if (w >= 0 && (size_t)w < ps->errlen) vsnprintf(ps->err + w, ps->errlen - (size_t)w, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        if (*ps->p++ == '\n') ps->line++;
}

static int parse_value(parser *ps, jv *v);

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int parse_string(parser *ps, char **out)
{
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    if (!s) return fail(ps, "out of memory");
    ps->p++; /* the opening quote */
    for (;;) {
        if (ps->p >= ps->end) {
            free(s);
            return fail(ps, "unterminated string");
        }
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') break;
        if (c < 0x20) {
            free(s);
            return fail(ps, "control character in a string");
        }
        if (c == '\\') {
            if (ps->p >= ps->end) continue;
            char e = *ps->p++;
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *k = strchr(from, e);
            if (e == 'u') {
                /* Names and algorithms are ASCII: \u escapes of ASCII only. */
                unsigned u = 0;
                for (int i = 0; i < 4; i++, ps->p++) {
                    int d = ps->p < ps->end ? hexval(*ps->p) : -1;
                    if (d < 0) {
                        free(s);
                        return fail(ps, "bad \\u escape");
                    }
                    u = u * 16 + (unsigned)d;
                }
                if (u == 0 || u > 0x7f) {
                    free(s);
                    return fail(ps, "\\u%04x: only ASCII characters are meaningful here", u);
                }
                c = (unsigned char)u;
            } else if (e && k) {
                c = (unsigned char)to[k - from];
            } else {
                free(s);
                return fail(ps, "bad escape \\%c", e);
            }
        }
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return fail(ps, "out of memory");
            }
            s = t;
        }
        s[n++] = (char)c;
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int parse_number(parser *ps, jv *v)
{
    const char *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !isdigit((unsigned char)*q)) return fail(ps, "bad number");
    if (*q == '0' && q + 1 < ps->end && isdigit((unsigned char)q[1]))
        return fail(ps, "leading zero in a number");
    while (q < ps->end && isdigit((unsigned char)*q))
        q++;
    if (q < ps->end && *q == '.') {
        if (++q >= ps->end || !isdigit((unsigned char)*q)) return fail(ps, "bad number");
        while (q < ps->end && isdigit((unsigned char)*q))
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !isdigit((unsigned char)*q)) return fail(ps, "bad number");
        while (q < ps->end && isdigit((unsigned char)*q))
            q++;
    }
    char buf[64];
    size_t len = (size_t)(q - ps->p);
    if (len >= sizeof buf) return fail(ps, "number too long");
    memcpy(buf, ps->p, len);
    buf[len] = '\0';
    v->type = J_NUM;
    v->num = strtod(buf, NULL);
    ps->p = q;
    return 0;
}

/* Members of an array or object, up to the closing bracket. */
static int parse_members(parser *ps, jv *v, int obj)
{
    const char close = obj ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (obj) {
            if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "expected a \"key\"");
            if (parse_string(ps, &key)) return -1;
            for (int i = 0; i < v->n; i++)
                if (strcmp(v->keys[i], key) == 0) {
                    fail(ps, "key \"%s\" given twice", key);
                    free(key);
                    return -1;
                }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                fail(ps, "expected ':' after \"%s\"", key);
                free(key);
                return -1;
            }
            ps->p++;
        }
        jv *items = realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
        char **keys = obj ? realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys) : NULL;
        if (items) v->items = items;
        if (keys) v->keys = keys;
        if (!items || (obj && !keys)) {
            free(key);
            return fail(ps, "out of memory");
        }
        memset(&v->items[v->n], 0, sizeof *items);
        if (obj) v->keys[v->n] = key;
        v->n++;
        if (parse_value(ps, &v->items[v->n - 1])) return -1;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == close) return fail(ps, "trailing comma");
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return 0;
        }
        return fail(ps, "expected ',' or '%c'", close);
    }
}

static int parse_value(parser *ps, jv *v)
{
    skip_ws(ps);
    v->line = ps->line;
    if (ps->p >= ps->end) return fail(ps, "unexpected end of file");
    if (++ps->depth > 32) return fail(ps, "nested too deeply");
    int rc;
    const char c = *ps->p;
    static const struct {
        const char *word;
        int type;
        double num;
    } words[] = {{"null", J_NULL, 0}, {"true", J_BOOL, 1}, {"false", J_BOOL, 0}};
    if (c == '{' || c == '[') {
        v->type = c == '{' ? J_OBJ : J_ARR;
        rc = parse_members(ps, v, c == '{');
    } else if (c == '"') {
        v->type = J_STR;
        rc = parse_string(ps, &v->str);
    } else if (c == '-' || isdigit((unsigned char)c)) {
        rc = parse_number(ps, v);
    } else {
        rc = fail(ps, "unexpected character '%c'", c);
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            size_t n = strlen(words[i].word);
            if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i].word, n) == 0) {
                ps->err[0] = '\0';
                v->type = words[i].type;
                v->num = words[i].num;
                ps->p += n;
                rc = 0;
                break;
            }
        }
    }
    ps->depth--;
    return rc;
}

/* --- the tuning rules from the tree ---------------------------------------------------- */

typedef struct checker {
    char *err;
    size_t errlen;
} checker;

static int bad(checker *ck, const jv *v, const char *fmt, ...)
{
    int w = snprintf(ck->err, ck->errlen, "line %d: ", v->line);
    va_list ap;
    va_start(ap, fmt);
    if (w >= 0 && (size_t)w < ck->errlen) vsnprintf(ck->err + w, ck->errlen - (size_t)w, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_int(const jv *v)
{
    return v->type == J_NUM && v->num >= 0 && v->num <= 9.0e15 && v->num == (double)(int64_t)v->num;
}

/* A range: a number (lo = hi) or [lo, hi]; hi may be null (no bound) when open_hi. */
static int range(checker *ck, const jv *v, const char *where, int64_t *lo, int64_t *hi)
{
    if (is_int(v)) {
        *lo = *hi = (int64_t)v->num;
        return 0;
    }
    if (v->type != J_ARR || v->n != 2 || !is_int(&v->items[0]) ||
        !(is_int(&v->items[1]) || v->items[1].type == J_NULL))
        return bad(ck, v, "%s: expected a non-negative integer or [lo, hi] (hi may be null)",
                   where);
    *lo = (int64_t)v->items[0].num;
    *hi = v->items[1].type == J_NULL ? INT64_MAX : (int64_t)v->items[1].num;
    if (*hi < *lo) return bad(ck, v, "%s: [lo, hi] with hi < lo", where);
    return 0;
}

static void list_algos(int coll, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "native");
    for (int i = 0; i < convoy__nalgos && used < len; i++)
        if (convoy__algo_serves(&convoy__algos[i], coll))
            used += (size_t)snprintf(buf + used, len - used, ", %s", convoy__algos[i].name);
}

static int param_known(const convoy__algo *al, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = al->params; p && *p;) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (k == n && strncmp(p, name, n) == 0) return 1;
        p += k;
    }
    return 0;
}

static int rule_of(checker *ck, int coll, const char *cname, int idx, const jv *v,
                   convoy__tuning_rule *r)
{
    char where[96], valid[1024];
    snprintf(where, sizeof where, "%s[%d]", cname, idx);
    if (v->type != J_OBJ) return bad(ck, v, "%s: expected an object {\"algorithm\": ...}", where);
    memset(r, 0, sizeof *r);
    r->coll = coll;
    r->bytes_hi = r->nodes_hi = r->ppn_hi = INT64_MAX;
    const jv *algo = NULL, *params = NULL;
    for (int i = 0; i < v->n; i++) {
        const char *k = v->keys[i];
        const jv *x = &v->items[i];
        char w[160];
        snprintf(w, sizeof w, "%s.%s", where, k);
        int rc = 0;
        if (strcmp(k, "bytes") == 0) {
            rc = range(ck, x, w, &r->bytes_lo, &r->bytes_hi);
            if (!rc && x->type == J_ARR && x->items[1].type != J_NULL && r->bytes_hi == r->bytes_lo)
                rc = bad(ck, x, "%s: [lo, hi) is empty", w);
            if (!rc && x->type != J_ARR) r->bytes_hi = r->bytes_lo + 1;
        } else if (strcmp(k, "nodes") == 0) {
            rc = range(ck, x, w, &r->nodes_lo, &r->nodes_hi);
        } else if (strcmp(k, "ppn") == 0) {
            rc = range(ck, x, w, &r->ppn_lo, &r->ppn_hi);
        } else if (strcmp(k, "algorithm") == 0) {
            algo = x;
        } else if (strcmp(k, "params") == 0) {
            params = x;
        } else {
            rc = bad(ck, x, "%s: unknown key (valid: bytes, nodes, ppn, algorithm, params)", w);
        }
        if (rc) return rc;
    }
    list_algos(coll, valid, sizeof valid);
    if (!algo || algo->type != J_STR)
        return bad(ck, algo ? algo : v, "%s.algorithm: missing or not a string (valid: %s)", where,
                   valid);
    if (strcmp(algo->str, "native") != 0 && !(r->algo = convoy__algo_find(coll, algo->str)))
        return bad(ck, algo, "%s.algorithm: \"%s\" is no %s algorithm (valid: %s)", where,
                   algo->str, cname, valid);
    if (!params) return 0;
    if (params->type != J_OBJ) return bad(ck, params, "%s.params: expected an object", where);
    for (int i = 0; i < params->n; i++) {
        const char *k = params->keys[i];
        const jv *x = &params->items[i];
        if (!r->algo || !param_known(r->algo, k))
            return bad(ck, x, "%s.params: %s does not read \"%s\" (valid: %s)", where,
                       r->algo ? r->algo->name : "native", k,
                       r->algo && r->algo->params ? r->algo->params : "none");
        if (x->type != J_NUM || x->num != (double)(int64_t)x->num)
            return bad(ck, x, "%s.params.%s: expected an integer", where, k);
        if (r->nparams == CONVOY_MAX_PARAMS || strlen(k) >= sizeof r->params[0].name)
            return bad(ck, x, "%s.params: too many or too long", where);
        snprintf(r->params[r->nparams].name, sizeof r->params[0].name, "%s", k);
        r->params[r->nparams++].value = (int64_t)x->num;
    }
    return 0;
}

int convoy__tuning_parse(const char *text, size_t len, convoy__tuning *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    err[0] = '\0';
    parser ps = {.p = text, .end = text + len, .line = 1, .err = err, .errlen = errlen};
    jv root = {0};
    int rc = parse_value(&ps, &root);
    skip_ws(&ps);
    if (!rc && ps.p != ps.end) rc = fail(&ps, "text after the JSON value");
    checker ck = {err, errlen};
    if (!rc && root.type != J_OBJ)
        rc = bad(&ck, &root, "expected an object {\"<collective>\": [rules]}");
    for (int i = 0; !rc && i < root.n; i++) {
        const char *k = root.keys[i];
        const jv *x = &root.items[i];
        if (strcmp(k, "convoy_tuning") == 0 || strcmp(k, "machine") == 0 ||
            strcmp(k, "comment") == 0)
            continue; /* the format version, convoy-tune's record of what it measured */
        int coll = convoy__coll_parse(k);
        if (coll < 0) {
            char valid[512];
            size_t used = (size_t)snprintf(valid, sizeof valid, "convoy_tuning, machine, comment");
            for (int c = 0; c < CONVOY_NCOLL && used < sizeof valid; c++)
                used += (size_t)snprintf(valid + used, sizeof valid - used, ", %s",
                                         convoy__coll_name(c));
            rc = bad(&ck, x, "unknown collective \"%s\" (valid: %s)", k, valid);
            break;
        }
        if (x->type != J_ARR) {
            rc = bad(&ck, x, "%s: expected an array of rules", k);
            break;
        }
        if (x->n == 0) continue;
        convoy__tuning_rule *rules = realloc(t->rules, (size_t)(t->n + x->n) * sizeof *t->rules);
        if (!rules) {
            rc = bad(&ck, x, "out of memory");
            break;
        }
        t->rules = rules;
        for (int j = 0; !rc && j < x->n; j++)
            if (!(rc = rule_of(&ck, coll, k, j, &x->items[j], &t->rules[t->n]))) t->n++;
    }
    jv_free(&root);
    if (rc) convoy__tuning_free(t);
    return rc ? -1 : 0;
}

int convoy__tuning_load(const char *path, convoy__tuning *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open it");
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *b = cap > (64u << 20) ? NULL : realloc(buf, cap *= 2);
        if (!b) free(buf);
        buf = b;
    }
    int rdfail = ferror(f);
    fclose(f);
    if (!buf || rdfail) {
        free(buf);
        snprintf(err, errlen, buf ? "read error" : "too large, or out of memory");
        return -1;
    }
    int rc = convoy__tuning_parse(buf, n, t, err, errlen);
    free(buf);
    return rc;
}

void convoy__tuning_free(convoy__tuning *t)
{
    free(t->rules);
    memset(t, 0, sizeof *t);
}

int64_t convoy__args_bytes(const convoy__args *a)
{
    int64_t size = a->rtype.size ? a->rtype.size : a->stype.size, n = a->count;
    if (a->rcounts && convoy__coll_base(a->coll) != CONVOY_COLL_REDUCE_SCATTER) {
        n = 0;
        for (int i = 0; i < a->topo->size; i++)
            n += a->rcounts[i];
    }
    return n * size;
}

const convoy__tuning_rule *convoy__tuning_find(const convoy__tuning *t, const convoy__args *a)
{
    const int64_t b = convoy__args_bytes(a), nodes = a->topo->nnodes, ppn = a->topo->max_ppn;
    for (int i = 0; i < t->n; i++) {
        const convoy__tuning_rule *r = &t->rules[i];
        if (r->coll == a->coll && b >= r->bytes_lo && b < r->bytes_hi && nodes >= r->nodes_lo &&
            nodes <= r->nodes_hi && ppn >= r->ppn_lo && ppn <= r->ppn_hi)
            return r;
    }
    return NULL;
}
