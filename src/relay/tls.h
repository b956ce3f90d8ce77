/*
 * tls.h: the main listener's TLS (SPEC 13): a server context made from a
 * PEM certificate chain and its key.  Main thread: at start and at each
 * reload (config.c), so a renewed certificate is read again by SIGHUP.
 */
#ifndef TLS_H
#define TLS_H

#include <stddef.h>

struct ssl_ctx_st;

enum tls_blame {
	TLS_BLAME_CERT,
	TLS_BLAME_KEY
};

/*
 * A server context for cert and key: TLS 1.2 or later, OpenSSL's default
 * cipher policy, ALPN http/1.1 only, no renegotiation.  NULL when a file
 * is missing or unreadable or the two do not match: *blame says which to
 * name and detail why.  Freed with SSL_CTX_free; each connection's SSL
 * holds a reference, so a reload may free the one it replaces.
 */
struct ssl_ctx_st *tls_server_new(const char *cert, const char *key,
		    enum tls_blame *blame, char *detail, size_t detaillen);
/*
 * When the certificate ctx serves stops being valid (its notAfter), Unix
 * seconds; -1 when ctx is NULL or the time cannot be read.
 */
long long	 tls_not_after(const struct ssl_ctx_st *ctx);

#endif
