/*
 * t-store-wire: JetStream's wire formats as the relay writes and reads
 * them: verbs, ack subjects (both forms), our requests' reply subjects,
 * pull requests, publish acknowledgements, the max-deliveries advisory,
 * and a replay's consumer request, description and records.
 */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "harness.h"
#include "../../src/relay/store-wire.h"

/* The verbs, with and without a delay. */
static void
verbs(void)
{
	char	 b[STORE_VERB_MAX];

	T_EQ_STR(store_wire_verb(STORE_ACK, 0, b), "+ACK");
	T_EQ_STR(store_wire_verb(STORE_PROGRESS, 0, b), "+WPI");
	T_EQ_STR(store_wire_verb(STORE_TERM, 5, b), "+TERM");
	T_EQ_STR(store_wire_verb(STORE_NAK, 0, b), "-NAK");
	T_EQ_STR(store_wire_verb(STORE_NAK, -3, b), "-NAK");
	T_EQ_STR(store_wire_verb(STORE_NAK, 1500, b),
	    "-NAK {\"delay\":1500000000}");
	/* The longest release delay fits. */
	T_EQ_STR(store_wire_verb(STORE_NAK, 3600000, b),
	    "-NAK {\"delay\":3600000000000}");
}

/* Names: the consumer and the deliver subject of a subscriber. */
static void
names(void)
{
	char	*c = store_wire_consumer("orders");
	char	*d = store_wire_deliver("orders");

	T_EQ_STR(c, "relay-orders");
	T_EQ_STR(d, "treaty.deliver.orders");
	free(c);
	free(d);
}

/* The old nine-token ack subject and the newer one with a domain. */
static void
ack_parse(void)
{
	struct store_lease	 l;

	store_wire_ack_parse("$JS.ACK.WORK.relay-a.3.42.7.1700000000000000001.5",
	    &l);
	T_EQ_INT(l.delivered, 3);
	T_EQ_INT(l.seq, 42);
	T_EQ_INT(l.dseq, 7);
	T_EQ_INT(l.ts, 1700000000000000001LL);
	T_EQ_INT(l.pending, 5);
	store_wire_ack_parse("$JS.ACK.hub.ACCHASH.WORK.relay-a.2.43.8.17.0.tok",
	    &l);
	T_EQ_INT(l.delivered, 2);
	T_EQ_INT(l.seq, 43);
	T_EQ_INT(l.dseq, 8);
	T_EQ_INT(l.ts, 17);
	T_EQ_INT(l.pending, 0);
	/* Not a consumer's message: nothing. */
	store_wire_ack_parse("_INBOX.abc.r.1", &l);
	T_EQ_INT(l.delivered, 0);
	T_EQ_INT(l.seq, 0);
	store_wire_ack_parse(NULL, &l);
	T_EQ_INT(l.delivered, 0);
	/* A consumer's, but unreadable: delivered once, no numbers. */
	store_wire_ack_parse("$JS.ACK.WORK.relay-a.3", &l);
	T_EQ_INT(l.delivered, 1);
	T_EQ_INT(l.seq, 0);
	/* Which replies are a consumer's ack subjects. */
	T_EQ_INT(store_wire_is_ack("$JS.ACK.WORK.relay-a.3.42.7.17.5"), 1);
	T_EQ_INT(store_wire_is_ack("$JS.ACK."), 1);
	T_EQ_INT(store_wire_is_ack("$JS.ACK"), 0);
	T_EQ_INT(store_wire_is_ack("_INBOX.abc.r.1"), 0);
	T_EQ_INT(store_wire_is_ack(""), 0);
	T_EQ_INT(store_wire_is_ack(NULL), 0);
}

/* Our requests' reply subjects, and the subscriptions to them. */
static void
replies(void)
{
	char	 b[64], small[12];

	T_EQ_INT(store_wire_req_reply(b, sizeof(b), "_INBOX.x", 42), 0);
	T_EQ_STR(b, "_INBOX.x.r.42");
	T_EQ_INT(store_wire_req_reply(b, sizeof(b), "_INBOX.x", 0), 0);
	T_EQ_STR(b, "_INBOX.x.r.*");
	T_EQ_INT(store_wire_pull_reply(b, sizeof(b), "_INBOX.x", 3, 1,
	    18446744073709551615ULL), 0);
	T_EQ_STR(b, "_INBOX.x.p.3.1.18446744073709551615");
	T_EQ_INT(store_wire_pull_reply(b, sizeof(b), "_INBOX.x", 0, 0, 0), 0);
	T_EQ_STR(b, "_INBOX.x.p.0.0.*");
	T_EQ_INT(store_wire_req_reply(small, sizeof(small), "_INBOX.x", 42),
	    -1);
	T_EQ_INT(store_wire_pull_reply(small, sizeof(small), "_INBOX.x", 3, 1,
	    0), -1);
}

/* A lease's ack subject reads back as the same lease. */
static void
ack_subject(void)
{
	struct store_lease	 l = { 4, 99, 12, 1700000000123456789LL, 0 }, r;
	char			 b[256], small[20];

	T_EQ_INT(store_wire_ack_subject(b, sizeof(b), "relay-inbox", &l), 0);
	T_EQ_STR(b, "$JS.ACK.WORK.relay-inbox.4.99.12.1700000000123456789.0");
	store_wire_ack_parse(b, &r);
	T_ASSERT(memcmp(&l, &r, sizeof(l)) == 0);
	T_EQ_INT(store_wire_ack_subject(small, sizeof(small), "relay-inbox",
	    &l), -1);
}

/* Pull requests: now (no_wait) or with an expiry in nanoseconds. */
static void
pull(void)
{
	char	 b[128], small[8];

	T_EQ_INT(store_wire_pull_subject(b, sizeof(b), "relay-x"), 0);
	T_EQ_STR(b, "$JS.API.CONSUMER.MSG.NEXT.WORK.relay-x");
	T_EQ_INT(store_wire_pull_body(b, sizeof(b), 10, 0, 0), 0);
	T_EQ_STR(b, "{\"batch\":10,\"no_wait\":true}");
	T_EQ_INT(store_wire_pull_body(b, sizeof(b), 1, 30000, 0), 0);
	T_EQ_STR(b, "{\"batch\":1,\"expires\":30000000000}");
	T_EQ_INT(store_wire_pull_body(b, sizeof(b), 256, 0, 8388608), 0);
	T_EQ_STR(b, "{\"batch\":256,\"no_wait\":true,\"max_bytes\":8388608}");
	T_EQ_INT(store_wire_pull_body(b, sizeof(b), 2, 5, 100), 0);
	T_EQ_STR(b, "{\"batch\":2,\"expires\":5000000,\"max_bytes\":100}");
	T_EQ_INT(store_wire_pull_body(small, sizeof(small), 1, 0, 0), -1);
	T_EQ_INT(store_wire_pull_subject(small, sizeof(small), "relay-x"), -1);
}

/* Parse a publish acknowledgement from a string. */
static int
ack(const char *status, const char *body, int *dup, int *code, char *desc)
{
	return store_wire_puback(status, body, body ? strlen(body) : 0, dup,
	    code, desc, 160);
}

/* Publish acknowledgements: stored, duplicate, refused, unreadable. */
static void
puback(void)
{
	char	 desc[160], big[5000];
	int	 dup, code;

	T_EQ_INT(ack(NULL, "{\"stream\":\"WORK\",\"seq\":5}", &dup, &code,
	    desc), 0);
	T_EQ_INT(dup, 0);
	T_EQ_INT(ack(NULL, "{\"stream\":\"WORK\", \"seq\":6, \"duplicate\": "
	    "true}", &dup, &code, desc), 0);
	T_EQ_INT(dup, 1);
	T_EQ_INT(ack(NULL, "{\"stream\":\"WORK\",\"domain\":\"hub\",\"seq\":7,"
	    "\"duplicate\":false}", &dup, &code, desc), 0);
	T_EQ_INT(dup, 0);
	/* Not the fast path: parsed with yajl, same answers. */
	T_EQ_INT(ack(NULL, "{\"error\":{\"code\":400,\"err_code\":10060,"
	    "\"description\":\"expected stream sequence does not match\"}}",
	    &dup, &code, desc), -1);
	T_EQ_INT(code, 10060);
	T_EQ_STR(desc, "expected stream sequence does not match");
	T_EQ_INT(ack(NULL, "{\"error\":{}}", &dup, &code, desc), -1);
	T_EQ_INT(code, 0);
	T_EQ_STR(desc, "JetStream error");
	/* No responders: no stream takes the subject. */
	T_EQ_INT(ack("503", NULL, &dup, &code, desc), -1);
	T_EQ_INT(code, STORE_ACK_NO_STREAM);
	T_EQ_STR(desc, "status 503 (no stream responded)");
	T_EQ_INT(ack("408", "", &dup, &code, desc), -1);
	T_EQ_INT(code, 0);
	T_EQ_STR(desc, "status 408");
	/* Unreadable. */
	T_EQ_INT(ack(NULL, "", &dup, &code, desc), -1);
	T_EQ_STR(desc, "unreadable acknowledgement");
	T_EQ_INT(ack(NULL, "{\"stream\":\"WORK\"}", &dup, &code, desc), -1);
	T_EQ_INT(ack(NULL, "[1,2]", &dup, &code, desc), -1);
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "{\"seq\":1}", 9);
	T_EQ_INT(ack(NULL, big, &dup, &code, desc), -1);
}

/* Read an advisory from a string. */
static int
adv(const char *json, char *name, size_t nlen, uint64_t *seq, uint64_t *dc)
{
	return store_wire_advisory(json, strlen(json), name, nlen, seq, dc);
}

/* The max-deliveries advisory. */
static void
advisory(void)
{
	char		 name[32];
	uint64_t	 seq, dc;

	T_EQ_INT(adv("{\"type\":\"io.nats.jetstream.advisory.v1.max_deliver\","
	    "\"stream\":\"WORK\",\"consumer\":\"relay-a\",\"stream_seq\":17,"
	    "\"deliveries\":5}", name, sizeof(name), &seq, &dc), 0);
	T_EQ_STR(name, "relay-a");
	T_EQ_INT(seq, 17);
	T_EQ_INT(dc, 5);
	T_EQ_INT(adv("{\"consumer\":\"relay-b\",\"stream_seq\":3}", name,
	    sizeof(name), &seq, &dc), 0);
	T_EQ_INT(dc, 0);
	T_EQ_INT(adv("{\"consumer\":\"relay-b\",\"stream_seq\":0}", name,
	    sizeof(name), &seq, &dc), -1);
	T_EQ_INT(adv("{\"consumer\":\"relay-b\"}", name, sizeof(name), &seq,
	    &dc), -1);
	T_EQ_INT(adv("{\"stream_seq\":3}", name, sizeof(name), &seq, &dc), -1);
	T_EQ_INT(adv("{\"consumer\":\"relay-bbbbbbbb\",\"stream_seq\":3}", name,
	    8, &seq, &dc), -1);
	T_EQ_INT(adv("not json", name, sizeof(name), &seq, &dc), -1);
	T_EQ_INT(store_wire_advisory(NULL, 0, name, sizeof(name), &seq, &dc),
	    -1);
}

static int
drop(const char *json, char *name, size_t nlen, uint64_t *seq)
{
	return store_wire_drop_record(json, strlen(json), name, nlen, seq);
}

/* A drop record's subscriber and WORK sequence. */
static void
drop_record(void)
{
	char		 name[16];
	uint64_t	 seq;

	T_EQ_INT(drop("{\"subscriber\":\"billing\",\"attempts\":3,"
	    "\"sequence\":42}", name, sizeof(name), &seq), 0);
	T_EQ_STR(name, "billing");
	T_EQ_INT(seq, 42);
	/* From before the sequence was written, or not a number: 0. */
	T_EQ_INT(drop("{\"subscriber\":\"a\"}", name, sizeof(name), &seq), 0);
	T_EQ_INT(seq, 0);
	T_EQ_INT(drop("{\"subscriber\":\"a\",\"sequence\":\"7\"}", name,
	    sizeof(name), &seq), 0);
	T_EQ_INT(seq, 0);
	T_EQ_INT(drop("{\"subscriber\":\"a\",\"sequence\":-7}", name,
	    sizeof(name), &seq), 0);
	T_EQ_INT(seq, 0);
	T_EQ_INT(drop("{\"subscriber\":\"a\",\"sequence\":7}", name,
	    sizeof(name), NULL), 0);
	T_EQ_INT(drop("{\"sequence\":7}", name, sizeof(name), &seq), -1);
	T_EQ_INT(drop("{\"subscriber\":\"a-long-name-here\"}", name,
	    sizeof(name), &seq), -1);
	T_EQ_INT(drop("[1]", name, sizeof(name), &seq), -1);
	T_EQ_INT(store_wire_drop_record(NULL, 0, name, sizeof(name), &seq), -1);
}

/* A consumer info answer: found, not found, or neither. */
static void
consumer_found(void)
{
	static const char *const found = "{\"type\":\"io.nats.jetstream.api."
	    "v1.consumer_info_response\",\"stream_name\":\"WORK\",\"name\":"
	    "\"replay-0123456789abcdef01234567\",\"config\":{\"ack_policy\":"
	    "\"explicit\"},\"num_pending\":0}";
	static const char *const gone = "{\"type\":\"io.nats.jetstream.api."
	    "v1.consumer_info_response\",\"error\":{\"code\":404,\"err_code\":"
	    "10014,\"description\":\"consumer not found\"}}";
	static const char *const other = "{\"error\":{\"code\":503,"
	    "\"err_code\":10039,\"description\":\"jetstream not enabled\"}}";

	T_EQ_INT(store_wire_consumer_found(found, strlen(found)), 1);
	T_EQ_INT(store_wire_consumer_found(gone, strlen(gone)), 0);
	T_EQ_INT(store_wire_consumer_found(other, strlen(other)), -1);
	T_EQ_INT(store_wire_consumer_found("{}", 2), -1);
	T_EQ_INT(store_wire_consumer_found("[1]", 3), -1);
	T_EQ_INT(store_wire_consumer_found("{\"config\":1}", 12), -1);
	T_EQ_INT(store_wire_consumer_found(NULL, 0), -1);
}

#define RID	"0123456789abcdef01234567"

/* A replay as replay_start fills it in. */
static void
replay_fill(struct store_replay *r)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->id, RID);
	r->subscriber = strdup("billing");
	r->filter = strdup("evt.orders.*.*.*");
	r->push = 1;
	r->since_ns = 1700000000000005000LL;	/* .000005: not .5 */
	r->created_ns = 1700000100123456789LL;
	r->max_deliver = 7;
	r->max_ack_pending = 32;
	r->ack_wait_s = 30;
	r->end = 900;
	r->audit_end = 55;
	r->matched = 412;
}

/* The description reads back as it was written; unstarted does not. */
static void
replay_description(void)
{
	struct store_replay	 r, back;
	char			*d;

	replay_fill(&r);
	d = store_wire_replay_description(&r, 1, NULL);
	memset(&back, 0, sizeof(back));
	back.state = STORE_REPLAY_DONE;
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), 0);
	T_EQ_STR(back.subscriber, "billing");
	T_EQ_INT(back.since_ns, r.since_ns);
	T_EQ_INT(back.created_ns, r.created_ns);
	T_EQ_INT(back.dropped, 0);
	T_EQ_INT(back.end, 900);
	T_EQ_INT(back.audit_end, 55);
	T_EQ_INT(back.matched, 412);
	T_EQ_INT(back.state, STORE_REPLAY_RUNNING);
	T_ASSERT(back.filter == NULL);		/* the listing's, not this */
	free(d);

	/* A redrive with matched unknown: null, read back as -1. */
	r.dropped = 1;
	r.matched = -1;
	d = store_wire_replay_description(&r, 1, NULL);
	T_ASSERT(strstr(d, "\"matched\":null") != NULL);
	T_ASSERT(strstr(d, "\"onlyDropped\":true") != NULL);
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), 0);
	T_EQ_INT(back.dropped, 1);
	T_EQ_INT(back.matched, -1);
	free(d);

	/* Not started yet: no end, so not a replay to take up. */
	d = store_wire_replay_description(&r, 0, NULL);
	T_ASSERT(strstr(d, "\"end\"") == NULL);
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), -1);
	free(d);
	store_replay_free(&back);
	store_replay_free(&r);
}

/* The end record: state and totals. */
static void
replay_end_record(void)
{
	struct store_replay	 r, back;
	char			*d;

	replay_fill(&r);
	r.delivered = 400;
	r.dropped_n = 12;
	memset(&back, 0, sizeof(back));
	d = store_wire_replay_description(&r, 1, "done");
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), 0);
	T_EQ_INT(back.state, STORE_REPLAY_DONE);
	T_EQ_INT(back.delivered, 400);
	T_EQ_INT(back.dropped_n, 12);
	free(d);
	d = store_wire_replay_description(&r, 1, "cancelled");
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), 0);
	T_EQ_INT(back.state, STORE_REPLAY_CANCELLED);
	free(d);
	/* A state it does not know reads as running. */
	d = store_wire_replay_description(&r, 1, "paused");
	T_EQ_INT(store_wire_replay_parse(d, strlen(d), &back), 0);
	T_EQ_INT(back.state, STORE_REPLAY_RUNNING);
	free(d);
	store_replay_free(&back);
	store_replay_free(&r);
}

static int
rparse(const char *text, struct store_replay *r)
{
	return store_wire_replay_parse(text, strlen(text), r);
}

/* What is not a started replay's description. */
static void
replay_parse_bad(void)
{
	struct store_replay	 r;

	memset(&r, 0, sizeof(r));
	T_EQ_INT(store_wire_replay_parse(NULL, 0, &r), -1);
	T_EQ_INT(rparse("", &r), -1);
	T_EQ_INT(rparse("not json", &r), -1);
	T_EQ_INT(rparse("[{\"subscriber\":\"a\",\"end\":1}]", &r), -1);
	T_EQ_INT(rparse("{\"end\":1}", &r), -1);
	T_EQ_INT(rparse("{\"subscriber\":1,\"end\":1}", &r), -1);
	T_EQ_INT(rparse("{\"subscriber\":\"a\",\"end\":-1}", &r), -1);
	T_EQ_INT(rparse("{\"subscriber\":\"a\",\"end\":\"9\"}", &r), -1);
	T_ASSERT(r.subscriber == NULL);
	/* The least that is one; a negative count reads as absent. */
	T_EQ_INT(rparse("{\"subscriber\":\"a\",\"end\":0,\"matched\":-4,"
	    "\"delivered\":-1}", &r), 0);
	T_EQ_STR(r.subscriber, "a");
	T_EQ_INT(r.matched, -1);
	T_EQ_INT(r.delivered, 0);
	store_replay_free(&r);
}

/* Progress records, subjects and consumer names. */
static void
replay_records(void)
{
	char		*d, b[128];
	uint64_t	 dl, dr;

	d = store_wire_replay_progress(17, 3);
	T_EQ_STR(d, "{\"delivered\":17,\"dropped\":3}");
	T_EQ_INT(store_wire_replay_progress_read(d, strlen(d), &dl, &dr), 0);
	T_EQ_INT(dl, 17);
	T_EQ_INT(dr, 3);
	free(d);
	T_EQ_INT(store_wire_replay_progress_read("{\"dropped\":2}", 13, &dl,
	    &dr), 0);
	T_EQ_INT(dl, 0);
	T_EQ_INT(dr, 2);
	T_EQ_INT(store_wire_replay_progress_read("[5]", 3, &dl, &dr), -1);
	T_EQ_INT(store_wire_replay_progress_read(NULL, 0, &dl, &dr), -1);
	T_EQ_INT(dl + dr, 0);

	T_EQ_INT(store_wire_replay_subject(b, sizeof(b), RID,
	    "00112233aabbccdd"), 0);
	T_EQ_STR(b, "audit.relay.treaty.replay." RID ".00112233aabbccdd");
	T_EQ_INT(store_wire_replay_subject(b, sizeof(b), RID, NULL), 0);
	T_EQ_STR(b, "audit.relay.treaty.replay." RID ".end");
	T_EQ_INT(store_wire_replay_subject(b, 40, RID, NULL), -1);

	T_EQ_INT(store_wire_replay_name("replay-" RID), 1);
	T_EQ_INT(store_wire_replay_name("replay-" RID "0"), 0);
	T_EQ_INT(store_wire_replay_name("replay-0123456789abcdef0123456"), 0);
	T_EQ_INT(store_wire_replay_name("replay-0123456789ABCDEF01234567"), 0);
	T_EQ_INT(store_wire_replay_name("relay-" RID), 0);
	T_EQ_INT(store_wire_replay_name(NULL), 0);
}

/* config.<key> of a consumer request as a string, or NULL. */
static const char *
conf_str(yajl_val root, const char *key)
{
	const char	*path[] = { "config", key, NULL };
	yajl_val	 v = yajl_tree_get(root, path, yajl_t_string);

	return v != NULL ? v->u.string : NULL;
}

/* config.<key> as an integer, or -1. */
static long long
conf_int(yajl_val root, const char *key)
{
	const char	*path[] = { "config", key, NULL };
	yajl_val	 v = yajl_tree_get(root, path, yajl_t_number);

	return v != NULL && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

/* The request body as a tree (the test frees it). */
static yajl_val
consumer_req(const struct store_replay *r, int probe, char *subj,
    size_t len)
{
	char		*body = store_wire_replay_consumer(r, probe, subj, len);
	yajl_val	 root;

	T_ASSERT(body != NULL);
	root = yajl_tree_parse(body, NULL, 0);
	T_ASSERT(root != NULL);
	free(body);
	return root;
}

/* The requests that make a replay's consumer and its probe. */
static void
replay_consumer(void)
{
	struct store_replay	 r, back;
	char			 subj[160];
	const char		*desc;
	yajl_val		 root;

	replay_fill(&r);
	/* Push, since a time to the nanosecond. */
	root = consumer_req(&r, 0, subj, sizeof(subj));
	T_EQ_STR(subj, "$JS.API.CONSUMER.DURABLE.CREATE.WORK.replay-" RID);
	T_EQ_STR(conf_str(root, "durable_name"), "replay-" RID);
	T_EQ_STR(conf_str(root, "deliver_policy"), "by_start_time");
	T_EQ_STR(conf_str(root, "opt_start_time"),
	    "2023-11-14T22:13:20.000005000Z");
	T_EQ_STR(conf_str(root, "filter_subject"), "evt.orders.*.*.*");
	T_EQ_STR(conf_str(root, "ack_policy"), "explicit");
	T_EQ_INT(conf_int(root, "ack_wait"), 30000000000LL);
	T_EQ_INT(conf_int(root, "max_deliver"), 7);
	T_EQ_INT(conf_int(root, "max_ack_pending"), 32);
	T_EQ_STR(conf_str(root, "deliver_subject"), "treaty.replay." RID);
	T_EQ_STR(conf_str(root, "deliver_group"), "replay-" RID);
	desc = conf_str(root, "description");
	T_ASSERT(desc != NULL);
	memset(&back, 0, sizeof(back));
	T_EQ_INT(store_wire_replay_parse(desc, strlen(desc), &back), 0);
	T_EQ_INT(back.matched, 412);
	store_replay_free(&back);
	yajl_tree_free(root);

	/* Pull: no deliver subject; a redrive starts at its sequence. */
	r.push = 0;
	r.dropped = 1;
	r.start_seq = 77;
	root = consumer_req(&r, 0, subj, sizeof(subj));
	T_EQ_STR(conf_str(root, "deliver_policy"), "by_start_sequence");
	T_EQ_INT(conf_int(root, "opt_start_seq"), 77);
	T_ASSERT(conf_str(root, "opt_start_time") == NULL);
	T_ASSERT(conf_str(root, "deliver_subject") == NULL);
	T_ASSERT(conf_str(root, "deliver_group") == NULL);
	yajl_tree_free(root);

	/* The probe: ephemeral, acknowledges nothing, goes away unused. */
	r.dropped = 0;
	r.since_ns = 0;
	root = consumer_req(&r, 1, subj, sizeof(subj));
	T_EQ_STR(subj, "$JS.API.CONSUMER.CREATE.WORK");
	T_EQ_STR(conf_str(root, "deliver_policy"), "all");
	T_EQ_STR(conf_str(root, "ack_policy"), "none");
	T_EQ_INT(conf_int(root, "inactive_threshold"), 60000000000LL);
	T_ASSERT(conf_str(root, "durable_name") == NULL);
	T_ASSERT(conf_str(root, "description") == NULL);
	yajl_tree_free(root);
	T_ASSERT(store_wire_replay_consumer(&r, 0, subj, 40) == NULL);
	store_replay_free(&r);
}

static int
created(const char *json, char *name, size_t nlen, char *err)
{
	return store_wire_consumer_created(json, strlen(json), name, nlen,
	    err, 64);
}

/* JetStream's answer to a create request. */
static void
consumer_created(void)
{
	char	 name[32], err[64];

	T_EQ_INT(created("{\"stream_name\":\"WORK\",\"name\":\"Xb3k\","
	    "\"config\":{}}", name, sizeof(name), err), 0);
	T_EQ_STR(name, "Xb3k");
	T_EQ_INT(created("{\"stream_name\":\"WORK\",\"config\":{}}", NULL, 0,
	    err), 0);
	T_EQ_INT(created("{\"config\":{}}", name, sizeof(name), err), -1);
	T_EQ_STR(err, "unreadable answer");
	T_EQ_INT(created("{\"error\":{\"code\":400,\"err_code\":10012,"
	    "\"description\":\"consumer already exists\"}}", NULL, 0, err), -1);
	T_EQ_STR(err, "consumer already exists");
	T_EQ_INT(created("{\"name\":\"a-name-longer-than-eight\"}", name, 8,
	    err), -1);
	T_EQ_INT(created("nope", NULL, 0, err), -1);
	T_EQ_STR(err, "unreadable answer");
	T_EQ_INT(store_wire_consumer_created(NULL, 0, NULL, 0, err, 64), -1);
}

/*
 * A page of JetStream's consumer listing, as nats-server 2.9 writes it
 * (fields trimmed to those read, plus one unknown): the consumers
 * appended, the page's total and limit; an error answer's code.
 */
static void
consumer_page(void)
{
	const char	*page1 = "{\"type\":\"io.nats.jetstream.api.v1."
	    "consumer_list_response\",\"total\":3,\"offset\":0,\"limit\":2,"
	    "\"consumers\":[{\"stream_name\":\"WORK\",\"name\":\"relay-b\","
	    "\"config\":{\"durable_name\":\"relay-b\",\"deliver_subject\":"
	    "\"treaty.deliver.b\",\"deliver_group\":\"relay-b\","
	    "\"opt_start_seq\":7,\"ack_wait\":30000000000,\"max_deliver\":10,"
	    "\"filter_subject\":\"evt.*.b.>\",\"max_ack_pending\":64,"
	    "\"new_in_2_12\":true},\"delivered\":{\"consumer_seq\":5,"
	    "\"stream_seq\":41},\"ack_floor\":{\"consumer_seq\":3,"
	    "\"stream_seq\":39},\"num_ack_pending\":2,\"num_redelivered\":1,"
	    "\"num_waiting\":0,\"num_pending\":12},{\"name\":\"relay-a\","
	    "\"config\":{\"ack_wait\":30000000000,\"max_deliver\":3,"
	    "\"max_ack_pending\":1000},\"num_pending\":0}]}";
	const char	*page2 = "{\"total\":3,\"offset\":2,\"limit\":2,"
	    "\"consumers\":[{\"name\":\"replay-x\",\"config\":{}}]}";
	const char	*bad = "{\"error\":{\"code\":404,\"err_code\":10059,"
	    "\"description\":\"stream not found\"}}";
	struct store_cinfo	*l = NULL;
	int64_t			 total = 0, limit = 0;
	int			 n = 0, cap = 0, code = 0;

	T_EQ_INT(store_wire_consumer_page(page1, strlen(page1), &l, &n, &cap,
	    &total, &limit, &code), 0);
	T_EQ_INT(n, 2);
	T_EQ_INT(total, 3);
	T_EQ_INT(limit, 2);
	T_EQ_STR(l[0].name, "relay-b");
	T_EQ_STR(l[0].deliver, "treaty.deliver.b");
	T_EQ_STR(l[0].group, "relay-b");
	T_EQ_STR(l[0].filter, "evt.*.b.>");
	T_EQ_INT(l[0].ack_wait_ns, 30000000000LL);
	T_EQ_INT(l[0].max_deliver, 10);
	T_EQ_INT(l[0].max_ack_pending, 64);
	T_EQ_INT(l[0].opt_start_seq, 7);
	T_EQ_INT(l[0].pending, 12);
	T_EQ_INT(l[0].ack_pending, 2);
	T_EQ_INT(l[0].redelivered, 1);
	T_EQ_INT(l[0].delivered_stream, 41);
	T_EQ_INT(l[0].ack_floor_stream, 39);
	/* A pull consumer: no deliver subject, no filter; "" each. */
	T_EQ_STR(l[1].name, "relay-a");
	T_EQ_STR(l[1].deliver, "");
	T_EQ_STR(l[1].filter, "");
	T_EQ_INT(l[1].max_ack_pending, 1000);
	T_EQ_INT(store_wire_consumer_page(page2, strlen(page2), &l, &n, &cap,
	    &total, &limit, &code), 0);
	T_EQ_INT(n, 3);
	T_EQ_STR(l[2].name, "replay-x");
	T_EQ_INT(store_wire_consumer_page(bad, strlen(bad), &l, &n, &cap,
	    &total, &limit, &code), -1);
	T_EQ_INT(code, 10059);
	T_EQ_INT(store_wire_consumer_page("nope", 4, &l, &n, &cap, &total,
	    &limit, &code), -1);
	T_EQ_INT(code, 0);
	T_EQ_INT(n, 3);
	store_cinfo_free(l, n);
}

static const struct t_case cases[] = {
	{ "acknowledgement verbs", verbs },
	{ "consumer and deliver names", names },
	{ "ack subjects read, both forms", ack_parse },
	{ "a lease's ack subject reads back", ack_subject },
	{ "our requests' reply subjects", replies },
	{ "pull requests", pull },
	{ "publish acknowledgements", puback },
	{ "max-deliveries advisory", advisory },
	{ "drop records", drop_record },
	{ "consumer info: found or not", consumer_found },
	{ "replay description reads back", replay_description },
	{ "replay end record", replay_end_record },
	{ "not a replay's description", replay_parse_bad },
	{ "replay progress records, subjects, names", replay_records },
	{ "replay consumer requests", replay_consumer },
	{ "consumer create answers", consumer_created },
	{ "consumer listing pages", consumer_page },
};

int
main(void)
{
	return t_run("store-wire", cases, T_NCASES(cases)) ? 1 : 0;
}
