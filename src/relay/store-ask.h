/*
 * store-ask.h: core NATS messages between instances, not stored
 * (store-ask.c): a request another instance answers (store_ask, in
 * store-req.c with the other requests), the listening side, and the
 * answers.  The ordered inbox's forwarding uses them (inbox-forward.c).
 * Loop thread only.
 */
#ifndef STORE_ASK_H
#define STORE_ASK_H

#include <stddef.h>

#include "store-pub.h"
#include "store-req.h"

struct store_msg;

/*
 * Send a core request on subject with headers h and data: each reply
 * comes to cb (store-req.h), until it returns 0, or a closing status
 * (503: nobody listens; STORE_REPLY_TIMEOUT after timeout_ms).  NULL
 * when not connected.
 */
struct store_req *store_ask(const char *subject, const struct store_header *h,
		    size_t nh, const void *data, size_t len,
		    long long timeout_ms, store_reply_cb cb, void *arg);
/*
 * Take the requests sent on subject (a wildcard may be in it): each
 * comes to cb on the loop (m the callee's; its reply subject is
 * store_msg_reply).  One listener; set before store_init.
 */
void		 store_listen(const char *subject,
		    void (*cb)(struct store_msg *m));
/*
 * Publish an answer to reply: 0, or -1 when it could not be sent (not
 * connected, or too much unsent already).
 */
int		 store_tell(const char *reply, const struct store_header *h,
		    size_t nh, const void *data, size_t len);
/* The server's max_payload, or 0 before it is known. */
int		 store_max_payload(void);

#endif
