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

#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/http.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "config-int.h"
#include "json.h"
#include "netcheck.h"
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
static const char *
obj_unknown_key(const yajl_val o, const char *const *allowed)
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
static yajl_val
obj_get(const yajl_val o, const char *key)
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
	if ((bad = obj_unknown_key(o, keys)) != NULL) {
		snprintf(field, sizeof(field), "[%zu].%s", i, bad);
		return config_err(err, var, field, "unknown key");
	}
	snprintf(field, sizeof(field), "[%zu].name", i);
	v = obj_get(o, "name");
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
static int
parse_tokens(yajl_val v, struct token_list *t, const char *var,
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
 * The producer or inbox, other than self, that already has one of t's
 * hashes ("producer NAME" or "subscriber NAME" into who), or NULL.  One
 * token, one role: an inbox's token never publishes, nor opens another.
 */
static const char *
token_owner(const struct config *cfg, size_t nproducers, size_t nsubs,
    const struct token_list *t, const void *self, char *who, size_t wlen)
{
	const struct token_list	*o;
	size_t			 i, j, k;

	for (i = 0; i < nproducers + nsubs; i++) {
		if (i < nproducers) {
			o = &cfg->producers[i].tokens;
			if ((const void *)&cfg->producers[i] == self)
				continue;
		} else {
			if (cfg->subscribers[i - nproducers].kind != SUB_PULL ||
			    (const void *)&cfg->subscribers[i - nproducers] ==
			    self)
				continue;
			o = &cfg->subscribers[i - nproducers].tokens;
		}
		for (j = 0; j < o->n; j++)
			for (k = 0; k < t->n; k++)
				if (strcmp(o->hash[j], t->hash[k]) == 0) {
					snprintf(who, wlen, "%s %s", i <
					    nproducers ? "producer" :
					    "subscriber", i < nproducers ?
					    cfg->producers[i].name :
					    cfg->subscribers[i - nproducers].name);
					return who;
				}
	}
	return NULL;
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
		if (parse_tokens(obj_get(o, "tokenSha256"), &p->tokens, var,
		    field, err) == -1)
			goto out;
		if (token_owner(cfg, i, 0, &p->tokens, p, who,
		    sizeof(who)) != NULL) {
			config_err(err, var, field, "same token as %s", who);
			goto out;
		}
		snprintf(field, sizeof(field), "[%zu].subjects", i);
		v = obj_get(o, "subjects");
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
		if ((v = obj_get(o, "rate")) != NULL) {
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
		if ((v = obj_get(o, "burst")) != NULL) {
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

/*
 * 1 for a single-label host name: one DNS label (letters, digits, '-'),
 * not all digits, so neither an IPv6 literal nor a number that resolvers
 * read as an IPv4 address (http://2130706433/) passes as one.
 */
static int
single_label(const char *host)
{
	size_t	 i;
	int	 letter = 0;

	for (i = 0; host[i] != '\0'; i++) {
		if (isalpha((unsigned char)host[i]))
			letter = 1;
		else if (!isdigit((unsigned char)host[i]) && host[i] != '-')
			return 0;
	}
	return i > 0 && i <= 63 && letter && host[0] != '-' &&
	    host[i - 1] != '-';
}

/*
 * 1 for the hosts SPEC 3 allows plain http (and their private addresses):
 * localhost, 127.0.0.1, ::1 (bracketed or not) and single-label names.
 */
int
config_host_is_local(const char *host)
{
	return strcasecmp(host, "localhost") == 0 ||
	    strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0 ||
	    strcmp(host, "::1") == 0 || single_label(host);
}

/*
 * With standardWebhooks, a secret written "whsec_..." is that
 * specification's base64 form: one that does not decode could sign no
 * webhook-signature, so it is refused at load rather than at each
 * delivery.  The index of the first such secret, or -1.
 */
static long
sub_whsec_bad(const struct subscriber *s)
{
	struct treaty_secret	 sec;
	char			 out[TREATY_SW_HEADER_SIZE(1)];
	size_t			 j;

	for (j = 0; j < s->nsecrets; j++) {
		sec.key = s->secrets[j];
		sec.len = strlen(s->secrets[j]);
		if (treaty_sw_sign(&sec, 1, "check", 0, "", 0, out,
		    sizeof(out)) == TREATY_E_INVALID)
			return (long)j;
	}
	return -1;
}

/*
 * 1 for a host plain http may reach once the operator has said the
 * network is theirs (TREATY_RELAY_ALLOW_PRIVATE_NETWORKS): an address
 * that is not public, or a name, which must then resolve to such
 * addresses only (deliver.c checks at each lookup).  A public address is
 * never reached in clear.
 */
static int
private_host(const char *host)
{
	struct sockaddr_in	 in;
	struct sockaddr_in6	 in6;
	char			 buf[64];
	size_t			 n = strlen(host);

	memset(&in, 0, sizeof(in));
	memset(&in6, 0, sizeof(in6));
	in.sin_family = AF_INET;
	in6.sin6_family = AF_INET6;
	if (netcheck_pton(AF_INET, host, &in.sin_addr) == 1)
		return netcheck_classify((struct sockaddr *)&in) != NET_PUBLIC;
	if (host[0] == '[' && n >= 2 && n - 2 < sizeof(buf)) {
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		return netcheck_pton(AF_INET6, buf, &in6.sin6_addr) == 1 &&
		    netcheck_classify((struct sockaddr *)&in6) != NET_PUBLIC;
	}
	return strchr(host, ':') == NULL;	/* a name */
}

/*
 * 1 when url may be used for push delivery: https anywhere; plain http for
 * localhost, 127.0.0.1, ::1 or a single-label host (SPEC 3), and with
 * allow_private for a private address or a name too.
 */
static int
url_allowed(const char *url, int allow_private, const char **why)
{
	struct evhttp_uri	*u;
	const char		*scheme, *host;
	int			 ok = 0;

	u = evhttp_uri_parse_with_flags(url, 0);
	if (u == NULL) {
		*why = "not a URL";
		return 0;
	}
	scheme = evhttp_uri_get_scheme(u);
	host = evhttp_uri_get_host(u);
	if (scheme == NULL || host == NULL || host[0] == '\0')
		*why = "needs a scheme and a host";
	else if (evhttp_uri_get_userinfo(u) != NULL)
		*why = "must not carry user information";
	else if (evhttp_uri_get_fragment(u) != NULL)
		*why = "must not carry a fragment";
	else if (strcasecmp(scheme, "https") == 0)
		ok = 1;
	else if (strcasecmp(scheme, "http") != 0)
		*why = "scheme must be https (or http for a local host)";
	else if (config_host_is_local(host) ||
	    (allow_private && private_host(host)))
		ok = 1;
	else if (allow_private)
		*why = "plain http goes to a private address or a name, never "
		    "to a public address: use https";
	else
		*why = "plain http only for localhost, 127.0.0.1, ::1 or a "
		    "single-label host: use https, or set "
		    "TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 when the network is "
		    "yours";
	evhttp_uri_free(u);
	return ok;
}

/*
 * deliverFrom; see config.h.  A time before 1970 starts where all does;
 * one still to come starts, when the consumer is made, at the next event
 * (JetStream looks the time up then).
 */
int
config_deliver_from(const char *s, struct subscriber *sc)
{
	int64_t		 sec;
	long		 nsec;

	if (strcmp(s, "all") == 0) {
		sc->from = SUB_FROM_ALL;
		sc->from_ns = 0;
	} else if (strcmp(s, "new") == 0) {
		sc->from = SUB_FROM_NEW;
		sc->from_ns = 0;
	} else if (treaty_rfc3339_parse(s, &sec, &nsec) == TREATY_OK &&
	    sec < INT64_MAX / NS_PER_S) {	/* in nanoseconds: before 2262 */
		sc->from = SUB_FROM_TIME;
		sc->from_ns = sec < 0 ? 0 : sec * NS_PER_S + nsec;
	} else
		return -1;
	return 0;
}

/* Parse TREATY_RELAY_SUBSCRIBERS (push and pull subscribers). */
int
config_parse_subscribers(struct config *cfg, const char *text, const char *var,
    struct config_error *err)
{
	static const char *const keys[] = { "name", "url", "secret",
	    "secrets", "filter", "maxDeliver", "maxInFlight",
	    "standardWebhooks", "tokenSha256", "deliverFrom", NULL };
	yajl_val	 list, o, v;
	size_t		 i, j;
	long		 bad;
	char		 field[128], who[NAME_MAX_LEN + 16];
	const char	*why;
	int		 rc = -1;

	if ((list = json_list(text, var, err)) == NULL)
		return -1;
	cfg->nsubscribers = list->u.array.len;
	cfg->subscribers = xcalloc(cfg->nsubscribers, sizeof(*cfg->subscribers));
	for (i = 0; i < list->u.array.len; i++) {
		struct subscriber	*s = &cfg->subscribers[i];
		yajl_val		 url, sec, secs, tok;

		o = list->u.array.values[i];
		if (entry_start(o, i, keys, cfg->subscribers, sizeof(*s),
		    s->name, var, err) == -1)
			goto out;
		snprintf(field, sizeof(field), "[%zu].filter", i);
		v = obj_get(o, "filter");
		if (v == NULL || !YAJL_IS_STRING(v) ||
		    !treaty_pattern_valid(v->u.string) ||
		    !treaty_pattern_within(v->u.string, "evt.>")) {
			config_err(err, var, field, "must be a subject pattern "
			    "inside evt.>");
			goto out;
		}
		s->filter = xstrdup(v->u.string);

		url = obj_get(o, "url");
		tok = obj_get(o, "tokenSha256");
		if (url != NULL && tok != NULL) {
			snprintf(field, sizeof(field), "[%zu].tokenSha256", i);
			config_err(err, var, field, "a push subscriber (with url) "
			    "has no token");
			goto out;
		}
		if (url == NULL && tok == NULL) {
			snprintf(field, sizeof(field), "[%zu].url", i);
			config_err(err, var, field, "needs url (push) or "
			    "tokenSha256 (pull)");
			goto out;
		}
		if (url != NULL) {
			s->kind = SUB_PUSH;
			snprintf(field, sizeof(field), "[%zu].url", i);
			if (!YAJL_IS_STRING(url)) {
				config_err(err, var, field, "must be a string");
				goto out;
			}
			if (!url_allowed(url->u.string,
			    cfg->allow_private_networks, &why)) {
				config_err(err, var, field, "%s", why);
				goto out;
			}
			s->url = xstrdup(url->u.string);
		} else {
			s->kind = SUB_PULL;
			snprintf(field, sizeof(field), "[%zu].tokenSha256", i);
			if (parse_tokens(tok, &s->tokens, var, field, err) == -1)
				goto out;
			if (token_owner(cfg, cfg->nproducers, i, &s->tokens, s,
			    who, sizeof(who)) != NULL) {
				config_err(err, var, field, "same token as %s", who);
				goto out;
			}
		}

		sec = obj_get(o, "secret");
		secs = obj_get(o, "secrets");
		snprintf(field, sizeof(field), "[%zu].secret", i);
		if (sec != NULL && secs != NULL) {
			config_err(err, var, field, "give secret or secrets, not "
			    "both");
			goto out;
		}
		if (sec != NULL) {
			if (!YAJL_IS_STRING(sec) ||
			    strlen(sec->u.string) < SUB_SECRET_MIN) {
				config_err(err, var, field, "must be a string of at "
				    "least %d bytes", SUB_SECRET_MIN);
				goto out;
			}
			s->secrets = xcalloc(1, sizeof(char *));
			s->secrets[s->nsecrets++] = xstrdup(sec->u.string);
		} else if (secs != NULL) {
			snprintf(field, sizeof(field), "[%zu].secrets", i);
			if (!YAJL_IS_ARRAY(secs) || secs->u.array.len == 0 ||
			    secs->u.array.len > TREATY_MAX_SECRETS) {
				config_err(err, var, field, "must be a list of 1 to "
				    "%d secrets", TREATY_MAX_SECRETS);
				goto out;
			}
			s->secrets = xcalloc(secs->u.array.len, sizeof(char *));
			for (j = 0; j < secs->u.array.len; j++) {
				yajl_val x = secs->u.array.values[j];

				snprintf(field, sizeof(field),
				    "[%zu].secrets[%zu]", i, j);
				if (!YAJL_IS_STRING(x) ||
				    strlen(x->u.string) < SUB_SECRET_MIN) {
					config_err(err, var, field, "must be a string "
					    "of at least %d bytes", SUB_SECRET_MIN);
					goto out;
				}
				s->secrets[s->nsecrets++] = xstrdup(x->u.string);
			}
		} else {
			config_err(err, var, field, "needs secret or secrets (at "
			    "least %d bytes)", SUB_SECRET_MIN);
			goto out;
		}

		s->max_deliver = SUB_MAX_DELIVER_DEFAULT;
		/*
		 * Push: concurrent deliveries (SPEC 3).  Pull: leases held at
		 * once, JetStream's own default, so a GET of 256 is not cut
		 * short by a small limit.
		 */
		s->max_in_flight = s->kind == SUB_PULL ? SUB_PULL_IN_FLIGHT :
		    SUB_PUSH_IN_FLIGHT;
		snprintf(field, sizeof(field), "[%zu].maxDeliver", i);
		if ((v = obj_get(o, "maxDeliver")) != NULL && (!YAJL_IS_INTEGER(v)
		    || YAJL_GET_INTEGER(v) < 1 ||
		    YAJL_GET_INTEGER(v) > SUB_MAX_DELIVER_MAX)) {
			config_err(err, var, field, "must be an integer 1-%d",
			    SUB_MAX_DELIVER_MAX);
			goto out;
		} else if (v != NULL)
			s->max_deliver = (int)YAJL_GET_INTEGER(v);
		snprintf(field, sizeof(field), "[%zu].maxInFlight", i);
		if ((v = obj_get(o, "maxInFlight")) != NULL && (!YAJL_IS_INTEGER(v)
		    || YAJL_GET_INTEGER(v) < 1 ||
		    YAJL_GET_INTEGER(v) > SUB_IN_FLIGHT_MAX)) {
			config_err(err, var, field, "must be an integer 1-%d",
			    SUB_IN_FLIGHT_MAX);
			goto out;
		} else if (v != NULL)
			s->max_in_flight = (int)YAJL_GET_INTEGER(v);
		snprintf(field, sizeof(field), "[%zu].standardWebhooks", i);
		if ((v = obj_get(o, "standardWebhooks")) != NULL) {
			if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
				config_err(err, var, field, "must be true or false");
				goto out;
			}
			s->standard_webhooks = YAJL_IS_TRUE(v);
		}
		s->from = SUB_FROM_CONFIG_DEFAULT;
		snprintf(field, sizeof(field), "[%zu].deliverFrom", i);
		if ((v = obj_get(o, "deliverFrom")) != NULL &&
		    (!YAJL_IS_STRING(v) ||
		    config_deliver_from(v->u.string, s) == -1)) {
			config_err(err, var, field, "must be all, new or an RFC "
			    "3339 time such as 2026-01-02T03:04:05Z");
			goto out;
		}
		if (s->standard_webhooks && (bad = sub_whsec_bad(s)) >= 0) {
			if (obj_get(o, "secrets") != NULL)
				snprintf(field, sizeof(field),
				    "[%zu].secrets[%ld]", i, bad);
			else
				snprintf(field, sizeof(field), "[%zu].secret",
				    i);
			config_err(err, var, field, "a whsec_ secret must be "
			    "base64 of at most 256 bytes (standardWebhooks)");
			goto out;
		}
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
	if (token_owner(cfg, cfg->nproducers, cfg->nsubscribers, t, NULL, who,
	    sizeof(who)) != NULL) {
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
