/*
 * store-pub.h: publishing to JetStream (store-pub.c): producers' events
 * into WORK, the relay's own records into AUDIT, each answered once
 * JetStream has acknowledged it.  Loop thread only.
 */
#ifndef STORE_PUB_H
#define STORE_PUB_H

#include <stddef.h>

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

/*
 * The relay's own subjects (drop records, store-drops.h; replays'
 * progress and ends, store-replay.h): no producer may publish there.  A
 * record a producer stored there would be told from the relay's (the
 * message id), but would still fill the scans of drop listings and
 * redrives, which are bounded.
 */
#define STORE_OWN_PREFIX	"audit.relay.treaty."

/* Called once per accepted publish, on the loop thread. */
typedef void (*store_publish_cb)(void *arg, enum store_result result,
    int duplicate);

/*
 * 1 when a message with these headers, Nats-Msg-Id msg_id and len bytes
 * of data fits the NATS server's max_payload (1 before it is known).
 */
int		 store_fits(const struct store_header *h, size_t nh,
		    const char *msg_id, size_t len);
/*
 * Whether n publishes may start now: STORE_OK, STORE_NOT_READY or
 * STORE_OVERLOAD (TREATY_RELAY_MAX_PENDING, or nats.c's unsent bytes);
 * a refusal counts n failed publishes.  store_publish asks it for 1; a
 * batch asks for all its events before it publishes any.
 */
enum store_result store_can_publish(size_t n);
/*
 * Count n publishes refused with res in the publish failure metrics,
 * under its cause (not ready, overload, or NATS).
 */
void		 store_count_refused(enum store_result res, size_t n);
/*
 * Publish data on subject with headers and Nats-Msg-Id msg_id.  Returns
 * STORE_OK when cb will be called later, exactly once; any other value is
 * the answer now and cb is never called.
 */
/*
 * A record that nobody waits for (SPEC 17's attempts): one publish with
 * no reply subject, so JetStream stores it and says nothing.  0, or -1
 * when it was not sent: NATS is away (a publish then would wait for
 * nats.c's reconnection), or nats.c holds more unsent bytes than it may.
 */
int	store_publish_nowait(const char *subject, const void *data,
	    size_t len);
/* The same, headers and no data (a KV purge marker at shutdown). */
int	store_publish_nowait_headers(const char *subject,
	    const struct store_header *h, size_t nh);
enum store_result store_publish(const char *subject,
		    const struct store_header *h, size_t nh, const char *msg_id,
		    const void *data, size_t len, store_publish_cb cb,
		    void *arg);

#endif
