/*
 * json.c: JSON bodies through yajl's generator (it does the escaping), a
 * depth pre-check for untrusted input, and the duplicate-key check every
 * reader of outside JSON makes on yajl's tree.  Loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "json.h"
#include "util.h"

static yajl_gen	 json_g;	/* reused: one allocation for the process */

/* Copy the generator's buffer to out and reset it for the next body. */
static void
json_finish(yajl_gen g, struct evbuffer *out)
{
	const unsigned char	*buf;
	size_t			 len;

	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		evbuffer_add(out, buf, len);
	yajl_gen_clear(g);
	yajl_gen_reset(g, NULL);
}

/*
 * Add len bytes of text as a JSON string that is valid UTF-8 whatever the
 * bytes are: each byte that does not begin a valid sequence becomes
 * U+FFFD.  yajl's generator writes what it is given (or, validating,
 * fails the whole string), and one stored value with a stray byte must
 * not make a whole inbox batch, drop record or client record unreadable.
 */
void
json_gen_text(yajl_gen g, const char *s, size_t len)
{
	char	*buf;
	size_t	 o;

	if (treaty_utf8_valid(s, len)) {
		yajl_gen_string(g, (const unsigned char *)s, len);
		return;
	}
	buf = json_utf8_repair(s, len, &o);
	yajl_gen_string(g, (const unsigned char *)buf, o);
	free(buf);
}

/* A copy of s with U+FFFD for each byte that begins no valid sequence. */
char *
json_utf8_repair(const char *s, size_t len, size_t *outlen)
{
	static const char	 repl[] = "\xef\xbf\xbd";
	const unsigned char	*u = (const unsigned char *)s;
	char			*buf;
	size_t			 i, n, o = 0;

	buf = xmalloc(len * 3 + 1);
	for (i = 0; i < len; i += n) {
		n = u[i] < 0x80 ? 1 : (u[i] & 0xe0) == 0xc0 ? 2 :
		    (u[i] & 0xf0) == 0xe0 ? 3 : (u[i] & 0xf8) == 0xf0 ? 4 : 0;
		if (n == 0 || n > len - i || !treaty_utf8_valid(s + i, n)) {
			memcpy(buf + o, repl, 3);
			o += 3;
			n = 1;
			continue;
		}
		memcpy(buf + o, s + i, n);
		o += n;
	}
	buf[o] = '\0';
	*outlen = o;
	return buf;
}

/* Add a NUL-terminated string to the generator; see json_gen_text. */
void
json_gen_str(yajl_gen g, const char *s)
{
	json_gen_text(g, s, strlen(s));
}

/* Add a string (see json_gen_text), or null when there is none. */
void
json_gen_str_or_null(yajl_gen g, const char *s)
{
	if (s == NULL)
		yajl_gen_null(g);
	else
		json_gen_str(g, s);
}

/* What g holds, as a string of its own; g is freed. */
char *
json_gen_take(yajl_gen g)
{
	const unsigned char	*buf;
	size_t			 len;
	char			*out;

	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		len = 0;
	out = xstrndup(len > 0 ? (const char *)buf : "", len);
	yajl_gen_free(g);
	return out;
}

/* Make the generator for replies, validating UTF-8 (at start). */
void
json_init(void)
{
	if ((json_g = yajl_gen_alloc(NULL)) == NULL)
		xmalloc((size_t)-1);	/* aborts: out of memory */
	yajl_gen_config(json_g, yajl_gen_validate_utf8, 1);
}

/*
 * The generator for replies (bad UTF-8 bytes fail the string).  Loop
 * thread only; json_finish leaves it ready for the next body.
 */
static yajl_gen
json_gen(void)
{
	return json_g;
}

/* Free the reply generator. */
void
json_free(void)
{
	if (json_g != NULL)
		yajl_gen_free(json_g);
	json_g = NULL;
}

/* {"error":..,"detail":..} */
void
json_error_body(struct evbuffer *out, const char *code, const char *detail)
{
	json_error_index_body(out, code, detail, -1);
}

/* {"error":..,"detail":..,"index":..}, without the index when < 0. */
void
json_error_index_body(struct evbuffer *out, const char *code,
    const char *detail, long long index)
{
	yajl_gen	 g = json_gen();

	yajl_gen_map_open(g);
	json_gen_str(g, "error");
	json_gen_str(g, code);
	json_gen_str(g, "detail");
	json_gen_str(g, detail);
	if (index >= 0) {
		json_gen_str(g, "index");
		yajl_gen_integer(g, index);
	}
	yajl_gen_map_close(g);
	json_finish(g, out);
}

/* {"id":..,"duplicate":..} */
void
json_accepted_body(struct evbuffer *out, const char *id, int dup)
{
	yajl_gen		 g;
	const unsigned char	*u;

	/*
	 * Every stored event is answered this way: an id of printable
	 * ASCII that needs no escape (the usual one) is written as it is,
	 * without the generator's per-character callbacks.
	 */
	for (u = (const unsigned char *)id; *u >= 0x20 && *u < 0x7f &&
	    *u != '"' && *u != '\\'; u++)
		;
	if (*u == '\0') {
		evbuffer_add(out, "{\"id\":\"", 7);
		evbuffer_add(out, id, (size_t)(u - (const unsigned char *)id));
		if (dup)
			evbuffer_add(out, "\",\"duplicate\":true}", 19);
		else
			evbuffer_add(out, "\",\"duplicate\":false}", 20);
		return;
	}
	g = json_gen();

	yajl_gen_map_open(g);
	json_gen_str(g, "id");
	if (yajl_gen_string(g, (const unsigned char *)id, strlen(id)) !=
	    yajl_gen_status_ok)
		json_gen_str(g, "");
	json_gen_str(g, "duplicate");
	yajl_gen_bool(g, dup);
	yajl_gen_map_close(g);
	json_finish(g, out);
}

/* A batch's answer; see json.h. */
void
json_results_body(struct evbuffer *out, const char *code, const char *detail,
    const struct json_result *r, size_t n)
{
	yajl_gen	 g = json_gen();
	size_t		 i;

	yajl_gen_map_open(g);
	if (code != NULL) {
		json_gen_str(g, "error");
		json_gen_str(g, code);
		json_gen_str(g, "detail");
		json_gen_str(g, detail);
	}
	json_gen_str(g, "results");
	yajl_gen_array_open(g);
	for (i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		json_gen_str(g, "id");
		json_gen_str(g, r[i].id);
		if (code != NULL) {
			json_gen_str(g, "stored");
			yajl_gen_bool(g, r[i].stored);
		}
		json_gen_str(g, "duplicate");
		yajl_gen_bool(g, r[i].duplicate);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	json_finish(g, out);
}

/* A flat object of string members. */
void
json_object_body(struct evbuffer *out, const char *const *keys,
    const char *const *vals, size_t n)
{
	yajl_gen	 g = json_gen();
	size_t		 i;

	yajl_gen_map_open(g);
	for (i = 0; i < n; i++) {
		json_gen_str(g, keys[i]);
		if (yajl_gen_string(g, (const unsigned char *)vals[i],
		    strlen(vals[i])) != yajl_gen_status_ok)
			json_gen_str(g, "?");
	}
	yajl_gen_map_close(g);
	json_finish(g, out);
}

/*
 * The bytes json_scan stops at: outside strings (JSON_OUT), inside them
 * (JSON_IN).  Every other byte is passed over in a tight loop: most of an
 * event is the text of its strings.
 */
#define JSON_OUT	0x1
#define JSON_IN		0x2
static const unsigned char json_class[256] = {
	['\0'] = JSON_OUT | JSON_IN,	['"'] = JSON_OUT | JSON_IN,
	['\\'] = JSON_IN,
	['['] = JSON_OUT,	['{'] = JSON_OUT,
	[']'] = JSON_OUT,	['}'] = JSON_OUT,
	['/'] = JSON_OUT,	['\f'] = JSON_OUT,	['\v'] = JSON_OUT,
};

/* The value of the four hex digits at s, or -1. */
static long
json_hex4(const char *s)
{
	long	 v = 0;
	int	 i, d;

	for (i = 0; i < 4; i++) {
		d = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
		    s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 :
		    s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * The rest of a string whose opening quote is just before *ip; *ip is
 * left past its closing quote (or at len: yajl refuses what is never
 * closed).
 */
static enum json_flaw
json_scan_string(const char *s, size_t len, size_t *ip)
{
	size_t	 i = *ip;
	long	 u, lo;
	char	 c;

	for (;;) {
		while (i < len && !(json_class[(unsigned char)s[i]] & JSON_IN))
			i++;
		if (i >= len)
			break;
		if ((c = s[i++]) == '"')
			break;
		if (c == '\0' || (i < len && s[i] == '\0'))
			return JSON_FLAW_NUL;
		if (i >= len || s[i++] != 'u')
			continue;	/* a one-character escape */
		if (len - i < 4 || (u = json_hex4(s + i)) < 0)
			return JSON_FLAW_ESCAPE;	/* yajl refuses it */
		i += 4;
		if (u == 0)
			return JSON_FLAW_NUL_ESCAPE;
		if (u >= 0xDC00 && u <= 0xDFFF)
			return JSON_FLAW_ESCAPE;	/* a lone low one */
		if (u < 0xD800 || u > 0xDBFF)
			continue;
		if (len - i < 6 || s[i] != '\\' || s[i + 1] != 'u' ||
		    (lo = json_hex4(s + i + 2)) < 0xDC00 || lo > 0xDFFF)
			return JSON_FLAW_ESCAPE;	/* a high one alone */
		i += 6;
	}
	*ip = i;
	return JSON_FLAW_NONE;
}

/* See json.h: one pass, the first flaw found. */
enum json_flaw
json_scan(const char *s, size_t len, int maxdepth)
{
	enum json_flaw	 f;
	size_t		 i = 0;
	int		 depth = 0;

	for (;;) {
		while (i < len && !(json_class[(unsigned char)s[i]] & JSON_OUT))
			i++;
		if (i >= len)
			return JSON_FLAW_NONE;
		switch (s[i++]) {
		case '"':
			f = json_scan_string(s, len, &i);
			if (f != JSON_FLAW_NONE)
				return f;
			break;
		case '[':
		case '{':
			if (++depth > maxdepth)
				return JSON_FLAW_DEEP;
			break;
		case ']':
		case '}':
			depth--;
			break;
		case '/':
			return JSON_FLAW_COMMENT;
		case '\0':
			return JSON_FLAW_NUL;
		default:	/* form feed, vertical tab */
			return JSON_FLAW_SPACE;
		}
	}
}

/* JSON's insignificant whitespace (RFC 8259 section 2). */
static int
json_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The elements of a JSON array, found without parsing them: a batch's
 * events are each handed to the same parser as a single event, so a batch
 * stores exactly what the events sent alone would, and a bad one is
 * named by its index.  Only strings and nesting are followed here.
 */
int
json_array_split(const char *s, size_t len, struct json_span *el,
    size_t max)
{
	size_t	 i = 0, start, end, n = 0;
	int	 depth, instr;

	while (i < len && json_ws(s[i]))
		i++;
	if (i == len || s[i++] != '[')
		return JSON_SPLIT_NOT_ARRAY;
	while (i < len && json_ws(s[i]))
		i++;
	if (i < len && s[i] == ']') {
		i++;
		goto end;
	}
	for (;;) {
		start = i;
		depth = instr = 0;
		for (; i < len; i++) {
			char	 c;

			if (instr) {
				/* A string's text in one go. */
				while (i < len && !(json_class[(unsigned char)
				    s[i]] & JSON_IN))
					i++;
				if (i >= len)
					break;
				if (s[i] == '\\')
					i++;
				else if (s[i] == '"')
					instr = 0;
				continue;
			}
			c = s[i];
			if (c == '"')
				instr = 1;
			else if (c == '[' || c == '{')
				depth++;
			else if (c == ']' && depth == 0)
				break;
			else if (c == ']' || (c == '}' && depth > 0))
				depth--;
			else if (c == ',' && depth == 0)
				break;
		}
		if (i >= len)
			return JSON_SPLIT_NOT_ARRAY;	/* never closed */
		if (n == max)
			return JSON_SPLIT_TOO_MANY;
		for (end = i; end > start && json_ws(s[end - 1]); end--)
			;
		while (start < end && json_ws(s[start]))
			start++;
		el[n].off = start;
		el[n++].len = end - start;
		if (s[i++] == ']')
			break;
	}
end:
	while (i < len && json_ws(s[i]))
		i++;
	return i == len ? (int)n : JSON_SPLIT_NOT_ARRAY;
}

/* yajl parser callbacks that re-emit every token into a generator. */
static int
cp_null(void *g)
{
	return yajl_gen_null(g) == yajl_gen_status_ok;
}

static int
cp_bool(void *g, int b)
{
	return yajl_gen_bool(g, b) == yajl_gen_status_ok;
}

static int
cp_number(void *g, const char *s, size_t len)
{
	/* The number's own text: nothing is lost to a double. */
	return yajl_gen_number(g, s, len) == yajl_gen_status_ok;
}

static int
cp_string(void *g, const unsigned char *s, size_t len)
{
	return yajl_gen_string(g, s, len) == yajl_gen_status_ok;
}

static int
cp_map_open(void *g)
{
	return yajl_gen_map_open(g) == yajl_gen_status_ok;
}

static int
cp_map_close(void *g)
{
	return yajl_gen_map_close(g) == yajl_gen_status_ok;
}

static int
cp_array_open(void *g)
{
	return yajl_gen_array_open(g) == yajl_gen_status_ok;
}

static int
cp_array_close(void *g)
{
	return yajl_gen_array_close(g) == yajl_gen_status_ok;
}

static const yajl_callbacks copy_cbs = {
	cp_null, cp_bool, NULL, NULL, cp_number, cp_string, cp_map_open,
	cp_string, cp_map_close, cp_array_open, cp_array_close
};

/* Parse s (len bytes) completely, with callbacks cbs on ctx. */
static int
json_parse_all(const yajl_callbacks *cbs, void *ctx, const char *s,
    size_t len)
{
	yajl_handle	 h = yajl_alloc(cbs, NULL, ctx);
	int		 ok;

	if (h == NULL)
		return 0;
	ok = yajl_parse(h, (const unsigned char *)s, len) == yajl_status_ok &&
	    yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

/* Where a text stops being JSON, and why; see json.h. */
int
json_error_at(const char *s, size_t len, size_t *line, size_t *col,
    char *why, size_t whylen)
{
	static const yajl_callbacks	 none;
	yajl_handle			 h;
	unsigned char			*e;
	const char			*r;
	size_t				 pos, i, n;

	*line = *col = 1;
	if ((h = yajl_alloc(&none, NULL, NULL)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return 0;
	}
	yajl_config(h, yajl_allow_comments, 1);	/* as yajl_tree_parse */
	/*
	 * pos: the place, from 1.  After a failed yajl_parse, the bytes
	 * consumed end with the token it stopped at (yajl 2's parser; for a
	 * few errors, such as a map's missing ',', it steps back into that
	 * token: near it, then).  yajl_complete_parse fails only at the end:
	 * just past the last byte.
	 */
	if (yajl_parse(h, (const unsigned char *)s, len) != yajl_status_ok)
		pos = yajl_get_bytes_consumed(h);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		pos = len + 1;
	else {
		yajl_free(h);
		return -1;
	}
	/* "parse error: <why>\n" or "lexical error: <why>.\n": the why. */
	e = yajl_get_error(h, 0, (const unsigned char *)s, len);
	r = e != NULL ? (const char *)e : "not JSON";
	if (strstr(r, "error: ") != NULL)
		r = strstr(r, "error: ") + 7;
	n = strcspn(r, "\n");
	if (n > 0 && r[n - 1] == '.')
		n--;
	snprintf(why, whylen, "%.*s", (int)n, r);
	if (e != NULL)
		yajl_free_error(h, e);
	yajl_free(h);
	for (i = 0; i + 1 < pos && i < len; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else
			(*col)++;
	}
	return 0;
}

/* Copy one JSON text into g as a value; see json.h. */
int
json_copy(yajl_gen g, const char *s, size_t len)
{
	static const yajl_callbacks none;

	/* Check first, so that a bad text leaves nothing half-written. */
	if (len == 0 || json_scan(s, len, JSON_COPY_DEPTH) != JSON_FLAW_NONE ||
	    !json_parse_all(&none, NULL, s, len))
		return -1;
	return json_parse_all(&copy_cbs, g, s, len) ? 0 : -1;
}

/*
 * An object's keys compared at most pairwise up to this many; past it,
 * sorted (a body of 1 MiB holds some 200,000 keys in one object).
 */
#define DUP_PAIRWISE	16
#define DUP_SORT_STACK	64

struct dup_key {
	const char	*k;
	size_t		 i;	/* its place in the object */
};

/* Order keys by text, then by place: equal keys stay in text order. */
static int
dup_key_cmp(const void *a, const void *b)
{
	const struct dup_key	*x = a, *y = b;
	int			 c = strcmp(x->k, y->k);

	if (c != 0)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The index of the first key of object o (in text order) that an earlier
 * key has already given, or o's length when there is none.
 */
static size_t
dup_in_object(const struct yajl_val_s *o)
{
	struct dup_key	 stack[DUP_SORT_STACK], *s;
	size_t		 n = o->u.object.len, i, j, first = n;

	if (n <= DUP_PAIRWISE) {
		/* First bytes first: an event's names mostly differ there. */
		for (j = 1; j < n; j++)
			for (i = 0; i < j; i++)
				if (o->u.object.keys[i][0] ==
				    o->u.object.keys[j][0] &&
				    strcmp(o->u.object.keys[i],
				    o->u.object.keys[j]) == 0)
					return j;
		return n;
	}
	s = n <= DUP_SORT_STACK ? stack : xcalloc(n, sizeof(*s));
	for (i = 0; i < n; i++) {
		s[i].k = o->u.object.keys[i];
		s[i].i = i;
	}
	qsort(s, n, sizeof(*s), dup_key_cmp);
	/* A key equal to the one before it in the sort is a repeat. */
	for (i = 1; i < n; i++)
		if (s[i].i < first && strcmp(s[i - 1].k, s[i].k) == 0)
			first = s[i].i;
	if (s != stack)
		free(s);
	return first;
}

/* Append one step of a path ("[i]", or ".key", no dot at the start). */
static void
dup_path_add(char *path, size_t pathlen, size_t *o, const char *key,
    size_t index)
{
	int	 n;

	if (*o >= pathlen)
		return;
	if (key == NULL)
		n = snprintf(path + *o, pathlen - *o, "[%zu]", index);
	else
		n = snprintf(path + *o, pathlen - *o, "%s%s", *o > 0 ? "." :
		    "", key);
	if (n > 0)
		*o += (size_t)n;
}

/* See json.h: an explicit stack of the containers being walked. */
const char *
json_dup_key(const struct yajl_val_s *v, char *path, size_t pathlen)
{
	struct frame {
		const struct yajl_val_s	*v;
		size_t			 next;	/* the member to enter */
	}		 stack[32], *st = stack, *f;
	size_t		 depth = 0, cap = 32, len, d, o = 0, k;
	const char	*dup = NULL;
	yajl_val	 child;

	if (pathlen > 0)
		path[0] = '\0';
	if (v == NULL || (!YAJL_IS_OBJECT(v) && !YAJL_IS_ARRAY(v)))
		return NULL;
	st[depth++] = (struct frame){ v, 0 };
	while (depth > 0) {
		f = &st[depth - 1];
		len = YAJL_IS_OBJECT(f->v) ? f->v->u.object.len :
		    f->v->u.array.len;
		if (f->next == 0 && YAJL_IS_OBJECT(f->v) &&
		    (k = dup_in_object(f->v)) < len) {
			dup = f->v->u.object.keys[k];
			break;
		}
		if (f->next == len) {
			depth--;
			continue;
		}
		child = YAJL_IS_OBJECT(f->v) ? f->v->u.object.values[f->next] :
		    f->v->u.array.values[f->next];
		f->next++;
		if (!YAJL_IS_OBJECT(child) && !YAJL_IS_ARRAY(child))
			continue;
		if (depth == cap) {
			cap *= 2;
			if (st == stack) {
				st = xcalloc(cap, sizeof(*st));
				memcpy(st, stack, sizeof(stack));
			} else
				st = xrealloc(st, cap * sizeof(*st));
		}
		st[depth++] = (struct frame){ child, 0 };
	}
	if (dup != NULL) {
		for (d = 0; d + 1 < depth; d++)
			dup_path_add(path, pathlen, &o,
			    YAJL_IS_OBJECT(st[d].v) ?
			    st[d].v->u.object.keys[st[d].next - 1] : NULL,
			    st[d].next - 1);
		dup_path_add(path, pathlen, &o, dup, 0);
	}
	if (st != stack)
		free(st);
	return dup;
}

/* A parsed value into g; see json.h. */
void
json_gen_tree(yajl_gen g, const struct yajl_val_s *v)
{
	size_t	 i;

	if (YAJL_IS_STRING(v))
		json_gen_str(g, v->u.string);
	else if (YAJL_IS_NUMBER(v))
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
	else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (i = 0; i < v->u.object.len; i++) {
			json_gen_str(g, v->u.object.keys[i]);
			json_gen_tree(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (i = 0; i < v->u.array.len; i++)
			json_gen_tree(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else
		yajl_gen_null(g);
}
