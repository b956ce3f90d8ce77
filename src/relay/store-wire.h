/*
 * store-wire.h: JetStream's wire formats as the relay writes and reads
 * them: consumer names, acknowledgement verbs and subjects, pull requests,
 * publish acknowledgements, the max-deliveries advisory, and a replay's
 * consumer, description and records (SPEC 15).  Pure
 * functions, no nats.h, no libevent: any thread, and unit-tested
 * (test/unit/t-store-wire.c).  Only the store's files use them.
 */
#ifndef STORE_WIRE_H
#define STORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "store-msg.h"
#include "store-replay.h"

#define STORE_WORK		"WORK"
#define STORE_AUDIT		"AUDIT"
/*
 * A binary-mode event's plain traceparent and tracestate (SPEC 17), kept
 * beside its attributes (ingest.c), read by deliver.c.
 */
#define TRACEPARENT_HEADER	"Treaty-Traceparent"
#define TRACESTATE_HEADER	"Treaty-Tracestate"
/* Delivery attempts (SPEC 17): attempts.<subscriber>, a day's at most. */
#define STORE_ATTEMPTS		"ATTEMPTS"
#define STORE_ATTEMPTS_PREFIX	"attempts."
#define STORE_ATTEMPTS_MAX_AGE_NS	(24LL * 3600 * 1000000000LL)
/* Its memory, at most: the oldest records go first beyond it. */
#define STORE_ATTEMPTS_MAX_BYTES	(256LL * 1024 * 1024)
#define STORE_ATTEMPTS_DUPLICATES_NS	(1000000000LL)	/* 1 s */
/* A subscriber's consumer is relay-<name>; its delivery group too. */
#define STORE_CONSUMER_PREFIX	"relay-"
/* The reply subjects of the messages a consumer delivers. */
#define STORE_ACK_PREFIX	"$JS.ACK."
/* A push consumer's deliver subject: outside evt.> and audit.>. */
#define STORE_DELIVER_PREFIX	"treaty.deliver."
/* JetStream's announcement of a message it stopped delivering. */
#define STORE_EXHAUSTED_SUBJECT \
	"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." STORE_WORK ".*"
/* A publish acknowledgement's code when no stream took the subject. */
#define STORE_ACK_NO_STREAM	(-503)
/* Room for any verb store_wire_verb writes. */
#define STORE_VERB_MAX		48

/* relay-<name>, malloc'd. */
char	*store_wire_consumer(const char *name);
/* treaty.deliver.<name>, malloc'd. */
char	*store_wire_deliver(const char *name);
/*
 * The text of an acknowledgement verb into buf: +ACK, +WPI, +TERM (plain:
 * nats-server 2.9 ignores a reasoned one), -NAK, or -NAK {"delay":<ns>}
 * when delay_ms > 0.  Returns buf.
 */
const char *store_wire_verb(enum store_verb v, long long delay_ms,
	    char buf[STORE_VERB_MAX]);
/* 1 when reply is a consumer's ack subject (under $JS.ACK.). */
int	 store_wire_is_ack(const char *reply);
/*
 * Parse a JetStream ack subject into l:
 * $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>, or
 * the newer form with <domain>.<account hash> before <stream> (and a token
 * after).  Anything else leaves l zero, except delivered 1 for a subject
 * under $JS.ACK. it cannot read.
 */
void	 store_wire_ack_parse(const char *reply, struct store_lease *l);
/* The ack subject of consumer's lease l on WORK; -1 when it does not fit. */
int	 store_wire_ack_subject(char *buf, size_t len, const char *consumer,
	    const struct store_lease *l);
/*
 * The reply subjects of our own requests, under our inbox: a plain
 * request's <inbox>.r.<id>, and a pull's
 * <inbox>.p.<consumer index>.<kind>.<id>.  id 0 writes "*" instead: the
 * subject that subscribes to all of them.  -1 when it does not fit.
 */
int	 store_wire_req_reply(char *buf, size_t len, const char *inbox,
	    uint64_t id);
int	 store_wire_pull_reply(char *buf, size_t len, const char *inbox,
	    int consumer, int kind, uint64_t id);
/* $JS.API.CONSUMER.MSG.NEXT.WORK.<consumer>; -1 when it does not fit. */
int	 store_wire_pull_subject(char *buf, size_t len, const char *consumer);
/*
 * The body of a pull request for batch messages: what is there now
 * (expires_ms 0: no_wait) or within expires_ms, and when max_bytes > 0 no
 * more than that many bytes of them (JetStream ends the batch with a 409
 * at the first message that would pass it).  -1 when it does not fit.
 */
int	 store_wire_pull_body(char *buf, size_t len, int batch,
	    long long expires_ms, long long max_bytes);
/*
 * Read a publish acknowledgement: its Status header (NULL when none) and
 * body.  {"stream":..,"seq":..[,"duplicate":true]} gives 0 and *dup;
 * {"error":{"err_code":..,"description":..}}, a status (503: no stream,
 * *code STORE_ACK_NO_STREAM) or anything unreadable gives -1, *code and
 * a description in desc.
 */
int	 store_wire_puback(const char *status, const char *data, size_t len,
	    int *dup, int *code, char *desc, size_t dlen);
/*
 * The "subscriber" of a drop record's data, into name, and its
 * "sequence" into *seq when seq is not NULL (0 when absent: a record from
 * before the relay wrote one).  0, or -1 when the data is not a JSON
 * object with that string (or it does not fit).
 */
int	 store_wire_drop_record(const char *data, size_t len, char *name,
	    size_t namelen, uint64_t *seq);
/*
 * JetStream's answer to a consumer info request
 * ($JS.API.CONSUMER.INFO.<stream>.<consumer>): 1 when it describes the
 * consumer, 0 when JetStream says there is no such consumer (error
 * 10014), -1 for anything else.
 */
#define STORE_WIRE_NO_CONSUMER	10014
int	 store_wire_consumer_found(const char *data, size_t len);
/*
 * Read a max-deliveries advisory: the consumer's name (into name), the
 * stream sequence and the deliveries (0 when absent).  -1 when it is not
 * one or names no positive sequence.
 */
int	 store_wire_advisory(const char *data, size_t len, char *name,
	    size_t namelen, uint64_t *seq, uint64_t *deliveries);

/*
 * Replays.  A replay's description (its consumer's, JSON): subscriber,
 * since and created (Unix ns), onlyDropped, and once started (started 1)
 * end, auditEnd and matched (null when unknown).  With state not NULL it
 * is the replay's end record: also state ("done", "cancelled"),
 * delivered and dropped.  malloc'd.
 */
char	*store_wire_replay_description(const struct store_replay *r,
	    int started, const char *state);
/*
 * A description or end record into r (its subscriber replaced; id,
 * filter and settings untouched; state RUNNING unless the record says
 * done or cancelled).  -1 when it is not one of a started replay (no
 * end yet: it is still being made) or not a JSON object.
 */
int	 store_wire_replay_parse(const char *data, size_t len,
	    struct store_replay *r);
/* An instance's progress record: {"delivered":..,"dropped":..}. */
char	*store_wire_replay_progress(uint64_t delivered, uint64_t dropped);
/* One read (0 for a count it lacks); -1, both 0, when not an object. */
int	 store_wire_replay_progress_read(const char *data, size_t len,
	    uint64_t *delivered, uint64_t *dropped);
/*
 * The subject of an instance's progress record for replay id
 * (audit.relay.treaty.replay.<id>.<instance>), or with instance NULL of
 * its end record (<id>.end).  Six tokens: no producer can publish there
 * (a producer's subjects have five), so no one can hide or fake a
 * replay's end by publishing after it.  -1 when it does not fit.
 */
int	 store_wire_replay_subject(char *buf, size_t len, const char *id,
	    const char *instance);
/* 1 when name is a replay's consumer: replay-<24 lowercase hex>. */
int	 store_wire_replay_name(const char *name);
/*
 * The request that makes r's consumer (probe 0: durable replay-<id>, its
 * description whole, push with the delivery group replay-<id> or pull)
 * or its probe (an ephemeral consumer with the same start and filter
 * that acknowledges nothing and goes away after a minute unused).  It
 * starts at r's start_seq for a redrive, else at since to the
 * nanosecond, or at the first event when since is 0.  The subject to
 * send it to goes to subj; NULL when it does not fit.  malloc'd.
 */
char	*store_wire_replay_consumer(const struct store_replay *r, int probe,
	    char *subj, size_t subjlen);
/*
 * JetStream's answer to a consumer create request: 0 when it made the
 * consumer (its name into name unless name is NULL), -1 with
 * JetStream's description, or "unreadable answer", in err.
 */
int	 store_wire_consumer_created(const char *data, size_t len, char *name,
	    size_t namelen, char *err, size_t errlen);

/*
 * A consumer as a listing of the stream's consumers shows it: what the
 * consumer check compares and the figures read (SPEC 15).
 */
struct store_cinfo {
	char		*name;
	char		*filter;		/* "" when none */
	char		*deliver;		/* "": a pull consumer */
	char		*group;
	int64_t		 ack_wait_ns;
	int64_t		 max_deliver;
	int64_t		 max_ack_pending;
	uint64_t	 opt_start_seq;
	uint64_t	 pending;		/* num_pending */
	uint64_t	 ack_pending;		/* num_ack_pending */
	uint64_t	 redelivered;		/* num_redelivered */
	uint64_t	 delivered_stream;	/* delivered.stream_seq */
	uint64_t	 ack_floor_stream;	/* ack_floor.stream_seq */
};
/*
 * One page of JetStream's consumer listing ($JS.API.CONSUMER.LIST.<stream>,
 * {"offset":N}): its consumers appended to *list (*n of them, room for
 * *cap, grown), and the page's total and limit.  0; or -1 with
 * JetStream's error code (0 when the answer is unreadable) in *code.
 * Parsed with yajl, whose tree costs a few hundred bytes a consumer
 * where nats.c 3.4's js_Consumers parser took 250 KiB and left the heap
 * grown by the peak.
 */
int	 store_wire_consumer_page(const char *data, size_t len,
	    struct store_cinfo **list, int *n, int *cap, int64_t *total,
	    int64_t *limit, int *code);
void	 store_cinfo_free(struct store_cinfo *list, int n);

#endif
