/*
 * subkv.c: the view of the TREATY_SUBSCRIBERS bucket and the running list
 * made from it (subkv.h).  Loop thread only.
 *
 * The watch (store-kv.c) gives the newest revision of each key, and
 * begins and ends each full reading of the bucket; an entry at or below
 * the revision held is not opened again, so a re-read after an outage
 * costs a comparison per subscriber.  Changes are applied together: at
 * most one application (deliver_reload and inbox_reload once) per
 * APPLY_EVERY_MS, so 10,000 PUTs a minute are at most 50 applications a
 * second, and memory stays one entry per key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <openssl/crypto.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "config-int.h"
#include "log.h"
#include "seal.h"
#include "store-kv.h"
#include "subkv.h"
#include "util.h"

/*
 * Applications at most this often, milliseconds: a change after a quiet
 * spell is applied on the loop's next turn, and those that follow it
 * within the interval together at its end.
 */
#define APPLY_EVERY_MS	20

struct entry {
	char			 name[NAME_MAX_LEN + 1];
	uint64_t		 rev;
	char			*val;		/* as stored: secrets sealed */
	size_t			 len;
	struct subscriber	*sub;		/* usable here, or NULL */
	int			 seen;		/* in this reading */
	/* The revisions last warned about: not usable, a configured name. */
	uint64_t		 warned;
	uint64_t		 warned_configured;
	TAILQ_ENTRY(entry)	 link;
};

static struct {
	TAILQ_HEAD(, entry)	 list;
	size_t			 n;
	const struct config	*cfg;
	void			(*apply)(void);
	struct event		 ev;
	int			 armed;		/* ev is pending */
	long long		 last_ms;	/* the last application */
	uint64_t		 seen_rev;	/* the newest revision seen */
	uint64_t		 applied_rev;	/* ... and applied */
	int			 init;
} sk = { .list = TAILQ_HEAD_INITIALIZER(sk.list) };

static struct entry *
entry_find(const char *name)
{
	struct entry	*e;

	TAILQ_FOREACH(e, &sk.list, link)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static void
entry_free(struct entry *e)
{
	config_subscriber_free(e->sub);
	free(e->val);
	free(e);
}

static void
apply_now(void)
{
	if (sk.armed)
		event_del(&sk.ev);
	sk.armed = 0;
	sk.last_ms = now_ms();
	sk.applied_rev = sk.seen_rev;
	sk.apply();
}

/* Apply what changed, soon; with now, at once (a reading ends). */
static void
changed(int now)
{
	long long	 wait = sk.last_ms + APPLY_EVERY_MS - now_ms();
	struct timeval	 tv = { 0, 0 };

	if (now) {
		apply_now();
		return;
	}
	if (sk.armed)
		return;
	/* On the loop's next turn: the watch's other messages first. */
	if (wait > 0)
		tv.tv_usec = wait * 1000;
	sk.armed = 1;
	event_add(&sk.ev, &tv);
}

static void
apply_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	sk.armed = 0;
	apply_now();
}

/* Wipe the opened secrets in a definition's tree before it is freed. */
static void
tree_wipe(yajl_val o)
{
	yajl_val	 secs;
	size_t		 i;

	if (o == NULL || (secs = config_obj_get(o, "secrets")) == NULL ||
	    !YAJL_IS_ARRAY(secs))
		return;
	for (i = 0; i < secs->u.array.len; i++)
		if (YAJL_IS_STRING(secs->u.array.values[i]))
			OPENSSL_cleanse(secs->u.array.values[i]->u.string,
			    strlen(secs->u.array.values[i]->u.string));
}

/*
 * The subscriber e's value defines for this instance, or NULL (logged
 * once per revision): its secrets opened, then validated as an API
 * definition is.
 */
static struct subscriber *
entry_open(struct entry *e)
{
	struct subscriber	*s;
	struct sub_parse	 p;
	struct config_error	 err;
	yajl_val		 o, secs, x;
	enum seal_result	 r;
	char			*text, *plain, kid[SEAL_KID_LEN + 1];
	char			 why[512];
	size_t			 i;
	int			 warn = e->warned != e->rev;

	e->warned = e->rev;
	text = xstrndup(e->val, e->len);
	o = yajl_tree_parse(text, NULL, 0);
	free(text);
	why[0] = '\0';
	if (o == NULL || !YAJL_IS_OBJECT(o) ||
	    (secs = config_obj_get(o, "secrets")) == NULL ||
	    !YAJL_IS_ARRAY(secs) || secs->u.array.len == 0) {
		snprintf(why, sizeof(why), "not a stored definition");
		goto bad;
	}
	for (i = 0; i < secs->u.array.len; i++) {
		x = secs->u.array.values[i];
		if (!YAJL_IS_STRING(x)) {
			snprintf(why, sizeof(why), "a secret is not a string");
			goto bad;
		}
		if (sk.cfg->secret_keys == NULL)
			r = SEAL_NO_KEY;
		else
			r = seal_open(sk.cfg->secret_keys, e->name, x->u.string,
			    &plain, kid);
		if (r != SEAL_OK) {
			/* The kid is the value's own, never the secret. */
			if (warn)
				log_warnx(r == SEAL_NO_KEY ? "subscribers "
				    "bucket: no key of TREATY_RELAY_SECRET_KEY_"
				    "FILE opens this subscriber's secret; not "
				    "delivered to here" : "subscribers bucket: "
				    "a secret does not open (damaged, or sealed "
				    "for another name); not delivered to here",
				    "subscriber=%s revision=%llu kid=%.8s",
				    e->name, (unsigned long long)e->rev,
				    x->u.string[0] == 'v' &&
				    strlen(x->u.string) > 3 ? x->u.string + 3 :
				    "-");
			goto out;
		}
		free(x->u.string);
		x->u.string = xstrdup(plain);
		secret_free(plain);
	}
	memset(&p, 0, sizeof(p));
	p.cfg = sk.cfg;
	p.nsubs = sk.cfg->nsubscribers;
	p.var = STORE_KV_BUCKET;
	p.prefix = "";
	p.from = SUB_FROM_NEW;
	p.api = 1;
	s = xcalloc(1, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", e->name);
	if (config_subscriber_parse(o, s, &p, &err) == -1) {
		config_subscriber_free(s);
		snprintf(why, sizeof(why), "%s%s%s", err.field, err.field[0] ?
		    ": " : "", err.detail);
		goto bad;
	}
	s->api = 1;
	s->revision = e->rev;
	tree_wipe(o);
	yajl_tree_free(o);
	return s;
bad:
	if (warn)
		log_warnx("subscribers bucket: a definition this instance "
		    "cannot use; not delivered to here", "subscriber=%s "
		    "revision=%llu detail=%s", e->name,
		    (unsigned long long)e->rev, log_q(why));
out:
	tree_wipe(o);
	yajl_tree_free(o);
	return NULL;
}

/* The watch: a reading begins. */
static void
kv_begin(void)
{
	struct entry	*e;

	TAILQ_FOREACH(e, &sk.list, link)
		e->seen = 0;
}

/* The watch: a key's newest value, or its deletion. */
static void
kv_entry(const char *name, uint64_t rev, const char *val, size_t len)
{
	struct entry	*e = entry_find(name);

	/* The bucket's one order: every revision below was seen before. */
	if (rev > sk.seen_rev)
		sk.seen_rev = rev;
	if (val == NULL) {
		changed(0);	/* applied_rev moves on even so */
		if (e != NULL) {
			TAILQ_REMOVE(&sk.list, e, link);
			sk.n--;
			entry_free(e);
		}
		return;
	}
	if (e != NULL && rev <= e->rev) {
		e->seen = 1;		/* held already */
		return;
	}
	if (e == NULL) {
		e = xcalloc(1, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", name);
		TAILQ_INSERT_TAIL(&sk.list, e, link);
		sk.n++;
	}
	e->seen = 1;
	e->rev = rev;
	free(e->val);
	e->val = xstrndup(val, len);
	e->len = len;
	config_subscriber_free(e->sub);
	e->sub = entry_open(e);
	changed(0);
}

/* The watch: the reading is whole; what it did not confirm is gone. */
static void
kv_end(void)
{
	struct entry	*e, *next;

	for (e = TAILQ_FIRST(&sk.list); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->seen)
			continue;
		log_info("subscribers bucket: gone while not watched",
		    "subscriber=%s", e->name);
		TAILQ_REMOVE(&sk.list, e, link);
		sk.n--;
		entry_free(e);
	}
	/* Applied before the relay says it is ready. */
	changed(1);
}

static const struct store_kv_watcher watcher = { kv_begin, kv_entry,
    kv_end };

void
subkv_init(struct event_base *base, const struct config *cfg,
    void (*apply)(void))
{
	sk.cfg = cfg;
	sk.apply = apply;
	evtimer_assign(&sk.ev, base, apply_cb, NULL);
	sk.init = 1;
	store_kv_watch(STORE_KV_SUBS, &watcher);
}

void
subkv_free(void)
{
	struct entry	*e;

	if (sk.init && sk.armed)
		event_del(&sk.ev);
	sk.armed = 0;
	while ((e = TAILQ_FIRST(&sk.list)) != NULL) {
		TAILQ_REMOVE(&sk.list, e, link);
		entry_free(e);
	}
	sk.n = 0;
}

/* 1 when name is one of the configuration's n subscribers in cur. */
static int
configured(const struct subscriber *cur, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!cur[i].api && strcmp(cur[i].name, name) == 0)
			return 1;
	return 0;
}

size_t
subkv_merge(const struct subscriber *cur, size_t n, struct subscriber **out)
{
	struct subscriber	*subs;
	struct entry		*e;
	size_t			 i, k = 0;

	subs = xcalloc(n + sk.n + 1, sizeof(*subs));
	for (i = 0; i < n; i++)
		if (!cur[i].api)
			config_subscriber_copy(&subs[k++], &cur[i]);
	TAILQ_FOREACH(e, &sk.list, link) {
		if (e->sub == NULL)
			continue;
		if (configured(cur, n, e->name)) {
			if (e->warned_configured != e->rev) {
				/* Once per revision. */
				e->warned_configured = e->rev;
				log_warnx("subscribers bucket: the name is "
				    "configured; the bucket's entry is "
				    "ignored", "subscriber=%s revision=%llu",
				    e->name, (unsigned long long)e->rev);
			}
			continue;
		}
		config_subscriber_copy(&subs[k++], e->sub);
	}
	*out = subs;
	return k;
}

void
subkv_reload(void)
{
	struct subscriber	*s;
	struct entry		*e;
	int			 diff = 0;

	TAILQ_FOREACH(e, &sk.list, link) {
		/* Say again what this reading still cannot use. */
		e->warned = 0;
		e->warned_configured = 0;
		s = entry_open(e);
		if ((s == NULL) != (e->sub == NULL) || (s != NULL &&
		    !config_subscriber_equal(s, e->sub)))
			diff = 1;
		config_subscriber_free(e->sub);
		e->sub = s;
	}
	if (diff)
		changed(0);
}

int
subkv_find(const char *name, uint64_t *rev, int *live)
{
	struct entry	*e = entry_find(name);

	if (e == NULL)
		return 0;
	*rev = e->rev;
	*live = e->sub != NULL;
	return 1;
}

uint64_t
subkv_applied(void)
{
	return sk.applied_rev;
}

size_t
subkv_count(void)
{
	return sk.n;
}
