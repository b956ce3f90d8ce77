/*
 * deliver-sub.c: the push subscribers of this instance (SPEC 3), as
 * deliver.c's deliveries belong to them: each one's copy of its settings,
 * its connection pool and signing keys (pinned by each delivery, so a
 * reload never changes them under one), its consumer, and what a reload
 * or the subscribers bucket does to them (deliver_sync: add, change,
 * remove by name; a removed one lives on in dl.gone until its last
 * delivery ends).  Loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "deliver.h"
#include "deliver-int.h"
#include "holder.h"
#include "metrics.h"
#include "outbound.h"
#include "store-msg.h"
#include "store-sub.h"
#include "substate.h"
#include "util.h"

/* Let go of a pool; the last user frees it. */
void
dtarget_release(struct dtarget *t)
{
	if (--t->refs > 0)
		return;
	outbound_target_free(t->t);
	free(t);
}

/* Let go of signing keys; the last user frees them. */
void
dsign_release(struct dsign *g)
{
	if (--g->refs > 0)
		return;
	treaty_keys_free(g->keys);
	free(g);
}

/* The push subscriber called name, or NULL. */
struct dsub *
dsub_find(const char *name)
{
	struct dsub	*s;

	TAILQ_FOREACH(s, &dl.subs, entry)
		if (strcmp(s->cfg->name, name) == 0)
			return s;
	return NULL;
}

/* 1 when name is a push subscriber here; see deliver.h. */
int
deliver_has(const char *name)
{
	return !dl.stopping && dsub_find(name) != NULL;
}

/* 1 when this instance delivers name's events now; see deliver.h. */
int
deliver_takes(const char *name)
{
	struct dsub	*s;

	if (dl.stopping || (s = dsub_find(name)) == NULL)
		return 0;
	return s->order == NULL || holder_held(name);
}

/* Its consumer's settings. */
static struct store_consumer_spec
dsub_spec(const struct dsub *s)
{
	return (struct store_consumer_spec){ s->cfg->name, STORE_PUSH,
	    s->cfg->filter, s->cfg->max_deliver,
	    config_max_ack_pending(s->cfg),
	    dl.cfg->ack_wait_seconds, NULL, s->cfg->from, s->cfg->from_ns,
	    s->cfg->ordered };
}

/*
 * The addresses s's URL may reach (SPEC 3): any for a local host (those
 * allowed plain http) and, with TREATY_RELAY_ALLOW_PRIVATE_NETWORKS, for
 * https; public ones otherwise.  Plain http that the setting allowed
 * beyond the local hosts (config-lists.c) goes only to private ones: the
 * operator vouched for their own network, and an event must not cross
 * the internet in clear because a name resolved to a public address.
 */
static enum resolve_accept
dsub_accept(const struct dsub *s)
{
	const struct outbound_target *t = s->target->t;

	if (config_host_is_local(outbound_target_host(t)))
		return RESOLVE_ANY;
	if (!dl.cfg->allow_private_networks)
		return RESOLVE_PUBLIC;
	return outbound_target_tls(t) ? RESOLVE_ANY : RESOLVE_PRIVATE;
}

/*
 * Take sc's settings (a copy): a new pool when the URL or its size
 * changed, the secrets, the address rule.
 */
static void
dsub_set(struct dsub *s, const struct subscriber *sc)
{
	struct subscriber	*old = s->cfg;
	struct dtarget		*t;

	s->cfg = config_subscriber_dup(sc);
	s->gates.cfg = s->cfg;
	source_set(&s->own, NULL, s->cfg->max_deliver);
	if (old == NULL || strcmp(old->url, sc->url) != 0 ||
	    old->max_in_flight != sc->max_in_flight) {
		t = xcalloc(1, sizeof(*t));
		t->refs = 1;
		/*
		 * As many idle connections as POSTs may run at once (the
		 * window): fewer would close and reopen one per delivery
		 * under load.
		 */
		t->t = outbound_target_new(sc->url, sc->max_in_flight <
		    MAX_IDLE_CONNS ? sc->max_in_flight : MAX_IDLE_CONNS);
		if (t->t == NULL)
			fatalx("bad subscriber url", "sub=%s", sc->name);
		if (s->target != NULL)
			dtarget_release(s->target);
		s->target = t;
	}
	s->accept = dsub_accept(s);
	if (s->sign != NULL)
		dsign_release(s->sign);
	s->sign = xcalloc(1, sizeof(*s->sign));
	s->sign->refs = 1;
	s->sign->keys = config_keys(s->cfg);
	s->sign->standard_webhooks = s->cfg->standard_webhooks;
	dorder_set(s);
	config_subscriber_free(old);
}

/* A push subscriber, and its consumer. */
static void
dsub_new(const struct subscriber *sc)
{
	struct dsub			*s = xcalloc(1, sizeof(*s));
	struct store_consumer_spec	 spec;

	TAILQ_INIT(&s->live);
	TAILQ_INIT(&s->ready);
	TAILQ_INIT(&s->srcs);
	takeover_init(&s->tk, dl.base, dorder_in_hand, dorder_took_over, s);
	gate_sub_init(&s->gates, &dl.pump);
	s->state = substate_ref(sc->name);
	log_limit_init(&s->failed_log, "delivery failures not logged",
	    FAILED_LOG_PER_S, 1, "sub=%s", sc->name);
	dsub_set(s, sc);
	s->idx = metrics_subscriber_add(sc->name);
	s->seen = 1;
	TAILQ_INSERT_TAIL(&dl.subs, s, entry);
	spec = dsub_spec(s);
	s->consumer = store_consumer_add(&spec, deliver_msg_cb,
	    deliver_exhausted_cb, s);
}

/*
 * 1 when this instance can probe tripped subscriber name: a delivery of
 * it waits at the pause gate (the oldest it holds is the probe).
 */
int
dsub_can_probe(const char *name)
{
	struct dsub	*s = dsub_find(name);

	return s != NULL && !dl.stopping &&
	    gate_first_at(&s->gates, &gate_pause) != NULL;
}

/*
 * Send probe n of name: the first delivery waiting at the pause gate
 * passes it (gate-pause.c), and its answer goes to substate
 * (deliver.c).  Nothing to send: said at once.
 */
void
dsub_probe(const char *name, int n)
{
	struct dsub		*s = dsub_find(name);
	struct gate_pass	*p;

	if (s == NULL || dl.stopping ||
	    (p = gate_first_at(&s->gates, &gate_pause)) == NULL) {
		substate_probe_done(name, -1);
		return;
	}
	p->probe = n;
	gate_open(&s->gates);
}

/* Free a subscriber whose deliveries have all ended. */
void
dsub_free(struct dsub *s)
{
	log_limit_flush(&s->failed_log, 1);
	gate_sub_free(&s->gates);
	dorder_gone(s);
	dorder_sources_free(s);
	order_free(s->order);
	dtarget_release(s->target);
	dsign_release(s->sign);
	config_subscriber_free(s->cfg);
	free(s);
}

/*
 * A reload removed it: no new messages here (what nats.c queued and what
 * waits at a gate go back), its deliveries under way finish, its
 * JetStream consumer stays.
 */
static void
dsub_remove(struct dsub *s)
{
	struct store_consumer	*c = s->consumer;

	TAILQ_REMOVE(&dl.subs, s, entry);
	if (s->order != NULL) {
		/* As a lost lease: let go, then the next holder may take it. */
		dorder_let_go(s);
		holder_want(s->cfg->name, 0);
	}
	s->consumer = NULL;
	store_consumer_remove(c);
	metrics_subscriber_gone(s->idx);
	if (TAILQ_EMPTY(&s->live)) {
		dsub_free(s);
		return;
	}
	TAILQ_INSERT_TAIL(&dl.gone, s, entry);
	dsub_give_back_waiting(s, NULL);
}

/* Bring the push subscribers to the configuration; see deliver-int.h. */
void
deliver_sync(struct sub_changes *ch)
{
	const struct subscriber		*sc;
	struct store_consumer_spec	 spec;
	struct dsub			*s, *next;
	struct delivery			*d;
	struct sub_changes		 start;
	size_t				 i;
	int				 n;

	if (ch == NULL) {
		/* Start-up: every subscriber is new, and not news. */
		memset(&start, 0, sizeof(start));
		ch = &start;
	}

	TAILQ_FOREACH(s, &dl.subs, entry)
		s->seen = 0;
	for (i = 0; i < dl.cfg->nsubscribers; i++) {
		sc = &dl.cfg->subscribers[i];
		if (sc->kind != SUB_PUSH)
			continue;
		if ((s = dsub_find(sc->name)) == NULL) {
			dsub_new(sc);
			if (ch != &start)
				log_info("subscriber added", "sub=%s", sc->name);
			ch->added++;
			continue;
		}
		s->seen = 1;
		if (!config_subscriber_equal(s->cfg, sc)) {
			dsub_set(s, sc);
			ch->changed++;
			log_info("subscriber changed", "sub=%s", sc->name);
		} else
			s->accept = dsub_accept(s);
		spec = dsub_spec(s);
		store_consumer_update(s->consumer, &spec);
	}
	for (s = TAILQ_FIRST(&dl.subs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->seen)
			continue;
		n = 0;
		TAILQ_FOREACH(d, &s->live, entry)
			n++;
		/* A deleted API subscriber's consumer went with it (SPEC 16). */
		log_info(s->cfg->api ? "subscriber removed: gone from the "
		    "subscribers bucket, or not usable here; this instance "
		    "delivers no more to it" :
		    "subscriber removed: this instance delivers no more to it; "
		    "its consumer stays in JetStream", "sub=%s consumer=%s "
		    "finishing=%d", s->cfg->name,
		    store_consumer_name(s->consumer), n);
		ch->removed++;
		dsub_remove(s);
	}
}

/*
 * A new progress interval (it is below the new ack wait): every delivery
 * under way tells JetStream now and goes on at the new pace, since the
 * old one may be past a lowered ack wait.  Removed subscribers' too.
 */
static void
deliver_progress_reset(void)
{
	struct dsub_list	*lists[] = { &dl.subs, &dl.gone };
	struct timeval		 tv = { dl.cfg->progress_seconds, 0 };
	struct dsub		*s;
	struct delivery		*d;
	size_t			 i;

	if (dl.progress_s == dl.cfg->progress_seconds)
		return;
	dl.progress_s = dl.cfg->progress_seconds;
	for (i = 0; i < 2; i++)
		TAILQ_FOREACH(s, lists[i], entry)
			TAILQ_FOREACH(d, &s->live, entry) {
				if (d->m != NULL)
					store_msg_progress(d->m);
				event_add(&d->progress, &tv);
			}
}

/* The configuration was reloaded; see deliver.h. */
void
deliver_reload(struct sub_changes *ch)
{
	if (dl.stopping)
		return;
	deliver_sync(ch);
	deliver_progress_reset();
	/* A window may be wider now. */
	event_active(&dl.pump, 0, 0);
}

/* Say what each subscriber's limit left out; see deliver.h. */
void
deliver_log_flush(void)
{
	struct dsub	*s;

	TAILQ_FOREACH(s, &dl.subs, entry)
		log_limit_flush(&s->failed_log, 0);
	TAILQ_FOREACH(s, &dl.gone, entry)
		log_limit_flush(&s->failed_log, 0);
}

