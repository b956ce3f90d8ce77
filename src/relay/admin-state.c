/*
 * admin-state.c: POST /v1/admin/subscribers/<name>/pause and /resume
 * (SPEC 17), for every subscriber, configured or kept in JetStream, push
 * or pull; and the state's members in a subscriber's status.  Loop
 * thread only.
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

#include "admin.h"
#include "admin-int.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "reply.h"
#include "substate.h"
#include "util.h"

/* Requests waiting for their state at once, at most. */
#define STATE_PENDING_MAX	256

struct state_wait {
	struct evhttp_request	*req;
	struct substate_req	*r;
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
		admin_reject(w->req, 503, "unavailable", "the relay is "
		    "shutting down");
		free(w);
	}
}
