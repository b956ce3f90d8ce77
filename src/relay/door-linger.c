/*
 * door-linger.c: a refused connection's descriptor lingers, and a burst
 * of closes gives its memory back (door-linger.h).  Loop thread only.
 *
 * Lingering: the descriptor is kept, its sending side shut, and what the
 * client still sends is read and dropped until it stops or LINGER_MS
 * pass.  The descriptor is taken from the bufferevent (set to -1: freeing
 * it closes nothing) rather than duplicated: the loop's epoll applies its
 * changes late (main.c), and a duplicate would keep the closed original's
 * registration alive.  Lingering descriptors are outside the connection
 * cap, so at most LINGER_MAX linger; beyond, a refused connection is
 * closed at once.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/util.h>

#include "door-linger.h"
#include "evmem.h"
#include "log.h"
#include "util.h"

#define LINGER_MS		2000	/* reading after a refusal */
#define LINGER_POLL_MS		100	/* looking at the time meanwhile */
#define LINGER_MAX		1024	/* descriptors lingering at once */
/* At most a sixteenth of the descriptor limit lingers. */
#define LINGER_SHARE		16
#define TRIM_AFTER		64	/* closed connections, then malloc_trim */
#define TRIM_DELAY_MS		1000

static struct event	 door_trim_ev;	/* after a burst of closes */
static int		 door_closed;	/* since the last trim */
static int		 door_lingering;	/* outside the cap: bounded */
static int		 door_linger_cap = LINGER_MAX;

/* After a refusal: read and drop for a while, then close. */
struct door_linger {
	struct event	 ev;
	long long	 until;
};

/* The one end of a lingering descriptor: closed, why logged once. */
static void
door_linger_close(struct door_linger *l, const char *why)
{
	log_debug("lingering connection closed", "reason=%s", log_q(why));
	event_del(&l->ev);
	evutil_closesocket(event_get_fd(&l->ev));
	free(l);
	door_lingering--;
}

static void
door_linger_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct door_linger	*l = arg;
	char		 buf[4096];
	ssize_t		 n;

	(void)ev;
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (now_ms() < l->until)
			return;
		door_linger_close(l, "linger time over");
	} else
		door_linger_close(l, n == 0 ? "client closed" : "read error");
}

/*
 * A burst of connections is over: give back to the system what their
 * buffers held.  glibc keeps freed memory in its heaps (a burst of 2,000
 * unfinished 15 KB heads left 14-35 MiB behind after every connection was
 * closed); malloc_trim returns the free pages, also inside the heap.  Its
 * cost (a walk over the heap, well under a millisecond at this size) is
 * paid at most once a second and only after TRIM_AFTER closes.
 */
static void
door_trim_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (door_closed < TRIM_AFTER)
		return;
	door_closed = 0;
	evmem_release();	/* libevent's recycled blocks too */
	malloc_trim(0);
}

/* Count a close; see door-linger.h. */
void
door_trim_later(void)
{
	struct timeval	 tv = { TRIM_DELAY_MS / 1000,
	    (TRIM_DELAY_MS % 1000) * 1000 };

	if (++door_closed >= TRIM_AFTER && !evtimer_pending(&door_trim_ev,
	    NULL))
		evtimer_add(&door_trim_ev, &tv);
}

/* The trim timer; see door-linger.h. */
void
door_linger_init(struct event_base *base)
{
	evtimer_assign(&door_trim_ev, base, door_trim_cb, NULL);
}

/* Fit the lingering bound to the descriptor limit; see door-linger.h. */
void
door_linger_fit(long long nofile)
{
	long long	 n = nofile / LINGER_SHARE;

	door_linger_cap = n < LINGER_MAX ? (int)n : LINGER_MAX;
}

/* Descriptors that may linger at once; see door-linger.h. */
int
door_linger_max(void)
{
	return door_linger_cap;
}

/* Linger on a refused connection's descriptor; see door-linger.h. */
void
door_linger(struct event_base *base, struct bufferevent *bev)
{
	struct door_linger	*l;
	evutil_socket_t		 fd;
	struct timeval		 tv = { LINGER_POLL_MS / 1000,
	    (LINGER_POLL_MS % 1000) * 1000 };

	if (door_lingering < door_linger_cap &&
	    (fd = bufferevent_getfd(bev)) != -1 &&
	    bufferevent_setfd(bev, -1) == 0) {
		door_lingering++;
		l = xcalloc(1, sizeof(*l));
		l->until = now_ms() + LINGER_MS;
		shutdown(fd, SHUT_WR);
		event_assign(&l->ev, base, fd, EV_READ | EV_PERSIST,
		    door_linger_cb, l);
		event_add(&l->ev, &tv);
	}
}
