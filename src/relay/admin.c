/*
 * admin.c: the operations API (SPEC 15, admin.h).  Loop thread only.
 *
 * Every route needs one of TREATY_RELAY_ADMIN_TOKEN_SHA256's tokens;
 * without the variable there is no such route (404, whose detail names
 * the variable, and nothing else is shown).  The figures come from
 * substatus.c's copy of JetStream's consumer info, never from a request
 * to JetStream per HTTP request.  Drop listings, replays and the
 * consumers no subscriber owns ask JetStream through worker jobs (the
 * store's), and the request waits on the list of pending ones.
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
#include "admin-int.h"
#include "api.h"
#include "auth.h"
#include "config.h"
#include "evmem.h"
#include "query.h"
#include "reply.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "replay.h"
#include "store-drops.h"
#include "store-leftover.h"
#include "store-replay.h"
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
#define SINCE_SKEW_NS		(60 * NS_PER_S)

/*
 * Replay requests waiting for the worker at once (each a few JetStream
 * calls; a redrive's start reads its drop records).
 */
#define REPLAYS_PENDING_MAX	16
/*
 * Retry-After of a start refused for TREATY_RELAY_MAX_REPLAYS, seconds: a
 * slot comes free when a replay is cancelled, or when one is done, which
 * the instances see in two listings in a row (REPLAY_LIST_MS apart).
 */
#define REPLAYS_RETRY_AFTER	"5"

/*
 * Listings and deletions of leftover consumers waiting for the worker at
 * once (a listing asks for each leftover's info).
 */
#define LEFTOVER_PENDING_MAX	4

/*
 * A request waiting for the worker: a drop listing, a replay's, or one
 * about leftover consumers.
 */
struct pending {
	struct evhttp_request	*req;
	struct store_drops	*drops;
	struct store_replay_job	*rj;
	struct store_leftover_job *lo;
	char			*consumer;	/* a deletion's */
	TAILQ_ENTRY(pending)	 entry;
};

const struct config		*admin_cfg;
static TAILQ_HEAD(, pending)	 admin_pending =
    TAILQ_HEAD_INITIALIZER(admin_pending);

void
admin_init(struct event_base *base, const struct config *cfg)
{
	admin_cfg = cfg;
	admin_subs_init(base);
}

/* Refuse and log one request (metadata only). */
void
admin_reject(struct evhttp_request *req, int status, const char *code,
    const char *detail)
{
	if (log_refused_ok())
		log_info("admin request rejected", "status=%d error=%s", status,
		    code);
	reply_error(req, ROUTE_ADMIN, status, code, detail);
}

/*
 * An admin token: 0.  None, or one nobody has, is 401 (each with its own
 * detail); a producer's or an inbox's is 403 (it is known, and may not do
 * this).
 */
static int
admin_auth(struct evhttp_request *req)
{
	const char	*detail = "an admin token is required: "
			    "Authorization: Bearer <token>";
	char		 hex[AUTH_HASH_HEX];

	if (auth_bearer(query_header(evhttp_request_get_input_headers(req),
	    "Authorization"), hex) == 0) {
		detail = "unknown token: its SHA-256 is not in the relay's "
		    "configuration";
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
	admin_reject(req, 401, "unauthenticated", detail);
	return -1;
}

/* A figure, or null when JetStream's is not known. */
void
admin_gen_figure(yajl_gen g, const char *key, int known, unsigned long long v)
{
	json_gen_str(g, key);
	if (known)
		yajl_gen_integer(g, (long long)v);
	else
		yajl_gen_null(g);
}

/* Answer status with what g holds, and free g. */
void
admin_reply_gen(struct evhttp_request *req, int status, yajl_gen g)
{
	struct evbuffer		*b = evbuffer_new();
	const unsigned char	*buf;
	size_t			 len;

	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		evbuffer_add(b, buf, len);
	yajl_gen_free(g);
	reply_json(req, ROUTE_ADMIN, status, b);
	evbuffer_free(b);
}

/* A subscriber's figures (SPEC 15), as members of the object g is in. */
void
admin_gen_figures(yajl_gen g, const struct subscriber *s)
{
	struct substatus	 st;

	substatus_get(s->name, &st);
	admin_gen_figure(g, "pending", st.known, st.pending);
	admin_gen_figure(g, "inFlight", st.known, st.in_flight);
	admin_gen_figure(g, "redelivered", st.known, st.redelivered);
	admin_gen_figure(g, "dropped", 1, metrics_dropped_count(s->name));
	admin_gen_state(g, s);
}

/* GET /v1/admin/subscribers */
static void
admin_subscribers(struct evhttp_request *req)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	size_t			 i;

	yajl_gen_map_open(g);
	json_gen_str(g, "subscribers");
	yajl_gen_array_open(g);
	for (i = 0; i < admin_cfg->nsubscribers; i++) {
		const struct subscriber	*s = &admin_cfg->subscribers[i];

		yajl_gen_map_open(g);
		json_gen_str(g, "name");
		json_gen_str(g, s->name);
		json_gen_str(g, "kind");
		json_gen_str(g, s->kind == SUB_PULL ? "pull" : "push");
		json_gen_str(g, "source");
		json_gen_str(g, s->api ? "api" : "config");
		json_gen_str(g, "filter");
		json_gen_str(g, s->filter);
		admin_gen_figures(g, s);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	admin_reply_gen(req, 200, g);
}

/* t (Unix ns) as RFC 3339 in UTC with nanoseconds, into buf. */
static const char *
time_text(int64_t t, char *buf, size_t len)
{
	if (treaty_rfc3339_format(t / NS_PER_S, (long)(t % NS_PER_S),
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
	admin_reply_gen(req, 200, g);
}

/* The running subscriber called name, or NULL. */
const struct subscriber *
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
	    TREATY_OK || sec < 0 || sec > INT64_MAX / NS_PER_S - 1) {
		admin_reject(req, 400, "bad_request", "since must be an RFC "
		    "3339 date-time, e.g. 2026-12-01T00:00:00Z");
		return -1;
	}
	*ns = sec * NS_PER_S + nsec;
	clock_gettime(CLOCK_REALTIME, &now);
	if (*ns > (int64_t)now.tv_sec * NS_PER_S + now.tv_nsec +
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
	long long	 limit = query_int(q, "limit", 1, DROPS_LIMIT_MAX);
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
		n += p->drops != NULL;
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

/*
 * Replays.
 */

/* A pending replay request, or NULL after answering 503 (too many). */
static struct pending *
replay_pending(struct evhttp_request *req)
{
	struct pending	*p;
	int		 n = 0;

	TAILQ_FOREACH(p, &admin_pending, entry)
		n += p->rj != NULL;
	if (n >= REPLAYS_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many replay "
		    "requests at once; try again");
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->req = req;
	return p;
}

/* Queue p for rj, or answer 503 when the job could not start. */
static void
replay_wait(struct pending *p, struct store_replay_job *rj)
{
	if (rj == NULL) {
		admin_reject(p->req, 503, "unavailable", "JetStream is not "
		    "available; try again");
		free(p);
		return;
	}
	p->rj = rj;
	TAILQ_INSERT_TAIL(&admin_pending, p, entry);
}

/*
 * The request a replay job answers, taken off the list; NULL after
 * answering 503 or 404 when the job did not succeed.
 */
static struct evhttp_request *
replay_answered(struct pending *p, const struct store_replay_answer *a)
{
	struct evhttp_request	*req = p->req;

	TAILQ_REMOVE(&admin_pending, p, entry);
	free(p);
	if (a->result == STORE_REPLAY_NONE) {
		admin_reject(req, 404, "unknown_replay", "no replay with that "
		    "id");
		return NULL;
	}
	if (a->result == STORE_REPLAY_TOO_MANY) {
		admin_reject(req, 400, "bad_request", "more than 1,000,000 "
		    "drop records from since on (every subscriber's); "
		    "redrive from a later since, in parts");
		return NULL;
	}
	if (a->result == STORE_REPLAY_FULL) {
		char	 detail[160];

		snprintf(detail, sizeof(detail), "at most %d replays run at "
		    "once across all instances (TREATY_RELAY_MAX_REPLAYS); "
		    "try again when one has ended", admin_cfg->max_replays);
		if (a->err != NULL)
			log_debug("replay over the cap", "error=%s",
			    log_q(a->err));
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", REPLAYS_RETRY_AFTER);
		admin_reject(req, 429, "too_many_replays", detail);
		return NULL;
	}
	if (a->result == STORE_REPLAY_CONFLICT) {
		admin_reject(req, 409, "replay_conflict", "a replay with that "
		    "id exists, for another subscriber, since or dropped");
		return NULL;
	}
	if (a->result != 0 || a->n != 1) {
		log_warnx("replay request failed", "error=%s", log_q(a->err));
		admin_reject(req, 503, "unavailable", "JetStream did not "
		    "answer; try again");
		return NULL;
	}
	return req;
}

/* The worker's answer to POST .../replay: 202 with the id. */
static void
admin_replay_started(void *arg, struct store_replay_answer *a)
{
	struct evhttp_request	*req;
	const struct store_replay *r;
	yajl_gen		 g;
	char			 loc[96];

	if ((req = replay_answered(arg, a)) == NULL)
		return;
	r = &a->replays[0];
	log_info("replay started", "replay=%s sub=%s dropped_only=%d "
	    "matched=%lld end=%llu", r->id, r->subscriber, r->dropped,
	    (long long)r->matched, (unsigned long long)r->end);
	replay_poke();
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "replay");
	json_gen_str(g, r->id);
	admin_gen_figure(g, "matched", r->matched >= 0,
	    (unsigned long long)r->matched);
	yajl_gen_map_close(g);
	snprintf(loc, sizeof(loc), "/v1/admin/replays/%s", r->id);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Location",
	    loc);
	admin_reply_gen(req, 202, g);
}

/* POST /v1/admin/subscribers/<name>/replay?since=..[&dropped=true] */
static void
admin_replay_start(struct evhttp_request *req, const char *name,
    const struct evkeyvalq *q)
{
	const struct subscriber	*s = admin_subscriber(name);
	int			 dropped = query_bool(q, "dropped");
	const char		*id = evhttp_find_header(q, "id");
	struct pending		*p;
	int64_t			 since;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		admin_reject(req, 405, "method_not_allowed", "use POST");
		return;
	}
	if (dropped == -2) {
		admin_reject(req, 400, "bad_request", "dropped must be true or "
		    "false");
		return;
	}
	if (id != NULL && !hex_exact(id, STORE_REPLAY_ID_LEN)) {
		admin_reject(req, 400, "bad_request", "id must be "
		    API_STR(STORE_REPLAY_ID_LEN) " lowercase hex digits");
		return;
	}
	if (admin_since(req, evhttp_find_header(q, "since"), &since) == -1)
		return;
	if (s == NULL) {
		admin_reject(req, 404, "unknown_subscriber", "no subscriber "
		    "of that name");
		return;
	}
	if ((p = replay_pending(req)) != NULL)
		replay_wait(p, replay_start(s, since, dropped, id,
		    admin_replay_started, p));
}

/* The worker's answer to GET /v1/admin/replays/<id>. */
static void
admin_replay_report(void *arg, struct store_replay_answer *a)
{
	static const char *const states[] = { "running", "done", "cancelled" };
	struct evhttp_request	*req;
	const struct store_replay *r;
	yajl_gen		 g;
	uint64_t		 left = 0, done;
	char			 t[TREATY_RFC3339_MAX];

	if ((req = replay_answered(arg, a)) == NULL)
		return;
	r = &a->replays[0];
	done = r->delivered + r->dropped_n;
	if (r->state == STORE_REPLAY_RUNNING && r->matched >= 0 &&
	    (uint64_t)r->matched > done)
		left = (uint64_t)r->matched - done;
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "id");
	json_gen_str(g, r->id);
	json_gen_str(g, "subscriber");
	json_gen_str(g, r->subscriber);
	json_gen_str(g, "state");
	json_gen_str(g, states[r->state]);
	admin_gen_figure(g, "matched", r->matched >= 0,
	    (unsigned long long)r->matched);
	admin_gen_figure(g, "delivered", 1, r->delivered);
	admin_gen_figure(g, "dropped", 1, r->dropped_n);
	admin_gen_figure(g, "remaining", r->matched >= 0 ||
	    r->state != STORE_REPLAY_RUNNING, left);
	json_gen_str(g, "since");
	json_gen_str(g, time_text(r->since_ns, t, sizeof(t)));
	json_gen_str(g, "onlyDropped");
	yajl_gen_bool(g, r->dropped);
	yajl_gen_map_close(g);
	admin_reply_gen(req, 200, g);
}

/* The worker's answer to DELETE /v1/admin/replays/<id>. */
static void
admin_replay_cancelled(void *arg, struct store_replay_answer *a)
{
	struct evhttp_request	*req;

	if ((req = replay_answered(arg, a)) == NULL)
		return;
	log_info("replay cancelled", "replay=%s state=%d", a->replays[0].id,
	    (int)a->replays[0].state);
	replay_poke();
	reply_json(req, ROUTE_ADMIN, 204, NULL);
}

/* GET or DELETE /v1/admin/replays/<id> */
static void
admin_replay(struct evhttp_request *req, const char *id)
{
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);
	struct pending		*p;

	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD &&
	    m != EVHTTP_REQ_DELETE) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD, DELETE");
		admin_reject(req, 405, "method_not_allowed", "use GET or "
		    "DELETE");
		return;
	}
	if (!hex_exact(id, STORE_REPLAY_ID_LEN)) {
		admin_reject(req, 404, "unknown_replay", "no replay with that "
		    "id");
		return;
	}
	if ((p = replay_pending(req)) == NULL)
		return;
	if (m == EVHTTP_REQ_DELETE)
		replay_wait(p, replay_cancel(id, admin_replay_cancelled, p));
	else
		replay_wait(p, store_replay_report(id, admin_replay_report,
		    p));
}

/*
 * Consumers no subscriber owns (issue 30): a subscriber removed from the
 * configuration leaves its consumer relay-<name> in JetStream, by design;
 * an operator lists them and deletes one when it is gone for good.
 */

/* This instance's subscribers' names (the array is the caller's). */
static const char **
admin_sub_names(int *n)
{
	const char	**names = xcalloc(admin_cfg->nsubscribers + 1,
			    sizeof(*names));
	size_t		 i;

	for (i = 0; i < admin_cfg->nsubscribers; i++)
		names[i] = admin_cfg->subscribers[i].name;
	*n = (int)admin_cfg->nsubscribers;
	return names;
}

/* A pending request about leftovers, or NULL after answering 503. */
static struct pending *
leftover_pending(struct evhttp_request *req)
{
	struct pending	*p;
	int		 n = 0;

	TAILQ_FOREACH(p, &admin_pending, entry)
		n += p->lo != NULL;
	if (n >= LEFTOVER_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many consumer "
		    "requests at once; try again");
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->req = req;
	return p;
}

/* The request a leftover job answers, taken off the list and freed. */
static struct evhttp_request *
leftover_answered(struct pending *p, char **consumer)
{
	struct evhttp_request	*req = p->req;

	TAILQ_REMOVE(&admin_pending, p, entry);
	*consumer = p->consumer;
	free(p);
	return req;
}

/* The worker's answer to GET /v1/admin/consumers. */
static void
admin_consumers_listed(void *arg, enum store_leftover_result res,
    const struct store_leftover *c, int n, int more)
{
	struct evhttp_request	*req;
	yajl_gen		 g;
	char			 t[TREATY_RFC3339_MAX], *consumer;
	int			 i;

	req = leftover_answered(arg, &consumer);
	free(consumer);
	if (res != STORE_LEFTOVER_OK) {
		admin_reject(req, 503, "unavailable", "JetStream did not "
		    "answer; try again");
		return;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "consumers");
	yajl_gen_array_open(g);
	for (i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		json_gen_str(g, "name");
		json_gen_str(g, c[i].name);
		json_gen_str(g, "subscriber");
		json_gen_str(g, c[i].subscriber);
		json_gen_str(g, "kind");
		json_gen_str(g, c[i].push ? "push" : "pull");
		json_gen_str(g, "filter");
		json_gen_str(g, c[i].filter);
		admin_gen_figure(g, "pending", 1, c[i].pending);
		admin_gen_figure(g, "inFlight", 1, c[i].in_flight);
		json_gen_str(g, "created");
		json_gen_str(g, time_text(c[i].created_ns, t, sizeof(t)));
		json_gen_str(g, "lastDelivered");
		json_gen_str_or_null(g, c[i].last_ns > 0 ?
		    time_text(c[i].last_ns, t, sizeof(t)) : NULL);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	json_gen_str(g, "more");
	yajl_gen_bool(g, more);
	yajl_gen_map_close(g);
	admin_reply_gen(req, 200, g);
}

/* GET /v1/admin/consumers */
static void
admin_consumers(struct evhttp_request *req)
{
	struct pending	*p;
	const char	**names;
	int		 n;

	if ((p = leftover_pending(req)) == NULL)
		return;
	names = admin_sub_names(&n);
	p->lo = store_leftover_list(names, n, admin_consumers_listed, p);
	free(names);
	if (p->lo == NULL) {
		free(p);
		admin_reject(req, 503, "unavailable", "JetStream is not "
		    "available; try again");
		return;
	}
	TAILQ_INSERT_TAIL(&admin_pending, p, entry);
}

/* The worker's answer to DELETE /v1/admin/consumers/<name>. */
static void
admin_consumer_deleted(void *arg, enum store_leftover_result res,
    const struct store_leftover *c, int n, int more)
{
	struct evhttp_request	*req;
	char			*consumer;

	(void)c;
	(void)n;
	(void)more;
	req = leftover_answered(arg, &consumer);
	if (res == STORE_LEFTOVER_OK) {
		log_info("leftover consumer deleted", "consumer=%s",
		    log_q(consumer));
		reply_json(req, ROUTE_ADMIN, 204, NULL);
	} else if (res == STORE_LEFTOVER_NONE)
		admin_reject(req, 404, "unknown_consumer", "no consumer of "
		    "that name on WORK");
	else
		admin_reject(req, 503, "unavailable", "JetStream did not "
		    "answer; the consumer may or may not be deleted: try "
		    "again");
	free(consumer);
}

/*
 * DELETE /v1/admin/consumers/<name>: only a consumer no subscriber here
 * owns; a subscriber's, or a running replay's, is 409.
 */
static void
admin_consumer_delete(struct evhttp_request *req, const char *name)
{
	struct pending	*p;
	const char	**names, *tail;
	int		 n;
	enum store_leftover_owner owner;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_DELETE) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "DELETE");
		admin_reject(req, 405, "method_not_allowed", "use DELETE");
		return;
	}
	names = admin_sub_names(&n);
	owner = store_leftover_owner(name, names, n, &tail);
	free(names);
	if (owner == STORE_OWNER_SUBSCRIBER) {
		admin_reject(req, 409, "consumer_in_use", "a subscriber of "
		    "this instance's configuration delivers from it; remove "
		    "the subscriber (and reload) first");
		return;
	}
	if (owner == STORE_OWNER_REPLAY) {
		admin_reject(req, 409, "consumer_in_use", "a replay's "
		    "consumer; cancel the replay (DELETE "
		    "/v1/admin/replays/<id>), which deletes it");
		return;
	}
	/*
	 * relay-<name> with a name no subscriber can have (a '.', a '*', a
	 * space): no consumer of the relay's; JetStream is not asked.
	 */
	if (owner == STORE_OWNER_NONE && !config_name_valid(tail)) {
		admin_reject(req, 404, "unknown_consumer", "no consumer of "
		    "that name on WORK");
		return;
	}
	if (owner == STORE_OWNER_OTHER) {
		admin_reject(req, 409, "not_relay_consumer", "not a "
		    "subscriber's consumer (relay-<name>); the relay deletes "
		    "no other");
		return;
	}
	if ((p = leftover_pending(req)) == NULL)
		return;
	p->consumer = xstrdup(name);
	if ((p->lo = store_leftover_delete(name, admin_consumer_deleted,
	    p)) == NULL) {
		free(p->consumer);
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
		if (p->drops != NULL)
			store_drops_close(p->drops);
		store_leftover_close(p->lo);
		free(p->consumer);
		store_replay_close(p->rj);
		reply_error(p->req, ROUTE_ADMIN, 503, "unavailable", "the "
		    "relay is shutting down");
		free(p);
	}
	admin_subs_fail_all();
	admin_state_fail_all();
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

/*
 * The name in "<name><tail>" (the part of the path after a route's
 * prefix), percent-decoded by libevent (evmem_free_returned frees it);
 * NULL when the path is not that, or the name holds a NUL.
 */
char *
admin_path_name(const char *path, const char *tail)
{
	size_t	 n = strlen(path), tl = strlen(tail), len = 0;
	char	*seg, *name;

	if (n <= tl || strcmp(path + n - tl, tail) != 0 ||
	    memchr(path, '/', n - tl) != NULL)
		return NULL;
	seg = xstrndup(path, n - tl);
	name = evhttp_uridecode(seg, 0, &len);
	free(seg);
	/* A %00 would cut the name short, to another's: no such route. */
	if (name != NULL && strlen(name) != len) {
		evmem_free_returned(name);
		return NULL;
	}
	return name;
}

void
admin_handle(struct evhttp_request *req, const char *rest)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq	 q;
	char			*name;

	if (admin_cfg->admin.n == 0) {
		reply_error(req, ROUTE_OTHER, 404, "not_found", "no such route; "
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
	} else if (strcmp(rest, "consumers") == 0) {
		if (admin_get_only(req))
			admin_consumers(req);
	} else if (strncmp(rest, "consumers/", 10) == 0 &&
	    (name = admin_path_name(rest + 10, "")) != NULL) {
		admin_consumer_delete(req, name);
		evmem_free_returned(name);
	} else if (strncmp(rest, "replays/", 8) == 0)
		admin_replay(req, rest + 8);
	else if (strncmp(rest, "subscribers/", 12) == 0 &&
	    (name = admin_path_name(rest + 12, "/replay")) != NULL) {
		admin_replay_start(req, name, &q);
		evmem_free_returned(name);
	} else if (strncmp(rest, "subscribers/", 12) == 0 &&
	    (name = admin_path_name(rest + 12, "/attempts")) != NULL) {
		admin_attempts(req, name, &q);
		evmem_free_returned(name);
	} else if (strncmp(rest, "subscribers/", 12) == 0 &&
	    ((name = admin_path_name(rest + 12, "/pause")) != NULL ||
	    (name = admin_path_name(rest + 12, "/resume")) != NULL)) {
		admin_state_handle(req, name, strcmp(rest + strlen(rest) - 6,
		    "/pause") == 0);
		evmem_free_returned(name);
	} else if (strncmp(rest, "subscribers/", 12) == 0 &&
	    (name = admin_path_name(rest + 12, "")) != NULL) {
		admin_subs_handle(req, name);
		evmem_free_returned(name);
	} else
		admin_reject(req, 404, "not_found", "no such admin route");
	evhttp_clear_headers(&q);
}

void
admin_free(void)
{
	admin_fail_all();
}
