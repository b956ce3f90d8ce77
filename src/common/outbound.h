/*
 * outbound.h: HTTP or HTTPS requests (the relay's deliveries, the
 * client's requests to the relay) to an address the caller resolved and
 * validated (resolve.h): the connection never resolves the host again.
 * A bounded keep-alive pool per target, an overall deadline per request
 * (response body included) and an idle timeout per connection.
 * Loop thread only.
 */
#ifndef OUTBOUND_H
#define OUTBOUND_H

#include <stddef.h>
#include <sys/socket.h>

#include "resolve.h"

struct event_base;
struct outbound_target;
struct outbound_req;

/*
 * SPEC 3's outbound HTTP rules: the default overall deadline and idle
 * timeout, milliseconds, of the relay's deliveries
 * (TREATY_RELAY_DELIVERY_TIMEOUT_MS, _IDLE_TIMEOUT_MS) and of the
 * client's requests (--deadline, --idle-timeout).  Plain numbers, so
 * that API_STR can spell them.
 */
#define OUTBOUND_DEADLINE_MS_DEFAULT	45000
#define OUTBOUND_IDLE_MS_DEFAULT	35000

struct outbound_header {
	const char	*key;
	const char	*value;
};

enum outbound_method {
	OUTBOUND_POST,
	OUTBOUND_GET,
	OUTBOUND_DELETE,
	OUTBOUND_PUT
};

/* One request.  Everything is copied before outbound_send returns. */
struct outbound_msg {
	enum outbound_method		 method;
	const char			*path;	/* path?query; NULL: the URL's */
	const struct outbound_header	*h;
	size_t				 nh;
	const void			*body;
	size_t				 len;
};

/* The answer: status 0 means no HTTP answer, error then says why. */
struct outbound_result {
	int		 status;	/* HTTP status, or 0 */
	const char	*error;		/* "timeout", "connect", ... or NULL */
	const char	*retry_after;	/* Retry-After value, or NULL */
	long long	 ms;		/* from sending to the answer */
	int		 not_sent;	/* no TCP connect succeeded: nothing sent */
	int		 resent;	/* sent twice: a kept connection
					   was lost before any answer, and
					   the first copy may have arrived */
	int		 timed_out;	/* the deadline or the idle timeout */
	/*
	 * Without an answer, what the new connection's failure was, when
	 * known: the socket's errno (ECONNREFUSED, ...), the certificate's
	 * verification result (an X509_V_ERR_*: the peer is not trusted),
	 * or OpenSSL's error of a handshake that failed otherwise; 0 when
	 * not known.  outbound_why says it in words.
	 */
	int		 sys_errno;
	long		 cert_error;
	unsigned long	 tls_error;
	const char	*body;		/* response body (valid in the callback) */
	size_t		 bodylen;
};

typedef void (*outbound_cb)(void *arg, const struct outbound_result *r);

/*
 * Set up once: ca_file (NULL: the system store) for https, the overall
 * deadline and the idle timeout in milliseconds, the User-Agent.
 * Returns -1 when the CA file cannot be loaded.
 */
int	outbound_init(struct event_base *base, const char *ca_file,
	    int deadline_ms, int idle_ms, const char *agent);
/*
 * A target: the URL (http or https; the caller validated it), and how
 * many idle connections to keep.  NULL when the URL cannot be parsed.
 */
struct outbound_target *outbound_target_new(const char *url, int max_idle);
/* Largest response body accepted (default 1 MiB; more is an error). */
void		 outbound_target_set_max_body(struct outbound_target *t,
		    size_t bytes);
/* The URL's host (for resolve_host) and port. */
const char	*outbound_target_host(const struct outbound_target *t);
int		 outbound_target_port(const struct outbound_target *t);
/* 1 when t is an https URL. */
int		 outbound_target_tls(const struct outbound_target *t);
/* Connections open for t (busy and idle). */
int		 outbound_target_conns(const struct outbound_target *t);
/* Close t's connections and free it; its requests must be finished. */
void		 outbound_target_free(struct outbound_target *t);
/*
 * Send m to t, connecting to the first address of to (they carry the
 * port).  When its TCP connect fails, nothing was sent, and the next
 * address is tried within the same request, and within its deadline, up
 * to the last.  cb runs exactly once, on the loop thread, never from
 * inside this call, unless the request is cancelled first.  NULL when no
 * connection can be made.
 */
struct outbound_req *outbound_send(struct outbound_target *t,
	    const struct resolve_result *to, const struct outbound_msg *m,
	    outbound_cb cb, void *arg);
/*
 * Why r has no answer, in words, into buf: "certificate verify failed:
 * self-signed certificate", "connection refused", "TLS handshake failed:
 * wrong version number", or r->error when nothing more is known.
 */
const char *outbound_why(const struct outbound_result *r, char *buf,
	    size_t len);
/* Abandon a request: its connection is closed, cb does not run. */
void	outbound_cancel(struct outbound_req *req);
/* Free the TLS context. */
void	outbound_free(void);
/*
 * A Retry-After value (delta seconds, or an HTTP date compared with now,
 * Unix seconds) as milliseconds, at most a day; -1 when it is neither.
 */
long long outbound_retry_after_ms(const char *v, long long now);

#endif
