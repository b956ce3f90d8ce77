/*
 * admin-subs.c: PUT, GET and DELETE /v1/admin/subscribers/<name> (SPEC
 * 16): subscribers kept in JetStream's TREATY_SUBSCRIBERS bucket.  Loop
 * thread only; the writes are the store's worker jobs (store-kv.h).
 *
 * A PUT is validated by the code that validates the configuration
 * (config_subscriber_parse), so what one refuses the other refuses, with
 * the same field names.  It is stored with its secrets sealed
 * (seal.h), as the definition the relay read back from the body, not as
 * the body: one form per definition, whatever the spelling.  The answer
 * comes once JetStream has the value and the subscriber's consumer on
 * WORK exists (so deliverFrom "new" starts at the answer); this instance
 * and every other one then apply it from the bucket's watch, through the
 * reload path (subkv.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "admin.h"
#include "admin-int.h"
#include "audit.h"
#include "auth.h"
#include "config.h"
#include "config-int.h"
#include "json.h"
#include "log.h"
#include "query.h"
#include "reply.h"
#include "seal.h"
#include "store-kv.h"
#include "subkv.h"
#include "util.h"

/* How deep a PUT's JSON may nest (a definition needs two). */
#define DEPTH_MAX		8
/* A PUT's body at most (SPEC 16); the front door holds no more either. */
#define BODY_MAX		(64 * 1024)
/* Subscribers in the bucket at most: distinct names are not bounded by its history. */
#define API_SUBSCRIBERS_MAX	10000
/* Writes waiting for JetStream at once. */
#define WRITES_PENDING_MAX	64
/* A generated secret: whsec_ and base64 of this many random bytes. */
#define GEN_SECRET_BYTES	32
/* The actor in AUDIT: this many hex digits of the token's SHA-256. */
#define ACTOR_HEX		12
/*
 * How long an answer waits for this instance to apply its own write,
 * so that a GET right after it sees it; then it goes anyway (the write
 * is stored, and every instance applies it when its watch brings it).
 */
#define APPLIED_WAIT_MS		2000

struct write {
	struct evhttp_request	*req;
	struct store_kv_job	*job;
	struct subscriber	*sub;		/* a put's; NULL: a delete */
	char			*secret;	/* generated, for the answer */
	char			 name[NAME_MAX_LEN + 1];
	char			 actor[ACTOR_HEX + 1];
	/* Stored: the answer, waiting for the revision to be applied. */
	uint64_t		 rev;
	int			 status;
	yajl_gen		 answer;
	struct event		 wait;
	int			 waiting;
	TAILQ_ENTRY(write)	 entry;
};
static TAILQ_HEAD(, write)	 writes = TAILQ_HEAD_INITIALIZER(writes);
static int			 nwrites;
static struct event_base	*subs_base;

/* 422 naming field. */
static void
subs_invalid(struct evhttp_request *req, const char *field,
    const char *detail)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);

	if (log_refused_ok())
		log_info("admin request rejected", "status=422 error=invalid "
		    "field=%s", log_q(field));
	yajl_gen_map_open(g);
	json_gen_str(g, "error");
	json_gen_str(g, "invalid");
	json_gen_str(g, "field");
	json_gen_str(g, field);
	json_gen_str(g, "detail");
	json_gen_str(g, detail);
	yajl_gen_map_close(g);
	admin_reply_gen(req, 422, g);
}

/* deliverFrom as it is written: all, new or an RFC 3339 time. */
static const char *
from_text(const struct subscriber *s, char *buf, size_t len)
{
	if (s->from == SUB_FROM_ALL)
		return "all";
	if (s->from == SUB_FROM_NEW)
		return "new";
	if (treaty_rfc3339_format(s->from_ns / NS_PER_S,
	    (long)(s->from_ns % NS_PER_S), 9, buf, len) < 0)
		return "all";
	return buf;
}

/*
 * s's settings but its secrets as members of the object g is in: the
 * stored value's and the answers' common part.  A stored value leaves a
 * default breaker and ordered false out, so that an instance of an older
 * version (in a rolling upgrade) can still read it.
 */
static void
gen_settings(yajl_gen g, const struct subscriber *s, int stored)
{
	char		 t[TREATY_RFC3339_MAX];
	size_t		 i;

	if (s->kind == SUB_PUSH) {
		json_gen_str(g, "url");
		json_gen_str(g, s->url);
	} else {
		json_gen_str(g, "tokenSha256");
		if (s->tokens.n > 1)
			yajl_gen_array_open(g);
		for (i = 0; i < s->tokens.n; i++)
			json_gen_str(g, s->tokens.hash[i]);
		if (s->tokens.n > 1)
			yajl_gen_array_close(g);
	}
	json_gen_str(g, "filter");
	json_gen_str(g, s->filter);
	json_gen_str(g, "maxDeliver");
	yajl_gen_integer(g, s->max_deliver);
	json_gen_str(g, "maxInFlight");
	yajl_gen_integer(g, s->max_in_flight);
	json_gen_str(g, "standardWebhooks");
	yajl_gen_bool(g, s->standard_webhooks);
	if (!stored || s->ordered) {
		json_gen_str(g, "ordered");
		yajl_gen_bool(g, s->ordered);
	}
	if (s->kind == SUB_PUSH && (!stored ||
	    s->breaker_failures != SUB_BREAKER_DEFAULT)) {
		json_gen_str(g, "breaker");
		yajl_gen_map_open(g);
		json_gen_str(g, "failures");
		yajl_gen_integer(g, s->breaker_failures);
		yajl_gen_map_close(g);
	}
	if (s->rate_limit > 0) {
		char	 num[32];
		int	 n = snprintf(num, sizeof(num), "%.15g", s->rate_limit);

		json_gen_str(g, "rateLimit");
		yajl_gen_number(g, num, (size_t)n);
	}
	json_gen_str(g, "deliverFrom");
	json_gen_str(g, from_text(s, t, sizeof(t)));
}

/* The value stored for s: its settings, its secrets sealed; NULL on failure. */
static char *
stored_value(const struct subscriber *s, size_t *len)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);
	char		*sealed, *out = NULL;
	size_t		 i;

	yajl_gen_map_open(g);
	gen_settings(g, s, 1);
	json_gen_str(g, "secrets");
	yajl_gen_array_open(g);
	for (i = 0; i < s->nsecrets; i++) {
		sealed = seal_secret(admin_cfg->secret_keys, s->name,
		    s->secrets[i]);
		if (sealed == NULL)
			goto out;
		json_gen_str(g, sealed);
		free(sealed);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	out = json_gen_take(g);
	g = NULL;
	*len = strlen(out);
out:
	if (g != NULL)
		yajl_gen_free(g);
	return out;
}

/*
 * The answer's definition: settings, how many secrets (never one of
 * them), source and revision; the figures with them for a GET.
 */
static void
gen_definition(yajl_gen g, const struct subscriber *s, uint64_t rev,
    int figures)
{
	json_gen_str(g, "name");
	json_gen_str(g, s->name);
	json_gen_str(g, "source");
	json_gen_str(g, s->api ? "api" : "config");
	json_gen_str(g, "kind");
	json_gen_str(g, s->kind == SUB_PULL ? "pull" : "push");
	gen_settings(g, s, 0);
	json_gen_str(g, "secrets");
	yajl_gen_integer(g, (long long)s->nsecrets);
	if (s->api) {
		json_gen_str(g, "revision");
		yajl_gen_integer(g, (long long)rev);
	}
	if (figures)
		admin_gen_figures(g, s);
}

/* ETag: "<revision>". */
static void
set_etag(struct evhttp_request *req, uint64_t rev)
{
	char	 etag[32];

	snprintf(etag, sizeof(etag), "\"%llu\"", (unsigned long long)rev);
	evhttp_add_header(evhttp_request_get_output_headers(req), "ETag",
	    etag);
}

/*
 * If-Match: 0 when absent; 1 with *rev for "<digits>" (or bare digits);
 * -1 for anything else, which can match no revision (RFC 9110: 412).
 */
static int
if_match(struct evhttp_request *req, uint64_t *rev)
{
	const char	*v = query_header(evhttp_request_get_input_headers(req),
			    "If-Match");
	char		*end;
	size_t		 n;

	if (v == NULL)
		return 0;
	n = strlen(v);
	if (n >= 3 && v[0] == '"' && v[n - 1] == '"') {
		v++;
		n -= 2;
	}
	if (n == 0 || n > 20 || v[0] < '0' || v[0] > '9')
		return -1;
	*rev = strtoull(v, &end, 10);
	return (size_t)(end - v) == n ? 1 : -1;
}

/* The admin token's actor (ACTOR_HEX digits of its SHA-256). */
static void
actor_of(struct evhttp_request *req, char actor[ACTOR_HEX + 1])
{
	char	 hex[AUTH_HASH_HEX];

	if (auth_bearer(query_header(evhttp_request_get_input_headers(req),
	    "Authorization"), hex) == 0)
		memcpy(actor, hex, ACTOR_HEX);
	else
		memcpy(actor, "unknown\0", 8);
	actor[ACTOR_HEX] = '\0';
}

/* whsec_ and base64 of GEN_SECRET_BYTES random bytes; NULL without any. */
static char *
gen_secret(void)
{
	unsigned char	 raw[GEN_SECRET_BYTES];
	unsigned char	 b64[4 * ((GEN_SECRET_BYTES + 2) / 3) + 1];
	char		*s;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return NULL;
	EVP_EncodeBlock(b64, raw, sizeof(raw));
	OPENSSL_cleanse(raw, sizeof(raw));
	s = xjoin("whsec_", "", (const char *)b64);
	OPENSSL_cleanse(b64, sizeof(b64));
	return s;
}

static void
write_free(struct write *w)
{
	if (w->waiting)
		event_del(&w->wait);
	if (w->answer != NULL)
		yajl_gen_free(w->answer);
	config_subscriber_free(w->sub);
	secret_free(w->secret);
	free(w);
}

/* Send a stored write's answer, and forget the write. */
static void
write_answer(struct write *w)
{
	TAILQ_REMOVE(&writes, w, entry);
	nwrites--;
	if (w->answer == NULL)
		reply_json(w->req, ROUTE_ADMIN, 204, NULL);
	else {
		set_etag(w->req, w->rev);
		admin_reply_gen(w->req, w->status, w->answer);
		w->answer = NULL;
	}
	write_free(w);
}

/* Waited long enough for this instance to apply the write. */
static void
write_wait_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct write	*w = arg;

	(void)fd;
	(void)ev;
	w->waiting = 0;
	log_warnx("subscriber change answered before this instance applied "
	    "it", "subscriber=%s revision=%llu", w->name,
	    (unsigned long long)w->rev);
	write_answer(w);
}

/* The running list applied the bucket up to a revision; see admin-int.h. */
void
admin_subs_applied(void)
{
	struct write	*w, *next;
	uint64_t	 applied = subkv_applied();

	for (w = TAILQ_FIRST(&writes); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->waiting && w->rev <= applied)
			write_answer(w);
	}
}

/* JetStream's answer to a write: the AUDIT record, then the HTTP answer. */
static void
write_done(void *arg, enum store_kv_result r, uint64_t rev, int existed)
{
	struct write	*w = arg;
	struct timeval	 tv = { APPLIED_WAIT_MS / 1000,
			    APPLIED_WAIT_MS % 1000 * 1000 };
	yajl_gen	 g;

	w->job = NULL;
	if (r != STORE_KV_OK) {
		TAILQ_REMOVE(&writes, w, entry);
		nwrites--;
		if (r == STORE_KV_STALE)
			admin_reject(w->req, 412, "precondition_failed", "the "
			    "subscriber changed since that revision (If-Match); "
			    "read it again");
		else if (r == STORE_KV_FULL)
			admin_reject(w->req, 507, "insufficient_storage", "the "
			    "TREATY_SUBSCRIBERS bucket is full; delete "
			    "subscribers no longer used");
		else
			admin_reject(w->req, 503, "unavailable", "JetStream did "
			    "not answer; the change may or may not be stored: "
			    "read it back, or send it again");
		write_free(w);
		return;
	}
	w->rev = rev;
	if (w->sub == NULL) {
		log_info("subscriber deleted", "subscriber=%s revision=%llu "
		    "actor=%s", w->name, (unsigned long long)rev, w->actor);
		audit_subscriber_changed(w->name, "delete", rev, w->actor);
	} else {
		log_info(existed ? "subscriber replaced" : "subscriber created",
		    "subscriber=%s revision=%llu actor=%s", w->name,
		    (unsigned long long)rev, w->actor);
		audit_subscriber_changed(w->name, "put", rev, w->actor);
		g = yajl_gen_alloc(NULL);
		yajl_gen_map_open(g);
		w->sub->api = 1;
		gen_definition(g, w->sub, rev, 0);
		if (w->secret != NULL) {
			/* The one time the relay shows it (SPEC 16). */
			json_gen_str(g, "secret");
			json_gen_str(g, w->secret);
		}
		yajl_gen_map_close(g);
		w->answer = g;
		w->status = existed ? 200 : 201;
	}
	if (subkv_applied() >= rev) {
		write_answer(w);
		return;
	}
	evtimer_assign(&w->wait, subs_base, write_wait_cb, w);
	evtimer_add(&w->wait, &tv);
	w->waiting = 1;
}

/* Queue a write's job; answered 503 when JetStream cannot be asked. */
static void
write_start(struct write *w, const char *val, size_t len, int match,
    uint64_t expect)
{
	struct store_consumer_spec	 spec;

	if (w->sub != NULL) {
		memset(&spec, 0, sizeof(spec));
		spec.name = w->sub->name;
		spec.kind = w->sub->kind == SUB_PUSH ? STORE_PUSH : STORE_PULL;
		spec.filter = w->sub->filter;
		spec.max_deliver = w->sub->max_deliver;
		spec.max_ack_pending = config_max_ack_pending(w->sub);
		spec.ack_wait_s = w->sub->kind == SUB_PUSH ?
		    admin_cfg->ack_wait_seconds : admin_cfg->lease_seconds;
		spec.from = w->sub->from;
		spec.from_ns = w->sub->from_ns;
		w->job = store_kv_put(w->name, val, len, match > 0, expect,
		    &spec, write_done, w);
	} else
		w->job = store_kv_delete(w->name, match > 0, expect,
		    write_done, w);
	if (w->job == NULL) {
		admin_reject(w->req, 503, "unavailable", "JetStream is not "
		    "available; try again");
		write_free(w);
		return;
	}
	TAILQ_INSERT_TAIL(&writes, w, entry);
	nwrites++;
}

/* A write may start: not too many waiting.  Else 503 answered. */
static struct write *
write_new(struct evhttp_request *req, const char *name)
{
	struct write	*w;

	if (nwrites >= WRITES_PENDING_MAX) {
		admin_reject(req, 503, "unavailable", "too many subscriber "
		    "changes at once; try again");
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->req = req;
	snprintf(w->name, sizeof(w->name), "%s", name);
	actor_of(req, w->actor);
	return w;
}

/*
 * The body as a definition into w->sub: 0, or -1 after answering (400
 * not JSON, 413, 422 naming the field).
 */
static int
put_parse(struct evhttp_request *req, struct write *w)
{
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct config_error	 err;
	struct sub_parse	 p;
	const struct subscriber	*cur;
	yajl_val		 o;
	const char		*dup;
	char			*text, why[128], field[160], detail[400];
	size_t			 len = evbuffer_get_length(in), line, col;
	int			 rc = -1;

	if (len > BODY_MAX) {
		admin_reject(req, 413, "too_large", "a definition is at most "
		    "64 KiB");
		return -1;
	}
	text = xmalloc(len + 1);
	evbuffer_copyout(in, text, len);
	text[len] = '\0';
	/*
	 * A definition nests two deep: deeper is refused before yajl builds
	 * (and frees, recursively) a tree of it; so is what is not UTF-8,
	 * which yajl would take and store as it came.
	 */
	if (json_scan(text, len, DEPTH_MAX) != JSON_FLAW_NONE ||
	    !treaty_utf8_valid(text, len)) {
		OPENSSL_cleanse(text, len);
		free(text);
		admin_reject(req, 400, "bad_request", "not a definition: JSON "
		    "in UTF-8, objects and lists at most " API_STR(DEPTH_MAX)
		    " deep, no comments");
		return -1;
	}
	if ((o = yajl_tree_parse(text, NULL, 0)) == NULL) {
		if (json_error_at(text, len, &line, &col, why,
		    sizeof(why)) == 0)
			snprintf(detail, sizeof(detail), "not valid JSON near "
			    "line %zu, column %zu: %s", line, col, why);
		else
			snprintf(detail, sizeof(detail), "not valid JSON");
		OPENSSL_cleanse(text, len);
		free(text);
		admin_reject(req, 400, "bad_request", detail);
		return -1;
	}
	OPENSSL_cleanse(text, len);
	free(text);
	if (!YAJL_IS_OBJECT(o)) {
		admin_reject(req, 400, "bad_request", "the body must be a JSON "
		    "object: a subscriber's definition without its name");
		goto out;
	}
	if ((dup = json_dup_key(o, field, sizeof(field))) != NULL) {
		subs_invalid(req, field, "a key given twice");
		goto out;
	}
	memset(&p, 0, sizeof(p));
	p.cfg = admin_cfg;
	p.nsubs = admin_cfg->nsubscribers;
	p.var = "body";
	p.prefix = "";
	p.from = SUB_FROM_NEW;
	p.api = 1;
	w->sub = xcalloc(1, sizeof(*w->sub));
	snprintf(w->sub->name, sizeof(w->sub->name), "%s", w->name);
	if (config_subscriber_parse(o, w->sub, &p, &err) == -1) {
		subs_invalid(req, err.field, err.detail);
		goto out;
	}
	/* JetStream's consumer cannot change kind under one name. */
	if ((cur = admin_subscriber(w->name)) != NULL &&
	    cur->kind != w->sub->kind) {
		subs_invalid(req, cur->kind == SUB_PUSH ? "url" :
		    "tokenSha256", cur->kind == SUB_PUSH ? "a push subscriber "
		    "cannot become a pull one under its name; delete it first"
		    : "a pull subscriber cannot become a push one under its "
		    "name; delete it first");
		goto out;
	}
	rc = 0;
out:
	if (o != NULL && YAJL_IS_OBJECT(o)) {
		yajl_val secs = config_obj_get(o, "secrets");
		yajl_val sec = config_obj_get(o, "secret");
		size_t	 i;

		if (sec != NULL && YAJL_IS_STRING(sec))
			OPENSSL_cleanse(sec->u.string, strlen(sec->u.string));
		for (i = 0; secs != NULL && YAJL_IS_ARRAY(secs) &&
		    i < secs->u.array.len; i++)
			if (YAJL_IS_STRING(secs->u.array.values[i]))
				OPENSSL_cleanse(secs->u.array.values[i]->
				    u.string, strlen(secs->u.array.values[i]->
				    u.string));
	}
	yajl_tree_free(o);
	return rc;
}

/* PUT /v1/admin/subscribers/<name> */
static void
subs_put(struct evhttp_request *req, const char *name)
{
	const struct subscriber	*cur;
	struct write		*w;
	uint64_t		 expect = 0, rev = 0;
	char			*val;
	size_t			 len;
	int			 match, held, live = 0;
	yajl_gen		 g;

	if (!config_name_valid(name)) {
		subs_invalid(req, "name", "must be 1-64 of A-Za-z0-9_-");
		return;
	}
	cur = admin_subscriber(name);
	if (cur != NULL && !cur->api) {
		admin_reject(req, 409, "config_subscriber", "a subscriber of "
		    "the configuration; change it there");
		return;
	}
	if (admin_cfg->secret_keys == NULL) {
		admin_reject(req, 409, "no_secret_key", "subscribers are "
		    "stored only with their secrets sealed: set "
		    "TREATY_RELAY_SECRET_KEY_FILE");
		return;
	}
	if ((match = if_match(req, &expect)) < 0) {
		admin_reject(req, 412, "precondition_failed", "If-Match must "
		    "be a revision, \"<digits>\"");
		return;
	}
	held = subkv_find(name, &rev, &live);
	if (!held && subkv_count() >= API_SUBSCRIBERS_MAX) {
		admin_reject(req, 409, "too_many_subscribers", "the bucket "
		    "holds the most subscribers it may (10000)");
		return;
	}
	if ((w = write_new(req, name)) == NULL)
		return;
	if (put_parse(req, w) == -1) {
		write_free(w);
		return;
	}
	/*
	 * The same definition as the running one: nothing to write (a retry
	 * of a PUT that was stored).  Only with its secrets given: without,
	 * the PUT asks for a new one.
	 */
	if (w->sub->nsecrets > 0 && cur != NULL && cur->api &&
	    config_subscriber_equal(cur, w->sub) &&
	    (match == 0 || expect == cur->revision)) {
		g = yajl_gen_alloc(NULL);
		yajl_gen_map_open(g);
		gen_definition(g, cur, cur->revision, 0);
		yajl_gen_map_close(g);
		set_etag(req, cur->revision);
		admin_reply_gen(req, 200, g);
		write_free(w);
		return;
	}
	if (w->sub->nsecrets == 0) {
		if ((w->secret = gen_secret()) == NULL) {
			admin_reject(req, 503, "unavailable", "no random bytes "
			    "for a secret; try again");
			write_free(w);
			return;
		}
		w->sub->secrets = xcalloc(1, sizeof(char *));
		w->sub->secrets[w->sub->nsecrets++] = xstrdup(w->secret);
	}
	if ((val = stored_value(w->sub, &len)) == NULL) {
		admin_reject(req, 503, "unavailable", "the secret could not "
		    "be sealed; try again");
		write_free(w);
		return;
	}
	write_start(w, val, len, match, expect);
	free(val);
}

/* GET /v1/admin/subscribers/<name> */
static void
subs_get(struct evhttp_request *req, const char *name)
{
	const struct subscriber	*cur = admin_subscriber(name);
	yajl_gen		 g;
	uint64_t		 rev;
	int			 live;

	if (cur == NULL) {
		if (subkv_find(name, &rev, &live) && !live)
			admin_reject(req, 404, "unknown_subscriber", "the "
			    "bucket has it, but this instance cannot use it "
			    "(see its log: a key it lacks, or a setting that "
			    "refuses it)");
		else
			admin_reject(req, 404, "unknown_subscriber", "no "
			    "subscriber of that name");
		return;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	gen_definition(g, cur, cur->revision, 1);
	yajl_gen_map_close(g);
	if (cur->api)
		set_etag(req, cur->revision);
	admin_reply_gen(req, 200, g);
}

/* DELETE /v1/admin/subscribers/<name> */
static void
subs_delete(struct evhttp_request *req, const char *name)
{
	const struct subscriber	*cur = admin_subscriber(name);
	struct write		*w;
	uint64_t		 expect = 0, rev;
	int			 match, live;

	if (cur != NULL && !cur->api) {
		admin_reject(req, 409, "config_subscriber", "a subscriber of "
		    "the configuration; remove it there");
		return;
	}
	if (cur == NULL && !subkv_find(name, &rev, &live)) {
		admin_reject(req, 404, "unknown_subscriber", "no subscriber "
		    "of that name");
		return;
	}
	if ((match = if_match(req, &expect)) < 0) {
		admin_reject(req, 412, "precondition_failed", "If-Match must "
		    "be a revision, \"<digits>\"");
		return;
	}
	if ((w = write_new(req, name)) == NULL)
		return;
	write_start(w, NULL, 0, match, expect);
}

void
admin_subs_init(struct event_base *base)
{
	subs_base = base;
}

void
admin_subs_handle(struct evhttp_request *req, const char *name)
{
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_PUT:
		subs_put(req, name);
		break;
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
		subs_get(req, name);
		break;
	case EVHTTP_REQ_DELETE:
		subs_delete(req, name);
		break;
	default:
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD, PUT, DELETE");
		admin_reject(req, 405, "method_not_allowed", "use GET, PUT or "
		    "DELETE");
	}
}

void
admin_subs_fail_all(void)
{
	struct write	*w;

	while ((w = TAILQ_FIRST(&writes)) != NULL) {
		TAILQ_REMOVE(&writes, w, entry);
		nwrites--;
		store_kv_close(w->job);
		admin_reject(w->req, 503, "unavailable", "the relay is "
		    "shutting down");
		write_free(w);
	}
}
