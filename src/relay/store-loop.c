/*
 * store-loop.c: what nats.c calls.  Our event-loop adapter
 * (natsOptions_SetEventLoop) and the connection callbacks.
 *
 * CALLED BY NATS.C, ON ANY THREAD.  nats.c calls the adapter's attach and
 * detach from its own threads (connect, reconnect) as well as from ours,
 * and the connection callbacks always from its own.  So nothing here
 * touches relay state: the adapter touches only its own struct nloop and
 * libevent's event calls, which libevent's thread locking makes safe
 * (store_global_init turns it on), and each connection callback posts one
 * item to the bridge and returns (its handler, store_conn_event, runs on
 * the loop).  Read and write removals use event_del_noblock because
 * nats.c may hold its connection lock when it asks.  The one exception is
 * nloop_io_cb, libevent's callback on the loop thread, which hands the
 * socket to nats.c and then polls.
 *
 * Why our own adapter rather than nats.c's adapters/libevent.h: the same
 * contract, but a read on the socket is followed at once by store_poll(),
 * in the same callback, so every acknowledgement and message nats.c has
 * just parsed is handled without waiting for another loop iteration.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "store-int.h"
#include "util.h"

struct nloop {
	natsConnection		*nc;
	struct event_base	*base;
	struct event		*read;
	struct event		*write;
};

/* The socket is readable or writable.  Loop thread. */
static void
nloop_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nloop	*nl = arg;

	(void)fd;
	if (what & EV_READ) {
		natsConnection_ProcessReadEvent(nl->nc);
		store_poll();
	}
	if (what & EV_WRITE)
		natsConnection_ProcessWriteEvent(nl->nc);
}

/* Start or stop polling for reads.  Any thread. */
static natsStatus
nloop_read(void *userData, bool add)
{
	struct nloop	*nl = userData;

	return (add ? event_add(nl->read, NULL) :
	    event_del_noblock(nl->read)) == 0 ? NATS_OK : NATS_ERR;
}

/* Start or stop polling for writes.  Any thread. */
static natsStatus
nloop_write(void *userData, bool add)
{
	struct nloop	*nl = userData;

	return (add ? event_add(nl->write, NULL) :
	    event_del_noblock(nl->write)) == 0 ? NATS_OK : NATS_ERR;
}

/* A (re)connected socket: new events for it, reading at once.  Any thread. */
static natsStatus
nloop_attach(void **userData, void *loop, natsConnection *nc, natsSock sock)
{
	struct nloop	*nl = *userData;

	if (nl == NULL) {
		if ((nl = calloc(1, sizeof(*nl))) == NULL)
			return NATS_NO_MEMORY;
		nl->nc = nc;
		nl->base = loop;
	} else {
		/* A reconnect: the old socket is gone. */
		if (nl->read != NULL)
			event_free(nl->read);
		if (nl->write != NULL)
			event_free(nl->write);
	}
	nl->read = event_new(nl->base, sock, EV_READ | EV_PERSIST,
	    nloop_io_cb, nl);
	nl->write = event_new(nl->base, sock, EV_WRITE | EV_PERSIST,
	    nloop_io_cb, nl);
	*userData = nl;
	if (nl->read == NULL || nl->write == NULL)
		return NATS_NO_MEMORY;
	return nloop_read(nl, true);
}

/* The connection is closed for good: free the events.  Any thread. */
static natsStatus
nloop_detach(void *userData)
{
	struct nloop	*nl = userData;

	if (nl->read != NULL)
		event_free(nl->read);
	if (nl->write != NULL)
		event_free(nl->write);
	free(nl);
	return NATS_OK;
}

/* Post a connection event to the loop.  Runs on a nats.c thread. */
void
store_loop_post(enum store_conn_what what)
{
	struct store_conn_item	*ci = xcalloc(1, sizeof(*ci));

	ci->item.fn = store_conn_event;
	ci->what = what;
	bridge_post(&ci->item);
}

/* Runs on a nats.c thread. */
static void
nloop_connected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_loop_post(STORE_CONNECTED);
}

/* Runs on a nats.c thread. */
static void
nloop_disconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_loop_post(STORE_DISCONNECTED);
}

/* Runs on a nats.c thread. */
static void
nloop_reconnected_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_loop_post(STORE_RECONNECTED);
}

/* Runs on a nats.c thread. */
static void
nloop_closed_cb(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
	store_loop_post(STORE_CLOSED);
}

/* Install the adapter and the callbacks on opts.  Main thread, at start. */
void
store_loop_options(natsOptions *opts, struct event_base *base)
{
	store_nats_check(natsOptions_SetEventLoop(opts, base, nloop_attach,
	    nloop_read, nloop_write, nloop_detach), "event loop");
	store_nats_check(natsOptions_SetDisconnectedCB(opts,
	    nloop_disconnected_cb, NULL), "disconnected");
	store_nats_check(natsOptions_SetReconnectedCB(opts,
	    nloop_reconnected_cb, NULL), "reconnected");
	store_nats_check(natsOptions_SetClosedCB(opts, nloop_closed_cb, NULL),
	    "closed");
	/* Start even when NATS is down; /healthz and POST say 503 meanwhile. */
	store_nats_check(natsOptions_SetRetryOnFailedConnect(opts, true,
	    nloop_connected_cb, NULL), "retry");
}
