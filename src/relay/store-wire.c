/*
 * store-wire.c: JetStream's wire formats (store-wire.h), and the replays'
 * descriptions and records.  Pure functions: any thread; no nats.h, no
 * libevent.
 *
 * Everything the relay writes to JetStream as text, and everything it
 * reads back from JetStream's replies, is spelled here once, so that the
 * store's other files deal in numbers and enums.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "json.h"
#include "store.h"
#include "store-wire.h"
#include "util.h"

#define PUBACK_MAX	4096	/* longer is not an acknowledgement */
#define RECORD_MAX	65536	/* longer is not a drop record */
#define ADVISORY_MAX	65536

/* relay-<name> */
char *
store_wire_consumer(const char *name)
{
	return xjoin(STORE_CONSUMER_PREFIX, "", name);
}

/* treaty.deliver.<name> */
char *
store_wire_deliver(const char *name)
{
	return xjoin(STORE_DELIVER_PREFIX, "", name);
}

/* The text of an acknowledgement verb. */
const char *
store_wire_verb(enum store_verb v, long long delay_ms,
    char buf[STORE_VERB_MAX])
{
	switch (v) {
	case STORE_ACK:
		return strcpy(buf, "+ACK");
	case STORE_PROGRESS:
		return strcpy(buf, "+WPI");
	case STORE_TERM:
		return strcpy(buf, "+TERM");
	case STORE_NAK:
		break;
	}
	if (delay_ms <= 0)
		return strcpy(buf, "-NAK");
	/* JetStream takes the delay in nanoseconds. */
	snprintf(buf, STORE_VERB_MAX, "-NAK {\"delay\":%lld}",
	    delay_ms * NS_PER_MS);
	return buf;
}

/* Whether reply is an ack subject; see store-wire.h. */
int
store_wire_is_ack(const char *reply)
{
	return reply != NULL && strncmp(reply, STORE_ACK_PREFIX,
	    sizeof(STORE_ACK_PREFIX) - 1) == 0;
}

/* The numbers of an ack subject; see store-wire.h. */
void
store_wire_ack_parse(const char *reply, struct store_lease *l)
{
	const char	*tok[16];
	int		 n = 0, base;
	const char	*p;

	memset(l, 0, sizeof(*l));
	if (!store_wire_is_ack(reply))
		return;		/* not delivered by a consumer */
	l->delivered = 1;
	for (p = reply; p != NULL && n < 16; p = strchr(p, '.')) {
		if (*p == '.')
			p++;
		tok[n++] = p;
	}
	if (n == 9)
		base = 4;
	else if (n >= 11)
		base = 6;
	else
		return;
	l->delivered = strtoull(tok[base], NULL, 10);
	l->seq = strtoull(tok[base + 1], NULL, 10);
	l->dseq = strtoull(tok[base + 2], NULL, 10);
	l->ts = strtoll(tok[base + 3], NULL, 10);
	l->pending = strtoull(tok[base + 4], NULL, 10);
}

/* 0, or -1 when snprintf's result n did not fit in len. */
static int
fits(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* $JS.ACK.WORK.<consumer>.<delivered>.<seq>.<dseq>.<ts>.0 */
int
store_wire_ack_subject(char *buf, size_t len, const char *consumer,
    const struct store_lease *l)
{
	return fits(snprintf(buf, len, STORE_ACK_PREFIX STORE_WORK ".%s.%llu.%llu."
	    "%llu.%lld.0", consumer, (unsigned long long)l->delivered,
	    (unsigned long long)l->seq, (unsigned long long)l->dseq,
	    (long long)l->ts), len);
}

/* The last token of a reply subject: id, or "*" for all of them. */
static const char *
reply_id(char buf[24], uint64_t id)
{
	if (id == 0)
		return "*";
	snprintf(buf, 24, "%llu", (unsigned long long)id);
	return buf;
}

/* <inbox>.r.<id> */
int
store_wire_req_reply(char *buf, size_t len, const char *inbox, uint64_t id)
{
	char	 idb[24];

	return fits(snprintf(buf, len, "%s.r.%s", inbox, reply_id(idb, id)),
	    len);
}

/* <inbox>.p.<consumer>.<kind>.<id> */
int
store_wire_pull_reply(char *buf, size_t len, const char *inbox,
    int consumer, int kind, uint64_t id)
{
	char	 idb[24];

	return fits(snprintf(buf, len, "%s.p.%d.%d.%s", inbox, consumer, kind,
	    reply_id(idb, id)), len);
}

/* $JS.API.CONSUMER.MSG.NEXT.WORK.<consumer> */
int
store_wire_pull_subject(char *buf, size_t len, const char *consumer)
{
	return fits(snprintf(buf, len, "$JS.API.CONSUMER.MSG.NEXT." STORE_WORK
	    ".%s", consumer), len);
}

/*
 * {"batch":N,"no_wait":true} or {"batch":N,"expires":<ns>}, with
 * "max_bytes":B before the end when max_bytes > 0.
 */
int
store_wire_pull_body(char *buf, size_t len, int batch, long long expires_ms,
    long long max_bytes)
{
	char	 mb[40] = "";

	if (max_bytes > 0)
		snprintf(mb, sizeof(mb), ",\"max_bytes\":%lld", max_bytes);
	if (expires_ms <= 0)
		return fits(snprintf(buf, len, "{\"batch\":%d,\"no_wait\":true"
		    "%s}", batch, mb), len);
	return fits(snprintf(buf, len, "{\"batch\":%d,\"expires\":%lld%s}",
	    batch, expires_ms * NS_PER_MS, mb), len);
}

#define JSON_WS(c)	((c) == ' ' || (c) == '\t' || (c) == '\r' || (c) == '\n')

#define ACK_ERROR	1	/* "error" appears */
#define ACK_SEQ		2	/* "seq" appears */

/*
 * Which of the keys "error" and "seq" an acknowledgement holds, and where
 * the text after "duplicate" begins (or NULL): one pass over its quotes,
 * as each stored event has one acknowledgement.  Like a search for each
 * quoted key, it does not tell keys from values.
 */
static int
ack_keys(const char *data, size_t len, const char **dupkey)
{
	const char	*p = data, *end = data + len;
	size_t		 left;
	int		 keys = 0;

	*dupkey = NULL;
	while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
		left = (size_t)(end - ++p);
		if (left >= 6 && memcmp(p, "error\"", 6) == 0)
			keys |= ACK_ERROR;
		else if (left >= 4 && memcmp(p, "seq\"", 4) == 0)
			keys |= ACK_SEQ;
		else if (left >= 10 && memcmp(p, "duplicate\"", 10) == 0 &&
		    *dupkey == NULL)
			*dupkey = p + 10;
	}
	return keys;
}

/*
 * 1 when the text at p, after a key, is ':' and true, with any JSON white
 * space between: nats-server writes "duplicate": true.
 */
static int
json_flag_true(const char *p, const char *end)
{
	if (p == NULL)
		return 0;
	for (; p < end && JSON_WS(*p); p++)
		;
	if (p == end || *p++ != ':')
		return 0;
	for (; p < end && JSON_WS(*p); p++)
		;
	return end - p >= 4 && memcmp(p, "true", 4) == 0;
}

/* A publish acknowledgement; see store-wire.h. */
int
store_wire_puback(const char *status, const char *data, size_t len,
    int *dup, int *code, char *desc, size_t dlen)
{
	char		*text, ebuf[64];
	const char	*dupkey;
	yajl_val	 root, v;
	static const char *err_path[] = { "error", NULL };
	static const char *code_path[] = { "err_code", NULL };
	static const char *desc_path[] = { "description", NULL };
	static const char *dup_path[] = { "duplicate", NULL };
	static const char *seq_path[] = { "seq", NULL };

	*dup = 0;
	*code = 0;
	if (status != NULL) {
		snprintf(desc, dlen, "status %s%s", status,
		    strcmp(status, "503") == 0 ? " (no stream responded)" : "");
		*code = strcmp(status, "503") == 0 ? STORE_ACK_NO_STREAM : 0;
		return -1;
	}
	if (data == NULL || len == 0 || len > PUBACK_MAX) {
		snprintf(desc, dlen, "unreadable acknowledgement");
		return -1;
	}
	/*
	 * The usual answer, {"stream":"WORK","seq":N[,"duplicate":true]}
	 * (perhaps with "domain"), is recognised without building a tree:
	 * none of its string values can contain these keys, since stream
	 * names are ours.  Anything else goes through yajl.
	 */
	if (ack_keys(data, len, &dupkey) == ACK_SEQ) {
		*dup = json_flag_true(dupkey, data + len);
		return 0;
	}
	snprintf(desc, dlen, "unreadable acknowledgement");
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	free(text);
	if (root == NULL || !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return -1;
	}
	if ((v = yajl_tree_get(root, err_path, yajl_t_object)) != NULL) {
		yajl_val c = yajl_tree_get(v, code_path, yajl_t_number);
		yajl_val d = yajl_tree_get(v, desc_path, yajl_t_string);

		*code = c != NULL && YAJL_IS_INTEGER(c) ?
		    (int)YAJL_GET_INTEGER(c) : 0;
		snprintf(desc, dlen, "%s", d != NULL ? d->u.string :
		    "JetStream error");
		yajl_tree_free(root);
		return -1;
	}
	if (yajl_tree_get(root, seq_path, yajl_t_number) == NULL) {
		yajl_tree_free(root);
		return -1;
	}
	*dup = yajl_tree_get(root, dup_path, yajl_t_true) != NULL;
	yajl_tree_free(root);
	return 0;
}

/* A number of a listing's object, or 0. */
static int64_t
page_int(yajl_val o, const char *a, const char *b)
{
	const char	*path[3] = { a, b, NULL };
	yajl_val	 v = yajl_tree_get(o, path, yajl_t_number);

	return v != NULL && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

/* A string of a listing's object, copied, or "". */
static char *
page_str(yajl_val o, const char *a, const char *b)
{
	const char	*path[3] = { a, b, NULL };
	yajl_val	 v = yajl_tree_get(o, path, yajl_t_string);

	return xstrdup(v != NULL ? v->u.string : "");
}

/* A page of a consumer listing; see store-wire.h. */
int
store_wire_consumer_page(const char *data, size_t len,
    struct store_cinfo **list, int *n, int *cap, int64_t *total,
    int64_t *limit, int *code)
{
	static const char *p_cons[] = { "consumers", NULL };
	struct store_cinfo	*ci;
	yajl_val		 root, arr, o;
	char			*text;
	size_t			 i;

	*code = 0;
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root == NULL || !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return -1;
	}
	if ((*code = (int)page_int(root, "error", "err_code")) != 0 ||
	    (arr = yajl_tree_get(root, p_cons, yajl_t_array)) == NULL) {
		yajl_tree_free(root);
		return -1;
	}
	*total = page_int(root, "total", NULL);
	*limit = page_int(root, "limit", NULL);
	for (i = 0; i < arr->u.array.len; i++) {
		o = arr->u.array.values[i];
		if (!YAJL_IS_OBJECT(o))
			continue;
		if (*n == *cap) {
			*cap = *cap > 0 ? *cap * 2 : 64;
			*list = xrealloc(*list, (size_t)*cap *
			    sizeof(**list));
		}
		ci = &(*list)[(*n)++];
		ci->name = page_str(o, "name", NULL);
		ci->filter = page_str(o, "config", "filter_subject");
		ci->deliver = page_str(o, "config", "deliver_subject");
		ci->group = page_str(o, "config", "deliver_group");
		ci->ack_wait_ns = page_int(o, "config", "ack_wait");
		ci->max_deliver = page_int(o, "config", "max_deliver");
		ci->max_ack_pending = page_int(o, "config", "max_ack_pending");
		ci->opt_start_seq = (uint64_t)page_int(o, "config",
		    "opt_start_seq");
		ci->pending = (uint64_t)page_int(o, "num_pending", NULL);
		ci->ack_pending = (uint64_t)page_int(o, "num_ack_pending",
		    NULL);
		ci->redelivered = (uint64_t)page_int(o, "num_redelivered",
		    NULL);
		ci->delivered_stream = (uint64_t)page_int(o, "delivered",
		    "stream_seq");
		ci->ack_floor_stream = (uint64_t)page_int(o, "ack_floor",
		    "stream_seq");
	}
	yajl_tree_free(root);
	return 0;
}

void
store_cinfo_free(struct store_cinfo *list, int n)
{
	int	 i;

	for (i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].filter);
		free(list[i].deliver);
		free(list[i].group);
	}
	free(list);
}

/* data as a JSON object, or NULL (free with yajl_tree_free). */
static yajl_val
json_object(const char *data, size_t len)
{
	char		*text;
	yajl_val	 root;

	if (data == NULL || len == 0 || len > RECORD_MAX)
		return NULL;
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root != NULL && !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		root = NULL;
	}
	return root;
}

/* Whether a consumer info answer found the consumer; see store-wire.h. */
int
store_wire_consumer_found(const char *data, size_t len)
{
	static const char *p_err[] = { "error", "err_code", NULL };
	static const char *p_conf[] = { "config", NULL };
	yajl_val	 root = json_object(data, len), v;
	int		 rc = -1;

	if (root != NULL) {
		if ((v = yajl_tree_get(root, p_err, yajl_t_number)) != NULL)
			rc = YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) ==
			    STORE_WIRE_NO_CONSUMER ? 0 : -1;
		else if (yajl_tree_get(root, p_conf, yajl_t_object) != NULL)
			rc = 1;
	}
	yajl_tree_free(root);
	return rc;
}

/* A drop record's subscriber and sequence; see store-wire.h. */
int
store_wire_drop_record(const char *data, size_t len, char *name,
    size_t namelen, uint64_t *seq)
{
	static const char *p_sub[] = { "subscriber", NULL };
	static const char *p_seq[] = { "sequence", NULL };
	char		*text;
	yajl_val	 root, v;
	int		 rc = -1;

	if (seq != NULL)
		*seq = 0;
	if (data == NULL || len == 0 || len > RECORD_MAX)
		return -1;
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root != NULL && YAJL_IS_OBJECT(root) &&
	    (v = yajl_tree_get(root, p_sub, yajl_t_string)) != NULL &&
	    strlen(v->u.string) < namelen) {
		strcpy(name, v->u.string);
		rc = 0;
		if (seq != NULL && (v = yajl_tree_get(root, p_seq,
		    yajl_t_number)) != NULL && YAJL_IS_INTEGER(v) &&
		    YAJL_GET_INTEGER(v) > 0)
			*seq = (uint64_t)YAJL_GET_INTEGER(v);
	}
	yajl_tree_free(root);
	return rc;
}

/* A max-deliveries advisory; see store-wire.h. */
int
store_wire_advisory(const char *data, size_t len, char *name,
    size_t namelen, uint64_t *seq, uint64_t *deliveries)
{
	static const char *p_con[] = { "consumer", NULL };
	static const char *p_seq[] = { "stream_seq", NULL };
	static const char *p_dc[] = { "deliveries", NULL };
	char		 ebuf[64], *text;
	yajl_val	 root, v;
	const char	*s;
	int		 rc = -1;

	*seq = 0;
	*deliveries = 0;
	if (data == NULL || len == 0 || len > ADVISORY_MAX)
		return -1;
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	free(text);
	if (root == NULL)
		return -1;
	v = yajl_tree_get(root, p_con, yajl_t_string);
	if (v != NULL && (s = YAJL_GET_STRING(v)) != NULL &&
	    strlen(s) < namelen &&
	    (v = yajl_tree_get(root, p_seq, yajl_t_number)) != NULL &&
	    YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) > 0) {
		memcpy(name, s, strlen(s) + 1);
		*seq = (uint64_t)YAJL_GET_INTEGER(v);
		v = yajl_tree_get(root, p_dc, yajl_t_number);
		if (v != NULL && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) > 0)
			*deliveries = (uint64_t)YAJL_GET_INTEGER(v);
		rc = 0;
	}
	yajl_tree_free(root);
	return rc;
}

/*
 * Replays (SPEC 15).  The description and the records are JSON objects;
 * "onlyDropped" is the redrive flag ("dropped" is a count in reports).
 */

/* A non-negative integer member of obj, or def. */
static long long
json_count(yajl_val obj, const char *key, long long def)
{
	const char	*path[] = { key, NULL };
	yajl_val	 v = yajl_tree_get(obj, path, yajl_t_number);

	return v != NULL && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0 ?
	    YAJL_GET_INTEGER(v) : def;
}


/* A replay's description or end record; see store-wire.h. */
char *
store_wire_replay_description(const struct store_replay *r, int started,
    const char *state)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);

	yajl_gen_map_open(g);
	json_gen_str(g, "subscriber");
	json_gen_str(g, r->subscriber);
	json_gen_str(g, "since");
	yajl_gen_integer(g, r->since_ns);
	json_gen_str(g, "onlyDropped");
	yajl_gen_bool(g, r->dropped);
	json_gen_str(g, "created");
	yajl_gen_integer(g, r->created_ns);
	if (started) {
		json_gen_str(g, "end");
		yajl_gen_integer(g, (long long)r->end);
		json_gen_str(g, "auditEnd");
		yajl_gen_integer(g, (long long)r->audit_end);
		json_gen_str(g, "matched");
		if (r->matched >= 0)
			yajl_gen_integer(g, r->matched);
		else
			yajl_gen_null(g);
	}
	if (state != NULL) {
		json_gen_str(g, "state");
		json_gen_str(g, state);
		json_gen_str(g, "delivered");
		yajl_gen_integer(g, (long long)r->delivered);
		json_gen_str(g, "dropped");
		yajl_gen_integer(g, (long long)r->dropped_n);
	}
	yajl_gen_map_close(g);
	return json_gen_take(g);
}

/* A description or end record into r; see store-wire.h. */
int
store_wire_replay_parse(const char *data, size_t len, struct store_replay *r)
{
	static const char *p_sub[] = { "subscriber", NULL };
	static const char *p_only[] = { "onlyDropped", NULL };
	static const char *p_state[] = { "state", NULL };
	yajl_val	 root = json_object(data, len), v;
	int		 rc = -1;

	if (root != NULL &&
	    (v = yajl_tree_get(root, p_sub, yajl_t_string)) != NULL &&
	    json_count(root, "end", -1) >= 0) {
		free(r->subscriber);
		r->subscriber = xstrdup(v->u.string);
		r->since_ns = json_count(root, "since", 0);
		r->created_ns = json_count(root, "created", 0);
		r->dropped = yajl_tree_get(root, p_only, yajl_t_true) != NULL;
		r->end = (uint64_t)json_count(root, "end", 0);
		r->audit_end = (uint64_t)json_count(root, "auditEnd", 0);
		r->matched = json_count(root, "matched", -1);
		r->delivered = (uint64_t)json_count(root, "delivered", 0);
		r->dropped_n = (uint64_t)json_count(root, "dropped", 0);
		r->state = STORE_REPLAY_RUNNING;
		if ((v = yajl_tree_get(root, p_state, yajl_t_string)) != NULL)
			r->state = strcmp(v->u.string, "done") == 0 ?
			    STORE_REPLAY_DONE : strcmp(v->u.string,
			    "cancelled") == 0 ? STORE_REPLAY_CANCELLED :
			    STORE_REPLAY_RUNNING;
		rc = 0;
	}
	yajl_tree_free(root);
	return rc;
}

/* An instance's progress record; see store-wire.h. */
char *
store_wire_replay_progress(uint64_t delivered, uint64_t dropped)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);

	yajl_gen_map_open(g);
	json_gen_str(g, "delivered");
	yajl_gen_integer(g, (long long)delivered);
	json_gen_str(g, "dropped");
	yajl_gen_integer(g, (long long)dropped);
	yajl_gen_map_close(g);
	return json_gen_take(g);
}

/* A progress record read; see store-wire.h. */
int
store_wire_replay_progress_read(const char *data, size_t len,
    uint64_t *delivered, uint64_t *dropped)
{
	yajl_val	 root = json_object(data, len);

	*delivered = *dropped = 0;
	if (root == NULL)
		return -1;
	*delivered = (uint64_t)json_count(root, "delivered", 0);
	*dropped = (uint64_t)json_count(root, "dropped", 0);
	yajl_tree_free(root);
	return 0;
}

/* A replay's record subject; see store-wire.h. */
int
store_wire_replay_subject(char *buf, size_t len, const char *id,
    const char *instance)
{
	return fits(snprintf(buf, len, "%s.%s.%s", STORE_REPLAY_SUBJECT, id,
	    instance != NULL ? instance : STORE_REPLAY_END), len);
}

/* replay-<id>; see store-wire.h. */
int
store_wire_replay_name(const char *name)
{
	size_t	 n = strlen(STORE_REPLAY_PREFIX);

	return name != NULL && strncmp(name, STORE_REPLAY_PREFIX, n) == 0 &&
	    hex_exact(name + n, STORE_REPLAY_ID_LEN);
}

/* The request that makes a replay's consumer or its probe; see .h. */
char *
store_wire_replay_consumer(const struct store_replay *r, int probe,
    char *subj, size_t subjlen)
{
	yajl_gen	 g;
	char		 name[64], deliver[STORE_SUBJECT_BUF];
	char		 t[TREATY_RFC3339_MAX];
	char		*desc;

	snprintf(name, sizeof(name), "%s%s", STORE_REPLAY_PREFIX, r->id);
	if (fits(probe ? snprintf(subj, subjlen,
	    "$JS.API.CONSUMER.CREATE.%s", STORE_WORK) : snprintf(subj, subjlen,
	    "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s", STORE_WORK, name),
	    subjlen) == -1)
		return NULL;
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	json_gen_str(g, "stream_name");
	json_gen_str(g, STORE_WORK);
	json_gen_str(g, "config");
	yajl_gen_map_open(g);
	json_gen_str(g, "deliver_policy");
	if (r->dropped) {
		json_gen_str(g, "by_start_sequence");
		json_gen_str(g, "opt_start_seq");
		yajl_gen_integer(g, (long long)r->start_seq);
	} else if (r->since_ns > 0) {
		/* Nine digits always: nats.c 3.4 drops the leading zeros. */
		treaty_rfc3339_format(r->since_ns / NS_PER_S,
		    (long)(r->since_ns % NS_PER_S), 9, t, sizeof(t));
		json_gen_str(g, "by_start_time");
		json_gen_str(g, "opt_start_time");
		json_gen_str(g, t);
	} else
		json_gen_str(g, "all");
	json_gen_str(g, "filter_subject");
	json_gen_str(g, r->filter);
	json_gen_str(g, "replay_policy");
	json_gen_str(g, "instant");
	if (probe) {
		json_gen_str(g, "ack_policy");
		json_gen_str(g, "none");
		/* Gone on its own if this instance dies before deleting it. */
		json_gen_str(g, "inactive_threshold");
		yajl_gen_integer(g, 60 * NS_PER_S);
	} else {
		desc = store_wire_replay_description(r, 1, NULL);
		json_gen_str(g, "durable_name");
		json_gen_str(g, name);
		json_gen_str(g, "description");
		json_gen_str(g, desc);
		free(desc);
		json_gen_str(g, "ack_policy");
		json_gen_str(g, "explicit");
		json_gen_str(g, "ack_wait");
		yajl_gen_integer(g, (long long)r->ack_wait_s * NS_PER_S);
		json_gen_str(g, "max_deliver");
		yajl_gen_integer(g, r->max_deliver);
		json_gen_str(g, "max_ack_pending");
		yajl_gen_integer(g, r->max_ack_pending);
		if (r->push) {
			snprintf(deliver, sizeof(deliver), "%s%s",
			    STORE_REPLAY_DELIVER, r->id);
			json_gen_str(g, "deliver_subject");
			json_gen_str(g, deliver);
			json_gen_str(g, "deliver_group");
			json_gen_str(g, name);
		}
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	return json_gen_take(g);
}

/* JetStream's answer to a consumer create request; see store-wire.h. */
int
store_wire_consumer_created(const char *data, size_t len, char *name,
    size_t namelen, char *err, size_t errlen)
{
	static const char *p_err[] = { "error", NULL };
	static const char *p_desc[] = { "error", "description", NULL };
	static const char *p_name[] = { "name", NULL };
	yajl_val	 root = json_object(data, len), v = NULL;
	int		 rc = -1;

	if (root != NULL && yajl_tree_get(root, p_err, yajl_t_any) == NULL &&
	    (name == NULL || ((v = yajl_tree_get(root, p_name,
	    yajl_t_string)) != NULL && strlen(v->u.string) < namelen))) {
		if (name != NULL)
			strcpy(name, v->u.string);
		rc = 0;
	} else {
		v = root != NULL ? yajl_tree_get(root, p_desc,
		    yajl_t_string) : NULL;
		snprintf(err, errlen, "%s", v != NULL ? v->u.string :
		    "unreadable answer");
	}
	yajl_tree_free(root);
	return rc;
}
