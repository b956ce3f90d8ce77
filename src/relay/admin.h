/*
 * admin.h: the operations API under /v1/admin/ (SPEC 15): admin tokens,
 * what each subscriber is owed.  Loop thread only.
 */
#ifndef ADMIN_H
#define ADMIN_H

struct evhttp_request;
struct config;
struct event_base;

/* Keep cfg (in place: a reload refills it). */
void	admin_init(struct event_base *base, const struct config *cfg);
/*
 * The bucket's subscribers were applied (subkv_applied moved on): the
 * writes that waited for it are answered.
 */
void	admin_subs_applied(void);
/* A request for /v1/admin/<rest>, on either listener. */
void	admin_handle(struct evhttp_request *req, const char *rest);
/* Shutdown: answer (503) the requests still waiting for JetStream. */
void	admin_free(void);
/* While the loop still runs at shutdown: the same, so the 503s go out. */
void	admin_fail_all(void);

#endif
