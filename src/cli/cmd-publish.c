/*
 * cmd-publish.c: treaty publish and treaty flush.  Main thread (the
 * client's loop).
 *
 * An event is sent as a structured-mode CloudEvent (JSON) to
 * POST /v1/events/<subject>; its data is written so that the relay stores
 * exactly the bytes given (cevent_gen_data).  With --batch, events are
 * read as JSON lines and sent in batches (SPEC 14: a JSON array,
 * application/cloudevents-batch+json), one batch after another.
 * Transient failures (no answer, 429, 502, 503, 504) are retried with the
 * same ids, which the relay deduplicates, so a batch the relay stored in
 * part is simply sent again; anything else is final.
 *
 * Outbox: with --outbox DIR each event or batch is first written to a
 * file there (outbox.c), removed only after the relay answered 202.  A
 * file the relay refuses for good is renamed to *.rejected and kept for
 * a human.  flush sends the files oldest first, single events of one
 * subject gathered into batches.
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
/* A send's ends besides the exit statuses. */
#define SEND_REFUSED		(-1)	/* the relay refuses us (token, URL),
					 * not the event: an outbox stays whole */
#define SEND_SPLIT		(-2)	/* a batch of several files refused
					 * without naming its event */

#define CT_EVENT		"application/cloudevents+json"
#define CT_BATCH		"application/cloudevents-batch+json"

/*
 * One request on its way: an event or a batch, from flags or JSON lines
 * (publish) or outbox files (flush).
 */
struct send {
	char			*subject;
	char			*body;		/* JSON object or array */
	size_t			 len;
	int			 batch;		/* body is a batch */
	/* The outbox files of the body, each one's first event's index. */
	char			**files;
	size_t			*first;
	size_t			 nfiles;
	long long		 refused_index;	/* the relay's "index", or -1 */
	struct retry		 retry;
	struct client_req	*req;
	int			 attempts;	/* allowed */
	void			(*done)(struct send *, int status);
};

/* Forget the request's body and files (not the retry state). */
static void
send_clear(struct send *s)
{
	size_t	 i;

	for (i = 0; i < s->nfiles; i++)
		free(s->files[i]);
	free(s->files);
	free(s->first);
	free(s->subject);
	free(s->body);
	s->files = NULL;
	s->first = NULL;
	s->nfiles = 0;
	s->subject = s->body = NULL;
	s->len = 0;
	s->batch = 0;
}

/* Add an outbox file whose events start at index first. */
static void
send_add_file(struct send *s, char *path, size_t first)
{
	s->files = xrealloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	s->first = xrealloc(s->first, (s->nfiles + 1) * sizeof(*s->first));
	s->files[s->nfiles] = path;
	s->first[s->nfiles++] = first;
}

/* The file holding the batch's event idx, or NULL. */
static const char *
send_file_of(const struct send *s, long long idx)
{
	size_t	 i;

	if (s->nfiles == 1)
		return s->files[0];
	if (idx < 0)
		return NULL;
	for (i = s->nfiles; i-- > 0; )
		if ((long long)s->first[i] <= idx)
			return s->files[i];
	return NULL;
}

/*
 * Print the relay's 202: a single event's answer as it is, a batch's as
 * one {"id":..,"duplicate":..} line per event, in order.
 */
static void
send_print(const struct send *s, const struct client_result *r)
{
	static const char	*rpath[] = { "results", NULL };
	yajl_val		 root = NULL, res;
	yajl_gen		 g;
	const unsigned char	*buf;
	char			*text;
	size_t			 i, n;

	if (s->batch) {
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

static void	send_attempt(void *);

/* The relay's answer to one attempt. */
static void
send_answer_cb(void *arg, const struct client_result *r)
{
	struct send	*s = arg;
	char		 what[96], detail[200], at[48] = "";
	const char	*file;
	size_t		 i;

	s->req = NULL;
	s->refused_index = -1;
	if (r->status == 202) {
		send_print(s, r);
		for (i = 0; i < s->nfiles; i++)
			if (unlink(s->files[i]) == -1)
				log_warn("cannot remove the sent outbox file",
				    "file=%s", log_q(s->files[i]));
		s->done(s, EXIT_OK);
		return;
	}
	if (client_transient(r)) {
		if ((int)s->retry.attempt + 1 < s->attempts) {
			retry_later(&s->retry, r);
			return;
		}
		cli_err("publish %s: still failing after %d attempts: %s%s%s%s",
		    s->subject, s->attempts, client_what(r, what, sizeof(what)),
		    s->nfiles > 0 ? "; kept in " : "",
		    s->nfiles > 0 ? s->files[0] : "",
		    s->nfiles > 1 ? " and the files after it" : "");
		s->done(s, EXIT_TEMPFAIL);
		return;
	}
	if (s->batch && (s->refused_index = send_index(r)) >= 0)
		snprintf(at, sizeof(at), " (the batch's event %lld)",
		    s->refused_index);
	cli_err("publish %s refused: %s%s %s", s->subject,
	    client_what(r, what, sizeof(what)), at,
	    client_detail(r, detail, sizeof(detail)));
	/*
	 * Only a refusal of the event itself sets its file aside; a bad
	 * token, URL or relay (401, 403, 404, 5xx, no such host) is no
	 * reason to give up the outbox: the file stays for a later flush.
	 */
	if (r->status == 400 || r->status == 413 || r->status == 422) {
		if (s->nfiles == 0) {
			s->done(s, EXIT_FAILED);
			return;
		}
		if ((file = send_file_of(s, s->refused_index)) == NULL) {
			s->done(s, SEND_SPLIT);
			return;
		}
		s->done(s, outbox_reject(file) == 0 ? EXIT_FAILED :
		    SEND_REFUSED);
		return;
	}
	if (s->nfiles > 0)
		cli_err("kept in %s%s", s->files[0], s->nfiles > 1 ?
		    " and the files after it" : "");
	s->done(s, SEND_REFUSED);
}

/* Send (again). */
static void
send_attempt(void *arg)
{
	struct send			*s = arg;
	struct outbound_header		 h[1];
	char				*path;

	h[0].key = "Content-Type";
	h[0].value = s->batch ? CT_BATCH : CT_EVENT;
	path = xjoin(API_EVENTS_PATH, "", s->subject);
	s->req = client_request(OUTBOUND_POST, path, h, 1, s->body, s->len,
	    send_answer_cb, s);
	free(path);
}

/* SIGINT/SIGTERM: stop waiting (what is in the outbox stays there). */
static void
send_stop_cb(void *arg)
{
	struct send	*s = arg;

	if (s->subject == NULL) {	/* between two requests */
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	retry_cancel(&s->retry);
	if (s->req != NULL) {
		client_cancel(s->req);
		s->req = NULL;
	}
	log_warnx("interrupted; not sent", "subject=%s%s",
	    log_q(s->subject), s->nfiles > 0 ? " kept=outbox" : "");
	s->done(s, EXIT_TEMPFAIL);
}

/* Start a send with a fresh backoff. */
static void
send_start(struct send *s)
{
	retry_reset(&s->retry);
	send_attempt(s);
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

/* publish: one event, or the JSON lines of --batch one batch at a time. */
static struct {
	struct send		 s;
	const char		*outbox;
	/* --batch: the input and its events (lines), the next to send. */
	char			*input;
	struct json_span	*ev;
	size_t			 nev, next, sent;
	size_t			 batch_size;
} pub;

static void	publish_next(void);

/* publish: one send done; the next batch, or the exit status. */
static void
publish_done(struct send *s, int status)
{
	if (status == EXIT_OK && pub.ev != NULL) {
		char	*subject = s->subject;

		pub.sent = pub.next;
		s->subject = NULL;
		send_clear(s);
		s->subject = subject;
		if (pub.next < pub.nev) {
			publish_next();
			return;
		}
	}
	if (pub.ev != NULL && status != EXIT_OK)
		log_warnx("not all batches sent", "events_sent=%zu "
		    "events_left=%zu", pub.sent, pub.nev - pub.sent);
	client_on_stop(NULL, NULL);
	client_exit(status == SEND_REFUSED || status == SEND_SPLIT ?
	    EXIT_FAILED : status);
}

/*
 * The next batch of --batch: as many events as --batch-size allows whose
 * array stays within the relay's body limit, written to the outbox first
 * when there is one.
 */
static void
publish_next(void)
{
	struct send	*s = &pub.s;
	size_t		 i, len = 2, o;
	char		*path;

	for (i = pub.next; i < pub.nev && i - pub.next < pub.batch_size; i++) {
		if (len + pub.ev[i].len + 1 > API_BODY_MAX && i > pub.next)
			break;
		len += pub.ev[i].len + 1;
	}
	s->body = xmalloc(len);
	s->body[0] = '[';
	for (o = 1; pub.next < i; pub.next++) {
		memcpy(s->body + o, pub.input + pub.ev[pub.next].off,
		    pub.ev[pub.next].len);
		o += pub.ev[pub.next].len;
		s->body[o++] = ',';
	}
	s->body[o - 1] = ']';
	s->len = o;
	s->batch = 1;
	if (pub.outbox != NULL) {
		if ((path = outbox_write(pub.outbox, s->subject, s->body,
		    s->len)) == NULL) {
			publish_done(s, EXIT_FAILED);
			return;
		}
		send_add_file(s, path, 0);
	}
	send_start(s);
}

/*
 * Read the JSON lines of --batch and check every event as the relay will
 * (its own parser, the type against the subject), before anything is
 * sent or kept: 0, or -1 with a message naming the line.
 */
static int
publish_read_lines(const char *arg, const char *subject)
{
	struct cevent	 ev;
	FILE		*f;
	size_t		 len, off, end, eol, line = 0, cap = 0;
	char		 what[48];
	int		 rc = 0;

	if (strcmp(arg, "-") == 0)
		pub.input = read_all(stdin, &len);
	else if ((f = fopen(arg, "r")) == NULL) {
		cli_err("%s: %s", arg, strerror(errno));
		return -1;
	} else {
		pub.input = read_all(f, &len);
		fclose(f);
	}
	if (pub.input == NULL) {
		cli_err("cannot read the events from %s", arg);
		return -1;
	}
	for (off = 0; off < len && rc == 0; off = eol + 1) {
		const char	*nl = memchr(pub.input + off, '\n', len - off);

		eol = nl != NULL ? (size_t)(nl - pub.input) : len;
		line++;
		/* Blank lines are allowed (a trailing newline, spacing). */
		for (end = eol; end > off &&
		    memchr(" \t\r", pub.input[end - 1], 3) != NULL; end--)
			;
		if (end == off)
			continue;
		if (end - off + 2 > API_BODY_MAX) {
			cli_err("line %zu: an event over " API_STR(API_BODY_MAX_MIB) " MiB", line);
			rc = -1;
		} else if (cevent_from_structured(&ev, pub.input + off,
		    end - off) == -1) {
			cli_err("line %zu: not a valid event: %s", line,
			    ev.detail);
			rc = -1;
		} else {
			snprintf(what, sizeof(what), "line %zu: type", line);
			rc = check_type(what, ev.type, subject);
		}
		cevent_free(&ev);
		if (rc == 0) {
			if (pub.nev == cap) {
				cap = cap ? cap * 2 : 64;
				pub.ev = xrealloc(pub.ev,
				    cap * sizeof(*pub.ev));
			}
			pub.ev[pub.nev].off = off;
			pub.ev[pub.nev++].len = end - off;
		}
		if (nl == NULL)
			break;
	}
	if (rc == 0 && pub.nev == 0) {
		cli_err("%s: no events", arg);
		rc = -1;
	}
	return rc;
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

/* One event from the flags into pub.s; 0 or an exit status. */
static int
publish_one(const char *subject, const char *type, const char *source,
    const char *id, const char *data_arg, const char *ct, const char *tm,
    const char *const *extra, size_t nextra)
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
	if ((pub.s.body = publish_body(&ev, &pub.s.len)) != NULL)
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
	const char	*batch = NULL, *extra[MAX_EXTRA_ATTRS];
	char		*path;
	size_t		 nextra = 0;
	long long	 attempts = DEFAULT_ATTEMPTS, bs = API_BATCH_DEFAULT;
	int		 c, rc = EXIT_FAILED, single;

	memset(&pub, 0, sizeof(pub));
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
		case 'o': pub.outbox = optarg; break;
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
	pub.batch_size = (size_t)bs;
	pub.s.subject = xstrdup(subject);
	if (batch != NULL) {
		if (publish_read_lines(batch, subject) == -1)
			goto out;
	} else if ((rc = publish_one(subject, type, source, id, data_arg, ct,
	    tm, extra, nextra)) != 0)
		goto out;
	if ((c = client_init()) != 0) {
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		goto out_client;
	}
	retry_init(&pub.s.retry, "publish", send_attempt, &pub.s);
	pub.s.attempts = (int)attempts;
	pub.s.done = publish_done;
	client_on_stop(send_stop_cb, &pub.s);
	if (batch != NULL)
		publish_next();
	else {
		if (pub.outbox != NULL) {
			if ((path = outbox_write(pub.outbox, subject,
			    pub.s.body, pub.s.len)) == NULL) {
				rc = EXIT_FAILED;
				goto out_client;
			}
			send_add_file(&pub.s, path, 0);
		}
		send_start(&pub.s);
	}
	rc = client_run();
out_client:
	retry_cancel(&pub.s.retry);
	client_free();
out:
	send_clear(&pub.s);
	free(pub.input);
	free(pub.ev);
	return rc;
}

/* flush: the outbox, oldest first, single events gathered into batches. */
static struct {
	const char	*dir;
	struct dirent	**names;
	int		 n, next, start;	/* start: the send's first */
	int		 sent, rejected;
	size_t		 batch_size;
	struct send	 s;
	int		 rc;
} fl;

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
 * Load the next send into fl.s: a batch entry alone, or single-event
 * entries of one subject gathered up to --batch-size events within the
 * relay's body limit (one alone is sent as itself).  0, 1 when no file is
 * left, -1 on error.
 */
static int
flush_load(void)
{
	struct send	*s = &fl.s;
	char		*path, *subject, *body;
	size_t		 len;
	int		 r;

	fl.start = fl.next;
	for (; fl.next < fl.n; fl.next++) {
		path = xjoin(fl.dir, "/", fl.names[fl.next]->d_name);
		if ((r = outbox_read(path, &subject, &body, &len)) != 0) {
			free(path);
			if (r == 1)	/* sent meanwhile by another flush */
				continue;
			return -1;
		}
		if (s->nfiles > 0 && (body_is_batch(body, len) ||
		    strcmp(subject, s->subject) != 0 ||
		    s->nfiles == fl.batch_size ||
		    s->len + len + 2 > API_BODY_MAX)) {
			free(path);
			free(subject);
			free(body);
			break;
		}
		if (s->nfiles == 0) {
			s->subject = subject;
			s->body = body;
			s->len = len;
			s->batch = body_is_batch(body, len);
			send_add_file(s, path, 0);
			if (s->batch) {
				fl.next++;
				break;
			}
			continue;
		}
		/* A second event: the body becomes an array. */
		if (s->nfiles == 1) {
			char	*arr = xmalloc(s->len + 2);

			arr[0] = '[';
			memcpy(arr + 1, s->body, s->len);
			free(s->body);
			s->body = arr;
			s->len++;
			s->batch = 1;
		}
		s->body = xrealloc(s->body, s->len + 1 + len + 1);
		s->body[s->len++] = ',';
		memcpy(s->body + s->len, body, len);
		s->len += len;
		send_add_file(s, path, s->nfiles);
		free(subject);
		free(body);
	}
	if (s->nfiles == 0)
		return 1;
	if (s->batch && s->nfiles > 1)
		s->body[s->len++] = ']';
	return 0;
}

static void	flush_next(void);

/* One send done. */
static void
flush_done(struct send *s, int status)
{
	size_t	 nfiles = s->nfiles;

	send_clear(s);
	if (status == EXIT_OK)
		fl.sent += (int)nfiles;
	else if (status == EXIT_FAILED) {
		/*
		 * One file was refused and set aside; the batch's others were
		 * not stored: send them again.
		 */
		fl.rejected++;
		fl.rc = EXIT_FAILED;
		fl.next = fl.start;
	} else if (status == SEND_SPLIT) {
		/* Refused without naming its event: one file at a time. */
		fl.batch_size = 1;
		fl.next = fl.start;
	} else if (status == SEND_REFUSED) {
		/* The relay refuses us, not the event: stop, keep the rest. */
		fl.rc = EXIT_FAILED;
		client_exit(fl.rc);
		return;
	} else {
		/* Still failing, or interrupted: keep the rest for later. */
		fl.rc = EXIT_TEMPFAIL;
		client_exit(fl.rc);
		return;
	}
	flush_next();
}

/* Send the next files, or finish. */
static void
flush_next(void)
{
	int	 r;

	if ((r = flush_load()) != 0) {
		if (r == -1)
			fl.rc = EXIT_FAILED;
		client_exit(fl.rc);
		return;
	}
	send_start(&fl.s);
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
	long long	 attempts = DEFAULT_ATTEMPTS, bs = API_BATCH_DEFAULT;
	int		 c, i, left;

	memset(&fl, 0, sizeof(fl));
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", flush_opts)) != -1) {
		switch (c) {
		case 'o': fl.dir = optarg; break;
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
	if (optind != argc || fl.dir == NULL) {
		cli_err("%s", FLUSH_USAGE);
		return EXIT_USAGE;
	}
	if (outbox_check(fl.dir) == -1)
		return EXIT_FAILED;
	/* Names start with the time: alphabetical is oldest first. */
	if ((fl.n = scandir(fl.dir, &fl.names, flush_filter, alphasort)) == -1) {
		cli_err("%s: %s", fl.dir, strerror(errno));
		return EXIT_FAILED;
	}
	fl.batch_size = (size_t)bs;
	fl.rc = EXIT_OK;
	if ((c = client_init()) != 0) {
		fl.rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		client_free();
		goto out;
	}
	retry_init(&fl.s.retry, "publish", send_attempt, &fl.s);
	fl.s.attempts = (int)attempts;
	fl.s.done = flush_done;
	client_on_stop(send_stop_cb, &fl.s);
	flush_next();
	client_run();
	retry_cancel(&fl.s.retry);
	left = fl.n - fl.sent - fl.rejected;
	log_info("outbox flushed", "sent=%d rejected=%d left=%d", fl.sent,
	    fl.rejected, left);
	send_clear(&fl.s);
	client_free();
out:
	for (i = 0; i < fl.n; i++)
		free(fl.names[i]);
	free(fl.names);
	return fl.rc;
}
