/*
 * cmd-work.c: treaty work, the pull worker of SPEC 7.
 *
 * It long-polls GET /v1/inbox/<name>?lease=true and handles each envelope
 * in order:
 *   1. verify the signature over the event's data (a forged or stale
 *      envelope is left unacknowledged, never recorded);
 *   2. suppress duplicates by (inbox, id): the memory of completed
 *      deliveries (10 minutes, 16,384 entries) and the ids recorded in the
 *      inbox file; a duplicate is acknowledged again, nothing else;
 *   3. --inbox FILE: append one JSON line carrying envelopeId, fsync, then
 *      acknowledge (DELETE with the receipt; 204 and 404 both mean done),
 *      then --on-receive, best effort; or --exec CMD: run it, acknowledge
 *      after it exits 0 (the lease is extended while it runs).
 * A failed write leaves the event unacknowledged: it comes back after its
 * lease.  When the memory of completed deliveries is full, no new work is
 * taken until entries age out (fail closed), with one notice.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <event2/http.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "cevent.h"
#include "api.h"
#include "cli.h"
#include "log.h"
#include "util.h"

#define DEDUP_CAP	16384
#define DEDUP_TTL_MS	(10 * 60 * 1000)
#define DEFAULT_MAX	API_INBOX_BATCH_DEFAULT
#define DEFAULT_WAIT	20000

enum job_state {
	JOB_NEW,		/* verified, not yet handled */
	JOB_RUNNING,		/* --exec command running */
	JOB_ACKING		/* handled: acknowledging */
};

struct job {
	TAILQ_ENTRY(job)	 entry;
	enum job_state		 state;
	char			*id;
	char			*key;		/* (source, id): strset_key2 */
	char			*receipt;
	long long		 count;
	struct cevent		 ev;
	int			 in_cache;	/* counted in dedup already */
	struct client_req	*req;		/* acknowledgement in flight */
	struct retry		 retry;		/* of the acknowledgement */
	struct event		 heartbeat;	/* extends the lease (--exec) */
	struct client_req	*ext;		/* extension in flight */
};
TAILQ_HEAD(job_list, job);

static struct {
	const char		*inbox;
	char			*poll_path;
	struct verifier		 ver;
	struct record_file	*rf;
	const char		*inbox_file;
	int			 write_failed;	/* back off before polling */
	const char		*exec;
	const char		*on_receive;
	int			 batch;		/* one fsync per answer */
	int			 once;
	int			 polled;
	struct dedup		*dd;
	size_t			 dedup_cap;
	int64_t			 dedup_ttl_ms;
	int			 max, wait_ms;
	size_t			 asked;		/* max of the poll under way */
	int			 lease_s;
	struct client_req	*poll;
	struct retry		 poll_retry;
	struct event		 resume;	/* the cache had no room */
	int			 full;
	struct job_list		 jobs;
	int			 njobs, nuncached;
	int			 exec_running;
	int			 rc;
	long long		 recorded, duplicates, acked, unverified;
} wk;

static void	work_poll(void *);
static void	work_next(void);

/* Free a job (its requests and timers too). */
static void
job_free(struct job *j)
{
	TAILQ_REMOVE(&wk.jobs, j, entry);
	wk.njobs--;
	if (!j->in_cache)
		wk.nuncached--;
	if (j->req != NULL)
		client_cancel(j->req);
	if (j->ext != NULL)
		client_cancel(j->ext);
	retry_cancel(&j->retry);
	event_del(&j->heartbeat);
	cevent_free(&j->ev);
	free(j->id);
	free(j->key);
	free(j->receipt);
	free(j);
}

/* Fatal: the relay refuses us for good (token, inbox). */
static void
work_fatal(const char *what, const struct client_result *r)
{
	char	 why[768];

	cli_err("%s: %s", what, client_why(r, why, sizeof(why)));
	wk.rc = EXIT_FAILED;
	client_exit(EXIT_FAILED);
}

/* Exit once stopping (or --once) and nothing is in flight. */
static void
work_maybe_done(void)
{
	/* Hooks still running are waited for, so their failure is noted. */
	if ((client_stopping() || (wk.once && wk.polled)) && wk.njobs == 0 &&
	    wk.poll == NULL && !retry_pending(&wk.poll_retry) &&
	    spawn_running() == 0) {
		/*
		 * A pass that refused envelopes on their signature has not
		 * done its work (a wrong --secret-file refuses them all): not
		 * a success, whatever else it did.
		 */
		if (wk.once && wk.unverified > 0 && wk.rc == EXIT_OK) {
			cli_err("%lld envelope%s not verified (a wrong "
			    "--secret-file?); left in the inbox",
			    wk.unverified, wk.unverified == 1 ? "" : "s");
			wk.rc = EXIT_FAILED;
		}
		log_info("worker stopped", "inbox=%s recorded=%lld "
		    "duplicates=%lld acknowledged=%lld unverified=%lld",
		    log_q(wk.inbox), wk.recorded, wk.duplicates, wk.acked,
		    wk.unverified);
		client_exit(wk.rc);
	}
}

/* The path of an operation on j: /v1/inbox/<name>/<id>[/op]?receipt=. */
static char *
job_path(const struct job *j, const char *op)
{
	char	*name = evhttp_uriencode(wk.inbox, -1, 0);
	char	*id = evhttp_uriencode(j->id, -1, 0);
	char	*r = evhttp_uriencode(j->receipt, -1, 0);
	char	*p;
	size_t	 n = strlen(name) + strlen(id) + strlen(r) + 48;

	p = xmalloc(n);
	snprintf(p, n, API_INBOX_PATH "%s/%s%s%s?receipt=%s", name, id,
	    op != NULL ? "/" : "", op != NULL ? op : "", r);
	free(name);
	free(id);
	free(r);
	return p;
}

static void	job_ack(void *);

/* The answer to an acknowledgement. */
static void
job_acked_cb(void *arg, const struct client_result *r)
{
	struct job	*j = arg;

	j->req = NULL;
	if (r->status == 204 || r->status == 404) {
		/* 404: already absent, which is what we wanted too. */
		wk.acked++;
		log_debug("acknowledged", "inbox=%s id=%s status=%d",
		    log_q(wk.inbox), log_q(j->id), r->status);
		job_free(j);
		work_maybe_done();
		return;
	}
	/*
	 * --once gives up as its poll does.  The event comes back after
	 * its lease: an inbox file's ids acknowledge it without a second
	 * record, a command runs again (at least once, as always).
	 */
	if (client_transient(r) && !client_stopping() && wk.once &&
	    j->retry.attempt + 1 >= ADMIN_ATTEMPTS) {
		wk.rc = EXIT_TEMPFAIL;
		log_warnx("acknowledgement failed; giving up (--once), the "
		    "event will come back", "inbox=%s id=%s attempts=%u",
		    log_q(wk.inbox), log_q(j->id), j->retry.attempt + 1);
		job_free(j);
		work_maybe_done();
		return;
	}
	if (client_transient(r) && !client_stopping()) {
		retry_later(&j->retry, r);
		return;
	}
	if (r->status == 401 || r->status == 403) {
		work_fatal("acknowledge", r);
		return;
	}
	log_warnx("acknowledgement refused; the event will come back",
	    "inbox=%s id=%s status=%d", log_q(wk.inbox), log_q(j->id),
	    r->status);
	job_free(j);
	work_maybe_done();
}

/* Acknowledge (again). */
static void
job_ack(void *arg)
{
	struct job	*j = arg;
	char		*path = job_path(j, NULL);

	j->state = JOB_ACKING;
	j->req = client_request(OUTBOUND_DELETE, path, NULL, 0, NULL, 0,
	    job_acked_cb, j);
	free(path);
}

/* Remember j as completed, then acknowledge it. */
static void
job_complete(struct job *j)
{
	if (!j->in_cache) {
		/* Cannot fail: polls never ask for more than there is room. */
		dedup_add(wk.dd, wk.inbox, j->key, now_ms());
		j->in_cache = 1;
		wk.nuncached--;
	}
	job_ack(j);
}

/* The answer to a lease extension. */
static void
job_extended_cb(void *arg, const struct client_result *r)
{
	struct job	*j = arg;

	j->ext = NULL;
	if (r->status == 404)
		log_warnx("lease lost while the command runs; the event may "
		    "be handed to another worker", "inbox=%s id=%s",
		    log_q(wk.inbox), log_q(j->id));
}

/*
 * Half a lease, in milliseconds: whole seconds made a 1 s lease's "half"
 * the whole lease, so every extension came as the lease ran out (and the
 * event went to another worker while the command ran).
 */
static struct timeval
job_half_lease(void)
{
	long long	 ms = wk.lease_s * 500LL;
	struct timeval	 tv = { (time_t)(ms / 1000),
			    (suseconds_t)(ms % 1000 * 1000) };

	return tv;
}

/* Half a lease passed while --exec runs: extend it. */
static void
job_heartbeat_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct job	*j = arg;
	struct timeval	 tv = job_half_lease();
	char		*path;

	(void)fd;
	(void)ev;
	if (j->ext == NULL) {
		path = job_path(j, "extend");
		j->ext = client_request(OUTBOUND_POST, path, NULL, 0, NULL, 0,
		    job_extended_cb, j);
		free(path);
	}
	evtimer_add(&j->heartbeat, &tv);
}

/* --exec finished. */
static void
job_exec_cb(void *arg, int status)
{
	struct job	*j = arg;

	wk.exec_running = 0;
	event_del(&j->heartbeat);
	if (spawn_code(status) == 0) {
		wk.recorded++;
		job_complete(j);
	} else {
		log_warnx("command failed; event left unacknowledged",
		    "inbox=%s id=%s status=%d", log_q(wk.inbox), log_q(j->id),
		    spawn_code(status));
		job_free(j);
		if (wk.once)
			wk.rc = EXIT_TEMPFAIL;
	}
	work_next();
}

/* --on-receive finished: a failure is only noted. */
static void
on_receive_cb(void *arg, int status)
{
	spawn_hook_done(arg, status);
	work_maybe_done();
}

/*
 * Recording or running failed: nothing new is acknowledged (it all comes
 * back after its lease), the next poll backs off, and --once exits 75.
 */
static void
work_drop_new(void)
{
	struct job	*j, *next;

	for (j = TAILQ_FIRST(&wk.jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->state == JOB_NEW)
			job_free(j);
	}
	wk.write_failed = 1;
	if (wk.once)
		wk.rc = EXIT_TEMPFAIL;
}

/* Persist every new job in the inbox file, then acknowledge them. */
static void
work_persist(void)
{
	struct job	*j;
	int		 failed = 0;

	TAILQ_FOREACH(j, &wk.jobs, entry) {
		if (j->state != JOB_NEW)
			continue;
		if (record_append(wk.rf, &j->ev, wk.inbox, j->id, j->count,
		    !wk.batch) == -1) {
			failed = 1;
			break;
		}
	}
	if (!failed && wk.batch && record_sync(wk.rf) == -1)
		failed = 1;
	if (failed) {
		/* Nothing new is acknowledged: it all comes back later. */
		log_warn("cannot write the inbox file; events left "
		    "unacknowledged", "file=%s", log_q(wk.inbox_file));
		work_drop_new();
		return;
	}
	TAILQ_FOREACH(j, &wk.jobs, entry) {
		if (j->state != JOB_NEW)
			continue;
		wk.recorded++;
		log_info("recorded", "inbox=%s id=%s count=%lld",
		    log_q(wk.inbox), log_q(j->id), j->count);
		if (wk.on_receive != NULL && spawn_event(wk.on_receive, &j->ev,
		    wk.inbox, j->count, on_receive_cb, NULL) == -1)
			log_warn("cannot run --on-receive (ignored)", NULL);
		job_complete(j);
	}
}

/* Handle what is new; poll again once nothing waits to be handled. */
static void
work_next(void)
{
	struct job	*j;
	struct timeval	 tv;
	int		 waiting = 0;

	if (wk.rf != NULL)
		work_persist();
	else if (!wk.exec_running) {
		TAILQ_FOREACH(j, &wk.jobs, entry)
			if (j->state == JOB_NEW)
				break;
		if (j != NULL) {
			if (spawn_event(wk.exec, &j->ev, wk.inbox, j->count,
			    job_exec_cb, j) == -1) {
				log_warn("cannot run --exec; events left "
				    "unacknowledged", NULL);
				work_drop_new();
			} else {
				j->state = JOB_RUNNING;
				wk.exec_running = 1;
				tv = job_half_lease();
				evtimer_add(&j->heartbeat, &tv);
			}
		}
	}
	TAILQ_FOREACH(j, &wk.jobs, entry)
		if (j->state != JOB_ACKING)
			waiting++;
	if (waiting > 0 || wk.poll != NULL || retry_pending(&wk.poll_retry) ||
	    evtimer_pending(&wk.resume, NULL))
		return;
	if (client_stopping() || (wk.once && wk.polled)) {
		work_maybe_done();
		return;
	}
	/* A failed write: wait like any other failure before taking more. */
	if (wk.write_failed) {
		struct client_result	 r = { .error = "inbox file not written" };

		wk.write_failed = 0;
		retry_later(&wk.poll_retry, &r);
		return;
	}
	work_poll(NULL);
}

/* One envelope of an answer: verify, suppress duplicates, queue. */
static void
work_envelope(yajl_val e)
{
	static const char	*pid[] = { "id", NULL };
	static const char	*prc[] = { "receipt", NULL };
	static const char	*pcount[] = { "deliveryCount", NULL };
	static const char	*pev[] = { "event", NULL };
	static const char	*psig[] = { "signature", NULL };
	yajl_val		 id, rc, cnt, ev, sig;
	struct job		*j, *o;
	int			 v;

	id = yajl_tree_get(e, pid, yajl_t_string);
	rc = yajl_tree_get(e, prc, yajl_t_string);
	cnt = yajl_tree_get(e, pcount, yajl_t_number);
	ev = yajl_tree_get(e, pev, yajl_t_object);
	sig = yajl_tree_get(e, psig, yajl_t_string);
	if (id == NULL || rc == NULL || ev == NULL) {
		log_warnx("envelope without id, receipt or event: skipped",
		    "inbox=%s", log_q(wk.inbox));
		return;
	}
	j = xcalloc(1, sizeof(*j));
	j->id = xstrdup(YAJL_GET_STRING(id));
	j->receipt = xstrdup(YAJL_GET_STRING(rc));
	j->count = cnt != NULL && YAJL_IS_INTEGER(cnt) ?
	    YAJL_GET_INTEGER(cnt) : 0;
	TAILQ_INSERT_TAIL(&wk.jobs, j, entry);
	wk.njobs++;
	wk.nuncached++;
	retry_init(&j->retry, "acknowledge", job_ack, j);
	evtimer_assign(&j->heartbeat, client_base(), job_heartbeat_cb, j);
	/* 1. The signature, over the data exactly as the relay stored it. */
	if (cevent_from_value(&j->ev, ev) == -1)
		v = TREATY_E_INVALID;
	else
		v = verifier_check(&wk.ver, sig != NULL ?
		    YAJL_GET_STRING(sig) : NULL, j->id, j->ev.data,
		    j->ev.datalen);
	/* The signature binds the envelope id: the event must carry it. */
	if (v == TREATY_OK && strcmp(j->ev.id, j->id) != 0)
		v = TREATY_E_INVALID;
	if (v != TREATY_OK) {
		wk.unverified++;
		log_warnx("envelope not verified; left unacknowledged",
		    "inbox=%s id=%s reason=%s", log_q(wk.inbox), log_q(j->id),
		    log_q(v == TREATY_E_INVALID ? "not a valid event" :
		    treaty_strerror(v)));
		job_free(j);
		return;
	}
	/*
	 * An event is known by its source and id (SPEC 2 keeps two
	 * producers' ids apart): the same one twice in one answer, the
	 * first is enough.
	 */
	j->key = strset_key2_new(j->ev.source, j->id);
	TAILQ_FOREACH(o, &wk.jobs, entry)
		if (o != j && o->key != NULL && strcmp(o->key, j->key) == 0)
			break;
	if (o != NULL) {
		job_free(j);
		return;
	}
	/* 2. Completed already: acknowledge again, nothing else. */
	if (dedup_has(wk.dd, wk.inbox, j->key, now_ms()) ||
	    (wk.rf != NULL && record_has_inbox_event(wk.rf, wk.inbox,
	    j->ev.source, j->id))) {
		wk.duplicates++;
		log_info("already completed; acknowledging again",
		    "inbox=%s id=%s count=%lld", log_q(wk.inbox), log_q(j->id),
		    j->count);
		j->in_cache = 1;	/* no room needed */
		wk.nuncached--;
		job_ack(j);
		return;
	}
	j->state = JOB_NEW;
}

/*
 * A poll that failed: try again later, or give up.  --once (a cron job,
 * say) gives up after the attempts an admin command makes, exit 75,
 * rather than wait out an outage of any length; a 200 that is not an
 * inbox answer counts as such a failure.
 */
static void
work_poll_failed(const struct client_result *r)
{
	char	 why[768];

	if (client_transient(r) && !client_stopping() && wk.once &&
	    wk.poll_retry.attempt + 1 >= ADMIN_ATTEMPTS) {
		wk.rc = EXIT_TEMPFAIL;
		log_warnx("poll failed; giving up (--once)", "attempts=%u "
		    "result=%s", wk.poll_retry.attempt + 1,
		    log_q(client_why(r, why, sizeof(why))));
		wk.polled = 1;
		work_maybe_done();
		return;
	}
	if (client_transient(r) && !client_stopping()) {
		wk.polled = 0;
		retry_later(&wk.poll_retry, r);
		return;
	}
	if (client_transient(r)) {
		work_maybe_done();
		return;
	}
	work_fatal("poll", r);
}

/* The answer to a poll. */
static void
work_polled_cb(void *arg, const struct client_result *r)
{
	static const char	*penv[] = { "envelopes", NULL };
	static const char	*pls[] = { "leaseSeconds", NULL };
	yajl_val		 root, envs, ls;
	char			*text;
	size_t			 i, n;

	(void)arg;
	wk.poll = NULL;
	wk.polled = 1;
	if (r->status != 200) {
		work_poll_failed(r);
		return;
	}
	text = xstrndup(r->body, r->bodylen);
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if (root == NULL || (envs = yajl_tree_get(root, penv, yajl_t_array))
	    == NULL) {
		struct client_result	 bad = { .error = "answer not JSON" };

		yajl_tree_free(root);
		work_poll_failed(&bad);
		return;
	}
	retry_reset(&wk.poll_retry);
	if ((ls = yajl_tree_get(root, pls, yajl_t_number)) != NULL &&
	    YAJL_IS_INTEGER(ls) && YAJL_GET_INTEGER(ls) > 0)
		wk.lease_s = (int)YAJL_GET_INTEGER(ls);
	/* Never more than was asked for: the cache's room was counted. */
	for (i = 0; i < YAJL_GET_ARRAY(envs)->len && i < wk.asked; i++)
		work_envelope(YAJL_GET_ARRAY(envs)->values[i]);
	n = YAJL_GET_ARRAY(envs)->len;
	yajl_tree_free(root);
	/* An empty answer to a poll that did not wait: pause before the next. */
	if (n == 0 && wk.wait_ms == 0 && !client_stopping() && !wk.once) {
		struct timeval	 tv = { 1, 0 };

		evtimer_add(&wk.resume, &tv);
		return;
	}
	work_next();
}

/* The cache has room again. */
static void
work_resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	work_next();
}

/* Ask for the next envelopes, as many as the cache can still take. */
static void
work_poll(void *arg)
{
	struct timeval	 tv;
	int64_t		 room, at;
	char		*path;
	size_t		 n;

	(void)arg;
	if (client_stopping()) {
		work_maybe_done();
		return;
	}
	room = (int64_t)dedup_room(wk.dd, now_ms()) - wk.nuncached;
	if (room <= 0) {
		/* Fail closed: forgetting a delivery could repeat it. */
		if (!wk.full)
			log_warnx("dedup cache full; taking no new work until "
			    "entries age out", "inbox=%s entries=%zu",
			    log_q(wk.inbox), wk.dedup_cap);
		wk.full = 1;
		at = dedup_next_expiry(wk.dd) - now_ms();
		if (at < 1)
			at = 1;
		tv.tv_sec = at / 1000;
		tv.tv_usec = at % 1000 * 1000;
		evtimer_add(&wk.resume, &tv);
		return;
	}
	if (wk.full) {
		log_info("dedup cache has room again; taking work",
		    "inbox=%s room=%lld", log_q(wk.inbox), (long long)room);
		wk.full = 0;
	}
	n = strlen(wk.poll_path) + 64;
	path = xmalloc(n);
	wk.asked = (size_t)(room < wk.max ? room : wk.max);
	snprintf(path, n, "%s&max=%zu&wait=%d", wk.poll_path, wk.asked,
	    wk.wait_ms);
	wk.poll = client_request(OUTBOUND_GET, path, NULL, 0, NULL, 0,
	    work_polled_cb, NULL);
	free(path);
}

/* SIGINT/SIGTERM: take nothing more, finish what is under way, exit. */
static void
work_stop_cb(void *arg)
{
	struct job	*j, *next;

	(void)arg;
	log_info("stopping: finishing work under way", "inbox=%s",
	    log_q(wk.inbox));
	if (wk.poll != NULL) {
		client_cancel(wk.poll);
		wk.poll = NULL;
	}
	retry_cancel(&wk.poll_retry);
	event_del(&wk.resume);
	for (j = TAILQ_FIRST(&wk.jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		/* Unhandled ones come back after their lease. */
		if (j->state == JOB_NEW ||
		    (j->state == JOB_ACKING && j->req == NULL))
			job_free(j);
	}
	work_maybe_done();
}

static const struct option work_opts[] = {
	{ "secret-file", required_argument, NULL, 's' },
	{ "inbox", required_argument, NULL, 'i' },
	{ "exec", required_argument, NULL, 'e' },
	{ "on-receive", required_argument, NULL, 'r' },
	{ "max", required_argument, NULL, 'm' },
	{ "wait", required_argument, NULL, 'w' },
	{ "tolerance", required_argument, NULL, 'T' },
	{ "dedup-max", required_argument, NULL, 'D' },
	{ "dedup-ttl", required_argument, NULL, 'L' },
	{ "batch-fsync", no_argument, NULL, 'b' },
	{ "once", no_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	CLIENT_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

#define WORK_USAGE							\
	"usage: treaty work --secret-file FILE (--inbox FILE [--on-receive CMD]\n" \
	"  | --exec CMD) [--max N] [--wait MS] [--tolerance S] [--dedup-max N]\n" \
	"  [--dedup-ttl S] [--batch-fsync] [--once] NAME\n" CLIENT_USAGE

/*
 * A number option's value from lo to hi, or -1 after a message naming the
 * option and its range (never the value, which may be anything).
 */
static long long
work_num(const char *arg, long long lo, long long hi, const char *opt)
{
	long long	 v = num_arg(arg);

	if (v >= lo && v <= hi)
		return v;
	cli_err("--%s: %lld to %lld", opt, lo, hi);
	return -1;
}

/* treaty work: see man/treaty.1. */
int
cmd_work(int argc, char **argv)
{
	const char	*secret_file = NULL, *inbox_file = NULL, *why;
	long long	 v;
	int		 c, rc = EXIT_FAILED;
	char		*name;

	memset(&wk, 0, sizeof(wk));
	TAILQ_INIT(&wk.jobs);
	wk.max = DEFAULT_MAX;
	wk.wait_ms = DEFAULT_WAIT;
	wk.dedup_cap = DEDUP_CAP;
	wk.dedup_ttl_ms = DEDUP_TTL_MS;
	wk.lease_s = API_LEASE_DEFAULT_S;	/* until the relay says */
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", work_opts)) != -1) {
		switch (c) {
		case 's': secret_file = optarg; break;
		case 'i': inbox_file = optarg; break;
		case 'e': wk.exec = optarg; break;
		case 'r': wk.on_receive = optarg; break;
		case 'b': wk.batch = 1; break;
		case 'o': wk.once = 1; break;
		case 'm':
			if ((v = work_num(optarg, 1, API_INBOX_BATCH_MAX,
			    "max")) < 0)
				return EXIT_USAGE;
			wk.max = (int)v;
			break;
		case 'w':
			if ((v = work_num(optarg, 0, API_INBOX_WAIT_MAX_MS,
			    "wait")) < 0)
				return EXIT_USAGE;
			wk.wait_ms = (int)v;
			break;
		case 'T':
			if ((v = work_num(optarg, 1, VERIFY_TOLERANCE_MAX_S,
			    "tolerance")) < 0)
				return EXIT_USAGE;
			wk.ver.tolerance = v;
			break;
		case 'D':
			if ((v = work_num(optarg, 1, DEDUP_CAP,
			    "dedup-max")) < 0)
				return EXIT_USAGE;
			wk.dedup_cap = (size_t)v;
			break;
		case 'L':
			if ((v = work_num(optarg, 1, DEDUP_TTL_MS / 1000,
			    "dedup-ttl")) < 0)
				return EXIT_USAGE;
			wk.dedup_ttl_ms = v * 1000;
			break;
		case 'h':
			puts(WORK_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, WORK_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	/* Say what is wrong first: the usage alone leaves a newcomer to guess. */
	why = optind >= argc ? "the inbox NAME is missing" :
	    optind + 1 < argc ? "one inbox NAME only, after the options" :
	    secret_file == NULL ? "--secret-file FILE is required (the "
	    "inbox's signing secret)" :
	    inbox_file == NULL && wk.exec == NULL ? "--inbox FILE or --exec "
	    "CMD is required (where each event goes)" :
	    inbox_file != NULL && wk.exec != NULL ? "--inbox and --exec "
	    "exclude each other" :
	    wk.on_receive != NULL && inbox_file == NULL ? "--on-receive "
	    "needs --inbox" :
	    wk.batch && inbox_file == NULL ? "--batch-fsync needs --inbox" :
	    NULL;
	if (why != NULL) {
		cli_err("work: %s\n%s", why, WORK_USAGE);
		return EXIT_USAGE;
	}
	wk.inbox = argv[optind];
	wk.inbox_file = inbox_file;
	if (verifier_load(&wk.ver, secret_file) == -1)
		goto out;
	if ((c = client_init()) != 0) {
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
		goto out_client;
	}
	if (inbox_file != NULL && (wk.rf = record_open(inbox_file)) == NULL)
		goto out_client;
	wk.dd = dedup_new(wk.dedup_cap, wk.dedup_ttl_ms);
	name = evhttp_uriencode(wk.inbox, -1, 0);
	wk.poll_path = xjoin(API_INBOX_PATH, name, "?lease=true");
	free(name);
	retry_init(&wk.poll_retry, "poll", work_poll, NULL);
	evtimer_assign(&wk.resume, client_base(), work_resume_cb, NULL);
	client_on_stop(work_stop_cb, NULL);
	log_info("worker started", "inbox=%s mode=%s", log_q(wk.inbox),
	    wk.rf != NULL ? "inbox-file" : "exec");
	work_poll(NULL);
	rc = client_run();
	while (!TAILQ_EMPTY(&wk.jobs))
		job_free(TAILQ_FIRST(&wk.jobs));
	if (wk.poll != NULL)
		client_cancel(wk.poll);
	retry_cancel(&wk.poll_retry);
	event_del(&wk.resume);
	spawn_free();
	dedup_free(wk.dd);
	free(wk.poll_path);
out_client:
	record_close(wk.rf);
	client_free();
out:
	verifier_free(&wk.ver);
	return rc;
}
