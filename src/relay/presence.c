/*
 * presence.c: the instances running and what they pace (presence.h), in
 * the TREATY_INSTANCES bucket.  Loop thread only.
 *
 * A value is {"subs":["a","b"]}: the names of this instance's push
 * subscribers that have a rateLimit, sorted.  The view keeps each other
 * instance's list and when this instance last saw its key change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "json.h"
#include "log.h"
#include "presence.h"
#include "store-kv.h"
#include "store-pub.h"
#include "util.h"

struct peer {
	char			 name[NAME_MAX_LEN + 1];
	char			*subs;		/* ",a,b,": names between commas */
	uint64_t		 rev;
	long long		 seen_ms;	/* its key last changed, here */
	int			 seen;		/* in this reading */
	TAILQ_ENTRY(peer)	 link;
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	char			 instance[NAME_MAX_LEN + 1];
	struct event		 tick;
	int			 stopping;
	int			 announced;
	char			*last;		/* what was last written */
	TAILQ_HEAD(, peer)	 peers;
} pr = { .peers = TAILQ_HEAD_INITIALIZER(pr.peers) };

/* This instance's value now. */
static char *
own_value(size_t *len)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);
	size_t		 i;
	char		*out;

	yajl_gen_map_open(g);
	json_gen_str(g, "subs");
	yajl_gen_array_open(g);
	for (i = 0; i < pr.cfg->nsubscribers; i++) {
		const struct subscriber	*s = &pr.cfg->subscribers[i];

		if (s->kind == SUB_PUSH && s->rate_limit > 0)
			json_gen_str(g, s->name);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	out = json_gen_take(g);
	*len = strlen(out);
	return out;
}

/*
 * Write this instance's key: a plain publish that nobody waits for (a KV
 * put is one), so that the worker never waits on JetStream for it; one
 * lost is written again at the next tick.
 */
static void
write_own(void)
{
	char	*val;
	size_t	 len;
	char	 subject[64 + NAME_MAX_LEN];

	if (pr.stopping)
		return;
	val = own_value(&len);
	snprintf(subject, sizeof(subject), "$KV." STORE_KV_INSTANCES_BUCKET
	    ".%s", pr.instance);
	if (store_publish_nowait(subject, val, len) == -1)
		log_debug("presence not written", "instance=%s", pr.instance);
	free(pr.last);
	pr.last = val;
}

static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	write_own();
}

void
presence_changed(void)
{
	char	*val;
	size_t	 len;

	val = own_value(&len);
	if (pr.last == NULL || strcmp(val, pr.last) != 0)
		write_own();
	free(val);
}

static struct peer *
peer_find(const char *name)
{
	struct peer	*p;

	TAILQ_FOREACH(p, &pr.peers, link)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static void
peer_free(struct peer *p)
{
	TAILQ_REMOVE(&pr.peers, p, link);
	free(p->subs);
	free(p);
}

/* ",a,b," from {"subs":["a","b"]}; NULL when it is not that. */
static char *
subs_of(const char *val, size_t len)
{
	char		*text = xstrndup(val, len), *out = NULL, *t;
	yajl_val	 root = yajl_tree_parse(text, NULL, 0), list;
	const char	*path[] = { "subs", NULL };
	size_t		 i, n = 2;

	free(text);
	if (root == NULL || (list = yajl_tree_get(root, path,
	    yajl_t_array)) == NULL)
		goto out;
	for (i = 0; i < list->u.array.len; i++)
		if (YAJL_IS_STRING(list->u.array.values[i]))
			n += strlen(list->u.array.values[i]->u.string) + 1;
	out = t = xmalloc(n);
	*t++ = ',';
	for (i = 0; i < list->u.array.len; i++)
		if (YAJL_IS_STRING(list->u.array.values[i]))
			t += sprintf(t, "%s,",
			    list->u.array.values[i]->u.string);
	*t = '\0';
out:
	yajl_tree_free(root);
	return out;
}

static void
watch_entry(const char *name, uint64_t rev, const char *val, size_t len)
{
	struct peer	*p = peer_find(name);

	if (strcmp(name, pr.instance) == 0)
		return;
	if (val == NULL) {
		if (p != NULL)
			peer_free(p);
		return;
	}
	if (p == NULL) {
		p = xcalloc(1, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
		TAILQ_INSERT_TAIL(&pr.peers, p, link);
	}
	p->seen = 1;
	if (rev == p->rev)
		return;
	p->rev = rev;
	p->seen_ms = now_ms();
	free(p->subs);
	p->subs = subs_of(val, len);
}

static void
watch_begin(void)
{
	struct peer	*p;

	TAILQ_FOREACH(p, &pr.peers, link)
		p->seen = 0;
}

static void
watch_end(void)
{
	struct peer	*p, *next;

	/* The first reading: say we are here now, not at the first tick. */
	if (!pr.announced) {
		pr.announced = 1;
		write_own();
	}
	for (p = TAILQ_FIRST(&pr.peers); p != NULL; p = next) {
		next = TAILQ_NEXT(p, link);
		if (!p->seen)
			peer_free(p);
	}
}

static const struct store_kv_watcher watcher = {
	watch_begin, watch_entry, watch_end
};

int
presence_share(const char *name)
{
	struct peer	*p;
	char		 key[NAME_MAX_LEN + 3];
	long long	 now = now_ms();
	int		 n = 1;

	snprintf(key, sizeof(key), ",%s,", name);
	TAILQ_FOREACH(p, &pr.peers, link)
		if (now - p->seen_ms <= PRESENCE_LIVE_MS && p->subs != NULL &&
		    strstr(p->subs, key) != NULL)
			n++;
	return n;
}

void
presence_init(struct event_base *base, const struct config *cfg,
    const char *instance)
{
	struct timeval	 tv = { PRESENCE_EVERY_MS / 1000,
			    (PRESENCE_EVERY_MS % 1000) * 1000 };

	pr.base = base;
	pr.cfg = cfg;
	snprintf(pr.instance, sizeof(pr.instance), "%s", instance);
	store_kv_watch(STORE_KV_INSTANCES, &watcher);
	event_assign(&pr.tick, base, -1, EV_PERSIST, tick_cb, NULL);
	event_add(&pr.tick, &tv);
}

/*
 * Stopping: the key goes, as a KV purge would take it, by a publish that
 * nobody waits for: a stop must not wait on the worker for JetStream
 * (which may be the reason for the stop).  Lost, the key is no longer
 * counted 15 s later anyway.
 */
void
presence_stop(void)
{
	const struct store_header h[2] = {
		{ "KV-Operation", "PURGE" },
		{ "Nats-Rollup", "sub" }
	};
	char	 subject[64 + NAME_MAX_LEN];

	if (pr.stopping)
		return;
	pr.stopping = 1;
	event_del(&pr.tick);
	snprintf(subject, sizeof(subject), "$KV." STORE_KV_INSTANCES_BUCKET
	    ".%s", pr.instance);
	store_publish_nowait_headers(subject, h, 2);
}

void
presence_free(void)
{
	struct peer	*p;

	event_del(&pr.tick);
	while ((p = TAILQ_FIRST(&pr.peers)) != NULL)
		peer_free(p);
	free(pr.last);
	pr.last = NULL;
}
