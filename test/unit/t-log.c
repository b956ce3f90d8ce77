/*
 * t-log.c: unit tests of log.c's rate limit on lines (struct log_limit):
 * at most per_s lines a second, the rest counted and said in one line
 * once the second is over (at its level, with its owner's pairs), that
 * line written before the next second's first, at once when the owner
 * goes, never when nothing was left out; and the refusals' limit, which
 * is one of them (20 a second; t-ratelimit.sh reads its line).
 *
 * Between capture() and logged(), standard error goes to a temporary
 * file, read back by logged() (the checks come after it: the harness
 * writes on standard error too).  The second is made to pass by moving a
 * limit's start back, not by waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "harness.h"

static FILE	*err_file;	/* where stderr writes while captured */
static int	 err_saved = -1;	/* the real stderr */

/* From now on, what is logged goes to err_file. */
static void
capture(void)
{
	fflush(stderr);
	if (ftruncate(fileno(err_file), 0) == -1)
		abort();
	rewind(err_file);
	if (dup2(fileno(err_file), 2) == -1)
		abort();
}

/* What was logged since capture(); stderr is the real one again. */
static const char *
logged(void)
{
	static char	 buf[4096];
	size_t		 n;

	fflush(stderr);
	if (dup2(err_saved, 2) == -1)
		abort();
	rewind(err_file);
	n = fread(buf, 1, sizeof(buf) - 1, err_file);
	buf[n] = '\0';
	return buf;
}

/* The second of l is over. */
static void
second_over(struct log_limit *l)
{
	l->start -= MS_PER_S;
}

/* per_s lines pass, the rest are counted and said once, at warn. */
static void
limit_counts(void)
{
	struct log_limit	 l;
	int			 i, n = 0, m = 0;

	log_limit_init(&l, "delivery failures not logged", 3, 1, "sub=%s",
	    "hook");
	capture();
	for (i = 0; i < 10; i++)
		n += log_limit_ok(&l);
	log_limit_flush(&l, 0);
	T_EQ_STR(logged(), "");		/* the second is not over */
	T_EQ_INT(n, 3);
	second_over(&l);
	capture();
	log_limit_flush(&l, 0);
	T_EQ_STR(logged(), "level=warn msg=\"delivery failures not logged\" "
	    "sub=hook count=7 window_ms=1000 limit=3\n");
	capture();
	log_limit_flush(&l, 1);
	/* A new second: per_s lines again. */
	for (i = 0; i < 5; i++)
		m += log_limit_ok(&l);
	T_EQ_STR(logged(), "");		/* said once */
	T_EQ_INT(m, 3);
}

/*
 * The next second's first line finds the count of the last one and says
 * it first; an owner that goes says its count at once.
 */
static void
limit_order(void)
{
	struct log_limit	 l;
	int			 ok[4];

	log_limit_init(&l, "x not logged", 1, 0, NULL);
	capture();
	ok[0] = log_limit_ok(&l);
	ok[1] = log_limit_ok(&l);
	ok[2] = log_limit_ok(&l);
	second_over(&l);
	ok[3] = log_limit_ok(&l);
	T_EQ_STR(logged(), "level=info msg=\"x not logged\" count=2 "
	    "window_ms=1000 limit=1\n");
	T_ASSERT(ok[0] && !ok[1] && !ok[2] && ok[3]);
	capture();
	ok[0] = log_limit_ok(&l);
	log_limit_flush(&l, 1);
	T_EQ_STR(logged(), "level=info msg=\"x not logged\" count=1 "
	    "window_ms=1000 limit=1\n");
	T_ASSERT(!ok[0]);
	capture();
	ok[0] = log_limit_ok(&l);
	log_limit_flush(&l, 1);
	T_EQ_STR(logged(), "");		/* nothing left out */
	T_ASSERT(ok[0]);
}

/* Refused requests: one limit, 20 a second. */
static void
refusals(void)
{
	int	 i, n = 0;

	capture();
	for (i = 0; i < LOG_REFUSALS_PER_S + 5; i++)
		n += log_refused_ok();
	log_refused_flush();
	T_EQ_STR(logged(), "");
	T_EQ_INT(n, LOG_REFUSALS_PER_S);
}

static const struct t_case cases[] = {
	{ "a limit: per_s lines, the rest counted in one line", limit_counts },
	{ "a limit: its line before the next second's, or at once",
	  limit_order },
	{ "refused requests: 20 lines a second", refusals },
};

int
main(void)
{
	int	 rc;

	if ((err_file = tmpfile()) == NULL || (err_saved = dup(2)) == -1)
		return 1;
	rc = t_run("log", cases, T_NCASES(cases)) ? 1 : 0;
	return rc;
}
