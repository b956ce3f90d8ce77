/*
 * store-pub.c: the publish path.  Loop thread only.
 *
 * Publishes do not use nats.c's asynchronous JetStream publish: its
 * acknowledgement handler runs on a nats.c thread, which cost one thread
 * wake-up per event on the hot path.  Instead each event is a plain core
 * publish whose reply subject is <inbox>.<seq>, and the acknowledgements
 * land in a synchronous subscription on <inbox>.* that the loop polls
 * (store_poll, store.c, hands each to store_pub_ack) right after nats.c
 * has read from the socket.
 *
 * Publishes in flight are bounded (TREATY_RELAY_MAX_PENDING, and the bytes
 * nats.c has not written yet) so that nats.c never has to stall the loop,
 * and each has a deadline (TREATY_RELAY_PUBLISH_TIMEOUT_MS) enforced by a
 * sweep timer: a publish in flight when NATS dies is answered on time,
 * never left hanging.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "metrics.h"
#include "store-int.h"
#include "util.h"

#define SWEEP_MS		100	/* publish deadlines, the grave */
#define PUB_HASH_MIN		64	/* buckets, at least 2 per publish */
/* Bytes of a message's header block besides its headers (NATS/1.0..). */
#define HDR_OVERHEAD		(12 + sizeof("Nats-Msg-Id: \r\n") - 1)

/* One publish waiting for JetStream's acknowledgement. */
struct pub {
	uint64_t		 seq;		/* key: reply subject suffix */
	store_publish_cb	 cb;
	void			*arg;
	enum stream_id		 stream;
	long long		 deadline;	/* now_ms() */
	struct pub		*hnext;		/* hash chain */
	TAILQ_ENTRY(pub)	 entry;		/* oldest first */
};
TAILQ_HEAD(pub_list, pub);

static struct {
	struct pub_list		 live;
	int			 n;
	struct pub		**hash;
	size_t			 hmask;
	uint64_t		 next_seq;
	struct event		 sweep;
} pb = { .live = TAILQ_HEAD_INITIALIZER(pb.live) };

/* Hash a publish sequence number. */
static size_t
pub_slot(uint64_t seq)
{
	return (size_t)(seq * 0x9E3779B97F4A7C15ULL >> 20) & pb.hmask;
}

/* Find the pub for a sequence number, or NULL (it timed out already). */
static struct pub *
pub_find(uint64_t seq)
{
	struct pub	*p;

	for (p = pb.hash[pub_slot(seq)]; p != NULL; p = p->hnext)
		if (p->seq == seq)
			return p;
	return NULL;
}

/* The stream's name for logs. */
static const char *
pub_stream(const struct pub *p)
{
	return p->stream == STREAM_WORK ? STORE_WORK : STORE_AUDIT;
}

/*
 * End a publish: off the hash, the list and the gauge, its owner told the
 * result, freed.  The reason for a failure is logged by the caller, which
 * knows the details.
 */
static void
pub_close(struct pub *p, enum store_result res, int dup)
{
	struct pub	**pp = &pb.hash[pub_slot(p->seq)];

	while (*pp != NULL && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp == p)
		*pp = p->hnext;
	TAILQ_REMOVE(&pb.live, p, entry);
	pb.n--;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, pb.n);
	p->cb(p->arg, res, dup);
	free(p);
}

/* One acknowledgement: answer the publish it belongs to. */
static void
pub_answer(natsMsg *m)
{
	const char	*subj = natsMsg_GetSubject(m), *status = NULL;
	char		*end, desc[160];
	uint64_t	 seq;
	struct pub	*p;
	int		 dup, code;

	if (subj == NULL || strlen(subj) <= store_conn.inbox_len + 1)
		return;
	seq = strtoull(subj + store_conn.inbox_len + 1, &end, 10);
	if (*end != '\0' || (p = pub_find(seq)) == NULL) {
		log_debug("late publish acknowledgement", NULL);
		return;
	}
	if (natsMsgHeader_Get(m, "Status", &status) != NATS_OK)
		status = NULL;
	if (store_wire_puback(status, natsMsg_GetData(m),
	    (size_t)natsMsg_GetDataLength(m), &dup, &code, desc,
	    sizeof(desc)) == 0) {
		metrics_stored(p->stream, dup);
		pub_close(p, STORE_OK, dup);
		return;
	}
	metrics_publish_failure(PUBFAIL_NATS);
	log_warnx("publish failed", "stream=%s code=%d detail=%s",
	    pub_stream(p), code, log_q(desc));
	pub_close(p, STORE_FAILED, 0);
	if (code == STORE_ACK_NO_STREAM && store_conn.streams_ready) {
		/* A stream vanished: stop taking events, re-create it. */
		store_set_state(1, 0);
		store_check();
	}
}

/* One acknowledgement store_poll took: answered, m destroyed (in a batch). */
void
store_pub_ack(natsMsg *m)
{
	pub_answer(m);
	store_grave_add(m);
}

/* Every SWEEP_MS: fail publishes whose acknowledgement did not come. */
static void
pub_sweep_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pub	*p;
	long long	 now = now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	store_poll();
	store_grave_flush();
	while ((p = TAILQ_FIRST(&pb.live)) != NULL && p->deadline <= now) {
		metrics_publish_failure(PUBFAIL_TIMEOUT);
		log_warnx("publish timed out", "stream=%s", pub_stream(p));
		pub_close(p, STORE_TIMEOUT, 0);
	}
}

/* <inbox>.<seq> into buf (STORE_SUBJECT_BUF), without printf (hot path). */
static void
reply_subject(char *buf, uint64_t seq)
{
	char	 digits[24];
	int	 n = 0;

	memcpy(buf, store_conn.inbox, store_conn.inbox_len);
	buf[store_conn.inbox_len] = '.';
	do {
		digits[n++] = (char)('0' + seq % 10);
		seq /= 10;
	} while (seq != 0);
	for (buf += store_conn.inbox_len + 1; n > 0; )
		*buf++ = digits[--n];
	*buf = '\0';
}

/* 1 when the message fits the server's max_payload; see store-pub.h. */
int
store_fits(const struct store_header *h, size_t nh, const char *msg_id,
    size_t len)
{
	size_t	 i, hdrlen = HDR_OVERHEAD + strlen(msg_id);

	for (i = 0; i < nh; i++)
		hdrlen += strlen(h[i].key) + strlen(h[i].value) + 4;
	return store_conn.max_payload <= 0 ||
	    hdrlen + len <= (size_t)store_conn.max_payload;
}

/* Whether n publishes may start now; see store-pub.h. */
enum store_result
store_can_publish(size_t n)
{
	enum store_result	 res = STORE_OK;

	if (!store_ready() || store_conn.closing)
		res = STORE_NOT_READY;
	/*
	 * Both bounds: publishes waiting, and bytes nats.c has not written
	 * yet (its buffer has no limit of its own, and a stalled server keeps
	 * it growing after our publishes have timed out).
	 */
	else if ((size_t)pb.n + n > (size_t)store_conn.cfg->max_pending ||
	    natsConnection_Buffered(store_conn.nc) > OUT_BUFFER_MAX)
		res = STORE_OVERLOAD;
	if (res != STORE_OK)
		store_count_refused(res, n);
	return res;
}

/* Count n publishes refused with res (not STORE_OK); see store-pub.h. */
void
store_count_refused(enum store_result res, size_t n)
{
	metrics_publish_failures(res == STORE_NOT_READY ? PUBFAIL_NOT_READY :
	    res == STORE_OVERLOAD ? PUBFAIL_OVERLOAD : PUBFAIL_NATS, n);
}

/* A record nobody waits for; see store-pub.h. */
int
store_publish_nowait(const char *subject, const void *data, size_t len)
{
	if (!store_ready() || store_conn.closing ||
	    natsConnection_Buffered(store_conn.nc) > OUT_BUFFER_MAX)
		return -1;
	return natsConnection_Publish(store_conn.nc, subject, data, (int)len) ==
	    NATS_OK ? 0 : -1;
}

/* The same with headers and no data; see store-pub.h. */
int
store_publish_nowait_headers(const char *subject,
    const struct store_header *h, size_t nh)
{
	if (!store_ready() || store_conn.closing ||
	    natsConnection_Buffered(store_conn.nc) > OUT_BUFFER_MAX)
		return -1;
	return store_core_publish(subject, NULL, h, nh, NULL, 0) == NATS_OK ?
	    0 : -1;
}

/* See store-int.h. */
natsStatus
store_core_publish(const char *subject, const char *reply,
    const struct store_header *h, size_t nh, const void *data, size_t len)
{
	natsMsg		*msg = NULL;
	natsStatus	 s;
	size_t		 i;

	s = natsMsg_Create(&msg, subject, reply, data, (int)len);
	for (i = 0; s == NATS_OK && i < nh; i++)
		s = natsMsgHeader_Set(msg, h[i].key, h[i].value);
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(store_conn.nc, msg);
	natsMsg_Destroy(msg);
	return s;
}

/* Publish one event; see store-pub.h. */
enum store_result
store_publish(const char *subject, const struct store_header *h, size_t nh,
    const char *msg_id, const void *data, size_t len, store_publish_cb cb,
    void *arg)
{
	natsMsg			*msg = NULL;
	natsStatus		 s;
	struct pub		*p;
	char			 reply[STORE_SUBJECT_BUF];
	size_t			 i;
	enum store_result	 res;

	/* Size first: too large is 413 whatever the state (SPEC 2). */
	if (!store_fits(h, nh, msg_id, len))
		return STORE_TOO_LARGE;
	if ((res = store_can_publish(1)) != STORE_OK)
		return res;

	pb.next_seq++;
	reply_subject(reply, pb.next_seq);
	s = natsMsg_Create(&msg, subject, reply, data, (int)len);
	for (i = 0; s == NATS_OK && i < nh; i++)
		s = natsMsgHeader_Set(msg, h[i].key, h[i].value);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id);
	/* The message is copied into the connection's buffer here. */
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(store_conn.nc, msg);
	store_grave_add(msg);
	if (s != NATS_OK) {
		metrics_publish_failure(PUBFAIL_NATS);
		log_warnx("publish refused by nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return STORE_FAILED;
	}
	p = xcalloc(1, sizeof(*p));
	p->seq = pb.next_seq;
	p->cb = cb;
	p->arg = arg;
	p->stream = strncmp(subject, "audit.", 6) == 0 ? STREAM_AUDIT :
	    STREAM_WORK;
	p->deadline = now_ms() + store_conn.cfg->publish_timeout_ms;
	p->hnext = pb.hash[pub_slot(p->seq)];
	pb.hash[pub_slot(p->seq)] = p;
	TAILQ_INSERT_TAIL(&pb.live, p, entry);
	pb.n++;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, pb.n);
	return STORE_OK;
}

/* Fail everything still waiting (shutdown). */
void
store_fail_all(void)
{
	struct pub	*p;

	while ((p = TAILQ_FIRST(&pb.live)) != NULL) {
		metrics_publish_failure(PUBFAIL_NOT_READY);
		pub_close(p, STORE_FAILED, 0);
	}
}

/* Publishes in flight. */
int
store_in_flight(void)
{
	return pb.n;
}

/* The hash, the sweep and the acknowledgement subscription. */
void
store_pub_init(void)
{
	struct timeval	 tv = { 0, SWEEP_MS * 1000 };
	char		 subj[STORE_SUBJECT_BUF];
	size_t		 n;

	for (n = PUB_HASH_MIN; n < (size_t)store_conn.cfg->max_pending * 2;
	    n <<= 1)
		;
	pb.hash = xcalloc(n, sizeof(*pb.hash));
	pb.hmask = n - 1;
	event_assign(&pb.sweep, store_conn.base, -1, EV_PERSIST, pub_sweep_cb,
	    NULL);
	event_add(&pb.sweep, &tv);
	snprintf(subj, sizeof(subj), "%s.*", (const char *)store_conn.inbox);
	store_sub_sync(&store_polled.acks, subj, NULL);
}

/*
 * Shutdown, before the drain: a synchronous subscription polled with a
 * zero timeout never reports its drain as done, so the drain would run to
 * its timeout.  Nothing is in flight by now.
 */
void
store_pub_unsubscribe(void)
{
	if (store_polled.acks != NULL)
		natsSubscription_Unsubscribe(store_polled.acks);
}

/* After the loop: the timer, the subscription and the tables. */
void
store_pub_destroy(void)
{
	struct pub	*p;

	event_del(&pb.sweep);
	natsSubscription_Destroy(store_polled.acks);
	store_polled.acks = NULL;
	while ((p = TAILQ_FIRST(&pb.live)) != NULL) {
		TAILQ_REMOVE(&pb.live, p, entry);
		free(p);
	}
	pb.n = 0;
	free(pb.hash);
	pb.hash = NULL;
}
