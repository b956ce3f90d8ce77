/*
 * store.c: the store's lifecycle and connection state.  The nats.c
 * options and the connection, what its events change (connected, streams
 * ready), the schedule of the stream check, the poll that hands the loop
 * everything nats.c has read (every polled subscription, in one place),
 * the drain at shutdown and the teardown.
 * Loop thread only (the main thread before the loop starts and after it
 * ends).  store-int.h lists the store's other files and their threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "config.h"
#include "log.h"
#include "metrics.h"
#include "store-int.h"
#include "util.h"

#define CHECK_MS		10000	/* streams and consumers checked again */
#define CHECK_RETRY_MS		1000	/* after a check got no answer */
#define DRAIN_MS		2000
#define CONNECT_TIMEOUT_MS	2000
#define RECONNECT_WAIT_MS	500
#define RECONNECT_JITTER_MS	500
#define RECONNECT_JITTER_TLS_MS	1000
#define PING_INTERVAL_MS	10000
#define PINGS_OUT_MAX		2
#define CLOSE_WAIT_MS		2000	/* for nats.c's threads to end */
#define POLL_BATCH		256	/* messages per subscription per poll */
/*
 * With more consumers than POLL_ALL_MAX, one that had nothing for
 * POLL_ACTIVE polls in a row is looked at only every POLL_IDLE_MS: a
 * look is a lock of its subscription, and a thousand of them per event
 * cost ingest a fifth of its rate (docs/BENCHMARKS.md).  Its next
 * message then waits up to POLL_IDLE_MS.
 */
#define POLL_ALL_MAX		32
#define POLL_ACTIVE		16
#define POLL_IDLE_MS		5
_Static_assert(STORE_PULL_KINDS == 2, "store_poll looks at two pulls");

struct store_conn	 store_conn;
struct store_polled	 store_polled;

static struct {
	struct event	 check_ev;	/* every CHECK_MS */
	struct event	 retry_ev;	/* one-shot check after no answer */
	struct event	 repoll_ev;	/* more messages were waiting */
	struct event	 idle_ev;	/* the idle consumers' turn */
	int		 nconsumers;	/* registered, counted by each poll */
	long long	 idle_ms;	/* when they were last looked at */
	struct event	 drain_ev;
	int		 check_running;
	int		 check_again;	/* asked for while one ran */
	int		 consumers_running;
	int		 consumers_again;
	int		 consumers_after_read;	/* the bucket's */
	char		 attempts_err[128];	/* the last check's, said once */
	void		(*drained)(void);
} sv;

/* Fail a nats.c call at start-up. */
void
store_nats_check(natsStatus s, const char *what)
{
	if (s != NATS_OK)
		fatalx("nats option failed", "what=%s err=%s", what,
		    log_q(natsStatus_GetText(s)));
}

/*
 * A synchronous subscription (queue group when queue is not NULL) that
 * the loop polls: no pending limits, since the loop, not nats.c, decides
 * how much to take at a time.  At start-up, its only use.  A failure is
 * fatal, unless nats.c has already closed the connection for good (see
 * store_conn_event): then there is nothing to subscribe to, and the relay
 * stays up, unready, saying why.
 */
void
store_sub_sync(natsSubscription **sub, const char *subject, const char *queue)
{
	natsStatus	 s;

	if (queue != NULL)
		s = natsConnection_QueueSubscribeSync(sub, store_conn.nc,
		    subject, queue);
	else
		s = natsConnection_SubscribeSync(sub, store_conn.nc, subject);
	if (s == NATS_OK)
		s = natsSubscription_SetPendingLimits(*sub, -1, -1);
	if (s == NATS_OK)
		return;
	natsSubscription_Destroy(*sub);
	*sub = NULL;
	if (!natsConnection_IsClosed(store_conn.nc))
		fatalx("cannot subscribe", "subject=%s err=%s", log_q(subject),
		    log_q(natsStatus_GetText(s)));
	log_warnx("cannot subscribe: the NATS connection is closed",
	    "subject=%s", log_q(subject));
}

/* nats.c's last error on the connection, for logs. */
static const char *
store_last_error(void)
{
	const char	*e = NULL;

	if (store_conn.nc == NULL ||
	    natsConnection_GetLastError(store_conn.nc, &e) == NATS_OK ||
	    e == NULL || e[0] == '\0')
		return "-";
	return e;
}

/* Connected and both streams ready. */
int
store_ready(void)
{
	return store_conn.connected && store_conn.streams_ready;
}

/* nats.c closed the connection for good. */
int
store_gone(void)
{
	return store_conn.gone;
}

/* Connected to a NATS server. */
int
store_connected(void)
{
	return store_conn.connected;
}

/* WORK and AUDIT checked since the last (re)connection. */
int
store_streams_ready(void)
{
	return store_conn.streams_ready;
}

/* Record the connection state, in the gauges too. */
void
store_set_state(int connected, int streams)
{
	int	 was = store_ready();

	store_conn.connected = connected;
	store_conn.streams_ready = streams;
	metrics_gauge(GAUGE_NATS_CONNECTED, connected);
	metrics_gauge(GAUGE_STREAMS_READY, streams);
	if (was != store_ready())
		log_info(store_ready() ? "store ready" : "store not ready",
		    "connected=%d streams=%d", connected, streams);
}

/*
 * Hand the loop what nats.c has read: the one place that says which
 * subscriptions the loop polls, in what order, how many messages at a
 * time and which file takes them (each taker owns the message).
 * store_next never waits: it takes what nats.c has queued.  When a
 * consumer had more than POLL_BATCH waiting, poll again on the next loop
 * iteration, so one busy consumer cannot hold the loop.
 */
void
store_poll(void)
{
	struct store_consumer	*c;
	struct timeval		 tv = { 0, POLL_IDLE_MS * 1000 };
	natsMsg			*m;
	int			 n, k, got, more = 0, skipped = 0, all, count = 0, b;
	long long		 now;

	if (store_conn.nc == NULL)
		return;
	/* The clock is read only when there are many to look at. */
	if (!(all = sv.nconsumers <= POLL_ALL_MAX)) {
		now = now_ms();
		if ((all = now - sv.idle_ms >= POLL_IDLE_MS))
			sv.idle_ms = now;
	}
	/* Publish acknowledgements, <inbox>.*: store-pub.c. */
	while (store_next(store_polled.acks, &m))
		store_pub_ack(m);
	/* Replies to plain requests, <inbox>.r.*: store-req.c. */
	while (store_next(store_polled.replies, &m))
		store_req_reply(m);
	/* JetStream gave up on a message (max deliveries): store-sub.c. */
	while (store_next(store_polled.exhausted, &m))
		store_sub_advisory(m);
	/* Requests of other instances: store-ask.c. */
	while (store_next(store_polled.asks, &m))
		store_ask_take(m);
	/* The buckets' watches: store-kv.c. */
	for (b = 0; b < STORE_KV_NBUCKETS; b++)
		while (!store_kv_held(b) && store_next(store_polled.kv[b], &m))
			store_kv_take(b, m);
	TAILQ_FOREACH(c, &store_consumers, entry) {
		count++;
		/* A pull under way is always looked at: it waits for this. */
		if (!all && c->active == 0 && c->pull_req[0] == NULL &&
		    c->pull_req[1] == NULL) {
			skipped = 1;
			continue;
		}
		got = 0;
		/* A pull consumer's replies, per kind of pull: store-req.c. */
		for (k = 0; k < STORE_PULL_KINDS; k++) {
			for (n = 0; n < POLL_BATCH &&
			    store_next(c->pull_sub[k], &m); n++)
				store_req_pull_reply(c,
				    (enum store_pull_kind)k, m);
			if (n == POLL_BATCH)
				more = 1;
			got += n;
		}
		/* A push consumer's deliveries: store-sub.c. */
		for (n = 0; n < POLL_BATCH && store_next(c->sub, &m); n++)
			store_sub_deliver(c, m);
		if (n == POLL_BATCH)
			more = 1;
		got += n;
		if (got > 0)
			c->active = POLL_ACTIVE;
		else if (c->active > 0)
			c->active--;
	}
	sv.nconsumers = count;
	if (more)
		event_active(&sv.repoll_ev, EV_TIMEOUT, 0);
	/* The idle ones get their turn even when nothing else comes. */
	if (skipped && !evtimer_pending(&sv.idle_ev, NULL))
		evtimer_add(&sv.idle_ev, &tv);
}

/* More consumer messages were waiting after a full batch. */
static void
store_repoll_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	store_poll();
}

/* What a consumer check found, logged; the job freed. */
static void
store_consumers_report(struct store_consumers_job *kj)
{
	store_consumers_kinds(kj->consumers, kj->nconsumers);
	if (kj->failed)
		log_warnx("consumers not ready", "detail=%s",
		    log_q(kj->detail));
	else if (kj->detail[0] != '\0')
		log_info("consumers", "detail=%s", log_q(kj->detail));
	store_consumer_copies_free(kj->consumers, kj->nconsumers);
	free(kj);
}

/* Loop thread: the consumer check finished. */
static void
store_consumers_done(struct bridge_job *job)
{
	sv.consumers_running = 0;
	store_consumers_report(BRIDGE_CONTAINER(job,
	    struct store_consumers_job, job));
	if (sv.consumers_again) {
		sv.consumers_again = 0;
		store_check_consumers();
	}
}

/* The subscribers bucket was read again and applied; see store-int.h. */
void
store_kv_read_done(void)
{
	if (sv.consumers_after_read) {
		sv.consumers_after_read = 0;
		store_check_consumers();
	}
}

/* Loop thread: one consumer's check finished. */
static void
store_consumer_one_done(struct bridge_job *job)
{
	store_consumers_report(BRIDGE_CONTAINER(job,
	    struct store_consumers_job, job));
}

/*
 * Make or update one consumer that a reload (or the subscribers bucket)
 * added or changed, rather than every one: with a thousand subscribers,
 * a check of all of them per change would hold the worker, and each
 * change behind it, for a second.
 */
void
store_check_one(const struct store_consumer *c)
{
	struct store_consumers_job	*kj;

	if (!store_conn.connected || store_conn.closing ||
	    !store_conn.streams_ready)
		return;		/* the check after the streams makes it */
	kj = xcalloc(1, sizeof(*kj));
	kj->nconsumers = store_consumer_copy_one(c, &kj->consumers);
	kj->job.work = store_admin_consumers;
	kj->job.done = store_consumer_one_done;
	bridge_run(&kj->job);
}

/*
 * Make or update the consumers on the worker, unless that runs now (then
 * once more after it).  Separate from the stream check, and never a
 * condition of readiness: a consumer that cannot be made, or a check
 * without an answer, only delays its own deliveries.
 */
void
store_check_consumers(void)
{
	struct store_consumers_job	*kj;

	if (!store_conn.connected || store_conn.closing ||
	    !store_conn.streams_ready)
		return;
	/*
	 * While the subscribers bucket is read again (a reconnection), the
	 * list may still hold a subscriber deleted meanwhile, whose consumer
	 * the check would make again: it runs once the reading is applied.
	 */
	if (store_kv_reading()) {
		sv.consumers_after_read = 1;
		return;
	}
	if (sv.consumers_running) {
		sv.consumers_again = 1;
		return;
	}
	kj = xcalloc(1, sizeof(*kj));
	kj->nconsumers = store_consumer_copies(&kj->consumers);
	kj->job.work = store_admin_consumers;
	kj->job.done = store_consumers_done;
	sv.consumers_running = 1;
	bridge_run(&kj->job);
}

/* Loop thread: the stream check finished. */
static void
store_check_done(struct bridge_job *job)
{
	struct store_check_job *cj = BRIDGE_CONTAINER(job,
	    struct store_check_job, job);
	struct timeval	 tv = { CHECK_RETRY_MS / 1000,
			    CHECK_RETRY_MS % 1000 * 1000 };

	sv.check_running = 0;
	if (cj->result == STORE_CHECK_TRANSIENT) {
		/*
		 * No answer (no stream leader yet, a server going away) is
		 * not a "no": keep the verdict we had, so publishing goes on
		 * if it can, and ask again soon.
		 */
		log_warnx("stream check got no answer", "detail=%s",
		    log_q(cj->detail));
		if (!store_conn.closing)
			event_add(&sv.retry_ev, &tv);
	} else if (cj->result != 0) {
		log_warnx("streams not ready", "detail=%s", log_q(cj->detail));
		if (store_conn.connected && !store_conn.closing)
			store_set_state(1, 0);
	} else {
		if (cj->detail[0] != '\0')
			log_info("streams", "detail=%s", log_q(cj->detail));
		/* Said once per change: the check runs every 10 s. */
		if (strcmp(cj->attempts_err, sv.attempts_err) != 0 &&
		    cj->attempts_err[0] != '\0')
			log_warnx("attempts not recorded: stream ATTEMPTS not "
			    "ready", "detail=%s", log_q(cj->attempts_err));
		snprintf(sv.attempts_err, sizeof(sv.attempts_err), "%s",
		    cj->attempts_err);
		if (store_conn.connected && !store_conn.closing)
			store_set_state(1, 1);
		store_check_consumers();
		store_kv_ensure();
	}
	free(cj);
	/* A reload changed the settings while this one ran. */
	if (sv.check_again) {
		sv.check_again = 0;
		store_check();
	}
}

/* Check the streams on the worker, unless that runs now (then again). */
void
store_check(void)
{
	const struct config	*cfg = store_conn.cfg;
	struct store_check_job	*cj;
	int64_t			 hour = 3600 * NS_PER_S;

	if (!store_conn.connected || store_conn.closing)
		return;
	if (sv.check_running) {
		sv.check_again = 1;
		return;
	}
	cj = xcalloc(1, sizeof(*cj));
	cj->work_max_age_ns = cfg->work_max_age_hours * hour;
	cj->audit_max_age_ns = cfg->audit_max_age_days * 24 * hour;
	cj->duplicates_ns = (int64_t)cfg->duplicate_window_minutes * 60 *
	    NS_PER_S;
	cj->replicas = cfg->replicas;
	cj->attempts_keep = cfg->attempts_per_subscriber;
	cj->job.work = store_admin_check;
	cj->job.done = store_check_done;
	sv.check_running = 1;
	bridge_run(&cj->job);
}

/* A reload: the stream settings may have changed; check now. */
void
store_reload(void)
{
	store_check();
}

/* Every CHECK_MS: check again (re-create what vanished). */
static void
store_check_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	store_check();
}

/* A connection event posted by store-loop.c, on the loop. */
void
store_conn_event(struct bridge_item *it)
{
	struct store_conn_item	*ci = BRIDGE_CONTAINER(it,
				    struct store_conn_item, item);
	enum store_conn_what	 what = ci->what;

	free(ci);
	switch (what) {
	case STORE_CONNECTED:
	case STORE_RECONNECTED:
		if (what == STORE_RECONNECTED)
			metrics_reconnect();
		log_info(what == STORE_CONNECTED ? "nats connected" :
		    "nats reconnected", NULL);
		store_conn.max_payload =
		    (int)natsConnection_GetMaxPayload(store_conn.nc);
		/*
		 * After a reconnection the streams keep the verdict they had:
		 * they were there a moment ago, and in a cluster the server
		 * we reach now serves the same ones.  Publishing resumes at
		 * once; the check runs behind it, and a publish that finds no
		 * stream (a server restarted on an empty store) stops ingest
		 * and has it re-created (store-pub.c).  Waiting for the check
		 * instead cost seconds per fault: each request waits up to
		 * STORE_API_WAIT_MS for a stream leader, and the consumers
		 * came after.  Only the first connection waits for it.
		 */
		store_set_state(1, store_conn.streams_ready);
		store_answers_flush();
		store_check();
		/* Changes made while NATS was away: read the bucket again. */
		if (what == STORE_RECONNECTED)
			store_kv_restart_all("reconnected");
		break;
	case STORE_DISCONNECTED:
		if (!store_conn.closing)
			log_warnx("nats disconnected", NULL);
		store_set_state(0, store_conn.streams_ready);
		store_req_fail_all();
		/*
		 * An acknowledgement for a publish sent before the connection
		 * went cannot arrive (the server's subscription for its reply
		 * went with it): answer now rather than at the deadline, so
		 * producers send again sooner (the same id is a duplicate if
		 * it was stored after all).
		 */
		if (store_in_flight() > 0 && !store_conn.closing) {
			log_warnx("publishes in flight failed: NATS "
			    "disconnected", "publishes=%d", store_in_flight());
			store_fail_all();
		}
		break;
	case STORE_CLOSED:
		/*
		 * Ours at shutdown, or nats.c's own.  nats.c 3.4.1 gives up
		 * for good, whatever the reconnect settings, when the first
		 * server it reaches at start takes the TCP connection but not
		 * the handshake: one that never answers (still starting, or a
		 * proxy before a dead one), a TLS or credentials mismatch.
		 * (Its reconnect thread then has no current server; fixed in
		 * later nats.c.)  The connection cannot be made again, so the
		 * relay stops (main.c, exit 1) and the service manager starts
		 * a new one, which tries afresh.
		 */
		if (!store_conn.closing) {
			store_conn.gone = 1;
			log_errorx("nats connection closed for good; stopping "
			    "for a restart", "err=%s",
			    log_q(store_last_error()));
		}
		store_set_state(0, 0);
		if (sv.drained != NULL) {
			void (*done)(void) = sv.drained;

			sv.drained = NULL;
			event_del(&sv.drain_ev);
			done();
		}
		break;
	}
}

/*
 * libevent's pthread locking, which event_active and event_add from
 * nats.c's threads rely on, must be on before event_base_new.
 */
void
store_global_init(void)
{
	natsStatus	 s;

	if (evthread_use_pthreads() == -1)
		fatalx("cannot enable libevent's thread support", NULL);
	if ((s = nats_Open(-1)) != NATS_OK)
		fatalx("cannot initialise nats.c", "err=%s",
		    log_q(natsStatus_GetText(s)));
}

/* The connection's options. */
static natsOptions *
store_options(struct event_base *base, const struct config *cfg)
{
	natsOptions	 *opts;
	const char	**servers;
	int		  i;

	store_nats_check(natsOptions_Create(&opts), "create");
	servers = xcalloc(cfg->nnats_servers, sizeof(*servers));
	for (i = 0; i < cfg->nnats_servers; i++)
		servers[i] = cfg->nats_servers[i];
	store_nats_check(natsOptions_SetServers(opts, servers,
	    cfg->nnats_servers), "servers");
	free(servers);
	store_nats_check(natsOptions_SetName(opts, "treaty-relay"), "name");
	/*
	 * nats.c ignores the scheme: TLS is this one option.  It verifies the
	 * server's chain against OpenSSL's default paths (SSL_CERT_FILE and
	 * SSL_CERT_DIR are honoured) and its host name.
	 */
	if (cfg->nats_tls)
		store_nats_check(natsOptions_SetSecure(opts, true), "tls");
	store_loop_options(opts, base);
	/*
	 * Without SendAsap every publish wakes nats.c's flusher thread, which
	 * waits 1 ms and then asks our loop (from its thread) to write.  With
	 * it, the publish only arms the adapter's write event, on the loop
	 * thread, and everything published in one iteration goes out in one
	 * write.
	 */
	store_nats_check(natsOptions_SetSendAsap(opts, true), "send asap");
	store_nats_check(natsOptions_SetTimeout(opts, CONNECT_TIMEOUT_MS),
	    "timeout");
	store_nats_check(natsOptions_SetMaxReconnect(opts, -1), "reconnect");
	store_nats_check(natsOptions_SetReconnectWait(opts, RECONNECT_WAIT_MS),
	    "wait");
	store_nats_check(natsOptions_SetReconnectJitter(opts,
	    RECONNECT_JITTER_MS, RECONNECT_JITTER_TLS_MS), "jitter");
	store_nats_check(natsOptions_SetPingInterval(opts, PING_INTERVAL_MS),
	    "ping");
	store_nats_check(natsOptions_SetMaxPingsOut(opts, PINGS_OUT_MAX),
	    "pings");
	return opts;
}

/* Connect, or start connecting in the background; see store.h. */
void
store_init(struct event_base *base, const struct config *cfg)
{
	struct timeval	 tv = { CHECK_MS / 1000, 0 };
	jsOptions	 jo;
	natsStatus	 s;

	store_conn.base = base;
	store_conn.cfg = cfg;
	/* The bridge serves the store alone: its hand-off and its worker. */
	bridge_init(base);
	store_conn.opts = store_options(base, cfg);
	event_assign(&sv.check_ev, base, -1, EV_PERSIST, store_check_cb, NULL);
	event_assign(&sv.retry_ev, base, -1, 0, store_check_cb, NULL);
	event_assign(&sv.repoll_ev, base, -1, 0, store_repoll_cb, NULL);
	evtimer_assign(&sv.idle_ev, base, store_repoll_cb, NULL);
	event_add(&sv.check_ev, &tv);

	s = natsConnection_Connect(&store_conn.nc, store_conn.opts);
	if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED)
		fatalx("cannot start the NATS connection", "err=%s",
		    log_q(natsStatus_GetText(s)));

	/* Our reply subjects: publish acknowledgements and requests. */
	store_nats_check(natsInbox_Create(&store_conn.inbox), "inbox");
	store_conn.inbox_len = strlen((const char *)store_conn.inbox);
	store_pub_init();
	store_req_init();
	store_ask_init();
	store_sub_init();

	/*
	 * Stream and consumer management, the advisory's reads and peeks
	 * use the JetStream context, all on the worker thread.
	 */
	jsOptions_Init(&jo);
	jo.Wait = STORE_API_WAIT_MS;
	if ((s = natsConnection_JetStream(&store_conn.js, store_conn.nc,
	    &jo)) != NATS_OK)
		fatalx("cannot create the JetStream context", "err=%s",
		    log_q(natsStatus_GetText(s)));

	if (natsConnection_Status(store_conn.nc) == NATS_CONN_STATUS_CONNECTED)
		/* The connected callback only fires for a delayed connect. */
		store_loop_post(STORE_CONNECTED);
	else if (!natsConnection_IsClosed(store_conn.nc))
		log_warnx("nats not reachable yet, retrying in the background",
		    "servers=%d", cfg->nnats_servers);
}

/* The drain did not finish in time: go on without it. */
static void
store_drain_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	void	(*done)(void) = sv.drained;

	(void)fd;
	(void)ev;
	(void)arg;
	log_warnx("nats drain timed out", NULL);
	sv.drained = NULL;
	if (done != NULL)
		done();
}

/* Drain and close the connection; see store.h. */
void
store_drain(void (*done)(void))
{
	struct timeval	 tv = { DRAIN_MS / 1000 + 1, 0 };

	store_conn.closing = 1;
	event_del(&sv.check_ev);
	event_del(&sv.retry_ev);
	sv.drained = done;
	evtimer_assign(&sv.drain_ev, store_conn.base, store_drain_timeout_cb,
	    NULL);
	evtimer_add(&sv.drain_ev, &tv);
	/* Nothing is in flight now; see store_pub_unsubscribe. */
	store_pub_unsubscribe();
	store_sub_unsubscribe();
	store_req_unsubscribe();
	store_ask_unsubscribe();
	if (natsConnection_IsClosed(store_conn.nc)) {
		/* Closed already (store_conn_event): nothing to wait for. */
		sv.drained = NULL;
		event_del(&sv.drain_ev);
		done();
	} else if (natsConnection_DrainTimeout(store_conn.nc, DRAIN_MS) !=
	    NATS_OK)
		/* Not connected: nothing to drain; close now. */
		natsConnection_Close(store_conn.nc);
}

/*
 * After the loop: close the connection first, so that a job still
 * waiting on the worker fails at once; join the worker; destroy the
 * nats.c objects and wait for nats.c's threads, so that nothing can post
 * to the bridge any more; run what the bridge still holds; free.
 */
void
store_free(void)
{
	store_conn.closing = 1;
	store_grave_flush();
	event_del(&sv.check_ev);
	event_del(&sv.retry_ev);
	event_del(&sv.repoll_ev);
	event_del(&sv.idle_ev);
	event_del(&sv.drain_ev);
	if (store_conn.nc != NULL && !natsConnection_IsClosed(store_conn.nc))
		natsConnection_Close(store_conn.nc);
	bridge_stop_worker();
	store_pub_destroy();
	store_req_destroy();
	store_ask_destroy();
	store_sub_destroy();
	store_kv_free();
	jsCtx_Destroy(store_conn.js);
	store_conn.js = NULL;
	natsConnection_Destroy(store_conn.nc);
	store_conn.nc = NULL;
	natsOptions_Destroy(store_conn.opts);
	store_conn.opts = NULL;
	if (nats_CloseAndWait(CLOSE_WAIT_MS) != NATS_OK)
		log_warnx("nats.c threads did not end in time", NULL);
	bridge_free();
	store_answers_flush();		/* frees what is left */
	natsInbox_Destroy(store_conn.inbox);
	store_conn.inbox = NULL;
}
