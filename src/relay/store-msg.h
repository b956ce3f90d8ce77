/*
 * store-msg.h: the messages JetStream's consumers hand out (store-msg.c):
 * what they hold, and the acknowledgement verbs that answer them.  Loop
 * thread only.
 *
 * A JetStream message handed to a callback is a struct store_msg, owned
 * by the callee until it calls one of store_msg_ack, _nak, _term,
 * _give_back (which answer JetStream and free it) or store_msg_free
 * (which frees it unanswered).
 */
#ifndef STORE_MSG_H
#define STORE_MSG_H

#include <stddef.h>
#include <stdint.h>

struct store_msg;
typedef void (*store_msg_cb)(void *arg, struct store_msg *m);

const char	*store_msg_subject(const struct store_msg *m);
const void	*store_msg_data(const struct store_msg *m, size_t *len);
/* Its stored size: payload and header lines (what a pull's bytes count). */
size_t		 store_msg_size(const struct store_msg *m);
/* First value of header key, or NULL. */
const char	*store_msg_header(const struct store_msg *m, const char *key);
/* Its value percent-decoded, malloc'd; NULL when absent or not valid. */
char		*store_msg_header_decoded(const struct store_msg *m,
		    const char *key);
/* Call fn for each header (first value of each key). */
void		 store_msg_headers(const struct store_msg *m,
		    void (*fn)(void *arg, const char *key, const char *value),
		    void *arg);
/* How many times JetStream has delivered it (1 the first time). */
uint64_t	 store_msg_delivered(const struct store_msg *m);
/* Its sequence number in WORK. */
uint64_t	 store_msg_seq(const struct store_msg *m);
void		 store_msg_ack(struct store_msg *m);
/* Negative acknowledgement: JetStream redelivers after delay_ms. */
void		 store_msg_nak(struct store_msg *m, long long delay_ms);
/* Back to JetStream for redelivery at once (a nak without delay). */
void		 store_msg_give_back(struct store_msg *m);
/* No redelivery, ever (a plain +TERM: nats-server 2.9 ignores a reason). */
void		 store_msg_term(struct store_msg *m);
/* "Still working on it": restarts the ack wait; keeps m. */
void		 store_msg_progress(struct store_msg *m);
/* Drop m without answering JetStream (it redelivers after the ack wait). */
void		 store_msg_free(struct store_msg *m);
/* Its reply subject (a request's: store-ask.h), or NULL. */
const char	*store_msg_reply(const struct store_msg *m);

/* A lease: the numbers of a JetStream acknowledgement subject. */
struct store_lease {
	uint64_t	 delivered;	/* delivery count */
	uint64_t	 seq;		/* stream sequence in WORK */
	uint64_t	 dseq;		/* consumer sequence of this delivery */
	int64_t		 ts;		/* the event's time in WORK, ns */
	uint64_t	 pending;	/* the consumer's, after this one */
};
void		 store_msg_lease(const struct store_msg *m,
		    struct store_lease *l);

/*
 * The acknowledgement verbs, for a lease answered by its numbers alone
 * (store_lease_answer, store-req.h).
 */
enum store_verb {
	STORE_ACK,		/* +ACK: done, never again */
	STORE_PROGRESS,		/* +WPI: restart the ack wait */
	STORE_NAK,		/* -NAK: again, after delay_ms */
	STORE_TERM		/* +TERM: never again, not done */
};

#endif
