/*
 * config-subscriber.c: one subscriber's definition (SPEC 3, 4, 16), from
 * the JSON object that holds it, into struct subscriber: an entry of
 * TREATY_RELAY_SUBSCRIBERS, a PUT's body, a value of the TREATY_SUBSCRIBERS
 * bucket.  The one place a subscriber is validated, so that the API
 * refuses exactly what the configuration refuses; every error names the
 * field (with the list's "[i]." before it when there is a list).  Main
 * thread; pure but for libevent's URL parser.  And what a subscriber is
 * beyond its parse: copied, compared, freed, its secrets prepared to sign.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/http.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "config-int.h"
#include "netcheck.h"
#include "util.h"

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
int
config_url_allowed(const char *url, int allow_private, const char **why)
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


/* An error about field (prefixed as p says); always -1. */
#define SUB_ERR(...)	config_err(err, p->var, field, __VA_ARGS__)

/* The field's name as p prefixes it, into field. */
static void
sub_field(char *field, size_t len, const struct sub_parse *p,
    const char *name)
{
	snprintf(field, len, "%s%s", p->prefix, name);
}

/* secret or secrets into s; with p->api, neither is allowed (generated). */
static int
sub_secrets(yajl_val o, struct subscriber *s, const struct sub_parse *p,
    struct config_error *err)
{
	yajl_val	 sec = config_obj_get(o, "secret");
	yajl_val	 secs = config_obj_get(o, "secrets");
	char		 field[160], name[32];
	size_t		 j;

	sub_field(field, sizeof(field), p, "secret");
	if (sec != NULL && secs != NULL)
		return SUB_ERR("give secret or secrets, not both");
	if (sec != NULL) {
		if (!YAJL_IS_STRING(sec) || strlen(sec->u.string) <
		    SUB_SECRET_MIN)
			return SUB_ERR("must be a string of at least %d bytes",
			    SUB_SECRET_MIN);
		s->secrets = xcalloc(1, sizeof(char *));
		s->secrets[s->nsecrets++] = xstrdup(sec->u.string);
	} else if (secs != NULL) {
		sub_field(field, sizeof(field), p, "secrets");
		if (!YAJL_IS_ARRAY(secs) || secs->u.array.len == 0 ||
		    secs->u.array.len > TREATY_MAX_SECRETS)
			return SUB_ERR("must be a list of 1 to %d secrets",
			    TREATY_MAX_SECRETS);
		s->secrets = xcalloc(secs->u.array.len, sizeof(char *));
		for (j = 0; j < secs->u.array.len; j++) {
			yajl_val x = secs->u.array.values[j];

			snprintf(name, sizeof(name), "secrets[%zu]", j);
			sub_field(field, sizeof(field), p, name);
			if (!YAJL_IS_STRING(x) || strlen(x->u.string) <
			    SUB_SECRET_MIN)
				return SUB_ERR("must be a string of at least %d "
				    "bytes", SUB_SECRET_MIN);
			s->secrets[s->nsecrets++] = xstrdup(x->u.string);
		}
	} else if (!p->api)
		return SUB_ERR("needs secret or secrets (at least %d bytes)",
		    SUB_SECRET_MIN);
	return 0;
}

/* An integer setting in [1, max] into *out, when o has it. */
static int
sub_int(yajl_val o, const char *key, int max, int *out,
    const struct sub_parse *p, struct config_error *err)
{
	yajl_val	 v = config_obj_get(o, key);
	char		 field[160];

	if (v == NULL)
		return 0;
	sub_field(field, sizeof(field), p, key);
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1 ||
	    YAJL_GET_INTEGER(v) > max)
		return SUB_ERR("must be an integer 1-%d", max);
	*out = (int)YAJL_GET_INTEGER(v);
	return 0;
}

/* A subscriber's keys; see config-int.h. */
const char *const config_subscriber_keys[] = { "name", "url", "secret",
	"secrets", "filter", "maxDeliver", "maxInFlight", "standardWebhooks",
	"tokenSha256", "deliverFrom", "breaker", "rateLimit", "ordered", NULL
};

/*
 * breaker: {"failures": N}, N 0 (off) to SUB_BREAKER_MAX, default
 * SUB_BREAKER_DEFAULT; push only (a pull subscriber's worker is not
 * probed: its inbox is paused by hand).
 */
static int
sub_breaker(yajl_val o, struct subscriber *s, const struct sub_parse *p,
    struct config_error *err)
{
	static const char *const keys[] = { "failures", NULL };
	yajl_val	 b = config_obj_get(o, "breaker"), v;
	const char	*bad;
	char		 field[160], name[32];

	s->breaker_failures = s->kind == SUB_PUSH ? SUB_BREAKER_DEFAULT : 0;
	if (b == NULL)
		return 0;
	sub_field(field, sizeof(field), p, "breaker");
	if (s->kind != SUB_PUSH)
		return SUB_ERR("only a push subscriber (with url) has a "
		    "breaker");
	if (!YAJL_IS_OBJECT(b))
		return SUB_ERR("must be an object such as {\"failures\": 20}");
	if ((bad = config_obj_unknown_key(b, keys)) != NULL) {
		snprintf(name, sizeof(name), "breaker.%s", bad);
		sub_field(field, sizeof(field), p, name);
		return SUB_ERR("unknown key");
	}
	sub_field(field, sizeof(field), p, "breaker.failures");
	if ((v = config_obj_get(b, "failures")) == NULL)
		return 0;
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 ||
	    YAJL_GET_INTEGER(v) > SUB_BREAKER_MAX)
		return SUB_ERR("must be an integer 0-%d (0: no breaker)",
		    SUB_BREAKER_MAX);
	s->breaker_failures = (int)YAJL_GET_INTEGER(v);
	return 0;
}

/* One subscriber's definition; see config-int.h. */
int
config_subscriber_parse(yajl_val o, struct subscriber *s,
    const struct sub_parse *p, struct config_error *err)
{
	yajl_val	 v, url, tok;
	const char	*why, *bad;
	char		 field[160], who[NAME_MAX_LEN + 16];
	long		 badsec;

	sub_field(field, sizeof(field), p, "");
	if (!YAJL_IS_OBJECT(o))
		return SUB_ERR("must be an object");
	/* The API's name is the path's: "name" in a body is unknown. */
	if ((bad = config_obj_unknown_key(o, config_subscriber_keys)) != NULL ||
	    (p->api && config_obj_get(o, "name") != NULL)) {
		sub_field(field, sizeof(field), p, bad != NULL ? bad : "name");
		return SUB_ERR("unknown key");
	}
	sub_field(field, sizeof(field), p, "filter");
	v = config_obj_get(o, "filter");
	if (v == NULL || !YAJL_IS_STRING(v) ||
	    !treaty_pattern_valid(v->u.string) ||
	    !treaty_pattern_within(v->u.string, "evt.>"))
		return SUB_ERR("must be a subject pattern inside evt.>");
	s->filter = xstrdup(v->u.string);

	url = config_obj_get(o, "url");
	tok = config_obj_get(o, "tokenSha256");
	if (url != NULL && tok != NULL) {
		sub_field(field, sizeof(field), p, "tokenSha256");
		return SUB_ERR("a push subscriber (with url) has no token");
	}
	if (url == NULL && tok == NULL) {
		sub_field(field, sizeof(field), p, "url");
		return SUB_ERR("needs url (push) or tokenSha256 (pull)");
	}
	if (url != NULL) {
		s->kind = SUB_PUSH;
		sub_field(field, sizeof(field), p, "url");
		if (!YAJL_IS_STRING(url))
			return SUB_ERR("must be a string");
		if (!config_url_allowed(url->u.string,
		    p->cfg->allow_private_networks, &why))
			return SUB_ERR("%s", why);
		s->url = xstrdup(url->u.string);
	} else {
		s->kind = SUB_PULL;
		sub_field(field, sizeof(field), p, "tokenSha256");
		if (config_parse_tokens(tok, &s->tokens, p->var, field,
		    err) == -1)
			return -1;
		if (config_token_owner(p->cfg, p->cfg->nproducers, p->nsubs,
		    &s->tokens, NULL, s->name, who, sizeof(who)) != NULL)
			return SUB_ERR("same token as %s", who);
		if (p->api && config_token_any(&p->cfg->admin, &s->tokens))
			return SUB_ERR("an admin token's hash (one token, one "
			    "role)");
	}
	if (sub_secrets(o, s, p, err) == -1)
		return -1;

	s->max_deliver = SUB_MAX_DELIVER_DEFAULT;
	/*
	 * Push: concurrent deliveries (SPEC 3).  Pull: leases held at
	 * once, JetStream's own default, so a GET of 256 is not cut
	 * short by a small limit.
	 */
	s->max_in_flight = s->kind == SUB_PULL ? SUB_PULL_IN_FLIGHT :
	    SUB_PUSH_IN_FLIGHT;
	if (sub_int(o, "maxDeliver", SUB_MAX_DELIVER_MAX, &s->max_deliver, p,
	    err) == -1 || sub_int(o, "maxInFlight", SUB_IN_FLIGHT_MAX,
	    &s->max_in_flight, p, err) == -1)
		return -1;
	sub_field(field, sizeof(field), p, "standardWebhooks");
	if ((v = config_obj_get(o, "standardWebhooks")) != NULL) {
		if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
			return SUB_ERR("must be true or false");
		s->standard_webhooks = YAJL_IS_TRUE(v);
	}
	sub_field(field, sizeof(field), p, "ordered");
	if ((v = config_obj_get(o, "ordered")) != NULL) {
		if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
			return SUB_ERR("must be true or false");
		s->ordered = YAJL_IS_TRUE(v);
	}
	if (sub_breaker(o, s, p, err) == -1)
		return -1;
	sub_field(field, sizeof(field), p, "rateLimit");
	if ((v = config_obj_get(o, "rateLimit")) != NULL) {
		if (s->kind != SUB_PUSH)
			return SUB_ERR("only a push subscriber (with url) has a "
			    "rateLimit");
		if (!YAJL_IS_NUMBER(v) || YAJL_GET_DOUBLE(v) <= 0 ||
		    YAJL_GET_DOUBLE(v) > SUB_RATE_MAX)
			return SUB_ERR("must be a number of events a second, "
			    "above 0 and at most %d", SUB_RATE_MAX);
		s->rate_limit = YAJL_GET_DOUBLE(v);
	}
	s->from = p->from;
	s->from_ns = 0;
	sub_field(field, sizeof(field), p, "deliverFrom");
	if ((v = config_obj_get(o, "deliverFrom")) != NULL &&
	    (!YAJL_IS_STRING(v) || config_deliver_from(v->u.string, s) == -1))
		return SUB_ERR("must be all, new or an RFC 3339 time such as "
		    "2026-01-02T03:04:05Z");
	if (s->standard_webhooks && (badsec = sub_whsec_bad(s)) >= 0) {
		if (config_obj_get(o, "secrets") != NULL) {
			snprintf(who, sizeof(who), "secrets[%ld]", badsec);
			sub_field(field, sizeof(field), p, who);
		} else
			sub_field(field, sizeof(field), p, "secret");
		return SUB_ERR("a whsec_ secret must be base64 of at most 256 "
		    "bytes (standardWebhooks)");
	}
	return 0;
}

/* Free what a subscriber's members hold. */
void
config_subscriber_clear(struct subscriber *s)
{
	size_t	 j;

	free(s->url);
	free(s->filter);
	for (j = 0; j < s->nsecrets; j++)
		free(s->secrets[j]);
	free(s->secrets);
}

/*
 * The subscriber's secrets, newest first, prepared for signing: every
 * delivery signs, so each key is set up once (treaty_keys).
 */
struct treaty_keys *
config_keys(const struct subscriber *sc)
{
	struct treaty_secret	 s[TREATY_MAX_SECRETS];
	size_t			 j;

	for (j = 0; j < sc->nsecrets && j < TREATY_MAX_SECRETS; j++) {
		s[j].key = sc->secrets[j];
		s[j].len = strlen(sc->secrets[j]);
	}
	return treaty_keys_new(s, j);
}

/* A copy of sc that owns all it holds (config_subscriber_free). */
struct subscriber *
config_subscriber_dup(const struct subscriber *sc)
{
	struct subscriber	*c = xmalloc(sizeof(*c));

	config_subscriber_copy(c, sc);
	return c;
}

void
config_subscriber_copy(struct subscriber *c, const struct subscriber *sc)
{
	size_t			 j;

	*c = *sc;
	c->url = sc->url != NULL ? xstrdup(sc->url) : NULL;
	c->filter = xstrdup(sc->filter);
	c->secrets = xcalloc(sc->nsecrets + 1, sizeof(char *));
	for (j = 0; j < sc->nsecrets; j++)
		c->secrets[j] = xstrdup(sc->secrets[j]);
}

void
config_subscribers_set(struct config *cfg, struct subscriber *subs, size_t n)
{
	size_t	 i;

	for (i = 0; i < cfg->nsubscribers; i++)
		config_subscriber_clear(&cfg->subscribers[i]);
	free(cfg->subscribers);
	cfg->subscribers = subs;
	cfg->nsubscribers = n;
}

void
config_subscriber_free(struct subscriber *sc)
{
	if (sc == NULL)
		return;
	config_subscriber_clear(sc);
	free(sc);
}

/*
 * JetStream's MaxAckPending for s: maxInFlight, but SUB_ORDER_HAND times
 * that for an ordered push subscriber (the window still bounds its
 * POSTs): what waits behind a key is in hand, and with only maxInFlight
 * one key's retries would soon hold every place and stop the other keys
 * (SPEC 18: head-of-line blocking per key, never per subscriber).  With
 * maxInFlight 1 it stays 1: one event at a time, strictly in WORK's order.
 */
int
config_max_ack_pending(const struct subscriber *s)
{
	if (s->ordered && s->max_in_flight > 1)
		return s->max_in_flight * SUB_ORDER_HAND;
	return s->max_in_flight;
}

/* 1 when every setting of a and b is the same. */
int
config_subscriber_equal(const struct subscriber *a, const struct subscriber *b)
{
	size_t	 j;

	if (strcmp(a->name, b->name) != 0 || a->kind != b->kind ||
	    !str_eq(a->url, b->url) || strcmp(a->filter, b->filter) != 0 ||
	    a->nsecrets != b->nsecrets || a->tokens.n != b->tokens.n ||
	    a->max_deliver != b->max_deliver ||
	    a->max_in_flight != b->max_in_flight ||
	    a->standard_webhooks != b->standard_webhooks ||
	    a->breaker_failures != b->breaker_failures ||
	    a->rate_limit != b->rate_limit || a->ordered != b->ordered ||
	    a->from != b->from || a->from_ns != b->from_ns)
		return 0;
	for (j = 0; j < a->nsecrets; j++)
		if (strcmp(a->secrets[j], b->secrets[j]) != 0)
			return 0;
	for (j = 0; j < a->tokens.n; j++)
		if (strcmp(a->tokens.hash[j], b->tokens.hash[j]) != 0)
			return 0;
	return 1;
}
