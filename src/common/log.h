/*
 * log.h: logfmt lines on stderr, one per event, metadata only.  Loop
 * thread only (the relay's and the client's): log_q's buffers are static,
 * and nats.c's threads and the worker never log, they post to the bridge.
 * log_libevent alone may run on any thread libevent logs from (its
 * counters only bound the volume).
 */
#ifndef LOG_H
#define LOG_H

#include <stdarg.h>
#include <stdnoreturn.h>

#define ATTR_PRINTF(f, a)	__attribute__((format(printf, f, a)))

void		 log_init(int verbose);
/*
 * From now on every line starts with its syslog priority (<3> error .. <7>
 * debug) when stderr is the journal's stream (JOURNAL_STREAM), otherwise
 * with time=<RFC 3339, UTC, milliseconds>.  The relay's; the client's
 * lines stay plain.
 */
void		 log_use_stamps(void);
int		 log_verbose(void);
/*
 * Each call takes msg (the human text, quoted for you) and then a printf
 * format for the key=value pairs, which the caller writes already in logfmt
 * (use log_q() for values that may contain spaces or quotes).
 */
void		 log_info(const char *msg, const char *fmt, ...) ATTR_PRINTF(2, 3);
void		 log_debug_line(const char *msg, const char *fmt, ...)
		    ATTR_PRINTF(2, 3);
extern int	 log_level_debug;
/*
 * A debug line's arguments are not even evaluated when debug lines are
 * off: the hot paths log one per event, and their log_q calls cost more
 * than the rest of the line's work.
 */
#define log_debug(...) do {						\
	if (log_level_debug)						\
		log_debug_line(__VA_ARGS__);				\
} while (0)
void		 log_warnx(const char *msg, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* log_warn appends err="<strerror(errno)>". */
void		 log_warn(const char *msg, const char *fmt, ...) ATTR_PRINTF(2, 3);
void		 log_errorx(const char *msg, const char *fmt, ...) ATTR_PRINTF(2, 3);
noreturn void	 fatalx(const char *msg, const char *fmt, ...) ATTR_PRINTF(2, 3);
/*
 * Quote s for a logfmt value into one of a few rotating static buffers
 * (loop thread only): bare when it is safe, otherwise in double quotes with
 * backslash escapes; control bytes become \xNN.  Long values are cut.
 */
const char	*log_q(const char *s);
/*
 * A rate limit on one kind of line: at most per_s of them a second; the
 * others are counted, and once the second is over one line (msg, at
 * level warn or info, then the owner's pairs in who, then count=) says
 * how many were left out.  The figures behind the lines are in the
 * metrics, so a limit loses lines, never a count.  Used for refused
 * requests (one limit for all, below) and for each push subscriber's
 * failed delivery attempts (deliver.c).
 */
struct log_limit {
	const char		*msg;		/* the line saying how many */
	int			 per_s;		/* lines a second */
	int			 warn;		/* that line is a warning */
	char			 who[96];	/* its pairs ("sub=x"), or "" */
	long long		 start;		/* this second's start, ms */
	int			 written;	/* lines written in it */
	unsigned long long	 held;		/* lines left out in it */
};
#define LOG_LIMIT_INIT(msg, per_s, warn)	{ (msg), (per_s), (warn), "", \
	0, 0, 0 }
/* Set up l (who: a printf format for its pairs, or NULL). */
void		 log_limit_init(struct log_limit *l, const char *msg, int per_s,
		    int warn, const char *who, ...) ATTR_PRINTF(5, 6);
/* 1 when one more line may be written now; otherwise it is counted. */
int		 log_limit_ok(struct log_limit *l);
/*
 * Say how many lines l left out once its second is over (call it at
 * least once a second); with now, at once (its owner goes away).
 */
void		 log_limit_flush(struct log_limit *l, int now);
/*
 * Lines about refused requests (the client's doing, at info level) are at
 * most LOG_REFUSALS_PER_S a second: a token scan, a producer over its rate
 * or an outage must not flood the journal (the metrics count every one).
 * log_refused_ok: 1 when this one may be written; the others are counted,
 * and log_refused_flush, called at least once a second, says how many in
 * one line.  One log_limit.
 */
#define LOG_REFUSALS_PER_S	20
int		 log_refused_ok(void);
void		 log_refused_flush(void);
/*
 * Send libevent's own messages through here (event_set_log_callback):
 * logfmt, and at most a few lines a second so a failure that repeats on
 * every loop iteration cannot flood the journal.  Any thread.
 */
void		 log_libevent(int severity, const char *msg);
/* event_set_fatal_callback: log libevent's reason, then abort. */
noreturn void	 log_libevent_fatal(int err);

#endif
