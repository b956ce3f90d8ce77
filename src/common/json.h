/*
 * json.h: JSON bodies written with yajl's generator, and the small checks
 * the relay needs before handing text to yajl's tree parser.  Loop thread
 * only (the relay's and the client's): the body functions share one
 * generator.  The checks, and json_gen_* and json_copy on a caller's own
 * generator, are pure.
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>

struct evbuffer;

/*
 * Make the generator the body functions reuse: once, at start, before
 * any of them (the relay's and the client's main).
 */
void	json_init(void);
/* Free the reused generator (at exit). */
void	json_free(void);
/* {"error":code,"detail":detail} */
void	json_error_body(struct evbuffer *out, const char *code,
	    const char *detail);
/* The same with "index":index (a batch's event) when index >= 0. */
void	json_error_index_body(struct evbuffer *out, const char *code,
	    const char *detail, long long index);
/* {"id":id,"duplicate":dup} */
void	json_accepted_body(struct evbuffer *out, const char *id, int dup);
/*
 * A batch's answer (SPEC 14): {"results":[{"id":..,"duplicate":..},..]}
 * when every event was stored (code NULL), else {"error":code,
 * "detail":detail,"results":[{"id":..,"stored":..,"duplicate":..},..]}.
 */
struct json_result {
	const char	*id;
	int		 stored;
	int		 duplicate;
};
void	json_results_body(struct evbuffer *out, const char *code,
	    const char *detail, const struct json_result *r, size_t n);
/* Append a flat object of string pairs: keys[i] -> vals[i]. */
void	json_object_body(struct evbuffer *out, const char *const *keys,
	    const char *const *vals, size_t n);
/*
 * What yajl would take, or make something else of, in a JSON text: the
 * checks the relay makes before handing text to yajl's tree parser.
 * yajl's tree and our generator recurse, so depth is bounded first; its
 * tree keeps strings NUL-terminated, so \u0000 would cut a value short;
 * its parsers take comments, form feed and vertical tab as whitespace,
 * and make something else of a lone surrogate escape.  A batch's elements
 * are found by json_array_split, which knows none of these.
 */
enum json_flaw {
	JSON_FLAW_NONE = 0,
	JSON_FLAW_NUL,		/* a NUL byte */
	JSON_FLAW_DEEP,		/* arrays and objects nest deeper */
	JSON_FLAW_COMMENT,	/* a '/' outside strings */
	JSON_FLAW_SPACE,	/* form feed or vertical tab outside strings */
	JSON_FLAW_ESCAPE,	/* a \u escape that is no character */
	JSON_FLAW_NUL_ESCAPE	/* the escape \u0000 */
};
/*
 * The first flaw of the JSON text s (len bytes), nesting at most maxdepth
 * arrays and objects, in one pass.  Anything else wrong is yajl's to
 * find; UTF-8 is treaty_utf8_valid's.
 */
enum json_flaw	json_scan(const char *s, size_t len, int maxdepth);

/*
 * The elements of the JSON array text s (len bytes) in el[] (at most max),
 * each without the whitespace around it; an element is not checked (in
 * "[1,,2]" the second is empty).  Returns their number (0 for "[]"),
 * JSON_SPLIT_NOT_ARRAY when s is not one array with only whitespace
 * around it, or JSON_SPLIT_TOO_MANY when it has more than max elements.
 */
struct json_span {
	size_t	 off, len;
};
#define JSON_SPLIT_NOT_ARRAY	(-1)
#define JSON_SPLIT_TOO_MANY	(-2)
int	json_array_split(const char *s, size_t len, struct json_span *el,
	    size_t max);
struct yajl_val_s;
/*
 * The first key that one object of the parsed value v has twice, or
 * NULL (SPEC 13: a duplicate key in any JSON the relay reads is an error;
 * yajl's tree keeps both, decoded, so "a" and "\u0061" are one key).
 * Depth first, an object's own keys before its members' values; path
 * (pathlen bytes, cut to fit) gets the key's place in the configuration's
 * field form: "[0].subjects", "data.items[2].sku", "id".  Linear in the
 * tree but for each large object's sort of its keys; not recursive, so any
 * depth yajl's parser took is fine.
 */
const char	*json_dup_key(const struct yajl_val_s *v, char *path,
	    size_t pathlen);
/*
 * Where s (len bytes) stops being JSON as yajl_tree_parse reads it
 * (comments allowed): *line and *col, from 1 (a column counts bytes), of
 * the last byte yajl's parser read (the end of the token it refused, or
 * inside it for a few errors), or of the place just past the end when
 * the text ends too soon, and yajl's reason into why (its short form,
 * which never quotes the text: a setting may hold secrets).  0, or -1
 * when s is JSON after all.
 */
int		 json_error_at(const char *s, size_t len, size_t *line,
		    size_t *col, char *why, size_t whylen);

struct yajl_gen_t;
/*
 * Add text as a JSON string that is always valid UTF-8: a byte that does
 * not begin a valid UTF-8 sequence is written as U+FFFD.  Every string
 * the relay and the client write from stored or received bytes goes
 * through here.
 */
void	json_gen_text(struct yajl_gen_t *g, const char *s, size_t len);
/* The same for a NUL-terminated string. */
void	json_gen_str(struct yajl_gen_t *g, const char *s);
/*
 * s (len bytes) as text that is valid UTF-8, the way json_gen_text
 * writes it: a malloc'd NUL-terminated copy, its length in *outlen.
 */
char	*json_utf8_repair(const char *s, size_t len, size_t *outlen);
/* The same, or null when s is NULL. */
void	json_gen_str_or_null(struct yajl_gen_t *g, const char *s);

/* What g holds, as a malloc'd string; g is freed. */
char	*json_gen_take(struct yajl_gen_t *g);

/*
 * A parsed value (yajl's tree) into g as it was: strings through
 * json_gen_str, numbers by their text, objects and arrays whole.  For
 * trees of the relay's own bounded depth (yajl's parser recurses too).
 */
void	json_gen_tree(struct yajl_gen_t *g, const struct yajl_val_s *v);
/*
 * Copy the JSON text s (len bytes) into the generator g as one value,
 * token by token (numbers keep their text).  0, or -1 when s is not valid
 * JSON or json_scan finds a flaw (nesting deeper than JSON_COPY_DEPTH
 * among them), with nothing written to g.
 */
#define JSON_COPY_DEPTH	64
int	json_copy(struct yajl_gen_t *g, const char *s, size_t len);

#endif
