/*
 * log.c: logfmt lines on stderr.  Loop thread only (log_q uses static
 * buffers); nats.c threads never log, they post to the bridge instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <event2/event.h>

#include "treaty.h"
#include "log.h"
#include "util.h"

int		 log_level_debug;	/* log.h: log_debug */
static enum {
	STAMP_NONE,		/* the client: plain lines */
	STAMP_TIME,		/* time=<RFC 3339, ms> first */
	STAMP_JOURNAL		/* <priority> first, for journald */
}		 log_stamp;

/*
 * The relay's lines (SPEC 11): under systemd's journal a syslog priority
 * (<3> .. <7>, so journalctl -p works), otherwise the time.  The journal is
 * the one JOURNAL_STREAM names, and only when stderr still is that stream
 * (not redirected by whoever started us).
 */
void
log_use_stamps(void)
{
	const char		*js = getenv("JOURNAL_STREAM");
	unsigned long long	 dev, ino;
	struct stat		 st;

	log_stamp = STAMP_TIME;
	if (js != NULL && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
	    fstat(2, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino)
		log_stamp = STAMP_JOURNAL;
}

/* The line's prefix for its level into buf: "", "<N>" or "time=... ". */
static int
log_prefix(char *buf, size_t len, const char *level)
{
	struct timespec	 ts;
	char		 t[TREATY_RFC3339_MAX];
	int		 pri;

	if (log_stamp == STAMP_JOURNAL) {
		pri = level[0] == 'e' ? 3 : level[0] == 'w' ? 4 :
		    level[0] == 'd' ? 7 : 6;
		return snprintf(buf, len, "<%d>", pri);
	}
	if (log_stamp == STAMP_NONE)
		return buf[0] = '\0', 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (treaty_rfc3339_format(ts.tv_sec, ts.tv_nsec, 3, t, sizeof(t)) < 0)
		t[0] = '\0';
	return snprintf(buf, len, "time=%s ", t);
}

/* Set whether debug lines are written. */
void
log_init(int verbose)
{
	log_level_debug = verbose;
}

/* Whether debug lines are written. */
int
log_verbose(void)
{
	return log_level_debug;
}

/* Write one line: level, quoted msg, the caller's pairs, optional err. */
static void
log_vline(const char *level, const char *msg, const char *err,
    const char *fmt, va_list ap)
{
	char	 buf[2048];
	int	 n;

	n = log_prefix(buf, sizeof(buf), level);
	n += snprintf(buf + n, sizeof(buf) - n, "level=%s msg=%s", level,
	    log_q(msg));
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	if (fmt != NULL && fmt[0] != '\0' && (size_t)n < sizeof(buf) - 2) {
		buf[n++] = ' ';
		int m = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
		if (m > 0)
			n += m;
		if ((size_t)n >= sizeof(buf))
			n = (int)sizeof(buf) - 1;
	}
	if (err != NULL)
		n += snprintf(buf + n, sizeof(buf) - n, " err=%s", log_q(err));
	if ((size_t)n >= sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* One write per line so lines from a crash-restart never interleave. */
	fwrite(buf, 1, n, stderr);
	fflush(stderr);
}

#define LOG_FN(name, level, cond)					\
void									\
name(const char *msg, const char *fmt, ...)				\
{									\
	va_list	 ap;							\
	if (!(cond))							\
		return;							\
	va_start(ap, fmt);						\
	log_vline(level, msg, NULL, fmt, ap);				\
	va_end(ap);							\
}

LOG_FN(log_info, "info", 1)
LOG_FN(log_debug_line, "debug", log_level_debug)
LOG_FN(log_warnx, "warn", 1)
LOG_FN(log_errorx, "error", 1)

/* A warning with err="<strerror(errno)>" appended. */
void
log_warn(const char *msg, const char *fmt, ...)
{
	va_list	 ap;
	char	 err[128];
	int	 saved = errno;

	snprintf(err, sizeof(err), "%s", strerror(saved));
	va_start(ap, fmt);
	log_vline("warn", msg, err, fmt, ap);
	va_end(ap);
}

/* Log an error and exit 1; start-up failures and broken invariants only. */
noreturn void
fatalx(const char *msg, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vline("error", msg, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Set up a limit; see log.h. */
void
log_limit_init(struct log_limit *l, const char *msg, int per_s, int warn,
    const char *who, ...)
{
	va_list	 ap;

	memset(l, 0, sizeof(*l));
	l->msg = msg;
	l->per_s = per_s;
	l->warn = warn;
	if (who != NULL) {
		va_start(ap, who);
		vsnprintf(l->who, sizeof(l->who), who, ap);
		va_end(ap);
	}
}

/* Say what a limit left out; see log.h. */
void
log_limit_flush(struct log_limit *l, int now)
{
	long long	 t = now_ms();

	if (!now && t - l->start < MS_PER_S)
		return;
	if (l->held > 0 && l->warn)
		log_warnx(l->msg, "%s%scount=%llu window_ms=%lld limit=%d",
		    l->who, l->who[0] != '\0' ? " " : "", l->held, MS_PER_S,
		    l->per_s);
	else if (l->held > 0)
		log_info(l->msg, "%s%scount=%llu window_ms=%lld limit=%d",
		    l->who, l->who[0] != '\0' ? " " : "", l->held, MS_PER_S,
		    l->per_s);
	l->start = t;
	l->written = 0;
	l->held = 0;
}

/* One more line under a limit, or counted; see log.h. */
int
log_limit_ok(struct log_limit *l)
{
	log_limit_flush(l, 0);
	if (l->written < l->per_s) {
		l->written++;
		return 1;
	}
	l->held++;
	return 0;
}

/* Refusal lines: one limit for every route and the door. */
static struct log_limit	 refusals = LOG_LIMIT_INIT(
    "refused requests not logged", LOG_REFUSALS_PER_S, 0);

/* See log.h. */
void
log_refused_flush(void)
{
	log_limit_flush(&refusals, 0);
}

/* See log.h. */
int
log_refused_ok(void)
{
	return log_limit_ok(&refusals);
}

/* Quote a logfmt value when it needs it. */
const char *
log_q(const char *s)
{
	static char	 bufs[8][256];
	static unsigned	 next;
	char		*b = bufs[next++ % 8];
	size_t		 i, o = 0, lim = sizeof(bufs[0]) - 6;
	int		 bare = 1;

	if (s == NULL)
		return "-";
	if (s[0] == '\0')
		return "\"\"";
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f) {
			bare = 0;
			break;
		}
	}
	if (bare && i < lim)
		return s;
	b[o++] = '"';
	for (i = 0; s[i] != '\0' && o < lim; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			b[o++] = '\\';
			b[o++] = c;
		} else if (c < ' ' || c == 0x7f) {
			o += snprintf(b + o, 6, "\\x%02x", c);
		} else
			b[o++] = c;
	}
	b[o++] = '"';
	b[o] = '\0';
	return b;
}

/* libevent's messages, as logfmt lines, rate-limited. */
/* libevent's last error message, kept for log_libevent_fatal. */
static char	 log_libevent_err[256];

void
log_libevent(int severity, const char *msg)
{
	static time_t	 window;
	static int	 lines, dropped;
	char		 buf[512], q[400], pre[48];
	const char	*level;
	time_t		 now = time(NULL);
	size_t		 i, o = 0;
	int		 n;

	if (severity == EVENT_LOG_DEBUG)
		return;
	if (severity == EVENT_LOG_ERR)
		snprintf(log_libevent_err, sizeof(log_libevent_err), "%s", msg);
	/* Racy across threads by design: it only bounds the volume. */
	if (now != window) {
		if (dropped > 0) {
			log_prefix(pre, sizeof(pre), "warn");
			n = snprintf(buf, sizeof(buf), "%slevel=warn msg=\"libevent "
			    "messages dropped\" count=%d\n", pre, dropped);
			fwrite(buf, 1, (size_t)n, stderr);
		}
		window = now;
		lines = 0;
		dropped = 0;
	}
	if (++lines > 5) {
		dropped++;
		return;
	}
	level = severity == EVENT_LOG_ERR ? "error" :
	    severity == EVENT_LOG_WARN ? "warn" : "info";
	for (i = 0; msg[i] != '\0' && o < sizeof(q) - 3; i++) {
		unsigned char c = (unsigned char)msg[i];

		if (c == '"' || c == '\\')
			q[o++] = '\\';
		q[o++] = c < ' ' || c == 0x7f ? '?' : (char)c;
	}
	q[o] = '\0';
	log_prefix(pre, sizeof(pre), level);
	n = snprintf(buf, sizeof(buf), "%slevel=%s msg=\"libevent\" "
	    "detail=\"%s\"\n", pre, level, q);
	if (n > 0)
		fwrite(buf, 1, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1, stderr);
	fflush(stderr);
}

/*
 * libevent's fatal callback: libevent 2.1 exits the process on a broken
 * invariant (event_errx, after its message went to log_libevent, which
 * may have dropped it under its rate).  Say why, whatever the rate, then
 * abort for a core: this is a defect, and the unit restarts the process.
 */
noreturn void
log_libevent_fatal(int err)
{
	log_errorx("libevent ended the process", "err=%d detail=%s", err,
	    log_q(log_libevent_err));
	fflush(stderr);
	abort();
}
