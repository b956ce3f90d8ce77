/*
 * cmd-replay.c: treaty admin replay (SPEC 15), on the loop of client.c.
 *
 *   --subscriber NAME --since TIME [--dropped]
 *                 POST /v1/admin/subscribers/NAME/replay?since=TIME
 *                 [&dropped=true]: the replay's id and what it matched
 *   --status ID   GET /v1/admin/replays/ID: one report
 *   --wait        (with either) then GET every second until the replay
 *                 is done or cancelled: a progress bar redrawn on a
 *                 terminal, else a line whenever the figures change
 *   --cancel ID   DELETE /v1/admin/replays/ID
 *
 * Each request is retried like every admin request (no answer, 429,
 * 502-504, up to --attempts failures in a row; a success starts the count
 * again), after the backoff or the relay's Retry-After, whichever is
 * longer: a start refused 429 too_many_replays waits for a replay to end
 * (the relay's detail is said when the attempts are over).  Exit 0 when
 * the replay is done (or started, or cancelled by --cancel), 1 when it
 * was cancelled or the relay refuses for good (400, 401, 403, 404: an
 * unknown subscriber, a replay it does not know), 75 after the attempts
 * or at SIGINT or SIGTERM; the replay keeps running in the relay then,
 * and its id is on standard error to follow it again.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cli.h"
#include "log.h"
#include "util.h"

#define POLL_MS		1000	/* between one report and the next request */
#define RATE_SAMPLES	5	/* the rate is over the last 4 intervals */
#define BAR_WIDTH	20
#define ID_MAX		256	/* the longest replay id taken from the relay */

enum replay_step {
	STEP_START,		/* POST: start it */
	STEP_POLL,		/* GET: where it is */
	STEP_CANCEL		/* DELETE */
};

/* One report of the relay; -1 for a figure it does not know (null). */
struct figures {
	const char	*state;
	long long	 matched, delivered, dropped, remaining;
};

static struct {
	enum replay_step	 step;
	const char		*subscriber, *since;
	int			 dropped, wait, json, attempts;
	int			 perhaps;	/* a failed POST may have started one */
	char			*id;		/* the replay's, once known */
	char			 chosen[API_REPLAY_ID_LEN + 1];	/* ours */
	char			*path;		/* of the request of step */
	struct retry		 retry;
	struct client_req	*req;
	struct event		 tick;		/* the next poll */
	int			 tty;		/* a bar redrawn with \r */
	size_t			 drawn;		/* the bar's length on screen */
	char			 last[128];	/* the last figures reported */
	struct {
		long long	 ms, done;
	}			 s[RATE_SAMPLES];	/* oldest first */
	int			 ns;
} rp;

/* The line the bar is on ends (before anything else is written). */
static void
bar_end(void)
{
	if (rp.drawn > 0) {
		putchar('\n');
		fflush(stdout);
		rp.drawn = 0;
	}
}

/* Draw line over the bar, within the terminal's width. */
static void
bar_draw(const char *line)
{
	struct winsize	 ws;
	size_t		 n = strlen(line), cols = 0;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		cols = ws.ws_col - 1;
	if (cols > 0 && n > cols)
		n = cols;
	printf("\r%.*s", (int)n, line);
	if (n < rp.drawn)
		printf("%*s", (int)(rp.drawn - n), "");
	rp.drawn = n > rp.drawn ? n : rp.drawn;
	fflush(stdout);
}

/* Events handed out per second over the last polls, or -1 (not yet). */
static double
rate(void)
{
	long long	 ms;

	if (rp.ns < 2 || (ms = rp.s[rp.ns - 1].ms - rp.s[0].ms) <= 0)
		return -1;
	return (double)(rp.s[rp.ns - 1].done - rp.s[0].done) * 1000.0 /
	    (double)ms;
}

/* Remember how far the replay is (delivered and dropped) now. */
static void
sample(const struct figures *f)
{
	if (rp.ns == RATE_SAMPLES) {
		memmove(&rp.s[0], &rp.s[1], sizeof(rp.s[0]) * (RATE_SAMPLES - 1));
		rp.ns--;
	}
	rp.s[rp.ns].ms = now_ms();
	rp.s[rp.ns].done = f->delivered + f->dropped;
	rp.ns++;
}

/* ", 410/s" or ", 0.5/s" into buf, or "" before there is a rate. */
static const char *
rate_text(char *buf, size_t len)
{
	double	 r = rate();

	buf[0] = '\0';
	if (r >= 10)
		snprintf(buf, len, ", %.0f/s", r);
	else if (r >= 0)
		snprintf(buf, len, ", %.1f/s", r);
	return buf;
}

/*
 * The plain report: "replay ID: running 1200/5000 delivered, 3 dropped,
 * 3797 remaining, 410/s", without what the relay does not know.
 */
static void
plain_line(const struct figures *f, char *buf, size_t len)
{
	char	 m[32] = "", left[48] = "", r[32];

	if (f->matched >= 0)
		snprintf(m, sizeof(m), "/%lld", f->matched);
	if (f->remaining >= 0)
		snprintf(left, sizeof(left), ", %lld remaining", f->remaining);
	snprintf(buf, len, "replay %s: %s %lld%s delivered, %lld dropped%s%s",
	    rp.id, f->state, f->delivered, m, f->dropped, left,
	    rate_text(r, sizeof(r)));
}

/*
 * The bar: "[#########-----------]  45% 2250/5000 delivered, 3 dropped,
 * 410/s, ETA 0:07" (percentage and time left from what remains); the
 * plain line when the relay does not know what matched.
 */
static void
bar_line(const struct figures *f, char *buf, size_t len)
{
	char		 bar[BAR_WIDTH + 1], r[32], eta[32] = "";
	long long	 left, s;
	double		 v = rate();
	int		 pct, i;

	if (f->matched < 0) {
		plain_line(f, buf, len);
		return;
	}
	left = f->remaining >= 0 ? f->remaining :
	    f->matched - f->delivered - f->dropped;
	if (left < 0)
		left = 0;
	if (left > f->matched)
		left = f->matched;
	pct = f->matched == 0 ? 100 :
	    (int)((double)(f->matched - left) * 100 / (double)f->matched);
	if (strcmp(f->state, "done") == 0)
		pct = 100;
	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < pct * BAR_WIDTH / 100 ? '#' : '-';
	bar[BAR_WIDTH] = '\0';
	if (strcmp(f->state, "running") == 0 && v > 0) {
		s = (long long)((double)left / v + 0.5);
		if (s >= 3600)
			snprintf(eta, sizeof(eta), ", ETA %lld:%02lld:%02lld",
			    s / 3600, s / 60 % 60, s % 60);
		else
			snprintf(eta, sizeof(eta), ", ETA %lld:%02lld", s / 60,
			    s % 60);
	}
	snprintf(buf, len, "[%s] %3d%% %lld/%lld delivered, %lld dropped%s%s",
	    bar, pct, f->delivered, f->matched, f->dropped,
	    strcmp(f->state, "running") == 0 ? rate_text(r, sizeof(r)) : "",
	    eta);
}

/*
 * A figure of the answer: 0 with *v (-1 for null, or absent when it may
 * be), -1 when it is there but not a count.
 */
static int
count_of(yajl_val root, const char *key, int nullable, long long *v)
{
	const char	*path[] = { key, NULL };
	yajl_val	 x = yajl_tree_get(root, path, yajl_t_any);

	*v = -1;
	if (x == NULL || YAJL_IS_NULL(x))
		return nullable ? 0 : -1;
	if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 0)
		return -1;
	*v = YAJL_GET_INTEGER(x);
	return 0;
}

/* 1 when s is a replay id this client will print and put in a path. */
static int
id_ok(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n > ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	return 1;
}

/* The path of a replay's GET and DELETE. */
static void
replay_path(void)
{
	char	*e = admin_encode(rp.id);

	free(rp.path);
	rp.path = xjoin(API_ADMIN_PATH "replays", "/", e);
	free(e);
}

static void	replay_send(void *arg);

/* The answer to the POST: the id, what matched; then follow it maybe. */
static int
started(const char *body, size_t len)
{
	const char	*p_id[] = { "replay", NULL };
	yajl_val	 root, id;
	long long	 matched;

	if ((root = admin_parse(body, len)) == NULL) {
		cli_err("admin replay: replay %s was perhaps started",
		    rp.chosen);
		return EXIT_FAILED;
	}
	id = yajl_tree_get(root, p_id, yajl_t_string);
	if (id == NULL || !id_ok(YAJL_GET_STRING(id)) ||
	    count_of(root, "matched", 1, &matched) == -1) {
		cli_err("admin replay: the relay's answer is not a started "
		    "replay's: replay %s was perhaps started", rp.chosen);
		yajl_tree_free(root);
		return EXIT_FAILED;
	}
	rp.id = xstrdup(YAJL_GET_STRING(id));
	if (rp.json)
		admin_print_json(root);
	else if (matched >= 0)
		printf("replay %s started: %lld event%s matched\n", rp.id,
		    matched, matched == 1 ? "" : "s");
	else
		printf("replay %s started: matched not counted\n", rp.id);
	fflush(stdout);
	yajl_tree_free(root);
	if (!rp.wait)
		return EXIT_OK;
	rp.step = STEP_POLL;
	replay_path();
	replay_send(NULL);
	return -1;
}

/*
 * A report of GET /v1/admin/replays/ID: printed; the exit status when
 * that is the end, -1 when the next poll is due.
 */
static int
reported(const char *body, size_t len)
{
	const char	*p_state[] = { "state", NULL };
	struct figures	 f;
	yajl_val	 root, st;
	char		 line[512], key[sizeof(rp.last)];
	int		 end, changed, cancelled;
	struct timeval	 tv = { POLL_MS / 1000, POLL_MS % 1000 * 1000 };

	if ((root = admin_parse(body, len)) == NULL)
		return EXIT_FAILED;
	st = yajl_tree_get(root, p_state, yajl_t_string);
	f.state = st != NULL ? YAJL_GET_STRING(st) : "";
	if ((strcmp(f.state, "running") != 0 && strcmp(f.state, "done") != 0 &&
	    strcmp(f.state, "cancelled") != 0) ||
	    count_of(root, "matched", 1, &f.matched) == -1 ||
	    count_of(root, "delivered", 0, &f.delivered) == -1 ||
	    count_of(root, "dropped", 0, &f.dropped) == -1 ||
	    count_of(root, "remaining", 1, &f.remaining) == -1) {
		bar_end();
		cli_err("admin replay: the relay's answer is not a replay's "
		    "report");
		yajl_tree_free(root);
		return EXIT_FAILED;
	}
	end = !rp.wait || strcmp(f.state, "running") != 0;
	cancelled = strcmp(f.state, "cancelled") == 0;
	sample(&f);
	snprintf(key, sizeof(key), "%s %lld %lld %lld %lld", f.state,
	    f.matched, f.delivered, f.dropped, f.remaining);
	changed = strcmp(key, rp.last) != 0;
	memcpy(rp.last, key, sizeof(rp.last));
	if (rp.json) {
		if (changed)
			admin_print_json(root);
	} else if (rp.tty && rp.wait) {
		bar_line(&f, line, sizeof(line));
		bar_draw(line);
	} else if (changed) {
		plain_line(&f, line, sizeof(line));
		puts(line);
	}
	fflush(stdout);
	yajl_tree_free(root);
	if (!end) {
		evtimer_add(&rp.tick, &tv);
		return -1;
	}
	bar_end();
	if (cancelled) {
		cli_err("admin replay: replay %s was cancelled", rp.id);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* The answer to the request of this step. */
static void
replay_answer_cb(void *arg, const struct client_result *r)
{
	char	 what[768], who[ID_MAX + 32];
	int	 rc = -1;

	(void)arg;
	rp.req = NULL;
	if (r->status >= 200 && r->status <= 299) {
		retry_reset(&rp.retry);
		if (rp.step == STEP_START)
			rc = started(r->body, r->bodylen);
		else if (rp.step == STEP_POLL)
			rc = reported(r->body, r->bodylen);
		else {
			printf("replay %s cancelled\n", rp.id);
			rc = EXIT_OK;
		}
		if (rc != -1) {
			fflush(stdout);
			client_exit(rc);
		}
		return;
	}
	bar_end();
	/*
	 * Only an answer of 429 or 503 or no request at all says "not done",
	 * and not when the request went twice (a kept connection lost before
	 * its answer): the first copy may have started the replay.
	 */
	if (rp.step == STEP_START && !r->not_sent && (r->resent ||
	    (r->status != 429 && r->status != 503)))
		rp.perhaps = 1;
	if (client_transient(r)) {
		if ((int)rp.retry.attempt + 1 < rp.attempts) {
			retry_later(&rp.retry, r);
			return;
		}
		/* A 429 too_many_replays says how many replays may run. */
		client_why(r, what, sizeof(what));
		if (rp.step == STEP_START)
			cli_err("admin replay: still failing after %d attempts: "
			    "%s; %s%s%s", rp.attempts, what, rp.perhaps ?
			    "replay " : "no replay started", rp.perhaps ?
			    rp.chosen : "", rp.perhaps ? " was perhaps started" :
			    "");
		else if (rp.step == STEP_POLL)
			cli_err("admin replay: still failing after %d attempts: "
			    "%s; replay %s keeps running in the relay (follow it "
			    "with: treaty admin replay --status %s --wait)",
			    rp.attempts, what, rp.id, rp.id);
		else
			cli_err("admin replay: still failing after %d attempts: "
			    "%s; replay %s perhaps not cancelled", rp.attempts,
			    what, rp.id);
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	if (rp.step == STEP_START)
		snprintf(who, sizeof(who), "admin replay");
	else
		snprintf(who, sizeof(who), "admin replay %s", rp.id);
	admin_refused(who, r);
	/*
	 * A refusal (4xx) was the relay's answer to this very id: a replay
	 * started by an earlier attempt would have been answered 202.  A
	 * 500 or a connection lost is not such an answer.
	 */
	if (rp.step == STEP_START && rp.perhaps && (r->status < 400 ||
	    r->status >= 500))
		cli_err("admin replay: replay %s was perhaps started (see: "
		    "treaty admin replay --status %s)", rp.chosen, rp.chosen);
	client_exit(EXIT_FAILED);
}

/* Send the request of this step (again, after a backoff or a second). */
static void
replay_send(void *arg)
{
	static const enum outbound_method	 m[] = { OUTBOUND_POST,
	    OUTBOUND_GET, OUTBOUND_DELETE };

	(void)arg;
	rp.req = client_request(m[rp.step], rp.path, NULL, 0, NULL, 0,
	    replay_answer_cb, NULL);
}

/* The second between two polls is over. */
static void
replay_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	replay_send(arg);
}

/*
 * SIGINT or SIGTERM: stop; not done, as after the attempts.  A replay
 * runs in the relay whether this client follows it or not: say which.
 */
static void
replay_stop_cb(void *arg)
{
	int	 sent = rp.perhaps || !retry_pending(&rp.retry);

	(void)arg;
	if (rp.req != NULL)
		client_cancel(rp.req);
	rp.req = NULL;
	retry_cancel(&rp.retry);
	event_del(&rp.tick);
	bar_end();
	if (rp.step == STEP_START)
		cli_err("admin replay: stopped; %s%s%s", sent ? "replay " :
		    "no replay started", sent ? rp.chosen : "", sent ?
		    " was perhaps started" : "");
	else if (rp.step == STEP_POLL)
		cli_err("admin replay: stopped following; replay %s keeps "
		    "running in the relay (follow it with: treaty admin replay "
		    "--status %s --wait)", rp.id, rp.id);
	else
		cli_err("admin replay: stopped; replay %s perhaps not "
		    "cancelled", rp.id);
	client_exit(EXIT_TEMPFAIL);
}

/* The POST's path: the name in the path, since in the query, encoded. */
static void
start_path(void)
{
	char	*name = admin_encode(rp.subscriber);
	char	*t = admin_encode(rp.since);
	size_t	 len = strlen(API_ADMIN_PATH) + strlen(name) + strlen(t) + 64 +
		    API_REPLAY_ID_LEN;
	char	 id[API_REPLAY_ID_LEN + 1];

	/*
	 * The replay's id is chosen here, so that a POST sent again after
	 * a lost answer finds the replay the first one started instead of
	 * starting a second.
	 */
	if (random_hex(id, API_REPLAY_ID_LEN) == -1)
		fatalx("no random bytes for a replay id", NULL);
	memcpy(rp.chosen, id, sizeof(rp.chosen));
	rp.path = xmalloc(len);
	snprintf(rp.path, len, "%ssubscribers/%s/replay?since=%s%s&id=%s",
	    API_ADMIN_PATH, name, t, rp.dropped ? "&dropped=true" : "", id);
	free(name);
	free(t);
}

/* Usage: why, then the usage text. */
static int
replay_usage(const char *why)
{
	cli_err("admin replay: %s\n%s", why, ADMIN_USAGE);
	return EXIT_USAGE;
}

static const struct option replay_opts[] = {
	CLIENT_LONGOPTS,
	{ "subscriber", required_argument, NULL, 's' },
	{ "since", required_argument, NULL, 'S' },
	{ "dropped", no_argument, NULL, 'd' },
	{ "status", required_argument, NULL, 'i' },
	{ "cancel", required_argument, NULL, 'c' },
	{ "wait", no_argument, NULL, 'w' },
	{ "json", no_argument, NULL, 'j' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

int
cmd_admin_replay(int argc, char **argv)
{
	const char	*status = NULL, *cancel = NULL;
	char		 sincebuf[TREATY_RFC3339_MAX];
	int		 c, rc;

	memset(&rp, 0, sizeof(rp));
	rp.attempts = ADMIN_ATTEMPTS;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", replay_opts)) != -1) {
		switch (c) {
		case 's': rp.subscriber = optarg; break;
		case 'S': rp.since = optarg; break;
		case 'd': rp.dropped = 1; break;
		case 'i': status = optarg; break;
		case 'c': cancel = optarg; break;
		case 'w': rp.wait = 1; break;
		case 'j': rp.json = 1; break;
		case 'n':
			if ((rp.attempts = admin_attempts(optarg)) == -1)
				return EXIT_USAGE;
			break;
		case 'h':
			puts(ADMIN_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, ADMIN_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_err("admin replay: unexpected argument %s\n%s", argv[optind],
		    ADMIN_USAGE);
		return EXIT_USAGE;
	}
	switch ((rp.subscriber != NULL) + (status != NULL) + (cancel != NULL)) {
	case 0:
		return replay_usage("which? --subscriber NAME --since TIME, "
		    "--status ID or --cancel ID");
	case 1:
		break;
	default:
		return replay_usage("--subscriber, --status and --cancel do "
		    "not go together");
	}
	if (rp.subscriber != NULL) {
		if (rp.since == NULL)
			return replay_usage("--since TIME is required with "
			    "--subscriber");
		if (rp.subscriber[0] == '\0')
			return replay_usage("--subscriber: a name");
		/*
		 * A relative time is read once, here: a start sent again
		 * carries the same since with the same id.
		 */
		if (since_arg(rp.since, sincebuf, sizeof(sincebuf)) == -1) {
			cli_err("admin replay: --since must be "
			    SINCE_FORMS);
			return EXIT_USAGE;
		}
		rp.since = sincebuf;
		rp.step = STEP_START;
		start_path();
	} else {
		if (rp.since != NULL || rp.dropped)
			return replay_usage("--since and --dropped go with "
			    "--subscriber");
		if (cancel != NULL && (rp.wait || rp.json))
			return replay_usage("--wait and --json do not go with "
			    "--cancel");
		if (!id_ok(status != NULL ? status : cancel))
			return replay_usage("a replay id is printable, without "
			    "spaces");
		rp.id = xstrdup(status != NULL ? status : cancel);
		rp.step = status != NULL ? STEP_POLL : STEP_CANCEL;
		replay_path();
	}
	rp.tty = isatty(STDOUT_FILENO);
	if ((c = client_init()) != 0) {
		client_free();
		free(rp.path);
		free(rp.id);
		return c == -2 ? EXIT_USAGE : EXIT_FAILED;
	}
	retry_init(&rp.retry, "replay", replay_send, NULL);
	evtimer_assign(&rp.tick, client_base(), replay_tick_cb, NULL);
	client_on_stop(replay_stop_cb, NULL);
	replay_send(NULL);
	rc = client_run();
	bar_end();
	retry_cancel(&rp.retry);
	event_del(&rp.tick);
	client_free();
	free(rp.path);
	free(rp.id);
	return rc;
}
