/*
 * resolve.c: DNS for outbound delivery through libevent's evdns (never the
 * blocking getaddrinfo), bounded in time, validated against the refusal
 * list (netcheck.c), and cached: pins and refusals for cache_ms, names
 * that do not exist likewise; temporary failures are not cached, so the
 * next delivery asks again (SPEC 3, seed relay-reliability.txt).  Lookups
 * of one name at the same time share one query.  Loop thread only.
 *
 * Validation refuses a name as soon as any of its addresses is refused:
 * a name that mixes a public and a private address could otherwise be
 * used to reach the private one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <netinet/in.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/util.h>

#include "log.h"
#include "netcheck.h"
#include "resolve.h"
#include "util.h"

/*
 * The lookup's bound (timeout_ms) split between evdns's tries: evdns sends
 * a query DNS_ATTEMPTS times at most (to the next nameserver each time,
 * when there are several), each try waiting timeout_ms / DNS_ATTEMPTS,
 * in whole seconds and at least DNS_TRY_MIN_S (evdns's "timeout:" here);
 * our own timer ends the whole lookup at timeout_ms, whatever is left.
 */
#define DNS_ATTEMPTS		2
#define DNS_TRY_MIN_S		1

struct pin;

struct resolve_req {
	resolve_cb		 cb;
	void			*arg;
	int			 port;
	struct pin		*pin;		/* waiting on it, or NULL */
	struct resolve_result	 result;
	struct event		 ev;		/* delivers result */
	TAILQ_ENTRY(resolve_req) wentry;	/* pin's waiters */
	TAILQ_ENTRY(resolve_req) entry;		/* all requests */
};
TAILQ_HEAD(req_list, resolve_req);

/* One cached name (per validation mode). */
struct pin {
	char			*host;
	enum resolve_accept	 accept;
	int			 have;		/* result holds a cached answer */
	struct resolve_result	 result;	/* ports are 0 */
	long long		 expires;
	struct evdns_getaddrinfo_request *gai;	/* lookup in flight */
	int			 timed_out;
	struct event		 timer;		/* bounds the lookup */
	struct req_list		 waiters;
	TAILQ_ENTRY(pin)	 entry;
};
TAILQ_HEAD(pin_list, pin);

static struct {
	struct event_base	*base;
	struct evdns_base	*dns;
	int			 timeout_ms;
	int			 cache_ms;
	struct pin_list		 pins;
	struct req_list		 reqs;
	int			 npins;
} rs;

/* Set the port of every address in r. */
static void
result_set_port(struct resolve_result *r, int port)
{
	int	 i;

	for (i = 0; i < r->naddrs; i++) {
		struct sockaddr *sa = (struct sockaddr *)&r->addrs[i];

		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)(void *)sa)->sin_port =
			    htons((uint16_t)port);
		else if (sa->sa_family == AF_INET6)
			((struct sockaddr_in6 *)(void *)sa)->sin6_port =
			    htons((uint16_t)port);
	}
}

/* The result event: run the caller's callback once, then free. */
static void
resolve_deliver_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct resolve_req	*req = arg;

	(void)fd;
	(void)ev;
	TAILQ_REMOVE(&rs.reqs, req, entry);
	req->cb(req->arg, &req->result);
	free(req);
}

/* Hand r to req, on a later turn of the loop. */
static void
resolve_complete(struct resolve_req *req, const struct resolve_result *r)
{
	req->result = *r;
	result_set_port(&req->result, req->port);
	req->pin = NULL;
	event_active(&req->ev, EV_TIMEOUT, 0);
}

/*
 * Validate addresses: all of them, or the name is refused.  Fills r and
 * returns its status.
 */
static enum resolve_status
resolve_validate(struct resolve_result *r, const char *host,
    enum resolve_accept accept)
{
	int	 i;

	for (i = 0; i < r->naddrs && accept != RESOLVE_ANY; i++) {
		enum net_class c = netcheck_classify(
		    (struct sockaddr *)&r->addrs[i]);

		if ((c == NET_PUBLIC) != (accept == RESOLVE_PUBLIC)) {
			snprintf(r->why, sizeof(r->why), "%.40s has a %s "
			    "address%s", host, netcheck_class_name(c),
			    accept == RESOLVE_PRIVATE ? " (plain http: private "
			    "only)" : "");
			r->naddrs = 0;
			return r->status = RESOLVE_REFUSED;
		}
	}
	return r->status = RESOLVE_OK;
}

/* Add one address to r unless it is there already or r is full. */
static void
result_add(struct resolve_result *r, const struct sockaddr *sa,
    socklen_t len)
{
	int	 i;

	if (r->naddrs == RESOLVE_MAX_ADDRS || len > sizeof(r->addrs[0]))
		return;
	for (i = 0; i < r->naddrs; i++)
		if (r->addrlens[i] == len && memcmp(&r->addrs[i], sa, len) == 0)
			return;
	memcpy(&r->addrs[r->naddrs], sa, len);
	r->addrlens[r->naddrs++] = len;
}

/* A lookup ended: cache what should be cached, answer the waiters. */
static void
pin_finish(struct pin *p, const struct resolve_result *r)
{
	struct resolve_req	*req;

	p->gai = NULL;
	event_del(&p->timer);
	if (r->status != RESOLVE_TEMPORARY) {
		p->result = *r;
		p->have = 1;
		p->expires = now_ms() + rs.cache_ms;
	}
	while ((req = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, req, wentry);
		resolve_complete(req, r);
	}
}

/* evdns answered (or the lookup was cancelled by our timer). */
static void
resolve_gai_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct pin		*p = arg;
	struct resolve_result	 r;
	struct evutil_addrinfo	*ai;

	memset(&r, 0, sizeof(r));
	if (err == 0) {
		for (ai = res; ai != NULL; ai = ai->ai_next)
			if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
				result_add(&r, ai->ai_addr,
				    (socklen_t)ai->ai_addrlen);
		if (r.naddrs == 0) {
			r.status = RESOLVE_NOTFOUND;
			snprintf(r.why, sizeof(r.why), "%.40s has no address",
			    p->host);
		} else
			resolve_validate(&r, p->host, p->accept);
	} else if (err == EVUTIL_EAI_NONAME) {
		r.status = RESOLVE_NOTFOUND;
		snprintf(r.why, sizeof(r.why), "%.40s does not exist", p->host);
	} else {
		r.status = RESOLVE_TEMPORARY;
		snprintf(r.why, sizeof(r.why), "%.40s: %s", p->host,
		    p->timed_out || err == EVUTIL_EAI_CANCEL ?
		    "DNS timed out" : evutil_gai_strerror(err));
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	p->timed_out = 0;
	pin_finish(p, &r);
}

/* The lookup took too long: cancel it (evdns then calls resolve_gai_cb). */
static void
resolve_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pin	*p = arg;

	(void)fd;
	(void)ev;
	if (p->gai != NULL) {
		p->timed_out = 1;
		evdns_getaddrinfo_cancel(p->gai);
	}
}

/* Take p out of the cache and free it (no lookup in flight). */
static void
pin_free(struct pin *p)
{
	TAILQ_REMOVE(&rs.pins, p, entry);
	event_del(&p->timer);
	free(p->host);
	free(p);
	rs.npins--;
}

/*
 * The cache entry for host in this mode, made if missing.  The walk also
 * drops idle entries past their time (no lookup, nobody waiting): they
 * would be looked up again anyway, and names that are no longer used
 * (a subscriber's URL changed by a reload) would stay for ever.
 */
static struct pin *
pin_get(const char *host, enum resolve_accept accept)
{
	struct pin	*p, *next, *found = NULL;
	long long	 now = now_ms();

	for (p = TAILQ_FIRST(&rs.pins); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (p->accept == accept &&
		    strcmp(p->host, host) == 0)
			found = p;
		else if (p->gai == NULL && TAILQ_EMPTY(&p->waiters) &&
		    (!p->have || p->expires <= now))
			pin_free(p);
	}
	if (found != NULL)
		return found;
	p = xcalloc(1, sizeof(*p));
	p->host = xstrdup(host);
	p->accept = accept;
	TAILQ_INIT(&p->waiters);
	evtimer_assign(&p->timer, rs.base, resolve_timeout_cb, p);
	TAILQ_INSERT_TAIL(&rs.pins, p, entry);
	rs.npins++;
	return p;
}

/* A numeric host: no DNS, only validation. */
static int
resolve_numeric(const char *host, enum resolve_accept accept,
    struct resolve_result *r)
{
	struct sockaddr_in	 in;
	struct sockaddr_in6	 in6;
	char			 buf[64];
	size_t			 n = strlen(host);

	memset(r, 0, sizeof(*r));
	memset(&in, 0, sizeof(in));
	memset(&in6, 0, sizeof(in6));
	if (netcheck_pton(AF_INET, host, &in.sin_addr) == 1) {
		in.sin_family = AF_INET;
		result_add(r, (struct sockaddr *)&in, sizeof(in));
	} else {
		/* "[::1]" as in a URL, or "::1". */
		if (n >= 2 && host[0] == '[' && host[n - 1] == ']' &&
		    n - 2 < sizeof(buf)) {
			memcpy(buf, host + 1, n - 2);
			buf[n - 2] = '\0';
			host = buf;
		}
		if (netcheck_pton(AF_INET6, host, &in6.sin6_addr) != 1)
			return 0;
		in6.sin6_family = AF_INET6;
		result_add(r, (struct sockaddr *)&in6, sizeof(in6));
	}
	resolve_validate(r, host, accept);
	return 1;
}

/* Resolve host; see resolve.h. */
struct resolve_req *
resolve_host(const char *host, int port, enum resolve_accept accept,
    resolve_cb cb, void *arg)
{
	struct resolve_req	*req = xcalloc(1, sizeof(*req));
	struct resolve_result	 r;
	struct evutil_addrinfo	 hints;
	struct pin		*p;
	struct timeval		 tv;

	req->cb = cb;
	req->arg = arg;
	req->port = port;
	evtimer_assign(&req->ev, rs.base, resolve_deliver_cb, req);
	TAILQ_INSERT_TAIL(&rs.reqs, req, entry);

	if (resolve_numeric(host, accept, &r)) {
		resolve_complete(req, &r);
		return req;
	}
	p = pin_get(host, accept);
	if (p->have && p->expires > now_ms()) {
		resolve_complete(req, &p->result);
		return req;
	}
	req->pin = p;
	TAILQ_INSERT_TAIL(&p->waiters, req, wentry);
	if (p->gai != NULL)
		return req;		/* a lookup is already on its way */

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	tv.tv_sec = rs.timeout_ms / 1000;
	tv.tv_usec = rs.timeout_ms % 1000 * 1000;
	evtimer_add(&p->timer, &tv);
	/*
	 * evdns may answer at once (from /etc/hosts) by calling
	 * resolve_gai_cb before returning NULL; the waiters still hear on a
	 * later turn of the loop (resolve_complete).
	 */
	p->gai = evdns_getaddrinfo(rs.dns, host, NULL, &hints, resolve_gai_cb,
	    p);
	return req;
}

/* Forget a request. */
void
resolve_cancel(struct resolve_req *req)
{
	if (req == NULL)
		return;
	if (req->pin != NULL)
		TAILQ_REMOVE(&req->pin->waiters, req, wentry);
	event_del(&req->ev);
	TAILQ_REMOVE(&rs.reqs, req, entry);
	free(req);
}

/* Cached names. */
int
resolve_cache_size(void)
{
	return rs.npins;
}

/* Set up evdns. */
void
resolve_init(struct event_base *base, const char *nameserver,
    int timeout_ms, int cache_ms)
{
	char	 secs[16];
	int	 try_s;

	rs.base = base;
	rs.timeout_ms = timeout_ms;
	rs.cache_ms = cache_ms;
	TAILQ_INIT(&rs.pins);
	TAILQ_INIT(&rs.reqs);
	/* Idle evdns must not keep the loop alive at shutdown. */
	rs.dns = evdns_base_new(base, (nameserver == NULL ?
	    EVDNS_BASE_INITIALIZE_NAMESERVERS : 0) |
	    EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (rs.dns == NULL)
		fatalx("cannot set up DNS", NULL);
	if (nameserver != NULL &&
	    evdns_base_nameserver_ip_add(rs.dns, nameserver) != 0)
		fatalx("bad DNS server", "server=%s", log_q(nameserver));
	/* Each try gets its share of the bound; ours cuts the lookup off. */
	try_s = timeout_ms / DNS_ATTEMPTS / (int)MS_PER_S;
	snprintf(secs, sizeof(secs), "%d", try_s >= DNS_TRY_MIN_S ? try_s :
	    DNS_TRY_MIN_S);
	evdns_base_set_option(rs.dns, "timeout:", secs);
	snprintf(secs, sizeof(secs), "%d", DNS_ATTEMPTS);
	evdns_base_set_option(rs.dns, "attempts:", secs);
}

/* Free everything; callbacks still pending do not run. */
void
resolve_free(void)
{
	struct resolve_req	*req;
	struct pin		*p;

	while ((req = TAILQ_FIRST(&rs.reqs)) != NULL)
		resolve_cancel(req);
	TAILQ_FOREACH(p, &rs.pins, entry)
		if (p->gai != NULL) {
			evdns_getaddrinfo_cancel(p->gai);
			p->gai = NULL;
		}
	while ((p = TAILQ_FIRST(&rs.pins)) != NULL)
		pin_free(p);
	if (rs.dns != NULL)
		evdns_base_free(rs.dns, 0);
	rs.dns = NULL;
}
