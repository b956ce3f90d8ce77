/*
 * admin.c: the operations API (SPEC 15, admin.h).  Loop thread only.
 *
 * Every route needs one of TREATY_RELAY_ADMIN_TOKEN_SHA256's tokens;
 * without the variable there is no such route (404), so a relay that has
 * not been given one shows nothing of itself.  The figures come from
 * substatus.c's copy of JetStream's consumer info, never from a request
 * to JetStream per HTTP request.
 */
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_gen.h>

#include "admin.h"
#include "auth.h"
#include "config.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "substatus.h"

static const struct config	*admin_cfg;

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

/* GET /v1/admin/subscribers */
static void
admin_subscribers(struct evhttp_request *req)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	struct evbuffer		*b = evbuffer_new();
	const unsigned char	*buf;
	struct substatus	 st;
	size_t			 i, len;

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
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		evbuffer_add(b, buf, len);
	yajl_gen_free(g);
	http_reply(req, ROUTE_ADMIN, 200, b);
	evbuffer_free(b);
}

void
admin_handle(struct evhttp_request *req, const char *rest)
{
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);

	if (admin_cfg->admin.n == 0) {
		http_error(req, ROUTE_OTHER, 404, "not_found", "no such route; "
		    "the operations API needs TREATY_RELAY_ADMIN_TOKEN_SHA256");
		return;
	}
	if (admin_auth(req) == -1)
		return;
	if (strcmp(rest, "subscribers") == 0) {
		if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
			evhttp_add_header(evhttp_request_get_output_headers(req),
			    "Allow", "GET, HEAD");
			admin_reject(req, 405, "method_not_allowed", "use GET");
			return;
		}
		admin_subscribers(req);
		return;
	}
	admin_reject(req, 404, "not_found", "no such admin route");
}
