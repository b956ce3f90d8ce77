/*
 * admin-int.h: what the files of the operations API share (admin.c, and
 * admin-subs.c for the subscribers kept in JetStream).  Loop thread only.
 */
#ifndef ADMIN_INT_H
#define ADMIN_INT_H

#include <yajl/yajl_gen.h>

struct config;
struct event_base;
struct evhttp_request;
struct subscriber;

/* The running configuration (admin_init's; a reload refills it). */
extern const struct config	*admin_cfg;

/* Refuse and log one request (metadata only). */
void	admin_reject(struct evhttp_request *req, int status, const char *code,
	    const char *detail);
/* Answer status with what g holds, and free g. */
void	admin_reply_gen(struct evhttp_request *req, int status, yajl_gen g);
/* A figure, or null when JetStream's is not known. */
void	admin_gen_figure(yajl_gen g, const char *key, int known,
	    unsigned long long v);
/* A subscriber's figures (SPEC 15) as members of the object g is in. */
void	admin_gen_figures(yajl_gen g, const struct subscriber *s);
/* The running subscriber called name, or NULL. */
const struct subscriber *admin_subscriber(const char *name);
/*
 * The name in "<name><tail>", percent-decoded (evmem_free_returned frees
 * it); NULL when the path is not that.
 */
char	*admin_path_name(const char *path, const char *tail);

/* admin-subs.c: PUT, GET, DELETE /v1/admin/subscribers/<name>. */
void	admin_subs_init(struct event_base *base);
void	admin_subs_handle(struct evhttp_request *req, const char *name);
/* Shutdown: answer (503) what still waits for JetStream. */
void	admin_subs_fail_all(void);

/* admin-state.c: POST /v1/admin/subscribers/<name>/pause|resume. */
void	admin_state_handle(struct evhttp_request *req, const char *name,
	    int pause);
/* GET /v1/admin/subscribers/<name>/attempts */
struct evkeyvalq;
void	admin_attempts(struct evhttp_request *req, const char *name,
	    const struct evkeyvalq *q);
/* A subscriber's state, stateSince, stateReason (SPEC 17) into g. */
void	admin_gen_state(yajl_gen g, const struct subscriber *s);
/* Shutdown: answer (503) what still waits. */
void	admin_state_fail_all(void);

#endif
