/*
 * holder.c: the holders of ordered subscribers (holder.h), in the
 * TREATY_ORDER_HOLDERS bucket.  Loop thread only.
 *
 * A subscriber's key holds {"holder":"<instance>","since":"<time>"}.  The
 * holder writes it again every RENEW_MS, each write over the revision it
 * read (compare-and-set), so that two instances can never both hold it:
 * a write that finds another revision says the lease is lost.  Every
 * instance watches the bucket; one that wants the subscriber and sees
 * its key unchanged for LEASE_MS (timed on its own clock from when it
 * saw the revision: clocks are never compared) writes itself in over
 * that revision, and one that finds no key, or a released one, at once;
 * of several, one write wins.  The holder counts its lease as good for
 * VALID_MS from the start of its last write that was stored, less than
 * LEASE_MS, so that it has let go before another can take over even if
 * every write of its own is lost; a holder that stops releases the key
 * (holder_stop) so that the next need not wait.
 *
 * A new holder does not send at once: what the old one had in hand comes
 * back only as JetStream redelivers it, in no promised order, and
 * deliver-order.c holds every key until all of it is back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "config.h"
#include "holder.h"
#include "json.h"
#include "log.h"
#include "store-kv.h"
#include "store-pub.h"
#include "util.h"

#define TICK_MS		500
#define RENEW_MS	2000
#define LEASE_MS	10000	/* a holder seen unchanged this long is gone */
#define VALID_MS	8000	/* a holder's own lease after a stored write */
#define HOLDER_MAX	64

enum job_kind { JOB_TAKE, JOB_RENEW };

struct holding {
	char			 name[NAME_MAX_LEN + 1];
	int			 want;		/* ordered here: by how many */
	int			 held;		/* ours, and deliver told */
	uint64_t		 rev;		/* the newest revision known */
	int			 stored;	/* a value, not a deletion */
	char			 holder[HOLDER_MAX + 1]; /* "" when none */
	char			 since[TREATY_RFC3339_MAX];
	long long		 seen_ms;	/* when rev was seen here */
	long long		 valid_until;	/* held: now_ms() */
	struct store_kv_job	*job;
	enum job_kind		 job_kind;
	long long		 job_ms;	/* when it was sent */
	int			 seen;		/* in this reading */
	TAILQ_ENTRY(holding)	 link;
};

static struct {
	const struct config	*cfg;
	char			 instance[HOLDER_MAX + 1];
	holder_cb		 cb;
	struct event		 tick;
	int			 stopping;
	int			 no_take;	/* the relay stops: renew only */
	TAILQ_HEAD(, holding)	 list;
} hs = { .list = TAILQ_HEAD_INITIALIZER(hs.list) };

static struct holding *
holding_find(const char *name)
{
	struct holding	*h;

	TAILQ_FOREACH(h, &hs.list, link)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

static struct holding *
holding_ref(const char *name)
{
	struct holding	*h = holding_find(name);

	if (h == NULL) {
		h = xcalloc(1, sizeof(*h));
		snprintf(h->name, sizeof(h->name), "%s", name);
		TAILQ_INSERT_TAIL(&hs.list, h, link);
	}
	return h;
}

/* Ours no longer: deliver leaves the group and lets go. */
static void
holding_lost(struct holding *h, const char *why)
{
	if (!h->held)
		return;
	h->held = 0;
	log_warnx("order holder lost", "sub=%s why=%s", h->name, why);
	hs.cb(h->name, 0);
}

static void	holder_release(struct holding *h);

static char *
holding_value(struct holding *h, size_t *len)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);
	char		*out;

	yajl_gen_map_open(g);
	json_gen_str(g, "holder");
	json_gen_str(g, hs.instance);
	json_gen_str(g, "since");
	json_gen_str(g, h->since);
	yajl_gen_map_close(g);
	out = json_gen_take(g);
	*len = strlen(out);
	return out;
}

static void
written(void *arg, enum store_kv_result r, uint64_t rev, int existed)
{
	struct holding	*h = arg;

	(void)existed;
	h->job = NULL;
	if (r == STORE_KV_OK) {
		if (rev > h->rev) {
			h->rev = rev;
			h->stored = 1;
			snprintf(h->holder, sizeof(h->holder), "%s",
			    hs.instance);
			h->seen_ms = now_ms();
		}
		h->valid_until = h->job_ms + VALID_MS;
		if (!h->want || hs.stopping || (h->job_kind == JOB_TAKE &&
		    hs.no_take)) {
			/* Let go while the write ran: give it up now. */
			h->held = 0;
			holder_release(h);
			return;
		}
		if (h->job_kind == JOB_TAKE && !h->held) {
			h->held = 1;
			log_info("order holder", "sub=%s instance=%s revision=%llu",
			    h->name, hs.instance, (unsigned long long)rev);
			hs.cb(h->name, 1);
		}
		return;
	}
	if (r == STORE_KV_STALE && h->job_kind == JOB_RENEW)
		holding_lost(h, "another instance took it");
	else if (r != STORE_KV_STALE)
		log_debug("order holder not written", "sub=%s", h->name);
}

static void
holding_write(struct holding *h, enum job_kind kind)
{
	char	*val;
	size_t	 len;
	int64_t	 t = wall_ns();

	if (kind == JOB_TAKE && treaty_rfc3339_format(t / NS_PER_S,
	    (long)(t % NS_PER_S), 3, h->since, sizeof(h->since)) < 0)
		h->since[0] = '\0';
	val = holding_value(h, &len);
	h->job_kind = kind;
	h->job_ms = now_ms();
	h->job = store_kv_set(STORE_KV_HOLDERS, h->name, val, len,
	    h->rev, written, h);
	free(val);
}

/*
 * Give the key up: a purge that expects our revision (a write nobody
 * waits for, so that a stop never waits on JetStream for it).  One lost,
 * or beaten by a write of ours still under way, leaves the key to lapse.
 */
static void
holder_release(struct holding *h)
{
	struct store_header	 hd[3];
	char			 subject[64 + NAME_MAX_LEN], rev[24];

	snprintf(subject, sizeof(subject), "$KV." STORE_KV_HOLDERS_BUCKET ".%s",
	    h->name);
	snprintf(rev, sizeof(rev), "%llu", (unsigned long long)h->rev);
	hd[0] = (struct store_header){ "KV-Operation", "PURGE" };
	hd[1] = (struct store_header){ "Nats-Rollup", "sub" };
	hd[2] = (struct store_header){ "Nats-Expected-Last-Subject-Sequence",
	    rev };
	store_publish_nowait_headers(subject, hd, 3);
	log_info("order holder released", "sub=%s", h->name);
}

/* What each holding needs now. */
static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct holding	*h;
	long long	 now = now_ms();

	(void)fd;
	(void)ev;
	(void)arg;
	if (hs.stopping || !store_kv_synced(STORE_KV_HOLDERS))
		return;
	TAILQ_FOREACH(h, &hs.list, link) {
		if (h->held && now >= h->valid_until)
			holding_lost(h, "not renewed in time");
		if (h->job != NULL || !h->want)
			continue;
		if (h->held) {
			if (now - h->job_ms >= RENEW_MS)
				holding_write(h, JOB_RENEW);
		} else if (!hs.no_take && (!h->stored || h->holder[0] == '\0' ||
		    strcmp(h->holder, hs.instance) == 0 ||
		    now - h->seen_ms >= LEASE_MS))
			holding_write(h, JOB_TAKE);
	}
}

/* The watch: name's newest value at rev (val NULL: none). */
static void
watch_entry(const char *name, uint64_t rev, const char *val, size_t len)
{
	static const char *p_holder[] = { "holder", NULL };
	static const char *p_since[] = { "since", NULL };
	struct holding	*h = holding_ref(name);
	char		*text;
	yajl_val	 root, v;

	h->seen = 1;
	if (rev == h->rev && h->stored == (val != NULL))
		return;
	if (rev < h->rev && rev != 0)
		return;			/* ours, written since, is newer */
	h->rev = rev;
	h->stored = val != NULL;
	h->seen_ms = now_ms();
	h->holder[0] = '\0';
	if (val != NULL) {
		text = xstrndup(val, len);
		root = yajl_tree_parse(text, NULL, 0);
		free(text);
		if ((v = yajl_tree_get(root, p_holder, yajl_t_string)) != NULL)
			snprintf(h->holder, sizeof(h->holder), "%s",
			    YAJL_GET_STRING(v));
		if ((v = yajl_tree_get(root, p_since, yajl_t_string)) != NULL)
			snprintf(h->since, sizeof(h->since), "%s",
			    YAJL_GET_STRING(v));
		yajl_tree_free(root);
	}
	if (h->held && strcmp(h->holder, hs.instance) != 0)
		holding_lost(h, "another instance took it");
}

static void
watch_begin(void)
{
	struct holding	*h;

	TAILQ_FOREACH(h, &hs.list, link)
		h->seen = 0;
}

/* A whole reading: a key not in it is gone (no marker either). */
static void
watch_end(void)
{
	struct holding	*h;

	TAILQ_FOREACH(h, &hs.list, link)
		if (!h->seen && h->stored)
			watch_entry(h->name, 0, NULL, 0);
}

static const struct store_kv_watcher watcher = {
	watch_begin, watch_entry, watch_end
};

void
holder_want(const char *name, int want)
{
	struct holding	*h = holding_ref(name);

	/*
	 * Counted: a subscriber whose kind a reload changes is wanted by its
	 * new side before its old side lets go.  A new wanter of a key held
	 * already is told at once, as a take would tell it.
	 */
	if (want) {
		h->want++;
		if (h->held)
			hs.cb(h->name, 1);
		return;
	}
	if (h->want > 0)
		h->want--;
	if (h->want == 0 && h->held) {
		/* No longer ordered here: release, so another need not wait. */
		h->held = 0;
		holder_release(h);
	}
}

int
holder_other(const char *name)
{
	struct holding	*h = holding_find(name);

	return h != NULL && !h->held && h->stored && h->holder[0] != '\0' &&
	    strcmp(h->holder, hs.instance) != 0 &&
	    now_ms() - h->seen_ms < LEASE_MS;
}

int
holder_held(const char *name)
{
	struct holding	*h = holding_find(name);

	return h != NULL && h->held;
}

void
holder_init(struct event_base *base, const struct config *cfg,
    const char *instance, holder_cb cb)
{
	struct timeval	 tv = { 0, TICK_MS * 1000 };

	hs.cfg = cfg;
	hs.cb = cb;
	snprintf(hs.instance, sizeof(hs.instance), "%s", instance);
	store_kv_watch(STORE_KV_HOLDERS, &watcher);
	event_assign(&hs.tick, base, -1, EV_PERSIST, tick_cb, NULL);
	event_add(&hs.tick, &tv);
}

void
holder_stop_taking(void)
{
	hs.no_take = 1;
}

void
holder_stop(void)
{
	struct holding	*h;

	if (hs.stopping)
		return;
	hs.stopping = 1;
	event_del(&hs.tick);
	TAILQ_FOREACH(h, &hs.list, link)
		if (h->held) {
			h->held = 0;
			holder_release(h);
		}
}

void
holder_free(void)
{
	struct holding	*h;

	event_del(&hs.tick);
	while ((h = TAILQ_FIRST(&hs.list)) != NULL) {
		TAILQ_REMOVE(&hs.list, h, link);
		store_kv_close(h->job);
		free(h);
	}
}
