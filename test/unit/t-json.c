/*
 * t-json.c: unit tests of src/common/json.c: json_array_split, which
 * finds a batch's events (SPEC 14) without parsing them (strings and
 * escapes, nesting, whitespace, empty elements, the element limit, texts
 * that are not one array), json_accepted_body's two ways of writing
 * the 202 answer, json_scan's flaws (what yajl would take or change),
 * json_dup_key (a key given twice in one object, at any depth), and
 * json_error_at (where a text stops being JSON, as yajl's tree reads it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../../src/common/json.h"
#include "harness.h"

#define MAXEL	8

/*
 * Split s and compare with want: the elements joined by '|', or NULL
 * when the split must fail with status rc.
 */
static void
split_at(int line, const char *s, size_t max, int rc, const char *want)
{
	struct json_span	 el[MAXEL];
	char			 got[512];
	size_t			 i, o = 0;
	int			 n;

	n = json_array_split(s, strlen(s), el, max);
	if (want == NULL) {
		if (n != rc)
			t_fail(__FILE__, line, "  %s: %d, want %d", s, n, rc);
		return;
	}
	if (n < 0) {
		t_fail(__FILE__, line, "  %s: refused (%d)", s, n);
		return;
	}
	for (i = 0; i < (size_t)n; i++) {
		if (i > 0)
			got[o++] = '|';
		memcpy(got + o, s + el[i].off, el[i].len);
		o += el[i].len;
	}
	got[o] = '\0';
	if (strcmp(got, want) != 0)
		t_fail(__FILE__, line, "  %s: got \"%s\", want \"%s\"", s, got,
		    want);
}
#define SPLIT(s, want)		split_at(__LINE__, s, MAXEL, 0, want)
#define SPLIT_BAD(s, rc)	split_at(__LINE__, s, MAXEL, rc, NULL)

/* Plain arrays, whitespace around and between. */
static void
arrays(void)
{
	SPLIT("[]", "");
	SPLIT(" [ ] \n", "");
	SPLIT("[1]", "1");
	SPLIT("[{\"a\":1},{\"b\":2}]", "{\"a\":1}|{\"b\":2}");
	SPLIT("\r\n[ {\"a\":1} ,\t{\"b\":2}\n]\n", "{\"a\":1}|{\"b\":2}");
	SPLIT("[[1,2],{\"x\":[3,{\"y\":4}]}]", "[1,2]|{\"x\":[3,{\"y\":4}]}");
}

/* Commas and brackets inside strings, escaped quotes and backslashes. */
static void
strings(void)
{
	SPLIT("[\"a,b\",\"]\"]", "\"a,b\"|\"]\"");
	SPLIT("[{\"k\":\"x\\\"],\"},2]", "{\"k\":\"x\\\"],\"}|2");
	SPLIT("[\"\\\\\",\"\\\\]\"]", "\"\\\\\"|\"\\\\]\"");
	SPLIT("[{\"d\":\"{[\"}]", "{\"d\":\"{[\"}");
}

/* Elements are not checked: empty and malformed ones come back as text. */
static void
unchecked(void)
{
	SPLIT("[1,,2]", "1||2");
	SPLIT("[1,]", "1|");
	SPLIT("[,]", "|");
	SPLIT("[{]}]", "{]}");
	SPLIT("[}]", "}");
	SPLIT("[nope, {\"a\" 1}]", "nope|{\"a\" 1}");
}

/* Not one array. */
static void
not_arrays(void)
{
	SPLIT_BAD("", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("   ", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("{\"a\":1}", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[1,2", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[\"]", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[\"\\\"]", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[{\"a\":[1]]", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[1] [2]", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[1]x", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("x[1]", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[", JSON_SPLIT_NOT_ARRAY);
	SPLIT_BAD("[]]", JSON_SPLIT_NOT_ARRAY);
}

/* At most max elements; an array of exactly max is fine. */
static void
limit(void)
{
	struct json_span	 el[3];
	const char		*three = "[1,2,3]", *four = "[1,2,3,4]";

	T_EQ_INT(json_array_split(three, strlen(three), el, 3), 3);
	T_EQ_INT(json_array_split(four, strlen(four), el, 3),
	    JSON_SPLIT_TOO_MANY);
	T_EQ_INT(json_array_split("[]", 2, el, 0), 0);
	T_EQ_INT(json_array_split("[1]", 3, el, 0), JSON_SPLIT_TOO_MANY);
	/* Spans stay inside the text even for a cut escape. */
	T_EQ_INT(json_array_split("[\"\\", 3, el, 3), JSON_SPLIT_NOT_ARRAY);
}

/* json_accepted_body for id and dup equals want. */
static void
accepted_at(int line, const char *id, int dup, const char *want)
{
	struct evbuffer	*b = evbuffer_new();
	char		 got[256];
	size_t		 n;

	json_accepted_body(b, id, dup);
	n = evbuffer_remove(b, got, sizeof(got) - 1);
	got[n] = '\0';
	if (strcmp(got, want) != 0)
		t_fail(__FILE__, line, "accepted(%s): got %s, want %s", id, got,
		    want);
	evbuffer_free(b);
}
#define ACCEPTED(id, dup, want)	accepted_at(__LINE__, id, dup, want)

/*
 * The 202 answer: the plain ids written as they are and the others by
 * the generator give the same JSON (escapes, UTF-8, invalid UTF-8).
 */
static void
accepted(void)
{
	ACCEPTED("ord-1", 0, "{\"id\":\"ord-1\",\"duplicate\":false}");
	ACCEPTED("ord-1", 1, "{\"id\":\"ord-1\",\"duplicate\":true}");
	ACCEPTED("a/b c~", 0, "{\"id\":\"a/b c~\",\"duplicate\":false}");
	ACCEPTED("a\"b\\c", 0,
	    "{\"id\":\"a\\\"b\\\\c\",\"duplicate\":false}");
	ACCEPTED("t\tab", 1, "{\"id\":\"t\\tab\",\"duplicate\":true}");
	ACCEPTED("caf\xc3\xa9", 0,
	    "{\"id\":\"caf\xc3\xa9\",\"duplicate\":false}");
	ACCEPTED("bad\xff", 0, "{\"id\":\"\",\"duplicate\":false}");
}

/* json_utf8_repair: U+FFFD for each byte that begins no valid sequence. */
static void
utf8_repair(void)
{
	static const struct {
		const char	*in, *want;
	} c[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80",
		  "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "a\xff" "b", "a\xef\xbf\xbd" "b" },
		{ "\xc3", "\xef\xbf\xbd" },
		{ "\xe2\x82x", "\xef\xbf\xbd\xef\xbf\xbdx" },
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
		  "\xef\xbf\xbd" },
	};
	size_t	 i, len;
	char	*got;

	for (i = 0; i < T_NCASES(c); i++) {
		got = json_utf8_repair(c[i].in, strlen(c[i].in), &len);
		T_EQ_STR(got, c[i].want);
		T_EQ_INT(len, strlen(c[i].want));
		free(got);
	}
}

/* A parsed text generated again: the same text, numbers as written. */
static void
gen_tree(void)
{
	static const char *const texts[] = {
		"{\"a\":\"x\\\"y\",\"n\":1.50,\"big\":18446744073709551615,"
		"\"t\":true,\"f\":false,\"z\":null,\"o\":{\"k\":[1,\"2\",[]]}}",
		"[]",
		"\"caf\u00e9\"",
	};
	static const char *const want[] = {
		"{\"a\":\"x\\\"y\",\"n\":1.50,\"big\":18446744073709551615,"
		"\"t\":true,\"f\":false,\"z\":null,\"o\":{\"k\":[1,\"2\",[]]}}",
		"[]",
		"\"caf\xc3\xa9\"",
	};
	const unsigned char	*buf;
	size_t			 i, len;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		yajl_val	 v = yajl_tree_parse(texts[i], NULL, 0);
		yajl_gen	 g = yajl_gen_alloc(NULL);

		T_ASSERT(v != NULL);
		json_gen_tree(g, v);
		yajl_gen_get_buf(g, &buf, &len);
		T_EQ_STR((const char *)buf, want[i]);
		yajl_gen_free(g);
		yajl_tree_free(v);
	}
}

/* json_scan on s (with its length given, for NUL bytes) and depth 3. */
#define SCANN(s, n, want)	T_EQ_INT(json_scan(s, n, 3), want)
#define SCAN(s, want)		SCANN(s, strlen(s), want)

/* Texts without a flaw: what looks like one inside strings is text. */
static void
scan_clean(void)
{
	SCAN("", JSON_FLAW_NONE);
	SCAN("{\"a\":\"x/y [{ }]\",\"b\":[1,{\"c\":null}]}", JSON_FLAW_NONE);
	SCAN("[[[]]]", JSON_FLAW_NONE);			/* depth 3 */
	SCAN("[[[]]],[[[]]]", JSON_FLAW_NONE);		/* 3, twice */
	SCAN("\"\\u00e9\\ud83d\\ude00\\uD83D\\uDE00\"", JSON_FLAW_NONE);
	SCAN("\"\\\\u0000\"", JSON_FLAW_NONE);	/* backslash, then text */
	SCAN("\"\\\"/\\\\\" ", JSON_FLAW_NONE);	/* escaped quotes */
	SCAN("\"\\/\\b\\f\\n\\r\\t\"", JSON_FLAW_NONE);
	SCAN(" \t\r\n{}", JSON_FLAW_NONE);
	/* What yajl refuses is left to it: the text is not whole here. */
	SCAN("\"\\u0041", JSON_FLAW_NONE);
	SCAN("\"\\uD83D\\uDE00", JSON_FLAW_NONE);
	SCAN("\"abc", JSON_FLAW_NONE);
	SCAN("\"abc\\", JSON_FLAW_NONE);
	SCAN("]]]", JSON_FLAW_NONE);
	SCAN("\"\f\v\"", JSON_FLAW_NONE);	/* raw, inside a string */
}

/* Each flaw alone, and the first of two. */
static void
scan_flaws(void)
{
	SCANN("{\"a\":1}\0", 8, JSON_FLAW_NUL);
	SCANN("\"a\0b\"", 5, JSON_FLAW_NUL);
	SCANN("\"a\\\0\"", 5, JSON_FLAW_NUL);	/* the escaped byte */
	SCAN("[[[[]]]]", JSON_FLAW_DEEP);
	SCAN("{\"a\":{\"b\":[{}]}}", JSON_FLAW_DEEP);
	SCAN("{\"a\":1}//x", JSON_FLAW_COMMENT);
	SCAN("/*c*/{}", JSON_FLAW_COMMENT);
	SCAN("{\f}", JSON_FLAW_SPACE);
	SCAN("\v[]", JSON_FLAW_SPACE);
	SCAN("\"\\uD800\"", JSON_FLAW_ESCAPE);		/* high alone */
	SCAN("\"\\udbff\"", JSON_FLAW_ESCAPE);
	SCAN("\"\\uDC00\"", JSON_FLAW_ESCAPE);		/* low alone */
	SCAN("\"\\uD800\\u0041\"", JSON_FLAW_ESCAPE);	/* not a low */
	SCAN("\"\\uD800\\n\\uDC00\"", JSON_FLAW_ESCAPE);
	SCAN("\"\\uD83D\\uDE0", JSON_FLAW_ESCAPE);	/* cut short */
	SCAN("\"\\u12\"", JSON_FLAW_ESCAPE);
	SCAN("\"\\u12G4\"", JSON_FLAW_ESCAPE);
	SCAN("\"\\u0000\"", JSON_FLAW_NUL_ESCAPE);
	SCAN("{\"k\":\"a\\u0000b\"}", JSON_FLAW_NUL_ESCAPE);
	/* The first one found is the one answered. */
	SCAN("/[[[[]]]]", JSON_FLAW_COMMENT);
	SCAN("[[[[/]]]]", JSON_FLAW_DEEP);
	SCAN("[\"\\u0000\",\"\\uD800\"]", JSON_FLAW_NUL_ESCAPE);
	SCAN("[\"\\uD800\",\"\\u0000\"]", JSON_FLAW_ESCAPE);
}

/*
 * json_dup_key on the text s: the path of the first key given twice
 * (want), or none (want NULL).
 */
static void
dup_at(int line, const char *s, const char *want)
{
	yajl_val	 v = yajl_tree_parse(s, NULL, 0);
	char		 path[64];
	const char	*k;

	if (v == NULL) {
		t_fail(__FILE__, line, "  %s: not JSON", s);
		return;
	}
	k = json_dup_key(v, path, sizeof(path));
	if (want == NULL && k != NULL)
		t_fail(__FILE__, line, "  %s: %s given twice?", s, path);
	else if (want != NULL && k == NULL)
		t_fail(__FILE__, line, "  %s: no duplicate, want %s", s, want);
	else if (want != NULL && strcmp(path, want) != 0)
		t_fail(__FILE__, line, "  %s: %s, want %s", s, path, want);
	else if (want != NULL && strrchr(want, '.') != NULL &&
	    strcmp(k, strrchr(want, '.') + 1) != 0)
		t_fail(__FILE__, line, "  %s: key %s", s, k);
	yajl_tree_free(v);
}
#define DUP(s, want)	dup_at(__LINE__, s, want)

/* No key twice in one object: equal keys in different objects are fine. */
static void
dup_none(void)
{
	DUP("{}", NULL);
	DUP("[]", NULL);
	DUP("\"a\"", NULL);
	DUP("{\"a\":1,\"b\":2,\"A\":3,\"a \":4,\"ab\":5}", NULL);
	DUP("{\"a\":{\"a\":{\"a\":1}}}", NULL);
	DUP("[{\"a\":1},{\"a\":1}]", NULL);
	DUP("{\"x\":[{\"a\":1},{\"a\":2}],\"y\":{\"x\":1}}", NULL);
	DUP("{\"a\":\"a\",\"b\":\"a\"}", NULL);	/* values, not keys */
}

/* The first repeat, where it is, the object's own keys before its values. */
static void
dup_found(void)
{
	DUP("{\"a\":1,\"a\":2}", "a");
	DUP("{\"a\":1,\"b\":2,\"a\":3,\"b\":4}", "a");
	DUP("{\"b\":1,\"a\":2,\"a\":3,\"b\":4}", "a");
	DUP("{\"a\":1,\"\\u0061\":2}", "a");	/* decoded: one key */
	DUP("{\"caf\\u00e9\":1,\"caf\xc3\xa9\":2}", "caf\xc3\xa9");
	DUP("[{\"name\":\"x\",\"subjects\":[],\"subjects\":[]}]",
	    "[0].subjects");
	DUP("[{},{\"s\":{\"t\":1,\"t\":2}}]", "[1].s.t");
	DUP("{\"data\":{\"items\":[1,{\"sku\":1,\"sku\":2}]}}",
	    "data.items[1].sku");
	DUP("[[[{\"k\":[],\"k\":{}}]]]", "[0][0][0].k");
	/* The outer object's keys are compared before its members'. */
	DUP("{\"o\":{\"i\":1,\"i\":2},\"o\":3}", "o");
	/* The first member with one is the one named. */
	DUP("{\"p\":{\"x\":1,\"x\":2},\"q\":{\"y\":1,\"y\":2}}", "p.x");
	/* A long path is cut to fit. */
	DUP("{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaa\":{\"k\":1,\"k\":2}}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");	/* 63 of 71 */
}

/*
 * Objects past the pairwise size (sorted) and nesting past the walk's
 * first stack: the same answers.
 */
static void
dup_large(void)
{
	char		*s = malloc(64 * 1024), path[64];
	size_t		 o, i;
	yajl_val	 v;
	const char	*k;

	T_ASSERT(s != NULL);
	/* 1000 keys k0..k999, then k500 again, then k7 again. */
	o = (size_t)sprintf(s, "{");
	for (i = 0; i < 1000; i++)
		o += (size_t)sprintf(s + o, "\"k%zu\":%zu,", i, i);
	sprintf(s + o, "\"k500\":0,\"k7\":0}");
	T_ASSERT((v = yajl_tree_parse(s, NULL, 0)) != NULL);
	T_ASSERT((k = json_dup_key(v, path, sizeof(path))) != NULL);
	T_EQ_STR(path, "k500");
	yajl_tree_free(v);
	/* The same keys without a repeat; then 40 keys, the last twice. */
	sprintf(s + o - 1, "}");
	T_ASSERT((v = yajl_tree_parse(s, NULL, 0)) != NULL);
	T_ASSERT(json_dup_key(v, path, sizeof(path)) == NULL);
	yajl_tree_free(v);
	o = (size_t)sprintf(s, "{");
	for (i = 0; i < 40; i++)
		o += (size_t)sprintf(s + o, "\"k%zu\":%zu,", i, i);
	sprintf(s + o, "\"k39\":0}");
	T_ASSERT((v = yajl_tree_parse(s, NULL, 0)) != NULL);
	T_ASSERT(json_dup_key(v, path, sizeof(path)) != NULL);
	T_EQ_STR(path, "k39");
	yajl_tree_free(v);
	/* 200 arrays deep, then an object with a key twice. */
	o = 0;
	for (i = 0; i < 200; i++)
		s[o++] = '[';
	o += (size_t)sprintf(s + o, "{\"z\":1,\"z\":2}");
	for (i = 0; i < 200; i++)
		s[o++] = ']';
	s[o] = '\0';
	T_ASSERT((v = yajl_tree_parse(s, NULL, 0)) != NULL);
	T_ASSERT((k = json_dup_key(v, path, sizeof(path))) != NULL);
	T_EQ_STR(k, "z");
	/* 21 steps of 200 fit in 64 bytes. */
	T_EQ_STR(path, "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
	    "[0][0][0]");
	yajl_tree_free(v);
	free(s);
}

/*
 * Where a text stops being JSON: the line and column (bytes, from 1) of
 * the last byte yajl read, or just past the end when the text ends too
 * soon, with yajl's short reason, never the text; a text yajl_tree_parse
 * takes (comments too) is -1.
 */
static void
error_at(void)
{
	static const struct {
		const char	*s;
		size_t		 line, col;
		const char	*why;
	} bad[] = {
		{ "[{\"name\":\"a\",\"tokenSha256\":\"x\",}]", 1, 32,
		  "invalid object key (must be a string)" },
		{ "[1,2", 1, 5, "premature EOF" },
		{ "", 1, 1, "premature EOF" },
		{ "[\n {\"a\":1},\n x]", 3, 2, "invalid char in json text" },
		{ "[1] x", 1, 5, "trailing garbage" },
		{ "[1,]", 1, 4, "unallowed token at this point in JSON text" },
		{ "[01]", 1, 3, "after array element, I expect ',' or ']'" },
		{ "{\"secret\":\"hunter2-hunter2\" x}", 1, 29,
		  "invalid char in json text" },
		/* Near: yajl steps back before the token for this one. */
		{ "{\"secret\":\"hunter2-hunter2\" 1}", 1, 28,
		  "after key and value, inside map, I expect ',' or '}'" },
		{ "[\"\xff\"]", 1, 3, "invalid bytes in UTF8 string" },
	};
	static const char *const good[] = {
		"[]", "[1, /* two */ 2]", "{\"a\":[true,null]}\n", " 7 ",
	};
	char		 why[128];
	size_t		 i, line, col;
	yajl_val	 v;

	for (i = 0; i < T_NCASES(bad); i++) {
		/* The tree refuses each one too: the same reader. */
		v = yajl_tree_parse(bad[i].s, NULL, 0);
		T_ASSERT(v == NULL);
		yajl_tree_free(v);
		why[0] = '\0';
		line = col = 0;
		if (!T_EQ_INT(json_error_at(bad[i].s, strlen(bad[i].s), &line,
		    &col, why, sizeof(why)), 0))
			continue;
		if (line != bad[i].line || col != bad[i].col ||
		    strcmp(why, bad[i].why) != 0)
			t_fail(__FILE__, __LINE__, "  %s: line %zu column %zu "
			    "\"%s\", want %zu %zu \"%s\"", bad[i].s, line, col,
			    why, bad[i].line, bad[i].col, bad[i].why);
		T_ASSERT(strstr(why, "hunter2") == NULL);
	}
	for (i = 0; i < T_NCASES(good); i++) {
		v = yajl_tree_parse(good[i], NULL, 0);
		T_ASSERT(v != NULL);
		yajl_tree_free(v);
		T_EQ_INT(json_error_at(good[i], strlen(good[i]), &line, &col,
		    why, sizeof(why)), -1);
	}
}

static const struct t_case cases[] = {
	{ "a parsed value generated again", gen_tree },
	{ "invalid UTF-8 repaired with U+FFFD", utf8_repair },
	{ "arrays and whitespace", arrays },
	{ "strings and escapes", strings },
	{ "elements are not checked", unchecked },
	{ "texts that are not one array", not_arrays },
	{ "the element limit", limit },
	{ "the 202 answer's body", accepted },
	{ "scan: texts without a flaw", scan_clean },
	{ "scan: each flaw, and the first of two", scan_flaws },
	{ "duplicate keys: none", dup_none },
	{ "duplicate keys: the first, and its place", dup_found },
	{ "duplicate keys: large objects, deep nesting", dup_large },
	{ "where a text stops being JSON", error_at },
};

int
main(void)
{
	int	 rc;

	json_init();
	rc = t_run("json", cases, T_NCASES(cases)) ? 1 : 0;
	json_free();
	return (rc);
}
