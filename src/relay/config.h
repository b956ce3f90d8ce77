/*
 * config.h: environment variables and flags -> one immutable struct config.
 * Main thread, which runs the loop: loaded at start, before the loop, and
 * again at SIGHUP from the loop's signal callback; the lookups and helpers
 * read only what they are given.  The worker thread never reads a struct
 * config (its jobs carry copies).
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "treaty.h"

struct seal_keys;

#define CONFIG_EXIT_BAD		78	/* EX_CONFIG */
#define CONFIG_EXIT_USAGE	2

#define NAME_MAX_LEN		64	/* producer and subscriber names */
/* A token's SHA-256 in hex: as long as a signature's HMAC-SHA256. */
#define TOKEN_HASH_HEX		TREATY_SIG_HEX_LEN

/* A subscriber's settings (SPEC 3 and 4): defaults and ranges. */
#define SUB_SECRET_MIN		16	/* bytes */
#define SUB_MAX_DELIVER_DEFAULT	10
#define SUB_MAX_DELIVER_MAX	1000
#define SUB_PUSH_IN_FLIGHT	64	/* concurrent deliveries */
#define SUB_PULL_IN_FLIGHT	1000	/* leases at once: JetStream's own */
#define SUB_IN_FLIGHT_MAX	10000
/* An ordered subscriber's events in hand, per place in its window. */
#define SUB_ORDER_HAND		16
#define SUB_BREAKER_DEFAULT	20	/* failures in a row (SPEC 17) */
#define SUB_BREAKER_MAX		10000
#define SUB_RATE_MAX		100000	/* rateLimit, events a second */

/*
 * A producer's or an inbox's tokens, as SHA-256 hex (lowercase): one, or a
 * list while a token is rotated (SPEC 11).  The first is the newest.
 */
#define CONFIG_MAX_TOKENS	8
struct token_list {
	char		  hash[CONFIG_MAX_TOKENS][TOKEN_HASH_HEX + 1];
	size_t		  n;
};

struct producer {
	char		  name[NAME_MAX_LEN + 1];
	struct token_list tokens;
	char		**subjects;		/* NATS patterns */
	size_t		  nsubjects;
	double		  rate;			/* events/s; 0: no limit */
	int		  burst;		/* bucket size, >= 1 */
};
#define PRODUCER_RATE_MAX	1e6	/* events/s */
#define PRODUCER_BURST_MAX	1000000

enum subscriber_kind {
	SUB_PUSH,
	SUB_PULL
};

/*
 * Where a subscriber's consumer starts when it is made (deliverFrom,
 * SPEC 3): every event WORK holds, only those stored after it is made, or
 * those stored from a time on.  Read only then: JetStream cannot move an
 * existing consumer, so a later change leaves it where it is.
 */
enum sub_from {
	SUB_FROM_ALL,
	SUB_FROM_NEW,
	SUB_FROM_TIME
};
/* The configuration's default; subscribers the API makes get new (SPEC 16). */
#define SUB_FROM_CONFIG_DEFAULT	SUB_FROM_ALL

struct subscriber {
	char		  name[NAME_MAX_LEN + 1];
	enum subscriber_kind kind;
	char		 *url;			/* push */
	char		 *filter;
	char		**secrets;		/* newest first */
	size_t		  nsecrets;
	struct token_list tokens;		/* pull */
	int		  max_deliver;
	int		  max_in_flight;
	int		  standard_webhooks;
	/*
	 * breaker.failures (SPEC 17): failed attempts in a row on one
	 * instance that trip a push subscriber; 0: never.
	 */
	int		  breaker_failures;
	/*
	 * rateLimit (SPEC 17): events a second all instances together send
	 * to a push subscriber; 0: no limit.
	 */
	double		  rate_limit;
	/*
	 * ordered (SPEC 18): one event of an ordering key at a time, in
	 * WORK's order (order.h).
	 */
	int		  ordered;
	enum sub_from	  from;			/* deliverFrom */
	int64_t		  from_ns;		/* SUB_FROM_TIME: Unix ns */
	/*
	 * 1 for a subscriber of the TREATY_SUBSCRIBERS bucket (SPEC 16,
	 * subkv.c), 0 for the configuration's; and its revision there.
	 * Neither is a setting (config_subscriber_equal ignores them).
	 */
	int		  api;
	uint64_t	  revision;
};

/* What a reload did to the subscribers (or to the producers). */
struct sub_changes {
	int		  added;
	int		  changed;
	int		  removed;
};

#define CONFIG_FILE_VAR		"TREATY_RELAY_CONFIG"
#define CONFIG_FILE_MAX_MIB	1
#define CONFIG_FILE_MAX		(CONFIG_FILE_MAX_MIB * 1024 * 1024)

struct config {
	char		 *config_file;		/* --config, or NULL */
	char		 *nats_url;		/* as given, comma-separated */
	char		**nats_servers;
	int		  nnats_servers;
	int		  nats_tls;		/* tls:// URLs: TLS, system CAs */
	char		 *listen;
	int		  port;
	struct producer	 *producers;
	size_t		  nproducers;
	struct subscriber *subscribers;
	size_t		  nsubscribers;
	int		  work_max_age_hours;
	int		  audit_max_age_days;
	int		  duplicate_window_minutes;
	int		  replicas;
	int		  publish_timeout_ms;
	int		  max_pending;
	int		  grace_seconds;
	int		  http_timeout_seconds;
	int		  allow_private_networks;
	char		 *ca_file;
	int		  delivery_timeout_ms;
	int		  delivery_idle_ms;
	int		  dns_timeout_ms;
	char		 *dns_server;
	int		  ack_wait_seconds;
	int		  retry_base_ms;
	int		  retry_max_ms;
	int		  progress_seconds;
	int		  lease_seconds;
	int		  verbose;
	int		  reuseport;		/* SO_REUSEPORT (SPEC 12) */
	char		 *control_listen;	/* ADDR:PORT, or NULL */
	int		  max_connections;	/* SPEC 13 */
	int		  request_timeout_seconds;
	char		 *tls_cert;		/* PEM files, or NULL */
	char		 *tls_key;
	struct ssl_ctx_st *tls_ctx;		/* made from them at each load */
	struct token_list admin;		/* SPEC 15; none: no admin routes */
	int		  max_replays;		/* across all instances */
	char		 *secret_key_file;	/* SPEC 16, or NULL */
	int		  attempts_per_subscriber;	/* SPEC 17; 0: none */
	struct seal_keys *secret_keys;		/* read from it at each load */
};

enum config_action {
	CONFIG_RUN,
	CONFIG_CHECK,		/* --check-config */
	CONFIG_HELP,
	CONFIG_VERSION,
	CONFIG_USAGE_ERROR,	/* exit 2; err holds the message */
	CONFIG_BAD		/* exit 78; err names var and field */
};

struct config_error {
	char		 var[64];	/* variable, or flag when given as one */
	char		 field[128];	/* e.g. "[0].tokenSha256", or "" */
	char		 detail[256];
};

/* Parse the environment and argv into cfg; see enum config_action. */
enum config_action	 config_load(struct config *cfg, int argc, char **argv,
			    struct config_error *err);
/*
 * Read a configuration file's text (systemd's EnvironmentFile syntax, one
 * VAR=value per line; blank lines and lines starting with # or ; are
 * skipped; a value wrapped in '...' or "..." loses its quotes, and in
 * "..." a backslash escapes the next character; no export, no expansion,
 * no value over several lines).  fn gets each assignment in order and
 * returns 0 to go on.  Returns 0; fn's non-zero result; or -1 with
 * *errline and *why for a line that is not VAR=value.
 */
typedef int (*config_file_cb)(void *arg, const char *name, const char *value,
    int line);
int			 config_file_parse(const char *text, size_t len,
			    config_file_cb fn, void *arg, int *errline,
			    const char **why);
/* Free what config_load allocated. */
void			 config_free(struct config *cfg);
/*
 * A reload (SPEC 11): next, freshly loaded, is to replace run.  A
 * restart-only setting that differs keeps its running value, and warn
 * gets its variable's name.  -1 with err when next cannot replace run (a
 * subscriber changed between push and pull).
 */
int			 config_reload_prepare(struct config *next,
			    const struct config *run,
			    void (*warn)(const char *var),
			    struct config_error *err);
/*
 * A deliverFrom value into sc's from and from_ns: "all", "new" or an RFC
 * 3339 time.  0, or -1 when it is none of them.  The caller gives the
 * default when the key is absent (SUB_FROM_CONFIG_DEFAULT here).
 */
int			 config_deliver_from(const char *s,
			    struct subscriber *sc);
/* 1 when s is a producer's or subscriber's name: 1-NAME_MAX_LEN of A-Za-z0-9_-. */
int			 config_name_valid(const char *s);
/*
 * What replacing run by next does to the producers, by name: counted
 * into ch, and each one added, changed (tokens, subjects, rate or burst)
 * or removed given to note ("added", "changed", "removed"): next's in
 * its order, then those removed in run's.
 */
void			 config_producer_changes(const struct config *next,
			    const struct config *run, struct sub_changes *ch,
			    void (*note)(const char *name, const char *what));
/* A subscriber's settings, copied to outlive its configuration. */
struct subscriber	*config_subscriber_dup(const struct subscriber *sc);
/* The same into dst, whose old contents are not freed. */
void			 config_subscriber_copy(struct subscriber *dst,
			    const struct subscriber *sc);
/* Replace cfg's subscribers by the n of subs (cfg owns them from now). */
void			 config_subscribers_set(struct config *cfg,
			    struct subscriber *subs, size_t n);
void			 config_subscriber_free(struct subscriber *sc);
/* JetStream's MaxAckPending for s's consumer (SPEC 3, 18). */
int			 config_max_ack_pending(const struct subscriber *s);
/* 1 when a and b have the same settings. */
int			 config_subscriber_equal(const struct subscriber *a,
			    const struct subscriber *b);
/* Print the --help text to f. */
void			 config_usage(void *f);
/* "ADDR:PORT" into a numeric address (64 bytes) and a port; 0 or -1. */
int			 config_control_addr(const char *s, char *addr,
			    int *port);
/* 1 for a host SPEC 3 allows plain http (localhost, loopback, one label). */
int			 config_host_is_local(const char *host);
/*
 * A subscriber's secrets prepared for signing (treaty_keys_free); NULL
 * when one cannot be used: then every signature fails.
 */
struct treaty_keys	*config_keys(const struct subscriber *sc);
/* 1 when sha_hex is one of t's hashes; every one compared, constant time. */
int			 config_token_match(const struct token_list *t,
			    const char *sha_hex);
/* Find the producer whose token hash equals sha_hex, in constant time. */
const struct producer	*config_find_producer(const struct config *cfg,
			    const char *sha_hex);
/* Find the pull subscriber whose token hash equals sha_hex, likewise. */
const struct subscriber	*config_find_inbox(const struct config *cfg,
			    const char *sha_hex);

#endif
