/*
 * harness.h: a tiny unit-test harness.  A suite is a table of named cases;
 * t_run() runs each and prints exactly one line per case on stdout,
 * "ok - <suite>: <case>" or "FAIL - <suite>: <case>: <why>" (the first
 * failure of the case), with every failure's details on stderr.  The
 * assertion macros record a failure and let the case continue.
 *
 * Single-threaded: cases run one after another on the main thread.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>

struct t_case {
	const char	*name;
	void		(*fn)(void);
};

#define T_NCASES(a)	(sizeof(a) / sizeof((a)[0]))

#define T_ASSERT(cond) \
	t_check_true(__FILE__, __LINE__, #cond, (cond) ? 1 : 0)
#define T_EQ_INT(a, b) \
	t_check_int(__FILE__, __LINE__, #a, #b, (long long)(a), (long long)(b))
#define T_EQ_STR(a, b) \
	t_check_str(__FILE__, __LINE__, #a, #b, (a), (b))

int	t_run(const char *suite, const struct t_case *cases, size_t n);
int	t_check_true(const char *file, int line, const char *expr, int ok);
int	t_check_int(const char *file, int line, const char *ea, const char *eb,
	    long long a, long long b);
int	t_check_str(const char *file, int line, const char *ea, const char *eb,
	    const char *a, const char *b);
void	t_fail(const char *file, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif /* HARNESS_H */
