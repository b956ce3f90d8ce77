/*
 * ingest.h: POST /v1/events/<subject> (SPEC section 2).  Loop thread.
 */
#ifndef INGEST_H
#define INGEST_H

#include <stddef.h>

#include "reply.h"

struct evhttp_request;
struct config;

/* cfg stays in place; a reload refills it, then ingest_reload. */
void	ingest_init(const struct config *cfg);
void	ingest_reload(void);
void	ingest_free(void);
/*
 * SPEC 2's checks before 413 (method, 401, 400 bad_subject, 403, 429)
 * from a request's head, for the door (route.h's precheck).
 */
enum refusal ingest_precheck(const char *method, const char *rest,
	    size_t restlen, const char *auth, long long *retry_after);
/* Handle one request whose path is /v1/events/<subject>. */
void	ingest_handle(struct evhttp_request *req, const char *subject);

#endif
