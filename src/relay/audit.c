/*
 * audit.c: drop records in AUDIT, for push deliveries (deliver.c) and
 * inbox events whose leases ran out (inbox.c): one implementation, so
 * both read the same in AUDIT.  Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <yajl/yajl_gen.h>

#include "audit.h"
#include "json.h"
#include "log.h"
#include "store-drops.h"
#include "store-msg.h"
#include "store-pub.h"
#include "util.h"

#define DROP_TYPE		"dev.treaty.delivery.dropped.v1"
#define RETRY_SECONDS		2
/* A change of a subscriber of the bucket (SPEC 16). */
#define CHANGED_SUBJECT		"audit.relay.treaty.subscriber.changed"
#define CHANGED_TYPE		"dev.treaty.subscriber.changed.v1"
#define STATE_SUBJECT		"audit.relay.treaty.subscriber.state"
#define STATE_TYPE		"dev.treaty.subscriber.state.v1"

/* A publish in flight; outlives its record if that is cancelled. */
struct audit_pub {
	struct audit_drop	*a;
};

struct audit_drop {
	const char		*subject;	/* in AUDIT */
	const char		*type;		/* the CloudEvent's */
	char			*sub;
	char			 drop_id[160];
	char			*id;		/* for logs */
	char			*record;	/* the JSON */
	audit_cb		 cb;
	void			*arg;
	struct audit_pub	*pub;
	struct event		 retry;
	TAILQ_ENTRY(audit_drop)	 entry;
};

static struct {
	struct event_base		*base;
	TAILQ_HEAD(, audit_drop)	 live;
} au;

/* Set up. */
void
audit_init(struct event_base *base)
{
	au.base = base;
	TAILQ_INIT(&au.live);
}

/* End a record; see audit.h. */
void
audit_drop_close(struct audit_drop *a, const char *reason)
{
	log_debug("audit record closed", "sub=%s id=%s reason=%s", a->sub,
	    log_q(a->id), log_q(reason));
	event_del(&a->retry);
	if (a->pub != NULL)
		a->pub->a = NULL;
	TAILQ_REMOVE(&au.live, a, entry);
	free(a->sub);
	free(a->id);
	free(a->record);
	free(a);
}

static void	audit_publish(struct audit_drop *);

/* A record not stored yet: said once per try, by its kind. */
static void
audit_retry_log(const struct audit_drop *a, int res)
{
	log_warnx(strcmp(a->type, DROP_TYPE) == 0 ? "drop record not stored "
	    "yet, retrying" : "audit record not stored yet, retrying",
	    "sub=%s id=%s result=%d", a->sub, log_q(a->id), res);
}

/* JetStream's answer to a publish of the record. */
static void
audit_stored_cb(void *arg, enum store_result res, int dup)
{
	struct audit_pub	*p = arg;
	struct audit_drop	*a = p->a;
	struct timeval		 tv = { RETRY_SECONDS, 0 };
	audit_cb		 cb;
	void			*cbarg;

	(void)dup;
	free(p);
	if (a == NULL)
		return;			/* cancelled meanwhile */
	a->pub = NULL;
	if (res == STORE_OK) {
		cb = a->cb;
		cbarg = a->arg;
		audit_drop_close(a, "stored");
		cb(cbarg, 1);
		return;
	}
	audit_retry_log(a, (int)res);
	evtimer_add(&a->retry, &tv);
}

/* Timer: try storing the record again. */
static void
audit_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	audit_publish(arg);
}

/* Publish the record (idempotent: the same Nats-Msg-Id every try). */
static void
audit_publish(struct audit_drop *a)
{
	struct store_header	 h[6];
	struct audit_pub	*p = xcalloc(1, sizeof(*p));
	char			 msgid[180];
	enum store_result	 res;
	struct timeval		 tv = { RETRY_SECONDS, 0 };

	/* '!' is in no producer name: no producer can collide with it. */
	snprintf(msgid, sizeof(msgid), "relay!%s", a->drop_id);
	h[0] = (struct store_header){ "ce-specversion", "1.0" };
	h[1] = (struct store_header){ "ce-id", a->drop_id };
	h[2] = (struct store_header){ "ce-source", "/treaty-relay" };
	h[3] = (struct store_header){ "ce-type", a->type };
	h[4] = (struct store_header){ "content-type", "application/json" };
	h[5] = (struct store_header){ "Treaty-Producer", "treaty-relay" };
	p->a = a;
	a->pub = p;
	res = store_publish(a->subject, h, 6, msgid, a->record,
	    strlen(a->record), audit_stored_cb, p);
	if (res != STORE_OK) {
		a->pub = NULL;
		free(p);
		audit_retry_log(a, (int)res);
		evtimer_add(&a->retry, &tv);
	}
}

/* Record a drop; see audit.h. */
struct audit_drop *
audit_drop(const char *subscriber, const char *replay,
    const struct store_msg *m, uint64_t attempts, int status,
    const char *error, audit_cb cb, void *arg)
{
	struct audit_drop	*a = xcalloc(1, sizeof(*a));
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	const char		*subject = store_msg_subject(m);
	char			*source;
	size_t			 len;

	a->subject = STORE_DROP_SUBJECT;
	a->type = DROP_TYPE;
	a->sub = xstrdup(subscriber);
	a->id = store_msg_header_decoded(m, "ce-id");
	a->cb = cb;
	a->arg = arg;
	source = store_msg_header_decoded(m, "ce-source");
	/*
	 * A replay's drop of an event dropped before is a second record:
	 * the same id would be taken for a duplicate within AUDIT's window.
	 */
	snprintf(a->drop_id, sizeof(a->drop_id), "drop-%s-%llu%s%s",
	    subscriber, (unsigned long long)store_msg_seq(m),
	    replay != NULL ? "-r" : "", replay != NULL ? replay : "");
	yajl_gen_map_open(g);
	json_gen_str(g, "subscriber");
	json_gen_str_or_null(g, subscriber);
	json_gen_str(g, "eventId");
	json_gen_str_or_null(g, a->id);
	json_gen_str(g, "source");
	json_gen_str_or_null(g, source);
	json_gen_str(g, "subject");
	json_gen_str_or_null(g, subject != NULL && subject[0] != '\0' ?
	    subject : NULL);
	json_gen_str(g, "attempts");
	yajl_gen_integer(g, (long long)attempts);
	json_gen_str(g, "status");
	if (status > 0)
		yajl_gen_integer(g, status);
	else
		yajl_gen_null(g);
	json_gen_str(g, "error");
	json_gen_str_or_null(g, error);
	if (replay != NULL) {
		json_gen_str(g, "replay");
		json_gen_str(g, replay);
	}
	/* Where the event is in WORK: what a redrive reads (SPEC 15). */
	json_gen_str(g, "sequence");
	yajl_gen_integer(g, (long long)store_msg_seq(m));
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	a->record = xstrndup((const char *)buf, len);
	yajl_gen_free(g);
	free(source);
	evtimer_assign(&a->retry, au.base, audit_retry_cb, a);
	TAILQ_INSERT_TAIL(&au.live, a, entry);
	audit_publish(a);
	return a;
}

/* A change record's owner: nobody waits for it. */
static void
audit_changed_cb(void *arg, int stored)
{
	(void)arg;
	(void)stored;
}

/*
 * A record nobody waits for, of subscriber's: subject and type, its
 * Nats-Msg-Id id (a revision's, never used twice), the JSON record.
 */
static void
audit_record(const char *subject, const char *type, const char *subscriber,
    const char *id, char *record)
{
	struct audit_drop	*a = xcalloc(1, sizeof(*a));

	a->subject = subject;
	a->type = type;
	a->sub = xstrdup(subscriber);
	a->cb = audit_changed_cb;
	snprintf(a->drop_id, sizeof(a->drop_id), "%s", id);
	a->id = xstrdup(a->drop_id);
	a->record = record;
	evtimer_assign(&a->retry, au.base, audit_retry_cb, a);
	TAILQ_INSERT_TAIL(&au.live, a, entry);
	audit_publish(a);
}

/* Record a change of a subscriber of the bucket; see audit.h. */
void
audit_subscriber_changed(const char *subscriber, const char *action,
    uint64_t revision, const char *actor)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	char			 id[160];

	yajl_gen_map_open(g);
	json_gen_str(g, "subscriber");
	json_gen_str(g, subscriber);
	json_gen_str(g, "action");
	json_gen_str(g, action);
	json_gen_str(g, "revision");
	yajl_gen_integer(g, (long long)revision);
	json_gen_str(g, "actor");
	json_gen_str(g, actor);
	yajl_gen_map_close(g);
	/* A revision is the bucket's, and is never used twice. */
	snprintf(id, sizeof(id), "subscriber-%s-%llu", subscriber,
	    (unsigned long long)revision);
	audit_record(CHANGED_SUBJECT, CHANGED_TYPE, subscriber, id,
	    json_gen_take(g));
}

/* Record a subscriber's new state; see audit.h. */
void
audit_subscriber_state(const struct audit_state *st)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	char			 id[160];

	yajl_gen_map_open(g);
	json_gen_str(g, "subscriber");
	json_gen_str(g, st->subscriber);
	json_gen_str(g, "state");
	json_gen_str(g, st->state);
	json_gen_str(g, "previous");
	json_gen_str(g, st->previous);
	json_gen_str(g, "reason");
	json_gen_str(g, st->reason);
	json_gen_str(g, "since");
	json_gen_str(g, st->since);
	json_gen_str(g, "instance");
	json_gen_str(g, st->instance);
	json_gen_str(g, "revision");
	yajl_gen_integer(g, (long long)st->revision);
	if (st->url != NULL) {
		json_gen_str(g, "url");
		json_gen_str(g, st->url);
	}
	if (st->failures > 0) {
		json_gen_str(g, "failures");
		yajl_gen_integer(g, st->failures);
	}
	yajl_gen_map_close(g);
	snprintf(id, sizeof(id), "state-%s-%llu", st->subscriber,
	    (unsigned long long)st->revision);
	audit_record(STATE_SUBJECT, STATE_TYPE, st->subscriber, id,
	    json_gen_take(g));
}

/* Shutdown: end every record not stored, telling its owner. */
void
audit_close_all(void)
{
	struct audit_drop	*a;
	audit_cb		 cb;
	void			*arg;

	while ((a = TAILQ_FIRST(&au.live)) != NULL) {
		cb = a->cb;
		arg = a->arg;
		audit_drop_close(a, "shutting down");
		cb(arg, 0);
	}
}
