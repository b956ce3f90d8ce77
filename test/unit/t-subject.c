/*
 * t-subject.c: unit tests of the suite grammar (subject.c): subjects,
 * patterns, wildcard matching, pattern containment and event types.
 */
#include <stdio.h>
#include <string.h>

#include "treaty.h"
#include "harness.h"

/* Fill buf with a token of n copies of c followed by suffix. */
static const char *
tok_of(char *buf, size_t bufsz, char c, size_t n, const char *prefix,
    const char *suffix)
{
	size_t	 pl = strlen(prefix), sl = strlen(suffix);

	if (pl + n + sl + 1 > bufsz)
		return ("");
	memcpy(buf, prefix, pl);
	memset(buf + pl, c, n);
	memcpy(buf + pl + n, suffix, sl + 1);
	return (buf);
}

/* Well-formed suite subjects are accepted. */
static void
subject_valid(void)
{
	T_EQ_INT(treaty_subject_valid("evt.prod.superpipeline.gate.pending"), 1);
	T_EQ_INT(treaty_subject_valid("audit.relay.treaty.delivery.dropped"), 1);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_subject_valid("evt.A-Z_0.9.x-y.Z_"), 1);
	T_EQ_INT(treaty_subject_valid("evt.-.-._._"), 1);
}

/* Subjects need exactly five tokens. */
static void
subject_token_count(void)
{
	T_EQ_INT(treaty_subject_valid("evt.a.b.c"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d.e"), 0);
	T_EQ_INT(treaty_subject_valid("evt"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d.e.f.g.h.i.j"), 0);
	T_EQ_INT(treaty_subject_valid(""), 0);
	T_EQ_INT(treaty_subject_valid(NULL), 0);
}

/* The first token is evt or audit, exactly and case-sensitively. */
static void
subject_prefix(void)
{
	T_EQ_INT(treaty_subject_valid("evts.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("ev.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("EVT.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("Audit.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("auditx.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("dev.a.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("audit.a.b.c.d"), 1);
}

/* Empty tokens are refused wherever they are. */
static void
subject_empty_tokens(void)
{
	T_EQ_INT(treaty_subject_valid(".evt.a.b.c"), 0);
	T_EQ_INT(treaty_subject_valid("evt..b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c."), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d."), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b..d"), 0);
	T_EQ_INT(treaty_subject_valid("...."), 0);
}

/* Wildcards and other bytes are refused in subjects. */
static void
subject_bad_chars(void)
{
	T_EQ_INT(treaty_subject_valid("evt.*.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.>"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d*"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a b.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d "), 0);
	T_EQ_INT(treaty_subject_valid("evt.a/b.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.\xc3\xa9.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.d\t"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a:b.b.c.d"), 0);
	T_EQ_INT(treaty_subject_valid("evt.a.b.c.$d"), 0);
}

/* Tokens of 64 bytes are accepted, 65 refused, in every position. */
static void
subject_token_length(void)
{
	char	 tok[128], s[1024];
	int	 pos;

	tok_of(tok, sizeof(tok), 'x', 64, "", "");
	for (pos = 1; pos < 5; pos++) {
		snprintf(s, sizeof(s), "evt.%s.%s.%s.%s",
		    pos == 1 ? tok : "a", pos == 2 ? tok : "b",
		    pos == 3 ? tok : "c", pos == 4 ? tok : "d");
		T_EQ_INT(treaty_subject_valid(s), 1);
	}
	snprintf(s, sizeof(s), "evt.%s.%s.%s.%s", tok, tok, tok, tok);
	T_EQ_INT(treaty_subject_valid(s), 1);
	T_ASSERT(strlen(s) <= TREATY_SUBJECT_MAX);
	tok_of(tok, sizeof(tok), 'x', 65, "", "");
	for (pos = 1; pos < 5; pos++) {
		snprintf(s, sizeof(s), "evt.%s.%s.%s.%s",
		    pos == 1 ? tok : "a", pos == 2 ? tok : "b",
		    pos == 3 ? tok : "c", pos == 4 ? tok : "d");
		T_EQ_INT(treaty_subject_valid(s), 0);
	}
}

/* Valid patterns: literals, '*' anywhere, '>' last. */
static void
pattern_valid(void)
{
	T_EQ_INT(treaty_pattern_valid("evt.>"), 1);
	T_EQ_INT(treaty_pattern_valid(">"), 1);
	T_EQ_INT(treaty_pattern_valid("*"), 1);
	T_EQ_INT(treaty_pattern_valid("evt.*.superpipeline.>"), 1);
	T_EQ_INT(treaty_pattern_valid("evt.*.*.*.*"), 1);
	T_EQ_INT(treaty_pattern_valid("*.*.*.*.>"), 1);
	T_EQ_INT(treaty_pattern_valid("evt.prod.a.b.c"), 1);
	T_EQ_INT(treaty_pattern_valid("a"), 1);
	T_EQ_INT(treaty_pattern_valid("a.b.c.d.e.f.g"), 1);
}

/* Invalid patterns: '>' not last, partial wildcards, empty tokens. */
static void
pattern_invalid(void)
{
	char	 tok[128], s[1024];

	T_EQ_INT(treaty_pattern_valid(">.a"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.>.a"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.>.>"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.a>"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.a*"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.**"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.>>"), 0);
	T_EQ_INT(treaty_pattern_valid("evt..>"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.>."), 0);
	T_EQ_INT(treaty_pattern_valid("evt."), 0);
	T_EQ_INT(treaty_pattern_valid(".evt"), 0);
	T_EQ_INT(treaty_pattern_valid("."), 0);
	T_EQ_INT(treaty_pattern_valid(""), 0);
	T_EQ_INT(treaty_pattern_valid(NULL), 0);
	T_EQ_INT(treaty_pattern_valid("evt. >"), 0);
	T_EQ_INT(treaty_pattern_valid("evt.a b"), 0);
	tok_of(tok, sizeof(tok), 'p', 64, "", "");
	snprintf(s, sizeof(s), "evt.%s.>", tok);
	T_EQ_INT(treaty_pattern_valid(s), 1);
	tok_of(tok, sizeof(tok), 'p', 65, "", "");
	snprintf(s, sizeof(s), "evt.%s.>", tok);
	T_EQ_INT(treaty_pattern_valid(s), 0);
}

/* '*' matches exactly one token. */
static void
match_star(void)
{
	T_EQ_INT(treaty_pattern_match("evt.*.b.c.d", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.*.b.c.d", "evt.zz.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.*.b.c.d", "evt.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.*.c.d", "evt.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.*.*.*.*", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.*.*.*.*", "evt.a.b.c.d.e"), 0);
	T_EQ_INT(treaty_pattern_match("evt.*.*.*.*", "evt.a.b.c"), 0);
	T_EQ_INT(treaty_pattern_match("*", "evt"), 1);
	T_EQ_INT(treaty_pattern_match("*", "evt.a"), 0);
	T_EQ_INT(treaty_pattern_match("*.a.b.c.d", "audit.a.b.c.d"), 1);
}

/* '>' matches one or more trailing tokens, never zero. */
static void
match_gt(void)
{
	T_EQ_INT(treaty_pattern_match("evt.>", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.>", "evt.a"), 1);
	T_EQ_INT(treaty_pattern_match("evt.>", "evt"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", "audit.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", "evtx.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match(">", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match(">", "x"), 1);
	T_EQ_INT(treaty_pattern_match("evt.*.superpipeline.>",
	    "evt.prod.superpipeline.gate.pending"), 1);
	T_EQ_INT(treaty_pattern_match("evt.*.superpipeline.>",
	    "evt.prod.other.gate.pending"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.>", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d.>", "evt.a.b.c.d"), 0);
}

/* Literal patterns match only the same subject; bad input never matches. */
static void
match_literal(void)
{
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d", "evt.a.b.c.D"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d", "evt.a.b.c.dd"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.dd", "evt.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c", "evt.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d", "evt.a.b.c"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.b.c.d", "evt.a.b.c.d."), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", "evt.*"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", "evt..a"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", ""), 0);
	T_EQ_INT(treaty_pattern_match("evt.>.a", "evt.x.a"), 0);
	/* Invalid patterns never match, even where their bytes would. */
	T_EQ_INT(treaty_pattern_match("evt.>.>", "evt.a.b"), 0);
	T_EQ_INT(treaty_pattern_match("evt.*.>.b", "evt.a.x.b"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.", "evt.a"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a.", "evt.a.b"), 0);
	T_EQ_INT(treaty_pattern_match(".a", "x.a"), 0);
	T_EQ_INT(treaty_pattern_match("", "x"), 0);
	T_EQ_INT(treaty_pattern_match("evt.**", "evt.a"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>x", "evt.a"), 0);
	T_EQ_INT(treaty_pattern_match("evt.a b", "evt.a"), 0);
	T_EQ_INT(treaty_pattern_match(NULL, "evt.a.b.c.d"), 0);
	T_EQ_INT(treaty_pattern_match("evt.>", NULL), 0);
}

/* Containment of patterns (a subscriber filter inside a stream's subjects). */
static void
within(void)
{
	T_EQ_INT(treaty_pattern_within("evt.*.a.>", "evt.>"), 1);
	T_EQ_INT(treaty_pattern_within(">", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.x.*", "evt.*.*"), 1);
	T_EQ_INT(treaty_pattern_within("evt.*.*", "evt.x.*"), 0);
	T_EQ_INT(treaty_pattern_within("evt.>", "evt.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.>", ">"), 1);
	T_EQ_INT(treaty_pattern_within(">", ">"), 1);
	T_EQ_INT(treaty_pattern_within("evt", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.a", "evt.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.a.b.c.d", "evt.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.a.b.c.d", "evt.a.b.c.d"), 1);
	T_EQ_INT(treaty_pattern_within("evt.a.b.c.d", "evt.a.b.c.e"), 0);
	T_EQ_INT(treaty_pattern_within("audit.>", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("*.a.b.c.d", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.>", "evt.*"), 0);
	T_EQ_INT(treaty_pattern_within("evt.*", "evt.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.*.>", "evt.*.*"), 0);
	T_EQ_INT(treaty_pattern_within("evt.*.*", "evt.*.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.a.>", "evt.*.>"), 1);
	T_EQ_INT(treaty_pattern_within("evt.>", "evt.*.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.a.b", "evt.a.b.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.a.b.c", "evt.a.b"), 0);
	T_EQ_INT(treaty_pattern_within("evt.a", "evt.a.b"), 0);
	T_EQ_INT(treaty_pattern_within("evt.>.x", "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.>", "evt.>.x"), 0);
	T_EQ_INT(treaty_pattern_within(NULL, "evt.>"), 0);
	T_EQ_INT(treaty_pattern_within("evt.>", NULL), 0);
}

/* Append every pattern of 1-3 tokens over {a, b, *, >} to list. */
static size_t
gen_patterns(char list[][8], size_t max)
{
	static const char	*t[] = { "a", "b", "*", ">" };
	size_t			 n = 0, len, i, k, idx;
	char			 buf[8];

	for (len = 1; len <= 3; len++) {
		size_t	 combos = 1;

		for (i = 0; i < len; i++)
			combos *= 4;
		for (k = 0; k < combos && n < max; k++) {
			buf[0] = '\0';
			idx = k;
			for (i = 0; i < len; i++) {
				if (i > 0)
					strcat(buf, ".");
				strcat(buf, t[idx % 4]);
				idx /= 4;
			}
			if (treaty_pattern_valid(buf))
				strcpy(list[n++], buf);
		}
	}
	return (n);
}

/* Append every subject of 1-4 tokens over {a, b, c} to list. */
static size_t
gen_subjects(char list[][8], size_t max)
{
	static const char	*t[] = { "a", "b", "c" };
	size_t			 n = 0, len, i, k, idx;
	char			 buf[8];

	for (len = 1; len <= 4; len++) {
		size_t	 combos = 1;

		for (i = 0; i < len; i++)
			combos *= 3;
		for (k = 0; k < combos && n < max; k++) {
			buf[0] = '\0';
			idx = k;
			for (i = 0; i < len; i++) {
				if (i > 0)
					strcat(buf, ".");
				strcat(buf, t[idx % 3]);
				idx /= 3;
			}
			strcpy(list[n++], buf);
		}
	}
	return (n);
}

/*
 * pattern_within(p, q) agrees with "every subject p matches, q matches"
 * over a universe large enough to tell every pair of small patterns apart.
 */
static void
within_exhaustive(void)
{
	static char	 pats[128][8], subs[128][8];
	size_t		 np, ns, i, j, k;
	int		 want, bad = 0;

	np = gen_patterns(pats, 128);
	ns = gen_subjects(subs, 128);
	T_ASSERT(np > 50);
	T_EQ_INT(ns, 3 + 9 + 27 + 81);
	for (i = 0; i < np; i++) {
		for (j = 0; j < np; j++) {
			want = 1;
			for (k = 0; k < ns; k++)
				if (treaty_pattern_match(pats[i], subs[k]) &&
				    !treaty_pattern_match(pats[j], subs[k]))
					want = 0;
			if (treaty_pattern_within(pats[i], pats[j]) != want &&
			    bad++ < 5)
				t_fail(__FILE__, __LINE__,
				    "within(%s, %s) != %d", pats[i], pats[j],
				    want);
		}
	}
	T_EQ_INT(bad, 0);
}

/* Well-formed event types, including multi-digit majors and v0. */
static void
type_valid(void)
{
	T_EQ_INT(treaty_type_valid("dev.superpipeline.gate.pending.v1"), 1);
	T_EQ_INT(treaty_type_valid("dev.treaty.delivery.dropped.v1"), 1);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v0"), 1);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v12"), 1);
	T_EQ_INT(treaty_type_valid("com-x_Y.a.b.c.v999999"), 1);
}

/* Bad majors, token counts and characters are refused. */
static void
type_invalid(void)
{
	char	 tok[128], s[1024];

	T_EQ_INT(treaty_type_valid("dev.a.b.c.v"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.vx"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.V1"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v1x"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.1"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v-1"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v1.5"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c"), 0);
	T_EQ_INT(treaty_type_valid("a.b.c.v1"), 0);
	T_EQ_INT(treaty_type_valid("x.dev.a.b.c.v1"), 0);
	T_EQ_INT(treaty_type_valid("dev..b.c.v1"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.c.v1."), 0);
	T_EQ_INT(treaty_type_valid("dev.*.b.c.v1"), 0);
	T_EQ_INT(treaty_type_valid("dev.a.b.>"), 0);
	T_EQ_INT(treaty_type_valid("dev.a b.b.c.v1"), 0);
	T_EQ_INT(treaty_type_valid(""), 0);
	T_EQ_INT(treaty_type_valid(NULL), 0);
	tok_of(tok, sizeof(tok), 'n', 64, "", "");
	snprintf(s, sizeof(s), "%s.%s.%s.%s.v1", tok, tok, tok, tok);
	T_EQ_INT(treaty_type_valid(s), 1);
	tok_of(tok, sizeof(tok), '7', 63, "v", "");
	snprintf(s, sizeof(s), "dev.a.b.c.%s", tok);
	T_EQ_INT(treaty_type_valid(s), 1);
	tok_of(tok, sizeof(tok), '7', 64, "v", "");
	snprintf(s, sizeof(s), "dev.a.b.c.%s", tok);
	T_EQ_INT(treaty_type_valid(s), 0);
	tok_of(tok, sizeof(tok), 'n', 65, "", "");
	snprintf(s, sizeof(s), "dev.%s.b.c.v1", tok);
	T_EQ_INT(treaty_type_valid(s), 0);
}

/* A type matches a subject on product, entity and verb only. */
static void
type_matches_subject(void)
{
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "evt.prod.superpipeline.gate.pending"), 1);
	T_EQ_INT(treaty_type_matches_subject("other.superpipeline.gate.pending.v7",
	    "audit.any.superpipeline.gate.pending"), 1);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "evt.prod.superpipeline.gate.passed"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "evt.prod.superpipeline.gates.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "evt.prod.other.gate.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.Superpipeline.gate.pending.v1",
	    "evt.prod.superpipeline.gate.pending"), 0);
	/* The scope is not part of the type. */
	T_EQ_INT(treaty_type_matches_subject("prod.superpipeline.gate.pending.v1",
	    "evt.dev.superpipeline.gate.pending"), 1);
	/* Both must be valid. */
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.vx",
	    "evt.prod.superpipeline.gate.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "evt.*.superpipeline.gate.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    "foo.prod.superpipeline.gate.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject(NULL,
	    "evt.prod.superpipeline.gate.pending"), 0);
	T_EQ_INT(treaty_type_matches_subject("dev.superpipeline.gate.pending.v1",
	    NULL), 0);
}

/* Error strings exist for every code and for unknown ones. */
static void
strerror_texts(void)
{
	int	 e;

	for (e = TREATY_E_CRYPTO; e <= TREATY_OK; e++) {
		T_ASSERT(treaty_strerror(e) != NULL);
		T_ASSERT(strcmp(treaty_strerror(e), "unknown error") != 0);
	}
	T_EQ_STR(treaty_strerror(-1000), "unknown error");
	T_EQ_STR(treaty_strerror(5), "unknown error");
}

/*
 * Every byte, in a token of a subject, a type and a pattern: accepted
 * exactly when it is one of A-Za-z0-9_- (SPEC 2), written here as the
 * grammar says it and not as subject.c computes it.
 */
static void
every_byte(void)
{
	char	 s[64];
	int	 c, want, bad = 0;

	for (c = 1; c < 256; c++) {
		want = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-';
		snprintf(s, sizeof(s), "evt.a%cb.c.d.e", c);
		bad += treaty_subject_valid(s) != want;
		snprintf(s, sizeof(s), "dev.p.e.v%c.v1", c);
		bad += treaty_type_valid(s) != want;
		snprintf(s, sizeof(s), "evt.%c.>", c);
		if (c != '*' && c != '>')
			bad += treaty_pattern_valid(s) != want;
	}
	T_EQ_INT(bad, 0);
}

static const struct t_case cases[] = {
	{ "subject valid", subject_valid },
	{ "subject needs five tokens", subject_token_count },
	{ "subject evt or audit", subject_prefix },
	{ "subject empty tokens", subject_empty_tokens },
	{ "subject wildcards and bad bytes", subject_bad_chars },
	{ "subject token 64 ok 65 refused", subject_token_length },
	{ "every byte in a token", every_byte },
	{ "pattern valid", pattern_valid },
	{ "pattern invalid", pattern_invalid },
	{ "match star is one token", match_star },
	{ "match gt is one or more", match_gt },
	{ "match literal and bad input", match_literal },
	{ "pattern within", within },
	{ "pattern within agrees with match", within_exhaustive },
	{ "type valid", type_valid },
	{ "type invalid", type_invalid },
	{ "type matches subject", type_matches_subject },
	{ "strerror", strerror_texts },
};

/* Run the suite; exit 1 when a case failed. */
int
main(void)
{
	return (t_run("subject", cases, T_NCASES(cases)) ? 1 : 0);
}
