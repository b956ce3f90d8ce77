/*
 * http.c: the evhttp servers, the top of the request layer: the main one
 * (the route table, /healthz and /metrics) and the optional control
 * listener (SPEC 12: one instance's own /healthz, /metrics and the
 * operations API).  Answers go through reply.c.  Loop thread only.
 *
 * The main socket is made and bound at start, so a taken address ends the
 * relay at once.  With reuseport it listens (joins the kernel's group for
 * the port) only once the relay is ready: before that, a connection the
 * kernel gave it would wait or get a 503 that another instance would not
 * have answered.  At shutdown it closes first; what the kernel had queued
 * to it goes to the other instances of the group when the host has
 * net.ipv4.tcp_migrate_req=1 (else it is reset: the man page says so).
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
#include <strings.h>
#include <time.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "treaty.h"
#include "admin.h"
#include "config.h"
#include "door.h"
#include "http.h"
#include "inbox.h"
#include "ingest.h"
#include "json.h"
#include "reply.h"
#include "route.h"
#include "api.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "store-kv.h"
#include "substatus.h"

static struct evhttp			*http;
static struct evhttp_bound_socket	*http_sock;
static evutil_socket_t			 http_fd = -1;	/* bound, not listening */
static struct evhttp			*http_ctl;	/* the control listener */
static int				 http_stopping;
static struct event			*http_resume_ev;
static struct event_base		*http_base;
static char				 http_addr[64];
static int				 http_port;
static int				 http_tls;	/* the main port is HTTPS */

#define ACCEPT_PAUSE_MS		1000	/* after running out of descriptors */
#define LISTEN_BACKLOG		1024

/* 405 with Allow. */
static void
http_not_allowed(struct evhttp_request *req, enum route route,
    const char *allow)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    allow);
	reply_error(req, route, 405, "method_not_allowed", "use GET");
}

/* GET /healthz: cheap, from state the loop already has. */
static void
http_healthz(struct evhttp_request *req, const char *rest)
{
	struct evbuffer	*b = evbuffer_new();
	const char	*nats = store_connected() ? "connected" : "disconnected";
	const char	*streams = store_streams_ready() ? "ready" : "not_ready";
	const char	*reason = http_stopping ? "shutting_down" :
			    !store_connected() ? "nats_disconnected" :
			    !store_streams_ready() ? "streams_not_ready" :
			    !store_kv_synced(STORE_KV_SUBS) ? "subscribers_not_read" :
			    !store_kv_synced(STORE_KV_STATE) ? "states_not_read" :
			    NULL;

	(void)rest;
	if (reason == NULL) {
		const char *const k[] = { "status", "nats", "streams",
		    "version" };
		const char *const v[] = { "ok", nats, streams, TREATY_VERSION };

		json_object_body(b, k, v, 4);
		reply_json(req, ROUTE_HEALTHZ, 200, b);
	} else {
		const char *const k[] = { "status", "reason", "nats", "streams",
		    "version" };
		const char *const v[] = { "unavailable", reason, nats, streams,
		    TREATY_VERSION };

		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", REPLY_RETRY_AFTER);
		json_object_body(b, k, v, 5);
		reply_json(req, ROUTE_HEALTHZ, 503, b);
	}
	evbuffer_free(b);
}

/* GET /metrics. */
static void
http_metrics(struct evhttp_request *req, const char *rest)
{
	struct evbuffer	*b = evbuffer_new();

	(void)rest;
	substatus_age();
	metrics_render(b);
	reply_json(req, ROUTE_METRICS, 200, b);
	evbuffer_free(b);
}

/*
 * The routes, the top of the request layer: each handler below answers
 * through reply.c and calls nothing up here.  The front door gets this
 * table too (door_attach), for the route's label and its checks from a
 * head.  The control listener serves the operator's routes alone.
 *
 * While shutting down, an event that arrives on a connection already
 * open is still stored (each answer says Connection: close): the kernel
 * may have queued it to this instance just before it stopped listening,
 * and its client has no other answer.
 */
static const struct route_def http_routes[] = {
	{ API_EVENTS_PATH, 1, ROUTE_EVENTS, ROUTE_ON_MAIN, ingest_handle,
	  ingest_precheck, 1, 0 },
	{ API_INBOX_PATH, 1, ROUTE_INBOX, ROUTE_ON_MAIN, inbox_handle, NULL,
	  0, 0 },
	{ API_ADMIN_PATH, 1, ROUTE_ADMIN, ROUTE_ON_MAIN | ROUTE_ON_CONTROL,
	  admin_handle, NULL, 0, 0 },
	{ "/healthz", 0, ROUTE_HEALTHZ, ROUTE_ON_MAIN | ROUTE_ON_CONTROL,
	  http_healthz, NULL, 0, 1 },
	{ "/metrics", 0, ROUTE_METRICS, ROUTE_ON_MAIN | ROUTE_ON_CONTROL,
	  http_metrics, NULL, 0, 1 },
	{ NULL, 0, ROUTE_OTHER, 0, NULL, NULL, 0, 0 }
};

/* Every request: its route, or 404. */
static void
http_request_cb(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path = uri ? evhttp_uri_get_path(uri) : NULL;
	const struct route_def	*r;
	const char		*rest;
	enum evhttp_cmd_type	 m;

	if (path == NULL)
		path = "";
	m = evhttp_request_get_command(req);
	r = route_find(http_routes, arg != NULL ? ROUTE_ON_CONTROL :
	    ROUTE_ON_MAIN, path, strlen(path), &rest);
	if (r == NULL && arg != NULL)
		reply_error(req, ROUTE_OTHER, 404, "not_found", "no such route; "
		    "the control listener serves /healthz, /metrics and "
		    "/v1/admin/");
	else if (r == NULL)
		reply_error(req, ROUTE_OTHER, 404, "not_found",
		    "no such route; events go to POST /v1/events/<subject>");
	else if (r->get_only && m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD)
		http_not_allowed(req, r->metric, "GET, HEAD");
	else
		r->handle(req, rest);
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

/* An evhttp server with the settings both listeners share. */
static struct evhttp *
http_server_new(struct event_base *base, const struct config *cfg,
    void *route_arg)
{
	struct evhttp	*h;

	if ((h = evhttp_new(base)) == NULL)
		fatalx("cannot create the HTTP server", NULL);
	evhttp_set_allowed_methods(h, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(h, HTTP_MAX_HEADERS);
	/*
	 * libevent refuses larger bodies itself: on Content-Length before
	 * reading (413 at once, then it closes the connection), and while
	 * reading a chunked body.  Not EVHTTP_SERVER_LINGERING_CLOSE: that
	 * would read and discard the whole announced body first.
	 */
	evhttp_set_max_body_size(h, API_BODY_MAX);
	evhttp_set_timeout(h, cfg->http_timeout_seconds);
	evhttp_set_gencb(h, http_request_cb, route_arg);
	door_attach(h, base, cfg, route_arg != NULL, http_routes);
	return h;
}

/*
 * The main socket, bound (with SO_REUSEPORT when asked) but not listening
 * yet; exits 1 when the address cannot be had.
 */
static evutil_socket_t
http_bind(const char *addr, int port, int reuseport)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len;
	evutil_socket_t		 fd;
	int			 one = 1;

	memset(&ss, 0, sizeof(ss));
	if (evutil_inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(*sin);
	} else if (evutil_inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		len = sizeof(*sin6);
	} else
		fatalx("cannot listen", "addr=%s port=%d", log_q(addr), port);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	/*
	 * With reuseport, not SO_REUSEADDR as well: a socket bound with
	 * both, not listening yet (until ready), does not keep another
	 * program that sets SO_REUSEADDR from binding the port, and the
	 * ready instance's listen() would fail instead.  SO_REUSEPORT alone
	 * rebinds past TIME_WAIT connections just the same.
	 */
	if (fd == -1 || (!reuseport && setsockopt(fd, SOL_SOCKET,
	    SO_REUSEADDR, &one, sizeof(one)) == -1) ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
	    sizeof(one)) == -1) ||
	    bind(fd, (struct sockaddr *)&ss, len) == -1)
		fatalx("cannot listen", "addr=%s port=%d err=%s", log_q(addr),
		    port, log_q(strerror(errno)));
	/*
	 * Accepted sockets inherit TCP_NODELAY on Linux.  Without it, the
	 * last segment of a large answer (an inbox batch) waits for the
	 * client's delayed acknowledgement: 40 ms per GET.
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warn("cannot set TCP_NODELAY", NULL);
	return fd;
}

/* The main socket listens, and evhttp accepts on it. */
void
http_open(void)
{
	struct evconnlistener	*l;

	if (http_fd == -1 || http_stopping)
		return;
	l = evconnlistener_new(http_base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_CLOSE_ON_EXEC, LISTEN_BACKLOG, http_fd);
	if (l == NULL || (http_sock = evhttp_bind_listener(http, l)) == NULL)
		fatalx("cannot listen", "addr=%s port=%d err=%s",
		    log_q(http_addr), http_port, log_q(strerror(errno)));
	http_fd = -1;
	evconnlistener_set_error_cb(l, http_accept_error_cb);
	/* tls=: http:// or https://, what a new operator asks first. */
	log_info("listening", "addr=%s port=%d tls=%d", log_q(http_addr),
	    http_port, http_tls);
}

/*
 * With reuseport, connections queued to an instance that stops are reset
 * unless the kernel hands them to another one.  Say so at start.
 */
static void
http_check_migrate(void)
{
	FILE	*f = fopen("/proc/sys/net/ipv4/tcp_migrate_req", "r");
	int	 v = -1;

	if (f != NULL) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	if (v == 0)
		log_warnx("net.ipv4.tcp_migrate_req is 0: connections the "
		    "kernel queued to a stopping instance are reset instead of "
		    "going to another; set it to 1 for rolling restarts", NULL);
}

/* Bind the main socket (listening unless reuseport) and the control one. */
void
http_init(struct event_base *base, const struct config *cfg)
{
	char	 caddr[64];
	int	 cport;

	http_base = base;
	door_init(base);
	snprintf(http_addr, sizeof(http_addr), "%s", cfg->listen);
	http_port = cfg->port;
	http_tls = cfg->tls_ctx != NULL;	/* on or off: a restart's */
	http = http_server_new(base, cfg, NULL);
	door_fit();
	http_fd = http_bind(cfg->listen, cfg->port, cfg->reuseport);
	http_resume_ev = evtimer_new(base, http_resume_cb, NULL);
	if (http_resume_ev == NULL)
		fatalx("cannot create the accept timer", NULL);
	if (cfg->reuseport) {
		http_check_migrate();
		log_info("port bound; listening once ready", "addr=%s port=%d "
		    "tls=%d reuseport=1", log_q(cfg->listen), cfg->port,
		    http_tls);
	} else
		http_open();
	if (cfg->control_listen == NULL)
		return;
	if (config_control_addr(cfg->control_listen, caddr, &cport) == -1)
		fatalx("bad control address", NULL);
	/* The control listener is never shared: it answers from the start. */
	http_ctl = http_server_new(base, cfg, &http_ctl);
	if (evhttp_bind_socket_with_handle(http_ctl, caddr,
	    (ev_uint16_t)cport) == NULL)
		fatalx("cannot listen", "control=1 addr=%s port=%d err=%s",
		    log_q(caddr), cport, log_q(strerror(errno)));
	log_info("control listener", "addr=%s port=%d tls=0", log_q(caddr),
	    cport);
}

/* A reload: the idle timeout of connections accepted from now on. */
void
http_reload(const struct config *cfg)
{
	evhttp_set_timeout(http, cfg->http_timeout_seconds);
	if (http_ctl != NULL)
		evhttp_set_timeout(http_ctl, cfg->http_timeout_seconds);
	door_fit();
}

/* Stop accepting connections; keep answering those we have. */
void
http_stop_accepting(void)
{
	http_stopping = 1;
	reply_closing();
	if (http_resume_ev != NULL)
		event_del(http_resume_ev);
	if (http_sock != NULL) {
		evhttp_del_accept_socket(http, http_sock);
		http_sock = NULL;
	}
	if (http_fd != -1) {
		evutil_closesocket(http_fd);
		http_fd = -1;
	}
}

/* Free the server. */
void
http_free(void)
{
	if (http != NULL)
		evhttp_free(http);
	http = NULL;
	if (http_ctl != NULL)
		evhttp_free(http_ctl);
	http_ctl = NULL;
	if (http_fd != -1)
		evutil_closesocket(http_fd);
	http_fd = -1;
	if (http_resume_ev != NULL)
		event_free(http_resume_ev);
	http_resume_ev = NULL;
}
