/*
 * inbox-envelope.c: what a GET answers of each event (SPEC 4): the
 * envelope, with its receipt, its deliveryCount and its signature, and
 * the event as a structured-mode CloudEvent.  Loop thread only.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <yajl/yajl_gen.h>

#include "treaty.h"
#include "cevent.h"
#include "config.h"
#include "inbox-int.h"
#include "inbox-lease.h"
#include "json.h"
#include "log.h"
#include "util.h"

struct attr_ctx {
	yajl_gen	 g;
	const char	*ct;
};

/*
 * One stored header as a structured-mode attribute.  Every attribute is
 * written, whatever was stored (before the UTF-8 checks, or straight to
 * NATS): its invalid bytes as U+FFFD (SPEC 13), never left out.
 */
static void
attr_cb(void *arg, const char *key, const char *value)
{
	struct attr_ctx	*a = arg;
	size_t		 out;
	char		*v;

	if (strcasecmp(key, "content-type") == 0) {
		a->ct = value;
		return;
	}
	if (strncasecmp(key, "ce-", 3) != 0 || key[3] == '\0')
		return;
	v = cevent_value_text(value, &out);
	json_gen_str(a->g, key + 3);
	json_gen_text(a->g, v, out);
	free(v);
}

/*
 * The stored event as a structured-mode CloudEvent: attributes from the
 * ce-* headers, datacontenttype, and the data written so that a worker
 * recovers the stored bytes exactly (cevent_gen_data).
 */
static void
gen_event(yajl_gen g, const struct store_msg *m)
{
	struct attr_ctx	 a = { g, NULL };
	const char	*data;
	size_t		 len;

	yajl_gen_map_open(g);
	store_msg_headers(m, attr_cb, &a);
	if (a.ct != NULL) {
		json_gen_str(g, "datacontenttype");
		json_gen_str(g, a.ct);
	}
	data = store_msg_data(m, &len);
	cevent_gen_data(g, a.ct, data, len);
	yajl_gen_map_close(g);
}

/* See inbox-int.h. */
int
inbox_envelope(yajl_gen g, struct fetch *f, const struct fetch_msg *fm,
    int64_t t, struct store_lease *l)
{
	struct isub	*s = f->s;
	struct store_msg *m = fm->m;
	char		 receipt[INBOX_RECEIPT_MAX];
	char		 sig[TREATY_SIG_HEADER_SIZE(TREATY_MAX_SECRETS)];
	const char	*raw;
	const void	*body;
	size_t		 blen, idlen = 0;
	char		*id = NULL;

	*l = fm->l;
	/*
	 * The id as the envelope shows it (an invalid byte as U+FFFD, as in
	 * the event): the receipt and the signature are made over it, so
	 * the worker verifies and acknowledges with the id it was given.
	 * For an id stored as ingest stores it, that is its decoded id.
	 */
	if ((raw = store_msg_header(m, "ce-id")) != NULL)
		id = cevent_value_text(raw, &idlen);
	if (idlen == 0) {
		/* Not an event (never stored by ingest): skip it. */
		log_warnx("inbox: stored message without an id",
		    "inbox=%s seq=%llu", s->cfg->name,
		    (unsigned long long)l->seq);
		free(id);
		return -1;
	}
	body = store_msg_data(m, &blen);
	yajl_gen_map_open(g);
	json_gen_str(g, "id");
	json_gen_str(g, id);
	json_gen_str(g, "receipt");
	if (f->lease && inbox_receipt_make(s->cfg->name,
	    f->key, id, fm->from.id, l, receipt,
	    sizeof(receipt)) == 0) {
		json_gen_str(g, receipt);
		/* A hand's lease is the hand's to know (inbox-order.c). */
		if (!fm->lent)
			inbox_leases_handout(ib.leases, s->idx, fm->from.id, l,
			    INBOX_LEASE_HELD, now_ms());
	} else
		yajl_gen_null(g);
	json_gen_str(g, "deliveryCount");
	yajl_gen_integer(g, (long long)l->delivered);
	json_gen_str(g, "event");
	gen_event(g, m);
	json_gen_str(g, "signature");
	if (treaty_keys_sig_sign(s->keys, t, id, body, blen,
	    sig, sizeof(sig)) > 0)
		json_gen_str(g, sig);
	else
		yajl_gen_null(g);
	yajl_gen_map_close(g);
	free(id);
	return 0;
}

