/*
 * config-lists.c: the configuration's JSON lists, TREATY_RELAY_PRODUCERS
 * and TREATY_RELAY_SUBSCRIBERS (SPEC 2, 3, 4, 11, 13), into struct config.
 * Every error names the variable and the field ("[0].tokenSha256").  Main
 * thread, called by config_load.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "config-int.h"
#include "json.h"
#include "util.h"

/* See config.h. */
int
config_name_valid(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	return i >= 1 && i <= NAME_MAX_LEN;
}

/* Copy a SHA-256 in hex (TOKEN_HASH_HEX digits) as lowercase, or fail. */
static int
sha_hex_parse(const char *s, char out[TOKEN_HASH_HEX + 1])
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= TOKEN_HASH_HEX || !isxdigit((unsigned char)s[i]))
			return -1;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[i] = '\0';
	return i == TOKEN_HASH_HEX ? 0 : -1;
}

/* Keys an object may have; anything else is refused as a likely typo. */
const char *
config_obj_unknown_key(const yajl_val o, const char *const *allowed)
{
	size_t	 i, j;

	for (i = 0; i < o->u.object.len; i++) {
		for (j = 0; allowed[j] != NULL; j++)
			if (strcmp(o->u.object.keys[i], allowed[j]) == 0)
				break;
		if (allowed[j] == NULL)
			return o->u.object.keys[i];
	}
	return NULL;
}

/* Object member by key, or NULL. */
yajl_val
config_obj_get(const yajl_val o, const char *key)
{
	size_t	 i;

	for (i = 0; i < o->u.object.len; i++)
		if (strcmp(o->u.object.keys[i], key) == 0)
			return o->u.object.values[i];
	return NULL;
}

/*
 * Parse a JSON list; on failure fill err.  A key given twice in any
 * object is refused (SPEC 13): yajl's tree keeps both, and obj_get would
 * take the first, so a later "secret" would pass unchecked.
 */
static yajl_val
json_list(const char *text, const char *var, struct config_error *err)
{
	char		 ebuf[256], why[128], field[128];
	const char	*dup;
	size_t		 line, col;
	yajl_val	 v;

	v = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (v == NULL) {
		/*
		 * Say where, so that a long list can be fixed: the tree's
		 * message has no place, and its second line quotes the text
		 * (which may hold a secret), so only its first is kept.
		 */
		if (json_error_at(text, strlen(text), &line, &col, why,
		    sizeof(why)) == 0)
			config_err(err, var, "", "not valid JSON near line %zu, "
			    "column %zu: %s", line, col, why);
		else {
			ebuf[strcspn(ebuf, "\n")] = '\0';
			config_err(err, var, "", "not valid JSON: %s", ebuf);
		}
		return NULL;
	}
	if ((dup = json_dup_key(v, field, sizeof(field))) != NULL) {
		config_err(err, var, field, "duplicate key %s", dup);
		yajl_tree_free(v);
		return NULL;
	}
	if (!YAJL_IS_ARRAY(v)) {
		yajl_tree_free(v);
		config_err(err, var, "", "must be a JSON list");
		return NULL;
	}
	return v;
}

/*
 * The part every list entry shares: entry i is an object with no unknown
 * key and a valid "name" not used by an earlier entry.  Earlier entries'
 * names are at base + k * stride (name is each struct's first member).
 */
static int
entry_start(yajl_val o, size_t i, const char *const *keys, const void *base,
    size_t stride, char name[NAME_MAX_LEN + 1], const char *var,
    struct config_error *err)
{
	char		 field[128];
	const char	*bad;
	yajl_val	 v;
	size_t		 k;

	snprintf(field, sizeof(field), "[%zu]", i);
	if (!YAJL_IS_OBJECT(o))
		return config_err(err, var, field, "must be an object");
	if ((bad = config_obj_unknown_key(o, keys)) != NULL) {
		snprintf(field, sizeof(field), "[%zu].%s", i, bad);
		return config_err(err, var, field, "unknown key");
	}
	snprintf(field, sizeof(field), "[%zu].name", i);
	v = config_obj_get(o, "name");
	if (v == NULL || !YAJL_IS_STRING(v) || !config_name_valid(v->u.string))
		return config_err(err, var, field, "must be 1-%d of A-Za-z0-9_-",
		    NAME_MAX_LEN);
	for (k = 0; k < i; k++)
		if (strcmp((const char *)base + k * stride, v->u.string) == 0)
			return config_err(err, var, field, "duplicate name %s",
			    v->u.string);
	snprintf(name, NAME_MAX_LEN + 1, "%s", v->u.string);
	return 0;
}

/*
 * tokenSha256: one SHA-256 in hex, or a list of 1 to CONFIG_MAX_TOKENS of
 * them (newest first), none twice.
 */
int
config_parse_tokens(yajl_val v, struct token_list *t, const char *var,
    const char *field, struct config_error *err)
{
	yajl_val	 one;
	size_t		 i, k, n = 1;

	t->n = 0;
	if (v != NULL && YAJL_IS_ARRAY(v))
		n = v->u.array.len;
	if (v == NULL || (!YAJL_IS_STRING(v) && !YAJL_IS_ARRAY(v)) || n < 1 ||
	    n > CONFIG_MAX_TOKENS)
		return config_err(err, var, field, "must be "
		    API_STR(TOKEN_HASH_HEX) " hex digits (the SHA-256 of the "
		    "token: printf %%s TOKEN | sha256sum), or a list of 1 to %d "
		    "of them", CONFIG_MAX_TOKENS);
	for (i = 0; i < n; i++) {
		one = YAJL_IS_ARRAY(v) ? v->u.array.values[i] : v;
		if (!YAJL_IS_STRING(one) ||
		    sha_hex_parse(one->u.string, t->hash[i]) == -1)
			return config_err(err, var, field, "must be "
			    API_STR(TOKEN_HASH_HEX) " hex digits (the SHA-256 "
			    "of the token: printf %%s TOKEN | sha256sum)%s",
			    YAJL_IS_ARRAY(v) ? " in each place" : "");
		for (k = 0; k < i; k++)
			if (strcmp(t->hash[k], t->hash[i]) == 0)
				return config_err(err, var, field, "the same hash "
				    "twice");
		t->n++;
	}
	return 0;
}

/*
 * The producer or inbox that already has one of t's hashes ("producer
 * NAME" or "subscriber NAME" into who), or NULL: the first nproducers
 * producers other than self_producer, and the first nsubs subscribers
 * other than the one named self_sub.  One token, one role: an inbox's
 * token never publishes, nor opens another.
 */
const char *
config_token_owner(const struct config *cfg, size_t nproducers, size_t nsubs,
    const struct token_list *t, const struct producer *self_producer,
    const char *self_sub, char *who, size_t wlen)
{
	const struct subscriber	*sc;
	size_t			 i;

	for (i = 0; i < nproducers; i++)
		if (&cfg->producers[i] != self_producer &&
		    config_token_any(&cfg->producers[i].tokens, t)) {
			snprintf(who, wlen, "producer %s",
			    cfg->producers[i].name);
			return who;
		}
	for (i = 0; i < nsubs; i++) {
		sc = &cfg->subscribers[i];
		if (sc->kind == SUB_PULL && (self_sub == NULL ||
		    strcmp(sc->name, self_sub) != 0) &&
		    config_token_any(&sc->tokens, t)) {
			snprintf(who, wlen, "subscriber %s", sc->name);
			return who;
		}
	}
	return NULL;
}

/* 1 when lists a and b share a hash. */
int
config_token_any(const struct token_list *a, const struct token_list *b)
{
	size_t	 j, k;

	for (j = 0; j < a->n; j++)
		for (k = 0; k < b->n; k++)
			if (strcmp(a->hash[j], b->hash[k]) == 0)
				return 1;
	return 0;
}

/* Parse TREATY_RELAY_PRODUCERS. */
int
config_parse_producers(struct config *cfg, const char *text, const char *var,
    struct config_error *err)
{
	static const char *const keys[] = { "name", "tokenSha256", "subjects",
	    "rate", "burst", NULL };
	yajl_val	 list, o, v;
	size_t		 i, k;
	char		 field[128], who[NAME_MAX_LEN + 16];
	int		 rc = -1;

	if ((list = json_list(text, var, err)) == NULL)
		return -1;
	cfg->nproducers = list->u.array.len;
	cfg->producers = xcalloc(cfg->nproducers, sizeof(*cfg->producers));
	for (i = 0; i < list->u.array.len; i++) {
		struct producer	*p = &cfg->producers[i];

		o = list->u.array.values[i];
		if (entry_start(o, i, keys, cfg->producers, sizeof(*p), p->name,
		    var, err) == -1)
			goto out;
		snprintf(field, sizeof(field), "[%zu].tokenSha256", i);
		if (config_parse_tokens(config_obj_get(o, "tokenSha256"), &p->tokens, var,
		    field, err) == -1)
			goto out;
		if (config_token_owner(cfg, i, 0, &p->tokens, p, NULL, who,
		    sizeof(who)) != NULL) {
			config_err(err, var, field, "same token as %s", who);
			goto out;
		}
		snprintf(field, sizeof(field), "[%zu].subjects", i);
		v = config_obj_get(o, "subjects");
		if (v == NULL || !YAJL_IS_ARRAY(v) || v->u.array.len == 0) {
			config_err(err, var, field, "must be a non-empty list of "
			    "subject patterns");
			goto out;
		}
		p->subjects = xcalloc(v->u.array.len, sizeof(char *));
		for (k = 0; k < v->u.array.len; k++) {
			yajl_val s = v->u.array.values[k];

			snprintf(field, sizeof(field), "[%zu].subjects[%zu]",
			    i, k);
			if (!YAJL_IS_STRING(s) ||
			    !treaty_pattern_valid(s->u.string)) {
				config_err(err, var, field, "not a subject pattern "
				    "(tokens of A-Za-z0-9_-, '*', or a final "
				    "'>')");
				goto out;
			}
			p->subjects[p->nsubjects++] = xstrdup(s->u.string);
		}
		/* SPEC 13: a token bucket per producer and instance. */
		snprintf(field, sizeof(field), "[%zu].rate", i);
		if ((v = config_obj_get(o, "rate")) != NULL) {
			if (!YAJL_IS_DOUBLE(v) || YAJL_GET_DOUBLE(v) <= 0 ||
			    YAJL_GET_DOUBLE(v) > PRODUCER_RATE_MAX) {
				config_err(err, var, field, "must be a number of "
				    "events per second, over 0 and at most "
				    "%.0f", PRODUCER_RATE_MAX);
				goto out;
			}
			p->rate = YAJL_GET_DOUBLE(v);
			p->burst = p->rate < 1 ? 1 : (int)(p->rate + 0.999999);
		}
		snprintf(field, sizeof(field), "[%zu].burst", i);
		if ((v = config_obj_get(o, "burst")) != NULL) {
			if (p->rate == 0) {
				config_err(err, var, field, "needs rate");
				goto out;
			}
			if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1 ||
			    YAJL_GET_INTEGER(v) > PRODUCER_BURST_MAX) {
				config_err(err, var, field, "must be an integer "
				    "1-%d", PRODUCER_BURST_MAX);
				goto out;
			}
			p->burst = (int)YAJL_GET_INTEGER(v);
		}
	}
	rc = 0;
out:
	yajl_tree_free(list);
	return rc;
}

/* Parse TREATY_RELAY_SUBSCRIBERS (push and pull subscribers). */
int
config_parse_subscribers(struct config *cfg, const char *text, const char *var,
    struct config_error *err)
{
	struct sub_parse p;
	yajl_val	 list;
	size_t		 i;
	char		 prefix[32];
	int		 rc = -1;

	if ((list = json_list(text, var, err)) == NULL)
		return -1;
	cfg->nsubscribers = list->u.array.len;
	cfg->subscribers = xcalloc(cfg->nsubscribers, sizeof(*cfg->subscribers));
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.var = var;
	p.prefix = prefix;
	p.from = SUB_FROM_CONFIG_DEFAULT;
	for (i = 0; i < list->u.array.len; i++) {
		struct subscriber	*s = &cfg->subscribers[i];
		yajl_val		 o = list->u.array.values[i];

		if (entry_start(o, i, config_subscriber_keys, cfg->subscribers,
		    sizeof(*s),
		    s->name, var, err) == -1)
			goto out;
		snprintf(prefix, sizeof(prefix), "[%zu].", i);
		/* Tokens are compared with the entries before this one. */
		p.nsubs = i;
		if (config_subscriber_parse(o, s, &p, err) == -1)
			goto out;
	}
	rc = 0;
out:
	yajl_tree_free(list);
	return rc;
}

/* Parse TREATY_RELAY_ADMIN_TOKEN_SHA256 (SPEC 15). */
int
config_parse_admin_tokens(struct config *cfg, const char *text,
    const char *var, struct config_error *err)
{
	struct token_list	*t = &cfg->admin;
	char			*copy = xstrdup(text), *tok, *next, *end;
	char			 field[16], who[NAME_MAX_LEN + 16];
	size_t			 k;
	int			 rc = -1;

	t->n = 0;
	for (tok = copy; isspace((unsigned char)*tok); tok++)
		;
	/* An empty value means no admin routes, as an unset one does. */
	for (next = *tok != '\0' ? copy : NULL; next != NULL;) {
		tok = next;
		if ((next = strchr(tok, ',')) != NULL)
			*next++ = '\0';
		while (isspace((unsigned char)*tok))
			tok++;
		for (end = tok + strlen(tok); end > tok &&
		    isspace((unsigned char)end[-1]); end--)
			end[-1] = '\0';
		snprintf(field, sizeof(field), "[%zu]", t->n);
		if (t->n == CONFIG_MAX_TOKENS) {
			config_err(err, var, "", "at most %d hashes",
			    CONFIG_MAX_TOKENS);
			goto out;
		}
		if (sha_hex_parse(tok, t->hash[t->n]) == -1) {
			config_err(err, var, field, "must be "
			    API_STR(TOKEN_HASH_HEX) " hex digits (the SHA-256 "
			    "of the token: printf %%s TOKEN | sha256sum)");
			goto out;
		}
		for (k = 0; k < t->n; k++)
			if (strcmp(t->hash[k], t->hash[t->n]) == 0) {
				config_err(err, var, field, "the same hash "
				    "twice");
				goto out;
			}
		t->n++;
	}
	if (config_token_owner(cfg, cfg->nproducers, cfg->nsubscribers, t,
	    NULL, NULL, who, sizeof(who)) != NULL) {
		config_err(err, var, "", "a hash %s has too (one token, one "
		    "role)", who);
		goto out;
	}
	rc = 0;
out:
	if (rc == -1)
		t->n = 0;
	free(copy);
	return rc;
}

/*
 * The producer whose token hash is sha_hex.  Every configured hash is
 * compared, in constant time, so the answer's timing says nothing about
 * which hash (or how much of one) matched.
 */
const struct producer *
config_find_producer(const struct config *cfg, const char *sha_hex)
{
	const struct producer	*found = NULL;
	size_t			 i;

	for (i = 0; i < cfg->nproducers; i++)
		if (config_token_match(&cfg->producers[i].tokens, sha_hex))
			found = &cfg->producers[i];
	return found;
}

/* The pull subscriber whose token hash equals sha_hex, in constant time. */
const struct subscriber *
config_find_inbox(const struct config *cfg, const char *sha_hex)
{
	const struct subscriber	*found = NULL;
	size_t			 i;

	for (i = 0; i < cfg->nsubscribers; i++)
		if (cfg->subscribers[i].kind == SUB_PULL &&
		    config_token_match(&cfg->subscribers[i].tokens, sha_hex))
			found = &cfg->subscribers[i];
	return found;
}

/* One of a token list's hashes, each compared in constant time. */
int
config_token_match(const struct token_list *t, const char *sha_hex)
{
	size_t	 i;
	int	 match = 0;

	for (i = 0; i < t->n; i++)
		match |= treaty_memeq(t->hash[i], sha_hex, TOKEN_HASH_HEX);
	return match;
}
