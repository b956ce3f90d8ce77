/*
 * cli.h: the treaty command-line client, one internal header (tmux
 * style).  Each subcommand is a function taking its own argc/argv (argv[0]
 * is the subcommand's name) and returning the process's exit status.
 *
 * The network commands run on one event_base (client.c): requests to the
 * relay through src/common's resolver and HTTP client, backoff timers,
 * signals, child processes.  Nothing blocks the loop except the fsync of
 * an inbox record, which is the point of the record.
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <event2/event_struct.h>

#include "outbound.h"

#define EXIT_OK		0
#define EXIT_FAILED	1	/* the request or check failed for good */
#define EXIT_USAGE	2
#define EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: still failing after retries */


struct treaty_secret;
struct cevent;

/* tools.c: no network. */
int	cmd_sign(int argc, char **argv);
int	cmd_verify(int argc, char **argv);
int	cmd_hash_token(int argc, char **argv);
int	cmd_gen_token(int argc, char **argv);
/* cmd-publish.c */
int	cmd_publish(int argc, char **argv);
int	cmd_flush(int argc, char **argv);
/*
 * outbox.c: entries that publish keeps until the relay has them and flush
 * sends: the subject on the first line, then one structured-mode event or
 * a batch.  Names sort oldest first.
 */
#define OUTBOX_SUFFIX		".event"
#define OUTBOX_REJECTED		".rejected"	/* refused for good: a human's */
/* 0 when dir is the user's own and writable by nobody else; else -1. */
int	 outbox_check(const char *dir);
/* Write an entry durably (dir made if missing); its path, or NULL. */
char	*outbox_write(const char *dir, const char *subject, const char *body,
	    size_t len);
/*
 * Read an entry: 0; 1 when it is gone (sent by another flush); 2 when it
 * is not an entry (no subject line; subject and body are then empty); -1
 * when it cannot be read.
 */
int	 outbox_read(const char *path, char **subject, char **body,
	    size_t *len);
/*
 * Rename an entry the relay refused for good to *.rejected, and say so:
 * 0 (also when it is gone already: another flush set it aside), or -1
 * with a message (it stays).
 */
int	 outbox_reject(const char *path);
/* cmd-work.c */
int	cmd_work(int argc, char **argv);
/* cmd-listen.c */
int	cmd_listen(int argc, char **argv);
/*
 * cmd-admin.c: treaty admin (SPEC 15), and what its commands share.
 */
#define ADMIN_ATTEMPTS		8
#define ADMIN_ATTEMPTS_MAX	1000
#define ADMIN_USAGE							\
	"usage: treaty admin status [--json] [--attempts N]\n"		\
	"       treaty admin drops --subscriber NAME --since TIME [--limit N]\n" \
	"         [--page N] [--json] [--attempts N]\n"			\
	"       treaty admin replay --subscriber NAME --since TIME [--dropped]\n" \
	"         [--wait] [--json] [--attempts N]\n"			\
	"       treaty admin replay --status ID [--wait] [--json] [--attempts N]\n" \
	"       treaty admin replay --cancel ID [--attempts N]\n"	\
	"       treaty admin consumers [--json] [--attempts N]\n"	\
	"       treaty admin consumers --delete NAME [--attempts N]\n"	\
	"       treaty admin pause NAME [--attempts N]\n"			\
	"       treaty admin resume NAME [--attempts N]\n"			\
	"       treaty admin attempts NAME [--limit N] [--before TIME] [--page N]\n" \
	"         [--json] [--attempts N]\n"					\
	"       " SUBSCRIBER_PUT SUBSCRIBER_LINES CLIENT_USAGE "\n"	\
	"  (admin subscriber: the relay's URL is --relay-url URL; --url is the\n" \
	"  subscriber's)"
/*
 * The lines of treaty admin subscriber, in its usage (which begins with
 * "usage: ") and in the usage of admin (which begins with spaces).
 */
#define SUBSCRIBER_PUT	"treaty admin subscriber put NAME --url URL --filter F\n"
#define SUBSCRIBER_LINES						\
	"         [--secret-file FILE] [--secret-out FILE] [--show-secret]\n" \
	"         [--max-deliver N] [--max-in-flight N] [--standard-webhooks]\n" \
	"         [--ordered] [--deliver-from all|new|TIME] [--if-match REV]\n" \
	"         [--attempts N]\n"						\
	"       treaty admin subscriber put NAME --token-sha256 HEX --filter F\n" \
	"         [the same options]\n"					\
	"       treaty admin subscriber put NAME --file FILE|- [--if-match REV]\n" \
	"         [--secret-out FILE] [--show-secret] [--attempts N]\n"	\
	"       treaty admin subscriber get NAME [--json] [--attempts N]\n" \
	"       treaty admin subscriber delete NAME [--if-match REV] [--attempts N]\n"
#define SUBSCRIBER_USAGE						\
	"usage: " SUBSCRIBER_PUT SUBSCRIBER_LINES			\
	"  [--relay-url URL] " CLIENT_USAGE_REST
struct yajl_val_s;
int	cmd_admin(int argc, char **argv);
/* The value of --attempts (1 to ADMIN_ATTEMPTS_MAX), or -1 after a message. */
int	admin_attempts(const char *arg);
/* s percent-encoded for a path segment or a query value (malloc'd). */
char	*admin_encode(const char *s);
/* The relay's JSON answer parsed, or NULL after a message. */
struct yajl_val_s *admin_parse(const char *body, size_t len);
/* A parsed value printed again as one JSON line. */
void	admin_print_json(struct yajl_val_s *v);
/* Say why the relay refused for good (what: "admin", "admin replay"). */
struct client_result;
void	admin_refused(const char *what, const struct client_result *r);
/* The same with the reason given (client_why's, or another form of it). */
void	admin_refused_why(const char *what, const struct client_result *r,
	    const char *why);
/* cmd-replay.c: treaty admin replay (argv[0] is "replay"). */
int	cmd_admin_replay(int argc, char **argv);
/*
 * cmd-subscriber.c: treaty admin subscriber put, get and delete (SPEC 16;
 * argv[0] is "subscriber").
 */
int	cmd_admin_subscriber(int argc, char **argv);

/* main.c */
void	cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct option;
/* getopt_long taking exact long names only; see main.c. */
int	cli_getopt(int argc, char **argv, const char *shorts,
	    const struct option *lo);

/* input.c */
char	*read_all(FILE *f, size_t *len);
/*
 * Secrets of a file, one per line, newest first; count or -1.  Free the
 * text with secret_free (util.h), which wipes it.
 */
int	 read_secrets(const char *path, char **text, struct treaty_secret *s);
/*
 * What work and listen check signatures with: the secrets of a file and
 * a tolerance (0: the default, 300 s; --tolerance up to a day).
 */
#define VERIFY_TOLERANCE_MAX_S	86400
struct verifier {
	struct treaty_secret	*secrets;	/* TREATY_MAX_SECRETS of them */
	int			 n;
	char			*text;
	int64_t			 tolerance;
};
int	 verifier_load(struct verifier *v, const char *path);
/* TREATY_OK, or why sig is not good for id and body now. */
int	 verifier_check(const struct verifier *v, const char *sig,
	    const char *id, const void *body, size_t len);
void	 verifier_free(struct verifier *v);
/* The bearer token from path, or TREATY_TOKEN when path is NULL. */
char	*read_token(const char *path);
char	*read_token_stdin(void);
/* A non-negative decimal number, or -1. */
long long num_arg(const char *s);
/*
 * A --since value as RFC 3339 into buf (TREATY_RFC3339_MAX bytes): an RFC
 * 3339 date-time as it is, or a time that long before now, by this
 * machine's clock: a number and s, m, h or d ("30m", "2h", "7d"), not
 * before 1970.  0, or -1 when it is neither.
 */
#define SINCE_FORMS	"an RFC 3339 date-time (2026-12-01T00:00:00Z) or " \
	"a time before now (30m, 2h, 7d)"
int	 since_arg(const char *arg, char *buf, size_t len);

/*
 * client.c: the loop, the relay and retries.
 *
 * Options every network command takes (getopt_long codes >= 1000).
 */
#define CLIENT_LONGOPTS							\
	{ "url", required_argument, NULL, 1000 },			\
	CLIENT_LONGOPTS_REST
/* The same without --url, for a command whose --url is something else. */
#define CLIENT_LONGOPTS_REST						\
	{ "token-file", required_argument, NULL, 1001 },		\
	{ "ca-file", required_argument, NULL, 1002 },			\
	{ "retry-base", required_argument, NULL, 1003 },		\
	{ "retry-cap", required_argument, NULL, 1004 },			\
	{ "deadline", required_argument, NULL, 1005 },			\
	{ "idle-timeout", required_argument, NULL, 1006 },		\
	{ "verbose", no_argument, NULL, 'v' }
#define CLIENT_USAGE	"  [--url URL] " CLIENT_USAGE_REST
#define CLIENT_USAGE_REST						\
	"[--token-file FILE] [--ca-file FILE]\n"			\
	"  [--retry-base MS] [--retry-cap MS] [--deadline S] [--idle-timeout S]\n" \
	"  [--verbose]"
/*
 * The relay's URL as the option --relay-url (code 1007) instead: for a
 * command whose --url is something else (admin subscriber put).
 */
#define CLIENT_RELAY_URL_OPT						\
	{ "relay-url", required_argument, NULL, 1007 }

/*
 * Handle one of CLIENT_LONGOPTS: 0, or -1 after saying why (a bad value,
 * or usage when c is not one of them).
 */
int	client_option(int c, const char *arg, const char *usage);
/*
 * The option that gives the relay's URL, as messages name it ("--url"
 * unless said otherwise; client_free resets it).
 */
void	client_url_option(const char *opt);
/* Set up the loop and SIGINT/SIGTERM handling (listen needs no more). */
int	client_loop_init(void);
/*
 * client_loop_init, then the resolver and HTTP client for the relay's URL
 * (--url, TREATY_URL, or http://127.0.0.1:8080) and the token.  -1 with a
 * message on failure, -2 for options that do not go together (usage).
 */
int	client_init(void);
struct event_base *client_base(void);
/* Run the loop until client_exit. */
int	client_run(void);
void	client_exit(int status);
void	client_free(void);
/* Called once at SIGINT or SIGTERM (and client_stopping() is then 1). */
void	client_on_stop(void (*fn)(void *), void *arg);
int	client_stopping(void);

struct client_result {
	int		 status;	/* HTTP status, 0 when none */
	const char	*error;		/* why there is none ("ETIMEDOUT", ...) */
	int		 permanent;	/* no answer and never will be (a bad
					   name, an untrusted certificate) */
	int		 not_sent;	/* no answer: the request never left */
	int		 resent;	/* sent twice (outbound.h): the
					   first may have arrived */
	const char	*retry_after;
	const char	*body;		/* valid during the callback */
	size_t		 bodylen;
};
typedef void (*client_cb)(void *arg, const struct client_result *r);
struct client_req;

/*
 * Send a request to the relay with the bearer token; path is below the
 * URL's path ("/v1/...").  cb runs once on the loop, never from inside.
 */
struct client_req *client_request(enum outbound_method m, const char *path,
	    const struct outbound_header *h, size_t nh, const void *body,
	    size_t len, client_cb cb, void *arg);
/* Abandon a request; its callback does not run. */
void	client_cancel(struct client_req *r);
/* 1 for what is worth retrying: no answer, 429, 502, 503, 504. */
int	client_transient(const struct client_result *r);
/* A short description of a result for messages ("503", "ETIMEDOUT"). */
const char *client_what(const struct client_result *r, char *buf, size_t len);
/* The string member key of the relay's JSON error body, cleaned, or "". */
const char *client_error_member(const struct client_result *r,
	    const char *key, char *buf, size_t len);
/* The server's words made safe for a terminal: control characters '?'. */
void	client_clean(char *s);
/* The relay's "detail" from a JSON error body, or "". */
const char *client_detail(const struct client_result *r, char *buf,
	    size_t len);
/*
 * Why a request failed, for the message a command ends with: the status
 * and the relay's detail ("503: JetStream is not available; ..."), or,
 * without an answer, the error and where the relay was looked for
 * ("connection refused at http://127.0.0.1:8080 (the default: ...)").
 */
const char *client_why(const struct client_result *r, char *buf,
	    size_t len);

/*
 * Backoff for one kind of retried request: delays of 125-250 ms,
 * doubling, capped at 15-30 s (--retry-base/--retry-cap), jittered, at
 * least a Retry-After.  One metadata-only notice per failed attempt.
 */
struct retry {
	unsigned	 attempt;	/* failed attempts in a row */
	struct event	 timer;
	void		(*fn)(void *);
	void		*arg;
	const char	*what;		/* "publish", "poll", ... */
};
void	retry_init(struct retry *r, const char *what, void (*fn)(void *),
	    void *arg);
/* Log the notice for a failed attempt and run fn after the backoff. */
void	retry_later(struct retry *r, const struct client_result *res);
/* The attempt succeeded: the next failure starts from the first delay. */
void	retry_reset(struct retry *r);
/* Stop a pending backoff (its fn does not run). */
void	retry_cancel(struct retry *r);
int	retry_pending(const struct retry *r);
/* The delay after the n-th failure in a row, honouring Retry-After. */
int64_t	retry_delay_ms(unsigned n, const char *retry_after);

/*
 * sendq.c: the events publish and flush send, in order, as requests of up
 * to a batch size of one subject (see sendq.c); outbox files are removed
 * once all their events are stored.
 */
/*
 * Every publish goes through one queue: the events (one, the JSON lines of
 * --batch, or an outbox's files), sent in order as requests of up to
 * --batch-size events of one subject within the relay's body limit (one
 * event alone goes in structured mode, several as a batch).  An outbox
 * file is removed once every event in it is stored.
 */
struct qev {
	const char	*text;		/* structured-mode JSON */
	size_t		 len;
	const char	*subject;
	int		 file;		/* in sendq.f, or -1 */
	size_t		 line;		/* of --batch's input, or 0 */
	int		 done;		/* stored, or its file set aside */
};

struct qfile {
	char		*path;
	char		*subject;
	char		*text;		/* the body, which events point into */
	size_t		 left;		/* events not yet stored */
};

struct sendq {
	struct qev		*ev;
	size_t			 nev, evcap;
	struct qfile		*f;
	size_t			 nf, fcap;
	size_t			 limit;		/* events per request */
	size_t			 full;		/* --batch-size */
	char			*halved;	/* the subject limit was halved for */
	int			 flush;		/* flush: a refused event's file is
						 * set aside and the rest go on */
	/* The request in flight: its events, subject and body. */
	size_t			*req;
	size_t			 nreq;
	char			*subject;
	char			*body;
	size_t			 len;
	int			 batch;
	struct retry		 retry;
	struct client_req	*creq;
	int			 attempts;	/* allowed per request */
	size_t			 sent, rejected;	/* files */
	int			 rc;
};
extern struct sendq	 sendq;

/* Add an event (text not copied); file is an index of sendq.f or -1. */
void	 sendq_add(const char *text, size_t len, const char *subject,
	    int file, size_t line);
/* Add an outbox file (path, subject and text now owned); its index. */
int	 sendq_add_file(char *path, char *subject, char *text);
/* Send everything (after client_init); the exit status. */
int	 sendq_run(int attempts, size_t limit);
void	 sendq_free(void);

/* strset.c: a set of byte strings. */
struct strset;
struct strset	*strset_new(void);
void		 strset_free(struct strset *s);
int		 strset_has(struct strset *s, const char *k, size_t len);
int		 strset_add(struct strset *s, const char *k, size_t len);
int		 strset_del(struct strset *s, const char *k, size_t len);
size_t		 strset_count(const struct strset *s);
/*
 * The key of an id within a scope (inbox, or event source), and those
 * nested: an inbox name (64 bytes at most) around a source and an id
 * (4,096 each), with their lengths, separators and a record's kind.
 */
#define KEY_MAX		(2 * 4096 + 160)
size_t		 strset_key2(char *buf, size_t bufsz, const char *scope,
		    const char *id);
char		*strset_key2_new(const char *scope, const char *id);

/*
 * record.c: the local inbox file of work and listen: one JSON line per
 * accepted event, appended and fsynced before the event is acknowledged.
 */
struct record_file;
/*
 * Open (creating) path and read back the keys of its records: (source,
 * id) pairs, and the same per inbox.  A torn last line (a crash in the
 * middle of an append) is ignored and the next append starts on a new
 * line; lines that are not records are skipped with a notice.  NULL with a
 * message.
 */
struct record_file *record_open(const char *path);
void	record_close(struct record_file *f);
/* 1 when the file has a record of the event (source, id) from inbox. */
int	record_has_inbox_event(struct record_file *f, const char *inbox,
	    const char *source, const char *id);
/* 1 when the file has a record of the event (source, id). */
int	record_has_event(struct record_file *f, const char *source,
	    const char *id);
/*
 * Append the record of ev (with its envelope id and inbox when it came
 * from an inbox, NULL for a push) and its delivery count (-1: unknown,
 * left out).  sync: fsync
 * now; otherwise record_sync must follow before anyone is told.  On a
 * failed write or sync, every record since the last good sync is cut off
 * again and forgotten (none of them may be acknowledged).  0, or -1 with
 * errno.
 */
int	record_append(struct record_file *f, const struct cevent *ev,
	    const char *inbox, const char *envelope_id, long long count,
	    int sync);
int	record_sync(struct record_file *f);

/*
 * dedup.c: a set of (scope, key) pairs, each kept for a fixed time, at
 * most a fixed number, refusing new ones when full (fail closed).  work's
 * cache of completed deliveries, (inbox, event) for 10 minutes, at most
 * 16,384; listen's memory of signatures and the attributes they came with.
 */
struct dedup;
struct dedup *dedup_new(size_t cap, int64_t ttl_ms);
void	dedup_free(struct dedup *d);
/* 1 when (inbox, id) completed within the ttl. */
int	dedup_has(struct dedup *d, const char *inbox, const char *id,
	    int64_t now);
/* Remember a completed delivery; -1 when full (fail closed). */
int	dedup_add(struct dedup *d, const char *inbox, const char *id,
	    int64_t now);
/* Room left after expiring old entries. */
size_t	dedup_room(struct dedup *d, int64_t now);
/* When the oldest entry expires (ms, monotonic), or -1 when empty. */
int64_t	dedup_next_expiry(struct dedup *d);

/*
 * spawn.c: commands run for events (--exec, --on-receive): sh -c CMD
 * with the data on standard input (a memory file, so the loop never
 * writes to a pipe) and the attributes in the environment (CE_ID,
 * CE_SOURCE, ..., TREATY_INBOX, TREATY_DELIVERY_COUNT).
 */
typedef void (*spawn_cb)(void *arg, int status);	/* wait(2) status */
/* 0, or -1 with errno; cb (when not NULL) runs when the child exits. */
int	spawn_event(const char *cmd, const struct cevent *ev,
	    const char *inbox, long long count, spawn_cb cb, void *arg);
/* The exit code of a wait(2) status, 128 + signal when killed. */
int	spawn_code(int status);
/* A spawn_cb for best-effort hooks: a failure is noted, nothing else. */
void	spawn_hook_done(void *arg, int status);
/* Children still running. */
int	spawn_running(void);
/* Stop collecting exits (at the end). */
void	spawn_free(void);

#endif
