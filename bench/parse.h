/*
 * Command-line value parsing for convoy-bench: counts with K/M/G suffixes, count ranges,
 * comma-separated lists. Pure C without MPI, so the unit tests can call it.
 */
#ifndef CONVOY_BENCH_PARSE_H
#define CONVOY_BENCH_PARSE_H

#include <stdint.h>

/* One count: decimal digits with an optional binary suffix K (2^10), M (2^20) or
 * G (2^30), e.g. "255", "16K", "1M". Returns 0, or -1 if malformed or above 2^62. */
int bench_parse_count(const char *s, int64_t *out);

/*
 * A list of counts: comma-separated items, each a count or a range LO:HI[:F] meaning
 * LO, LO*F, LO*F^2, ... up to HI (F defaults to 4, as a sweep over 1K:64M in powers of 4
 * keeps the number of cells manageable; use :2 for OSU-like density). HI itself is included
 * when it lies on the progression. LO must be at least 1, F at least 2, HI >= LO.
 * On success *counts is malloc'ed (free it) and *n set. Returns 0 or -1.
 */
int bench_parse_counts(const char *s, int64_t **counts, int *n);

/* Splits a comma-separated list into malloc'ed strings (free with bench_strv_free).
 * Empty items are rejected. Returns 0 or -1. */
int bench_split(const char *s, char ***items, int *n);
void bench_strv_free(char **items, int n);

/* Formats a count the way it is parsed back: 16384 -> "16K", 1000 -> "1000". */
void bench_format_count(int64_t c, char *buf, int len);

#endif
