/*
 * t-client: what the client takes from a relay's answer (src/cli/client.c):
 * the detail of a JSON error body, with the server's control characters
 * made harmless before they reach a terminal or a log line, and the
 * reason a command ends with; the admin commands' --since.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "treaty.h"
#include "harness.h"
#include "../../src/cli/cli.h"

/* main.c's, which the unit tests do not link. */
void
cli_err(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *
detail_of(const char *body, char *buf, size_t len)
{
	struct client_result	 r;

	memset(&r, 0, sizeof(r));
	r.status = 401;
	r.body = body;
	r.bodylen = strlen(body);
	return client_detail(&r, buf, len);
}

/* The detail, else the error, else nothing. */
static void
t_detail(void)
{
	char	 b[256];

	T_EQ_STR(detail_of("{\"error\":\"x\",\"detail\":\"the reason\"}", b,
	    sizeof(b)), "the reason");
	T_EQ_STR(detail_of("{\"error\":\"forbidden\"}", b, sizeof(b)),
	    "forbidden");
	T_EQ_STR(detail_of("not json", b, sizeof(b)), "");
	/* UTF-8 outside the controls stays. */
	T_EQ_STR(detail_of("{\"detail\":\"caf\\u00e9 \\u20ac\"}", b,
	    sizeof(b)), "caf\xc3\xa9 \xe2\x82\xac");
}

/* Escapes, newlines, DEL and C1 (CSI as UTF-8) become '?'. */
static void
t_controls(void)
{
	char	 b[256];

	T_EQ_STR(detail_of("{\"detail\":\"\\u001b[2J\\u001b[31mFAKE\\n"
	    "level=error msg=\\\"forged\\\"\"}", b, sizeof(b)),
	    "?[2J?[31mFAKE?level=error msg=\"forged\"");
	T_EQ_STR(detail_of("{\"detail\":\"a\\u007fb\\u009b1mc\\r\\td\"}", b,
	    sizeof(b)), "a?b??1mc??d");
}

/*
 * What a command ends with: the status and the relay's detail; without
 * an answer, the error (the URL, unknown before client_init, left out).
 */
static void
t_why(void)
{
	struct client_result	 r;
	const char		*body = "{\"error\":\"publish_failed\","
	    "\"detail\":\"JetStream is not available\"}";
	char			 b[256];

	memset(&r, 0, sizeof(r));
	r.status = 503;
	r.body = body;
	r.bodylen = strlen(body);
	T_EQ_STR(client_why(&r, b, sizeof(b)),
	    "503: JetStream is not available");
	r.body = "<html>";
	r.bodylen = 6;
	T_EQ_STR(client_why(&r, b, sizeof(b)), "503");
	memset(&r, 0, sizeof(r));
	r.error = "connection refused";
	T_EQ_STR(client_why(&r, b, sizeof(b)),
	    "connection refused at the relay");
}

/* seconds before now that since_arg's answer for arg is, or -1. */
static long long
since_ago(const char *arg)
{
	char		 b[TREATY_RFC3339_MAX];
	int64_t		 sec;
	long		 ns;

	if (since_arg(arg, b, sizeof(b)) == -1 ||
	    treaty_rfc3339_parse(b, &sec, &ns) != TREATY_OK)
		return -1;
	return (long long)time(NULL) - sec;
}

/* --since: RFC 3339 as it is, or a number and a unit before now. */
static void
t_since(void)
{
	char	 b[TREATY_RFC3339_MAX];
	long long ago;

	T_EQ_INT(since_arg("2026-12-01T03:00:00+01:00", b, sizeof(b)), 0);
	T_EQ_STR(b, "2026-12-01T03:00:00+01:00");
	/* Within a second of the clock read here (the call reads it too). */
	ago = since_ago("30m");
	T_ASSERT(ago >= 1800 && ago <= 1801);
	ago = since_ago("2h");
	T_ASSERT(ago >= 7200 && ago <= 7201);
	ago = since_ago("7d");
	T_ASSERT(ago >= 7 * 86400 && ago <= 7 * 86400 + 1);
	ago = since_ago("90s");
	T_ASSERT(ago >= 90 && ago <= 91);
	T_EQ_INT(since_arg("2h", b, sizeof(b)), 0);
	T_ASSERT(treaty_rfc3339_valid(b));
	T_EQ_INT(since_arg("yesterday", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("2", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("h", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("2w", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("2hh", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("1h30m", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("-2h", b, sizeof(b)), -1);
	T_EQ_INT(since_arg(" 2h", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("", b, sizeof(b)), -1);
	/* Not before 1970; more digits than it takes to get there. */
	T_EQ_INT(since_arg("20000d", b, sizeof(b)), 0);
	T_EQ_INT(since_arg("30000d", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("999999999999d", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("0000000000001h", b, sizeof(b)), -1);
	T_EQ_INT(since_arg("99999999999999999999s", b, sizeof(b)), -1);
}

int
main(void)
{
	static const struct t_case cases[] = {
		{ "the detail of an error body", t_detail },
		{ "the server's control characters become '?'", t_controls },
		{ "why a request failed: status and detail", t_why },
		{ "--since: RFC 3339, or a time before now", t_since },
	};

	return t_run("client", cases, T_NCASES(cases)) ? 1 : 0;
}
