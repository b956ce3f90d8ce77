/*
 * tls.c: the main listener's TLS server context (tls.h).  Main thread.
 *
 * Only what differs from OpenSSL's defaults is set: the floor at TLS 1.2
 * (SPEC 13), no renegotiation (a client could make the relay redo the
 * costly half of a handshake at will), and ALPN, which answers http/1.1
 * or, to a client that offers only other protocols (h2), the fatal
 * no_application_protocol alert of RFC 7301 rather than a silent mismatch.
 * The cipher list and groups stay OpenSSL's, which its updates keep sound.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls.h"

static const unsigned char tls_h11[] = "\x08http/1.1";

/* SSL_CTX_set_alpn_select_cb: http/1.1 or nothing. */
static int
tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char	*o;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, tls_h11, sizeof(tls_h11) - 1,
	    in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* OpenSSL's reason for the last failure, and the queue cleared. */
static void
tls_reason(char *detail, size_t len, const char *what)
{
	unsigned long	 e = ERR_peek_last_error();

	snprintf(detail, len, "%s%s%s", what, e != 0 ? ": " : "",
	    e != 0 ? ERR_reason_error_string(e) : "");
	ERR_clear_error();
}

/* A server context; see tls.h. */
SSL_CTX *
tls_server_new(const char *cert, const char *key, enum tls_blame *blame,
    char *detail, size_t detaillen)
{
	SSL_CTX	*ctx;

	*blame = TLS_BLAME_CERT;
	if (access(cert, R_OK) == -1) {
		snprintf(detail, detaillen, "%s cannot be read", cert);
		return NULL;
	}
	*blame = TLS_BLAME_KEY;
	if (access(key, R_OK) == -1) {
		snprintf(detail, detaillen, "%s cannot be read", key);
		return NULL;
	}
	*blame = TLS_BLAME_CERT;
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		tls_reason(detail, detaillen, "no TLS context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_alpn_select_cb(ctx, tls_alpn_cb, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		tls_reason(detail, detaillen, "not a PEM certificate chain");
		goto bad;
	}
	*blame = TLS_BLAME_KEY;
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		tls_reason(detail, detaillen, "not a PEM private key that "
		    "matches the certificate");
		goto bad;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		tls_reason(detail, detaillen, "the key does not match the "
		    "certificate");
		goto bad;
	}
	return ctx;
bad:
	SSL_CTX_free(ctx);
	return NULL;
}

/*
 * The served certificate's notAfter; see tls.h.  The leaf of the chain
 * (what SSL_CTX_use_certificate_chain_file made the context's own), read
 * by OpenSSL's own ASN1_TIME_to_tm (UTCTime and GeneralizedTime alike).
 */
long long
tls_not_after(const SSL_CTX *ctx)
{
	const ASN1_TIME	*t;
	X509		*x;
	struct tm	 tm;

	if (ctx == NULL || (x = SSL_CTX_get0_certificate(ctx)) == NULL ||
	    (t = X509_get0_notAfter(x)) == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	return (long long)timegm(&tm);
}
