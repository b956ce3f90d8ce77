/*
 * cevent.h: a CloudEvent received over HTTP, in binary or structured mode,
 * validated and normalised to the binary-mode form the relay stores.
 * Pure functions of their arguments, no state of their own: any thread,
 * on headers, trees and generators that thread owns (the relay and the
 * client call them on their loop).
 */
#ifndef CEVENT_H
#define CEVENT_H

#include <stddef.h>

struct evkeyvalq;

#define CEVENT_MAX_ATTRS		64
#define CEVENT_MAX_VALUE		4096	/* decoded bytes of one attribute */
/*
 * The partitioning extension's partitionkey (SPEC 18: an ordered
 * subscriber's key), decoded bytes at most; the extension wants it
 * non-empty.
 */
#define CEVENT_MAX_PARTITIONKEY		256

struct event_attr {
	char		*name;		/* lowercase, without "ce-" */
	char		*value;		/* decoded UTF-8 */
	size_t		 nlen, vlen;	/* their lengths */
	int		 verbatim;	/* 1: value needs no percent-encoding */
};

struct cevent_block;			/* the attributes' bytes (cevent.c) */

/* A new field is reset in cev_init (cevent.c) too. */
struct cevent {
	struct event_attr attrs[CEVENT_MAX_ATTRS];
	size_t		  nattrs;
	const char	 *id, *source, *type, *specversion;	/* into attrs */
	char		 *content_type;	/* datacontenttype (in blocks), or NULL */
	const char	 *data;		/* the payload to store */
	size_t		  datalen;
	char		 *owned;	/* data, when decoded or generated */
	struct cevent_block *blocks;	/* names, values, content type */
	char		  detail[160];	/* why it is not valid */
};

/*
 * Binary mode: ce-* headers (percent-decoded) and the body as data.
 * Returns 0, or -1 with ev->detail set (answer 400 bad_event).
 */
int	cevent_from_binary(struct cevent *ev, const struct evkeyvalq *headers,
	    const char *body, size_t len);
/*
 * Add attribute name=value as given, unchecked (a client building an
 * event that cevent_from_* then checks): 0, or -1 when ev is full.
 */
int	cevent_attr_put(struct cevent *ev, const char *name, const char *value);
/* Set the content type (datacontenttype) to a copy of ct, as given. */
void	cevent_content_type_put(struct cevent *ev, const char *ct);
/*
 * Structured mode (application/cloudevents+json): the JSON object, with
 * data or data_base64, stored as its binary-mode equivalent.
 */
int	cevent_from_structured(struct cevent *ev, const char *body, size_t len);
/*
 * The same from a JSON object already parsed by yajl's tree (an inbox
 * envelope's "event").  The caller keeps and frees the tree.
 */
struct yajl_val_s;
int	cevent_from_value(struct cevent *ev, const struct yajl_val_s *root);
/*
 * Write the data member of a structured-mode event so that
 * cevent_from_value recovers exactly these bytes (signatures are over
 * them): JSON when the type is JSON and the bytes are compact JSON as yajl
 * writes it, a string for UTF-8 text/ *, else data_base64.  Nothing for
 * empty data.
 */
struct yajl_gen_t;
void	cevent_gen_data(struct yajl_gen_t *g, const char *content_type,
	    const char *data, size_t len);
/* ev as a structured-mode JSON object (attributes, type, data). */
void	cevent_gen_structured(struct yajl_gen_t *g, const struct cevent *ev);
/*
 * A stored attribute value (a ce-* header, percent-encoded as the HTTP
 * binding says) as text for the JSON the relay writes, whatever was
 * stored (SPEC 13): the escapes decoded (a '%' that begins none is kept),
 * and each byte that begins no valid UTF-8 sequence, and a decoded NUL,
 * written as U+FFFD.  For a value that decodes to valid UTF-8 without
 * NUL this is its decoded text.  A malloc'd string, its length in *len.
 */
char	*cevent_value_text(const char *value, size_t *len);
/* 1 when a Content-Type is application/cloudevents+json (any params). */
int	cevent_is_structured(const char *content_type);
/* 1 when a Content-Type is application/cloudevents-batch+json. */
int	cevent_is_batch(const char *content_type);
/* 1 when a media type is JSON: application/json or any ...+json. */
int	cevent_media_is_json(const char *content_type);
/* Decoded value of attribute name (without "ce-"), or NULL. */
const char	*cevent_attr(const struct cevent *ev, const char *name);
/* Free what the event owns. */
void	cevent_free(struct cevent *ev);

#endif
