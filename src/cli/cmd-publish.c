/*
 * cmd-publish.c: treaty publish and treaty flush.
 *
 * An event is sent as a structured-mode CloudEvent (JSON) to
 * POST /v1/events/<subject>; its data is written so that the relay stores
 * exactly the bytes given (cevent_gen_data).  Transient failures (no
 * answer, 429, 502, 503, 504) are retried with the same id, which the
 * relay deduplicates; anything else is final.
 *
 * Outbox: with --outbox DIR the event is first written to a file there
 * (temporary name, fsync, rename, fsync of the directory), and the file
 * is removed only after the relay answered 202.  The file's first line is
 * the subject, the rest the request body; names start with the time in
 * nanoseconds, so flush sends the oldest first.  A file the relay refuses
 * for good is renamed to *.rejected and kept for a human.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>
#include <yajl/yajl_gen.h>

#include "treaty.h"
#include "api.h"
#include "cevent.h"
#include "cli.h"
#include "log.h"
#include "util.h"

#define DEFAULT_ATTEMPTS	8
#define MAX_EXTRA_ATTRS		16
#define OUTBOX_SUFFIX		".event"
/* A send's end besides the exit statuses: the relay refuses us (token,
 * URL), not the event, so an outbox is kept whole. */
#define SEND_REFUSED		(-1)

/* One event on its way: from flags (publish) or an outbox file (flush). */
struct send {
	char			*subject;
	char			*body;		/* structured-mode JSON */
	size_t			 len;
	char			*file;		/* outbox file, or NULL */
	struct retry		 retry;
	struct client_req	*req;
	int			 attempts;	/* allowed */
	void			(*done)(struct send *, int status);
};

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

/* fsync the directory dir, so a rename or a new name in it is durable. */
static int
sync_dir(const char *dir)
{
	int	 fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/*
 * An outbox must be the user's own, writable by nobody else: flush
 * publishes every file in it with the user's token, so a file someone
 * else could put there would be published as the user's.  0, or -1 with
 * a message.
 */
static int
outbox_check(const char *dir)
{
	struct stat	 st;

	if (stat(dir, &st) == -1) {
		cli_err("outbox %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_err("outbox %s: not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		cli_err("outbox %s: must be owned by this user and writable by "
		    "nobody else (chmod go-w), or another user's files would be "
		    "published with this token", dir);
		return -1;
	}
	return 0;
}

/*
 * Write s durably into dir: a temporary name, fsync, rename to its
 * time-ordered name, fsync of the directory.  The file's path, or NULL
 * with a message.
 */
static char *
outbox_write(const char *dir, const struct send *s)
{
	struct timespec	 ts;
	uint32_t	 rnd;
	char		 name[64], *tmp, *path;
	ssize_t		 w;
	size_t		 off = 0, slen = strlen(s->subject);
	int		 fd;

	/* A missing outbox is made (private: events may be). */
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		cli_err("outbox %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (outbox_check(dir) == -1)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (RAND_bytes((unsigned char *)&rnd, sizeof(rnd)) != 1)
		rnd = (uint32_t)ts.tv_nsec;
	snprintf(name, sizeof(name), "%020lld-%08x" OUTBOX_SUFFIX,
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, rnd);
	path = xjoin(dir, "/", name);
	tmp = xjoin(dir, "/.tmp-", name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
	    == -1)
		goto fail;
	{
		char	*buf = xmalloc(slen + 1 + s->len);

		memcpy(buf, s->subject, slen);
		buf[slen] = '\n';
		memcpy(buf + slen + 1, s->body, s->len);
		while (off < slen + 1 + s->len) {
			w = write(fd, buf + off, slen + 1 + s->len - off);
			if (w == -1 && errno == EINTR)
				continue;
			if (w <= 0) {
				free(buf);
				close(fd);
				goto fail_unlink;
			}
			off += (size_t)w;
		}
		free(buf);
	}
	if (fsync(fd) == -1 || close(fd) == -1)
		goto fail_unlink;
	if (rename(tmp, path) == -1)
		goto fail_unlink;
	if (sync_dir(dir) == -1) {
		/* Not durable, so not kept: nothing is sent, exit 1. */
		unlink(path);
		goto fail;
	}
	free(tmp);
	return path;
fail_unlink:
	unlink(tmp);
fail:
	cli_err("outbox %s: %s", dir, strerror(errno));
	free(tmp);
	free(path);
	return NULL;
}

static void	send_attempt(void *);

/* The relay's answer to one attempt. */
static void
send_answer_cb(void *arg, const struct client_result *r)
{
	struct send	*s = arg;
	char		 what[96], detail[200], *rej;

	s->req = NULL;
	if (r->status == 202) {
		/* The relay's own answer: {"id":...,"duplicate":...}. */
		fwrite(r->body, 1, r->bodylen, stdout);
		if (r->bodylen == 0 || r->body[r->bodylen - 1] != '\n')
			putchar('\n');
		fflush(stdout);
		if (s->file != NULL && unlink(s->file) == -1)
			log_warn("cannot remove the sent outbox file",
			    "file=%s", log_q(s->file));
		s->done(s, EXIT_OK);
		return;
	}
	if (client_transient(r)) {
		if ((int)s->retry.attempt + 1 < s->attempts) {
			retry_later(&s->retry, r);
			return;
		}
		cli_err("publish %s: still failing after %d attempts: %s%s%s",
		    s->subject, s->attempts, client_what(r, what, sizeof(what)),
		    s->file ? "; kept in " : "", s->file ? s->file : "");
		s->done(s, EXIT_TEMPFAIL);
		return;
	}
	cli_err("publish %s refused: %s %s", s->subject,
	    client_what(r, what, sizeof(what)),
	    client_detail(r, detail, sizeof(detail)));
	/*
	 * Only a refusal of the event itself sets its file aside; a bad
	 * token, URL or relay (401, 403, 404, 5xx, no such host) is no
	 * reason to give up the outbox: the file stays for a later flush.
	 */
	if (s->file != NULL && (r->status == 400 || r->status == 413 ||
	    r->status == 422)) {
		rej = xjoin(s->file, "", ".rejected");
		if (rename(s->file, rej) == 0)
			cli_err("kept as %s", rej);
		free(rej);
		s->done(s, EXIT_FAILED);
		return;
	}
	if (s->file != NULL)
		cli_err("kept in %s", s->file);
	s->done(s, SEND_REFUSED);
}

/* Send (again). */
static void
send_attempt(void *arg)
{
	struct send			*s = arg;
	static const struct outbound_header h[] = {
		{ "Content-Type", "application/cloudevents+json" }
	};
	char				*path;

	path = xjoin(API_EVENTS_PATH, "", s->subject);
	s->req = client_request(OUTBOUND_POST, path, h, 1, s->body, s->len,
	    send_answer_cb, s);
	free(path);
}

/* SIGINT/SIGTERM: stop waiting (the event stays in the outbox, if any). */
static void
send_stop_cb(void *arg)
{
	struct send	*s = arg;

	if (s->subject == NULL) {	/* flush, between two files */
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	retry_cancel(&s->retry);
	if (s->req != NULL) {
		client_cancel(s->req);
		s->req = NULL;
	}
	log_warnx("interrupted; not sent", "subject=%s%s%s",
	    log_q(s->subject), s->file ? " kept=" : "",
	    s->file ? log_q(s->file) : "");
	s->done(s, EXIT_TEMPFAIL);
}

/* publish: one send, then exit (a late signal changes nothing now). */
static void
publish_done(struct send *s, int status)
{
	(void)s;
	client_on_stop(NULL, NULL);
	client_exit(status == SEND_REFUSED ? EXIT_FAILED : status);
}

/* Send s with retries; the exit status. */
static int
send_run(struct send *s)
{
	client_on_stop(send_stop_cb, s);
	send_attempt(s);
	return client_run();
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

static const struct option publish_opts[] = {
	{ "subject", required_argument, NULL, 's' },
	{ "type", required_argument, NULL, 't' },
	{ "source", required_argument, NULL, 'S' },
	{ "id", required_argument, NULL, 'i' },
	{ "data", required_argument, NULL, 'd' },
	{ "content-type", required_argument, NULL, 'c' },
	{ "time", required_argument, NULL, 'T' },
	{ "attr", required_argument, NULL, 'a' },
	{ "outbox", required_argument, NULL, 'o' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	CLIENT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

#define PUBLISH_USAGE							\
	"usage: treaty publish --subject SUBJECT --type TYPE --source SOURCE\n" \
	"  [--id ID] [--data TEXT|@FILE|-] [--content-type TYPE] [--time TIME]\n" \
	"  [--attr NAME=VALUE ...] [--outbox DIR] [--attempts N]\n" CLIENT_USAGE

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

/* treaty publish: see man/treaty.1. */
int
cmd_publish(int argc, char **argv)
{
	struct cevent	 ev;
	struct send	 s;
	const char	*subject = NULL, *type = NULL, *source = NULL;
	const char	*id = NULL, *data_arg = NULL, *ct = NULL, *tm = NULL;
	const char	*outbox = NULL, *extra[MAX_EXTRA_ATTRS];
	char		 uuid[37], *data = NULL, *eq, *name;
	size_t		 nextra = 0, datalen = 0, i;
	long long	 attempts = DEFAULT_ATTEMPTS;
	int		 c, rc = EXIT_FAILED;

	memset(&ev, 0, sizeof(ev));
	memset(&s, 0, sizeof(s));
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
	if (optind != argc || subject == NULL || type == NULL ||
	    source == NULL) {
		cli_err("%s", PUBLISH_USAGE);
		return EXIT_USAGE;
	}
	/* Validation failures stop here, before anything is sent or kept. */
	if (!treaty_subject_valid(subject)) {
		cli_err("--subject %s: not a suite subject "
		    "(evt|audit.scope.product.entity.verb)", subject);
		return EXIT_FAILED;
	}
	/* The relay answers these 422: an outbox must never keep one. */
	if (!treaty_type_valid(type)) {
		cli_err("--type %s: not a suite type "
		    "(namespace.product.entity.verb.vN)", type);
		return EXIT_FAILED;
	}
	if (!treaty_type_matches_subject(type, subject)) {
		cli_err("--type %s does not match --subject %s: the type's "
		    "product, entity and verb must be the subject's", type,
		    subject);
		return EXIT_FAILED;
	}
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
	s.subject = xstrdup(subject);
	if ((s.body = publish_body(&ev, &s.len)) == NULL)
		goto out;
	if ((c = client_init()) != 0) {
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		goto out_client;
	}
	retry_init(&s.retry, "publish", send_attempt, &s);
	if (outbox != NULL && (s.file = outbox_write(outbox, &s)) == NULL)
		goto out_client;
	s.attempts = (int)attempts;
	s.done = publish_done;
	rc = send_run(&s);
out_client:
	retry_cancel(&s.retry);
	client_free();
out:
	cevent_free(&ev);
	free(data);
	free(s.subject);
	free(s.body);
	free(s.file);
	return rc;
}

/* flush: the outbox, oldest first. */
static struct {
	const char	*dir;
	struct dirent	**names;
	int		 n, next;
	int		 sent, rejected;
	int		 attempts;
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

/* Load the next file into fl.s; 0, 1 when none is left, -1 on error. */
static int
flush_load(void)
{
	FILE	*f;
	char	*text, *nl;
	size_t	 len;

	for (; fl.next < fl.n; fl.next++) {
		fl.s.file = xjoin(fl.dir, "/", fl.names[fl.next]->d_name);
		if ((f = fopen(fl.s.file, "r")) == NULL) {
			/* Sent meanwhile by another flush: fine. */
			if (errno == ENOENT) {
				free(fl.s.file);
				continue;
			}
			cli_err("%s: %s", fl.s.file, strerror(errno));
			return -1;
		}
		text = read_all(f, &len);
		fclose(f);
		if (text == NULL || (nl = memchr(text, '\n', len)) == NULL) {
			cli_err("%s: not an outbox file", fl.s.file);
			free(text);
			return -1;
		}
		fl.s.subject = xstrndup(text, (size_t)(nl - text));
		fl.s.len = len - (size_t)(nl + 1 - text);
		fl.s.body = xstrndup(nl + 1, fl.s.len);
		free(text);
		fl.next++;
		return 0;
	}
	return 1;
}

static void	flush_next(void);

/* One file done. */
static void
flush_done(struct send *s, int status)
{
	free(s->subject);
	free(s->body);
	free(s->file);
	s->subject = s->body = s->file = NULL;
	if (status == EXIT_OK)
		fl.sent++;
	else if (status == EXIT_FAILED) {
		fl.rejected++;
		fl.rc = EXIT_FAILED;
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

/* Send the next file, or finish. */
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
	fl.s.attempts = fl.attempts;
	fl.s.done = flush_done;
	retry_reset(&fl.s.retry);
	send_attempt(&fl.s);
}

static const struct option flush_opts[] = {
	{ "outbox", required_argument, NULL, 'o' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	CLIENT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

#define FLUSH_USAGE	"usage: treaty flush --outbox DIR [--attempts N]\n" \
	CLIENT_USAGE

/* treaty flush: see man/treaty.1. */
int
cmd_flush(int argc, char **argv)
{
	long long	 attempts = DEFAULT_ATTEMPTS;
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
	fl.attempts = (int)attempts;
	fl.rc = EXIT_OK;
	if ((c = client_init()) != 0) {
		fl.rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		client_free();
		goto out;
	}
	retry_init(&fl.s.retry, "publish", send_attempt, &fl.s);
	fl.s.done = flush_done;
	client_on_stop(send_stop_cb, &fl.s);
	flush_next();
	client_run();
	retry_cancel(&fl.s.retry);
	left = fl.n - fl.sent - fl.rejected;
	log_info("outbox flushed", "sent=%d rejected=%d left=%d", fl.sent,
	    fl.rejected, left);
	free(fl.s.subject);
	free(fl.s.body);
	free(fl.s.file);
	client_free();
out:
	for (i = 0; i < fl.n; i++)
		free(fl.names[i]);
	free(fl.names);
	return fl.rc;
}
