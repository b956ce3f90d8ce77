/*
 * outbound.c: HTTP requests with evhttp's client, over a
 * bufferevent_openssl for https.  Loop thread only.
 *
 * Pinning: each connection is made to the numeric address the caller
 * resolved and validated, so evhttp never looks the host up again (a
 * numeric address never reaches a resolver in libevent).  The URL's host
 * still goes where it must: the Host header, TLS SNI and the certificate's
 * name check, which we set on the SSL object ourselves
 * (SSL_set_tlsext_host_name, SSL_set1_host) because no URL helper sees it.
 *
 * Connections: evhttp reconnects a closed connection on the same
 * bufferevent, which an SSL bufferevent cannot do, so a connection that
 * closes, fails or times out is thrown away and a new one made next time.
 * Idle connections are kept up to the target's max_idle.  Freeing happens
 * from a zero timer, never inside evhttp's own callbacks.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <netinet/in.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "netcheck.h"
#include "outbound.h"
#include "util.h"

#define MAX_RESPONSE_BODY	(1024 * 1024)
#define RETRY_AFTER_MAX_S	86400	/* longer is capped by callers anyway */

struct ob_conn {
	struct outbound_target	*t;
	struct evhttp_connection *evcon;
	struct sockaddr_storage	 addr;
	socklen_t		 addrlen;
	int			 busy;
	int			 dead;		/* never reuse; free when idle */
	int			 buried;	/* on ob.graves */
	int			 idle;		/* kept for reuse: at the head */
	int			 answered;	/* requests it finished */
	/*
	 * While it connects: evhttp's event callback, which ob_connect_cb
	 * wraps, and why the connect or the TLS handshake failed (see
	 * struct outbound_result).
	 */
	bufferevent_event_cb	 evcb;
	void			*evarg;
	int			 sys_errno;
	long			 cert_error;
	unsigned long		 tls_error;
	TAILQ_ENTRY(ob_conn)	 entry;
};
TAILQ_HEAD(ob_conn_list, ob_conn);

struct outbound_target {
	char			*host;		/* as in the URL, no brackets */
	char			*hosthdr;	/* Host: header value */
	char			*target;	/* path and query */
	int			 port;
	int			 tls;
	int			 max_idle;
	size_t			 max_body;
	/* Idle connections first (most recently used first), then busy. */
	struct ob_conn_list	 conns;
	int			 nconns;
	int			 nidle;
};

/* The message kept to try the next address: one allocation. */
struct ob_copy {
	struct outbound_msg	 m;
	struct outbound_header	*h;
};

struct outbound_req {
	struct outbound_target	*t;
	struct ob_conn		*conn;
	struct evhttp_request	*req;
	outbound_cb		 cb;
	void			*arg;
	struct event		 deadline;
	long long		 start;
	struct resolve_result	 to;		/* the addresses, in order */
	int			 addr;		/* the one being tried */
	struct ob_copy		*copy;		/* to send again, or NULL */
	int			 reused;	/* on a kept connection */
	int			 fresh;		/* the next on a new one */
	enum evhttp_request_error err;
	int			 have_err;
	int			 not_started;	/* failed inside evhttp_make_request */
	int			 in_send;	/* inside evhttp_make_request */
};

static struct {
	struct event_base	*base;
	SSL_CTX			*ctx;
	int			 deadline_ms;
	int			 idle_s;
	char			*agent;
	struct event		*reaper;	/* frees dead connections */
	struct ob_conn_list	 graves;
} ob;

/* Free connections that died, outside evhttp's callbacks. */
static void
ob_reap_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ob_conn	*c;

	(void)fd;
	(void)ev;
	(void)arg;
	while ((c = TAILQ_FIRST(&ob.graves)) != NULL) {
		TAILQ_REMOVE(&ob.graves, c, entry);
		/* evhttp_connection_free would call ob_closed_cb again. */
		evhttp_connection_set_closecb(c->evcon, NULL, NULL);
		evhttp_connection_free(c->evcon);
		free(c);
	}
}

/* Take c out of its target and free it soon. */
static void
ob_conn_bury(struct ob_conn *c)
{
	if (c->buried)
		return;
	c->buried = 1;
	if (c->idle) {
		c->idle = 0;
		c->t->nidle--;
	}
	TAILQ_REMOVE(&c->t->conns, c, entry);
	c->t->nconns--;
	TAILQ_INSERT_TAIL(&ob.graves, c, entry);
	event_active(ob.reaper, EV_TIMEOUT, 0);
}

/* evhttp: the connection closed; it is never reused. */
static void
ob_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct ob_conn	*c = arg;

	(void)evcon;
	c->dead = 1;
	if (!c->busy)
		ob_conn_bury(c);
}

/* Set up the pool and, for https, the TLS context. */
int
outbound_init(struct event_base *base, const char *ca_file, int deadline_ms,
    int idle_ms, const char *agent)
{
	ob.base = base;
	ob.agent = xstrdup(agent);
	ob.deadline_ms = deadline_ms;
	ob.idle_s = (idle_ms + 999) / 1000;
	TAILQ_INIT(&ob.graves);
	ob.reaper = event_new(base, -1, 0, ob_reap_cb, NULL);
	if ((ob.ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return -1;
	SSL_CTX_set_min_proto_version(ob.ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ob.ctx, SSL_VERIFY_PEER, NULL);
	if (ca_file != NULL) {
		if (SSL_CTX_load_verify_locations(ob.ctx, ca_file, NULL) != 1)
			return -1;	/* config.c checked it; the caller logs */
	} else
		SSL_CTX_set_default_verify_paths(ob.ctx);
	return 0;
}

/* Free the TLS context and the reaper. */
void
outbound_free(void)
{
	ob_reap_cb(-1, 0, NULL);
	if (ob.reaper != NULL)
		event_free(ob.reaper);
	ob.reaper = NULL;
	SSL_CTX_free(ob.ctx);
	ob.ctx = NULL;
	free(ob.agent);
	ob.agent = NULL;
}

/* A target from its URL. */
struct outbound_target *
outbound_target_new(const char *url, int max_idle)
{
	struct evhttp_uri	*u = evhttp_uri_parse_with_flags(url, 0);
	struct outbound_target	*t;
	const char		*scheme, *host, *path, *query;
	size_t			 n, tn;
	int			 port, tls;

	if (u == NULL)
		return NULL;
	scheme = evhttp_uri_get_scheme(u);
	host = evhttp_uri_get_host(u);
	if (scheme == NULL || host == NULL || host[0] == '\0' ||
	    (strcasecmp(scheme, "https") != 0 &&
	    strcasecmp(scheme, "http") != 0)) {
		evhttp_uri_free(u);
		return NULL;
	}
	tls = strcasecmp(scheme, "https") == 0;
	port = evhttp_uri_get_port(u);
	if (port <= 0)
		port = tls ? 443 : 80;
	t = xcalloc(1, sizeof(*t));
	n = strlen(host);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
		t->host = xstrndup(host + 1, n - 2);
	else
		t->host = xstrdup(host);
	t->hosthdr = xmalloc(n + 8);
	if ((tls && port == 443) || (!tls && port == 80))
		snprintf(t->hosthdr, n + 8, "%s", host);
	else
		snprintf(t->hosthdr, n + 8, "%s:%d", host, port);
	path = evhttp_uri_get_path(u);
	query = evhttp_uri_get_query(u);
	if (path == NULL || path[0] == '\0')
		path = "/";
	tn = strlen(path) + (query ? strlen(query) + 1 : 0) + 1;
	t->target = xmalloc(tn);
	snprintf(t->target, tn, "%s%s%s", path, query ? "?" : "",
	    query ? query : "");
	t->port = port;
	t->tls = tls;
	t->max_idle = max_idle > 0 ? max_idle : 1;
	t->max_body = MAX_RESPONSE_BODY;
	TAILQ_INIT(&t->conns);
	evhttp_uri_free(u);
	return t;
}

/* The largest response body accepted from t. */
void
outbound_target_set_max_body(struct outbound_target *t, size_t bytes)
{
	t->max_body = bytes;
}

/* The host to resolve. */
const char *
outbound_target_host(const struct outbound_target *t)
{
	return t->host;
}

/* The port to connect to. */
int
outbound_target_port(const struct outbound_target *t)
{
	return t->port;
}

/* https or plain http. */
int
outbound_target_tls(const struct outbound_target *t)
{
	return t->tls;
}

/* Open connections. */
int
outbound_target_conns(const struct outbound_target *t)
{
	return t->nconns;
}

/* Close every connection and free the target (no request may be open). */
void
outbound_target_free(struct outbound_target *t)
{
	struct ob_conn	*c;

	while ((c = TAILQ_FIRST(&t->conns)) != NULL)
		ob_conn_bury(c);
	ob_reap_cb(-1, 0, NULL);
	free(t->host);
	free(t->hosthdr);
	free(t->target);
	free(t);
}

/* The SSL object for one connection: SNI and the name check. */
static SSL *
ob_ssl_new(const char *host)
{
	SSL			*ssl = SSL_new(ob.ctx);
	struct in6_addr		 a6;
	struct in_addr		 a4;
	int			 numeric;

	if (ssl == NULL)
		return NULL;
	numeric = netcheck_pton(AF_INET, host, &a4) == 1 ||
	    netcheck_pton(AF_INET6, host, &a6) == 1;
	if (numeric) {
		/* No SNI for an address; check the certificate's IP. */
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1)
			goto fail;
	} else if (SSL_set_tlsext_host_name(ssl, host) != 1 ||
	    SSL_set1_host(ssl, host) != 1)
		goto fail;
	SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
	return ssl;
fail:
	SSL_free(ssl);
	return NULL;
}

/* A new connection of t to addr. */
static struct ob_conn *
ob_conn_new(struct outbound_target *t, const struct sockaddr *addr,
    socklen_t addrlen)
{
	struct ob_conn		*c;
	struct bufferevent	*bev;
	char			 ip[INET6_ADDRSTRLEN];
	const void		*in;
	SSL			*ssl;

	in = addr->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)(const void *)addr)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;
	if (evutil_inet_ntop(addr->sa_family, in, ip, sizeof(ip)) == NULL)
		return NULL;
	if (t->tls) {
		if ((ssl = ob_ssl_new(t->host)) == NULL)
			return NULL;
		bev = bufferevent_openssl_socket_new(ob.base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING,
		    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
		if (bev == NULL) {
			SSL_free(ssl);
			return NULL;
		}
		/* Many servers end TLS without close_notify; the body is framed. */
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	} else
		bev = bufferevent_socket_new(ob.base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		return NULL;
	c = xcalloc(1, sizeof(*c));
	c->t = t;
	/* A numeric address: evhttp connects without any lookup. */
	c->evcon = evhttp_connection_base_bufferevent_new(ob.base, NULL, bev,
	    ip, (ev_uint16_t)t->port);
	if (c->evcon == NULL) {
		bufferevent_free(bev);
		free(c);
		return NULL;
	}
	memcpy(&c->addr, addr, addrlen);
	c->addrlen = addrlen;
	evhttp_connection_set_timeout(c->evcon, ob.idle_s);
	evhttp_connection_set_max_body_size(c->evcon, (ev_ssize_t)t->max_body);
	evhttp_connection_set_closecb(c->evcon, ob_closed_cb, c);
	TAILQ_INSERT_TAIL(&t->conns, c, entry);
	t->nconns++;
	return c;
}

/*
 * An errno that says why a connect or a handshake's read or write failed.
 * After a BEV_EVENT_EOF (a TLS connection closed under its handshake)
 * the socket error may be a leftover of anything: only these count.
 */
static int
ob_connect_errno(int e)
{
	switch (e) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ECONNABORTED:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETUNREACH:
	case ENETDOWN:
	case ETIMEDOUT:
	case EADDRNOTAVAIL:
	case EACCES:
	case EPERM:
	case EPIPE:
		return 1;
	}
	return 0;
}

/*
 * The event callback of a connection that connects: note why the connect
 * or the TLS handshake failed, which evhttp does not pass on (the request
 * fails with no error, or "connection closed"), then evhttp's own.
 * libevent sets the socket error for the event (and keeps it across
 * deferred callbacks); evhttp reads it too (ECONNREFUSED), so it is left
 * as it was.  Once connected, evhttp sets callbacks of its own.
 */
static void
ob_connect_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ob_conn	*c = arg;
	int		 e = EVUTIL_SOCKET_ERROR();
	unsigned long	 te;
	SSL		*ssl;

	if (!(what & BEV_EVENT_CONNECTED)) {
		if ((what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) &&
		    ob_connect_errno(e))
			c->sys_errno = e;
		/* X509_V_OK (0) unless the peer's certificate was refused. */
		if ((ssl = bufferevent_openssl_get_ssl(bev)) != NULL)
			c->cert_error = SSL_get_verify_result(ssl);
		/*
		 * bufferevent_openssl queues SSL_get_error's code first (a
		 * small number, no library), then OpenSSL's errors.
		 */
		while ((te = bufferevent_get_openssl_error(bev)) != 0)
			if (c->tls_error == 0 && ERR_GET_LIB(te) != 0)
				c->tls_error = te;
		EVUTIL_SET_SOCKET_ERROR(e);
	}
	c->evcb(bev, what, c->evarg);
}

/*
 * A new connection that evhttp has begun to connect: wrap its event
 * callback.  While connecting, evhttp has set that one alone
 * (evhttp_connection_connect_); otherwise nothing is changed.
 */
static void
ob_conn_watch(struct ob_conn *c)
{
	struct bufferevent	*bev;
	bufferevent_data_cb	 rd, wr;
	bufferevent_event_cb	 ev;
	void			*arg;

	if ((bev = evhttp_connection_get_bufferevent(c->evcon)) == NULL)
		return;
	bufferevent_getcb(bev, &rd, &wr, &ev, &arg);
	if (rd != NULL || wr != NULL || ev == NULL || ev == ob_connect_cb)
		return;
	c->evcb = ev;
	c->evarg = arg;
	bufferevent_setcb(bev, NULL, NULL, ob_connect_cb, c);
}

/* Bytes the peer sent that no request of ours has read. */
static size_t
ob_conn_unread(struct ob_conn *c)
{
	struct bufferevent	*bev;

	bev = evhttp_connection_get_bufferevent(c->evcon);
	return bev != NULL ? evbuffer_get_length(bufferevent_get_input(bev)) :
	    0;
}

/* An idle, live connection of t to addr, or a new one. */
static struct ob_conn *
ob_conn_get(struct outbound_target *t, const struct sockaddr *addr,
    socklen_t addrlen)
{
	struct ob_conn	*c, *next;

	/* Only the idle ones, at the head; usually the first one fits. */
	for (c = TAILQ_FIRST(&t->conns); c != NULL && c->idle; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->addrlen != addrlen ||
		    memcmp(&c->addr, addr, addrlen) != 0)
			continue;
		c->idle = 0;
		t->nidle--;
		/*
		 * Bytes that came while it was idle answer no request of
		 * ours: read as the next answer they would stand for a
		 * request they never saw.
		 */
		if (ob_conn_unread(c) > 0) {
			c->dead = 1;
			ob_conn_bury(c);
			continue;
		}
		TAILQ_REMOVE(&t->conns, c, entry);
		TAILQ_INSERT_TAIL(&t->conns, c, entry);
		return c;
	}
	return ob_conn_new(t, addr, addrlen);
}

/* A request is over: keep its connection for the next one, or not. */
static void
ob_conn_release(struct ob_conn *c, int reusable)
{
	c->busy = 0;
	if (!reusable)
		c->dead = 1;
	else
		c->answered++;
	if (c->dead || c->t->nidle >= c->t->max_idle) {
		ob_conn_bury(c);
		return;
	}
	c->idle = 1;
	c->t->nidle++;
	TAILQ_REMOVE(&c->t->conns, c, entry);
	TAILQ_INSERT_HEAD(&c->t->conns, c, entry);
}

/* Name of an evhttp request error. */
static const char *
ob_error_name(enum evhttp_request_error e)
{
	switch (e) {
	case EVREQ_HTTP_TIMEOUT:
		return "idle timeout";
	case EVREQ_HTTP_EOF:
		return "connection closed";
	case EVREQ_HTTP_INVALID_HEADER:
		return "bad response";
	case EVREQ_HTTP_BUFFER_ERROR:
		return "connection failed";
	case EVREQ_HTTP_REQUEST_CANCEL:
		return "cancelled";
	case EVREQ_HTTP_DATA_TOO_LONG:
		return "response body too large";
	}
	return "connection failed";
}

/* evhttp: why the request failed (comes before the done callback). */
static void
ob_error_cb(enum evhttp_request_error e, void *arg)
{
	struct outbound_req	*r = arg;

	r->err = e;
	r->have_err = 1;
}

static int	ob_attempt(struct outbound_req *, const struct outbound_msg *);

/* Free a request (its connection was released or buried already). */
static void
ob_req_free(struct outbound_req *r)
{
	event_del(&r->deadline);
	free(r->copy);
	free(r);
}

/*
 * An attempt is over.  When nothing was sent (the TCP connect failed) and
 * another address is left, try that one, in the same request; otherwise
 * report res and free the request.
 */
static void
ob_finish(struct outbound_req *r, struct outbound_result *res)
{
	/*
	 * A kept connection the subscriber closed while it was idle (servers
	 * close idle keep-alive connections after a few seconds, and the
	 * close can cross our request) fails with no answer at all: that is
	 * our pool's doing, not the subscriber's, so the request goes once
	 * more, at once, on a new connection, without counting an attempt.
	 */
	if (r->reused && !r->fresh && res->status == 0 && r->have_err &&
	    (r->err == EVREQ_HTTP_EOF || r->err == EVREQ_HTTP_BUFFER_ERROR) &&
	    r->copy != NULL) {
		log_debug("kept connection closed, sending again on a new one",
		    "host=%s error=%s", r->t->host, res->error);
		r->fresh = 1;
		if (ob_attempt(r, &r->copy->m) == 0)
			return;
	}
	while (res->not_sent && r->copy != NULL &&
	    r->addr + 1 < r->to.naddrs) {
		log_debug("address failed, trying the next", "host=%s "
		    "address=%d error=%s", r->t->host, r->addr, res->error);
		r->addr++;
		if (ob_attempt(r, &r->copy->m) == 0)
			return;
	}
	r->cb(r->arg, res);
	ob_req_free(r);
}

/* evhttp: the answer, or NULL when the request failed. */
static void
ob_done_cb(struct evhttp_request *req, void *arg)
{
	struct outbound_req	*r = arg;
	struct outbound_result	 res;
	const char		*ra = NULL;
	char			 ra_copy[64];
	struct evbuffer		*in;
	int			 reusable;

	/*
	 * A connect that fails at once (no route, no descriptor) fails the
	 * request from inside evhttp_make_request: report it later, from
	 * the zero timer ob_attempt sets, never inside the call.  evhttp
	 * frees the request when this returns.
	 */
	if (r->in_send) {
		r->not_started = 1;
		r->req = NULL;
		return;
	}
	memset(&res, 0, sizeof(res));
	event_del(&r->deadline);
	res.ms = now_ms() - r->start;
	res.resent = r->fresh;
	if (req != NULL && evhttp_request_get_response_code(req) > 0) {
		res.status = evhttp_request_get_response_code(req);
		ra = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "Retry-After");
		if (ra != NULL) {
			snprintf(ra_copy, sizeof(ra_copy), "%s", ra);
			res.retry_after = ra_copy;
		}
		in = evhttp_request_get_input_buffer(req);
		res.bodylen = evbuffer_get_length(in);
		res.body = (const char *)evbuffer_pullup(in, -1);
		/*
		 * Kept only after a final answer with nothing behind it.
		 * libevent 2.1 takes an interim answer other than 100 (103
		 * Early Hints) for the whole answer, and reads whatever
		 * follows an answer (a second one) as the next request's:
		 * on a reused connection that would answer an event the
		 * subscriber never accepted.
		 */
		reusable = res.status >= 200 && ob_conn_unread(r->conn) == 0;
	} else {
		/*
		 * evhttp fails the requests of a connection whose TCP
		 * connect failed (refused, unreachable) without an error
		 * callback; every later failure, TLS included, has one.
		 */
		res.not_sent = req != NULL && !r->have_err;
		res.error = r->have_err ? ob_error_name(r->err) :
		    "connection failed";
		res.timed_out = r->have_err && r->err == EVREQ_HTTP_TIMEOUT;
		res.sys_errno = r->conn->sys_errno;
		res.cert_error = r->conn->cert_error;
		res.tls_error = r->conn->tls_error;
		reusable = 0;
	}
	ob_conn_release(r->conn, reusable);
	r->conn = NULL;
	r->req = NULL;
	ob_finish(r, &res);
}

/* Abandon the attempt under way: its connection is closed. */
static void
ob_abandon(struct outbound_req *r)
{
	struct ob_conn	*c = r->conn;

	event_del(&r->deadline);
	/* The request is the connection's only one: cancelling resets it. */
	if (!r->not_started)
		evhttp_cancel_request(r->req);
	c->busy = 0;
	c->dead = 1;
	ob_conn_bury(c);
	r->conn = NULL;
	r->req = NULL;
}

/*
 * The deadline passed (abandon the request, report a timeout), or the
 * zero timer of a request evhttp could not start (nothing sent).
 */
static void
ob_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct outbound_req	*r = arg;
	struct outbound_result	 res;

	(void)fd;
	(void)ev;
	memset(&res, 0, sizeof(res));
	res.ms = now_ms() - r->start;
	if (r->not_started) {
		res.error = "connection failed";
		res.not_sent = 1;
		r->conn->busy = 0;
		ob_conn_bury(r->conn);
		r->conn = NULL;
	} else {
		res.error = "timeout";
		res.timed_out = 1;
		ob_abandon(r);
	}
	ob_finish(r, &res);
}

/*
 * Send m on a connection to the address being tried, within what is left
 * of the request's deadline.  -1 when no connection can be made.
 */
static int
ob_attempt(struct outbound_req *r, const struct outbound_msg *m)
{
	static const enum evhttp_cmd_type cmd[] = {
		[OUTBOUND_POST] = EVHTTP_REQ_POST,
		[OUTBOUND_GET] = EVHTTP_REQ_GET,
		[OUTBOUND_DELETE] = EVHTTP_REQ_DELETE,
		[OUTBOUND_PUT] = EVHTTP_REQ_PUT,
	};
	struct outbound_target	*t = r->t;
	struct evkeyvalq	*oh;
	struct timeval		 tv;
	char			 clen[24];
	size_t			 i;
	long long		 left;

	r->have_err = 0;
	r->not_started = 0;
	if ((r->conn = r->fresh ? ob_conn_new(t,
	    (const struct sockaddr *)&r->to.addrs[r->addr],
	    r->to.addrlens[r->addr]) : ob_conn_get(t,
	    (const struct sockaddr *)&r->to.addrs[r->addr],
	    r->to.addrlens[r->addr])) == NULL)
		return -1;
	r->reused = r->conn->answered > 0;
	r->conn->busy = 1;
	r->req = evhttp_request_new(ob_done_cb, r);
	evhttp_request_set_error_cb(r->req, ob_error_cb);
	oh = evhttp_request_get_output_headers(r->req);
	evhttp_add_header(oh, "Host", t->hosthdr);
	evhttp_add_header(oh, "User-Agent", ob.agent);
	if (m->method == OUTBOUND_POST || m->method == OUTBOUND_PUT ||
	    m->len > 0) {
		snprintf(clen, sizeof(clen), "%zu", m->len);
		evhttp_add_header(oh, "Content-Length", clen);
	}
	for (i = 0; i < m->nh; i++)
		evhttp_add_header(oh, m->h[i].key, m->h[i].value);
	evbuffer_add(evhttp_request_get_output_buffer(r->req), m->body, m->len);
	/* The deadline is the request's, over all of its addresses. */
	left = r->start + ob.deadline_ms - now_ms();
	if (left < 0)
		left = 0;
	tv.tv_sec = left / 1000;
	tv.tv_usec = left % 1000 * 1000;
	evtimer_add(&r->deadline, &tv);
	/*
	 * A connection refused or reset is reported later through ob_done_cb;
	 * -1 here means evhttp could not even start (out of memory): report
	 * that from the deadline timer, at once, without touching the request.
	 */
	r->in_send = 1;
	if (evhttp_make_request(r->conn->evcon, r->req, cmd[m->method],
	    m->path != NULL ? m->path : t->target) == -1)
		r->not_started = 1;
	r->in_send = 0;
	/* A connection of its own (none answered on it): it connects now. */
	if (!r->not_started && r->conn->answered == 0)
		ob_conn_watch(r->conn);
	if (r->not_started) {
		event_del(&r->deadline);
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		evtimer_add(&r->deadline, &tv);
	}
	return 0;
}

/* A copy of m in one allocation, to send it again to another address. */
static struct ob_copy *
ob_copy_new(const struct outbound_msg *m)
{
	struct ob_copy	*c;
	size_t		 n = sizeof(*c) + m->nh * sizeof(*c->h) + m->len + 1;
	size_t		 i;
	char		*p;

	if (m->path != NULL)
		n += strlen(m->path) + 1;
	for (i = 0; i < m->nh; i++)
		n += strlen(m->h[i].key) + strlen(m->h[i].value) + 2;
	c = xmalloc(n);
	c->m = *m;
	c->h = (struct outbound_header *)(void *)(c + 1);
	p = (char *)(c->h + m->nh);
	for (i = 0; i < m->nh; i++) {
		c->h[i].key = p;
		p = stpcpy(p, m->h[i].key) + 1;
		c->h[i].value = p;
		p = stpcpy(p, m->h[i].value) + 1;
	}
	c->m.h = c->h;
	if (m->path != NULL) {
		c->m.path = p;
		p = stpcpy(p, m->path) + 1;
	}
	if (m->len > 0)
		memcpy(p, m->body, m->len);
	c->m.body = p;
	return c;
}

/* Send a request to t; see outbound.h. */
struct outbound_req *
outbound_send(struct outbound_target *t, const struct resolve_result *to,
    const struct outbound_msg *m, outbound_cb cb, void *arg)
{
	struct outbound_req	*r;

	if (to->naddrs < 1)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->t = t;
	r->cb = cb;
	r->arg = arg;
	r->to = *to;
	r->start = now_ms();
	if (r->to.naddrs > RESOLVE_MAX_ADDRS)
		r->to.naddrs = RESOLVE_MAX_ADDRS;
	evtimer_assign(&r->deadline, ob.base, ob_deadline_cb, r);
	/*
	 * Kept only when there is a next address to send it to, or a kept
	 * connection may be taken (ob_finish may send it again).
	 */
	if (r->to.naddrs > 1 || t->nidle > 0)
		r->copy = ob_copy_new(m);
	if (ob_attempt(r, m) == -1) {
		ob_req_free(r);
		return NULL;
	}
	return r;
}

/* Why r has no answer, in words; see outbound.h. */
const char *
outbound_why(const struct outbound_result *r, char *buf, size_t len)
{
	char		 tmp[128];
	const char	*s;

	if (r->cert_error != X509_V_OK)
		snprintf(buf, len, "certificate verify failed: %s",
		    X509_verify_cert_error_string(r->cert_error));
	else if (r->sys_errno != 0) {
		/* strerror's "Connection refused", as messages write it. */
		s = strerror_r(r->sys_errno, tmp, sizeof(tmp));
		snprintf(buf, len, "%c%s", tolower((unsigned char)s[0]),
		    s[0] != '\0' ? s + 1 : "");
	} else if (r->tls_error != 0 &&
	    (s = ERR_reason_error_string(r->tls_error)) != NULL)
		snprintf(buf, len, "TLS handshake failed: %s", s);
	else
		snprintf(buf, len, "%s", r->error != NULL ? r->error :
		    "no answer");
	return buf;
}

/* Abandon a request and its connection. */
void
outbound_cancel(struct outbound_req *r)
{
	if (r->conn != NULL)
		ob_abandon(r);
	ob_req_free(r);
}

/* Retry-After as milliseconds; see outbound.h. */
long long
outbound_retry_after_ms(const char *v, long long now)
{
	struct tm	 tm;
	char		*end;
	long long	 secs;

	if (v == NULL)
		return -1;
	while (*v == ' ')
		v++;
	if (isdigit((unsigned char)*v)) {
		secs = strtoll(v, &end, 10);
		if (secs > RETRY_AFTER_MAX_S)
			secs = RETRY_AFTER_MAX_S;	/* no overflow below */
		while (*end == ' ')
			end++;
		return *end == '\0' ? secs * 1000 : -1;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL)
		return -1;
	secs = (long long)timegm(&tm) - now;
	if (secs > RETRY_AFTER_MAX_S)
		secs = RETRY_AFTER_MAX_S;
	return secs > 0 ? secs * 1000 : 0;
}
