/*
 * client.c: the loop of the network commands, their requests to the
 * relay and the backoff between retries.
 *
 * Requests use the relay's own network code (src/common): the host is
 * resolved by evdns within a bound (never the blocking getaddrinfo; the
 * servers of /etc/resolv.conf, or TREATY_DNS_SERVER) and pinned, the
 * connection goes to those addresses (the next one when a
 * connect fails, up to four), and every request has an overall deadline
 * and an idle timeout (--deadline, --idle-timeout: 45 s and 35 s, the
 * seed's, as for the relay's deliveries: outbound.h).  A timeout, of the
 * lookup or of the request, is reported as ETIMEDOUT; another failure
 * without an answer by what the connection found (outbound_why: the
 * errno, the certificate's refusal), and a message about it names the
 * URL and where it came from (client_why), since the usual cause is a
 * relay that is not where the client looks.
 * The relay's address is the operator's choice, so private and loopback
 * addresses are allowed (the refusal list protects the relay's
 * deliveries, not this client).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/util.h>
#include <openssl/rand.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "cli.h"
#include "log.h"
#include "resolve.h"
#include "util.h"

#define DEADLINE_S		(OUTBOUND_DEADLINE_MS_DEFAULT / 1000)
#define IDLE_S			(OUTBOUND_IDLE_MS_DEFAULT / 1000)
#define TIMEOUT_S_MAX		3600	/* --deadline, --idle-timeout */
#define RETRY_BASE_MS		250	/* the first backoff's upper end */
#define RETRY_CAP_MS		30000	/* the longest backoff's */
#define RETRY_MS_MAX		3600000	/* --retry-base, --retry-cap */
#define PIN_CACHE_MS		60000
#define MAX_RESPONSE		(64 * 1024 * 1024)
#define DETAIL_BODY_MAX		65536	/* an error body read for its detail */
#define DEFAULT_URL		"http://127.0.0.1:8080"
/*
 * Requests under way at once; more wait in a queue.  As many connections
 * stay open for reuse, so a worker acknowledging a batch of 100 does not
 * open (and leave in TIME_WAIT) 100 connections each time.
 */
#define MAX_INFLIGHT		16

struct client_req {
	enum outbound_method	 method;
	char			*path;		/* full path?query */
	struct outbound_header	 h[8];
	size_t			 nh;
	char			*hcopy[16];	/* the callers' keys and values */
	size_t			 nhcopy;
	char			*body;
	size_t			 len;
	client_cb		 cb;
	void			*arg;
	struct resolve_req	*rr;
	struct outbound_req	*out;
	struct event		 fail;		/* reports an early failure */
	struct client_result	 early;
	char			 why[96];
	int			 queued;	/* waiting for a free slot */
	TAILQ_ENTRY(client_req)	 entry;
};
TAILQ_HEAD(client_req_list, client_req);

static struct {
	struct event_base	*base;
	const char		*url;
	char			*shown;		/* the URL without userinfo */
	const char		*url_from;	/* url_opt, "TREATY_URL", "default" */
	const char		*url_opt;	/* the option that gives the URL */
	const char		*token_file;
	const char		*ca_file;
	char			*token;
	char			*auth;		/* "Bearer <token>" */
	char			*prefix;	/* the URL's path, no final / */
	struct outbound_target	*target;
	int64_t			 retry_base, retry_cap;
	int			 deadline_s, idle_s;
	struct event		*sigint, *sigterm;
	void			(*on_stop)(void *);
	void			*on_stop_arg;
	int			 stopping;
	long long		 stopped_at;	/* now_ms() of the first signal */
	int			 status;
	int			 inflight;
	struct client_req_list	 queue;
} cl = { .retry_base = RETRY_BASE_MS, .retry_cap = RETRY_CAP_MS,
    .deadline_s = DEADLINE_S, .idle_s = IDLE_S, .url_opt = "--url" };

/* One of the shared options. */
int
client_option(int c, const char *arg, const char *usage)
{
	long long	 v;

	switch (c) {
	case 1000: cl.url = arg; return 0;
	case 1007: cl.url = arg; cl.url_opt = "--relay-url"; return 0;
	case 1001: cl.token_file = arg; return 0;
	case 1002: cl.ca_file = arg; return 0;
	case 1003:
	case 1004:
		if ((v = num_arg(arg)) < 1 || v > RETRY_MS_MAX) {
			cli_err("--retry-%s: milliseconds, 1 to %d",
			    c == 1003 ? "base" : "cap", RETRY_MS_MAX);
			return -1;
		}
		if (c == 1003)
			cl.retry_base = v;
		else
			cl.retry_cap = v;
		return 0;
	case 1005:
	case 1006:
		if ((v = num_arg(arg)) < 1 || v > TIMEOUT_S_MAX) {
			cli_err("--%s: seconds, 1 to %d", c == 1005 ?
			    "deadline" : "idle-timeout", TIMEOUT_S_MAX);
			return -1;
		}
		if (c == 1005)
			cl.deadline_s = (int)v;
		else
			cl.idle_s = (int)v;
		return 0;
	case 'v': log_init(1); return 0;
	}
	cli_err("%s", usage);
	return -1;
}

/*
 * SIGINT or SIGTERM: tell the command once; a second one exits now.
 * Copies within SIGNAL_REPEAT_MS of the first are the same request:
 * timeout(1) signals the command and then its whole process group, so
 * one stop arrives twice.
 */
#define SIGNAL_REPEAT_MS	500

static void
client_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	if (cl.stopping) {
		if (now_ms() - cl.stopped_at < SIGNAL_REPEAT_MS)
			return;
		log_warnx("second signal: exiting now", "signal=%d", (int)sig);
		exit(EXIT_TEMPFAIL);
	}
	cl.stopping = 1;
	cl.stopped_at = now_ms();
	log_debug("stopping", "signal=%d", (int)sig);
	if (cl.on_stop != NULL)
		cl.on_stop(cl.on_stop_arg);
}

/* The loop and the signals. */
int
client_loop_init(void)
{
	event_set_log_callback(log_libevent);
	if ((cl.base = event_base_new()) == NULL) {
		cli_err("cannot set up the event loop");
		return -1;
	}
	cl.sigint = evsignal_new(cl.base, SIGINT, client_signal_cb, NULL);
	cl.sigterm = evsignal_new(cl.base, SIGTERM, client_signal_cb, NULL);
	evsignal_add(cl.sigint, NULL);
	evsignal_add(cl.sigterm, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/*
 * url as messages show it: without a userinfo part (user:password@),
 * which could hold a secret.
 */
static char *
url_shown(const char *url)
{
	const char	*auth = strstr(url, "://") + 3, *at, *end;
	char		*s;

	end = auth + strcspn(auth, "/?#");
	for (at = end; at > auth && at[-1] != '@'; at--)
		;
	if (at == auth)
		return xstrdup(url);
	s = xmalloc(strlen(url) + 1);
	memcpy(s, url, (size_t)(auth - url));
	strcpy(s + (auth - url), at);
	return s;
}

/* The loop, the resolver, the HTTP client, the relay's URL and token. */
int
client_init(void)
{
	const char	*url = cl.url, *path, *dns;
	struct sockaddr_storage ss;
	int		 sl = sizeof(ss);
	char		*buf;
	size_t		 n;

	cl.url_from = cl.url_opt;
	if (url == NULL && (url = getenv("TREATY_URL")) != NULL)
		cl.url_from = "TREATY_URL";
	if (url == NULL) {
		url = DEFAULT_URL;
		cl.url_from = "default";
	}
	if (cl.ca_file == NULL)
		cl.ca_file = getenv("TREATY_CA_FILE");
	/* As the relay's TREATY_RELAY_DNS_SERVER: ip[:port]. */
	if ((dns = getenv("TREATY_DNS_SERVER")) != NULL && dns[0] == '\0')
		dns = NULL;
	if (dns != NULL && evutil_parse_sockaddr_port(dns,
	    (struct sockaddr *)&ss, &sl) == -1) {
		cli_err("TREATY_DNS_SERVER: must be ip[:port]");
		return -1;
	}
	if (cl.retry_cap < cl.retry_base) {
		cli_err("--retry-cap is below --retry-base");
		return -2;
	}
	if ((cl.token = read_token(cl.token_file)) == NULL)
		return -1;
	cl.auth = xjoin("Bearer", " ", cl.token);
	TAILQ_INIT(&cl.queue);
	if ((cl.target = outbound_target_new(url, MAX_INFLIGHT)) == NULL) {
		cli_err("%s: not an http or https URL", url);
		return -1;
	}
	outbound_target_set_max_body(cl.target, MAX_RESPONSE);
	cl.shown = url_shown(url);
	/* The URL's path, if any, is a prefix of every request's. */
	path = strstr(url, "://") + 3;
	path = strchr(path, '/');
	buf = xstrdup(path != NULL ? path : "");
	if ((path = strpbrk(buf, "?#")) != NULL)
		buf[path - buf] = '\0';
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	cl.prefix = buf;
	if (client_loop_init() == -1)
		return -1;
	resolve_init(cl.base, dns, RESOLVE_TIMEOUT_MS_DEFAULT, PIN_CACHE_MS);
	if (outbound_init(cl.base, cl.ca_file, cl.deadline_s * 1000,
	    cl.idle_s * 1000,
	    "treaty/" TREATY_VERSION) == -1) {
		cli_err("cannot set up TLS%s%s", cl.ca_file ? " with " : "",
		    cl.ca_file ? cl.ca_file : "");
		return -1;
	}
	return 0;
}

/* The loop. */
struct event_base *
client_base(void)
{
	return cl.base;
}

/* Run until client_exit; the exit status. */
int
client_run(void)
{
	event_base_dispatch(cl.base);
	return cl.status;
}

/*
 * End the loop with status.  loopexit, not loopbreak: it also holds when
 * called before the loop runs (a flush with nothing to send).
 */
void
client_exit(int status)
{
	cl.status = status;
	event_base_loopexit(cl.base, NULL);
}

/* Free what client_init made. */
void
client_free(void)
{
	sigset_t	 stop;

	/*
	 * The run is over and its status decided: a late SIGINT/SIGTERM must
	 * not turn it into a death by signal once the handlers are gone.
	 * timeout(1), for one, signals the command and then its whole group,
	 * so the second copy can land here.  Children get their own mask.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	if (cl.sigint != NULL)
		event_free(cl.sigint);
	if (cl.sigterm != NULL)
		event_free(cl.sigterm);
	if (cl.target != NULL) {
		outbound_target_free(cl.target);
		outbound_free();
		resolve_free();
	}
	if (cl.base != NULL)
		event_base_free(cl.base);
	if (cl.token != NULL)
		OPENSSL_cleanse(cl.token, strlen(cl.token));
	free(cl.token);
	free(cl.auth);
	free(cl.prefix);
	free(cl.shown);
	memset(&cl, 0, sizeof(cl));
	cl.retry_base = RETRY_BASE_MS;
	cl.retry_cap = RETRY_CAP_MS;
	cl.deadline_s = DEADLINE_S;
	cl.idle_s = IDLE_S;
	cl.url_opt = "--url";
}

/* The option that gives the relay's URL, for messages; see cli.h. */
void
client_url_option(const char *opt)
{
	cl.url_opt = opt;
}

/* What to call at SIGINT/SIGTERM. */
void
client_on_stop(void (*fn)(void *), void *arg)
{
	cl.on_stop = fn;
	cl.on_stop_arg = arg;
}

/* Whether a stop signal came. */
int
client_stopping(void)
{
	return cl.stopping;
}

static void	creq_start(struct client_req *);

/* Free a request; start a queued one in its slot. */
static void
creq_free(struct client_req *r)
{
	struct client_req	*next;

	if (r->queued)
		TAILQ_REMOVE(&cl.queue, r, entry);
	else if (--cl.inflight < MAX_INFLIGHT &&
	    (next = TAILQ_FIRST(&cl.queue)) != NULL) {
		TAILQ_REMOVE(&cl.queue, next, entry);
		next->queued = 0;
		creq_start(next);
	}
	event_del(&r->fail);
	while (r->nhcopy > 0)
		free(r->hcopy[--r->nhcopy]);
	free(r->path);
	free(r->body);
	free(r);
}

/* evhttp's answer, or its failure. */
static void
client_sent_cb(void *arg, const struct outbound_result *o)
{
	struct client_req	*r = arg;
	struct client_result	 res;
	void			 (*cb)(void *, const struct client_result *) = r->cb;
	void			*cbarg = r->arg;
	char			 why[160];

	r->out = NULL;
	memset(&res, 0, sizeof(res));
	res.status = o->status;
	res.error = o->timed_out ? "ETIMEDOUT" : o->status == 0 ?
	    outbound_why(o, why, sizeof(why)) : o->error;
	/*
	 * A certificate this client does not trust (or of another name)
	 * stays so however often it is asked: a wrong --url or --ca-file.
	 */
	res.permanent = o->status == 0 && o->cert_error != 0;
	res.retry_after = o->retry_after;
	res.not_sent = o->not_sent;
	res.resent = o->resent;
	res.body = o->body;
	res.bodylen = o->bodylen;
	creq_free(r);
	cb(cbarg, &res);
}

/* A failure found before anything was sent, reported from the loop. */
static void
client_fail_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct client_req	*r = arg;
	struct client_result	 res = r->early;
	client_cb		 cb = r->cb;
	void			*cbarg = r->arg;
	char			 why[sizeof(r->why)];

	(void)fd;
	(void)ev;
	memcpy(why, r->why, sizeof(why));
	res.error = why;
	creq_free(r);
	cb(cbarg, &res);
}

/* Report a failure from a zero timer (never from inside a call). */
static void
creq_fail(struct client_req *r, const char *why, int permanent)
{
	struct timeval	 tv = { 0, 0 };

	snprintf(r->why, sizeof(r->why), "%s", why);
	r->early.permanent = permanent;
	r->early.not_sent = 1;
	evtimer_add(&r->fail, &tv);
}

/* The relay's addresses are known: send (outbound tries them in order). */
static void
client_resolved_cb(void *arg, const struct resolve_result *rr)
{
	struct client_req	*r = arg;
	struct outbound_msg	 m;

	r->rr = NULL;
	/* The host is in the URL that messages show (client_why). */
	if (rr->status == RESOLVE_NOTFOUND) {
		creq_fail(r, strstr(rr->why, "no address") != NULL ?
		    "name has no address" : "name not found", 1);
		return;
	}
	if (rr->status != RESOLVE_OK) {
		creq_fail(r, strstr(rr->why, "timed out") != NULL ?
		    "ETIMEDOUT" : rr->why, rr->status != RESOLVE_TEMPORARY);
		return;
	}
	m = (struct outbound_msg){ r->method, r->path, r->h, r->nh, r->body,
	    r->len };
	r->out = outbound_send(cl.target, rr, &m, client_sent_cb, r);
	if (r->out == NULL)
		creq_fail(r, "cannot connect", 0);
}

/* Send a request to the relay; see cli.h. */
struct client_req *
client_request(enum outbound_method m, const char *path,
    const struct outbound_header *h, size_t nh, const void *body, size_t len,
    client_cb cb, void *arg)
{
	struct client_req	*r = xcalloc(1, sizeof(*r));
	size_t			 i;

	r->method = m;
	r->path = xjoin(cl.prefix, "", path);
	if (cl.auth != NULL)
		r->h[r->nh++] = (struct outbound_header){ "Authorization",
		    cl.auth };
	for (i = 0; i < nh && r->nh < sizeof(r->h) / sizeof(r->h[0]); i++) {
		r->hcopy[r->nhcopy++] = xstrdup(h[i].key);
		r->hcopy[r->nhcopy++] = xstrdup(h[i].value);
		r->h[r->nh++] = (struct outbound_header){
		    r->hcopy[r->nhcopy - 2], r->hcopy[r->nhcopy - 1] };
	}
	if (len > 0) {
		r->body = xmalloc(len);
		memcpy(r->body, body, len);
	}
	r->len = len;
	r->cb = cb;
	r->arg = arg;
	evtimer_assign(&r->fail, cl.base, client_fail_cb, r);
	if (cl.inflight >= MAX_INFLIGHT) {
		r->queued = 1;
		TAILQ_INSERT_TAIL(&cl.queue, r, entry);
	} else
		creq_start(r);
	return r;
}

/* Take a slot: resolve (usually from the pin cache), then send. */
static void
creq_start(struct client_req *r)
{
	cl.inflight++;
	r->rr = resolve_host(outbound_target_host(cl.target),
	    outbound_target_port(cl.target), RESOLVE_ANY, client_resolved_cb,
	    r);
}

/* Abandon a request. */
void
client_cancel(struct client_req *r)
{
	if (r->rr != NULL)
		resolve_cancel(r->rr);
	if (r->out != NULL)
		outbound_cancel(r->out);
	creq_free(r);
}

/* Worth retrying: no answer (unless it never can be), 429, 502-504. */
int
client_transient(const struct client_result *r)
{
	if (r->status == 0)
		return !r->permanent;
	return r->status == 429 || r->status == 502 || r->status == 503 ||
	    r->status == 504;
}

/* "503", or the error without an answer. */
const char *
client_what(const struct client_result *r, char *buf, size_t len)
{
	if (r->status != 0)
		snprintf(buf, len, "%d", r->status);
	else
		snprintf(buf, len, "%s", r->error != NULL ? r->error :
		    "no answer");
	return buf;
}

/*
 * Where messages say the relay is: the URL, and where it came from when
 * that was not --url (the default is the usual surprise).
 */
static const char *
client_where(char *buf, size_t len)
{
	if (strcmp(cl.url_from, "default") == 0)
		snprintf(buf, len, "%s (the default: no %s, and TREATY_URL "
		    "is not set)", cl.shown, cl.url_opt);
	else if (strcmp(cl.url_from, "TREATY_URL") == 0)
		snprintf(buf, len, "%s (TREATY_URL)", cl.shown);
	else
		snprintf(buf, len, "%s", cl.shown);
	return buf;
}

/*
 * Why a request failed, for a message: "503: <the relay's detail>", or
 * without an answer "connection refused at <URL> (the default: ...)".
 */
const char *
client_why(const struct client_result *r, char *buf, size_t len)
{
	char	 d[200], w[512];

	if (r->status != 0) {
		client_detail(r, d, sizeof(d));
		snprintf(buf, len, "%d%s%s", r->status, d[0] != '\0' ? ": " :
		    "", d);
	} else
		snprintf(buf, len, "%s at %s", r->error != NULL ? r->error :
		    "no answer", cl.shown != NULL ? client_where(w,
		    sizeof(w)) : "the relay");
	return buf;
}

/*
 * The server's words go to a terminal and into log lines: its control
 * characters (C0, DEL, and C1 as UTF-8), which could move the cursor,
 * clear the screen or start a forged log line, become '?'.
 */
void
client_clean(char *s)
{
	unsigned char	*p = (unsigned char *)s;

	for (; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			p[0] = '?';
			p[1] = '?';
			p++;
		}
}

/* The string member key of the relay's JSON error body, or "". */
const char *
client_error_member(const struct client_result *r, const char *key,
    char *buf, size_t len)
{
	const char	*path[] = { key, NULL };
	yajl_val	 root, v;
	char		*text;

	buf[0] = '\0';
	if (r->body == NULL || r->bodylen == 0 || r->bodylen > DETAIL_BODY_MAX)
		return buf;
	text = xstrndup(r->body, r->bodylen);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root != NULL && (v = yajl_tree_get(root, path, yajl_t_string)) !=
	    NULL)
		snprintf(buf, len, "%s", YAJL_GET_STRING(v));
	yajl_tree_free(root);
	client_clean(buf);
	return buf;
}

/* The "detail" (or "error") of the relay's JSON error body. */
const char *
client_detail(const struct client_result *r, char *buf, size_t len)
{
	if (client_error_member(r, "detail", buf, len)[0] == '\0')
		client_error_member(r, "error", buf, len);
	return buf;
}

/* Backoff timer: run the retried request again. */
static void
retry_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct retry	*r = arg;

	(void)fd;
	(void)ev;
	r->fn(r->arg);
}

/* Set up a retry for requests of one kind. */
void
retry_init(struct retry *r, const char *what, void (*fn)(void *), void *arg)
{
	memset(r, 0, sizeof(*r));
	r->what = what;
	r->fn = fn;
	r->arg = arg;
	evtimer_assign(&r->timer, cl.base, retry_timer_cb, r);
}

/* The backoff after the n-th failure, at least Retry-After (capped). */
int64_t
retry_delay_ms(unsigned n, const char *retry_after)
{
	uint32_t	 rnd;
	int64_t		 d, ra;

	if (RAND_bytes((unsigned char *)&rnd, sizeof(rnd)) != 1)
		rnd = (uint32_t)now_ms();
	d = treaty_backoff_ms(n, cl.retry_base, cl.retry_cap, rnd);
	if ((ra = outbound_retry_after_ms(retry_after, time(NULL))) > 0) {
		if (ra > cl.retry_cap)
			ra = cl.retry_cap;
		if (ra > d)
			d = ra;
	}
	return d;
}

/* One notice, then the next attempt after the backoff. */
void
retry_later(struct retry *r, const struct client_result *res)
{
	struct timeval	 tv;
	int64_t		 d;
	char		 what[96];

	r->attempt++;
	d = retry_delay_ms(r->attempt, res->retry_after);
	/*
	 * Metadata only: never the body, the token or the event.  Without
	 * an answer, where the client looked (the URL shows no userinfo).
	 */
	if (res->status == 0 && cl.shown != NULL)
		log_warnx("attempt failed; retrying", "request=%s attempt=%u "
		    "result=%s url=%s url_from=%s delay_ms=%lld", r->what,
		    r->attempt, log_q(client_what(res, what, sizeof(what))),
		    log_q(cl.shown), cl.url_from, (long long)d);
	else
		log_warnx("attempt failed; retrying", "request=%s attempt=%u "
		    "result=%s delay_ms=%lld", r->what, r->attempt,
		    log_q(client_what(res, what, sizeof(what))),
		    (long long)d);
	tv.tv_sec = d / 1000;
	tv.tv_usec = d % 1000 * 1000;
	evtimer_add(&r->timer, &tv);
}

/* Success: start again from the first delay. */
void
retry_reset(struct retry *r)
{
	r->attempt = 0;
}

/* Cancel a pending backoff (nothing when r was never set up). */
void
retry_cancel(struct retry *r)
{
	if (r->fn != NULL)
		event_del(&r->timer);
}

/* Whether a backoff is pending. */
int
retry_pending(const struct retry *r)
{
	return r->fn != NULL && evtimer_pending(&r->timer, NULL);
}
