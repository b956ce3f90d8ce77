/*
 * door.c: the front door (SPEC 13): a connection's life through it.  Loop
 * thread only.
 *
 * libevent 2.1's evhttp has no connection cap and no hook between a
 * request's bytes and its parser, and a filter bufferevent cannot sit
 * under it (its ctrl does not pass the accepted descriptor on).  So the
 * door stands in evhttp's callbacks instead: evhttp_set_bevcb makes each
 * connection's socket bufferevent here, and on the loop's next turn,
 * before anything can be read, the door takes over its callbacks
 * (bufferevent_getcb, keeping evhttp's) and its close (the
 * evhttp_connection is their argument).  What the socket gives goes into
 * the door's own buffer; evhttp's input gets only what the door lets
 * through (door-scan.c: a head held until it is whole and read, a body
 * followed to its end, a refusal answered by the door itself), and
 * evhttp's read callback is called by the door.  A refused connection's
 * descriptor lingers a little (door-linger.c), so the answer is not lost
 * to a reset while the client still sends.
 *
 * One request at a time (nginx, HAProxy): once a request's last byte is
 * through, evhttp holds it ("handed") and the door lets nothing more
 * through until evhttp's answer is written and evhttp reads again.
 * evhttp 2.1 cannot take bytes meanwhile (its read callback exits the
 * process in its writing state), and a connection then costs one request
 * and one answer whatever its client pipelines: what comes meanwhile waits
 * in the door's buffer, and past DOOR_AHEAD_MAX the socket is not read.
 *
 * The request deadline runs from a request's first byte to its last, so a
 * client trickling bytes cannot hold a connection longer.  At the cap, the
 * connection idle longest (no request begun, none held by evhttp) is
 * closed to admit the new one; with none idle, the new one is closed at
 * once (door-idle.c).
 */
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <event2/util.h>
#include <openssl/ssl.h>

#include "config.h"
#include "door-head.h"
#include "door-idle.h"
#include "door-int.h"
#include "door-linger.h"
#include "door-scan.h"
#include "door.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/*
 * Descriptors the relay itself keeps open besides connections: NATS (a
 * connection or two), the listeners, DNS, the log and files it reads, and
 * room for what a libevent or nats.c call opens for a moment.
 */
#define DOOR_OWN_FDS		64
/* The cap is never lowered below this, however few descriptors there are. */
#define DOOR_MIN_CONNECTIONS	16
/*
 * Bytes read ahead while evhttp holds a request (waiting for its answer,
 * or writing it): evhttp reads while it writes, to see a close, and a
 * client that pipelines without reading its answers would otherwise grow
 * the door's buffer without end.  Past this the socket is not read until
 * the answer is out; TCP holds the rest back at the client.  A head's
 * worth: the next request can begin at once when the answer is out.
 */
#define DOOR_AHEAD_MAX		DOOR_HEAD_MAX

static struct door	 doors[2];

/*
 * evhttp holds a whole request: nothing more goes through until its answer
 * is written.  door_output_cb sees the answer begin, the hook then passes
 * evhttp's write callback on, and door_write_cb sees the answer out.
 */
static void
door_hand(struct dconn *c)
{
	c->handed = 1;
	evbuffer_cb_set_flags(bufferevent_get_output(c->bev), c->outcb,
	    EVBUFFER_CB_ENABLED);
}

/*
 * The monotonic clock in nanoseconds, what deadlines are kept in: one cut
 * to the millisecond drops the start's fraction of a millisecond, and the
 * deadline could then pass up to 1 ms short of its length.
 */
static long long
door_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/*
 * A request began: its deadline runs.  The timer is not moved for every
 * request (an event_add and event_del per request cost a tenth of the
 * door's time): it stays armed, and when it fires early for a later
 * request it is armed again for what is left.
 */
static void
door_deadline_start(struct dconn *c)
{
	struct timeval	 tv = { c->d->cfg->request_timeout_seconds, 0 };

	if (c->busy)
		return;
	c->busy = 1;
	/*
	 * The moment the deadline runs from, by the log's clock; the close at
	 * the deadline is "connection closed" with the same peer_port.  The
	 * line is stamped before the clock is read for due, and the close
	 * after a reading at or past due: the two stamps are then at least
	 * the deadline apart (t-door, t-tls), as the log's CLOCK_REALTIME
	 * moves with CLOCK_MONOTONIC but for a step of the wall clock.
	 */
	log_debug("request deadline started", "control=%d peer_port=%u "
	    "seconds=%d", c->d->control, (unsigned)c->peer_port,
	    c->d->cfg->request_timeout_seconds);
	c->due = door_now_ns() + tv.tv_sec * NS_PER_S;
	if (!evtimer_pending(&c->deadline, NULL))
		event_add(&c->deadline, &tv);
}

/* A request's first byte came; see door-int.h. */
void
door_begin(struct dconn *c)
{
	door_idle_leave(c);
	door_deadline_start(c);
}

/* The request's last byte went through; see door-int.h. */
void
door_end(struct dconn *c)
{
	c->busy = 0;
	c->st = D_HEAD;
	c->scanned = 0;
	door_hand(c);
}

/*
 * The door ends the connection: the event callback of whoever holds the
 * bufferevent's callbacks (evhttp's, or the door's, which passes what on
 * to evhttp's) fails it with what, evhttp frees it at once, and
 * door_closed_cb logs why and frees c.  c is gone when this returns.
 */
void
door_close(struct dconn *c, short what, const char *why)
{
	bufferevent_event_cb	 evcb;
	void			*evarg;

	c->why = why;
	bufferevent_getcb(c->bev, NULL, NULL, &evcb, &evarg);
	evcb(c->bev, what, evarg);
}

/*
 * Bytes came while evhttp holds a request (or writes its own answer):
 * they wait in raw, and past DOOR_AHEAD_MAX the socket is not read.
 * evhttp enables reading again when its answer is out (and it is off
 * meanwhile but while evhttp writes, to see a close).
 */
static void
door_ahead(struct dconn *c)
{
	if (evbuffer_get_length(c->raw) - c->off > DOOR_AHEAD_MAX)
		bufferevent_disable(c->bev, EV_READ);
}

/*
 * Whatever reads the socket (a socket or an OpenSSL bufferevent, whoever
 * holds its callbacks) adds to evhttp's input, and this runs at once:
 * the fresh bytes (the end of the input) go to raw, so evhttp's parser
 * never sees a byte the door has not let through.  They are looked at by
 * door_read_cb: now when it is the read callback, else once the door
 * holds the callbacks again (the hook, at once when evhttp reads again,
 * or when the answer evhttp is writing is out).
 */
static void	door_read_cb(struct bufferevent *, void *);

static void
door_input_cb(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct dconn		*c = arg;
	size_t			 keep;
	bufferevent_data_cb	 rd;

	if (c->adding || info->n_added == 0)
		return;
	keep = evbuffer_get_length(in) - info->n_added;
	c->adding = 1;
	if (keep > 0)
		evbuffer_remove_buffer(in, c->tmp, keep);
	evbuffer_add_buffer(c->raw, in);
	if (keep > 0) {
		if (!c->tls)
			evbuffer_unfreeze(in, 0);
		evbuffer_add_buffer(in, c->tmp);
		if (!c->tls)
			evbuffer_freeze(in, 0);
	}
	c->adding = 0;
	if (c->st == D_REFUSED) {
		/* Nothing after a refusal is a request: read and dropped. */
		evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
		return;
	}
	bufferevent_getcb(c->bev, &rd, NULL, NULL, NULL);
	if (rd == door_read_cb)
		return;
	/* evhttp writes an answer: held until it is out. */
	if (rd == NULL)
		door_ahead(c);
	event_active(&c->hook, EV_TIMEOUT, 0);
}

/*
 * evhttp began an answer (it adds it whole before writing): the hook
 * takes its write callback over, to see when the answer is out.
 */
static void
door_output_cb(struct evbuffer *out, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct dconn	*c = arg;

	(void)info;
	evbuffer_cb_clear_flags(out, c->outcb, EVBUFFER_CB_ENABLED);
	event_active(&c->hook, EV_TIMEOUT, 0);
}

/*
 * raw has bytes: through the door, then evhttp reads what it was let
 * have.  Nothing goes through while evhttp holds a request: its read
 * callback must not run then (libevent 2.1 ends the process on it).
 *
 * The connection is taken from the bufferevent, not from arg: evhttp's
 * deferred read (after an answer, when input is left) calls the read
 * callback with its own evhttp_connection as the argument.
 */
static void
door_read_cb(struct bufferevent *bev, void *arg)
{
	struct dconn	*c;
	struct evbuffer	*in = bufferevent_get_input(bev);
	int		 gone = 0;

	bufferevent_getcb(bev, NULL, NULL, NULL, &arg);
	c = arg;
	if (c->handed) {
		if (c->st == D_REFUSED)
			evbuffer_drain(c->raw, evbuffer_get_length(c->raw));
		else
			door_ahead(c);
		return;
	}
	if (door_process(c) == -1) {
		/* Broken chunked framing, mid-body: nothing to answer. */
		door_close(c, BEV_EVENT_READING | BEV_EVENT_ERROR,
		    "broken chunked framing");
		return;
	}
	if (evbuffer_get_length(in) == 0 || c->h_read == NULL)
		goto out;
	/*
	 * evhttp's parser drains the input a line at a time, some twenty
	 * times a request, and libevent calls every callback on the buffer
	 * for each drain.  On a socket bufferevent nothing reads the socket
	 * while evhttp parses, so door_input_cb has nothing to take and is
	 * off the buffer meanwhile.  (An OpenSSL bufferevent may read at once
	 * when evhttp enables reading: there it stays.)  evhttp may close the
	 * connection inside, freeing c: gone says so.
	 */
	c->gone = &gone;
	if (!c->tls) {
		evbuffer_remove_cb_entry(in, c->incb);
		c->incb = NULL;
	}
	c->h_read(bev, c->h_arg);
	if (gone)
		return;
	c->gone = NULL;
	if (c->incb == NULL)
		c->incb = evbuffer_add_cb(in, door_input_cb, c);
out:
	if (c->handed && c->st != D_REFUSED)
		door_ahead(c);
}

/*
 * The socket took what was written.  While evhttp writes an answer this
 * is the door's, passing it on: when evhttp then reads again (its
 * answer is out; it set its callbacks in evhttp_start_read_), the hook
 * goes on with the next request.  An OpenSSL bufferevent calls it
 * deferred, after the output is empty: only here is the answer surely
 * out.  evhttp may close the connection inside, freeing c.
 */
static void
door_write_cb(struct bufferevent *bev, void *arg)
{
	struct dconn		*c = arg;
	bufferevent_data_cb	 rd;
	int			 gone = 0, *outer = c->gone;

	if (c->st == D_REFUSED) {
		/* The door's own answer is out: the connection ends. */
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			door_close(c, BEV_EVENT_WRITING | BEV_EVENT_EOF,
			    "refusal answered");
		return;
	}
	if (c->h_write == NULL)
		return;
	c->gone = &gone;
	c->h_write(bev, c->h_arg);
	if (gone) {
		if (outer != NULL)
			*outer = 1;
		return;
	}
	c->gone = outer;
	bufferevent_getcb(bev, &rd, NULL, NULL, NULL);
	if (rd != NULL && rd != door_read_cb)
		event_active(&c->hook, EV_TIMEOUT, 0);
}

static void
door_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct dconn	*c = arg;

	/*
	 * The TLS handshake is over before any request byte: the deadline
	 * that covered it stops, and the first request's byte starts its
	 * own (door_read_cb).  Until then the connection is idle, under
	 * TREATY_RELAY_HTTP_TIMEOUT_SECONDS as a plain one, not a slow
	 * request: a client may open its connections before it needs them.
	 */
	if ((what & BEV_EVENT_CONNECTED) && c->tls && c->busy &&
	    c->st == D_HEAD && c->scanned == 0 &&
	    evbuffer_get_length(c->raw) == 0) {
		c->busy = 0;
		door_idle_enter(c);
	}
	c->h_event(bev, what, c->h_arg);
}

/*
 * The deadline timer: the request's deadline passed before its last byte
 * (close), or the timer was armed for an earlier request (arm it again for
 * what is left, or leave it off between requests).  A request's time runs
 * only while the door reads it: one that waits behind its predecessor's
 * answer begins when that answer is out.
 */
static void
door_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct dconn		*c = arg;
	long long		 left = c->due - door_now_ns();
	struct timeval		 tv;

	(void)fd;
	(void)ev;
	if (!c->busy)
		return;
	if (left > 0) {
		/* What is left, rounded up to a timeval's microsecond. */
		left = (left + NS_PER_US - 1) / NS_PER_US;
		tv.tv_sec = left / US_PER_S;
		tv.tv_usec = left % US_PER_S;
		event_add(&c->deadline, &tv);
		return;
	}
	metrics_door(DOOR_TIMED_OUT);
	if (log_refused_ok())
		log_info("request deadline passed; connection closed",
		    "seconds=%d control=%d", c->d->cfg->request_timeout_seconds,
		    c->d->control);
	door_close(c, BEV_EVENT_READING | BEV_EVENT_TIMEOUT,
	    "request deadline");
}

/*
 * The one end of every door connection: evhttp frees it (this is its
 * close callback), after door_close or on its own (the client left, an
 * answer with Connection: close, the idle timeout, shutdown).  The reason
 * is logged once, then everything the door holds is freed.  A refused
 * connection lingers (door-linger.c), so that the kernel does not answer
 * what the client still sends with a reset that could destroy the answer.
 */
static void
door_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct dconn	*c = arg;

	(void)evcon;
	if (c->st == D_REFUSED)
		door_linger(c->d->base, c->bev);
	door_idle_leave(c);
	event_del(&c->hook);
	event_del(&c->deadline);
	if (c->gone != NULL)
		*c->gone = 1;
	if (c->incb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_input(c->bev),
		    c->incb);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->outcb);
	evbuffer_free(c->raw);
	evbuffer_free(c->tmp);
	c->d->nconns--;
	door_trim_later();
	if (!c->d->control)
		metrics_gauge(GAUGE_CONNECTIONS, c->d->nconns);
	log_debug("connection closed", "control=%d reason=%s peer_port=%u",
	    c->d->control, log_q(c->why != NULL ? c->why : c->st == D_REFUSED ?
	    "refusal answered" : "ended by evhttp"), (unsigned)c->peer_port);
	free(c);
}

/*
 * The client's port, for the connection's debug lines: which "request
 * deadline started" a "connection closed" ends.  evhttp took it from
 * accept's address; its address string is left alone.
 */
static void
door_peer(struct dconn *c)
{
	char	*addr;

	evhttp_connection_get_peer(c->h_arg, &addr, &c->peer_port);
}

/*
 * The loop's next turn after the connection was made (evhttp has set its
 * callbacks, nothing has been read yet), again after each answer (evhttp
 * set them again to read the next request: the request it held is done),
 * and whenever bytes came while evhttp held the callbacks: take them over,
 * and go on with what waits in raw.  A connection over the cap is closed.
 */
void
door_hook_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct dconn		*c = arg;
	bufferevent_data_cb	 rd, wr;

	(void)fd;
	(void)ev;
	bufferevent_getcb(c->bev, &rd, &wr, NULL, NULL);
	if (rd == NULL) {
		/*
		 * evhttp writes an answer (its own callbacks, reading off):
		 * the door passes them on, and door_write_cb sees it end.
		 */
		if (c->hooked && wr != door_write_cb)
			bufferevent_setcb(c->bev, NULL, door_write_cb,
			    door_event_cb, c);
		return;
	}
	if (rd != door_read_cb) {
		bufferevent_getcb(c->bev, &c->h_read, &c->h_write,
		    &c->h_event, &c->h_arg);
		if (!c->hooked) {
			evhttp_connection_set_closecb(c->h_arg, door_closed_cb,
			    c);
			door_peer(c);
		}
		bufferevent_setcb(c->bev, door_read_cb, door_write_cb,
		    door_event_cb, c);
		if (c->refused) {
			metrics_door(DOOR_REFUSED);
			door_close(c, BEV_EVENT_READING | BEV_EVENT_EOF,
			    "over the connection cap");
			return;
		}
		/* The TLS handshake counts against the first deadline. */
		if (!c->hooked && c->tls)
			door_deadline_start(c);
		c->hooked = 1;
		/*
		 * evhttp sets its callbacks after a request only once its
		 * answer is out (evhttp_start_read_): the next may go on.
		 */
		if (c->st != D_REFUSED)
			c->handed = 0;
	}
	if (c->handed)
		return;
	if (evbuffer_get_length(c->raw) > 0)
		door_read_cb(c->bev, c);
	else
		door_idle_enter(c);
}

/* The connections one listener may have. */
static int
door_max(const struct door *d)
{
	if (d->control)
		return DOOR_CONTROL_MAX;
	return d->max > 0 && d->max < d->cfg->max_connections ? d->max :
	    d->cfg->max_connections;
}

/* evhttp_set_bevcb: a new connection's bufferevent. */
static struct bufferevent *
door_bevcb(struct event_base *base, void *arg)
{
	struct door	*d = arg;
	struct dconn	*c = xcalloc(1, sizeof(*c));

	c->d = d;
	if (!d->control && d->cfg->tls_ctx != NULL) {
		/*
		 * HTTPS: evhttp gives the descriptor with bufferevent_setfd,
		 * and the handshake starts then; the SSL holds its own
		 * reference to the context a reload may replace.
		 */
		SSL	*ssl = SSL_new(d->cfg->tls_ctx);

		if (ssl == NULL)
			fatalx("cannot make a TLS connection", NULL);
		c->bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
		if (c->bev != NULL)
			bufferevent_openssl_set_allow_dirty_shutdown(c->bev,
			    1);
		c->tls = 1;
	} else
		c->bev = bufferevent_socket_new(base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("cannot make a bufferevent", NULL);
	c->raw = evbuffer_new();
	c->tmp = evbuffer_new();
	c->incb = evbuffer_add_cb(bufferevent_get_input(c->bev), door_input_cb,
	    c);
	c->outcb = evbuffer_add_cb(bufferevent_get_output(c->bev),
	    door_output_cb, c);
	evbuffer_cb_clear_flags(bufferevent_get_output(c->bev), c->outcb,
	    EVBUFFER_CB_ENABLED);
	c->refused = d->nconns >= door_max(d) && !door_evict(d);
	d->nconns++;
	if (!d->control)
		metrics_gauge(GAUGE_CONNECTIONS, d->nconns);
	evtimer_assign(&c->deadline, base, door_deadline_cb, c);
	event_assign(&c->hook, base, -1, 0, door_hook_cb, c);
	event_active(&c->hook, EV_TIMEOUT, 0);
	if (!c->refused)
		door_idle_enter(c);
	return c->bev;
}

/* The trim timer; see door.h. */
void
door_init(struct event_base *base)
{
	door_linger_init(base);
}

/* Put the door on a server; see door.h. */
void
door_attach(struct evhttp *http, struct event_base *base,
    const struct config *cfg, int control, const struct route_def *routes)
{
	struct door	*d = &doors[control ? 1 : 0];

	d->base = base;
	d->cfg = cfg;
	d->routes = routes;
	d->control = control;
	TAILQ_INIT(&d->idle);
	evhttp_set_bevcb(http, door_bevcb, d);
}

/*
 * Descriptors the relay needs besides the main listener's connections:
 * the control listener's, the lingering refusals', NATS, DNS, listeners
 * and files (DOOR_OWN_FDS), and the push subscribers' deliveries (up to
 * maxInFlight connections each, in flight or kept), but at most half the
 * limit (nofile): a thousand subscribers of the API with 64 each would
 * otherwise leave the front door its minimum, though they are seldom all
 * busy at once.  Deliveries past what is left fail to connect and are
 * retried, as any failed attempt.  *push gets their sum.
 */
static long long
door_needs(const struct config *cfg, long long nofile, long long *push)
{
	long long	 n = DOOR_CONTROL_MAX + DOOR_OWN_FDS + door_linger_max();
	size_t		 i;

	*push = 0;
	for (i = 0; i < cfg->nsubscribers; i++)
		if (cfg->subscribers[i].kind == SUB_PUSH)
			*push += cfg->subscribers[i].max_in_flight;
	return n + (*push < nofile / 2 ? *push : nofile / 2);
}

/* Fit the cap to the descriptor limit; see door.h. */
void
door_fit(void)
{
	struct door	*d = &doors[0];
	struct rlimit	 rl;
	long long	 needs, room, push;
	int		 was = d->max;

	d->max = 0;
	if (d->cfg == NULL || getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY)
		goto out;
	door_linger_fit((long long)rl.rlim_cur);
	needs = door_needs(d->cfg, (long long)rl.rlim_cur, &push);
	if (push > (long long)rl.rlim_cur / 2 && !d->push_warned) {
		d->push_warned = 1;
		log_warnx("the push subscribers' deliveries could use more than "
		    "half the descriptor limit; half is kept for them, and a "
		    "delivery past it fails and is retried", "nofile=%llu "
		    "deliveries=%lld", (unsigned long long)rl.rlim_cur, push);
	} else if (push <= (long long)rl.rlim_cur / 2)
		d->push_warned = 0;
	room = (long long)rl.rlim_cur - needs;
	if (room >= d->cfg->max_connections)
		goto out;
	d->max = room > DOOR_MIN_CONNECTIONS ? (int)room :
	    DOOR_MIN_CONNECTIONS;
	if (d->max != was)
		log_warnx("the descriptor limit is below the connection cap "
		    "and what the relay needs besides; connection cap lowered",
		    "nofile=%llu max_connections=%d needs=%lld effective=%d",
		    (unsigned long long)rl.rlim_cur,
		    d->cfg->max_connections, needs, d->max);
out:
	metrics_gauge(GAUGE_CONNECTIONS_MAX, door_max(d));
}

/* The main listener's cap as it applies; see door.h. */
int
door_max_connections(void)
{
	return door_max(&doors[0]);
}

/* Connections open on the main listener. */
int
door_connections(void)
{
	return doors[0].nconns;
}
