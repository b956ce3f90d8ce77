/*
 * main.c: start-up order, signals and the shutdown sequence of
 * treaty-relay.  Everything here runs on the main (loop) thread.
 *
 * Start: configuration (exit 78 when bad), the HTTP listener (exit 1 when
 * the port is taken), then NATS in the background.  READY=1 goes to systemd
 * only once NATS is connected and WORK and AUDIT exist.
 *
 * Stop (SIGTERM or SIGINT): STOPPING=1, close the listener, take no new
 * deliveries, let publishes and deliveries in flight finish for up to the
 * grace period, answer the rest 503 and give the deliveries back to
 * JetStream, drain NATS, exit 0.  A second signal skips what is left of the grace period.
 */
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "treaty.h"
#include "admin.h"
#include "audit.h"
#include "auth.h"
#include "config.h"
#include "deliver.h"
#include "holder.h"
#include "door.h"
#include "evmem.h"
#include "http.h"
#include "inbox.h"
#include "ingest.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "store.h"
#include "store-kv.h"
#include "replay.h"
#include "source.h"
#include "attempts.h"
#include "presence.h"
#include "subkv.h"
#include "substate.h"
#include "substatus.h"
#include "tls.h"
#include "util.h"

#define READY_POLL_MS	50

static struct {
	struct event_base	*base;
	struct config		 cfg;		/* in place; a reload refills it */
	int			 argc;
	char			**argv;
	struct event		 sigterm, sigint, sigpipe, sighup;
	struct event		 tick;
	struct event		 watchdog;
	int			 ready_sent;
	int			 stopping;
	int			 status;	/* the exit status */
	long long		 grace_end;
} relay;

static void	relay_stop(void);

/* NATS drained and closed: leave the loop. */
static void
relay_drained(void)
{
	event_base_loopexit(relay.base, NULL);
}

/*
 * Every READY_POLL_MS: before readiness, watch for it; while stopping,
 * watch the publishes in flight against the grace period.
 */
static void
relay_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	log_refused_flush();
	deliver_log_flush();
	if (!relay.stopping) {
		if (store_gone()) {
			/* NATS will not come back to this process (store.c). */
			relay.status = 1;
			relay_stop();
			return;
		}
		/* Ready once the subscribers bucket was read (SPEC 16). */
		if (!relay.ready_sent && store_ready() &&
		    store_kv_synced(STORE_KV_SUBS) &&
		    store_kv_synced(STORE_KV_STATE)) {
			relay.ready_sent = 1;
			/* With reuseport, the port's share is taken only now. */
			http_open();
			log_info("ready", "version=%s", TREATY_VERSION);
			notify_send("READY=1\nSTATUS=ready");
		}
		return;
	}
	/* A replay's count is recorded on the turn after it (replay.c). */
	if ((store_in_flight() > 0 || deliver_in_flight() > 0 ||
	    inbox_in_flight() > 0 || replay_in_flight()) &&
	    now_ms() < relay.grace_end)
		return;
	event_del(&relay.tick);
	if (store_in_flight() > 0 || deliver_in_flight() > 0 ||
	    inbox_in_flight() > 0)
		log_warnx("grace period over", "publishes=%d deliveries=%d "
		    "inbox_requests=%d", store_in_flight(), deliver_in_flight(),
		    inbox_in_flight());
	/* Inbox requests still waiting are answered 503. */
	inbox_fail_all();
	admin_fail_all();
	/* Deliveries still under way go back to JetStream for another try. */
	deliver_give_back_all();
	/* Then the ordered subscribers' next holders need not wait. */
	holder_stop();
	/*
	 * Drop records not stored yet.  A push delivery's went with it above
	 * (its event goes back to JetStream, and is dropped again later);
	 * an inbox drop's record, made from JetStream's advisory, is lost
	 * here (man page, CAVEATS).
	 */
	audit_close_all();
	store_fail_all();
	store_drain(relay_drained);
}

/* SIGTERM or SIGINT: begin (or hurry) the shutdown. */
static void
relay_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	if (relay.stopping) {
		log_info("second signal, not waiting", "signal=%d", (int)sig);
		relay.grace_end = 0;
		return;
	}
	log_info("shutting down", "signal=%d in_flight=%d", (int)sig,
	    store_in_flight());
	relay_stop();
}

/* This instance began or stopped holding an ordered subscriber. */
static void
relay_held(const char *name, int held)
{
	deliver_held(name, held);
	inbox_held(name, held);
}

/* Begin the shutdown: stop taking work, then the grace period. */
static void
relay_stop(void)
{
	relay.stopping = 1;
	relay.grace_end = now_ms() + relay.cfg.grace_seconds * 1000LL;
	notify_send("STOPPING=1");
	http_stop_accepting();
	presence_stop();
	holder_stop_taking();
	deliver_stop();
	replay_stop();
	inbox_stop();
}

/* A restart-only setting that a reload keeps. */
static void
relay_reload_warn(const char *var)
{
	log_warnx("this setting changes only with a restart; keeping the "
	    "running value", "var=%s", var);
}

/* A producer a reload adds, changes or removes: as a subscriber's line. */
static void
relay_producer_note(const char *name, const char *what)
{
	char	 msg[32];

	snprintf(msg, sizeof(msg), "producer %s", what);
	log_info(msg, "producer=%s", name);
}

/* A reload that cannot be applied: say why once, keep what runs. */
static void
relay_reload_refused(const struct config_error *err)
{
	log_errorx("configuration not reloaded; keeping the running one",
	    "var=%s field=%s detail=%s", log_q(err->var),
	    log_q(err->field[0] ? err->field : NULL), log_q(err->detail));
	metrics_reload(0);
}

/*
 * The running subscribers are the configuration's and the bucket's
 * (SPEC 16): a freshly loaded configuration gets the bucket's too, or a
 * reload would remove them.
 */
static void
relay_merge(struct config *next)
{
	struct subscriber	*subs;
	size_t			 n;

	n = subkv_merge(next->subscribers, next->nsubscribers, &subs);
	config_subscribers_set(next, subs, n);
}

/*
 * The bucket's subscribers changed (subkv.c): the same path as a reload's
 * for the subscribers alone, so nothing in flight fails; the other
 * settings stay as they are.
 */
static void
relay_apply_bucket(void)
{
	struct sub_changes	 ch;

	if (relay.stopping)
		return;
	memset(&ch, 0, sizeof(ch));
	relay_merge(&relay.cfg);
	auth_clear();
	deliver_reload(&ch);
	inbox_reload(&ch);
	presence_changed();
	/* Push subscribers' deliveries count against the descriptors. */
	door_fit();
	if (ch.added > 0 || ch.changed > 0 || ch.removed > 0)
		log_info("subscribers applied", "source=bucket "
		    "subscribers=%zu added=%d changed=%d removed=%d",
		    relay.cfg.nsubscribers, ch.added, ch.changed, ch.removed);
	/* Writes of this instance wait for this to answer. */
	admin_subs_applied();
}

/*
 * SIGHUP (SPEC 11): read the configuration again (the file; the
 * environment and the flags are what they were at start), validate all
 * of it, and apply it in place: nothing in flight holds a pointer into
 * relay.cfg's lists (deliveries and inboxes keep copies of their
 * subscriber, a publish the producer's name), so it is replaced whole and
 * each module brings itself up to it.  Never exits.
 */
static void
relay_reload(void)
{
	struct config		 next;
	struct config_error	 err;
	struct sub_changes	 ch, pch;
	struct timespec		 ts;
	char			 state[64];
	int			 loaded;

	if (relay.stopping) {
		log_info("reload ignored: shutting down", NULL);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%lld",
	    (long long)ts.tv_sec * US_PER_S + ts.tv_nsec / NS_PER_US);
	notify_send(state);
	memset(&ch, 0, sizeof(ch));
	memset(&pch, 0, sizeof(pch));
	loaded = config_load(&next, relay.argc, relay.argv, &err) ==
	    CONFIG_RUN;
	if (loaded)
		relay_merge(&next);
	if (!loaded || config_reload_prepare(&next, &relay.cfg,
	    relay_reload_warn, &err) == -1) {
		relay_reload_refused(&err);
		config_free(&next);
	} else {
		config_producer_changes(&next, &relay.cfg, &pch,
		    relay_producer_note);
		config_free(&relay.cfg);
		relay.cfg = next;
		log_init(relay.cfg.verbose);
		auth_clear();
		http_reload(&relay.cfg);
		ingest_reload();
		deliver_reload(&ch);
		inbox_reload(&ch);
		presence_changed();
		/* Other keys or settings may open other bucket entries. */
		subkv_reload();
		store_reload();
		metrics_reload(1);
		metrics_config_loaded(time(NULL));
		metrics_tls_expiry(tls_not_after(relay.cfg.tls_ctx));
		/* added= changed= removed= are the subscribers', as ever. */
		log_info("configuration reloaded", "producers=%zu "
		    "subscribers=%zu added=%d changed=%d removed=%d "
		    "producers_added=%d producers_changed=%d "
		    "producers_removed=%d", relay.cfg.nproducers,
		    relay.cfg.nsubscribers, ch.added, ch.changed, ch.removed,
		    pch.added, pch.changed, pch.removed);
	}
	/* Until the first READY=1, the tick sends it. */
	if (relay.ready_sent)
		notify_send("READY=1\nSTATUS=ready");
}

/*
 * WATCHDOG=1, from the loop itself: when the loop stalls (a call that
 * blocks, a busy loop), systemd stops hearing it and restarts the relay,
 * instead of leaving a process that is up but answers nothing.
 */
static void
relay_watchdog_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	notify_send("WATCHDOG=1");
}

/* SIGHUP: reload. */
static void
relay_sighup_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	(void)arg;
	relay_reload();
}

/*
 * Raise the descriptor limit to its hard maximum: every client connection
 * costs one, and the default soft limit (1024) is easy to reach with idle
 * keep-alive clients.
 */
static void
relay_raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("cannot raise the descriptor limit", NULL);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_info("descriptor limit", "nofile=%llu",
		    (unsigned long long)rl.rlim_cur);
}

/*
 * The event loop.  Its epoll changes are kept and applied together before
 * each wait (libevent's changelist): evhttp enables and disables a
 * connection's reading and writing several times per request, and most
 * of those pairs cancel out within one turn, so the kernel sees a fraction
 * of the epoll_ctl calls (a quarter less relay CPU per delivery,
 * docs/BENCHMARKS.md).  The price is libevent's: a descriptor must not be
 * closed while a duplicate of it stays open (door.c takes a lingering one
 * from its bufferevent instead of duplicating it).
 */
static struct event_base *
loop_new(void)
{
	struct event_config	*ec;
	struct event_base	*base;

	if ((ec = event_config_new()) == NULL)
		fatalx("cannot create the event loop", NULL);
	event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	if ((base = event_base_new_with_config(ec)) == NULL)
		fatalx("cannot create the event loop", NULL);
	event_config_free(ec);
	return base;
}

/* SIGPIPE: ignored (a write to a closed socket returns EPIPE instead). */
static void
relay_sigpipe_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	(void)arg;
}

int
main(int argc, char **argv)
{
	struct config_error	 err;
	struct timeval		 tv = { 0, READY_POLL_MS * 1000 };
	long long		 usec;

	/* Before libevent allocates anything (the configuration's URLs). */
	evmem_install();
	/* SIGHUP never ends the relay, not even while it starts. */
	signal(SIGHUP, SIG_IGN);
	/* Even a configuration error is a stamped line (SPEC 11). */
	log_use_stamps();
	relay.argc = argc;
	relay.argv = argv;
	switch (config_load(&relay.cfg, argc, argv, &err)) {
	case CONFIG_HELP:
		config_usage(stdout);
		return 0;
	case CONFIG_VERSION:
		printf("treaty-relay %s\n", TREATY_VERSION);
		return 0;
	case CONFIG_USAGE_ERROR:
		fprintf(stderr, "treaty-relay: %s\n", err.detail);
		config_usage(stderr);
		config_free(&relay.cfg);
		return CONFIG_EXIT_USAGE;
	case CONFIG_BAD:
		log_errorx("bad configuration", "var=%s field=%s detail=%s",
		    log_q(err.var), log_q(err.field[0] ? err.field : NULL),
		    log_q(err.detail));
		config_free(&relay.cfg);
		return CONFIG_EXIT_BAD;
	case CONFIG_CHECK:
		printf("configuration ok: %zu producers, %zu subscribers\n",
		    relay.cfg.nproducers, relay.cfg.nsubscribers);
		config_free(&relay.cfg);
		return 0;
	case CONFIG_RUN:
		break;
	}
	log_init(relay.cfg.verbose);
	event_set_log_callback(log_libevent);
	event_set_fatal_callback(log_libevent_fatal);
	relay_raise_nofile();
	log_debug("configuration read", "file=%s producers=%zu subscribers=%zu",
	    log_q(relay.cfg.config_file), relay.cfg.nproducers,
	    relay.cfg.nsubscribers);
	if (relay.cfg.nproducers == 0)
		log_warnx("no producers configured: every POST gets 401",
		    "var=TREATY_RELAY_PRODUCERS");

	json_init();
	store_global_init();
	relay.base = loop_new();
	evsignal_assign(&relay.sigterm, relay.base, SIGTERM, relay_signal_cb,
	    NULL);
	evsignal_assign(&relay.sigint, relay.base, SIGINT, relay_signal_cb,
	    NULL);
	evsignal_assign(&relay.sigpipe, relay.base, SIGPIPE, relay_sigpipe_cb,
	    NULL);
	event_add(&relay.sigterm, NULL);
	event_add(&relay.sigint, NULL);
	event_add(&relay.sigpipe, NULL);
	evsignal_assign(&relay.sighup, relay.base, SIGHUP, relay_sighup_cb,
	    NULL);
	event_add(&relay.sighup, NULL);
	metrics_config_loaded(time(NULL));
	metrics_tls_expiry(tls_not_after(relay.cfg.tls_ctx));
	event_assign(&relay.tick, relay.base, -1, EV_PERSIST, relay_tick_cb,
	    NULL);
	event_add(&relay.tick, &tv);
	if ((usec = notify_watchdog_usec()) > 0) {
		/* Twice per interval, as sd_watchdog_enabled(3) advises. */
		struct timeval	 wtv = { usec / 2 / US_PER_S,
		    usec / 2 % US_PER_S };

		event_assign(&relay.watchdog, relay.base, -1, EV_PERSIST,
		    relay_watchdog_cb, NULL);
		event_add(&relay.watchdog, &wtv);
	}

	auth_init();
	http_init(relay.base, &relay.cfg);
	ingest_init(&relay.cfg);
	audit_init(relay.base);
	replay_init(relay.base, &relay.cfg);
	/* Before the gates: a subscriber's gates keep its state's entry. */
	substate_init(relay.base, &relay.cfg, replay_instance());
	presence_init(relay.base, &relay.cfg, replay_instance());
	attempts_init(&relay.cfg, replay_instance());
	holder_init(relay.base, &relay.cfg, replay_instance(), relay_held);
	deliver_init(relay.base, &relay.cfg);
	inbox_init(relay.base, &relay.cfg);
	admin_init(relay.base, &relay.cfg);
	subkv_init(relay.base, &relay.cfg, relay_apply_bucket);
	substatus_init(relay.base);
	store_init(relay.base, &relay.cfg);

	event_base_dispatch(relay.base);

	/* Every request answered before http_free; the store last. */
	inbox_free();
	admin_free();
	http_free();
	ingest_free();
	replay_free();
	deliver_free();
	source_free();
	audit_close_all();
	substatus_free();
	store_free();
	subkv_free();
	substate_free();
	holder_free();
	presence_free();
	attempts_free();
	event_del(&relay.tick);
	if (usec > 0)
		event_del(&relay.watchdog);
	event_del(&relay.sigterm);
	event_del(&relay.sigint);
	event_del(&relay.sigpipe);
	event_del(&relay.sighup);
	event_base_free(relay.base);
	json_free();
	config_free(&relay.cfg);
	evmem_release();
	log_info("stopped", "status=%d", relay.status);
	return relay.status;
}
