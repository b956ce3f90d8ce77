/*
 * harness.c: runs a table of test cases and reports one line per case on
 * stdout; failure details go to stderr.
 *
 * Single-threaded: the state of the case being run lives in this file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* The case being run: its first failure and how many it had. */
static struct {
	const char	*suite;
	const char	*name;
	int		 failures;
	char		 why[512];
} cur;

/* Record one failure of the current case, formatted like printf. */
void
t_fail(const char *file, int line, const char *fmt, ...)
{
	char	 msg[448];
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s: %s: %s:%d: %s\n", cur.suite ? cur.suite : "?",
	    cur.name ? cur.name : "?", file, line, msg);
	if (cur.failures++ == 0)
		(void)snprintf(cur.why, sizeof(cur.why), "%s:%d: %s", file,
		    line, msg);
}

/* Check that a condition holds; returns it. */
int
t_check_true(const char *file, int line, const char *expr, int ok)
{
	if (!ok)
		t_fail(file, line, "assertion failed: %s", expr);
	return (ok);
}

/* Check that two integers are equal; returns 1 when they are. */
int
t_check_int(const char *file, int line, const char *ea, const char *eb,
    long long a, long long b)
{
	if (a == b)
		return (1);
	t_fail(file, line, "%s == %s: %lld != %lld", ea, eb, a, b);
	return (0);
}

/* Check that two strings are equal (NULL only equals NULL); 1 when so. */
int
t_check_str(const char *file, int line, const char *ea, const char *eb,
    const char *a, const char *b)
{
	if (a == NULL && b == NULL)
		return (1);
	if (a != NULL && b != NULL && strcmp(a, b) == 0)
		return (1);
	t_fail(file, line, "%s == %s: \"%.160s\" != \"%.160s\"", ea, eb,
	    a ? a : "(null)", b ? b : "(null)");
	return (0);
}

/* Make a failure reason fit on one output line. */
static void
one_line(char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

/* Run every case of a suite, one line each; returns the number failed. */
int
t_run(const char *suite, const struct t_case *cases, size_t n)
{
	size_t	 i;
	int	 failed = 0;

	for (i = 0; i < n; i++) {
		memset(&cur, 0, sizeof(cur));
		cur.suite = suite;
		cur.name = cases[i].name;
		cases[i].fn();
		if (cur.failures == 0)
			printf("ok - %s: %s\n", suite, cases[i].name);
		else {
			one_line(cur.why);
			printf("FAIL - %s: %s: %s\n", suite, cases[i].name,
			    cur.why);
			failed++;
		}
		/* Flush each line so that a later crash cannot swallow it. */
		fflush(stdout);
	}
	return (failed);
}
