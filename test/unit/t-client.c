/*
 * t-client: what the client takes from a relay's answer (src/cli/client.c):
 * the detail of a JSON error body, with the server's control characters
 * made harmless before they reach a terminal or a log line, and the
 * reason a command ends with.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int
main(void)
{
	static const struct t_case cases[] = {
		{ "the detail of an error body", t_detail },
		{ "the server's control characters become '?'", t_controls },
		{ "why a request failed: status and detail", t_why },
	};

	return t_run("client", cases, T_NCASES(cases)) ? 1 : 0;
}
