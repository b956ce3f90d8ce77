/*
 * cmd-publish.c: treaty publish and treaty flush.  Main thread (the
 * client's loop).
 *
 * An event is sent as a structured-mode CloudEvent (JSON) to
 * POST /v1/events/<subject>; its data is written so that the relay stores
 * exactly the bytes given (cevent_gen_data).  With --batch, events are
 * read as JSON lines.  Whatever the source (one event, JSON lines, an
 * outbox's files), the events go through one queue (sendq.c), sent in order
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

#include "treaty.h"
#include "api.h"
#include "cevent.h"
#include "cli.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define DEFAULT_ATTEMPTS	8
#define MAX_EXTRA_ATTRS		16
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
	return cevent_attr_put(ev, name, value);
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
			sendq_add(in + off, end - off, subject, -1, line);
	}
	if (rc == 0 && sendq.nev == 0) {
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

	while (i < sendq.nev) {
		for (n = 0, bytes = 2; i + n < sendq.nev && n < limit; n++) {
			if (n > 0 && bytes + sendq.ev[i + n].len + 1 > API_BODY_MAX)
				break;
			bytes += sendq.ev[i + n].len + 1;
		}
		body = xmalloc(bytes);
		body[0] = '[';
		for (k = 0, o = 1; k < n; k++) {
			memcpy(body + o, sendq.ev[i + k].text, sendq.ev[i + k].len);
			o += sendq.ev[i + k].len;
			body[o++] = ',';
		}
		body[o - 1] = ']';
		path = outbox_write(dir, subject, body, o);
		free(body);
		if (path == NULL)
			return -1;
		f = sendq_add_file(path, NULL, NULL);
		for (k = 0; k < n; k++) {
			sendq.ev[i + k].file = f;
			sendq.f[f].left++;
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
		/* What structured mode reserves would become the data. */
		if (strcmp(name, "data") == 0 ||
		    strcmp(name, "data_base64") == 0 ||
		    strcmp(name, "datacontenttype") == 0) {
			cli_err("--attr %s: not an attribute (use --data or "
			    "--content-type)", name);
			free(name);
			goto out;
		}
		attr_set(&ev, name, eq + 1);
		free(name);
	}
	if (ct != NULL)
		cevent_content_type_put(&ev, ct);
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
	int		 c, rc = EXIT_FAILED, single, f, bs_given = 0;

	memset(&sendq, 0, sizeof(sendq));
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
			bs_given = 1;
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
	/* --batch-size without --batch would be taken and do nothing. */
	if (optind != argc || subject == NULL || (batch == NULL &&
	    (type == NULL || source == NULL || bs_given)) ||
	    (batch != NULL && single)) {
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
			f = sendq_add_file(path, NULL, NULL);
		}
		sendq_add(body, len, subject, f, 0);
	} else if (outbox != NULL &&
	    publish_write_batches(outbox, subject, (size_t)bs) == -1)
		goto out_client;
	rc = sendq_run((int)attempts, (size_t)bs);
out_client:
	client_free();
out:
	sendq_free();
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

	memset(&sendq, 0, sizeof(sendq));
	sendq.flush = 1;
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
		f = sendq_add_file(path, subject, body);
		if (r == 2 || (r = flush_check(path, subject, body, len, el))
		    <= 0) {
			/* Not what publish writes: for a human. */
			rc = EXIT_FAILED;
			/* Not set aside: it stays, among the files left. */
			if (outbox_reject(path) == 0)
				sendq.rejected++;
			continue;
		}
		if (!body_is_batch(body, len))
			sendq_add(body, len, subject, f, 0);
		else
			for (k = 0; k < r; k++)
				sendq_add(body + el[k].off, el[k].len, subject, f,
				    0);
	}
	c = sendq_run((int)attempts, (size_t)bs);
	if (c != EXIT_OK || rc == EXIT_OK)
		rc = c;
	log_info("outbox flushed", "sent=%zu rejected=%zu left=%zu", sendq.sent,
	    sendq.rejected, sendq.nf - sendq.sent - sendq.rejected + unread);
out:
	client_free();
	sendq_free();
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}
