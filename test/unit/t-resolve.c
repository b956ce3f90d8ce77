/*
 * t-resolve: the relay's DNS module against a real DNS server: libevent's
 * own evdns server, run in this process on 127.0.0.1 (a random port), which
 * maps test names to the addresses below.  That is how the tests point a
 * name at 10.x, 127.0.0.1 or the metadata address without /etc/hosts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/dns_struct.h>
#include <event2/event.h>

#include "harness.h"
#include "../../src/common/resolve.h"

static struct event_base	*base;
static struct evdns_server_port	*server;
static int			 server_fd;
static char			 server_addr[64];
static int			 queries;	/* questions the server saw */

struct answer {
	const char	*name;
	const char	*a[2];		/* IPv4 answers */
	const char	*aaaa;		/* one IPv6 answer */
	int		 err;		/* 0, DNS_ERR_NOTEXIST, ... */
	int		 drop;		/* never answer */
};

static const struct answer answers[] = {
	{ "public.test", { "93.184.216.34" }, NULL, 0, 0 },
	{ "both.test", { "93.184.216.34" }, "2606:4700::1111", 0, 0 },
	{ "private.test", { "10.0.0.1" }, NULL, 0, 0 },
	{ "loop.test", { "127.0.0.1" }, NULL, 0, 0 },
	{ "meta.test", { "169.254.169.254" }, NULL, 0, 0 },
	{ "mixed.test", { "8.8.8.8", "10.1.1.1" }, NULL, 0, 0 },
	{ "ula.test", { NULL }, "fd00::1", 0, 0 },
	{ "mapped.test", { NULL }, "::ffff:127.0.0.1", 0, 0 },
	{ "nx.test", { NULL }, NULL, DNS_ERR_NOTEXIST, 0 },
	{ "fail.test", { NULL }, NULL, DNS_ERR_SERVERFAILED, 0 },
	{ "slow.test", { NULL }, NULL, 0, 1 },
};

/* The test DNS server. */
static void
server_cb(struct evdns_server_request *req, void *arg)
{
	const struct answer	*an = NULL;
	const char		*name = req->questions[0]->name;
	size_t			 i;
	int			 type = req->questions[0]->type;

	(void)arg;
	queries++;
	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
		if (strcasecmp(answers[i].name, name) == 0)
			an = &answers[i];
	if (an == NULL) {
		evdns_server_request_respond(req, DNS_ERR_NOTEXIST);
		return;
	}
	if (an->drop) {
		evdns_server_request_drop(req);
		return;
	}
	if (type == EVDNS_TYPE_A)
		for (i = 0; i < 2 && an->a[i] != NULL; i++) {
			struct in_addr	 in;

			inet_pton(AF_INET, an->a[i], &in);
			evdns_server_request_add_a_reply(req, name, 1, &in, 60);
		}
	if (type == EVDNS_TYPE_AAAA && an->aaaa != NULL) {
		struct in6_addr	 in6;

		inet_pton(AF_INET6, an->aaaa, &in6);
		evdns_server_request_add_aaaa_reply(req, name, 1, &in6, 60);
	}
	evdns_server_request_respond(req, an->err);
}

struct outcome {
	int			 done;
	struct resolve_result	 r;
};

/* The module's callback: record and stop the loop. */
static void
got(void *arg, const struct resolve_result *r)
{
	struct outcome	*o = arg;

	o->done++;
	o->r = *r;
	event_base_loopbreak(base);
}

/* Resolve host and run the loop until the answer (at most 3 s). */
static struct resolve_result
resolve(const char *host, enum resolve_accept accept)
{
	struct outcome	 o;
	struct timeval	 tv = { 3, 0 };

	memset(&o, 0, sizeof(o));
	o.r.status = (enum resolve_status)-1;
	resolve_host(host, 443, accept, got, &o);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	if (o.done != 1)
		t_fail(__FILE__, __LINE__, "%s: callback ran %d times", host,
		    o.done);
	return o.r;
}

/* The first address as text with its port. */
static const char *
addr0(const struct resolve_result *r)
{
	static char	 buf[80];
	char		 ip[64];
	const struct sockaddr *sa = (const struct sockaddr *)&r->addrs[0];

	if (r->naddrs == 0)
		return "-";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s:%d", ip, ntohs(in->sin_port));
	} else {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "[%s]:%d", ip, ntohs(in6->sin6_port));
	}
	return buf;
}

/* A public name is pinned, with the port set. */
static void
public_name(void)
{
	struct resolve_result	 r = resolve("public.test", 0);

	T_EQ_INT(r.status, RESOLVE_OK);
	T_EQ_INT(r.naddrs, 1);
	T_EQ_STR(addr0(&r), "93.184.216.34:443");
	r = resolve("both.test", 0);
	T_EQ_INT(r.status, RESOLVE_OK);
	T_EQ_INT(r.naddrs, 2);
}

/* Names that point at refused addresses are refused. */
static void
refused_names(void)
{
	static const char *const names[] = { "private.test", "loop.test",
	    "meta.test", "mixed.test", "ula.test", "mapped.test" };
	size_t	 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct resolve_result r = resolve(names[i], 0);

		if (r.status != RESOLVE_REFUSED || r.naddrs != 0)
			t_fail(__FILE__, __LINE__, "%s: status %d naddrs %d",
			    names[i], r.status, r.naddrs);
	}
	T_ASSERT(strstr(resolve("meta.test", 0).why, "link-local") != NULL);
	/* Allowed for local hosts or with ALLOW_PRIVATE_NETWORKS. */
	T_EQ_INT(resolve("private.test", 1).status, RESOLVE_OK);
	T_EQ_STR(addr0(&(struct resolve_result){ 0 }), "-");
}

/*
 * Plain http into the operator's network (RESOLVE_PRIVATE): only names
 * whose every address is not public; one public address refuses the
 * name, numeric or not.  Cached apart from the other modes.
 */
static void
private_only(void)
{
	struct resolve_result	 r;

	T_EQ_INT(resolve("private.test", RESOLVE_PRIVATE).status, RESOLVE_OK);
	T_EQ_INT(resolve("loop.test", RESOLVE_PRIVATE).status, RESOLVE_OK);
	r = resolve("public.test", RESOLVE_PRIVATE);
	T_EQ_INT(r.status, RESOLVE_REFUSED);
	T_ASSERT(strstr(r.why, "public address (plain http: private only)") !=
	    NULL);
	T_EQ_INT(resolve("mixed.test", RESOLVE_PRIVATE).status,
	    RESOLVE_REFUSED);
	T_EQ_INT(resolve("10.9.8.7", RESOLVE_PRIVATE).status, RESOLVE_OK);
	T_EQ_INT(resolve("8.8.8.8", RESOLVE_PRIVATE).status, RESOLVE_REFUSED);
	/* The same names in the other modes keep their own answers. */
	T_EQ_INT(resolve("public.test", RESOLVE_PUBLIC).status, RESOLVE_OK);
	T_EQ_INT(resolve("private.test", RESOLVE_PUBLIC).status,
	    RESOLVE_REFUSED);
	T_EQ_INT(resolve("mixed.test", RESOLVE_ANY).status, RESOLVE_OK);
}

/* Numeric hosts skip DNS but not validation. */
static void
numeric_hosts(void)
{
	int	 before = queries;
	struct resolve_result r;

	T_EQ_INT(resolve("127.0.0.1", 0).status, RESOLVE_REFUSED);
	r = resolve("127.0.0.1", 1);
	T_EQ_INT(r.status, RESOLVE_OK);
	T_EQ_STR(addr0(&r), "127.0.0.1:443");
	T_EQ_INT(resolve("[::1]", 0).status, RESOLVE_REFUSED);
	r = resolve("[::1]", 1);
	T_EQ_STR(addr0(&r), "[::1]:443");
	T_EQ_INT(resolve("8.8.8.8", 0).status, RESOLVE_OK);
	T_EQ_INT(resolve("10.9.8.7", 0).status, RESOLVE_REFUSED);
	T_EQ_INT(queries, before);
}

/* NXDOMAIN is cached; SERVFAIL and silence are temporary and are not. */
static void
failures_and_cache(void)
{
	int	 q;

	T_EQ_INT(resolve("nx.test", 0).status, RESOLVE_NOTFOUND);
	q = queries;
	T_EQ_INT(resolve("nx.test", 0).status, RESOLVE_NOTFOUND);
	T_EQ_INT(queries, q);

	T_EQ_INT(resolve("fail.test", 0).status, RESOLVE_TEMPORARY);
	q = queries;
	T_EQ_INT(resolve("fail.test", 0).status, RESOLVE_TEMPORARY);
	T_ASSERT(queries > q);

	q = queries;
	resolve("public.test", 0);
	T_EQ_INT(queries, q);		/* pinned: no new query */
	resolve("private.test", 0);
	T_EQ_INT(queries, q);		/* refusal cached too */
}

/* A server that never answers: TEMPORARY within the bound (400 ms). */
static void
bounded_time(void)
{
	struct timeval		 t0, t1;
	struct resolve_result	 r;
	long			 ms;

	gettimeofday(&t0, NULL);
	r = resolve("slow.test", 0);
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	T_EQ_INT(r.status, RESOLVE_TEMPORARY);
	T_ASSERT(strstr(r.why, "timed out") != NULL);
	if (ms < 300 || ms > 1500)
		t_fail(__FILE__, __LINE__, "answered after %ld ms", ms);
}

/* Two lookups at once share one query; a cancelled one never calls back. */
static void
sharing_and_cancel(void)
{
	struct outcome		 a, b, c;
	struct timeval		 tv = { 2, 0 };
	struct resolve_req	*rc;
	int			 q = queries;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	resolve_host("both.test", 80, 1, got, &a);
	resolve_host("both.test", 81, 1, got, &b);
	rc = resolve_host("both.test", 82, 1, got, &c);
	resolve_cancel(rc);
	while (a.done + b.done < 2) {
		event_base_loopexit(base, &tv);
		if (event_base_dispatch(base) == 1 || a.done + b.done == 0)
			break;
	}
	T_EQ_INT(a.done, 1);
	T_EQ_INT(b.done, 1);
	T_EQ_INT(c.done, 0);
	T_EQ_INT(a.r.status, RESOLVE_OK);
	T_EQ_INT(queries - q, 2);	/* one A and one AAAA question */
	T_ASSERT(strstr(addr0(&b.r), ":81") != NULL);
}

/*
 * Entries past their time, and failures never cached, are dropped when
 * another name is looked up: names no longer used do not stay for ever.
 * A cache time of 1 s: the first lookups must all be done within it (with
 * 50 ms, a stall under a sanitizer on a loaded machine dropped public.test
 * early).
 */
static void
expired_dropped(void)
{
	struct timespec	 ts = { 1, 100 * 1000000 };

	resolve_free();
	resolve_init(base, server_addr, 400, 1000);
	resolve("public.test", 0);
	resolve("nx.test", 0);
	resolve("fail.test", 0);
	T_EQ_INT(resolve_cache_size(), 3);
	resolve("public.test", 0);
	T_EQ_INT(resolve_cache_size(), 2);	/* fail.test: nothing cached */
	nanosleep(&ts, NULL);	/* past the 1 s cache time under test */
	resolve("both.test", 0);
	T_EQ_INT(resolve_cache_size(), 1);
	resolve_free();
	resolve_init(base, server_addr, 400, 60000);
}

static const struct t_case cases[] = {
	{ "a public name is pinned with its port", public_name },
	{ "names of refused addresses are refused", refused_names },
	{ "numeric hosts: validation without DNS", numeric_hosts },
	{ "private addresses only (plain http into a private network)",
	  private_only },
	{ "NXDOMAIN cached, SERVFAIL not, pins cached", failures_and_cache },
	{ "entries past their time dropped", expired_dropped },
	{ "a silent server: temporary within the bound", bounded_time },
	{ "one query for lookups at once; cancel", sharing_and_cancel },
};

int
main(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 rc;

	base = event_base_new();
	server_fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(server_fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    getsockname(server_fd, (struct sockaddr *)&sin, &len) == -1) {
		printf("FAIL - resolve: cannot bind a UDP socket on 127.0.0.1\n");
		return 1;
	}
	evutil_make_socket_nonblocking(server_fd);
	server = evdns_add_server_port_with_base(base, server_fd, 0, server_cb,
	    NULL);
	snprintf(server_addr, sizeof(server_addr), "127.0.0.1:%d",
	    ntohs(sin.sin_port));
	resolve_init(base, server_addr, 400, 60000);
	rc = t_run("resolve", cases, sizeof(cases) / sizeof(cases[0]));
	resolve_free();
	evdns_close_server_port(server);
	close(server_fd);
	event_base_free(base);
	return rc ? 1 : 0;
}
