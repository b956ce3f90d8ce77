/*
 * store-wire.c: JetStream's wire formats (store-wire.h).  Pure functions:
 * any thread; no nats.h, no libevent.
 *
 * Everything the relay writes to JetStream as text, and everything it
 * reads back from JetStream's replies, is spelled here once, so that the
 * store's other files deal in numbers and enums.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

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
	    delay_ms * 1000000LL);
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

/* {"batch":N,"no_wait":true} or {"batch":N,"expires":<ns>} */
int
store_wire_pull_body(char *buf, size_t len, int batch, long long expires_ms)
{
	if (expires_ms <= 0)
		return fits(snprintf(buf, len, "{\"batch\":%d,\"no_wait\":true}",
		    batch), len);
	return fits(snprintf(buf, len, "{\"batch\":%d,\"expires\":%lld}",
	    batch, expires_ms * 1000000LL), len);
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

/* Whether a consumer info answer found the consumer; see store-wire.h. */
int
store_wire_consumer_found(const char *data, size_t len)
{
	static const char *p_err[] = { "error", "err_code", NULL };
	static const char *p_conf[] = { "config", NULL };
	char		*text;
	yajl_val	 root, v;
	int		 rc = -1;

	if (data == NULL || len == 0 || len > RECORD_MAX)
		return -1;
	text = xstrndup(data, len);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root != NULL && YAJL_IS_OBJECT(root)) {
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
