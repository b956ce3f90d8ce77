/*
 * bench.h: small helpers the benchmark tools share (clocks, CPU time,
 * allocation that exits).  Header-only: each tool is one file.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* A clock in nanoseconds. */
static inline long long
clock_ns(clockid_t id)
{
	struct timespec	 ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Our own CPU seconds, user and system: what the benchmark itself costs. */
static inline double
cpu_s(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* malloc-family result or exit: a benchmark has nothing to fall back to. */
static inline void *
must(void *p)
{
	if (p == NULL) {
		fputs("bench: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

/* qsort order for nanosecond times. */
static inline int
ll_cmp(const void *a, const void *b)
{
	long long	 x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Percentile p (0-100) of n sorted nanosecond times, in milliseconds. */
static inline double
pct_ms(const long long *sorted, size_t n, double p)
{
	if (n == 0)
		return 0;
	return (double)sorted[(size_t)(p / 100.0 * (double)(n - 1) + 0.5)] /
	    1e6;
}

#endif
