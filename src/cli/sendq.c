/*
 * sendq.c: the queue of events that treaty publish and treaty flush send
 * (see cli.h).  Main thread (the client's loop).
 *
 * Events go in order as requests of up to --batch-size events of one
 * subject within the relay's body limit: one event alone in structured
 * mode, several as a batch (SPEC 14).  Transient failures are retried
 * with the same ids, which the relay deduplicates, so a batch the relay
 * stored in part is simply sent again.  A batch refused whole with 413 and
 * no index (its size against a producer's burst or the relay's publishes
 * in flight) is sent again in halves; a refused event ends publish, and in
 * flush sets its outbox file aside.  A file is removed once every event in
 * it is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cli.h"
#include "json.h"
#include "log.h"
#include "util.h"

struct sendq	 sendq;

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

/* Room for one more of n items of size bytes in *arr (capacity *cap). */
static void *
sendq_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : first;
	return xrealloc(arr, *cap * size);
}

/* Add an event. */
void
sendq_add(const char *text, size_t len, const char *subject, int file,
    size_t line)
{
	sendq.ev = sendq_grow(sendq.ev, sendq.nev, &sendq.evcap,
	    sizeof(*sendq.ev), 64);
	sendq.ev[sendq.nev++] = (struct qev){ text, len, subject, file, line,
	    0 };
	if (file >= 0)
		sendq.f[file].left++;
}

/* Add an outbox file (path, subject and text now owned); its index. */
int
sendq_add_file(char *path, char *subject, char *text)
{
	sendq.f = sendq_grow(sendq.f, sendq.nf, &sendq.fcap, sizeof(*sendq.f),
	    16);
	sendq.f[sendq.nf] = (struct qfile){ path, subject, text, 0 };
	return (int)sendq.nf++;
}

/* Forget the request in flight. */
static void
sendq_req_clear(void)
{
	free(sendq.subject);
	free(sendq.body);
	sendq.subject = sendq.body = NULL;
	sendq.nreq = 0;
}

/* Free everything. */
void
sendq_free(void)
{
	size_t	 i;

	sendq_req_clear();
	for (i = 0; i < sendq.nf; i++) {
		free(sendq.f[i].path);
		free(sendq.f[i].subject);
		free(sendq.f[i].text);
	}
	free(sendq.f);
	free(sendq.ev);
	free(sendq.req);
	free(sendq.halved);
}

/* The events after i not yet stored, for messages. */
static size_t
sendq_left(void)
{
	size_t	 i, n = 0;

	for (i = 0; i < sendq.nev; i++)
		n += !sendq.ev[i].done;
	return n;
}

/* Outbox files other than except with events not yet stored. */
static size_t
sendq_files_left(int except)
{
	size_t	 i, n = 0;

	for (i = 0; i < sendq.nf; i++)
		n += (int)i != except && sendq.f[i].left > 0;
	return n;
}

/* Where an event came from, for messages: "" or " (line 7)". */
static const char *
sendq_where(const struct qev *e, char *buf, size_t len)
{
	buf[0] = '\0';
	if (e->line > 0)
		snprintf(buf, len, " (line %zu)", e->line);
	else if (e->file >= 0)
		snprintf(buf, len, " (%s)", sendq.f[e->file].path);
	return buf;
}

/* The end: what is left stays in the outbox. */
static void
sendq_end(int rc)
{
	if (rc != EXIT_OK && sendq_left() > 0 && sendq.nev > 1)
		log_warnx("not all events sent", "left=%zu", sendq_left());
	client_on_stop(NULL, NULL);
	client_exit(rc);
}

static void	sendq_send(void *);

/*
 * The next request: the first events not yet stored, of one subject, at
 * most sendq.limit of them and within the body limit.  Or the end.
 */
static void
sendq_next(void)
{
	size_t	 i, bytes = 2, o;

	sendq_req_clear();
	for (i = 0; i < sendq.nev && sendq.ev[i].done; i++)
		;
	if (i == sendq.nev) {
		sendq_end(sendq.rc);
		return;
	}
	sendq.subject = xstrdup(sendq.ev[i].subject);
	/* Halved for one subject's events (its producer's burst), not all. */
	if (sendq.halved != NULL && strcmp(sendq.halved, sendq.subject) != 0) {
		free(sendq.halved);
		sendq.halved = NULL;
		sendq.limit = sendq.full;
	}
	for (; i < sendq.nev && sendq.nreq < sendq.limit; i++) {
		if (sendq.ev[i].done)
			continue;
		if (strcmp(sendq.ev[i].subject, sendq.subject) != 0)
			break;
		if (sendq.nreq > 0 && bytes + sendq.ev[i].len + 1 > API_BODY_MAX)
			break;
		bytes += sendq.ev[i].len + 1;
		sendq.req[sendq.nreq++] = i;
	}
	sendq.batch = sendq.nreq > 1;
	if (!sendq.batch) {
		sendq.body = xstrndup(sendq.ev[sendq.req[0]].text, sendq.ev[sendq.req[0]].len);
		sendq.len = sendq.ev[sendq.req[0]].len;
	} else {
		sendq.body = xmalloc(bytes);
		sendq.body[0] = '[';
		for (i = 0, o = 1; i < sendq.nreq; i++) {
			memcpy(sendq.body + o, sendq.ev[sendq.req[i]].text,
			    sendq.ev[sendq.req[i]].len);
			o += sendq.ev[sendq.req[i]].len;
			sendq.body[o++] = ',';
		}
		sendq.body[o - 1] = ']';
		sendq.len = o;
	}
	retry_reset(&sendq.retry);
	sendq_send(NULL);
}

/* Every event of the request stored: files whose events all are go. */
static void
sendq_stored(void)
{
	struct qfile	*f;
	size_t		 i;

	for (i = 0; i < sendq.nreq; i++) {
		sendq.ev[sendq.req[i]].done = 1;
		if (sendq.ev[sendq.req[i]].file < 0)
			continue;
		f = &sendq.f[sendq.ev[sendq.req[i]].file];
		if (--f->left == 0) {
			if (unlink(f->path) == -1)
				log_warn("cannot remove the sent outbox file",
				    "file=%s", log_q(f->path));
			sendq.sent++;
		}
	}
}

/* Set an event's file aside (*.rejected), and all its events: 0 or -1. */
static int
sendq_reject(const struct qev *e)
{
	struct qfile	*f = &sendq.f[e->file];
	size_t		 i;

	if (outbox_reject(f->path) == -1)
		return -1;
	for (i = 0; i < sendq.nev; i++)
		if (sendq.ev[i].file == e->file)
			sendq.ev[i].done = 1;
	f->left = 0;
	sendq.rejected++;
	return 0;
}

/* The relay's answer to one attempt. */
static void
sendq_answer_cb(void *arg, const struct client_result *r)
{
	char		 why[768], detail[200], at[48] = "", where[300];
	char		 more[48];
	const struct qev *e;
	long long	 idx;
	size_t		 others;

	(void)arg;
	sendq.creq = NULL;
	if (r->status == 202) {
		send_print(sendq.batch, r);
		sendq_stored();
		sendq_next();
		return;
	}
	e = &sendq.ev[sendq.req[0]];
	if (client_transient(r)) {
		if ((int)sendq.retry.attempt + 1 < sendq.attempts) {
			retry_later(&sendq.retry, r);
			return;
		}
		others = e->file >= 0 ? sendq_files_left(e->file) : 0;
		snprintf(more, sizeof(more), " and %zu other file%s", others,
		    others == 1 ? "" : "s");
		cli_err("publish %s: still failing after %d attempts: %s%s%s%s",
		    sendq.subject, sendq.attempts, client_why(r, why, sizeof(why)),
		    e->file >= 0 ? "; kept in " : "",
		    e->file >= 0 ? sendq.f[e->file].path : "",
		    others > 0 ? more : "");
		sendq_end(EXIT_TEMPFAIL);
		return;
	}
	if (r->status != 400 && r->status != 413 && r->status != 422) {
		/*
		 * The relay refuses us, not the event (a bad token, URL or
		 * relay: 401, 403, 404, 5xx, no such host, a certificate not
		 * trusted): no reason to give up the outbox, whose files stay
		 * for a later flush.
		 */
		cli_err("publish %s%s: %s", sendq.subject, r->status != 0 ?
		    " refused" : "", client_why(r, why, sizeof(why)));
		if (e->file >= 0)
			cli_err("kept in %s", sendq.f[e->file].path);
		sendq_end(EXIT_FAILED);
		return;
	}
	idx = sendq.batch ? send_index(r) : 0;
	if (idx < 0 || idx >= (long long)sendq.nreq) {
		if (sendq.nreq > 1 && r->status == 413) {
			/*
			 * The batch as a whole (its size: the producer's
			 * burst, the relay's publishes in flight): smaller.
			 */
			sendq.limit = sendq.nreq / 2;
			free(sendq.halved);
			sendq.halved = xstrdup(sendq.subject);
			log_warnx("batch refused whole; sending smaller ones",
			    "status=%d events=%zu next=%zu", r->status,
			    sendq.nreq, sendq.limit);
			sendq_next();
			return;
		}
		idx = 0;
	}
	e = &sendq.ev[sendq.req[idx]];
	if (sendq.batch)
		snprintf(at, sizeof(at), " (the batch's event %lld)", idx);
	client_detail(r, detail, sizeof(detail));
	cli_err("publish %s refused: %d%s%s%s%s", sendq.subject, r->status, at,
	    detail[0] != '\0' ? ": " : "", detail, sendq_where(e, where,
	    sizeof(where)));
	sendq.rc = EXIT_FAILED;
	/*
	 * An outbox file holding it is set aside; flush goes on with the
	 * others, publish stops (what it did not send stays in its outbox).
	 */
	if (e->file >= 0 && sendq_reject(e) == -1) {
		sendq_end(EXIT_FAILED);
		return;
	}
	if (!sendq.flush) {
		sendq_end(EXIT_FAILED);
		return;
	}
	sendq_next();
}

/*
 * A body over the relay's limit, answered as the relay would, without
 * sending it: a relay answers 413 from the request's head and closes
 * after a bounded linger, so a client still writing a large body most
 * often saw the connection closed, not the answer, and retried.
 */
static void
sendq_too_large_cb(evutil_socket_t fd, short ev, void *arg)
{
	static const char	 body[] = "{\"error\":\"too_large\",\"detail\":"
	    "\"the body is over " API_STR(API_BODY_MAX_MIB) " MiB, the relay's "
	    "limit (not sent)\"}";
	struct client_result	 r = { .status = 413, .body = body,
	    .bodylen = sizeof(body) - 1 };

	(void)fd;
	(void)ev;
	(void)arg;
	sendq_answer_cb(NULL, &r);
}

/* Send the request in flight (again). */
static void
sendq_send(void *arg)
{
	struct outbound_header	 h[1];
	char			*path;

	(void)arg;
	if (sendq.len > API_BODY_MAX) {
		/* On the loop, as an answer would come. */
		event_base_once(client_base(), -1, EV_TIMEOUT,
		    sendq_too_large_cb, NULL, NULL);
		return;
	}
	h[0].key = "Content-Type";
	h[0].value = sendq.batch ? CT_BATCH : CT_EVENT;
	path = xjoin(API_EVENTS_PATH, "", sendq.subject);
	sendq.creq = client_request(OUTBOUND_POST, path, h, 1, sendq.body, sendq.len,
	    sendq_answer_cb, NULL);
	free(path);
}

/* SIGINT/SIGTERM: stop waiting (what is in the outbox stays there). */
static void
sendq_stop_cb(void *arg)
{
	(void)arg;
	retry_cancel(&sendq.retry);
	if (sendq.creq != NULL) {
		client_cancel(sendq.creq);
		sendq.creq = NULL;
	}
	if (sendq.subject != NULL)
		log_warnx("interrupted; not sent", "subject=%s%s",
		    log_q(sendq.subject), sendq.nf > 0 ? " kept=outbox" : "");
	sendq_end(EXIT_TEMPFAIL);
}

/* Run the queue (after client_init); the exit status. */
int
sendq_run(int attempts, size_t limit)
{
	int	 rc;

	sendq.req = xcalloc(limit, sizeof(*sendq.req));
	sendq.limit = sendq.full = limit;
	sendq.attempts = attempts;
	sendq.rc = EXIT_OK;
	retry_init(&sendq.retry, "publish", sendq_send, NULL);
	client_on_stop(sendq_stop_cb, NULL);
	sendq_next();
	rc = client_run();
	/* Before client_free frees the loop the timer belongs to. */
	retry_cancel(&sendq.retry);
	return rc;
}

