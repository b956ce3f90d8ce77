/*
 * store-ask.c: core NATS messages between instances: the listening side
 * and the answers; see store-ask.h.  Loop thread only.
 *
 * The requests are core publishes, never stored: the subject must be
 * outside every stream's (WORK takes evt.>, AUDIT audit.>, the buckets
 * $KV.>).  The listener's subscription is polled like the others
 * (store_poll); nats.c subscribes it again after a reconnection.
 */
#include <stdlib.h>

#include "log.h"
#include "store-ask.h"
#include "store-int.h"
#include "util.h"

static struct {
	char		*subject;
	void		(*cb)(struct store_msg *);
} ask;

void
store_listen(const char *subject, void (*cb)(struct store_msg *))
{
	free(ask.subject);
	ask.subject = xstrdup(subject);
	ask.cb = cb;
}

/* store_init: the listener's subscription. */
void
store_ask_init(void)
{
	if (ask.subject != NULL)
		store_sub_sync(&store_polled.asks, ask.subject, NULL);
}

/* A request polled: to the listener. */
void
store_ask_take(natsMsg *m)
{
	if (ask.cb == NULL) {
		store_grave_add(m);
		return;
	}
	ask.cb(store_msg_wrap(m));
}

/* Shutdown, before the drain. */
void
store_ask_unsubscribe(void)
{
	if (store_polled.asks != NULL)
		natsSubscription_Unsubscribe(store_polled.asks);
}

/* After the loop. */
void
store_ask_destroy(void)
{
	natsSubscription_Destroy(store_polled.asks);
	store_polled.asks = NULL;
	free(ask.subject);
	ask.subject = NULL;
}

int
store_tell(const char *reply, const struct store_header *h, size_t nh,
    const void *data, size_t len)
{
	natsStatus	 s;

	if (store_conn.nc == NULL || !store_conn.connected ||
	    store_conn.closing ||
	    natsConnection_Buffered(store_conn.nc) > OUT_BUFFER_MAX)
		return -1;
	if ((s = store_core_publish(reply, NULL, h, nh, data, len)) != NATS_OK)
		log_warnx("cannot send an answer to another instance", "err=%s",
		    log_q(natsStatus_GetText(s)));
	return s == NATS_OK ? 0 : -1;
}

int
store_max_payload(void)
{
	return store_conn.max_payload;
}
