/*
 * substate.c: the subscribers' states (substate.h): the view of the
 * TREATY_SUBSCRIBER_STATE bucket, the writes, the API's requests, and
 * the timers of a tripped subscriber's probe.  Loop thread only.
 *
 * An entry holds the newest stored value of its key, the revision, and
 * when this instance saw it (its own monotonic clock).  On top, this
 * instance's own verdict (local): set the moment a delivery trips the
 * breaker or gets a 410, so that this instance stops at once, and
 * cleared when the write is applied (or fails).  One write per entry at
 * a time; what is asked meanwhile waits for it.
 *
 * A tripped subscriber's probe:
 *   - with the lease free, every instance arms a timer for the value's
 *     delay from when it saw it; at its end each that holds a delivery to
 *     probe with writes itself in as holder, and one wins (the others get
 *     a stale revision);
 *   - the winner sends the probe (the prober, deliver.c) and writes what
 *     came of it: active on a 2xx, paused on a 410, else the lease freed
 *     with the next delay;
 *   - a holder seen unchanged for LEASE_MS has died or hung: any instance
 *     frees the lease, counting the probe as failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/util.h>

#include "treaty.h"
#include "audit.h"
#include "config.h"
#include "log.h"
#include "store-kv.h"
#include "substate.h"
#include "substate-rule.h"
#include "util.h"

/*
 * A probe's holder seen unchanged this long has died or hung: longer
 * than its lookup and its POST may take (dns_timeout_ms and
 * delivery_timeout_ms) and the writes around them.
 */
#define LEASE_SLACK_MS		15000
#define LEASE_MS		(ss.cfg->dns_timeout_ms + \
				    ss.cfg->delivery_timeout_ms + LEASE_SLACK_MS)
/* A due probe nobody here can send: look again this often. */
#define PROBE_RECHECK_MS	1000
/*
 * An API request's whole wait: its write (STORE_API_WAIT_MS at most),
 * and its application here.
 */
#define REQUEST_WAIT_MS		5000
/* An API request decides again after a stale write, at most this often. */
#define REQUEST_TRIES		4
#define MAX_WATCHERS		4
/*
 * Entries are found by name in a table of this many chains (status and
 * /metrics ask for every subscriber's, 10,000 of them at most).
 */
#define NSLOTS			1024

struct substate_entry {
	char			 name[NAME_MAX_LEN + 1];
	struct substate_value	 v;		/* as stored; active if none */
	uint64_t		 rev;		/* its revision; 0: none seen */
	int			 stored;	/* a value (not a deletion) */
	int			 seen;		/* in this reading */
	int			 local;		/* our verdict, not yet applied */
	enum substate		 local_state;
	uint64_t		 local_rev;	/* applied at this revision */
	struct store_kv_job	*job;		/* a write under way */
	enum substate_ask	 job_ask;
	struct substate_value	 job_v;		/* what it writes */
	enum substate		 job_prev;	/* ... over this state */
	char			*job_url;	/* job_v.url's */
	struct event		 timer;		/* the probe's or its lease's */
	int			 probing;	/* we hold the lease, and probe */
	int			 gone_wanted;	/* a 410 while a write ran */
	char			*gone_url;
	int			 probe_wanted;	/* a probe's answer, likewise */
	int			 probe_status;
	TAILQ_ENTRY(substate_entry) link;
	struct substate_entry	*hnext;		/* its slot's chain */
};

struct substate_req {
	struct substate_entry	*e;
	enum substate_ask	 ask;
	substate_cb		 cb;
	void			*arg;
	int			 tries;
	int			 writing;	/* e->job is its write */
	uint64_t		 expect;	/* ... over this revision */
	uint64_t		 wait_rev;	/* answered once applied */
	uint64_t		 stale_rev;	/* decide again above this */
	int			 closed;
	struct event		 timeout;
	TAILQ_ENTRY(substate_req) link;
};

static struct {
	struct event_base	*base;
	const struct config	*cfg;
	char			 instance[SUBSTATE_INSTANCE_MAX + 1];
	TAILQ_HEAD(, substate_entry) list;
	struct substate_entry	*slots[NSLOTS];
	TAILQ_HEAD(, substate_req) reqs;
	struct event		*watchers[MAX_WATCHERS];
	int			 nwatchers;
	int			 read;		/* the first reading is in */
	int			 (*can_probe)(const char *);
	void			 (*start_probe)(const char *, int);
} ss = {
	.list = TAILQ_HEAD_INITIALIZER(ss.list),
	.reqs = TAILQ_HEAD_INITIALIZER(ss.reqs)
};

static void	entry_timer_cb(evutil_socket_t, short, void *);
static void	entry_write(struct substate_entry *e, enum substate_ask ask,
		    const struct substate_ask_arg *extra);
static void	reqs_run(struct substate_entry *e);
static void	probe_answer(struct substate_entry *e, int status);
static void	reqs_written(struct substate_entry *e, enum store_kv_result r,
		    uint64_t rev);

/* Wake whoever reads states: something changed. */
static void
wake(void)
{
	int	 i;

	for (i = 0; i < ss.nwatchers; i++)
		event_active(ss.watchers[i], 0, 0);
}

void
substate_watch(struct event *ev)
{
	if (ss.nwatchers < MAX_WATCHERS)
		ss.watchers[ss.nwatchers++] = ev;
}

void
substate_prober(int (*can)(const char *), void (*start)(const char *, int))
{
	ss.can_probe = can;
	ss.start_probe = start;
}

/*
 * name's slot: FNV-1a, as names are chosen by operators (the
 * configuration, an admin token's PUT), not by whoever sends events.
 */
static unsigned
entry_slot(const char *name)
{
	uint32_t	 h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h % NSLOTS;
}

static struct substate_entry *
entry_find(const char *name)
{
	struct substate_entry	*e;

	for (e = ss.slots[entry_slot(name)]; e != NULL; e = e->hnext)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

struct substate_entry *
substate_ref(const char *name)
{
	struct substate_entry	*e;

	if ((e = entry_find(name)) != NULL)
		return e;
	e = xcalloc(1, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	substate_value_active(&e->v);
	evtimer_assign(&e->timer, ss.base, entry_timer_cb, e);
	TAILQ_INSERT_TAIL(&ss.list, e, link);
	e->hnext = ss.slots[entry_slot(name)];
	ss.slots[entry_slot(name)] = e;
	return e;
}

enum substate
substate_of(const struct substate_entry *e)
{
	return e->local ? e->local_state : e->v.state;
}

enum substate
substate_get(const char *name)
{
	struct substate_entry	*e = entry_find(name);

	return e != NULL ? substate_of(e) : SUBSTATE_ACTIVE;
}

void
substate_detail(const char *name, const char **since, const char **reason)
{
	struct substate_entry	*e = entry_find(name);

	*since = *reason = NULL;
	if (e == NULL || !e->stored)
		return;
	*since = e->v.since;
	*reason = e->v.reason;
}

/* Arm e's timer for ms from now. */
static void
entry_arm(struct substate_entry *e, long long ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(&e->timer, &tv);
}

/*
 * The probe's timers after a change of e (or at its end): a free lease
 * waits for the value's delay, a held one (not ours) for LEASE_MS;
 * nothing for a state that is not tripped.
 */
static void
entry_timers(struct substate_entry *e)
{
	evtimer_del(&e->timer);
	if (e->v.state != SUBSTATE_TRIPPED || e->probing)
		return;
	if (e->v.holder[0] == '\0')
		entry_arm(e, e->v.delay_ms);
	else
		entry_arm(e, LEASE_MS);
}

/* The due probe, or a lease that ran out. */
static void
entry_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct substate_entry	*e = arg;

	(void)fd;
	(void)ev;
	if (e->v.state != SUBSTATE_TRIPPED || e->probing)
		return;
	if (e->job != NULL) {
		entry_arm(e, PROBE_RECHECK_MS);
		return;
	}
	if (e->v.holder[0] != '\0') {
		log_warnx("breaker probe lease ran out", "sub=%s holder=%s n=%d",
		    e->name, e->v.holder, e->v.probe_n);
		entry_write(e, SUBSTATE_PROBE_FAILED, NULL);
		return;
	}
	/* Only an instance holding a delivery to send competes. */
	if (ss.can_probe == NULL || !ss.can_probe(e->name)) {
		entry_arm(e, PROBE_RECHECK_MS);
		return;
	}
	entry_write(e, SUBSTATE_LEASE, NULL);
}

/* A change stored by this instance: its log line and AUDIT record. */
static void
entry_changed(struct substate_entry *e, enum substate prev,
    const struct substate_value *v, uint64_t rev)
{
	int			 url = v->url != NULL && v->url[0] != '\0';
	struct audit_state	 a;
	char			 more[64] = "";

	if (v->state == SUBSTATE_TRIPPED)
		snprintf(more, sizeof(more), " failures=%d next_ms=%lld",
		    v->failures, v->delay_ms);
	log_info("subscriber state", "sub=%s state=%s previous=%s reason=%s "
	    "by=%s revision=%llu%s%s%s", e->name, substate_text(v->state),
	    substate_text(prev), v->reason, v->by, (unsigned long long)rev,
	    more, url ? " url=" : "", url ? log_q(v->url) : "");
	memset(&a, 0, sizeof(a));
	a.subscriber = e->name;
	a.state = substate_text(v->state);
	a.previous = substate_text(prev);
	a.reason = v->reason;
	a.since = v->since;
	a.instance = v->by;
	a.revision = rev;
	a.url = url ? v->url : NULL;
	a.failures = v->failures;
	audit_subscriber_state(&a);
}

/* A write of e is done (the store's answer). */
static void
entry_written(void *arg, enum store_kv_result r, uint64_t rev, int existed)
{
	struct substate_entry	*e = arg;
	enum substate		 prev = e->job_prev;
	enum substate_ask	 ask = e->job_ask;

	(void)existed;
	e->job = NULL;
	if (r == STORE_KV_OK) {
		if (prev != e->job_v.state)
			entry_changed(e, prev, &e->job_v, rev);
		else if (ask == SUBSTATE_PROBE_FAILED)
			log_info("breaker probe", "sub=%s n=%d next_ms=%lld",
			    e->name, e->job_v.probe_n, e->job_v.delay_ms);
		/* Our verdict holds until the watch brings this revision. */
		if (e->local)
			e->local_rev = rev;
		if (ask == SUBSTATE_LEASE && rev >= e->rev) {
			/* Ours: probe now, before the watch shows it. */
			e->probing = 1;
			if (rev > e->rev) {
				e->v = e->job_v;
				e->v.url = NULL;	/* not kept */
				e->rev = rev;
				e->stored = 1;
			}
			evtimer_del(&e->timer);
			log_info("breaker probe", "sub=%s n=%d sending=1",
			    e->name, e->v.probe_n);
			ss.start_probe(e->name, e->v.probe_n);
		}
		/*
		 * else a newer revision (a pause, a resume) came first: the
		 * lease is gone with it, and no probe starts.
		 */
	} else {
		if (r != STORE_KV_STALE)
			log_warnx("subscriber state not stored", "sub=%s ask=%s",
			    e->name, substate_ask_text[ask]);
		if (e->local) {
			e->local = 0;
			wake();
		}
		entry_timers(e);
	}
	reqs_written(e, r, rev);
	reqs_run(e);
	if (e->gone_wanted && e->job == NULL) {
		struct substate_ask_arg	 extra = { .url = e->gone_url };

		e->gone_wanted = 0;
		entry_write(e, SUBSTATE_GONE, &extra);
		free(e->gone_url);
		e->gone_url = NULL;
	}
	if (e->probe_wanted && e->job == NULL) {
		e->probe_wanted = 0;
		probe_answer(e, e->probe_status);
	}
}

/*
 * Decide ask on e's stored value and write the result over its
 * revision.  Returns through entry_written; nothing when nothing changes
 * or a write runs.
 */
static int
entry_decide_write(struct substate_entry *e, enum substate_ask ask,
    const struct substate_ask_arg *extra)
{
	struct substate_ask_arg	 a;
	char			 now[TREATY_RFC3339_MAX];
	int64_t			 t = wall_ns();
	char			*val;
	size_t			 len;

	if (e->job != NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	if (extra != NULL)
		a = *extra;
	if (treaty_rfc3339_format(t / NS_PER_S, (long)(t % NS_PER_S), 3, now,
	    sizeof(now)) < 0)
		now[0] = '\0';
	a.now = now;
	a.instance = ss.instance;
	evutil_secure_rng_get_bytes(&a.rnd, sizeof(a.rnd));
	if (!substate_decide(&e->v, ask, &a, &e->job_v))
		return 0;
	/* The URL is the caller's: the job keeps its own copy. */
	free(e->job_url);
	e->job_url = e->job_v.url != NULL ? xstrdup(e->job_v.url) : NULL;
	e->job_v.url = e->job_url;
	val = substate_value_format(&e->job_v, &len);
	e->job_ask = ask;
	e->job_prev = e->v.state;
	e->job = store_kv_set(STORE_KV_STATE, e->name, val, len, e->rev,
	    entry_written, e);
	free(val);
	return e->job != NULL ? 1 : -2;
}

/* entry_decide_write, for what the deliveries saw. */
static void
entry_write(struct substate_entry *e, enum substate_ask ask,
    const struct substate_ask_arg *extra)
{
	if (entry_decide_write(e, ask, extra) == -2) {
		if (e->local) {
			e->local = 0;
			wake();
		}
		entry_timers(e);
	}
}

int
substate_trip(struct substate_entry *e, int failures)
{
	struct substate_ask_arg	 extra = { .failures = failures };

	if (substate_of(e) != SUBSTATE_ACTIVE || e->job != NULL)
		return 0;
	e->local = 1;
	e->local_state = SUBSTATE_TRIPPED;
	e->local_rev = UINT64_MAX;
	wake();
	entry_write(e, SUBSTATE_TRIP, &extra);
	return 1;
}

void
substate_gone(struct substate_entry *e, const char *url)
{
	struct substate_ask_arg	 extra = { .url = url };

	if (substate_of(e) == SUBSTATE_PAUSED)
		return;
	e->local = 1;
	e->local_state = SUBSTATE_PAUSED;
	e->local_rev = UINT64_MAX;
	wake();
	if (e->job != NULL) {
		/* After the write under way (a trip, a lease). */
		e->gone_wanted = 1;
		free(e->gone_url);
		e->gone_url = xstrdup(url);
		return;
	}
	entry_write(e, SUBSTATE_GONE, &extra);
}

/* Write what a probe's answer decides (e's job is free). */
static void
probe_answer(struct substate_entry *e, int status)
{
	struct substate_ask_arg	 extra = { 0 };

	if (status >= 200 && status < 300)
		entry_write(e, SUBSTATE_PROBE_OK, NULL);
	else if (status == 410) {
		/* The delivery has said it to substate_gone already. */
		entry_timers(e);
	} else
		entry_write(e, SUBSTATE_PROBE_FAILED, &extra);
}

void
substate_probe_done(const char *name, int status)
{
	struct substate_entry	*e = entry_find(name);

	if (e == NULL || !e->probing)
		return;
	e->probing = 0;
	log_info("breaker probe", "sub=%s n=%d status=%d", name, e->v.probe_n,
	    status);
	if (e->job != NULL) {
		/* After the write under way (an operator's, a 410's). */
		e->probe_wanted = 1;
		e->probe_status = status;
		return;
	}
	probe_answer(e, status);
}

/* The watch: name's newest value at rev (val NULL: none). */
static void
watch_entry(const char *name, uint64_t rev, const char *val, size_t len)
{
	struct substate_entry	*e = substate_ref(name);
	struct substate_value	 v;
	enum substate		 was = substate_of(e);

	e->seen = 1;
	if (rev <= e->rev && e->stored == (val != NULL))
		return;
	if (val == NULL)
		substate_value_active(&v);
	else if (substate_value_parse(val, len, &v) == -1) {
		log_warnx("subscriber states bucket: a value that is no state, "
		    "read as active", "sub=%s revision=%llu", name,
		    (unsigned long long)rev);
		substate_value_active(&v);
	}
	e->v = v;
	e->rev = rev;
	e->stored = val != NULL;
	if (e->local && rev >= e->local_rev)
		e->local = 0;
	/* A probe of ours ends with our write; another's lease: not ours. */
	if (e->probing && strcmp(e->v.holder, ss.instance) != 0)
		e->probing = 0;
	entry_timers(e);
	if (substate_of(e) != was)
		log_debug("subscriber state applied", "sub=%s state=%s "
		    "revision=%llu", name, substate_text(substate_of(e)),
		    (unsigned long long)rev);
	wake();
	reqs_run(e);
}

static void
watch_begin(void)
{
	struct substate_entry	*e;

	TAILQ_FOREACH(e, &ss.list, link)
		e->seen = 0;
}

/* A whole reading: a key not in it was deleted meanwhile. */
static void
watch_end(void)
{
	struct substate_entry	*e;

	TAILQ_FOREACH(e, &ss.list, link)
		if (!e->seen && e->stored)
			/* No marker either (a purged stream): write as new. */
			watch_entry(e->name, 0, NULL, 0);
	substate_mark_read();
}

void
substate_mark_read(void)
{
	if (!ss.read) {
		ss.read = 1;
		wake();			/* the pause gate waited for it */
	}
}

int
substate_read(void)
{
	return ss.read;
}

static const struct store_kv_watcher watcher = {
	watch_begin, watch_entry, watch_end
};

/* Answer r and free it. */
static void
req_end(struct substate_req *r, int result)
{
	TAILQ_REMOVE(&ss.reqs, r, link);
	evtimer_del(&r->timeout);
	if (!r->closed)
		r->cb(r->arg, result);
	free(r);
}

/* A request waited long enough for its write to show here. */
static void
req_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct substate_req	*r = arg;

	(void)fd;
	(void)ev;
	/* Stored, not seen here yet: it is, still. */
	req_end(r, r->wait_rev > 0 ? 0 : -1);
}

/* e's write for a request is done: the request goes on from there. */
static void
reqs_written(struct substate_entry *e, enum store_kv_result res,
    uint64_t rev)
{
	struct substate_req	*r;

	TAILQ_FOREACH(r, &ss.reqs, link)
		if (r->e == e && r->writing)
			break;
	if (r == NULL)
		return;
	r->writing = 0;
	if (res == STORE_KV_OK)
		r->wait_rev = rev;
	else if (res == STORE_KV_STALE)
		r->stale_rev = r->expect;	/* decide on a newer one */
	else
		req_end(r, -1);
}

/*
 * What the API asked of e, now that something changed: answered once
 * its write is applied here (or nothing had to change), decided again
 * after a stale write once the watch brought the newer value.
 */
static void
reqs_run(struct substate_entry *e)
{
	struct substate_req	*r, *next;
	int			 rc;

	for (r = TAILQ_FIRST(&ss.reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, link);
		if (r->e != e || r->writing)
			continue;
		if (r->wait_rev > 0) {
			if (e->rev >= r->wait_rev)
				req_end(r, 0);
			continue;
		}
		if (e->job != NULL || (r->tries > 0 && e->rev <= r->stale_rev))
			continue;
		if (r->tries++ >= REQUEST_TRIES) {
			req_end(r, -1);
			continue;
		}
		r->expect = e->rev;
		if ((rc = entry_decide_write(e, r->ask, NULL)) == 0)
			req_end(r, 0);
		else if (rc < 0)
			req_end(r, -1);
		else
			r->writing = 1;
	}
}

/* A new request's first decision. */
static void
reqs_start_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	reqs_run(arg);
}

/* See substate.h. */
struct substate_req *
substate_request(const char *name, int pause, substate_cb cb, void *arg)
{
	struct substate_req	*r = xcalloc(1, sizeof(*r));
	struct timeval		 tv = { REQUEST_WAIT_MS / 1000,
				    (REQUEST_WAIT_MS % 1000) * 1000 };
	struct timeval		 now = { 0, 0 };

	r->e = substate_ref(name);
	r->ask = pause ? SUBSTATE_PAUSE : SUBSTATE_RESUME;
	r->cb = cb;
	r->arg = arg;
	evtimer_assign(&r->timeout, ss.base, req_timeout_cb, r);
	evtimer_add(&r->timeout, &tv);
	TAILQ_INSERT_TAIL(&ss.reqs, r, link);
	/* On the next turn: the caller has r before its callback runs. */
	event_base_once(ss.base, -1, EV_TIMEOUT, reqs_start_cb, r->e, &now);
	return r;
}

void
substate_request_close(struct substate_req *r)
{
	if (r != NULL)
		r->closed = 1;
}

void
substate_init(struct event_base *base, const struct config *cfg,
    const char *instance)
{
	ss.base = base;
	ss.cfg = cfg;
	snprintf(ss.instance, sizeof(ss.instance), "%s", instance);
	store_kv_watch(STORE_KV_STATE, &watcher);
}

void
substate_free(void)
{
	struct substate_entry	*e;
	struct substate_req	*r;

	while ((r = TAILQ_FIRST(&ss.reqs)) != NULL) {
		r->closed = 1;
		req_end(r, -1);
	}
	memset(ss.slots, 0, sizeof(ss.slots));
	while ((e = TAILQ_FIRST(&ss.list)) != NULL) {
		TAILQ_REMOVE(&ss.list, e, link);
		evtimer_del(&e->timer);
		store_kv_close(e->job);
		free(e->gone_url);
		free(e->job_url);
		free(e);
	}
}
