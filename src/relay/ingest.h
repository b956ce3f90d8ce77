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
/* Handle one request whose path is /v1/events/<subject>. */
void	ingest_handle(struct evhttp_request *req, const char *subject);

#endif
