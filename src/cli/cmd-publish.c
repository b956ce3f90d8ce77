/*
 * cmd-publish.c: treaty publish and treaty flush.  Main thread (the
 * client's loop).
 *
 * An event is sent as a structured-mode CloudEvent (JSON) to
 * POST /v1/events/<subject>; its data is written so that the relay stores
 * exactly the bytes given (cevent_gen_data).  With --batch, events are
 * read as JSON lines.  Whatever the source (one event, JSON lines, an
 * outbox's files), the events go through one queue and are sent in order,
 * as requests of up to --batch-size events of one subject within the
 * relay's body limit: one event alone in structured mode, several as a
 * batch (SPEC 14, application/cloudevents-batch+json).  Transient failures
 * (no answer, 429, 502, 503, 504) are retried with the same ids, which the
 * relay deduplicates, so a batch the relay stored in part is simply sent
 * again.  A batch refused whole without naming an event (its size: a
 * producer's burst, the relay's publishes in flight) is sent again in
 * halves; a refused event ends publish, and in flush sets its file aside.
 *
 * Outbox: with --outbox DIR the event, or every batch of --batch, is
 * written to a file there (outbox.c) before anything is sent, and a file
 * is removed once every event in it is stored.  A file holding an event
 * the relay refuses for good is renamed *.rejected and kept for a human.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>
#include <openssl/rand.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cevent.h"
#include "cli.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define DEFAULT_ATTEMPTS	8
#define MAX_EXTRA_ATTRS		16
#define CT_EVENT		"application/cloudevents+json"
#define CT_BATCH		"application/cloudevents-batch+json"

/*
 * Print the relay's 202: a single event's answer as it is, a batch's as
 * one {"id":..,"duplicate":..} line per event, in order.
 */
static void
send_print(int batch, const struct client_result *r)
{
	static const char	*rpath[] = { "results", NULL };
	yajl_val		 root = NULL, res;
	yajl_gen		 g;
	const unsigned char	*buf;
	char			*text;
	size_t			 i, n;

	if (batch) {
		text = xstrndup(r->body, r->bodylen);
		root = yajl_tree_parse(text, NULL, 0);
		free(text);
	}
	if (root == NULL || (res = yajl_tree_get(root, rpath, yajl_t_array))
	    == NULL) {
		fwrite(r->body, 1, r->bodylen, stdout);
		if (r->bodylen == 0 || r->body[r->bodylen - 1] != '\n')
			putchar('\n');
	} else {
		static const char	*idp[] = { "id", NULL };
		static const char	*dupp[] = { "duplicate", NULL };

		g = yajl_gen_alloc(NULL);
		for (i = 0; i < res->u.array.len; i++) {
			yajl_val id = yajl_tree_get(res->u.array.values[i],
			    idp, yajl_t_string);
			yajl_val dup = yajl_tree_get(res->u.array.values[i],
			    dupp, yajl_t_any);

			yajl_gen_map_open(g);
			json_gen_str(g, "id");
			json_gen_str(g, id != NULL ? YAJL_GET_STRING(id) : "");
			json_gen_str(g, "duplicate");
			yajl_gen_bool(g, dup != NULL && YAJL_IS_TRUE(dup));
			yajl_gen_map_close(g);
			if (yajl_gen_get_buf(g, &buf, &n) == yajl_gen_status_ok)
				printf("%.*s\n", (int)n, (const char *)buf);
			yajl_gen_clear(g);
			yajl_gen_reset(g, NULL);
		}
		yajl_gen_free(g);
	}
	yajl_tree_free(root);
	fflush(stdout);
}

/* The "index" of the relay's error body (SPEC 14), or -1. */
static long long
send_index(const struct client_result *r)
{
	static const char	*ipath[] = { "index", NULL };
	yajl_val		 root, v;
	char			*text;
	long long		 idx = -1;

	if (r->body == NULL || r->bodylen == 0 || r->bodylen > 65536)
		return -1;
	text = xstrndup(r->body, r->bodylen);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root != NULL && (v = yajl_tree_get(root, ipath, yajl_t_number))
	    != NULL && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0)
		idx = YAJL_GET_INTEGER(v);
	yajl_tree_free(root);
	return idx;
}


/*
 * Every publish goes through one queue: the events (one, the JSON lines of
 * --batch, or an outbox's files), sent in order as requests of up to
 * --batch-size events of one subject within the relay's body limit (one
 * event alone goes in structured mode, several as a batch).  An outbox
 * file is removed once every event in it is stored.
 */
struct qev {
	const char	*text;		/* structured-mode JSON */
	size_t		 len;
	const char	*subject;
	int		 file;		/* in q.f, or -1 */
	size_t		 line;		/* of --batch's input, or 0 */
	int		 done;		/* stored, or its file set aside */
};

struct qfile {
	char		*path;
	char		*subject;
	char		*text;		/* the body, which events point into */
	size_t		 left;		/* events not yet stored */
};

static struct {
	struct qev		*ev;
	size_t			 nev, evcap;
	struct qfile		*f;
	size_t			 nf, fcap;
	size_t			 limit;		/* events per request */
	size_t			 full;		/* --batch-size */
	char			*halved;	/* the subject limit was halved for */
	int			 flush;		/* flush: a refused event's file is
						 * set aside and the rest go on */
	/* The request in flight: its events, subject and body. */
	size_t			*req;
	size_t			 nreq;
	char			*subject;
	char			*body;
	size_t			 len;
	int			 batch;
	struct retry		 retry;
	struct client_req	*creq;
	int			 attempts;	/* allowed per request */
	size_t			 sent, rejected;	/* files */
	int			 rc;
} q;

/* Add an event. */
static void
q_add(const char *text, size_t len, const char *subject, int file,
    size_t line)
{
	if (q.nev == q.evcap) {
		q.evcap = q.evcap ? q.evcap * 2 : 64;
		q.ev = xrealloc(q.ev, q.evcap * sizeof(*q.ev));
	}
	q.ev[q.nev].text = text;
	q.ev[q.nev].len = len;
	q.ev[q.nev].subject = subject;
	q.ev[q.nev].file = file;
	q.ev[q.nev].line = line;
	q.ev[q.nev++].done = 0;
	if (file >= 0)
		q.f[file].left++;
}

/* Add an outbox file (path, subject and text now owned); its index. */
static int
q_add_file(char *path, char *subject, char *text)
{
	if (q.nf == q.fcap) {
		q.fcap = q.fcap ? q.fcap * 2 : 16;
		q.f = xrealloc(q.f, q.fcap * sizeof(*q.f));
	}
	q.f[q.nf].path = path;
	q.f[q.nf].subject = subject;
	q.f[q.nf].text = text;
	q.f[q.nf].left = 0;
	return (int)q.nf++;
}

/* Forget the request in flight. */
static void
q_req_clear(void)
{
	free(q.subject);
	free(q.body);
	q.subject = q.body = NULL;
	q.nreq = 0;
}

/* Free everything. */
static void
q_free(void)
{
	size_t	 i;

	q_req_clear();
	for (i = 0; i < q.nf; i++) {
		free(q.f[i].path);
		free(q.f[i].subject);
		free(q.f[i].text);
	}
	free(q.f);
	free(q.ev);
	free(q.req);
	free(q.halved);
}

/* The events after i not yet stored, for messages. */
static size_t
q_left(void)
{
	size_t	 i, n = 0;

	for (i = 0; i < q.nev; i++)
		n += !q.ev[i].done;
	return n;
}

/* Where an event came from, for messages: "" or " (line 7)". */
static const char *
q_where(const struct qev *e, char *buf, size_t len)
{
	buf[0] = '\0';
	if (e->line > 0)
		snprintf(buf, len, " (line %zu)", e->line);
	else if (e->file >= 0)
		snprintf(buf, len, " (%s)", q.f[e->file].path);
	return buf;
}

/* The end: what is left stays in the outbox. */
static void
q_end(int rc)
{
	if (rc != EXIT_OK && q_left() > 0 && q.nev > 1)
		log_warnx("not all events sent", "left=%zu", q_left());
	client_on_stop(NULL, NULL);
	client_exit(rc);
}

static void	q_send(void *);

/*
 * The next request: the first events not yet stored, of one subject, at
 * most q.limit of them and within the body limit.  Or the end.
 */
static void
q_next(void)
{
	size_t	 i, bytes = 2, o;

	q_req_clear();
	for (i = 0; i < q.nev && q.ev[i].done; i++)
		;
	if (i == q.nev) {
		q_end(q.rc);
		return;
	}
	q.subject = xstrdup(q.ev[i].subject);
	/* Halved for one subject's events (its producer's burst), not all. */
	if (q.halved != NULL && strcmp(q.halved, q.subject) != 0) {
		free(q.halved);
		q.halved = NULL;
		q.limit = q.full;
	}
	for (; i < q.nev && q.nreq < q.limit; i++) {
		if (q.ev[i].done)
			continue;
		if (strcmp(q.ev[i].subject, q.subject) != 0)
			break;
		if (q.nreq > 0 && bytes + q.ev[i].len + 1 > API_BODY_MAX)
			break;
		bytes += q.ev[i].len + 1;
		q.req[q.nreq++] = i;
	}
	q.batch = q.nreq > 1;
	if (!q.batch) {
		q.body = xstrndup(q.ev[q.req[0]].text, q.ev[q.req[0]].len);
		q.len = q.ev[q.req[0]].len;
	} else {
		q.body = xmalloc(bytes);
		q.body[0] = '[';
		for (i = 0, o = 1; i < q.nreq; i++) {
			memcpy(q.body + o, q.ev[q.req[i]].text,
			    q.ev[q.req[i]].len);
			o += q.ev[q.req[i]].len;
			q.body[o++] = ',';
		}
		q.body[o - 1] = ']';
		q.len = o;
	}
	retry_reset(&q.retry);
	q_send(NULL);
}

/* Every event of the request stored: files whose events all are go. */
static void
q_stored(void)
{
	struct qfile	*f;
	size_t		 i;

	for (i = 0; i < q.nreq; i++) {
		q.ev[q.req[i]].done = 1;
		if (q.ev[q.req[i]].file < 0)
			continue;
		f = &q.f[q.ev[q.req[i]].file];
		if (--f->left == 0) {
			if (unlink(f->path) == -1)
				log_warn("cannot remove the sent outbox file",
				    "file=%s", log_q(f->path));
			q.sent++;
		}
	}
}

/* Set an event's file aside (*.rejected), and all its events: 0 or -1. */
static int
q_reject(const struct qev *e)
{
	struct qfile	*f = &q.f[e->file];
	size_t		 i;

	if (outbox_reject(f->path) == -1)
		return -1;
	for (i = 0; i < q.nev; i++)
		if (q.ev[i].file == e->file)
			q.ev[i].done = 1;
	f->left = 0;
	q.rejected++;
	return 0;
}

/* The relay's answer to one attempt. */
static void
q_answer_cb(void *arg, const struct client_result *r)
{
	char		 what[96], detail[200], at[48] = "", where[300];
	const struct qev *e;
	long long	 idx;

	(void)arg;
	q.creq = NULL;
	if (r->status == 202) {
		send_print(q.batch, r);
		q_stored();
		q_next();
		return;
	}
	e = &q.ev[q.req[0]];
	if (client_transient(r)) {
		if ((int)q.retry.attempt + 1 < q.attempts) {
			retry_later(&q.retry, r);
			return;
		}
		cli_err("publish %s: still failing after %d attempts: %s%s%s%s",
		    q.subject, q.attempts, client_what(r, what, sizeof(what)),
		    e->file >= 0 ? "; kept in " : "",
		    e->file >= 0 ? q.f[e->file].path : "",
		    e->file >= 0 && q.ev[q.req[q.nreq - 1]].file != e->file ?
		    " and the files after it" : "");
		q_end(EXIT_TEMPFAIL);
		return;
	}
	if (r->status != 400 && r->status != 413 && r->status != 422) {
		/*
		 * The relay refuses us, not the event (a bad token, URL or
		 * relay: 401, 403, 404, 5xx, no such host): no reason to
		 * give up the outbox, whose files stay for a later flush.
		 */
		cli_err("publish %s refused: %s %s", q.subject,
		    client_what(r, what, sizeof(what)),
		    client_detail(r, detail, sizeof(detail)));
		if (e->file >= 0)
			cli_err("kept in %s", q.f[e->file].path);
		q_end(EXIT_FAILED);
		return;
	}
	idx = q.batch ? send_index(r) : 0;
	if (idx < 0 || idx >= (long long)q.nreq) {
		if (q.nreq > 1 && r->status == 413) {
			/*
			 * The batch as a whole (its size: the producer's
			 * burst, the relay's publishes in flight): smaller.
			 */
			q.limit = q.nreq / 2;
			free(q.halved);
			q.halved = xstrdup(q.subject);
			log_warnx("batch refused whole; sending smaller ones",
			    "status=%d events=%zu next=%zu", r->status,
			    q.nreq, q.limit);
			q_next();
			return;
		}
		idx = 0;
	}
	e = &q.ev[q.req[idx]];
	if (q.batch)
		snprintf(at, sizeof(at), " (the batch's event %lld)", idx);
	cli_err("publish %s refused: %s%s %s%s", q.subject,
	    client_what(r, what, sizeof(what)), at,
	    client_detail(r, detail, sizeof(detail)),
	    q_where(e, where, sizeof(where)));
	q.rc = EXIT_FAILED;
	/*
	 * An outbox file holding it is set aside; flush goes on with the
	 * others, publish stops (what it did not send stays in its outbox).
	 */
	if (e->file >= 0 && q_reject(e) == -1) {
		q_end(EXIT_FAILED);
		return;
	}
	if (!q.flush) {
		q_end(EXIT_FAILED);
		return;
	}
	q_next();
}

/* Send the request in flight (again). */
static void
q_send(void *arg)
{
	struct outbound_header	 h[1];
	char			*path;

	(void)arg;
	h[0].key = "Content-Type";
	h[0].value = q.batch ? CT_BATCH : CT_EVENT;
	path = xjoin(API_EVENTS_PATH, "", q.subject);
	q.creq = client_request(OUTBOUND_POST, path, h, 1, q.body, q.len,
	    q_answer_cb, NULL);
	free(path);
}

/* SIGINT/SIGTERM: stop waiting (what is in the outbox stays there). */
static void
q_stop_cb(void *arg)
{
	(void)arg;
	retry_cancel(&q.retry);
	if (q.creq != NULL) {
		client_cancel(q.creq);
		q.creq = NULL;
	}
	if (q.subject != NULL)
		log_warnx("interrupted; not sent", "subject=%s%s",
		    log_q(q.subject), q.nf > 0 ? " kept=outbox" : "");
	q_end(EXIT_TEMPFAIL);
}

/* Run the queue (after client_init); the exit status. */
static int
q_run(int attempts, size_t limit)
{
	int	 rc;

	q.req = xcalloc(limit, sizeof(*q.req));
	q.limit = q.full = limit;
	q.attempts = attempts;
	q.rc = EXIT_OK;
	retry_init(&q.retry, "publish", q_send, NULL);
	client_on_stop(q_stop_cb, NULL);
	q_next();
	rc = client_run();
	/* Before client_free frees the loop the timer belongs to. */
	retry_cancel(&q.retry);
	return rc;
}

/* --attempts: 1 to 1000, or -1 with a message. */
static long long
attempts_arg(const char *s)
{
	long long	 n = num_arg(s);

	if (n < 1 || n > 1000) {
		cli_err("--attempts: 1 to 1000");
		return -1;
	}
	return n;
}

/* --batch-size: 1 to API_BATCH_MAX, or -1 with a message. */
static long long
batch_size_arg(const char *s)
{
	long long	 n = num_arg(s);

	if (n < 1 || n > API_BATCH_MAX) {
		cli_err("--batch-size: 1 to " API_STR(API_BATCH_MAX));
		return -1;
	}
	return n;
}

/* A random version 4 UUID (the default event id). */
static int
uuid4(char out[37])
{
	unsigned char	 b[16];

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

/* The event's data: TEXT, @FILE or - (standard input). */
static char *
read_data(const char *arg, size_t *len)
{
	FILE	*f;
	char	*d;

	if (arg == NULL) {
		*len = 0;
		return xstrdup("");
	}
	if (strcmp(arg, "-") == 0)
		d = read_all(stdin, len);
	else if (arg[0] == '@') {
		if ((f = fopen(arg + 1, "r")) == NULL) {
			cli_err("%s: %s", arg + 1, strerror(errno));
			return NULL;
		}
		d = read_all(f, len);
		fclose(f);
	} else {
		*len = strlen(arg);
		return xstrdup(arg);
	}
	if (d == NULL)
		cli_err("cannot read the data from %s", arg);
	return d;
}

/* Add attribute name=value to ev (names lowercase, as the relay wants). */
static int
attr_set(struct cevent *ev, const char *name, const char *value)
{
	if (ev->nattrs == CEVENT_MAX_ATTRS)
		return -1;
	ev->attrs[ev->nattrs].name = xstrdup(name);
	ev->attrs[ev->nattrs].value = xstrdup(value);
	ev->nattrs++;
	return 0;
}

/*
 * Build the request body and check it with the relay's own parser, so a
 * bad event stops here with the relay's words.
 */
static char *
publish_body(struct cevent *ev, size_t *len)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	struct cevent		 check;
	char			*body = NULL;
	size_t			 n;

	cevent_gen_structured(g, ev);
	if (yajl_gen_get_buf(g, &buf, &n) == yajl_gen_status_ok) {
		if (cevent_from_structured(&check, (const char *)buf, n) == 0) {
			body = xstrndup((const char *)buf, n);
			*len = n;
		} else
			cli_err("not a valid event: %s", check.detail);
		cevent_free(&check);
	}
	yajl_gen_free(g);
	return body;
}

/*
 * The checks the relay makes of the subject and of a type against it
 * (422 there), so an outbox never keeps an event the relay refuses.
 * what names the type's origin in messages ("--type", "line 7: type").
 */
static int
check_subject(const char *subject)
{
	if (!treaty_subject_valid(subject)) {
		cli_err("--subject %s: not a suite subject "
		    "(evt|audit.scope.product.entity.verb)", subject);
		return -1;
	}
	return 0;
}

static int
check_type(const char *what, const char *type, const char *subject)
{
	if (!treaty_type_valid(type)) {
		cli_err("%s %s: not a suite type "
		    "(namespace.product.entity.verb.vN)", what, type);
		return -1;
	}
	if (!treaty_type_matches_subject(type, subject)) {
		cli_err("%s %s does not match --subject %s: the type's "
		    "product, entity and verb must be the subject's", what,
		    type, subject);
		return -1;
	}
	return 0;
}

/*
 * Read the JSON lines of --batch into the queue and check every event as
 * the relay will (its parser, the type against the subject), before
 * anything is sent or kept: 0, or -1 with a message naming the line.
 * *input holds the text the events point into.
 */
static int
publish_read_lines(const char *arg, const char *subject, char **input)
{
	struct cevent	 ev;
	FILE		*f;
	char		*in, what[48];
	size_t		 len, off, end, eol, line = 0;
	int		 rc = 0;

	if (strcmp(arg, "-") == 0)
		in = read_all(stdin, &len);
	else if ((f = fopen(arg, "r")) == NULL) {
		cli_err("%s: %s", arg, strerror(errno));
		return -1;
	} else {
		in = read_all(f, &len);
		fclose(f);
	}
	if ((*input = in) == NULL) {
		cli_err("cannot read the events from %s", arg);
		return -1;
	}
	for (off = 0; off < len && rc == 0; off = eol + 1) {
		const char	*nl = memchr(in + off, '\n', len - off);

		eol = nl != NULL ? (size_t)(nl - in) : len;
		line++;
		/* Blank lines are allowed (a trailing newline, spacing). */
		for (end = eol; end > off &&
		    memchr(" \t\r", in[end - 1], 3) != NULL; end--)
			;
		if (end == off)
			continue;
		if (end - off + 2 > API_BODY_MAX) {
			cli_err("line %zu: an event over "
			    API_STR(API_BODY_MAX_MIB) " MiB", line);
			rc = -1;
		} else if (cevent_from_structured(&ev, in + off,
		    end - off) == -1) {
			cli_err("line %zu: not a valid event: %s", line,
			    ev.detail);
			rc = -1;
		} else {
			snprintf(what, sizeof(what), "line %zu: type", line);
			rc = check_type(what, ev.type, subject);
		}
		cevent_free(&ev);
		if (rc == 0)
			q_add(in + off, end - off, subject, -1, line);
	}
	if (rc == 0 && q.nev == 0) {
		cli_err("%s: no events", arg);
		rc = -1;
	}
	return rc;
}

/*
 * --batch with --outbox: every batch written to the outbox before the
 * first is sent, so that whatever is not sent in the end is there for
 * flush.  0, or -1 with a message (what was written stays: it is valid).
 */
static int
publish_write_batches(const char *dir, const char *subject, size_t limit)
{
	size_t	 i = 0, k, n, bytes, o;
	char	*body, *path;
	int	 f;

	while (i < q.nev) {
		for (n = 0, bytes = 2; i + n < q.nev && n < limit; n++) {
			if (n > 0 && bytes + q.ev[i + n].len + 1 > API_BODY_MAX)
				break;
			bytes += q.ev[i + n].len + 1;
		}
		body = xmalloc(bytes);
		body[0] = '[';
		for (k = 0, o = 1; k < n; k++) {
			memcpy(body + o, q.ev[i + k].text, q.ev[i + k].len);
			o += q.ev[i + k].len;
			body[o++] = ',';
		}
		body[o - 1] = ']';
		path = outbox_write(dir, subject, body, o);
		free(body);
		if (path == NULL)
			return -1;
		f = q_add_file(path, NULL, NULL);
		for (k = 0; k < n; k++) {
			q.ev[i + k].file = f;
			q.f[f].left++;
		}
		i += n;
	}
	return 0;
}

static const struct option publish_opts[] = {
	{ "subject", required_argument, NULL, 's' },
	{ "type", required_argument, NULL, 't' },
	{ "source", required_argument, NULL, 'S' },
	{ "id", required_argument, NULL, 'i' },
	{ "data", required_argument, NULL, 'd' },
	{ "content-type", required_argument, NULL, 'c' },
	{ "time", required_argument, NULL, 'T' },
	{ "attr", required_argument, NULL, 'a' },
	{ "batch", required_argument, NULL, 'b' },
	{ "batch-size", required_argument, NULL, 'B' },
	{ "outbox", required_argument, NULL, 'o' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	CLIENT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

#define PUBLISH_USAGE							\
	"usage: treaty publish --subject SUBJECT --type TYPE --source SOURCE\n" \
	"  [--id ID] [--data TEXT|@FILE|-] [--content-type TYPE] [--time TIME]\n" \
	"  [--attr NAME=VALUE ...] [--outbox DIR] [--attempts N]\n"	\
	"       treaty publish --subject SUBJECT --batch FILE|- [--batch-size N]\n" \
	"  [--outbox DIR] [--attempts N]\n" CLIENT_USAGE

/* One event from the flags into *body; 0 or an exit status. */
static int
publish_one(const char *subject, const char *type, const char *source,
    const char *id, const char *data_arg, const char *ct, const char *tm,
    const char *const *extra, size_t nextra, char **body, size_t *len)
{
	struct cevent	 ev;
	char		 uuid[37], *data = NULL, *eq, *name;
	size_t		 datalen = 0, i;
	int		 rc = EXIT_FAILED;

	memset(&ev, 0, sizeof(ev));
	if (check_type("--type", type, subject) == -1)
		return EXIT_FAILED;
	if (id == NULL) {
		if (uuid4(uuid) == -1) {
			cli_err("no random bytes for an id");
			return EXIT_FAILED;
		}
		id = uuid;
	}
	if ((data = read_data(data_arg, &datalen)) == NULL)
		return EXIT_FAILED;
	attr_set(&ev, "specversion", "1.0");
	attr_set(&ev, "id", id);
	attr_set(&ev, "source", source);
	attr_set(&ev, "type", type);
	if (tm != NULL)
		attr_set(&ev, "time", tm);
	for (i = 0; i < nextra; i++) {
		if ((eq = strchr(extra[i], '=')) == NULL || eq == extra[i]) {
			cli_err("--attr %s: NAME=VALUE", extra[i]);
			goto out;
		}
		name = xstrndup(extra[i], (size_t)(eq - extra[i]));
		attr_set(&ev, name, eq + 1);
		free(name);
	}
	if (ct != NULL)
		ev.content_type = xstrdup(ct);
	ev.data = data;
	ev.datalen = datalen;
	if ((*body = publish_body(&ev, len)) != NULL)
		rc = 0;
out:
	cevent_free(&ev);
	free(data);
	return rc;
}

/* treaty publish: see man/treaty.1. */
int
cmd_publish(int argc, char **argv)
{
	const char	*subject = NULL, *type = NULL, *source = NULL;
	const char	*id = NULL, *data_arg = NULL, *ct = NULL, *tm = NULL;
	const char	*batch = NULL, *outbox = NULL, *extra[MAX_EXTRA_ATTRS];
	char		*input = NULL, *body = NULL, *path;
	size_t		 nextra = 0, len = 0;
	long long	 attempts = DEFAULT_ATTEMPTS, bs = API_BATCH_DEFAULT;
	int		 c, rc = EXIT_FAILED, single, f;

	memset(&q, 0, sizeof(q));
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", publish_opts)) != -1) {
		switch (c) {
		case 's': subject = optarg; break;
		case 't': type = optarg; break;
		case 'S': source = optarg; break;
		case 'i': id = optarg; break;
		case 'd': data_arg = optarg; break;
		case 'c': ct = optarg; break;
		case 'T': tm = optarg; break;
		case 'o': outbox = optarg; break;
		case 'b': batch = optarg; break;
		case 'B':
			if ((bs = batch_size_arg(optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'a':
			if (nextra == MAX_EXTRA_ATTRS) {
				cli_err("at most %d --attr", MAX_EXTRA_ATTRS);
				return EXIT_USAGE;
			}
			extra[nextra++] = optarg;
			break;
		case 'n':
			if ((attempts = attempts_arg(optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			puts(PUBLISH_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, PUBLISH_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	/* --batch takes the events whole: no flags that make one. */
	single = type != NULL || source != NULL || id != NULL ||
	    data_arg != NULL || ct != NULL || tm != NULL || nextra > 0;
	if (optind != argc || subject == NULL || (batch == NULL &&
	    (type == NULL || source == NULL)) || (batch != NULL && single)) {
		cli_err("%s", PUBLISH_USAGE);
		return EXIT_USAGE;
	}
	/* Validation failures stop here, before anything is sent or kept. */
	if (check_subject(subject) == -1)
		return EXIT_FAILED;
	if (batch != NULL) {
		if (publish_read_lines(batch, subject, &input) == -1)
			goto out;
	} else if ((rc = publish_one(subject, type, source, id, data_arg, ct,
	    tm, extra, nextra, &body, &len)) != 0)
		goto out;
	rc = EXIT_FAILED;
	if ((c = client_init()) != 0) {
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		goto out_client;
	}
	if (batch == NULL) {
		f = -1;
		if (outbox != NULL) {
			if ((path = outbox_write(outbox, subject, body, len)) ==
			    NULL)
				goto out_client;
			f = q_add_file(path, NULL, NULL);
		}
		q_add(body, len, subject, f, 0);
	} else if (outbox != NULL &&
	    publish_write_batches(outbox, subject, (size_t)bs) == -1)
		goto out_client;
	rc = q_run((int)attempts, (size_t)bs);
out_client:
	client_free();
out:
	q_free();
	free(input);
	free(body);
	return rc;
}

/* Only the outbox's event files. */
static int
flush_filter(const struct dirent *d)
{
	size_t	 n = strlen(d->d_name), k = strlen(OUTBOX_SUFFIX);

	return d->d_name[0] != '.' && n > k &&
	    strcmp(d->d_name + n - k, OUTBOX_SUFFIX) == 0;
}

/* 1 when an entry's body is a batch (a JSON array). */
static int
body_is_batch(const char *body, size_t len)
{
	size_t	 i = 0;

	while (i < len && memchr(" \t\r\n", body[i], 4) != NULL)
		i++;
	return i < len && body[i] == '[';
}

/*
 * An outbox entry as publish writes it: a suite subject, then one event or
 * a batch of 1 to API_BATCH_MAX, each event valid for the relay's parser
 * (so that the relay's "index" names the event flush thinks it does).
 * The number of events, with their spans in el for a batch; or 0 after
 * saying why.
 */
static int
flush_check(const char *path, const char *subject, const char *body,
    size_t len, struct json_span *el)
{
	struct cevent	 ev;
	int		 n = 1, k, batch = body_is_batch(body, len);

	if (!treaty_subject_valid(subject)) {
		cli_err("%s: not a suite subject on its first line", path);
		return 0;
	}
	if (batch && (n = json_array_split(body, len, el, API_BATCH_MAX)) <= 0) {
		cli_err("%s: not a batch of 1 to " API_STR(API_BATCH_MAX)
		    " events", path);
		return 0;
	}
	for (k = 0; k < n; k++) {
		if (cevent_from_structured(&ev, batch ? body + el[k].off : body,
		    batch ? el[k].len : len) == -1) {
			cli_err("%s: event %d: not a valid event: %s", path, k,
			    ev.detail);
			cevent_free(&ev);
			return 0;
		}
		cevent_free(&ev);
	}
	return n;
}

static const struct option flush_opts[] = {
	{ "outbox", required_argument, NULL, 'o' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "batch-size", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	CLIENT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

#define FLUSH_USAGE	"usage: treaty flush --outbox DIR [--batch-size N] " \
	"[--attempts N]\n" CLIENT_USAGE

/* treaty flush: see man/treaty.1. */
int
cmd_flush(int argc, char **argv)
{
	static struct json_span	 el[API_BATCH_MAX];
	struct dirent		**names = NULL;
	const char		*dir = NULL;
	char			*path, *subject, *body;
	size_t			 len;
	long long		 attempts = DEFAULT_ATTEMPTS;
	long long		 bs = API_BATCH_DEFAULT;
	size_t			 unread = 0;
	int			 c, i, k, n = 0, r, f, rc = EXIT_OK;

	memset(&q, 0, sizeof(q));
	q.flush = 1;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", flush_opts)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'n':
			if ((attempts = attempts_arg(optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'B':
			if ((bs = batch_size_arg(optarg)) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			puts(FLUSH_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, FLUSH_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	if (optind != argc || dir == NULL) {
		cli_err("%s", FLUSH_USAGE);
		return EXIT_USAGE;
	}
	if (outbox_check(dir) == -1)
		return EXIT_FAILED;
	/* Names start with the time: alphabetical is oldest first. */
	if ((n = scandir(dir, &names, flush_filter, alphasort)) == -1) {
		cli_err("%s: %s", dir, strerror(errno));
		return EXIT_FAILED;
	}
	if ((c = client_init()) != 0) {
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		goto out;
	}
	for (i = 0; i < n; i++) {
		path = xjoin(dir, "/", names[i]->d_name);
		if ((r = outbox_read(path, &subject, &body, &len)) == 1 ||
		    r == -1) {
			/* Gone (sent meanwhile by another flush), or unread. */
			if (r == -1) {
				rc = EXIT_FAILED;
				unread++;
			}
			free(path);
			continue;
		}
		f = q_add_file(path, subject, body);
		if (r == 2 || (r = flush_check(path, subject, body, len, el))
		    <= 0) {
			/* Not what publish writes: for a human. */
			rc = EXIT_FAILED;
			if (outbox_reject(path) == 0)
				q.rejected++;
			else
				unread++;
			continue;
		}
		if (!body_is_batch(body, len))
			q_add(body, len, subject, f, 0);
		else
			for (k = 0; k < r; k++)
				q_add(body + el[k].off, el[k].len, subject, f,
				    0);
	}
	c = q_run((int)attempts, (size_t)bs);
	if (c != EXIT_OK || rc == EXIT_OK)
		rc = c;
	log_info("outbox flushed", "sent=%zu rejected=%zu left=%zu", q.sent,
	    q.rejected, q.nf - q.sent - q.rejected + unread);
out:
	client_free();
	q_free();
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}
