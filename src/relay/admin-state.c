/*
 * admin-state.c: SPEC 17's routes of one subscriber: POST
 * /v1/admin/subscribers/<name>/pause and /resume, for every subscriber,
 * configured or kept in JetStream, push or pull; GET .../attempts, its
 * delivery attempts newest first; and the state's members in a
 * subscriber's status.  Loop thread only.
 *
 * The answer, 204, comes once the state is stored and this instance
 * applied it (substate_request), so that a status read right after
 * shows it; the other instances follow within the watch's round trip.
 * A pause or a resume of a subscriber already so is 204 with nothing
 * written, and no AUDIT record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <yajl/yajl_gen.h>

#include "treaty.h"
#include "admin.h"
#include "admin-int.h"
#include "api.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "query.h"
#include "reply.h"
#include "store-attempts.h"
#include "substate.h"
#include "util.h"

/* Requests waiting for their state at once, at most. */
#define STATE_PENDING_MAX	256
/* Attempts listings under way at once, and a page's size. */
#define ATTEMPTS_PENDING_MAX	4
#define ATTEMPTS_LIMIT_DEFAULT	100
#define ATTEMPTS_LIMIT_MAX	1000

struct state_wait {
	struct evhttp_request	*req;
	struct substate_req	*r;		/* a pause or a resume */
	struct store_attempts	*a;		/* or a listing */
	char			 name[NAME_MAX_LEN + 1];
	int			 pause;
	TAILQ_ENTRY(state_wait)	 entry;
};
static TAILQ_HEAD(, state_wait)	 waits = TAILQ_HEAD_INITIALIZER(waits);
static int			 nwaits;

/* The state is stored and applied (0), or could not be (-1). */
static void
state_done(void *arg, int result)
{
	struct state_wait	*w = arg;

	TAILQ_REMOVE(&waits, w, entry);
	nwaits--;
	if (result == 0) {
		log_info(w->pause ? "subscriber paused" : "subscriber resumed",
		    "sub=%s", w->name);
		reply_json(w->req, ROUTE_ADMIN, 204, NULL);
	} else
		admin_reject(w->req, 503, "unavailable", "the state could not "
		    "be stored in JetStream; try again");
	free(w);
}

/* POST /v1/admin/subscribers/<name>/pause or /resume. */
void
admin_state_handle(struct evhttp_request *req, const char *name, int pause)
{
	struct state_wait	*w;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		admin_reject(req, 405, "method_not_allowed", "use POST");
		return;
	}
	if (admin_subscriber(name) == NULL) {
		admin_reject(req, 404, "unknown_subscriber", "no subscriber "
		    "of that name");
		return;
	}
	if (nwaits >= STATE_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many state changes "
		    "at once; try again");
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->req = req;
	w->pause = pause;
	snprintf(w->name, sizeof(w->name), "%s", name);
	if ((w->r = substate_request(name, pause, state_done, w)) == NULL) {
		free(w);
		admin_reject(req, 503, "unavailable", "JetStream is not "
		    "reachable; try again");
		return;
	}
	TAILQ_INSERT_TAIL(&waits, w, entry);
	nwaits++;
}

/* The attempts read: {"attempts":[...],"next":..}. */
static void
attempts_cb(void *arg, int ok, const struct store_attempt *a, int n,
    int64_t next_ns)
{
	struct state_wait	*w = arg;
	yajl_gen		 g;
	char			 t[TREATY_RFC3339_MAX];
	int			 i;

	TAILQ_REMOVE(&waits, w, entry);
	nwaits--;
	if (!ok) {
		admin_reject(w->req, 503, "unavailable", "JetStream did not "
		    "answer; try again");
		free(w);
		return;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "attempts");
	yajl_gen_array_open(g);
	for (i = 0; i < n; i++)
		if (json_copy(g, a[i].record, strlen(a[i].record)) == -1)
			yajl_gen_null(g);
	yajl_gen_array_close(g);
	json_gen_str(g, "next");
	if (next_ns > 0 && treaty_rfc3339_format(next_ns / NS_PER_S,
	    (long)(next_ns % NS_PER_S), 9, t, sizeof(t)) >= 0)
		json_gen_str(g, t);
	else
		yajl_gen_null(g);
	yajl_gen_map_close(g);
	admin_reply_gen(w->req, 200, g);
	free(w);
}

/* GET /v1/admin/subscribers/<name>/attempts?limit=N[&before=T] */
void
admin_attempts(struct evhttp_request *req, const char *name,
    const struct evkeyvalq *q)
{
	long long		 limit = query_int(q, "limit", 1,
				    ATTEMPTS_LIMIT_MAX);
	const char		*before = evhttp_find_header(q, "before");
	const struct subscriber	*s;
	struct state_wait	*w;
	int64_t			 sec, before_ns = 0;
	long			 nsec;
	int			 n = 0;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		admin_reject(req, 405, "method_not_allowed", "use GET");
		return;
	}
	if (limit == -2) {
		admin_reject(req, 400, "bad_request", "limit must be 1-"
		    API_STR(ATTEMPTS_LIMIT_MAX));
		return;
	}
	if (before != NULL) {
		if (treaty_rfc3339_parse(before, &sec, &nsec) != TREATY_OK ||
		    sec < 0 || sec > INT64_MAX / NS_PER_S - 1) {
			admin_reject(req, 400, "bad_request", "before must be "
			    "an RFC 3339 date-time, as next gives it");
			return;
		}
		before_ns = sec * NS_PER_S + nsec;
		if (before_ns == 0)
			before_ns = 1;		/* nothing is older */
	}
	if ((s = admin_subscriber(name)) == NULL || s->kind != SUB_PUSH) {
		admin_reject(req, 404, "unknown_subscriber", "no push "
		    "subscriber of that name");
		return;
	}
	TAILQ_FOREACH(w, &waits, entry)
		n += w->a != NULL;
	if (n >= ATTEMPTS_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many attempts "
		    "listings at once; try again");
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->req = req;
	snprintf(w->name, sizeof(w->name), "%s", name);
	if ((w->a = store_attempts(name, before_ns, limit > 0 ? (int)limit :
	    ATTEMPTS_LIMIT_DEFAULT, attempts_cb, w)) == NULL) {
		free(w);
		admin_reject(req, 503, "unavailable", "JetStream is not "
		    "available; try again");
		return;
	}
	TAILQ_INSERT_TAIL(&waits, w, entry);
	nwaits++;
}

/* A subscriber's state (SPEC 17) as members of the object g is in. */
void
admin_gen_state(yajl_gen g, const struct subscriber *s)
{
	const char	*since, *reason;

	substate_detail(s->name, &since, &reason);
	json_gen_str(g, "state");
	json_gen_str(g, substate_text(substate_get(s->name)));
	json_gen_str(g, "stateSince");
	json_gen_str_or_null(g, since);
	json_gen_str(g, "stateReason");
	json_gen_str_or_null(g, reason);
}

/* Shutdown: answer what still waits. */
void
admin_state_fail_all(void)
{
	struct state_wait	*w;

	while ((w = TAILQ_FIRST(&waits)) != NULL) {
		TAILQ_REMOVE(&waits, w, entry);
		nwaits--;
		substate_request_close(w->r);
		store_attempts_close(w->a);
		admin_reject(w->req, 503, "unavailable", "the relay is "
		    "shutting down");
		free(w);
	}
}
