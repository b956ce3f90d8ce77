/*
 * config-int.h: what config.c and config-lists.c share, and nothing else
 * includes.  Main thread, like config_load, which calls them.
 */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

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

#endif
