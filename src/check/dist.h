/*
 * Count distributions for irregular collectives: the six of papers/002 §3 (regular,
 * broadcast, spike, halffull, decreasing, geometric) and a few more for testing (random
 * with zeros, all zeros, one random rank). Pure functions without MPI, shared by
 * convoy-check and convoy-bench so that both mean the same thing by a name.
 */
#ifndef CONVOY_CHECK_DIST_H
#define CONVOY_CHECK_DIST_H

#include <stdint.h>

/* Fills counts[0..p-1] (elements) for distribution `name` with base count c >= 0.
 * All arithmetic is integer division as in the paper, and p = 1 always gives m_0 = c.
 *   regular     m_i = c
 *   broadcast   m_0 = c, all others 0
 *   spike       m_0 = c/2, m_i = c/(2(p-1)) for i > 0
 *   halffull    m_i = 2c for even i, 0 for odd i
 *   decreasing  m_i = 2c(p-1-i)/(p-1)
 *   geometric   for i = 1, 2, 4, ...: processes i-1 .. 2i-2 get c*p/(i*log2 p) (a group
 *               reaching past p-1 is cut; log2 p is exact for powers of two, otherwise the
 *               real logarithm and the quotient rounded down)
 *   random      with probability 1/4 zero, otherwise uniform in 1..2c (from seed)
 *   zeros       all 0
 *   single      one rank chosen from seed has c, all others 0
 * Only random and single use the seed. Returns 0, or CONVOY_ERR_ARG (-3) for an unknown
 * name, p < 1 or c < 0. */
int convoy__dist_counts(const char *name, int p, int64_t c, uint64_t seed, int64_t *counts);

/* The known names, for help texts and "all": convoy__dist_name(i) for 0 <= i < n. */
int convoy__dist_count(void);
const char *convoy__dist_name(int i);

#endif
