/*
 * outbound-check: the relay's outbound HTTP(S) module against real servers
 * in this process on 127.0.0.1: an evhttp server, and the same behind
 * TLS with a certificate for "localhost" (made by test/live/t-outbound.sh
 * with the openssl command line).  Prints ok/FAIL lines.
 *
 *   outbound-check SERVER_CERT SERVER_KEY CA_CERT OTHER_CA_CERT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>

#include "../../src/common/outbound.h"

static struct event_base	*base;
static int			 fails;
static char			 last_host[128], last_hdr[128], last_body[64];
static struct evhttp_connection	*last_conn;
static struct evhttp_request	*held;	/* /slow: never answered */
static struct evhttp		*servers[2];
static int			 nservers;

#define CHECK(name, cond, ...) do {					\
	if (cond)							\
		printf("ok - outbound: %s\n", name);			\
	else {								\
		printf("FAIL - outbound: %s: ", name);			\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fails++;						\
	}								\
} while (0)

/* The test server: behaviour by path. */
static void
server_cb(struct evhttp_request *req, void *arg)
{
	const char		*path = evhttp_request_get_uri(req);
	struct evkeyvalq	*ih = evhttp_request_get_input_headers(req);
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(req);
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	const char		*h;
	size_t			 n;

	(void)arg;
	h = evhttp_find_header(ih, "Host");
	snprintf(last_host, sizeof(last_host), "%s", h ? h : "");
	h = evhttp_find_header(ih, "x-test");
	snprintf(last_hdr, sizeof(last_hdr), "%s", h ? h : "");
	n = evbuffer_get_length(in);
	if (n >= sizeof(last_body))
		n = sizeof(last_body) - 1;
	evbuffer_copyout(in, last_body, n);
	last_body[n] = '\0';
	last_conn = evhttp_request_get_connection(req);
	if (strcmp(path, "/slow") == 0) {
		held = req;
		return;
	}
	if (strncmp(path, "/503", 4) == 0) {
		evhttp_add_header(oh, "Retry-After", "7");
		evhttp_send_reply(req, 503, NULL, NULL);
	} else if (strcmp(path, "/close") == 0) {
		evhttp_add_header(oh, "Connection", "close");
		evhttp_send_reply(req, 200, NULL, NULL);
	} else
		evhttp_send_reply(req, 204, NULL, NULL);
}

static SSL_CTX	*server_ctx;

/* Each https connection gets an SSL bufferevent. */
static struct bufferevent *
tls_bev_cb(struct event_base *b, void *arg)
{
	(void)arg;
	return bufferevent_openssl_socket_new(b, -1, SSL_new(server_ctx),
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

/* A server on 127.0.0.1, any port; returns the port. */
static int
server_new(int tls)
{
	struct evhttp			*h = evhttp_new(base);

	servers[nservers++] = h;
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 len = sizeof(sin);

	evhttp_set_gencb(h, server_cb, NULL);
	if (tls)
		evhttp_set_bevcb(h, tls_bev_cb, NULL);
	bs = evhttp_bind_socket_with_handle(h, "127.0.0.1", 0);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin,
	    &len);
	return ntohs(sin.sin_port);
}

struct got {
	int			 n;
	struct outbound_result	 r;
	char			 ra[16], err[64], why[160];
};

/* The module's callback. */
static void
done(void *arg, const struct outbound_result *r)
{
	struct got	*g = arg;

	g->n++;
	g->r = *r;
	snprintf(g->ra, sizeof(g->ra), "%s", r->retry_after ? r->retry_after :
	    "");
	snprintf(g->err, sizeof(g->err), "%s", r->error ? r->error : "");
	outbound_why(r, g->why, sizeof(g->why));
	g->r.retry_after = NULL;
	g->r.error = NULL;
	event_base_loopbreak(base);
}

/*
 * POST to the loopback addresses 127.0.0.<hosts[i]> (the connection goes
 * to the target's port) in order, and wait (at most 12 s: past the 10 s
 * idle timeout, so that a request the deadline failed to end still ends).
 * The servers listen on 127.0.0.1 only, so any other of them refuses.
 */
static struct got
post_to(struct outbound_target *t, int port, const int *hosts, int nhosts,
    const char *hdrval)
{
	struct resolve_result		 to;
	struct sockaddr_in		 sin;
	struct outbound_header		 h[1] = { { "x-test", hdrval } };
	struct got			 g;
	struct timeval			 tv = { 12, 0 };
	struct outbound_msg		 m = { OUTBOUND_POST, NULL, h, 1,
	    "payload", 7 };
	int				 i;

	memset(&g, 0, sizeof(g));
	memset(&to, 0, sizeof(to));
	for (i = 0; i < nhosts; i++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK - 1 + hosts[i]);
		memcpy(&to.addrs[i], &sin, sizeof(sin));
		to.addrlens[i] = sizeof(sin);
	}
	to.naddrs = nhosts;
	if (outbound_send(t, &to, &m, done, &g) == NULL) {
		snprintf(g.err, sizeof(g.err), "outbound_send NULL");
		return g;
	}
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	return g;
}

/* POST to 127.0.0.1:port. */
static struct got
post(struct outbound_target *t, int port, const char *hdrval)
{
	static const int	 one = 1;

	return post_to(t, port, &one, 1, hdrval);
}

int
main(int argc, char **argv)
{
	struct outbound_target	*t;
	struct evhttp_connection *first;
	struct got		 g;
	char			 url[128];
	int			 port, tport;

	if (argc != 5) {
		fprintf(stderr, "usage: outbound-check CERT KEY CA OTHER_CA\n");
		return 2;
	}
	base = event_base_new();
	server_ctx = SSL_CTX_new(TLS_server_method());
	if (SSL_CTX_use_certificate_chain_file(server_ctx, argv[1]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(server_ctx, argv[2], SSL_FILETYPE_PEM) != 1) {
		printf("FAIL - outbound: server certificate\n");
		return 1;
	}
	port = server_new(0);
	tport = server_new(1);
	/*
	 * A deadline of 800 ms, and an idle timeout far from it (10 s): a
	 * request the deadline does not end ends at the idle timeout, and
	 * a loaded machine may fire the deadline's timer late.
	 */
	if (outbound_init(base, argv[3], 800, 10000, "outbound-check") == -1) {
		printf("FAIL - outbound: init\n");
		return 1;
	}

	/* Plain http, pinned to 127.0.0.1, Host from the URL. */
	snprintf(url, sizeof(url), "http://hooks.example:%d/in?x=1", port);
	t = outbound_target_new(url, 2);
	g = post(t, port, "one");
	CHECK("http: 204 answered", g.n == 1 && g.r.status == 204,
	    "n=%d status=%d err=%s", g.n, g.r.status, g.err);
	snprintf(url, sizeof(url), "hooks.example:%d", port);
	CHECK("Host header is the URL's host, not the address",
	    strcmp(last_host, url) == 0, "Host: %s", last_host);
	CHECK("headers and body arrive", strcmp(last_hdr, "one") == 0 &&
	    strcmp(last_body, "payload") == 0, "x-test=%s body=%s", last_hdr,
	    last_body);
	first = last_conn;
	g = post(t, port, "two");
	CHECK("keep-alive: the second POST reuses the connection",
	    g.r.status == 204 && last_conn == first && outbound_target_conns(t) == 1,
	    "status=%d same=%d conns=%d", g.r.status, last_conn == first,
	    outbound_target_conns(t));
	outbound_target_free(t);

	snprintf(url, sizeof(url), "http://localhost:%d/503", port);
	t = outbound_target_new(url, 2);
	g = post(t, port, "x");
	CHECK("503 with Retry-After is reported", g.r.status == 503 &&
	    strcmp(g.ra, "7") == 0, "status=%d ra=%s", g.r.status, g.ra);
	outbound_target_free(t);

	snprintf(url, sizeof(url), "http://localhost:%d/slow", port);
	t = outbound_target_new(url, 2);
	g = post(t, port, "x");
	CHECK("a server that never answers: timeout at the deadline",
	    g.n == 1 && g.r.status == 0 && strcmp(g.err, "timeout") == 0 &&
	    g.r.ms >= 700 && g.r.ms < 5000 && !g.r.not_sent,
	    "n=%d status=%d err=%s ms=%lld not_sent=%d",
	    g.n, g.r.status, g.err, g.r.ms, g.r.not_sent);
	if (held != NULL) {
		evhttp_send_reply(held, 200, NULL, NULL);
		held = NULL;
	}
	outbound_target_free(t);

	/* A port nobody listens on (the TLS server's port + a guess). */
	snprintf(url, sizeof(url), "http://localhost:1/x");
	t = outbound_target_new(url, 2);
	g = post(t, 1, "x");
	CHECK("connection refused: no status, an error, nothing sent",
	    g.n == 1 && g.r.status == 0 && g.err[0] != '\0' && g.r.not_sent,
	    "status=%d err=%s not_sent=%d", g.r.status, g.err, g.r.not_sent);
	CHECK("connection refused: the errno, said as such",
	    g.r.sys_errno == ECONNREFUSED && g.r.cert_error == 0 &&
	    strcmp(g.why, "connection refused") == 0,
	    "errno=%d cert=%ld why=%s", g.r.sys_errno, g.r.cert_error, g.why);
	outbound_target_free(t);

	/* Several addresses: refused ones, then the next, in one request. */
	snprintf(url, sizeof(url), "http://localhost:%d/x", port);
	t = outbound_target_new(url, 2);
	{
		static const int two[] = { 2, 1 }, three[] = { 2, 3, 4 };

		g = post_to(t, port, two, 2, "next");
		CHECK("the first address refuses: the next one answers, once",
		    g.n == 1 && g.r.status == 204 &&
		    strcmp(last_hdr, "next") == 0 &&
		    strcmp(last_body, "payload") == 0,
		    "n=%d status=%d err=%s x-test=%s body=%s", g.n, g.r.status,
		    g.err, last_hdr, last_body);
		g = post_to(t, port, three, 3, "x");
		CHECK("every address refuses: one failure, nothing sent",
		    g.n == 1 && g.r.status == 0 && g.r.not_sent &&
		    g.r.sys_errno == ECONNREFUSED,
		    "n=%d status=%d err=%s not_sent=%d errno=%d", g.n,
		    g.r.status, g.err, g.r.not_sent, g.r.sys_errno);
	}
	outbound_target_free(t);

	/* https with SNI and the name check, to the pinned address. */
	snprintf(url, sizeof(url), "https://localhost:%d/ok", tport);
	t = outbound_target_new(url, 2);
	g = post(t, tport, "tls");
	CHECK("https: 204 through the trusted CA", g.r.status == 204,
	    "status=%d err=%s", g.r.status, g.err);
	g = post(t, tport, "tls2");
	CHECK("https: keep-alive reuses the TLS connection",
	    g.r.status == 204 && outbound_target_conns(t) == 1,
	    "status=%d conns=%d", g.r.status, outbound_target_conns(t));
	outbound_target_free(t);

	snprintf(url, sizeof(url), "https://wrong.example:%d/ok", tport);
	t = outbound_target_new(url, 2);
	g = post(t, tport, "x");
	CHECK("https: wrong host name fails, no status", g.n == 1 &&
	    g.r.status == 0 && g.err[0] != '\0', "status=%d err=%s",
	    g.r.status, g.err);
	CHECK("https: wrong host name: the verification's reason",
	    g.r.cert_error == X509_V_ERR_HOSTNAME_MISMATCH &&
	    strcmp(g.why, "certificate verify failed: hostname mismatch") == 0,
	    "cert=%ld why=%s", g.r.cert_error, g.why);
	outbound_target_free(t);
	outbound_free();

	/* The same server, but trusting another CA only. */
	if (outbound_init(base, argv[4], 800, 2000, "outbound-check") == -1) {
		printf("FAIL - outbound: init 2\n");
		return 1;
	}
	snprintf(url, sizeof(url), "https://localhost:%d/ok", tport);
	t = outbound_target_new(url, 2);
	g = post(t, tport, "x");
	CHECK("https: untrusted certificate fails, no status", g.n == 1 &&
	    g.r.status == 0 && g.err[0] != '\0', "status=%d err=%s",
	    g.r.status, g.err);
	CHECK("https: untrusted certificate: the verification's reason",
	    g.r.cert_error == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY &&
	    strcmp(g.why, "certificate verify failed: unable to get local "
	    "issuer certificate") == 0, "cert=%ld why=%s", g.r.cert_error,
	    g.why);
	outbound_target_free(t);
	outbound_free();

	while (nservers > 0)
		evhttp_free(servers[--nservers]);
	SSL_CTX_free(server_ctx);
	event_base_free(base);
	return fails ? 1 : 0;
}
