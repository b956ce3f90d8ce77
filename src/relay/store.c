/*
 * store.c: the only file that includes nats.h.  The NATS connection, the
 * WORK and AUDIT streams, and asynchronous JetStream publishes.
 *
 * THE THREADING RULE (see bridge.h).  nats.c's libevent adapter does the
 * socket I/O on our loop, but nats.c runs the publish-acknowledgement
 * handler and the connection callbacks on its own threads.  Every function
 * below marked "Runs on a nats.c thread" only fills a bridge item and posts
 * it; everything else here runs on the loop thread.  Stream management
 * (js_GetStreamInfo, js_AddStream, js_UpdateStream) waits for a reply that
 * the loop reads, so it runs as a bridge job on the worker thread.
 *
 * Publishes: js_PublishMsgAsync with MaxWait, so a publish in flight when
 * NATS dies fails with NATS_TIMEOUT on time instead of hanging.  nats.c
 * stalls the calling thread (our loop) once PublishAsync.MaxPending
 * publishes are unacknowledged, so we bound in-flight publishes ourselves
 * (cfg->max_pending, far below nats.c's bound) and answer 503 beyond it.
 * The acknowledgement handler is handed the natsMsg we published; it
 * passes it to the loop, which uses the pointer as the key back to the
 * request and destroys it.  Since only the loop frees a message, an
 * address cannot be reused while its acknowledgement is still queued.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>

/*
 * adapters/libevent.h defines its functions in the header, without
 * prototypes: include it here and nowhere else.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wcast-qual"
#include <nats/nats.h>
#include <nats/adapters/libevent.h>
#pragma GCC diagnostic pop

#include "bridge.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "util.h"

#define STREAM_CHECK_MS		10000	/* background re-check of streams */
#define SWEEP_MS		250	/* publish deadline backstop */
#define JS_API_WAIT_MS		5000	/* stream management requests */
#define DRAIN_MS		2000

/* One publish waiting for JetStream's acknowledgement. */
struct pub {
	natsMsg			*msg;		/* key; owned by nats.c */
	store_publish_cb	 cb;
	void			*arg;
	enum stream_id		 stream;
	long long		 deadline;	/* backstop, now_ms() */
	struct pub		*hnext;		/* hash chain */
	TAILQ_ENTRY(pub)	 entry;		/* oldest first */
};
TAILQ_HEAD(pub_list, pub);

/* Acknowledgement handed from the nats.c thread to the loop. */
struct puback {
	struct bridge_item	 item;
	natsMsg			*msg;
	natsStatus		 err;		/* NATS_OK when stored */
	jsErrCode		 code;
	int			 duplicate;
};

/* Connection event handed from a nats.c thread to the loop. */
enum conn_event {
	CONN_CONNECTED,
	CONN_DISCONNECTED,
	CONN_RECONNECTED,
	CONN_CLOSED
};
struct connev {
	struct bridge_item	 item;
	enum conn_event		 what;
};

/* The stream check job, on the worker thread. */
struct stream_job {
	struct bridge_job	 job;
	int			 ok;
	char			 detail[256];
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	natsOptions		*opts;
	natsConnection		*nc;
	jsCtx			*js;
	int			 connected;
	int			 streams_ready;
	int			 closing;
	struct pub_list		 pubs;
	int			 npubs;
	struct pub		**hash;
	size_t			 hmask;
	struct event		 sweep_ev;
	struct event		 check_ev;
	struct event		 drain_ev;
	int			 check_running;
	void			(*drained)(void);
	int			 max_payload;
} st;

static void	store_check_streams(void);

/* Hash a message pointer. */
static size_t
pub_slot(const natsMsg *m)
{
	uintptr_t	 p = (uintptr_t)m;

	p ^= p >> 17;
	p *= (uintptr_t)0x9E3779B97F4A7C15ULL;
	return (size_t)(p >> 7) & st.hmask;
}

/* Remove pub from the hash, the list and the gauge. */
static void
pub_unlink(struct pub *p)
{
	struct pub	**pp = &st.hash[pub_slot(p->msg)];

	while (*pp != NULL && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp == p)
		*pp = p->hnext;
	TAILQ_REMOVE(&st.pubs, p, entry);
	st.npubs--;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, st.npubs);
}

/* Find the pub for a message, or NULL (it timed out already). */
static struct pub *
pub_find(const natsMsg *m)
{
	struct pub	*p;

	for (p = st.hash[pub_slot(m)]; p != NULL; p = p->hnext)
		if (p->msg == m)
			return p;
	return NULL;
}

/* Answer one publish and free it. */
static void
pub_close(struct pub *p, enum store_result res, int dup)
{
	pub_unlink(p);
	p->cb(p->arg, res, dup);
	free(p);
}

/* Publish acknowledgement, on the loop: answer the request it belongs to. */
static void
store_puback_loop(struct bridge_item *it)
{
	struct puback	*a = BRIDGE_CONTAINER(it, struct puback, item);
	struct pub	*p;

	if ((p = pub_find(a->msg)) != NULL) {
		if (a->err == NATS_OK) {
			metrics_stored(p->stream, a->duplicate);
			pub_close(p, STORE_OK, a->duplicate);
		} else if (a->err == NATS_TIMEOUT) {
			metrics_publish_failure(PUBFAIL_TIMEOUT);
			log_warnx("publish timed out", "stream=%s",
			    p->stream == STREAM_WORK ? "WORK" : "AUDIT");
			pub_close(p, STORE_TIMEOUT, 0);
		} else {
			metrics_publish_failure(PUBFAIL_NATS);
			log_warnx("publish failed", "err=%s code=%d",
			    log_q(natsStatus_GetText(a->err)), (int)a->code);
			pub_close(p, STORE_FAILED, 0);
		}
	} else
		log_debug("late publish acknowledgement", "err=%d", a->err);
	natsMsg_Destroy(a->msg);
	free(a);
}

/*
 * Runs on a nats.c thread.  Hands the message and its outcome to the loop;
 * the loop destroys the message.
 */
static void
store_puback_cb(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae,
    void *closure)
{
	struct puback	*a = xcalloc(1, sizeof(*a));

	(void)js;
	(void)closure;
	a->item.fn = store_puback_loop;
	a->msg = msg;
	if (pa != NULL) {
		a->err = NATS_OK;
		a->duplicate = pa->Duplicate;
	} else {
		a->err = pae != NULL ? pae->Err : NATS_ERR;
		a->code = pae != NULL ? pae->ErrCode : 0;
		if (a->err == NATS_OK)	/* an API error with a JetStream code */
			a->err = NATS_ERR;
	}
	bridge_post(&a->item);
}

/* Deadline backstop: fail publishes whose acknowledgement never came. */
static void
store_sweep_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pub	*p;
	long long	 now = now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	while ((p = TAILQ_FIRST(&st.pubs)) != NULL && p->deadline <= now) {
		metrics_publish_failure(PUBFAIL_TIMEOUT);
		log_warnx("publish acknowledgement overdue", NULL);
		pub_close(p, STORE_TIMEOUT, 0);
	}
}

/* Publish one event; see store.h. */
enum store_result
store_publish(const char *subject, const struct store_header *h, size_t nh,
    const char *msg_id, const void *data, size_t len, store_publish_cb cb,
    void *arg)
{
	natsMsg		*msg = NULL, *key;
	jsPubOptions	 po;
	natsStatus	 s;
	struct pub	*p;
	size_t		 i, hdrlen = 12 + strlen("Nats-Msg-Id: \r\n") +
			    strlen(msg_id);

	if (!store_ready() || st.closing) {
		metrics_publish_failure(PUBFAIL_NOT_READY);
		return STORE_NOT_READY;
	}
	if (st.npubs >= st.cfg->max_pending) {
		metrics_publish_failure(PUBFAIL_OVERLOAD);
		return STORE_OVERLOAD;
	}
	for (i = 0; i < nh; i++)
		hdrlen += strlen(h[i].key) + strlen(h[i].value) + 4;
	if (st.max_payload > 0 && hdrlen + len > (size_t)st.max_payload)
		return STORE_TOO_LARGE;

	s = natsMsg_Create(&msg, subject, NULL, data, (int)len);
	for (i = 0; s == NATS_OK && i < nh; i++)
		s = natsMsgHeader_Set(msg, h[i].key, h[i].value);
	if (s != NATS_OK) {
		natsMsg_Destroy(msg);
		metrics_publish_failure(PUBFAIL_NATS);
		log_warnx("cannot build message", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return STORE_FAILED;
	}
	jsPubOptions_Init(&po);
	po.MaxWait = st.cfg->publish_timeout_ms;
	po.MsgId = msg_id;
	key = msg;
	/* On success nats.c owns msg and clears our pointer. */
	s = js_PublishMsgAsync(st.js, &msg, &po);
	if (s != NATS_OK) {
		natsMsg_Destroy(msg);
		metrics_publish_failure(PUBFAIL_NATS);
		log_warnx("publish refused by nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
		return STORE_FAILED;
	}
	p = xcalloc(1, sizeof(*p));
	p->msg = key;
	p->cb = cb;
	p->arg = arg;
	p->stream = strncmp(subject, "audit.", 6) == 0 ? STREAM_AUDIT :
	    STREAM_WORK;
	/* MaxWait normally answers first; this only catches a lost ack. */
	p->deadline = now_ms() + st.cfg->publish_timeout_ms + 1000;
	p->hnext = st.hash[pub_slot(key)];
	st.hash[pub_slot(key)] = p;
	TAILQ_INSERT_TAIL(&st.pubs, p, entry);
	st.npubs++;
	metrics_gauge(GAUGE_PUBLISHES_IN_FLIGHT, st.npubs);
	return STORE_OK;
}

/* Fail everything still waiting (shutdown). */
void
store_fail_all(void)
{
	struct pub	*p;

	while ((p = TAILQ_FIRST(&st.pubs)) != NULL) {
		metrics_publish_failure(PUBFAIL_NOT_READY);
		pub_close(p, STORE_FAILED, 0);
	}
}

/* Publishes in flight. */
int
store_in_flight(void)
{
	return st.npubs;
}

/* Connected and both streams ready. */
int
store_ready(void)
{
	return st.connected && st.streams_ready;
}

/* Connected to a NATS server. */
int
store_connected(void)
{
	return st.connected;
}

/* WORK and AUDIT checked since the last (re)connection. */
int
store_streams_ready(void)
{
	return st.streams_ready;
}

/* Record the connection state in the gauges. */
static void
store_set_state(int connected, int streams)
{
	int	 was = store_ready();

	st.connected = connected;
	st.streams_ready = streams;
	metrics_gauge(GAUGE_NATS_CONNECTED, connected);
	metrics_gauge(GAUGE_STREAMS_READY, streams);
	if (was != store_ready())
		log_info(store_ready() ? "store ready" : "store not ready",
		    "connected=%d streams=%d", connected, streams);
}

/* A connection event, on the loop. */
static void
store_connev_loop(struct bridge_item *it)
{
	struct connev	*c = BRIDGE_CONTAINER(it, struct connev, item);
	enum conn_event	 what = c->what;

	free(c);
	switch (what) {
	case CONN_CONNECTED:
	case CONN_RECONNECTED:
		if (what == CONN_RECONNECTED)
			metrics_reconnect();
		log_info(what == CONN_CONNECTED ? "nats connected" :
		    "nats reconnected", NULL);
		st.max_payload = (int)natsConnection_GetMaxPayload(st.nc);
		/* Streams may have been lost with the server: check first. */
		store_set_state(1, 0);
		store_check_streams();
		break;
	case CONN_DISCONNECTED:
		if (!st.closing)
			log_warnx("nats disconnected", NULL);
		store_set_state(0, 0);
		break;
	case CONN_CLOSED:
		store_set_state(0, 0);
		if (st.drained != NULL) {
			void (*done)(void) = st.drained;

			st.drained = NULL;
			event_del(&st.drain_ev);
			done();
		}
		break;
	}
}

/* Post a connection event.  Runs on a nats.c thread. */
static void
store_post_connev(enum conn_event what)
{
	struct connev	*c = xcalloc(1, sizeof(*c));

	c->item.fn = store_connev_loop;
	c->what = what;
	bridge_post(&c->item);
}

/* Runs on a nats.c thread. */
static void
store_connected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_CONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_disconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_DISCONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_reconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_RECONNECTED);
}

/* Runs on a nats.c thread. */
static void
store_closed_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_post_connev(CONN_CLOSED);
}

/* Fill a stream configuration from the settings of SPEC section 6. */
static void
stream_config(jsStreamConfig *sc, const char *name, const char **subj,
    int64_t max_age_ns)
{
	jsStreamConfig_Init(sc);
	sc->Name = name;
	sc->Subjects = subj;
	sc->SubjectsLen = 1;
	sc->Storage = js_FileStorage;
	sc->Retention = js_LimitsPolicy;
	sc->MaxAge = max_age_ns;
	sc->Duplicates = (int64_t)st.cfg->duplicate_window_minutes * 60 *
	    1000000000LL;
	sc->Replicas = st.cfg->replicas;
}

/* Whether an existing stream differs from what we want. */
static int
stream_differs(const jsStreamConfig *have, const jsStreamConfig *want)
{
	return have->SubjectsLen != 1 ||
	    strcmp(have->Subjects[0], want->Subjects[0]) != 0 ||
	    have->MaxAge != want->MaxAge ||
	    have->Duplicates != want->Duplicates ||
	    have->Replicas != want->Replicas ||
	    have->Retention != want->Retention;
}

/*
 * Create one stream, or update it when its settings differ.  Worker thread
 * (blocks on JetStream API requests).
 */
static int
stream_ensure(const char *name, const char *subject, int64_t max_age_ns,
    char *detail, size_t dlen)
{
	jsStreamConfig	 want;
	jsStreamInfo	*si = NULL;
	jsErrCode	 code = 0;
	natsStatus	 s;
	const char	*subj[1] = { subject };
	const char	*what = "get";

	stream_config(&want, name, subj, max_age_ns);
	s = js_GetStreamInfo(&si, st.js, name, NULL, &code);
	if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
		what = "create";
		s = js_AddStream(&si, st.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "created %s", name);
	} else if (s == NATS_OK && si->Config->Storage != js_FileStorage) {
		snprintf(detail, dlen, "stream %s has memory storage, which "
		    "cannot be changed in place", name);
		jsStreamInfo_Destroy(si);
		return -1;
	} else if (s == NATS_OK && stream_differs(si->Config, &want)) {
		jsStreamInfo_Destroy(si);
		si = NULL;
		what = "update";
		s = js_UpdateStream(&si, st.js, &want, NULL, &code);
		if (s == NATS_OK)
			snprintf(detail, dlen, "updated %s", name);
	}
	jsStreamInfo_Destroy(si);
	if (s != NATS_OK) {
		snprintf(detail, dlen, "%s %s: %s (code %d)", what, name,
		    nats_GetLastError(NULL) ? nats_GetLastError(NULL) :
		    natsStatus_GetText(s), (int)code);
		return -1;
	}
	return 0;
}

/* Worker thread: make sure WORK and AUDIT exist as configured. */
static void
stream_job_work(struct bridge_job *job)
{
	struct stream_job *sj = BRIDGE_CONTAINER(job, struct stream_job, job);
	char		 d1[128] = "", d2[128] = "";
	int64_t		 hour = 3600LL * 1000000000LL;

	sj->ok = stream_ensure("WORK", "evt.>",
	    st.cfg->work_max_age_hours * hour, d1, sizeof(d1)) == 0 &&
	    stream_ensure("AUDIT", "audit.>",
	    st.cfg->audit_max_age_days * 24 * hour, d2, sizeof(d2)) == 0;
	snprintf(sj->detail, sizeof(sj->detail), "%s%s%s", d1,
	    d1[0] && d2[0] ? "; " : "", d2);
}

/* Loop thread: the stream check finished. */
static void
stream_job_done(struct bridge_job *job)
{
	struct stream_job *sj = BRIDGE_CONTAINER(job, struct stream_job, job);

	st.check_running = 0;
	if (!sj->ok)
		log_warnx("streams not ready", "detail=%s", log_q(sj->detail));
	else if (sj->detail[0] != '\0')
		log_info("streams", "detail=%s", log_q(sj->detail));
	if (st.connected && !st.closing)
		store_set_state(1, sj->ok);
	free(sj);
}

/* Start a stream check on the worker unless one is running. */
static void
store_check_streams(void)
{
	struct stream_job	*sj;

	if (st.check_running || !st.connected || st.closing)
		return;
	sj = xcalloc(1, sizeof(*sj));
	sj->job.work = stream_job_work;
	sj->job.done = stream_job_done;
	st.check_running = 1;
	bridge_run(&sj->job);
}

/* Every STREAM_CHECK_MS: re-check the streams (re-create vanished ones). */
static void
store_check_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	store_check_streams();
}

/* Fail a natsOptions call at start-up. */
static void
nats_check(natsStatus s, const char *what)
{
	if (s != NATS_OK)
		fatalx("nats option failed", "what=%s err=%s", what,
		    log_q(natsStatus_GetText(s)));
}

/*
 * natsLibevent_Init turns on libevent's pthread locking, which event_active
 * from nats.c threads relies on: it must run before event_base_new.
 */
void
store_global_init(void)
{
	natsStatus	 s;

	natsLibevent_Init();
	if ((s = nats_Open(-1)) != NATS_OK)
		fatalx("cannot initialise nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
}

/* Connect, or start connecting in the background, and arm the timers. */
void
store_init(struct event_base *base, const struct config *cfg)
{
	jsOptions	 jo;
	natsStatus	 s;
	size_t		 n;
	struct timeval	 tv;
	const char	**servers;
	int		 i;

	st.base = base;
	st.cfg = cfg;
	TAILQ_INIT(&st.pubs);
	for (n = 64; n < (size_t)cfg->max_pending * 2; n <<= 1)
		;
	st.hash = xcalloc(n, sizeof(*st.hash));
	st.hmask = n - 1;

	nats_check(natsOptions_Create(&st.opts), "create");
	servers = xcalloc(cfg->nnats_servers, sizeof(*servers));
	for (i = 0; i < cfg->nnats_servers; i++)
		servers[i] = cfg->nats_servers[i];
	nats_check(natsOptions_SetServers(st.opts, servers,
	    cfg->nnats_servers), "servers");
	free(servers);
	nats_check(natsOptions_SetName(st.opts, "treaty-relay"), "name");
	nats_check(natsOptions_SetEventLoop(st.opts, base, natsLibevent_Attach,
	    natsLibevent_Read, natsLibevent_Write, natsLibevent_Detach),
	    "event loop");
	nats_check(natsOptions_SetTimeout(st.opts, 2000), "timeout");
	nats_check(natsOptions_SetMaxReconnect(st.opts, -1), "reconnect");
	nats_check(natsOptions_SetReconnectWait(st.opts, 500), "wait");
	nats_check(natsOptions_SetReconnectJitter(st.opts, 500, 1000),
	    "jitter");
	nats_check(natsOptions_SetPingInterval(st.opts, 10000), "ping");
	nats_check(natsOptions_SetMaxPingsOut(st.opts, 2), "pings");
	nats_check(natsOptions_SetDisconnectedCB(st.opts,
	    store_disconnected_cb, NULL), "disconnected");
	nats_check(natsOptions_SetReconnectedCB(st.opts,
	    store_reconnected_cb, NULL), "reconnected");
	nats_check(natsOptions_SetClosedCB(st.opts, store_closed_cb, NULL),
	    "closed");
	/* Start even when NATS is down; /healthz and POST say 503 meanwhile. */
	nats_check(natsOptions_SetRetryOnFailedConnect(st.opts, true,
	    store_connected_cb, NULL), "retry");

	event_assign(&st.sweep_ev, base, -1, EV_PERSIST, store_sweep_cb, NULL);
	tv.tv_sec = 0;
	tv.tv_usec = SWEEP_MS * 1000;
	event_add(&st.sweep_ev, &tv);
	event_assign(&st.check_ev, base, -1, EV_PERSIST, store_check_cb, NULL);
	tv.tv_sec = STREAM_CHECK_MS / 1000;
	tv.tv_usec = 0;
	event_add(&st.check_ev, &tv);

	s = natsConnection_Connect(&st.nc, st.opts);
	if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED)
		fatalx("cannot start the NATS connection", "err=%s",
		    log_q(natsStatus_GetText(s)));

	jsOptions_Init(&jo);
	jo.Wait = JS_API_WAIT_MS;
	jo.PublishAsync.AckHandler = store_puback_cb;
	/* Far above our own bound, so nats.c never stalls the loop. */
	jo.PublishAsync.MaxPending = (int64_t)cfg->max_pending * 2 + 1024;
	jo.PublishAsync.StallWait = 1;
	if ((s = natsConnection_JetStream(&st.js, st.nc, &jo)) != NATS_OK)
		fatalx("cannot create the JetStream context", "err=%s",
		    log_q(natsStatus_GetText(s)));

	if (natsConnection_Status(st.nc) == NATS_CONN_STATUS_CONNECTED) {
		/* The connected callback only fires for a delayed connect. */
		store_post_connev(CONN_CONNECTED);
	} else
		log_warnx("nats not reachable yet, retrying in the background",
		    "url=%s", log_q(cfg->nats_url));
}

/* The drain did not finish in time: go on without it. */
static void
store_drain_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	void	(*done)(void) = st.drained;

	(void)fd;
	(void)ev;
	(void)arg;
	log_warnx("nats drain timed out", NULL);
	st.drained = NULL;
	if (done != NULL)
		done();
}

/* Drain and close the connection; done() runs when it is closed. */
void
store_drain(void (*done)(void))
{
	struct timeval	 tv = { DRAIN_MS / 1000 + 1, 0 };
	natsStatus	 s;

	st.closing = 1;
	event_del(&st.check_ev);
	st.drained = done;
	event_assign(&st.drain_ev, st.base, -1, 0, store_drain_timeout_cb,
	    NULL);
	event_add(&st.drain_ev, &tv);
	s = natsConnection_DrainTimeout(st.nc, DRAIN_MS);
	if (s != NATS_OK) {
		/* Not connected: nothing to drain; close now. */
		natsConnection_Close(st.nc);
	}
}

/* Tear down nats.c objects; after the loop has stopped. */
void
store_free(void)
{
	event_del(&st.sweep_ev);
	event_del(&st.check_ev);
	event_del(&st.drain_ev);
	if (st.nc != NULL && !natsConnection_IsClosed(st.nc))
		natsConnection_Close(st.nc);
	jsCtx_Destroy(st.js);
	st.js = NULL;
	natsConnection_Destroy(st.nc);
	st.nc = NULL;
	natsOptions_Destroy(st.opts);
	st.opts = NULL;
}

/* Free the tables once nothing can reach them any more. */
void
store_free_tables(void)
{
	struct pub	*p;

	while ((p = TAILQ_FIRST(&st.pubs)) != NULL) {
		TAILQ_REMOVE(&st.pubs, p, entry);
		free(p);
	}
	free(st.hash);
	st.hash = NULL;
	nats_CloseAndWait(2000);
}
