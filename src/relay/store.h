/*
 * store.h: the JetStream side: connection, streams, asynchronous publish.
 * Loop thread only (store.c itself takes care of nats.c's threads).
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>

#include "metrics.h"

struct event_base;
struct config;


enum store_result {
	STORE_OK,		/* stored (or a duplicate of a stored event) */
	STORE_FAILED,		/* JetStream refused, or NATS failed */
	STORE_TIMEOUT,		/* no acknowledgement in time */
	STORE_NOT_READY,	/* not connected, or streams not ready */
	STORE_OVERLOAD,		/* too many publishes in flight */
	STORE_TOO_LARGE		/* over the server's max_payload */
};

struct store_header {
	const char	*key;
	const char	*value;
};

/* Called once per accepted publish, on the loop thread. */
typedef void (*store_publish_cb)(void *arg, enum store_result result,
    int duplicate);

/* Connect (or start connecting in the background) and arm the timers. */
void		 store_init(struct event_base *base, const struct config *cfg);
/*
 * Publish data on subject with headers and Nats-Msg-Id msg_id.  Returns
 * STORE_OK when cb will be called later, exactly once; any other value is
 * the answer now and cb is never called.
 */
enum store_result store_publish(const char *subject,
		    const struct store_header *h, size_t nh, const char *msg_id,
		    const void *data, size_t len, store_publish_cb cb, void *arg);
/* 1 when connected to NATS and both streams are ready. */
int		 store_ready(void);
int		 store_connected(void);
int		 store_streams_ready(void);
/* Publishes waiting for an acknowledgement. */
int		 store_in_flight(void);
/* Fail (STORE_FAILED) every publish still waiting.  Shutdown only. */
void		 store_fail_all(void);
/*
 * Drain and close the NATS connection; done() runs on the loop thread
 * when it is closed (or the drain timed out).
 */
void		 store_drain(void (*done)(void));
/*
 * Teardown after the loop has stopped, in this order (main.c):
 * store_close, bridge_stop_worker, store_destroy, bridge_free,
 * store_free_tables.
 */
void		 store_close(void);
void		 store_destroy(void);
void		 store_free_tables(void);
/* Process-wide set-up for nats.c and libevent threads: before event_base_new. */
void		 store_global_init(void);

#endif
