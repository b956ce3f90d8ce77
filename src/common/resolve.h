/*
 * resolve.h: bounded, asynchronous DNS for outbound delivery, with the
 * address validation of SPEC 3 and a cache of pins.  Loop thread only.
 *
 * Every delivery connects to an address this module resolved and
 * validated (the HTTP layer never resolves again), so a name cannot be
 * re-pointed between the check and the connection.
 */
#ifndef RESOLVE_H
#define RESOLVE_H

#include <sys/socket.h>

struct event_base;

#define RESOLVE_MAX_ADDRS	4
/*
 * The default bound on one lookup, milliseconds: the relay's
 * (TREATY_RELAY_DNS_TIMEOUT_MS) and the client's.  A plain number, so
 * that API_STR can spell it.
 */
#define RESOLVE_TIMEOUT_MS_DEFAULT	5000

enum resolve_status {
	RESOLVE_OK,		/* addrs are pinned and valid */
	RESOLVE_REFUSED,	/* an address is on the refusal list (cached) */
	RESOLVE_NOTFOUND,	/* the name does not exist (cached) */
	RESOLVE_TEMPORARY	/* timeout or server failure: try again later */
};

struct resolve_result {
	enum resolve_status	 status;
	struct sockaddr_storage	 addrs[RESOLVE_MAX_ADDRS];
	socklen_t		 addrlens[RESOLVE_MAX_ADDRS];
	int			 naddrs;
	char			 why[96];	/* for logs, on failure */
};

/* Which addresses a lookup accepts (SPEC 3). */
enum resolve_accept {
	RESOLVE_PUBLIC,		/* public ones only: the refusal list applies */
	RESOLVE_ANY,		/* every one: a local host, or the operator's
				   TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 */
	RESOLVE_PRIVATE		/* refused ones only: plain http that the
				   operator allowed into their own network
				   must not cross the internet in clear */
};

struct resolve_req;
/* Called once per request, on the loop thread, never from inside resolve_host. */
typedef void (*resolve_cb)(void *arg, const struct resolve_result *r);

/*
 * nameserver: "ip[:port]" to use instead of /etc/resolv.conf (tests), or
 * NULL.  timeout_ms bounds each lookup; cache_ms is how long pins and
 * refusals are kept.
 */
void	resolve_init(struct event_base *base, const char *nameserver,
	    int timeout_ms, int cache_ms);
/*
 * Resolve host (a name or a numeric address) for port, accepting what
 * accept says: a name is refused when any of its addresses is not
 * accepted.  Returns a handle for resolve_cancel.
 */
struct resolve_req *resolve_host(const char *host, int port,
	    enum resolve_accept accept, resolve_cb cb, void *arg);
/* Forget a request: its callback will not run. */
void	resolve_cancel(struct resolve_req *req);
/* Cached entries, for /metrics and tests. */
int	resolve_cache_size(void);
/* Free everything; pending callbacks do not run. */
void	resolve_free(void);

#endif
