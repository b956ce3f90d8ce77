/*
 * cevent.c: CloudEvents 1.0 over HTTP (binary and structured mode) into the
 * one form the relay stores: attributes (decoded), content type, data.
 * Pure functions of their input; loop thread only because evkeyvalq and
 * yajl trees belong to the caller.
 */
#include <ctype.h>
#include <stdarg.h>
#include <sys/queue.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/evp.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cevent.h"
#include "json.h"
#include "util.h"

#define JSON_MAX_DEPTH	64
struct cevent_block {
	struct cevent_block	*next;
	size_t			 used, size;
	char			 bytes[];
};

/*
 * The attributes' names and values, and the content type, are copied
 * into blocks of at least this size, freed together: one allocation for
 * a usual event's five or so attributes (about 200 bytes) instead of two
 * per attribute and a third for decoding.  Small enough that glibc serves it from its
 * per-thread cache (a request over 1 KiB makes it sort its free lists
 * first).
 */
#define CEVENT_BLOCK	(512 - sizeof(struct cevent_block))

/* Set ev->detail and return -1. */
static int __attribute__((format(printf, 2, 3)))
bad(struct cevent *ev, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(ev->detail, sizeof(ev->detail), fmt, ap);
	va_end(ap);
	return -1;
}

/* A copy of s[0..n) and a NUL in ev's blocks. */
static char *
cev_copy(struct cevent *ev, const char *s, size_t n)
{
	struct cevent_block	*b = ev->blocks;
	char			*p;

	if (b == NULL || b->size - b->used < n + 1) {
		b = xmalloc(sizeof(*b) + (n + 1 > CEVENT_BLOCK ? n + 1 :
		    CEVENT_BLOCK));
		b->size = n + 1 > CEVENT_BLOCK ? n + 1 : CEVENT_BLOCK;
		b->used = 0;
		b->next = ev->blocks;
		ev->blocks = b;
	}
	p = b->bytes + b->used;
	memcpy(p, s, n);
	p[n] = '\0';
	b->used += n + 1;
	return p;
}

/*
 * An empty event.  Everything but the attributes' slots, which are never
 * read past nattrs: zeroing all 64 of them cost about 350 instructions,
 * twice for every ingested event.
 */
static void
cev_init(struct cevent *ev)
{
	ev->nattrs = 0;
	ev->id = ev->source = ev->type = ev->specversion = NULL;
	ev->content_type = NULL;
	ev->data = NULL;
	ev->datalen = 0;
	ev->owned = NULL;
	ev->blocks = NULL;
	ev->detail[0] = '\0';
}

/* Free what the event owns. */
void
cevent_free(struct cevent *ev)
{
	struct cevent_block	*b;

	while ((b = ev->blocks) != NULL) {
		ev->blocks = b->next;
		free(b);
	}
	free(ev->owned);
	cev_init(ev);
}

/* Value of attribute name, or NULL. */
const char *
cevent_attr(const struct cevent *ev, const char *name)
{
	size_t	 i;

	/* The first bytes first: called a dozen times per ingested event. */
	for (i = 0; i < ev->nattrs; i++)
		if (ev->attrs[i].name[0] == name[0] &&
		    strcmp(ev->attrs[i].name, name) == 0)
			return ev->attrs[i].value;
	return NULL;
}

/*
 * Attribute names: the context attributes of the spec, or an extension of
 * 1-20 of a-z0-9.  "data", "data_base64" and "datacontenttype" are not
 * attributes here (the last travels as Content-Type).
 */
static int
attr_name_ok(const char *name)
{
	if (strcmp(name, "data") == 0 || strcmp(name, "datacontenttype") == 0)
		return 0;
	return treaty_ce_extension_name_valid(name);
}

/*
 * Control characters cannot go into a NATS header or a log line: C0, DEL,
 * and C1 (U+0080-U+009F, UTF-8 C2 80-9F: NEL among them, a line end to
 * some readers).  s is UTF-8.
 */
static int
has_ctl_n(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f ||
		    ((unsigned char)s[i] == 0xc2 && i + 1 < len &&
		    (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9f))
			return 1;
	return 0;
}

static int
has_ctl(const char *s)
{
	return has_ctl_n(s, strlen(s));
}

/* Copy name and value (vlen bytes) in as the next attribute; there is room. */
static void
attr_store(struct cevent *ev, const char *name, const char *value,
    size_t vlen, int verbatim)
{
	struct event_attr	*a = &ev->attrs[ev->nattrs++];

	a->nlen = strlen(name);
	a->name = cev_copy(ev, name, a->nlen);
	a->vlen = vlen;
	a->value = cev_copy(ev, value, vlen);
	a->verbatim = verbatim;
}

/* What attr_add may take as checked already. */
#define VAL_TEXT	1	/* UTF-8 without NUL (treaty_pct_decode) */
#define VAL_CLEAN	2	/* printable ASCII: text, no control characters */

#define VAL_VERBATIM	4	/* also needs no percent-encoding to be sent */

/*
 * A header's value that is printable ASCII without '%' is its own decoded
 * form, and text without control characters: VAL_CLEAN, and VAL_VERBATIM
 * too when it has no space or '"' (treaty_pct_encode leaves it as it is);
 * otherwise 0.  Most values are; one pass here spares the decoder's,
 * attr_add's and the encoder's.
 */
static int
plain_value(const char *s, size_t len)
{
	size_t	 i;
	int	 known = VAL_CLEAN | VAL_VERBATIM;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] - 0x21u < 0x5eu && s[i] != '%' &&
		    s[i] != '"')
			continue;
		if ((unsigned char)s[i] - 0x20u >= 0x5fu || s[i] == '%')
			return 0;
		known = VAL_CLEAN;	/* a space or '"' */
	}
	return known;
}

/*
 * Add one decoded attribute after checking its name and value; known
 * (VAL_*) says what the caller has checked already.
 */
static int
attr_add(struct cevent *ev, const char *name, const char *value, size_t vlen,
    int known)
{
	if (!attr_name_ok(name))
		return bad(ev, "attribute name %.40s is not valid", name);
	if (cevent_attr(ev, name) != NULL)
		return bad(ev, "attribute %s given twice", name);
	if (ev->nattrs == CEVENT_MAX_ATTRS)
		return bad(ev, "more than %d attributes", CEVENT_MAX_ATTRS);
	if (vlen > CEVENT_MAX_VALUE)
		return bad(ev, "attribute %s is too long", name);
	if (!(known & (VAL_TEXT | VAL_CLEAN)) &&
	    (!treaty_utf8_valid(value, vlen) ||
	    memchr(value, '\0', vlen) != NULL))
		return bad(ev, "attribute %s is not UTF-8 text", name);
	/* SPEC 13: text, so no control characters (a newline included). */
	if (!(known & VAL_CLEAN) && has_ctl_n(value, vlen))
		return bad(ev, "attribute %s contains control characters", name);
	attr_store(ev, name, value, vlen, (known & VAL_VERBATIM) != 0);
	return 0;
}

/* Add name=value unchecked; see cevent.h. */
int
cevent_attr_put(struct cevent *ev, const char *name, const char *value)
{
	if (ev->nattrs == CEVENT_MAX_ATTRS)
		return -1;
	attr_store(ev, name, value, strlen(value), 0);
	return 0;
}

/* Set the content type; see cevent.h. */
void
cevent_content_type_put(struct cevent *ev, const char *ct)
{
	ev->content_type = cev_copy(ev, ct, strlen(ct));
}

/* Check the required and typed attributes once all are collected. */
static int
cevent_check(struct cevent *ev)
{
	const char	*t, *s;

	ev->specversion = cevent_attr(ev, "specversion");
	ev->id = cevent_attr(ev, "id");
	ev->source = cevent_attr(ev, "source");
	ev->type = cevent_attr(ev, "type");
	if (ev->specversion == NULL)
		return bad(ev, "specversion is missing");
	if (strcmp(ev->specversion, "1.0") != 0)
		return bad(ev, "specversion must be 1.0");
	if (ev->id == NULL || ev->id[0] == '\0')
		return bad(ev, "id is missing");
	/* The id goes into Nats-Msg-Id and signatures undecoded. */
	if (has_ctl(ev->id))
		return bad(ev, "id contains control characters");
	if (ev->source == NULL || ev->source[0] == '\0')
		return bad(ev, "source is missing");
	if (ev->type == NULL || ev->type[0] == '\0')
		return bad(ev, "type is missing");
	if ((t = cevent_attr(ev, "time")) != NULL && !treaty_rfc3339_valid(t))
		return bad(ev, "time is not an RFC 3339 timestamp");
	if ((s = cevent_attr(ev, "dataschema")) != NULL && s[0] == '\0')
		return bad(ev, "dataschema is empty");
	if ((s = cevent_attr(ev, "subject")) != NULL && s[0] == '\0')
		return bad(ev, "subject is empty");
	/* UTF-8 text is attr_add's check, for every attribute. */
	if ((s = cevent_attr(ev, "partitionkey")) != NULL && (s[0] == '\0' ||
	    strlen(s) > CEVENT_MAX_PARTITIONKEY))
		return bad(ev, "partitionkey must be 1-"
		    API_STR(CEVENT_MAX_PARTITIONKEY) " bytes");
	if (ev->content_type != NULL && (ev->content_type[0] == '\0' ||
	    has_ctl(ev->content_type) ||
	    !treaty_utf8_valid(ev->content_type, strlen(ev->content_type))))
		return bad(ev, "content type is not valid UTF-8 text");
	return 0;
}

/* Binary mode; see event.h. */
int
cevent_from_binary(struct cevent *ev, const struct evkeyvalq *headers,
    const char *body, size_t len)
{
	const struct evkeyval	*kv;
	/* Decoding shrinks: a longer header is too long decoded too. */
	char			 name[32], val[3 * CEVENT_MAX_VALUE + 1];
	size_t			 i, n, vlen;
	int			 known;

	cev_init(ev);
	TAILQ_FOREACH(kv, headers, next) {
		/* "ce-" in any case, without a call: read for every header. */
		if ((kv->key[0] | 0x20) != 'c' || (kv->key[1] | 0x20) != 'e' ||
		    kv->key[2] != '-') {
			if (strcasecmp(kv->key, "content-type") == 0) {
				if (ev->content_type != NULL)
					return bad(ev, "Content-Type given twice");
				cevent_content_type_put(ev, kv->value);
			}
			continue;
		}
		n = strlen(kv->key + 3);
		if (n == 0 || n >= sizeof(name))
			return bad(ev, "header %.40s is not a valid attribute",
			    kv->key);
		for (i = 0; i <= n; i++)
			name[i] = (char)tolower((unsigned char)kv->key[3 + i]);
		if (strcmp(name, "datacontenttype") == 0)
			return bad(ev, "ce-datacontenttype is not allowed in "
			    "binary mode: use Content-Type");
		n = strlen(kv->value);
		if (n >= sizeof(val))
			return bad(ev, "attribute %s is too long", name);
		if ((known = plain_value(kv->value, n)) != 0) {
			if (attr_add(ev, name, kv->value, n, known) == -1)
				return -1;
			continue;
		}
		if (treaty_pct_decode(kv->value, n, val, sizeof(val), &vlen) !=
		    TREATY_OK)
			return bad(ev, "header %s is not valid percent-encoded "
			    "UTF-8", name);
		if (attr_add(ev, name, val, vlen, VAL_TEXT) == -1)
			return -1;
	}
	if (cevent_check(ev) == -1)
		return -1;
	ev->data = body;
	ev->datalen = len;
	return 0;
}

/* Media type without parameters, lowercased, into buf. */
static void
media_type(const char *ct, char *buf, size_t bufsz)
{
	size_t	 i = 0;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	for (; *ct != '\0' && *ct != ';' && *ct != ' ' && *ct != '\t' &&
	    i < bufsz - 1; ct++)
		buf[i++] = (char)tolower((unsigned char)*ct);
	buf[i] = '\0';
}

/*
 * 1 when ct's media type is want (lowercase, an application/cloudevents
 * type).  Both are asked of every ingested event, whose type is most often
 * something else: the shared prefix is compared first, without copying.
 */
static int
cloudevents_type(const char *ct, const char *want)
{
	char	 mt[128];

	if (ct == NULL)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, "application/cloudevents", 23) != 0)
		return 0;
	media_type(ct, mt, sizeof(mt));
	return strcmp(mt, want) == 0;
}

/* 1 for application/cloudevents+json. */
int
cevent_is_structured(const char *ct)
{
	return cloudevents_type(ct, "application/cloudevents+json");
}

/* 1 for application/cloudevents-batch+json (SPEC 14). */
int
cevent_is_batch(const char *ct)
{
	return cloudevents_type(ct, "application/cloudevents-batch+json");
}

/* 1 for application/json and any type ending in +json. */
int
cevent_media_is_json(const char *ct)
{
	char	 mt[128];
	size_t	 n;

	if (ct == NULL)
		return 0;
	media_type(ct, mt, sizeof(mt));
	n = strlen(mt);
	return strcmp(mt, "application/json") == 0 ||
	    (n > 5 && strcmp(mt + n - 5, "+json") == 0 && strchr(mt, '/'));
}

/* Write v as JSON text with yajl's generator.  Depth is pre-checked. */
static int
gen_value(yajl_gen g, yajl_val v)
{
	size_t	 i;

	if (YAJL_IS_STRING(v))
		return yajl_gen_string(g, (const unsigned char *)v->u.string,
		    strlen(v->u.string)) == yajl_gen_status_ok ? 0 : -1;
	if (YAJL_IS_NUMBER(v))
		return yajl_gen_number(g, v->u.number.r,
		    strlen(v->u.number.r)) == yajl_gen_status_ok ? 0 : -1;
	if (YAJL_IS_TRUE(v))
		return yajl_gen_bool(g, 1) == yajl_gen_status_ok ? 0 : -1;
	if (YAJL_IS_FALSE(v))
		return yajl_gen_bool(g, 0) == yajl_gen_status_ok ? 0 : -1;
	if (YAJL_IS_NULL(v))
		return yajl_gen_null(g) == yajl_gen_status_ok ? 0 : -1;
	if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (i = 0; i < v->u.array.len; i++)
			if (gen_value(g, v->u.array.values[i]) == -1)
				return -1;
		yajl_gen_array_close(g);
		return 0;
	}
	if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (i = 0; i < v->u.object.len; i++) {
			const char *k = v->u.object.keys[i];

			if (yajl_gen_string(g, (const unsigned char *)k,
			    strlen(k)) != yajl_gen_status_ok ||
			    gen_value(g, v->u.object.values[i]) == -1)
				return -1;
		}
		yajl_gen_map_close(g);
		return 0;
	}
	return -1;
}

/* The JSON text of v, in ev->owned. */
static int
set_data_json(struct cevent *ev, yajl_val v)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	size_t			 len;
	int			 rc = -1;

	if (g == NULL)
		return bad(ev, "out of memory");
	if (gen_value(g, v) == 0 &&
	    yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok) {
		ev->owned = xmalloc(len + 1);
		memcpy(ev->owned, buf, len);
		ev->owned[len] = '\0';
		ev->data = ev->owned;
		ev->datalen = len;
		rc = 0;
	} else
		bad(ev, "data cannot be written as JSON");
	yajl_gen_free(g);
	return rc;
}

/* Decode standard base64 (with padding) into ev->owned. */
static int
set_data_base64(struct cevent *ev, const char *b64)
{
	size_t		 n = strlen(b64), pad = 0;
	int		 out;

	if (n % 4 != 0)
		return bad(ev, "data_base64 is not valid base64");
	if (n > 0 && b64[n - 1] == '=')
		pad++;
	if (n > 1 && b64[n - 2] == '=')
		pad++;
	ev->owned = xmalloc(n / 4 * 3 + 1);
	out = n == 0 ? 0 : EVP_DecodeBlock((unsigned char *)ev->owned,
	    (const unsigned char *)b64, (int)n);
	/* '=' may only be the padding at the very end. */
	if (out < 0 || (size_t)out < pad || (strchr(b64, '=') != NULL &&
	    strchr(b64, '=') != b64 + n - pad))
		return bad(ev, "data_base64 is not valid base64");
	ev->data = ev->owned;
	ev->datalen = (size_t)out - pad;
	return 0;
}

/* Structured mode; see cevent.h. */
int
cevent_from_structured(struct cevent *ev, const char *body, size_t len)
{
	char		*text, ebuf[128], path[96];
	yajl_val	 root;
	int		 rc;

	cev_init(ev);
	switch (json_scan(body, len, JSON_MAX_DEPTH)) {
	case JSON_FLAW_NONE:
		break;
	case JSON_FLAW_DEEP:
		return bad(ev, "JSON nests deeper than %d", JSON_MAX_DEPTH);
	case JSON_FLAW_COMMENT:
		return bad(ev, "body is not JSON (a comment)");
	case JSON_FLAW_SPACE:
		return bad(ev, "body is not JSON (whitespace other than space, "
		    "tab, CR and LF)");
	case JSON_FLAW_ESCAPE:
		return bad(ev, "body is not JSON (a \\u escape that is no "
		    "character, such as a lone surrogate)");
	case JSON_FLAW_NUL_ESCAPE:
		return bad(ev, "U+0000 (\\u0000) cannot be carried in "
		    "structured mode; use data_base64");
	default:
		return bad(ev, "body is not JSON");
	}
	/*
	 * yajl checks only the shape of UTF-8 sequences (it takes overlong
	 * forms, surrogates and code points past U+10FFFF): what it would
	 * store is then not valid in the JSON the relay writes.
	 */
	if (!treaty_utf8_valid(body, len))
		return bad(ev, "body is not UTF-8");
	text = xstrndup(body, len);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	free(text);
	if (root == NULL)
		return bad(ev, "body is not JSON");
	/*
	 * SPEC 13: a key given twice is refused, in the event's own members
	 * and inside data alike: the relay would store one reading of it
	 * (yajl's tree keeps both) and a consumer's parser might take the
	 * other.
	 */
	if (json_dup_key(root, path, sizeof(path)) != NULL) {
		yajl_tree_free(root);
		return bad(ev, "%s %s given twice", strpbrk(path, ".[") ==
		    NULL ? "attribute" : "key", path);
	}
	rc = cevent_from_value(ev, root);
	yajl_tree_free(root);
	return rc;
}

/* A structured-mode event already parsed; see cevent.h. */
int
cevent_from_value(struct cevent *ev, const struct yajl_val_s *root)
{
	yajl_val	 data = NULL, b64 = NULL;
	size_t		 i;
	int		 rc = -1, ct = 0;

	cev_init(ev);
	if (!YAJL_IS_OBJECT(root)) {
		bad(ev, "body is not a JSON object");
		goto out;
	}
	for (i = 0; i < root->u.object.len; i++) {
		const char	*k = root->u.object.keys[i];
		yajl_val	 v = root->u.object.values[i];
		char		 num[64];
		const char	*s;

		/* Given twice, as any attribute: two readers, two events. */
		if ((strcmp(k, "data") == 0 && data != NULL) ||
		    (strcmp(k, "data_base64") == 0 && b64 != NULL) ||
		    (strcmp(k, "datacontenttype") == 0 && ct++ > 0)) {
			bad(ev, "attribute %s given twice", k);
			goto out;
		}
		if (strcmp(k, "data") == 0) {
			data = v;
			continue;
		}
		if (strcmp(k, "data_base64") == 0) {
			b64 = v;
			continue;
		}
		if (YAJL_IS_NULL(v))
			continue;	/* null means absent */
		if (strcmp(k, "datacontenttype") == 0) {
			if (!YAJL_IS_STRING(v)) {
				bad(ev, "datacontenttype must be a string");
				goto out;
			}
			cevent_content_type_put(ev, v->u.string);
			continue;
		}
		if (YAJL_IS_STRING(v))
			s = v->u.string;
		else if (YAJL_IS_TRUE(v))
			s = "true";
		else if (YAJL_IS_FALSE(v))
			s = "false";
		else if (YAJL_IS_INTEGER(v)) {
			snprintf(num, sizeof(num), "%lld", YAJL_GET_INTEGER(v));
			s = num;
		} else {
			bad(ev, "attribute %.40s must be a string, integer or "
			    "boolean", k);
			goto out;
		}
		if (attr_add(ev, k, s, strlen(s), 0) == -1)
			goto out;
	}
	/* The JSON format says a null member is an absent one. */
	if (b64 != NULL && YAJL_IS_NULL(b64))
		b64 = NULL;
	if (data != NULL && YAJL_IS_NULL(data))
		data = NULL;
	if (data != NULL && b64 != NULL) {
		bad(ev, "data and data_base64 are both present");
		goto out;
	}
	if (cevent_check(ev) == -1)
		goto out;
	if (b64 != NULL) {
		if (!YAJL_IS_STRING(b64)) {
			bad(ev, "data_base64 must be a string");
			goto out;
		}
		if (set_data_base64(ev, b64->u.string) == -1)
			goto out;
	} else if (data != NULL) {
		if (ev->content_type == NULL)
			/* The JSON format says such data is JSON. */
			cevent_content_type_put(ev, "application/json");
		if (YAJL_IS_STRING(data) &&
		    !cevent_media_is_json(ev->content_type)) {
			ev->owned = xstrdup(data->u.string);
			ev->data = ev->owned;
			ev->datalen = strlen(ev->owned);
		} else if (set_data_json(ev, data) == -1)
			goto out;
	} else {
		ev->data = "";
		ev->datalen = 0;
	}
	rc = 0;
out:
	return rc;
}

/*
 * The data member of a structured-mode event whose data bytes can be
 * recovered exactly (cevent_from_value gives back the same bytes, so a
 * signature over them still verifies): a JSON value when the type is
 * JSON and the bytes are already compact JSON as yajl writes it, a
 * string for valid UTF-8 text/ *, else data_base64.
 */
void
cevent_gen_data(yajl_gen g, const char *ct, const char *data, size_t len)
{
	yajl_gen		 scratch;
	const unsigned char	*buf;
	size_t			 blen;
	unsigned char		*b64;
	int			 exact = 0;

	if (len == 0)
		return;
	/*
	 * Not as JSON: a top-level null (the JSON format reads it as no
	 * data), or what json_copy refuses (a \u0000 escape among them:
	 * yajl's tree cuts the string there).
	 */
	if (cevent_media_is_json(ct) && !(len == 4 && memcmp(data, "null", 4)
	    == 0) && treaty_utf8_valid(data, len) &&
	    (scratch = yajl_gen_alloc(NULL)) != NULL) {
		exact = json_copy(scratch, data, len) == 0 &&
		    yajl_gen_get_buf(scratch, &buf, &blen) ==
		    yajl_gen_status_ok && blen == len &&
		    memcmp(buf, data, len) == 0;
		yajl_gen_free(scratch);
		if (exact) {
			json_gen_str(g, "data");
			json_copy(g, data, len);
			return;
		}
	} else if (ct != NULL && strncasecmp(ct, "text/", 5) == 0 &&
	    memchr(data, '\0', len) == NULL && treaty_utf8_valid(data, len)) {
		json_gen_str(g, "data");
		yajl_gen_string(g, (const unsigned char *)data, len);
		return;
	}
	b64 = xmalloc(4 * ((len + 2) / 3) + 1);
	EVP_EncodeBlock(b64, (const unsigned char *)data, (int)len);
	json_gen_str(g, "data_base64");
	yajl_gen_string(g, b64, strlen((char *)b64));
	free(b64);
}

/* The event as a structured-mode JSON object; see cevent.h. */
void
cevent_gen_structured(yajl_gen g, const struct cevent *ev)
{
	size_t	 i;

	yajl_gen_map_open(g);
	for (i = 0; i < ev->nattrs; i++) {
		json_gen_str(g, ev->attrs[i].name);
		json_gen_str(g, ev->attrs[i].value);
	}
	if (ev->content_type != NULL) {
		json_gen_str(g, "datacontenttype");
		json_gen_str(g, ev->content_type);
	}
	cevent_gen_data(g, ev->content_type, ev->data, ev->datalen);
	yajl_gen_map_close(g);
}

/* The value of a hexadecimal digit, or -1. */
static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A stored value as valid UTF-8 text; see cevent.h. */
char *
cevent_value_text(const char *value, size_t *len)
{
	static const char	 repl[] = "\xef\xbf\xbd";
	size_t			 n = strlen(value), i, o = 0;
	char			*buf, *text;
	int			 hi, lo;

	/* Each escape is three bytes, and so is U+FFFD: n + 1 is room. */
	buf = xmalloc(n + 1);
	for (i = 0; i < n; i++) {
		if (value[i] != '%' || n - i < 3 ||
		    (hi = hexval(value[i + 1])) < 0 ||
		    (lo = hexval(value[i + 2])) < 0) {
			buf[o++] = value[i];
			continue;
		}
		i += 2;
		if (hi == 0 && lo == 0) {
			/* A worker's yajl tree would cut the string there. */
			memcpy(buf + o, repl, 3);
			o += 3;
		} else
			buf[o++] = (char)(hi << 4 | lo);
	}
	if (treaty_utf8_valid(buf, o)) {
		buf[o] = '\0';
		*len = o;
		return buf;
	}
	text = json_utf8_repair(buf, o, len);
	free(buf);
	return text;
}
