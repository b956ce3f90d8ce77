/*
 * subkv.h: this instance's view of the subscribers kept in JetStream's
 * TREATY_SUBSCRIBERS bucket (SPEC 16), fed by the bucket's watch
 * (store-kv.h), and the running list it makes with the configuration's
 * subscribers.  Loop thread only.
 *
 * Each entry keeps its value as stored (secrets sealed) and, when this
 * instance can use it, the subscriber it defines: its secrets opened
 * with TREATY_RELAY_SECRET_KEY_FILE's keys and its definition validated
 * as configuration is.  One that no key opens, or that this instance's
 * settings refuse, is logged and not delivered to (never with a wrong
 * secret); a reload that brings the key or the setting opens it again.
 */
#ifndef SUBKV_H
#define SUBKV_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct event_base;
struct subscriber;

/*
 * cfg is the running configuration (in place: a reload refills it);
 * apply runs on the loop when the usable subscribers changed, a few
 * changes together.
 */
void	subkv_init(struct event_base *base, const struct config *cfg,
	    void (*apply)(void));
void	subkv_free(void);
/*
 * The running list: a copy of each of cur's subscribers from the
 * configuration (those whose api is 0), then a copy of each usable entry
 * whose name the configuration does not have (logged once per revision).
 * Into *out (config_subscribers_set's to own); the count.
 */
size_t	subkv_merge(const struct subscriber *cur, size_t n,
	    struct subscriber **out);
/*
 * The configuration was reloaded: open and validate every entry again
 * (other keys, other settings); apply runs when that changed anything.
 */
void	subkv_reload(void);
/*
 * Name's entry: 1 with its revision (and *live 0 when this instance
 * cannot use it), or 0 when the bucket has no such key.
 */
int	subkv_find(const char *name, uint64_t *rev, int *live);
/*
 * The newest revision of the bucket that the running list has applied:
 * the bucket has one order, so every change up to it is in effect here.
 */
uint64_t subkv_applied(void);
/* Entries in the view. */
size_t	subkv_count(void);

#endif
