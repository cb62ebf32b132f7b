/*
 * Command-line value parsing for convoy-bench: see parse.h.
 */
#include "parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t COUNT_MAX = (int64_t)1 << 62;

int bench_parse_count(const char *s, int64_t *out)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    int64_t v = 0;
    const char *p = s;
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (COUNT_MAX - (*p - '0')) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    int shift = 0;
    switch (*p) {
    case 'k':
    case 'K':
        shift = 10;
        p++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        p++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        p++;
        break;
    default: break;
    }
    if (*p != '\0') return -1;
    if (v > (COUNT_MAX >> shift)) return -1;
    *out = v << shift;
    return 0;
}

static int append(int64_t **v, int *n, int *cap, int64_t x)
{
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        int64_t *nv = realloc(*v, (size_t)ncap * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Parses one item of a count list (a count or a range), appending to *v. */
static int parse_item(char *item, int64_t **v, int *n, int *cap)
{
    char *c1 = strchr(item, ':');
    if (!c1) {
        int64_t c;
        return bench_parse_count(item, &c) ? -1 : append(v, n, cap, c);
    }
    int64_t lo, hi, f = 4;
    *c1 = '\0';
    char *c2 = strchr(c1 + 1, ':');
    if (c2) {
        *c2 = '\0';
        if (bench_parse_count(c2 + 1, &f) || f < 2) return -1;
    }
    if (bench_parse_count(item, &lo) || bench_parse_count(c1 + 1, &hi)) return -1;
    if (lo < 1 || hi < lo) return -1;
    for (int64_t x = lo;; x *= f) {
        if (append(v, n, cap, x)) return -1;
        if (x > hi / f) break; /* the next one would pass hi (checked without overflow) */
    }
    return 0;
}

int bench_parse_counts(const char *s, int64_t **counts, int *n)
{
    char **items;
    int nitems;
    *counts = NULL;
    *n = 0;
    if (bench_split(s, &items, &nitems)) return -1;
    int cap = 0, rc = 0;
    for (int i = 0; i < nitems && !rc; i++)
        rc = parse_item(items[i], counts, n, &cap);
    bench_strv_free(items, nitems);
    if (rc) {
        free(*counts);
        *counts = NULL;
        *n = 0;
    }
    return rc;
}

int bench_split(const char *s, char ***items, int *n)
{
    *items = NULL;
    *n = 0;
    if (!s || !*s) return -1;
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    char **v = calloc((size_t)cap, sizeof *v);
    if (!v) return -1;
    int k = 0;
    const char *start = s;
    for (;;) {
        const char *end = strchr(start, ',');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        if (len == 0) goto fail;
        v[k] = malloc(len + 1);
        if (!v[k]) goto fail;
        memcpy(v[k], start, len);
        v[k][len] = '\0';
        k++;
        if (!end) break;
        start = end + 1;
    }
    *items = v;
    *n = k;
    return 0;
fail:
    bench_strv_free(v, k);
    return -1;
}

void bench_strv_free(char **items, int n)
{
    if (!items) return;
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

void bench_format_count(int64_t c, char *buf, int len)
{
    static const char suffix[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        int shift = 30 - 10 * i;
        if (c > 0 && c % ((int64_t)1 << shift) == 0) {
            snprintf(buf, (size_t)len, "%lld%c", (long long)(c >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, (size_t)len, "%lld", (long long)c);
}
