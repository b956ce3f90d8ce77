/*
 * t-evmem.c: libevent's allocations through src/relay/evmem.c: buffers of
 * every class and larger ones, grown and shrunk (realloc), freed blocks
 * kept within the bound and given back by evmem_release, blocks made on
 * another thread freed on the loop thread and the other way round, and
 * an event base with many events (its maps grow by realloc).  Run under
 * valgrind and AddressSanitizer by make test: a header or copy off by a
 * byte shows there.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "../../src/relay/evmem.h"
#include "harness.h"

#define BOUND	(2 * 1024 * 1024)	/* well above what evmem keeps */

/* A buffer with n bytes of pattern c, read back whole. */
static int
buffer_round_trip(size_t n, int c)
{
	struct evbuffer	*b = evbuffer_new();
	unsigned char	*p, *q;
	size_t		 i;
	int		 ok;

	p = malloc(n);
	memset(p, c, n);
	for (i = 0; i < n; i += 997)
		evbuffer_add(b, p + i, n - i < 997 ? n - i : 997);
	q = evbuffer_pullup(b, -1);	/* one chain: a large block */
	ok = evbuffer_get_length(b) == n && (n == 0 || memcmp(p, q, n) == 0);
	evbuffer_free(b);
	free(p);
	return ok;
}

static void
sizes(void)
{
	static const size_t	 n[] = { 0, 1, 31, 32, 33, 500, 1024, 1025,
				    4096, 16384, 16385, 100000, 1 << 20 };
	size_t			 i;
	int			 round;

	for (round = 0; round < 3; round++)
		for (i = 0; i < sizeof(n) / sizeof(n[0]); i++)
			T_ASSERT(buffer_round_trip(n[i], 'a' + (int)i));
#ifdef __SANITIZE_ADDRESS__
	T_EQ_INT((int)evmem_held(), 0);	/* every free reaches the sanitizer */
#else
	T_ASSERT(evmem_held() > 0);
#endif
	T_ASSERT(evmem_held() <= BOUND);
	evmem_release();
	T_EQ_INT((int)evmem_held(), 0);
}

/* Many buffers alive at once, then freed: what is kept stays bounded. */
static void
bounded(void)
{
	struct evbuffer	*b[2000];
	size_t		 i;

	for (i = 0; i < 2000; i++) {
		b[i] = evbuffer_new();
		evbuffer_add_printf(b[i], "%zu %0*d", i, (int)(i % 3000), 7);
	}
	for (i = 0; i < 2000; i++)
		evbuffer_free(b[i]);
	T_ASSERT(evmem_held() <= BOUND);
	evmem_release();
	T_EQ_INT((int)evmem_held(), 0);
}

static void *
other_thread(void *arg)
{
	struct evbuffer	**b = arg;

	/* Free the loop thread's buffer, make one for it. */
	evbuffer_free(b[0]);
	b[1] = evbuffer_new();
	evbuffer_add(b[1], "from the other thread", 21);
	return NULL;
}

static void
threads(void)
{
	struct evbuffer	*b[2];
	pthread_t	 t;
	char		 got[32];

	b[0] = evbuffer_new();
	evbuffer_add(b[0], "loop", 4);
	T_EQ_INT(pthread_create(&t, NULL, other_thread, b), 0);
	pthread_join(t, NULL);
	T_EQ_INT((int)evbuffer_remove(b[1], got, sizeof(got)), 21);
	T_ASSERT(memcmp(got, "from the other thread", 21) == 0);
	evbuffer_free(b[1]);
}

static void
nothing_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

/* 300 descriptors' events: the base's maps grow (realloc) and shrink. */
static void
many_events(void)
{
	struct event_base	*base = event_base_new();
	struct event		*ev[300];
	int			 fds[150][2], i;

	T_ASSERT(base != NULL);
	for (i = 0; i < 150; i++) {
		T_EQ_INT(pipe(fds[i]), 0);
		ev[2 * i] = event_new(base, fds[i][0], EV_READ | EV_PERSIST,
		    nothing_cb, NULL);
		ev[2 * i + 1] = event_new(base, fds[i][1], EV_WRITE,
		    nothing_cb, NULL);
		event_add(ev[2 * i], NULL);
		event_add(ev[2 * i + 1], NULL);
	}
	T_EQ_INT(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	for (i = 0; i < 300; i++)
		event_free(ev[i]);
	for (i = 0; i < 150; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	event_base_free(base);
}

/* What libevent returns for the caller to free goes back through evmem. */
static void
returned(void)
{
	char	*s = evhttp_uridecode("a%20b", 0, NULL);

	T_ASSERT(s != NULL && strcmp(s, "a b") == 0);
	evmem_free_returned(s);
	evmem_free_returned(NULL);
}

/*
 * A burst of small blocks (the header names and values of many requests
 * ended in one turn of the loop) is kept whole for the next turn: 3,000
 * of the smallest class, where 256 a class kept an eleventh of them.
 */
static void
small_burst(void)
{
	struct evkeyvalq	 h;
	size_t			 before;
	int			 i;

	evmem_release();
	TAILQ_INIT(&h);
	for (i = 0; i < 1500; i++)
		T_EQ_INT(evhttp_add_header(&h, "k", "v"), 0);
	before = evmem_held();
	evhttp_clear_headers(&h);
#ifdef __SANITIZE_ADDRESS__
	T_EQ_INT((int)(evmem_held() - before), 0);
#else
	T_ASSERT(evmem_held() - before >= 3000 * 16);
#endif
	T_ASSERT(evmem_held() <= BOUND);
	evmem_release();
}

static const struct t_case cases[] = {
	{ "buffers of every size", sizes },
	{ "what is kept is bounded", bounded },
	{ "blocks cross threads", threads },
	{ "an event base's maps grow", many_events },
	{ "libevent's returned strings", returned },
	{ "a burst of small blocks is kept", small_burst },
};

int
main(void)
{
	int	 rc;

	evmem_install();
	rc = t_run("evmem", cases, T_NCASES(cases)) ? 1 : 0;
	evmem_release();
	return (rc);
}
