/*
 * ingest.h: POST /v1/events/<subject> (SPEC section 2).  Loop thread.
 */
#ifndef INGEST_H
#define INGEST_H

struct evhttp_request;
struct config;

/* cfg stays in place; a reload refills it, then ingest_reload. */
void	ingest_init(const struct config *cfg);
void	ingest_reload(void);
void	ingest_free(void);
/*
 * SPEC 2's checks before 413 (method, 401, 400 bad_subject, 403, 429)
 * for a body refused unread: 0, or the status with its code and detail
 * (429: with the seconds of Retry-After).  With retry_after, it takes
 * the event from the producer's rate like a request; NULL skips the rate.
 */
int	ingest_precheck(const char *method, const char *subject,
	    const char *auth, const char **code, const char **detail,
	    long long *retry_after);
/* Handle one request whose path is /v1/events/<subject>. */
void	ingest_handle(struct evhttp_request *req, const char *subject);

#endif
