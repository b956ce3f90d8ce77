/*
 * t-cevent.c: unit tests of the CloudEvents parser (src/common/cevent.c)
 * against SPEC section 2: binary mode from evhttp headers (case-insensitive
 * ce- names, percent-decoding, duplicates, ce-datacontenttype, Content-Type,
 * required attributes, time, control characters in the id, extension
 * names, the attribute limit) and structured mode (data as JSON text or
 * bytes, data_base64, nesting depth, typed extension values, nulls, the
 * default content type).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../../src/common/cevent.h"
#include "../../src/common/json.h"
#include "treaty.h"
#include "harness.h"

/* A header list for one binary-mode request. */
struct hdrs {
	struct evkeyvalq	 q;
};

/* Start a header list with the four required attributes (unless bare). */
static void
hdrs_init(struct hdrs *h, int required)
{
	TAILQ_INIT(&h->q);
	if (required) {
		evhttp_add_header(&h->q, "ce-specversion", "1.0");
		evhttp_add_header(&h->q, "ce-id", "id-1");
		evhttp_add_header(&h->q, "ce-source", "/test");
		evhttp_add_header(&h->q, "ce-type", "dev.shop.order.created.v1");
	}
}

/* Add one header. */
static void
hdr(struct hdrs *h, const char *k, const char *v)
{
	if (evhttp_add_header(&h->q, k, v) != 0)
		t_fail(__FILE__, __LINE__, "evhttp refused header %s", k);
}

/* Parse h in binary mode with body; frees h.  Returns the result. */
static int
bin(struct cevent *ev, struct hdrs *h, const char *body)
{
	int	 rc;

	rc = cevent_from_binary(ev, &h->q, body, strlen(body));
	evhttp_clear_headers(&h->q);
	return rc;
}


/* Structured mode from a NUL-terminated JSON text. */
static int
st(struct cevent *ev, const char *json)
{
	return cevent_from_structured(ev, json, strlen(json));
}

/* Expect a binary-mode refusal with a detail. */
static void
bin_bad_at(int line, struct hdrs *h, const char *what)
{
	struct cevent	 ev;

	if (!t_check_int(__FILE__, line, "cevent_from_binary", "-1",
	    bin(&ev, h, ""), -1))
		t_fail(__FILE__, line, "  accepted: %s", what);
	else if (ev.detail[0] == '\0')
		t_fail(__FILE__, line, "  no detail for: %s", what);
	cevent_free(&ev);
}
#define BIN_BAD(h, what)	bin_bad_at(__LINE__, h, what)

/* Expect a structured-mode refusal with a detail. */
static void
st_bad_at(int line, const char *json)
{
	struct cevent	 ev;

	if (!t_check_int(__FILE__, line, "cevent_from_structured", "-1",
	    st(&ev, json), -1))
		t_fail(__FILE__, line, "  accepted: %.300s", json);
	else if (ev.detail[0] == '\0')
		t_fail(__FILE__, line, "  no detail for: %.300s", json);
	cevent_free(&ev);
}
#define ST_BAD(json)	st_bad_at(__LINE__, json)

/* Expect structured mode to accept json; caller frees ev. */
static int
st_ok_at(int line, struct cevent *ev, const char *json)
{
	if (!t_check_int(__FILE__, line, "cevent_from_structured", "0",
	    st(ev, json), 0)) {
		t_fail(__FILE__, line, "  refused (%s): %.300s", ev->detail,
		    json);
		cevent_free(ev);
		return 0;
	}
	return 1;
}
#define ST_OK(ev, json)	st_ok_at(__LINE__, ev, json)

/* Check data bytes and length. */
static void
data_is_at(int line, const struct cevent *ev, const char *want, size_t len)
{
	if (!t_check_int(__FILE__, line, "ev->datalen", "len",
	    (long long)ev->datalen, (long long)len))
		return;
	if (len > 0 && (ev->data == NULL || memcmp(ev->data, want, len) != 0))
		t_fail(__FILE__, line, "data differs: \"%.*s\" != \"%.*s\"",
		    (int)ev->datalen, ev->data ? ev->data : "", (int)len, want);
}
#define DATA_IS(ev, s)		data_is_at(__LINE__, ev, s, strlen(s))
#define DATA_IS_N(ev, s, n)	data_is_at(__LINE__, ev, s, n)

#define REQ	"\"specversion\":\"1.0\",\"id\":\"id-1\",\"source\":\"/test\"," \
		"\"type\":\"dev.shop.order.created.v1\""

/* The four required attributes and a body: accepted as they are. */
static void
bin_minimal(void)
{
	struct hdrs	 h;
	struct cevent	 ev;

	hdrs_init(&h, 1);
	hdr(&h, "Authorization", "Bearer x");
	hdr(&h, "Host", "relay");
	if (T_EQ_INT(bin(&ev, &h, "hello"), 0)) {
		T_EQ_STR(ev.specversion, "1.0");
		T_EQ_STR(ev.id, "id-1");
		T_EQ_STR(ev.source, "/test");
		T_EQ_STR(ev.type, "dev.shop.order.created.v1");
		T_EQ_INT(ev.nattrs, 4);
		T_ASSERT(ev.content_type == NULL);
		DATA_IS(&ev, "hello");
		T_ASSERT(cevent_attr(&ev, "authorization") == NULL);
	}
	cevent_free(&ev);

	/* An empty body is valid data. */
	hdrs_init(&h, 1);
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		T_EQ_INT(ev.datalen, 0);
	cevent_free(&ev);
}

/* Header names are case-insensitive; attribute names stored lowercase. */
static void
bin_case_insensitive(void)
{
	struct hdrs	 h;
	struct cevent	 ev;

	hdrs_init(&h, 0);
	hdr(&h, "CE-SpecVersion", "1.0");
	hdr(&h, "Ce-Id", "X-1");
	hdr(&h, "ce-SOURCE", "/s");
	hdr(&h, "cE-Type", "dev.a.b.c.v1");
	hdr(&h, "CE-MyExt", "Value");
	hdr(&h, "content-TYPE", "text/plain");
	if (T_EQ_INT(bin(&ev, &h, ""), 0)) {
		T_EQ_STR(ev.id, "X-1");
		T_EQ_STR(ev.source, "/s");
		T_EQ_STR(cevent_attr(&ev, "myext"), "Value");
		T_EQ_STR(ev.content_type, "text/plain");
	}
	cevent_free(&ev);
}

/* Values are percent-decoded; bad escapes and bad UTF-8 refused. */
static void
bin_percent(void)
{
	struct hdrs	 h;
	struct cevent	 ev;

	hdrs_init(&h, 0);
	hdr(&h, "ce-specversion", "1.0");
	hdr(&h, "ce-id", "caf%C3%A9%20%25%22");
	hdr(&h, "ce-source", "%2Fpath%2fx");
	hdr(&h, "ce-type", "dev.a.b.c.v1");
	hdr(&h, "ce-subject", "a%20b");
	if (T_EQ_INT(bin(&ev, &h, ""), 0)) {
		T_EQ_STR(ev.id, "caf\xc3\xa9 %\"");
		T_EQ_STR(ev.source, "/path/x");
		T_EQ_STR(cevent_attr(&ev, "subject"), "a b");
	}
	cevent_free(&ev);

	/* Unencoded UTF-8 is fine too. */
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "caf\xc3\xa9");
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		T_EQ_STR(cevent_attr(&ev, "subject"), "caf\xc3\xa9");
	cevent_free(&ev);

	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad%ZZ");
	BIN_BAD(&h, "%ZZ");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad%4");
	BIN_BAD(&h, "truncated escape");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad%C3");
	BIN_BAD(&h, "truncated UTF-8");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad%00x");
	BIN_BAD(&h, "decoded NUL");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad%C0%AF");
	BIN_BAD(&h, "overlong UTF-8");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "bad\xff");
	BIN_BAD(&h, "raw byte 0xff");
}

/*
 * Every byte inside a header's value: printable ASCII other than '%' is
 * taken as it is, anything else alone is refused (control characters,
 * DEL, a lone byte of 0x80 and above, a '%' without two hex digits).  The
 * lengths kept with each attribute are its name's and value's, and an
 * attribute marked verbatim is one that percent-encoding leaves unchanged
 * (the relay copies it into the stored form instead of encoding it).
 */
static void
bin_value_bytes(void)
{
	struct hdrs	 h;
	struct cevent	 ev;
	char		 v[8], enc[32];
	int		 c, want, bad = 0;
	size_t		 i;

	for (c = 1; c < 256; c++) {
		if (c == '\r' || c == '\n')
			continue;	/* no header value holds them */
		snprintf(v, sizeof(v), "a%cb", c);
		want = c >= 0x20 && c <= 0x7e && c != '%';
		hdrs_init(&h, 1);
		hdr(&h, "ce-subject", v);
		if ((bin(&ev, &h, "") == 0) != want) {
			t_fail(__FILE__, __LINE__, "byte 0x%02x: %s", c,
			    want ? "refused" : "accepted");
			bad++;
		} else if (want && strcmp(cevent_attr(&ev, "subject"), v) != 0)
			bad++;
		for (i = 0; want && i < ev.nattrs; i++) {
			const struct event_attr *a = &ev.attrs[i];

			bad += a->nlen != strlen(a->name);
			bad += a->vlen != strlen(a->value);
			treaty_pct_encode(a->value, a->vlen, enc, sizeof(enc));
			bad += a->verbatim != (strcmp(enc, a->value) == 0);
		}
		cevent_free(&ev);
	}
	T_EQ_INT(bad, 0);

	/* A decoded value: its own length, and encoded again when sent. */
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "a%2Fb");
	if (T_EQ_INT(bin(&ev, &h, ""), 0)) {
		for (i = 0; i < ev.nattrs; i++)
			if (strcmp(ev.attrs[i].name, "subject") == 0) {
				T_EQ_INT((int)ev.attrs[i].vlen, 3);
				T_EQ_STR(ev.attrs[i].value, "a/b");
			}
	}
	cevent_free(&ev);
}

/* The same attribute twice, in any case, is refused. */
static void
bin_duplicates(void)
{
	struct hdrs	 h;

	hdrs_init(&h, 1);
	hdr(&h, "ce-id", "id-2");
	BIN_BAD(&h, "ce-id twice");
	hdrs_init(&h, 1);
	hdr(&h, "CE-ID", "id-1");
	BIN_BAD(&h, "ce-id and CE-ID");
	hdrs_init(&h, 1);
	hdr(&h, "ce-myext", "a");
	hdr(&h, "Ce-MyExt", "b");
	BIN_BAD(&h, "extension twice");
	hdrs_init(&h, 1);
	hdr(&h, "Content-Type", "text/plain");
	hdr(&h, "content-type", "text/plain");
	BIN_BAD(&h, "Content-Type twice");
}

/* ce-datacontenttype is refused in binary mode; Content-Type captured. */
static void
bin_content_type(void)
{
	struct hdrs	 h;
	struct cevent	 ev;

	hdrs_init(&h, 1);
	hdr(&h, "ce-datacontenttype", "application/json");
	BIN_BAD(&h, "ce-datacontenttype");
	hdrs_init(&h, 1);
	hdr(&h, "CE-DataContentType", "application/json");
	BIN_BAD(&h, "CE-DataContentType");

	hdrs_init(&h, 1);
	hdr(&h, "Content-Type", "application/json; charset=utf-8");
	if (T_EQ_INT(bin(&ev, &h, "{\"a\":1}"), 0)) {
		T_EQ_STR(ev.content_type, "application/json; charset=utf-8");
		DATA_IS(&ev, "{\"a\":1}");
		/* Not an attribute: it travels as content-type. */
		T_ASSERT(cevent_attr(&ev, "datacontenttype") == NULL);
		T_ASSERT(cevent_attr(&ev, "content-type") == NULL);
	}
	cevent_free(&ev);
}

/* specversion 1.0, id, source and type are required and non-empty. */
static void
bin_required(void)
{
	static const char *const names[] = { "ce-specversion", "ce-id",
	    "ce-source", "ce-type" };
	static const char *const vals[] = { "1.0", "i", "/s",
	    "dev.a.b.c.v1" };
	struct hdrs	 h;
	size_t		 i, j;

	for (i = 0; i < 4; i++) {
		/* Missing. */
		hdrs_init(&h, 0);
		for (j = 0; j < 4; j++)
			if (j != i)
				hdr(&h, names[j], vals[j]);
		BIN_BAD(&h, names[i]);
		/* Empty. */
		hdrs_init(&h, 0);
		for (j = 0; j < 4; j++)
			hdr(&h, names[j], j == i ? "" : vals[j]);
		BIN_BAD(&h, names[i]);
	}
	hdrs_init(&h, 0);
	hdr(&h, "ce-specversion", "0.3");
	hdr(&h, "ce-id", "i");
	hdr(&h, "ce-source", "/s");
	hdr(&h, "ce-type", "t");
	BIN_BAD(&h, "specversion 0.3");
	hdrs_init(&h, 0);
	BIN_BAD(&h, "no headers at all");
}

/* ce-time must be RFC 3339. */
static void
bin_time(void)
{
	static const char *const good[] = { "2024-02-29T12:00:00Z",
	    "2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05+02:00",
	    "2026-01-02t03:04:05z", "2026-01-02T03%3A04%3A05Z" };
	static const char *const badt[] = { "2023-02-29T12:00:00Z",
	    "2026-01-02 03:04:05Z", "2026-01-02T03:04:05", "yesterday",
	    "2026-13-01T00:00:00Z", "2026-01-02T24:00:00Z", "",
	    "2026-01-02T03:04:05Zjunk", "1767323045" };
	struct hdrs	 h;
	struct cevent	 ev;
	size_t		 i;

	for (i = 0; i < T_NCASES(good); i++) {
		hdrs_init(&h, 1);
		hdr(&h, "ce-time", good[i]);
		if (!T_EQ_INT(bin(&ev, &h, ""), 0))
			t_fail(__FILE__, __LINE__, "  refused %s", good[i]);
		cevent_free(&ev);
	}
	for (i = 0; i < T_NCASES(badt); i++) {
		hdrs_init(&h, 1);
		hdr(&h, "ce-time", badt[i]);
		BIN_BAD(&h, badt[i]);
	}
}

/* An id with a control character (after decoding) is refused. */
static void
bin_id_control(void)
{
	static const char *const badid[] = { "a%0Ab", "a%0Db", "a%09b",
	    "a%1Fb", "a%7Fb", "%01", "a%C2%85b", "%C2%80", "a%C2%9F" };
	struct hdrs	 h;
	struct cevent	 ev;
	size_t		 i;

	for (i = 0; i < T_NCASES(badid); i++) {
		hdrs_init(&h, 0);
		hdr(&h, "ce-specversion", "1.0");
		hdr(&h, "ce-id", badid[i]);
		hdr(&h, "ce-source", "/s");
		hdr(&h, "ce-type", "dev.a.b.c.v1");
		BIN_BAD(&h, badid[i]);
	}
	/* A space, a colon and non-ASCII text are not control characters. */
	hdrs_init(&h, 0);
	hdr(&h, "ce-specversion", "1.0");
	hdr(&h, "ce-id", "a%20b:%C3%A9");
	hdr(&h, "ce-source", "/s");
	hdr(&h, "ce-type", "dev.a.b.c.v1");
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		T_EQ_STR(ev.id, "a b:\xc3\xa9");
	cevent_free(&ev);
}

/*
 * SPEC 13: every attribute value and the content type are UTF-8 text
 * without control characters.
 */
static void
bin_text_only(void)
{
	static const char *const badct[] = { "text/plain;x=\xff",
	    "text/plain;x=\xc3", "text/plain;x=\xed\xa0\x80", "text/\x01plain" };
	struct hdrs	 h;
	struct cevent	 ev;
	size_t		 i;

	for (i = 0; i < T_NCASES(badct); i++) {
		hdrs_init(&h, 1);
		hdr(&h, "Content-Type", badct[i]);
		BIN_BAD(&h, badct[i]);
	}
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "a%0Ab");
	BIN_BAD(&h, "a newline in an extension value");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "%FF");
	BIN_BAD(&h, "an invalid byte in a value");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "a\xc2\x85" "b");
	BIN_BAD(&h, "a C1 control (NEL) in a value, raw");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "a%C2%85b");
	BIN_BAD(&h, "a C1 control (NEL) in a value, percent-encoded");
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "%C2%A0%C2%A9");
	T_EQ_INT(bin(&ev, &h, ""), 0);
	cevent_free(&ev);
	hdrs_init(&h, 1);
	hdr(&h, "Content-Type", "text/plain; charset=\xc3\xa9");
	hdr(&h, "ce-subject", "caf%C3%A9");
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		T_EQ_STR(ev.content_type, "text/plain; charset=\xc3\xa9");
	cevent_free(&ev);
}

/* The JSON written is UTF-8 whatever the bytes (json_gen_text). */
static void
gen_text_utf8(void)
{
	static const struct {
		const char	*in;
		const char	*out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "x=\xff", "\"x=\xef\xbf\xbd\"" },
		{ "\xc3", "\"\xef\xbf\xbd\"" },
		{ "a\xe2\x82z", "\"a\xef\xbf\xbd\xef\xbf\xbdz\"" },
		{ "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xf0\x9f\x98\x80!", "\"\xf0\x9f\x98\x80!\"" },
	};
	const unsigned char	*buf;
	size_t			 i, len;
	yajl_gen		 g;
	char			 out[64];

	for (i = 0; i < T_NCASES(cases); i++) {
		g = yajl_gen_alloc(NULL);
		json_gen_text(g, cases[i].in, strlen(cases[i].in));
		yajl_gen_get_buf(g, &buf, &len);
		snprintf(out, sizeof(out), "%.*s", (int)len, (const char *)buf);
		T_EQ_STR(out, cases[i].out);
		yajl_gen_free(g);
	}
}

/* Extension names: 1-20 of a-z0-9 (after lowercasing the header name). */
static void
bin_extension_names(void)
{
	static const char *const good[] = { "ce-x", "ce-abc123",
	    "ce-aaaaaaaaaaaaaaaaaaaa", "ce-0", "CE-UPPER" };
	static const char *const badn[] = { "ce-", "ce-my_ext", "ce-my-ext",
	    "ce-aaaaaaaaaaaaaaaaaaaaa", "ce-caf\xc3\xa9", "ce-a.b",
	    "ce-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	struct hdrs	 h;
	struct cevent	 ev;
	size_t		 i;

	for (i = 0; i < T_NCASES(good); i++) {
		hdrs_init(&h, 1);
		hdr(&h, good[i], "v");
		if (!T_EQ_INT(bin(&ev, &h, ""), 0))
			t_fail(__FILE__, __LINE__, "  refused %s: %s", good[i],
			    ev.detail);
		cevent_free(&ev);
	}
	for (i = 0; i < T_NCASES(badn); i++) {
		hdrs_init(&h, 1);
		hdr(&h, badn[i], "v");
		BIN_BAD(&h, badn[i]);
	}
}

/* At most CEVENT_MAX_ATTRS attributes; values at most CEVENT_MAX_VALUE. */
static void
bin_limits(void)
{
	struct hdrs	 h;
	struct cevent	 ev;
	char		 name[32], *big;
	int		 i;

	hdrs_init(&h, 1);
	for (i = 0; i < CEVENT_MAX_ATTRS - 4; i++) {
		snprintf(name, sizeof(name), "ce-x%d", i);
		hdr(&h, name, "v");
	}
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		T_EQ_INT(ev.nattrs, CEVENT_MAX_ATTRS);
	cevent_free(&ev);

	hdrs_init(&h, 1);
	for (i = 0; i < CEVENT_MAX_ATTRS - 3; i++) {
		snprintf(name, sizeof(name), "ce-x%d", i);
		hdr(&h, name, "v");
	}
	BIN_BAD(&h, "one attribute over the limit");

	big = malloc(CEVENT_MAX_VALUE * 3 + 2);
	if (big == NULL)
		abort();
	memset(big, 'a', CEVENT_MAX_VALUE);
	big[CEVENT_MAX_VALUE] = '\0';
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", big);
	if (!T_EQ_INT(bin(&ev, &h, ""), 0))
		t_fail(__FILE__, __LINE__, "  %s", ev.detail);
	cevent_free(&ev);
	big[CEVENT_MAX_VALUE] = 'a';
	big[CEVENT_MAX_VALUE + 1] = '\0';
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", big);
	BIN_BAD(&h, "value one byte too long");
	/* The limit is on decoded bytes: %61 x 4096 decodes to 4096. */
	for (i = 0; i < CEVENT_MAX_VALUE; i++)
		memcpy(big + i * 3, "%61", 3);
	big[CEVENT_MAX_VALUE * 3] = '\0';
	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", big);
	if (!T_EQ_INT(bin(&ev, &h, ""), 0))
		t_fail(__FILE__, __LINE__, "  encoded: %s", ev.detail);
	cevent_free(&ev);
	free(big);
}

/* Structured mode: data as compact JSON text, JSON content type. */
static void
st_data_object(void)
{
	struct cevent	 ev;

	if (ST_OK(&ev, "{" REQ ", \"data\" : { \"a\" : [1, 2.50, {\"b\": "
	    "null}, true], \"c\": \"x\\u00e9\\n\" } }")) {
		DATA_IS(&ev, "{\"a\":[1,2.50,{\"b\":null},true],\"c\":\"x\xc3\xa9"
		    "\\n\"}");
		T_EQ_STR(ev.content_type, "application/json");
		T_EQ_STR(ev.id, "id-1");
		T_EQ_INT(ev.nattrs, 4);
		T_ASSERT(cevent_attr(&ev, "data") == NULL);
		cevent_free(&ev);
	}
	/* Data a list, a number, false. */
	if (ST_OK(&ev, "{" REQ ",\"data\":[]}")) {
		DATA_IS(&ev, "[]");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"data\":42}")) {
		DATA_IS(&ev, "42");
		cevent_free(&ev);
	}
	/* A '/' inside a string is text, not a comment. */
	if (ST_OK(&ev, "{" REQ ",\"data\":\"a/*b*/c//\\\"/\"}")) {
		DATA_IS(&ev, "\"a/*b*/c//\\\"/\"");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"data\":false}")) {
		DATA_IS(&ev, "false");
		cevent_free(&ev);
	}
	/* Attribute order does not matter; data may come first. */
	if (ST_OK(&ev, "{\"data\":{\"k\":1}," REQ "}")) {
		DATA_IS(&ev, "{\"k\":1}");
		cevent_free(&ev);
	}
}

/* String data: JSON text (with quotes) for JSON types, bytes otherwise. */
static void
st_data_string(void)
{
	struct cevent	 ev;

	if (ST_OK(&ev, "{" REQ ",\"data\":\"hello\"}")) {
		DATA_IS(&ev, "\"hello\"");
		T_EQ_STR(ev.content_type, "application/json");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"application/json\","
	    "\"data\":\"hello\"}")) {
		DATA_IS(&ev, "\"hello\"");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":"
	    "\"application/vnd.acme+json; charset=utf-8\",\"data\":\"hi\"}")) {
		DATA_IS(&ev, "\"hi\"");
		T_EQ_STR(ev.content_type,
		    "application/vnd.acme+json; charset=utf-8");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"hello \\\"w\\u00e9\\\"\\n\"}")) {
		DATA_IS(&ev, "hello \"w\xc3\xa9\"\n");
		T_EQ_STR(ev.content_type, "text/plain");
		T_ASSERT(cevent_attr(&ev, "datacontenttype") == NULL);
		cevent_free(&ev);
	}
	/* Non-string data with a non-JSON type is still its JSON text. */
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":{\"a\":1}}")) {
		DATA_IS(&ev, "{\"a\":1}");
		cevent_free(&ev);
	}
	/* No data: empty payload, no content type invented. */
	if (ST_OK(&ev, "{" REQ "}")) {
		T_EQ_INT(ev.datalen, 0);
		T_ASSERT(ev.content_type == NULL);
		cevent_free(&ev);
	}
	ST_BAD("{" REQ ",\"datacontenttype\":5,\"data\":\"x\"}");
}

/* data_base64: standard base64 decoded, every padding form. */
static void
st_data_base64(void)
{
	static const struct {
		const char	*b64;
		const char	*raw;
		size_t		 len;
	} good[] = {
		{ "aGVsbG8=", "hello", 5 },
		{ "aGVsbA==", "hell", 4 },
		{ "aGVsbG8h", "hello!", 6 },	/* no padding needed */
		{ "aGVs", "hel", 3 },
		{ "", "", 0 },
		{ "AP8=", "\x00\xff", 2 },
		{ "AAAA", "\x00\x00\x00", 3 },
		{ "/+/+", "\xff\xef\xfe", 3 },
	};
	static const char *const badb[] = { "aGVsbG8", "aGVsbG", "a",
	    "aGV*bG8=", "aG=sbG8=", "aGVsbG8=aGVs", "====", "aGVsb===",
	    "aGVs bG8=", "aGVsbG8-", "aGVsbG8_" };
	struct cevent	 ev;
	char		 buf[256];
	size_t		 i;

	for (i = 0; i < T_NCASES(good); i++) {
		snprintf(buf, sizeof(buf), "{" REQ ",\"datacontenttype\":"
		    "\"application/octet-stream\",\"data_base64\":\"%s\"}",
		    good[i].b64);
		if (ST_OK(&ev, buf)) {
			DATA_IS_N(&ev, good[i].raw, good[i].len);
			T_EQ_STR(ev.content_type, "application/octet-stream");
			T_ASSERT(cevent_attr(&ev, "data_base64") == NULL);
			cevent_free(&ev);
		}
	}
	for (i = 0; i < T_NCASES(badb); i++) {
		snprintf(buf, sizeof(buf), "{" REQ ",\"data_base64\":\"%s\"}",
		    badb[i]);
		ST_BAD(buf);
	}
	ST_BAD("{" REQ ",\"data_base64\":5}");
	ST_BAD("{" REQ ",\"data\":\"x\",\"data_base64\":\"aGVsbG8=\"}");
	ST_BAD("{" REQ ",\"data\":{},\"data_base64\":\"\"}");
}

/* Nesting: 64 levels in all accepted, 65 refused; brackets in strings free. */
static void
st_depth(void)
{
	struct cevent	 ev;
	char		*buf;
	size_t		 n, i, cap = 4096;

	buf = malloc(cap);
	if (buf == NULL)
		abort();
	/* The event object is level 1, so data gets 63 more levels. */
	for (int levels = 63; levels <= 64; levels++) {
		n = (size_t)snprintf(buf, cap, "{" REQ ",\"data\":");
		for (i = 0; i < (size_t)levels; i++)
			buf[n++] = '[';
		for (i = 0; i < (size_t)levels; i++)
			buf[n++] = ']';
		buf[n++] = '}';
		buf[n] = '\0';
		if (levels == 63) {
			if (ST_OK(&ev, buf)) {
				T_EQ_INT(ev.datalen, 126);
				cevent_free(&ev);
			}
		} else
			ST_BAD(buf);
	}
	/* Deep nesting far beyond the limit: refused, no stack overflow. */
	free(buf);
	cap = 200000;
	buf = malloc(cap);
	if (buf == NULL)
		abort();
	n = (size_t)snprintf(buf, cap, "{" REQ ",\"data\":");
	while (n < cap - 2)
		buf[n++] = '{' ;
	buf[n] = '\0';
	ST_BAD(buf);
	/* Brackets inside strings are text, not nesting. */
	n = (size_t)snprintf(buf, cap, "{" REQ ",\"data\":\"");
	for (i = 0; i < 200; i++)
		buf[n++] = '[';
	n += (size_t)snprintf(buf + n, cap - n, "\\\"{{{{\"}");
	if (ST_OK(&ev, buf))
		cevent_free(&ev);
	free(buf);
}

/* Extension values: strings, integers and booleans (stored as text). */
static void
st_extensions(void)
{
	struct cevent	 ev;

	if (ST_OK(&ev, "{" REQ ",\"count\":42,\"neg\":-7,\"flag\":true,"
	    "\"off\":false,\"name\":\"x\"}")) {
		T_EQ_STR(cevent_attr(&ev, "count"), "42");
		T_EQ_STR(cevent_attr(&ev, "neg"), "-7");
		T_EQ_STR(cevent_attr(&ev, "flag"), "true");
		T_EQ_STR(cevent_attr(&ev, "off"), "false");
		T_EQ_STR(cevent_attr(&ev, "name"), "x");
		T_EQ_INT(ev.nattrs, 9);
		cevent_free(&ev);
	}
	ST_BAD("{" REQ ",\"ratio\":1.5}");
	ST_BAD("{" REQ ",\"obj\":{}}");
	ST_BAD("{" REQ ",\"list\":[1]}");
	ST_BAD("{" REQ ",\"Bad_Name\":\"x\"}");
	ST_BAD("{" REQ ",\"my-ext\":\"x\"}");
	ST_BAD("{" REQ ",\"aaaaaaaaaaaaaaaaaaaaa\":\"x\"}");
	ST_BAD("{" REQ ",\"id\":\"again\"}");
	ST_BAD("{\"specversion\":\"1.0\",\"id\":\"a\\u0001b\",\"source\":\"/s\","
	    "\"type\":\"t\"}");
	ST_BAD("{\"specversion\":\"1.0\",\"id\":\"a\\nb\",\"source\":\"/s\","
	    "\"type\":\"t\"}");
	ST_BAD("{" REQ ",\"time\":\"2023-02-29T00:00:00Z\"}");
	if (ST_OK(&ev, "{" REQ ",\"time\":\"2024-02-29T00:00:00.5+01:00\"}")) {
		T_EQ_STR(cevent_attr(&ev, "time"), "2024-02-29T00:00:00.5+01:00");
		cevent_free(&ev);
	}
}

/* A null attribute is absent: optional ones vanish, required ones fail. */
static void
st_nulls(void)
{
	struct cevent	 ev;

	if (ST_OK(&ev, "{" REQ ",\"subject\":null,\"myext\":null,"
	    "\"time\":null,\"datacontenttype\":null,\"data\":\"x\"}")) {
		T_ASSERT(cevent_attr(&ev, "subject") == NULL);
		T_ASSERT(cevent_attr(&ev, "myext") == NULL);
		T_ASSERT(cevent_attr(&ev, "time") == NULL);
		T_EQ_INT(ev.nattrs, 4);
		T_EQ_STR(ev.content_type, "application/json");
		DATA_IS(&ev, "\"x\"");
		cevent_free(&ev);
	}
	ST_BAD("{\"specversion\":\"1.0\",\"id\":null,\"source\":\"/s\","
	    "\"type\":\"t\"}");
	ST_BAD("{\"specversion\":null,\"id\":\"i\",\"source\":\"/s\","
	    "\"type\":\"t\"}");
}

/* data_base64 null is absent like any null member: the data is used. */
static void
st_null_base64(void)
{
	struct cevent	 ev;

	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"x\",\"data_base64\":null}")) {
		DATA_IS(&ev, "x");
		cevent_free(&ev);
	}
	if (ST_OK(&ev, "{" REQ ",\"data_base64\":null}")) {
		T_EQ_INT(ev.datalen, 0);
		cevent_free(&ev);
	}
}

/* Not a CloudEvent at all. */
static void
st_malformed(void)
{
	struct cevent	 ev;

	ST_BAD("");
	ST_BAD("not json");
	ST_BAD("[]");
	/* Comments are not JSON (yajl would take them). */
	ST_BAD("{" REQ "/* c */}");
	ST_BAD("{" REQ "} // x");
	ST_BAD("{" REQ ",\"data\":[1 /* ] */]}");
	ST_BAD("\"x\"");
	ST_BAD("{" REQ ",}");
	ST_BAD("{" REQ);
	ST_BAD("{\"id\":\"i\",\"source\":\"/s\",\"type\":\"t\"}");
	ST_BAD("{\"specversion\":\"1.0\",\"source\":\"/s\",\"type\":\"t\"}");
	ST_BAD("{\"specversion\":\"1.0\",\"id\":\"i\",\"type\":\"t\"}");
	ST_BAD("{\"specversion\":\"1.0\",\"id\":\"i\",\"source\":\"/s\"}");
	ST_BAD("{\"specversion\":1.0,\"id\":\"i\",\"source\":\"/s\","
	    "\"type\":\"t\"}");
	ST_BAD("{\"specversion\":\"0.3\",\"id\":\"i\",\"source\":\"/s\","
	    "\"type\":\"t\"}");
	/* U+0000 cannot be carried (yajl would cut the string there). */
	ST_BAD("{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"a\\u0000b\"}");
	ST_BAD("{" REQ ",\"subject\":\"a\\u0000b\"}");
	/* An escaped backslash followed by u0000 is only text. */
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"a\\\\u0000b\"}")) {
		DATA_IS(&ev, "a\\u0000b");
		cevent_free(&ev);
	}
	/* A NUL inside the body. */
	T_EQ_INT(cevent_from_structured(&ev, "{\"a\":\0\"b\"}", 10), -1);
	cevent_free(&ev);
	/*
	 * Not UTF-8 (yajl checks only the sequences' shape): an overlong
	 * form, a surrogate, past U+10FFFF; in data and in an attribute.
	 */
	ST_BAD("{" REQ ",\"data\":\"a\xc0\xaf" "b\"}");
	ST_BAD("{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"\xed\xa0\x80\"}");
	ST_BAD("{" REQ ",\"data\":[\"\xf7\xbf\xbf\xbf\"]}");
	ST_BAD("{" REQ ",\"subject\":\"\xc0\xaf\"}");
	/* Lone surrogate escapes (yajl would store something else). */
	ST_BAD("{" REQ ",\"subject\":\"x\\ud800\\u0041y\"}");
	ST_BAD("{" REQ ",\"foo\":\"a\\ud800b\"}");
	ST_BAD("{" REQ ",\"data\":\"a\\udc00b\"}");
	ST_BAD("{" REQ ",\"data\":\"a\\ud800\"}");
	/* A pair is one character; an escaped backslash is text. */
	if (ST_OK(&ev, "{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"data\":\"\\ud83d\\ude00 \\\\ud800\"}")) {
		DATA_IS(&ev, "\xf0\x9f\x98\x80 \\ud800");
		cevent_free(&ev);
	}
	/* Form feed and vertical tab are not JSON whitespace. */
	ST_BAD("\f{" REQ "}");
	ST_BAD("{" REQ "}\v");
	/* data, data_base64, datacontenttype given twice, as any other. */
	ST_BAD("{" REQ ",\"data\":\"x\",\"data\":null}");
	ST_BAD("{" REQ ",\"data_base64\":\"AAAA\",\"data_base64\":\"QUJD\"}");
	ST_BAD("{" REQ ",\"datacontenttype\":\"text/plain\","
	    "\"datacontenttype\":\"application/json\",\"data\":\"x\"}");
}

/* Structured mode refuses json with exactly this detail. */
static void
st_detail_at(int line, const char *json, const char *want)
{
	struct cevent	 ev;

	if (!t_check_int(__FILE__, line, "cevent_from_structured", "-1",
	    st(&ev, json), -1))
		t_fail(__FILE__, line, "  accepted: %.300s", json);
	else
		t_check_str(__FILE__, line, "ev.detail", want, ev.detail, want);
	cevent_free(&ev);
}
#define ST_DETAIL(json, want)	st_detail_at(__LINE__, json, want)

/*
 * A key given twice anywhere in the event, data included (SPEC 13), is
 * refused naming it; escapes are decoded first.  The same key in two
 * objects is none.
 */
static void
st_duplicate_keys(void)
{
	struct cevent	 ev;

	ST_DETAIL("{" REQ ",\"id\":\"id-2\"}", "attribute id given twice");
	ST_DETAIL("{" REQ ",\"\\u0073ource\":\"/other\"}",
	    "attribute source given twice");
	ST_DETAIL("{" REQ ",\"myext\":1,\"myext\":1}",
	    "attribute myext given twice");
	ST_DETAIL("{" REQ ",\"data\":\"x\",\"data\":null}",
	    "attribute data given twice");
	ST_DETAIL("{" REQ ",\"data\":{\"order\":1,\"order\":2}}",
	    "key data.order given twice");
	ST_DETAIL("{" REQ ",\"data\":{\"items\":[{\"sku\":\"a\"},"
	    "{\"sku\":\"b\",\"qty\":1,\"sku\":\"c\"}]}}",
	    "key data.items[1].sku given twice");
	ST_DETAIL("{" REQ ",\"data\":[{\"a\":1,\"\\u0061\":2}]}",
	    "key data[0].a given twice");
	if (ST_OK(&ev, "{" REQ ",\"data\":{\"id\":1,\"a\":{\"id\":2},"
	    "\"b\":[{\"id\":3},{\"id\":4}]}}")) {
		DATA_IS(&ev, "{\"id\":1,\"a\":{\"id\":2},\"b\":[{\"id\":3},"
		    "{\"id\":4}]}");
		cevent_free(&ev);
	}
}

/* cevent_value_text(value) is want (and its length is want's). */
static void
text_at(int line, const char *value, const char *want)
{
	size_t	 len;
	char	*got = cevent_value_text(value, &len);

	if (strcmp(got, want) != 0 || len != strlen(want))
		t_fail(__FILE__, line, "  %s: got \"%s\" (%zu), want \"%s\"",
		    value, got, len, want);
	free(got);
}
#define TEXT(v, want)	text_at(__LINE__, v, want)

/*
 * A stored attribute as the JSON the relay writes has it: decoded, and
 * valid UTF-8 whatever was stored (SPEC 13): bad bytes, raw or encoded,
 * and a decoded NUL as U+FFFD; a '%' that begins no escape as itself.
 */
static void
stored_values_as_text(void)
{
	TEXT("", "");
	TEXT("/shop/orders", "/shop/orders");
	TEXT("caf%C3%A9%20bar", "caf\xc3\xa9 bar");
	TEXT("caf\xc3\xa9", "caf\xc3\xa9");
	TEXT("%25%22", "%\"");
	TEXT("/old\xff%FFsrc", "/old\xef\xbf\xbd\xef\xbf\xbdsrc");
	TEXT("x%00y", "x\xef\xbf\xbdy");
	TEXT("%00", "\xef\xbf\xbd");
	TEXT("100%", "100%");
	TEXT("%zz%4", "%zz%4");
	TEXT("%C3", "\xef\xbf\xbd");
	TEXT("a%E2%82", "a\xef\xbf\xbd\xef\xbf\xbd");
	TEXT("%ED%A0%80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	TEXT("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");	/* overlong */
}

/* The same event in both modes is stored the same way. */
static void
modes_equivalent(void)
{
	struct hdrs	 h;
	struct cevent	 b, s;
	size_t		 i;

	hdrs_init(&h, 1);
	hdr(&h, "ce-subject", "caf%C3%A9");
	hdr(&h, "ce-myext", "7");
	hdr(&h, "Content-Type", "text/plain");
	if (!T_EQ_INT(bin(&b, &h, "payload"), 0)) {
		cevent_free(&b);
		return;
	}
	if (!ST_OK(&s, "{" REQ ",\"subject\":\"caf\\u00e9\",\"myext\":7,"
	    "\"datacontenttype\":\"text/plain\",\"data\":\"payload\"}")) {
		cevent_free(&b);
		return;
	}
	T_EQ_INT(b.nattrs, s.nattrs);
	for (i = 0; i < b.nattrs; i++)
		T_EQ_STR(cevent_attr(&s, b.attrs[i].name), b.attrs[i].value);
	T_EQ_STR(b.content_type, s.content_type);
	T_EQ_INT(b.datalen, s.datalen);
	if (b.datalen == s.datalen)
		T_ASSERT(memcmp(b.data, s.data, b.datalen) == 0);
	cevent_free(&b);
	cevent_free(&s);
}

/* Media type helpers. */
static void
media_types(void)
{
	T_EQ_INT(cevent_is_structured("application/cloudevents+json"), 1);
	T_EQ_INT(cevent_is_structured(
	    "Application/CloudEvents+JSON; charset=utf-8"), 1);
	T_EQ_INT(cevent_is_structured("application/json"), 0);
	T_EQ_INT(cevent_is_structured("application/cloudevents-batch+json"),
	    0);
	T_EQ_INT(cevent_is_structured(NULL), 0);
	T_EQ_INT(cevent_is_structured(" \tapplication/cloudevents+json"), 1);
	T_EQ_INT(cevent_is_structured("application/cloudevents"), 0);
	T_EQ_INT(cevent_is_structured("application/cloudevents+jsonx"), 0);
	T_EQ_INT(cevent_is_batch("application/cloudevents-batch+json"), 1);
	T_EQ_INT(cevent_is_batch(
	    " APPLICATION/cloudevents-BATCH+json ; charset=utf-8"), 1);
	T_EQ_INT(cevent_is_batch("application/cloudevents+json"), 0);
	T_EQ_INT(cevent_is_batch("application/json"), 0);
	T_EQ_INT(cevent_is_batch(""), 0);
	T_EQ_INT(cevent_is_batch(NULL), 0);
	T_EQ_INT(cevent_media_is_json("application/json"), 1);
	T_EQ_INT(cevent_media_is_json("APPLICATION/JSON;charset=utf-8"), 1);
	T_EQ_INT(cevent_media_is_json("application/ld+json"), 1);
	T_EQ_INT(cevent_media_is_json("text/plain"), 0);
	T_EQ_INT(cevent_media_is_json("+json"), 0);
	T_EQ_INT(cevent_media_is_json("application/jsonx"), 0);
	T_EQ_INT(cevent_media_is_json(NULL), 0);
}

/*
 * cevent_gen_data then cevent_from_value gives back the same bytes for
 * every kind of data (signatures are over them), and picks the forms the
 * man page promises.
 */
static void
gen_data_round_trip(void)
{
	static const struct {
		const char	*ct, *data, *form;
	} c[] = {
		{ "application/json", "{\"n\":1}", "data" },
		{ "application/json", "{\"n\": 1}", "data_base64" },
		{ "application/json", "null", "data_base64" },
		{ "application/json", "{\"a\":\"x\\u0000y\"}", "data_base64" },
		{ "application/json", "not json", "data_base64" },
		/* Binary mode stores any bytes: JSON out must be UTF-8. */
		{ "application/json", "\"a\xc0\xaf" "b\"", "data_base64" },
		{ "application/json", "\"\xed\xa0\x80\"", "data_base64" },
		{ "application/cloudevents-batch+json", "[1,2]", "data" },
		{ "text/plain", "caf\xc3\xa9 \"q\"", "data" },
		{ "text/plain", "bad \xff utf8", "data_base64" },
		{ NULL, "no type", "data_base64" },
		{ "application/octet-stream", "\x01\x02", "data_base64" },
	};
	size_t			 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		yajl_gen		 g = yajl_gen_alloc(NULL);
		const unsigned char	*buf;
		size_t			 len;
		struct cevent		 ev;
		char			*text;
		yajl_val		 root;

		yajl_gen_map_open(g);
		yajl_gen_string(g, (const unsigned char *)"specversion", 11);
		yajl_gen_string(g, (const unsigned char *)"1.0", 3);
		yajl_gen_string(g, (const unsigned char *)"id", 2);
		yajl_gen_string(g, (const unsigned char *)"x", 1);
		yajl_gen_string(g, (const unsigned char *)"source", 6);
		yajl_gen_string(g, (const unsigned char *)"/s", 2);
		yajl_gen_string(g, (const unsigned char *)"type", 4);
		yajl_gen_string(g, (const unsigned char *)"a.b.c.d.v1", 10);
		if (c[i].ct != NULL) {
			yajl_gen_string(g, (const unsigned char *)
			    "datacontenttype", 15);
			yajl_gen_string(g, (const unsigned char *)c[i].ct,
			    strlen(c[i].ct));
		}
		cevent_gen_data(g, c[i].ct, c[i].data, strlen(c[i].data));
		yajl_gen_map_close(g);
		yajl_gen_get_buf(g, &buf, &len);
		text = strndup((const char *)buf, len);
		root = yajl_tree_parse(text, NULL, 0);
		T_ASSERT(root != NULL);
		if (root != NULL) {
			const char	*p[] = { c[i].form, NULL };

			T_ASSERT(yajl_tree_get(root, p, yajl_t_any) != NULL);
			T_EQ_INT(cevent_from_value(&ev, root), 0);
			T_EQ_INT(ev.datalen, strlen(c[i].data));
			T_ASSERT(ev.data != NULL &&
			    memcmp(ev.data, c[i].data, ev.datalen) == 0);
			cevent_free(&ev);
		}
		yajl_tree_free(root);
		free(text);
		yajl_gen_free(g);
	}
}

/*
 * partitionkey (SPEC 18): 1-256 decoded bytes of UTF-8 text, in either
 * mode; 256 accepted, 257 and empty refused, percent-decoded first.
 */
static void
partitionkey(void)
{
	struct cevent	 ev;
	struct hdrs	 h;
	char		 k[258], json[600];

	memset(k, 'k', 256);
	k[256] = '\0';
	hdrs_init(&h, 1);
	hdr(&h, "ce-partitionkey", k);
	if (T_EQ_INT(bin(&ev, &h, ""), 0)) {
		T_EQ_INT((int)strlen(cevent_attr(&ev, "partitionkey")), 256);
		cevent_free(&ev);
	}
	/* 85 x "%C3%A9" is 170 decoded bytes: in, though 510 sent. */
	hdrs_init(&h, 1);
	{
		char	 enc[85 * 6 + 1];
		int	 i;

		for (i = 0; i < 85; i++)
			memcpy(enc + 6 * i, "%C3%A9", 6);
		enc[85 * 6] = '\0';
		hdr(&h, "ce-partitionkey", enc);
	}
	if (T_EQ_INT(bin(&ev, &h, ""), 0))
		cevent_free(&ev);
	k[256] = 'k';
	k[257] = '\0';
	hdrs_init(&h, 1);
	hdr(&h, "ce-partitionkey", k);
	BIN_BAD(&h, "a partitionkey of 257 bytes");
	hdrs_init(&h, 1);
	hdr(&h, "ce-partitionkey", "");
	BIN_BAD(&h, "an empty partitionkey");
	hdrs_init(&h, 1);
	hdr(&h, "ce-partitionkey", "a%FFb");
	BIN_BAD(&h, "a partitionkey that is not UTF-8");
	k[256] = '\0';
	snprintf(json, sizeof(json), "{" REQ ",\"partitionkey\":\"%s\"}", k);
	if (ST_OK(&ev, json))
		cevent_free(&ev);
	snprintf(json, sizeof(json), "{" REQ ",\"partitionkey\":\"%sk\"}", k);
	ST_BAD(json);
	ST_BAD("{" REQ ",\"partitionkey\":\"\"}");
}

static const struct t_case cases[] = {
	{ "partitionkey: 1-256 bytes of UTF-8, both modes", partitionkey },
	{ "binary: required attributes accepted", bin_minimal },
	{ "binary: header names case-insensitive", bin_case_insensitive },
	{ "binary: percent-decoding", bin_percent },
	{ "binary: every byte in a value", bin_value_bytes },
	{ "binary: duplicates refused", bin_duplicates },
	{ "binary: ce-datacontenttype refused, Content-Type kept",
	  bin_content_type },
	{ "binary: required attributes", bin_required },
	{ "binary: time is RFC 3339", bin_time },
	{ "binary: control characters in the id", bin_id_control },
	{ "binary: extension names", bin_extension_names },
	{ "binary: values and content type are UTF-8 text (SPEC 13)",
	  bin_text_only },
	{ "JSON written is always UTF-8", gen_text_utf8 },
	{ "binary: attribute count and value length limits", bin_limits },
	{ "structured: data as compact JSON", st_data_object },
	{ "structured: string data and content types", st_data_string },
	{ "structured: data_base64", st_data_base64 },
	{ "structured: nesting depth", st_depth },
	{ "structured: extension values", st_extensions },
	{ "structured: null attributes are absent", st_nulls },
	{ "structured: data_base64 null with data", st_null_base64 },
	{ "structured: malformed events", st_malformed },
	{ "structured: a key given twice, data included", st_duplicate_keys },
	{ "stored values as valid UTF-8 text", stored_values_as_text },
	{ "binary and structured store the same", modes_equivalent },
	{ "media type helpers", media_types },
	{ "generated data comes back byte for byte", gen_data_round_trip },
};

int
main(void)
{
	return (t_run("cevent", cases, T_NCASES(cases)) ? 1 : 0);
}
