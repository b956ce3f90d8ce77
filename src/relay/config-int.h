/*
 * config-int.h: what config.c and config-lists.c share, and nothing else
 * includes.  Main thread, like config_load, which calls them.
 */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include <yajl/yajl_tree.h>

#include "config.h"

/* Record a configuration error in err; always returns -1. */
int	config_err(struct config_error *err, const char *var, const char *field,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * TREATY_RELAY_PRODUCERS / _SUBSCRIBERS text into cfg (var: the name to
 * blame): 0, or -1 with err set.
 */
int	config_parse_producers(struct config *cfg, const char *text,
	    const char *var, struct config_error *err);
int	config_parse_subscribers(struct config *cfg, const char *text,
	    const char *var, struct config_error *err);
/*
 * TREATY_RELAY_ADMIN_TOKEN_SHA256 (one hash, or a comma-separated list)
 * into cfg->admin; after the producers and subscribers, whose tokens an
 * admin token may not share.
 */
int	config_parse_admin_tokens(struct config *cfg, const char *text,
	    const char *var, struct config_error *err);

/* An object's member by key, or NULL. */
yajl_val	 config_obj_get(const yajl_val o, const char *key);
/* The first key of o that is not in allowed (NULL-ended), or NULL. */
const char	*config_obj_unknown_key(const yajl_val o,
		    const char *const *allowed);
/*
 * tokenSha256 (one hash, or a list of them) into t: 0, or -1 with err
 * naming var and field.
 */
int		 config_parse_tokens(yajl_val v, struct token_list *t,
		    const char *var, const char *field,
		    struct config_error *err);
/*
 * Who else has one of t's hashes ("producer NAME" or "subscriber NAME"
 * into who), or NULL: among cfg's first nproducers producers but
 * self_producer, and its first nsubs subscribers but the one named
 * self_sub (either may be NULL).
 */
const char	*config_token_owner(const struct config *cfg,
		    size_t nproducers, size_t nsubs,
		    const struct token_list *t,
		    const struct producer *self_producer, const char *self_sub,
		    char *who, size_t wlen);
/* 1 when token lists a and b share a hash. */
int		 config_token_any(const struct token_list *a,
		    const struct token_list *b);

/*
 * The keys of a subscriber's definition, NULL-terminated: the list's and
 * a PUT's (whose "name" is the path's, refused in a body).
 */
extern const char *const config_subscriber_keys[];
/* How config_subscriber_parse reads one definition. */
struct sub_parse {
	/* Settings (private networks), producers, admin tokens and the
	 * subscribers whose tokens this one's may not share. */
	const struct config	*cfg;
	size_t			 nsubs;		/* cfg's first nsubs */
	const char		*var;		/* what an error blames */
	const char		*prefix;	/* of each field: "[3]." or "" */
	enum sub_from		 from;		/* deliverFrom's default */
	/*
	 * 1 for the API's definitions (SPEC 16): no "name" key (the path
	 * has it), no secret needed (the relay makes one), and no admin
	 * token's hash as an inbox's.
	 */
	int			 api;
};
/*
 * The JSON object o into s (whose name the caller has set): 0, or -1 with
 * err naming the field (p->prefix before it).  s's allocations are
 * config_free's or subscriber_clear's either way.
 */
int		 config_subscriber_parse(yajl_val o, struct subscriber *s,
		    const struct sub_parse *p, struct config_error *err);
/* Free what a subscriber's members hold (not s itself). */
void		 config_subscriber_clear(struct subscriber *s);
/* 1 when url may be pushed to (SPEC 3); else 0 with why. */
int		 config_url_allowed(const char *url, int allow_private,
		    const char **why);

#endif
