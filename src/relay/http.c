/*
 * http.c: the evhttp server: route table, reply helpers, /healthz and
 * /metrics.  Loop thread only.
 *
 * A request we answer later (after JetStream's acknowledgement) stays valid
 * even if its client leaves: evhttp 2.1 detaches a request the user has not
 * answered from its dying connection (evhttp_connection_incoming_fail) and
 * frees it when we finally call evhttp_send_reply.  Every request is
 * answered before http_free(), which would free attached ones.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <errno.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "treaty.h"
#include "config.h"
#include "http.h"
#include "inbox.h"
#include "ingest.h"
#include "json.h"
#include "api.h"
#include "log.h"
#include "metrics.h"
#include "store.h"

static struct evhttp			*http;
static struct evhttp_bound_socket	*http_sock;
static int				 http_stopping;
static struct event			*http_resume_ev;

#define ACCEPT_PAUSE_MS		1000	/* after running out of descriptors */

/* Answer with body (consumed), Content-Type application/json. */
void
http_reply(struct evhttp_request *req, enum route route, int status,
    struct evbuffer *body)
{
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(req);

	evhttp_add_header(oh, "Content-Type", route == ROUTE_METRICS &&
	    status == 200 ? "text/plain; version=0.0.4" : "application/json");
	evhttp_add_header(oh, "Cache-Control", "no-store");
	if (http_stopping)
		evhttp_add_header(oh, "Connection", "close");
	metrics_request(route, status);
	evhttp_send_reply(req, status, NULL, body);
}

/* Answer a JSON error. */
void
http_error(struct evhttp_request *req, enum route route, int status,
    const char *code, const char *detail)
{
	struct evbuffer		*b = evbuffer_new();
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(req);

	if (status == 503)
		evhttp_add_header(oh, "Retry-After", HTTP_RETRY_AFTER);
	json_error_body(b, code, detail);
	http_reply(req, route, status, b);
	evbuffer_free(b);
}

/* 405 with Allow. */
static void
http_not_allowed(struct evhttp_request *req, enum route route,
    const char *allow)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    allow);
	http_error(req, route, 405, "method_not_allowed", "use GET");
}

/* GET /healthz: cheap, from state the loop already has. */
static void
http_healthz(struct evhttp_request *req)
{
	struct evbuffer	*b = evbuffer_new();
	const char	*nats = store_connected() ? "connected" : "disconnected";
	const char	*streams = store_streams_ready() ? "ready" : "not_ready";
	const char	*reason = http_stopping ? "shutting_down" :
			    !store_connected() ? "nats_disconnected" :
			    !store_streams_ready() ? "streams_not_ready" : NULL;

	if (reason == NULL) {
		const char *const k[] = { "status", "nats", "streams",
		    "version" };
		const char *const v[] = { "ok", nats, streams, TREATY_VERSION };

		json_object_body(b, k, v, 4);
		http_reply(req, ROUTE_HEALTHZ, 200, b);
	} else {
		const char *const k[] = { "status", "reason", "nats", "streams",
		    "version" };
		const char *const v[] = { "unavailable", reason, nats, streams,
		    TREATY_VERSION };

		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", HTTP_RETRY_AFTER);
		json_object_body(b, k, v, 5);
		http_reply(req, ROUTE_HEALTHZ, 503, b);
	}
	evbuffer_free(b);
}

/* GET /metrics. */
static void
http_metrics(struct evhttp_request *req)
{
	struct evbuffer	*b = evbuffer_new();

	metrics_render(b);
	http_reply(req, ROUTE_METRICS, 200, b);
	evbuffer_free(b);
}

/* Every request: route by path. */
static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);

	(void)arg;
	if (path == NULL)
		path = "";
	if (strncmp(path, "/v1/events/", 11) == 0) {
		if (http_stopping) {
			http_error(req, ROUTE_EVENTS, 503, "publish_failed",
			    "the relay is shutting down");
			return;
		}
		ingest_handle(req, path + 11);
	} else if (strncmp(path, "/v1/inbox/", 10) == 0) {
		inbox_handle(req, path + 10);
	} else if (strcmp(path, "/healthz") == 0) {
		if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD)
			http_not_allowed(req, ROUTE_HEALTHZ, "GET, HEAD");
		else
			http_healthz(req);
	} else if (strcmp(path, "/metrics") == 0) {
		if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD)
			http_not_allowed(req, ROUTE_METRICS, "GET, HEAD");
		else
			http_metrics(req);
	} else
		http_error(req, ROUTE_OTHER, 404, "not_found",
		    "no such route; events go to POST /v1/events/<subject>");
}

/* The pause after a failed accept is over: accept again. */
static void
http_resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct evconnlistener	*l;

	(void)fd;
	(void)ev;
	(void)arg;
	if (http_sock != NULL &&
	    (l = evhttp_bound_socket_get_listener(http_sock)) != NULL)
		evconnlistener_enable(l);
}

/*
 * accept() failed for a reason retrying at once cannot fix, such as no
 * descriptors left (EMFILE): without this libevent would try again on
 * every loop iteration, spinning the CPU and writing a line each time.
 * Stop accepting for a second; the connections we have keep being served
 * and, as they close, free descriptors.
 */
static void
http_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval	 tv = { ACCEPT_PAUSE_MS / 1000, 0 };

	(void)arg;
	log_warn("accept failed, pausing new connections", "pause_ms=%d",
	    ACCEPT_PAUSE_MS);
	evconnlistener_disable(l);
	event_add(http_resume_ev, &tv);
}

/* Bind and listen. */
void
http_init(struct event_base *base, const struct config *cfg)
{
	if ((http = evhttp_new(base)) == NULL)
		fatalx("cannot create the HTTP server", NULL);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(http, HTTP_MAX_HEADERS);
	/*
	 * libevent refuses larger bodies itself: on Content-Length before
	 * reading (413 at once, then it closes the connection), and while
	 * reading a chunked body.  Not EVHTTP_SERVER_LINGERING_CLOSE: that
	 * would read and discard the whole announced body first.
	 */
	evhttp_set_max_body_size(http, API_BODY_MAX);
	evhttp_set_timeout(http, cfg->http_timeout_seconds);
	evhttp_set_gencb(http, http_request_cb, NULL);
	http_sock = evhttp_bind_socket_with_handle(http, cfg->listen,
	    (ev_uint16_t)cfg->port);
	if (http_sock == NULL)
		fatalx("cannot listen", "addr=%s port=%d", log_q(cfg->listen),
		    cfg->port);
	/*
	 * Accepted sockets inherit TCP_NODELAY on Linux.  Without it, the
	 * last segment of a large answer (an inbox batch) waits for the
	 * client's delayed acknowledgement: 40 ms per GET.
	 */
	{
		int	 one = 1;

		if (setsockopt(evhttp_bound_socket_get_fd(http_sock),
		    IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
			log_warn("cannot set TCP_NODELAY", NULL);
	}
	http_resume_ev = evtimer_new(base, http_resume_cb, NULL);
	if (http_resume_ev == NULL)
		fatalx("cannot create the accept timer", NULL);
	evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(http_sock),
	    http_accept_error_cb);
	log_info("listening", "addr=%s port=%d", log_q(cfg->listen),
	    cfg->port);
}

/* A reload: the idle timeout of connections accepted from now on. */
void
http_reload(const struct config *cfg)
{
	evhttp_set_timeout(http, cfg->http_timeout_seconds);
}

/* Stop accepting connections; keep answering those we have. */
void
http_stop_accepting(void)
{
	http_stopping = 1;
	if (http_resume_ev != NULL)
		event_del(http_resume_ev);
	if (http_sock != NULL) {
		evhttp_del_accept_socket(http, http_sock);
		http_sock = NULL;
	}
}

/* Whether a waiting request's client closed its connection; see http.h. */
int
http_client_gone(struct evhttp_request *req)
{
	struct evhttp_connection	*c = evhttp_request_get_connection(req);
	struct bufferevent		*bev;
	evutil_socket_t			 fd;
	char				 b;
	ssize_t				 n;

	if (c == NULL)
		return 1;	/* evhttp saw it go */
	if ((bev = evhttp_connection_get_bufferevent(c)) == NULL ||
	    (fd = bufferevent_getfd(bev)) == -1)
		return 0;
	/* 0: the peer closed; data (a pipelined request) or EAGAIN: alive. */
	n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR);
}

/* 1 once shutdown began. */
int
http_draining(void)
{
	return http_stopping;
}

/* An integer query parameter in [lo, hi]; -1 when absent, -2 when bad. */
long long
http_query_int(const struct evkeyvalq *q, const char *key, long long lo,
    long long hi)
{
	const char	*v = evhttp_find_header(q, key);
	char		*end;
	long long	 n;

	if (v == NULL)
		return -1;
	if (*v < '0' || *v > '9')
		return -2;
	n = strtoll(v, &end, 10);
	return *end != '\0' || n < lo || n > hi ? -2 : n;
}

/* A boolean query parameter: 1, 0 (absent or false), -2 when bad. */
int
http_query_bool(const struct evkeyvalq *q, const char *key)
{
	const char	*v = evhttp_find_header(q, key);

	if (v == NULL || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || *v == '\0')
		return 1;
	return -2;
}

/* Free the server. */
void
http_free(void)
{
	if (http != NULL)
		evhttp_free(http);
	http = NULL;
	if (http_resume_ev != NULL)
		event_free(http_resume_ev);
	http_resume_ev = NULL;
}
