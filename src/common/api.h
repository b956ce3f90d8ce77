/*
 * api.h: the relay's HTTP API as both of its sides see it: the limits of
 * SPEC 2 and 4, named once for the relay, which enforces them, and for the
 * client, which keeps within them.  The manual pages state the same
 * numbers.  Constants only: any thread.
 */
#ifndef API_H
#define API_H

/* The routes' path prefixes (a subject or an inbox's name follows). */
#define API_EVENTS_PATH			"/v1/events/"
#define API_INBOX_PATH			"/v1/inbox/"
#define API_ADMIN_PATH			"/v1/admin/"
/* A replay's id (SPEC 15): this many lowercase hex digits. */
#define API_REPLAY_ID_LEN		24
/* The length of such a prefix. */
#define API_PATH_LEN(p)			(sizeof(p) - 1)

/* An event's data, and any request body the relay reads. */
#define API_BODY_MAX_MIB		1
#define API_BODY_MAX			(API_BODY_MAX_MIB * 1024 * 1024)
/* Events in one batch (SPEC 14), and the client's default batch. */
#define API_BATCH_MAX			1000
#define API_BATCH_DEFAULT		100
/* Envelopes one inbox GET may ask for (max=), and its default. */
#define API_INBOX_BATCH_MAX		256
#define API_INBOX_BATCH_DEFAULT		10
/* The longest wait= of an inbox long-poll, milliseconds. */
#define API_INBOX_WAIT_MAX_MS		30000
/* The longest delay= of a lease release, milliseconds. */
#define API_RELEASE_DELAY_MAX_MS	3600000
/* An inbox lease when TREATY_RELAY_LEASE_SECONDS is not set, seconds. */
#define API_LEASE_DEFAULT_S		30

/* A limit as a string literal, for messages: API_STR(API_INBOX_WAIT_MAX_MS). */
#define API_STR(x)			API_STR_(x)
#define API_STR_(x)			#x

#endif
