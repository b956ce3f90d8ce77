/*
 * admin.c: the operations API (SPEC 15, admin.h).  Loop thread only.
 *
 * Every route needs one of TREATY_RELAY_ADMIN_TOKEN_SHA256's tokens;
 * without the variable there is no such route (404, whose detail names
 * the variable, and nothing else is shown).  The figures come from
 * substatus.c's copy of JetStream's consumer info, never from a request
 * to JetStream per HTTP request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "admin.h"
#include "api.h"
#include "auth.h"
#include "config.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "substatus.h"
#include "util.h"

#define DROPS_LIMIT_DEFAULT	100
#define DROPS_LIMIT_MAX		1000
/*
 * Drop listings waiting for the worker at once: each may read 10,000
 * records there, and stream checks and inbox peeks wait behind them.
 */
#define DROPS_PENDING_MAX	4
/* How far ahead of this clock a since may be (another host's clock). */
#define SINCE_SKEW_NS		(60LL * 1000000000LL)

/* A request waiting for the worker. */
struct pending {
	struct evhttp_request	*req;
	struct store_drops	*drops;
	TAILQ_ENTRY(pending)	 entry;
};

static const struct config	*admin_cfg;
static TAILQ_HEAD(, pending)	 admin_pending =
    TAILQ_HEAD_INITIALIZER(admin_pending);

void
admin_init(const struct config *cfg)
{
	admin_cfg = cfg;
}

/* Refuse and log one request (metadata only). */
static void
admin_reject(struct evhttp_request *req, int status, const char *code,
    const char *detail)
{
	log_info("admin request rejected", "status=%d error=%s", status, code);
	http_error(req, ROUTE_ADMIN, status, code, detail);
}

/*
 * An admin token: 0.  None, or one nobody has, is 401; a producer's or an
 * inbox's is 403 (it is known, and may not do this).
 */
static int
admin_auth(struct evhttp_request *req)
{
	char	 hex[AUTH_HASH_HEX];

	if (auth_bearer(req, hex) == 0) {
		if (config_token_match(&admin_cfg->admin, hex))
			return 0;
		if (config_find_producer(admin_cfg, hex) != NULL ||
		    config_find_inbox(admin_cfg, hex) != NULL) {
			admin_reject(req, 403, "forbidden", "an admin token is "
			    "required");
			return -1;
		}
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "WWW-Authenticate", "Bearer");
	admin_reject(req, 401, "unauthenticated", "an admin token is "
	    "required");
	return -1;
}

/* A figure, or null when JetStream's is not known. */
static void
gen_figure(yajl_gen g, const char *key, int known, unsigned long long v)
{
	json_gen_str(g, key);
	if (known)
		yajl_gen_integer(g, (long long)v);
	else
		yajl_gen_null(g);
}

/* Answer 200 with what g holds, and free g. */
static void
admin_reply_gen(struct evhttp_request *req, yajl_gen g)
{
	struct evbuffer		*b = evbuffer_new();
	const unsigned char	*buf;
	size_t			 len;

	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		evbuffer_add(b, buf, len);
	yajl_gen_free(g);
	http_reply(req, ROUTE_ADMIN, 200, b);
	evbuffer_free(b);
}

/* GET /v1/admin/subscribers */
static void
admin_subscribers(struct evhttp_request *req)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	struct substatus	 st;
	size_t			 i;

	yajl_gen_map_open(g);
	json_gen_str(g, "subscribers");
	yajl_gen_array_open(g);
	for (i = 0; i < admin_cfg->nsubscribers; i++) {
		const struct subscriber	*s = &admin_cfg->subscribers[i];

		substatus_get(s->name, &st);
		yajl_gen_map_open(g);
		json_gen_str(g, "name");
		json_gen_str(g, s->name);
		json_gen_str(g, "kind");
		json_gen_str(g, s->kind == SUB_PULL ? "pull" : "push");
		json_gen_str(g, "filter");
		json_gen_str(g, s->filter);
		gen_figure(g, "pending", st.known, st.pending);
		gen_figure(g, "inFlight", st.known, st.in_flight);
		gen_figure(g, "redelivered", st.known, st.redelivered);
		gen_figure(g, "dropped", 1, metrics_dropped_count(s->name));
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	admin_reply_gen(req, g);
}

/* t (Unix ns) as RFC 3339 in UTC with nanoseconds, into buf. */
static const char *
time_text(int64_t t, char *buf, size_t len)
{
	if (treaty_rfc3339_format(t / 1000000000LL, (long)(t % 1000000000LL),
	    9, buf, len) < 0)
		buf[0] = '\0';
	return buf;
}

/* One record's data as an object of its own, with its time added. */
static void
gen_record(yajl_gen g, const struct store_drop *d)
{
	yajl_val	 root = yajl_tree_parse(d->record, NULL, 0);
	char		 t[TREATY_RFC3339_MAX];
	size_t		 i;

	yajl_gen_map_open(g);
	for (i = 0; root != NULL && YAJL_IS_OBJECT(root) &&
	    i < root->u.object.len; i++) {
		if (strcmp(root->u.object.keys[i], "time") == 0)
			continue;
		json_gen_str(g, root->u.object.keys[i]);
		json_gen_tree(g, root->u.object.values[i]);
	}
	json_gen_str(g, "time");
	json_gen_str(g, time_text(d->time_ns, t, sizeof(t)));
	yajl_gen_map_close(g);
	yajl_tree_free(root);
}

/* The worker's answer to GET /v1/admin/drops. */
static void
admin_drops_cb(void *arg, int ok, const struct store_drop *d, int n,
    int64_t next_ns)
{
	struct pending		*p = arg;
	struct evhttp_request	*req = p->req;
	yajl_gen		 g;
	char			 t[TREATY_RFC3339_MAX];
	int			 i;

	TAILQ_REMOVE(&admin_pending, p, entry);
	free(p);
	if (!ok) {
		admin_reject(req, 503, "unavailable", "JetStream did not "
		    "answer; try again");
		return;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "drops");
	yajl_gen_array_open(g);
	for (i = 0; i < n; i++)
		gen_record(g, &d[i]);
	yajl_gen_array_close(g);
	json_gen_str(g, "next");
	json_gen_str_or_null(g, next_ns > 0 ?
	    time_text(next_ns, t, sizeof(t)) : NULL);
	yajl_gen_map_close(g);
	admin_reply_gen(req, g);
}

/* The configured subscriber called name, or NULL. */
static const struct subscriber *
admin_subscriber(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < admin_cfg->nsubscribers; i++)
		if (strcmp(admin_cfg->subscribers[i].name, name) == 0)
			return &admin_cfg->subscribers[i];
	return NULL;
}

/*
 * A since= parameter: RFC 3339, not in the future, into *ns (Unix
 * nanoseconds).  0, or -1 after answering 400.
 */
static int
admin_since(struct evhttp_request *req, const char *since, int64_t *ns)
{
	struct timespec	 now;
	int64_t		 sec;
	long		 nsec;

	if (since == NULL || treaty_rfc3339_parse(since, &sec, &nsec) !=
	    TREATY_OK || sec < 0 || sec > INT64_MAX / 1000000000LL - 1) {
		admin_reject(req, 400, "bad_request", "since must be an RFC "
		    "3339 date-time, e.g. 2026-12-01T00:00:00Z");
		return -1;
	}
	*ns = sec * 1000000000LL + nsec;
	clock_gettime(CLOCK_REALTIME, &now);
	if (*ns > (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec +
	    SINCE_SKEW_NS) {
		admin_reject(req, 400, "bad_request", "since is in the future");
		return -1;
	}
	return 0;
}

/* GET /v1/admin/drops?subscriber=..&since=..[&limit=N] */
static void
admin_drops(struct evhttp_request *req, const struct evkeyvalq *q)
{
	const char	*name = evhttp_find_header(q, "subscriber");
	long long	 limit = http_query_int(q, "limit", 1, DROPS_LIMIT_MAX);
	struct pending	*p;
	int64_t		 since;
	int		 n = 0;

	if (limit == -2) {
		admin_reject(req, 400, "bad_request", "limit must be 1-"
		    API_STR(DROPS_LIMIT_MAX));
		return;
	}
	if (name == NULL) {
		admin_reject(req, 400, "bad_request", "subscriber= is "
		    "required");
		return;
	}
	if (admin_since(req, evhttp_find_header(q, "since"), &since) == -1)
		return;
	if (admin_subscriber(name) == NULL) {
		admin_reject(req, 404, "unknown_subscriber", "no subscriber "
		    "of that name");
		return;
	}
	TAILQ_FOREACH(p, &admin_pending, entry)
		n++;
	if (n >= DROPS_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many drop listings "
		    "at once; try again");
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->req = req;
	if ((p->drops = store_drops(name, since, limit > 0 ? (int)limit :
	    DROPS_LIMIT_DEFAULT, admin_drops_cb, p)) == NULL) {
		free(p);
		admin_reject(req, 503, "unavailable", "JetStream is not "
		    "available; try again");
		return;
	}
	TAILQ_INSERT_TAIL(&admin_pending, p, entry);
}

/* Shutdown: answer what still waits for the worker. */
void
admin_fail_all(void)
{
	struct pending	*p;

	while ((p = TAILQ_FIRST(&admin_pending)) != NULL) {
		TAILQ_REMOVE(&admin_pending, p, entry);
		store_drops_close(p->drops);
		http_error(p->req, ROUTE_ADMIN, 503, "unavailable", "the "
		    "relay is shutting down");
		free(p);
	}
}

/* A GET-only route: 1 when the method is GET or HEAD, else 405 sent. */
static int
admin_get_only(struct evhttp_request *req)
{
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);

	if (m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD)
		return 1;
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    "GET, HEAD");
	admin_reject(req, 405, "method_not_allowed", "use GET");
	return 0;
}

void
admin_handle(struct evhttp_request *req, const char *rest)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq	 q;

	if (admin_cfg->admin.n == 0) {
		http_error(req, ROUTE_OTHER, 404, "not_found", "no such route; "
		    "the operations API needs TREATY_RELAY_ADMIN_TOKEN_SHA256");
		return;
	}
	if (admin_auth(req) == -1)
		return;
	TAILQ_INIT(&q);
	if (evhttp_parse_query_str(uri != NULL && evhttp_uri_get_query(uri) ?
	    evhttp_uri_get_query(uri) : "", &q) == -1) {
		admin_reject(req, 400, "bad_request", "unreadable query");
		return;
	}
	if (strcmp(rest, "subscribers") == 0) {
		if (admin_get_only(req))
			admin_subscribers(req);
	} else if (strcmp(rest, "drops") == 0) {
		if (admin_get_only(req))
			admin_drops(req, &q);
	} else
		admin_reject(req, 404, "not_found", "no such admin route");
	evhttp_clear_headers(&q);
}

void
admin_free(void)
{
	admin_fail_all();
}
