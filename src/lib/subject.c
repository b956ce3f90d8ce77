/*
 * subject.c: the suite grammar of subjects, subject patterns and event
 * types, and NATS wildcard matching between them.
 *
 * Pure functions over NUL-terminated strings; no state, callable from any
 * thread.  A NULL argument is never valid.
 */
#include <stddef.h>
#include <string.h>

#include "treaty.h"

#define SUITE_TOKENS	5

/* A token of a dotted name: where it starts and how long it is. */
struct token {
	const char	*p;
	size_t		 len;
};

/* Cursor over the '.'-separated tokens of a string. */
struct tokenizer {
	const char	*next;		/* start of the next token, NULL at end */
};

/* Start tokenizing s at its first byte. */
static void
tok_init(struct tokenizer *tz, const char *s)
{
	tz->next = s;
}

/* Fetch the next token into t; 0 when there is none left. */
static int
tok_next(struct tokenizer *tz, struct token *t)
{
	const char	*dot;

	if (tz->next == NULL)
		return (0);
	t->p = tz->next;
	dot = strchr(t->p, '.');
	if (dot == NULL) {
		t->len = strlen(t->p);
		tz->next = NULL;
	} else {
		t->len = (size_t)(dot - t->p);
		tz->next = dot + 1;
	}
	return (1);
}

/* 1 when t equals the NUL-terminated literal s. */
static int
tok_is(const struct token *t, const char *s)
{
	return (strlen(s) == t->len && memcmp(t->p, s, t->len) == 0);
}

/* 1 when two tokens hold the same bytes. */
static int
tok_eq(const struct token *a, const struct token *b)
{
	return (a->len == b->len && memcmp(a->p, b->p, a->len) == 0);
}

/* 1 when c is one of A-Za-z0-9_-. */
static int
name_char(char c)
{
	unsigned char	 u = (unsigned char)c;

	/* Letters of either case with one test (|0x20), digits with one. */
	return ((unsigned)((u | 0x20) - 'a') < 26 ||
	    (unsigned)(u - '0') < 10 || u == '_' || u == '-');
}

/* 1 when t is a literal token: 1-64 bytes of A-Za-z0-9_-. */
static int
tok_literal(const struct token *t)
{
	size_t	 i;

	if (t->len == 0 || t->len > TREATY_TOKEN_MAX)
		return (0);
	for (i = 0; i < t->len; i++)
		if (!name_char(t->p[i]))
			return (0);
	return (1);
}

/*
 * Check that s is a dotted list of literal tokens; return the token count,
 * or 0 when any token is empty or not literal.  The count saturates at
 * SUITE_TOKENS + 1, which is enough for every caller.  One pass over the
 * bytes: every ingested event is split this way several times.
 */
static size_t
literal_tokens(const char *s, struct token *toks, size_t ntoks)
{
	const char	*start, *p;
	size_t		 n = 0, len;

	if (s == NULL)
		return (0);
	for (start = p = s;; p++) {
		if (name_char(*p))
			continue;
		if (*p != '.' && *p != '\0')
			return (0);
		len = (size_t)(p - start);
		if (len == 0 || len > TREATY_TOKEN_MAX)
			return (0);
		if (n < ntoks)
			toks[n] = (struct token){ start, len };
		if (n <= SUITE_TOKENS)
			n++;
		if (*p == '\0')
			return (n);
		start = p + 1;
	}
}

/* Split a suite subject into its five tokens; 1 when it is valid. */
static int
subject_split(const char *subject, struct token toks[SUITE_TOKENS])
{
	if (literal_tokens(subject, toks, SUITE_TOKENS) != SUITE_TOKENS)
		return (0);
	return (tok_is(&toks[0], "evt") || tok_is(&toks[0], "audit"));
}

/* Split a suite type into its five tokens; 1 when it is valid. */
static int
type_split(const char *type, struct token toks[SUITE_TOKENS])
{
	const struct token	*v;
	size_t			 i;

	if (literal_tokens(type, toks, SUITE_TOKENS) != SUITE_TOKENS)
		return (0);
	v = &toks[SUITE_TOKENS - 1];
	if (v->len < 2 || v->p[0] != 'v')
		return (0);
	for (i = 1; i < v->len; i++)
		if (v->p[i] < '0' || v->p[i] > '9')
			return (0);
	return (1);
}

/* 1 when subject is a suite subject. */
int
treaty_subject_valid(const char *subject)
{
	struct token	 toks[SUITE_TOKENS];

	return (subject_split(subject, toks));
}

/* 1 when pattern is a valid NATS subject pattern of suite tokens. */
int
treaty_pattern_valid(const char *pattern)
{
	struct tokenizer	 tz;
	struct token		 t;
	int			 ended = 0;

	if (pattern == NULL)
		return (0);
	tok_init(&tz, pattern);
	while (tok_next(&tz, &t)) {
		if (ended)
			return (0);	/* a token after '>' */
		if (tok_is(&t, ">"))
			ended = 1;
		else if (!tok_is(&t, "*") && !tok_literal(&t))
			return (0);
	}
	return (1);
}

/* Where the token starting at p ends: its '.' or the NUL. */
static const char *
tok_end(const char *p)
{
	while (*p != '.' && *p != '\0')
		p++;
	return (p);
}

/*
 * 1 when pattern matches subject (literal tokens only), NATS rules; 0 for
 * a pattern or subject that is not valid.  One pass over the pattern, for
 * every ingested event: a pattern token that equals a subject token is
 * literal because the subject's are, so only the wildcards' places need
 * checking, and a match reads the whole pattern.
 */
int
treaty_pattern_match(const char *pattern, const char *subject)
{
	const char	*p = pattern, *s = subject, *pe, *se;

	if (pattern == NULL || literal_tokens(subject, NULL, 0) == 0)
		return (0);
	for (;;) {
		pe = tok_end(p);
		se = tok_end(s);
		/* '>': one or more tokens, and only as the last. */
		if (pe - p == 1 && *p == '>')
			return (*pe == '\0');
		if (!(pe - p == 1 && *p == '*') && (pe - p != se - s ||
		    memcmp(p, s, (size_t)(pe - p)) != 0))
			return (0);
		if (*pe == '\0' || *se == '\0')
			return (*pe == '\0' && *se == '\0');
		p = pe + 1;
		s = se + 1;
	}
}

/* 1 when every subject that pattern matches is also matched by inner. */
int
treaty_pattern_within(const char *pattern, const char *inner)
{
	struct tokenizer	 pz, iz;
	struct token		 pt, it;
	int			 hp, hi;

	if (!treaty_pattern_valid(pattern) || !treaty_pattern_valid(inner))
		return (0);
	tok_init(&pz, pattern);
	tok_init(&iz, inner);
	for (;;) {
		hp = tok_next(&pz, &pt);
		hi = tok_next(&iz, &it);
		if (!hp || !hi)
			return (!hp && !hi);
		/* Inner '>' takes whatever one or more tokens remain. */
		if (tok_is(&it, ">"))
			return (1);
		/* Pattern '>' matches any length, a fixed-length inner cannot. */
		if (tok_is(&pt, ">"))
			return (0);
		if (tok_is(&it, "*"))
			continue;
		if (tok_is(&pt, "*") || !tok_eq(&pt, &it))
			return (0);
	}
}

/* 1 when type is a suite event type. */
int
treaty_type_valid(const char *type)
{
	struct token	 toks[SUITE_TOKENS];

	return (type_split(type, toks));
}

/* 1 when type's product, entity and verb equal subject's (both valid). */
int
treaty_type_matches_subject(const char *type, const char *subject)
{
	struct token	 tt[SUITE_TOKENS], st[SUITE_TOKENS];
	int		 i;

	if (!type_split(type, tt) || !subject_split(subject, st))
		return (0);
	/* type: ns.product.entity.verb.vN; subject: root.scope.product.entity.verb */
	for (i = 0; i < 3; i++)
		if (!tok_eq(&tt[1 + i], &st[2 + i]))
			return (0);
	return (1);
}
