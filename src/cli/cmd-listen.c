/*
 * cmd-listen.c: treaty listen, the push receiver of SPEC 7, on evhttp in
 * one thread.
 *
 * For each POST: the event id (ce-id, or the id of a structured-mode
 * body) and x-treaty-signature over the body are checked first (401 when
 * the signature is missing, malformed, stale or wrong; the relay counts
 * that as a refusal), then the CloudEvent is parsed with the relay's own
 * parser (400 when it is not one), then (source, id) is looked up in the
 * inbox file: an event already recorded is answered 204 again without a
 * second record; a new one is appended and fsynced before the 204, so a
 * 204 always means "on disk".  A failed write answers 500, and the relay
 * tries again later.
 *
 * The signature covers the id and the data, not the other attributes
 * (SPEC 3), so whoever holds a delivery could send it again within the
 * tolerance with another source, type or subject: a new (source, id), a
 * forged event.  So each signature is remembered, for as long as it can
 * pass the tolerance check, with a digest of the attributes it came
 * with; the same signature with other attributes is refused (401).  The
 * relay sends one signature twice only with the same message (a resend).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "treaty.h"
#include "cevent.h"
#include "api.h"
#include "cli.h"
#include "json.h"
#include "log.h"
#include "util.h"

/* The relay sends at most an event of API_BODY_MAX; a structured body adds. */
#define MAX_BODY	(API_BODY_MAX + 64 * 1024)
/*
 * Signatures remembered (two entries each): past this many within twice
 * the tolerance (about 100 events a second for 10 minutes at the default),
 * new ones are answered 503 until some age out, never forgotten early.
 */
#define SIGS_CAP	(2 * 65536)

static struct {
	struct evhttp		*http;
	struct verifier		 ver;
	struct dedup		*sigs;	/* (signature, attributes) seen */
	struct record_file	*rf;
	const char		*inbox_file;
	const char		*on_receive;
	long long		 recorded, duplicates, refused;
} ls;

/* Answer with a JSON error body. */
static void
listen_error(struct evhttp_request *req, int status, const char *code,
    const char *detail)
{
	struct evbuffer	*out = evbuffer_new();

	json_error_body(out, code, detail);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, status, NULL, out);
	evbuffer_free(out);
	log_info("refused", "status=%d error=%s detail=%s", status, code,
	    log_q(detail));
	ls.refused++;
}

/*
 * Whether this signature came before with other attributes (1: a
 * replay), 0 when not (now remembered), -1 when the memory is full.
 */
static int
listen_replayed(const char *sig, const struct cevent *ev)
{
	struct evbuffer	*b = evbuffer_new();
	char		 skey[65], akey[65];
	long long	 now = now_ms();
	size_t		 i;
	int		 rc = 0;

	for (i = 0; i < ev->nattrs; i++) {
		evbuffer_add(b, ev->attrs[i].name, strlen(ev->attrs[i].name)
		    + 1);
		evbuffer_add(b, ev->attrs[i].value, strlen(ev->attrs[i].value)
		    + 1);
	}
	/* The content type, and a byte so that the buffer is never empty. */
	evbuffer_add_printf(b, "%s.", ev->content_type != NULL ?
	    ev->content_type : "");
	if (treaty_sha256_hex(sig, strlen(sig), skey) != TREATY_OK ||
	    treaty_sha256_hex(evbuffer_pullup(b, -1), evbuffer_get_length(b),
	    akey) != TREATY_OK)
		rc = -1;
	else if (dedup_has(ls.sigs, "signature", skey, now))
		rc = dedup_has(ls.sigs, skey, akey, now) ? 0 : 1;
	else if (dedup_room(ls.sigs, now) < 2)
		rc = -1;
	else {
		dedup_add(ls.sigs, "signature", skey, now);
		dedup_add(ls.sigs, skey, akey, now);
	}
	evbuffer_free(b);
	return rc;
}

/* One request. */
static void
listen_request_cb(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct cevent		 ev;
	const char		*sig, *rawid, *ct, *body;
	char			 id[CEVENT_MAX_VALUE + 1];
	size_t			 len, idlen;
	int			 structured, v;

	(void)arg;
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		listen_error(req, 405, "method_not_allowed", "POST only");
		return;
	}
	len = evbuffer_get_length(in);
	body = (const char *)evbuffer_pullup(in, -1);
	if (body == NULL)
		body = "";
	ct = evhttp_find_header(h, "Content-Type");
	structured = cevent_is_structured(ct);
	memset(&ev, 0, sizeof(ev));
	/* The id the signature covers. */
	if (structured) {
		if (cevent_from_structured(&ev, body, len) == -1) {
			listen_error(req, 400, "bad_event", ev.detail);
			goto out;
		}
		snprintf(id, sizeof(id), "%s", ev.id);
	} else {
		rawid = evhttp_find_header(h, "ce-id");
		if (rawid == NULL || treaty_pct_decode(rawid, strlen(rawid),
		    id, sizeof(id), &idlen) != TREATY_OK) {
			listen_error(req, 400, "bad_event",
			    "not a CloudEvent: no valid ce-id header");
			goto out;
		}
	}
	sig = evhttp_find_header(h, TREATY_SIG_HEADER);
	v = verifier_check(&ls.ver, sig, id, body, len);
	if (v != TREATY_OK) {
		listen_error(req, 401, "bad_signature", treaty_strerror(v));
		goto out;
	}
	if (!structured && cevent_from_binary(&ev, h, body, len) == -1) {
		listen_error(req, 400, "bad_event", ev.detail);
		goto out;
	}
	if ((v = listen_replayed(sig, &ev)) == 1) {
		listen_error(req, 401, "bad_signature", "this signature came "
		    "before with other attributes: a replay");
		goto out;
	} else if (v == -1) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", "1");
		listen_error(req, 503, "busy", "too many signatures within "
		    "the tolerance to remember; try again later");
		goto out;
	}
	if (record_has_event(ls.rf, ev.source, ev.id)) {
		ls.duplicates++;
		log_info("already recorded", "source=%s id=%s",
		    log_q(ev.source), log_q(ev.id));
		evhttp_send_reply(req, 204, NULL, NULL);
		goto out;
	}
	if (record_append(ls.rf, &ev, NULL, NULL, -1, 1) == -1) {
		log_warn("cannot write the inbox file", "file=%s",
		    log_q(ls.inbox_file));
		listen_error(req, 500, "not_recorded", strerror(errno));
		goto out;
	}
	ls.recorded++;
	log_info("recorded", "source=%s id=%s", log_q(ev.source),
	    log_q(ev.id));
	evhttp_send_reply(req, 204, NULL, NULL);
	if (ls.on_receive != NULL && spawn_event(ls.on_receive, &ev, NULL, -1,
	    spawn_hook_done, NULL) == -1)
		log_warn("cannot run --on-receive (ignored)", NULL);
out:
	cevent_free(&ev);
}

/* SIGINT/SIGTERM: stop listening and exit. */
static void
listen_stop_cb(void *arg)
{
	(void)arg;
	log_info("listener stopped", "recorded=%lld duplicates=%lld "
	    "refused=%lld", ls.recorded, ls.duplicates, ls.refused);
	client_exit(EXIT_OK);
}

static const struct option listen_opts[] = {
	{ "port", required_argument, NULL, 'p' },
	{ "address", required_argument, NULL, 'a' },
	{ "secret-file", required_argument, NULL, 's' },
	{ "inbox", required_argument, NULL, 'i' },
	{ "on-receive", required_argument, NULL, 'r' },
	{ "tolerance", required_argument, NULL, 'T' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

#define LISTEN_USAGE							\
	"usage: treaty listen --port PORT --secret-file FILE --inbox FILE\n" \
	"  [--address ADDR] [--on-receive CMD] [--tolerance S] [--verbose]"

/* treaty listen: see man/treaty.1. */
int
cmd_listen(int argc, char **argv)
{
	const char	*address = "0.0.0.0", *secret_file = NULL;
	long long	 port = -1, v;
	int		 c, rc = EXIT_FAILED;

	memset(&ls, 0, sizeof(ls));
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hv", listen_opts)) != -1) {
		switch (c) {
		case 'p':
			if ((port = num_arg(optarg)) < 1 || port > 65535) {
				cli_err("--port: 1 to 65535");
				return EXIT_USAGE;
			}
			break;
		case 'a': address = optarg; break;
		case 's': secret_file = optarg; break;
		case 'i': ls.inbox_file = optarg; break;
		case 'r': ls.on_receive = optarg; break;
		case 'T':
			if ((v = num_arg(optarg)) < 1 ||
			    v > VERIFY_TOLERANCE_MAX_S) {
				cli_err("--tolerance: 1 to %d seconds",
				    VERIFY_TOLERANCE_MAX_S);
				return EXIT_USAGE;
			}
			ls.ver.tolerance = v;
			break;
		case 'v': log_init(1); break;
		case 'h':
			puts(LISTEN_USAGE);
			return EXIT_OK;
		default:
			cli_err("%s", LISTEN_USAGE);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || port < 0 || secret_file == NULL ||
	    ls.inbox_file == NULL) {
		cli_err("%s", LISTEN_USAGE);
		return EXIT_USAGE;
	}
	if (verifier_load(&ls.ver, secret_file) == -1)
		goto out;
	/* A signature passes from its t - tolerance to t + tolerance. */
	ls.sigs = dedup_new(SIGS_CAP, 2 * 1000LL * (ls.ver.tolerance > 0 ?
	    ls.ver.tolerance : TREATY_SIG_TOLERANCE));
	if ((ls.rf = record_open(ls.inbox_file)) == NULL)
		goto out;
	if (client_loop_init() == -1)
		goto out;
	ls.http = evhttp_new(client_base());
	evhttp_set_max_body_size(ls.http, MAX_BODY);
	evhttp_set_timeout(ls.http, 35);
	evhttp_set_gencb(ls.http, listen_request_cb, NULL);
	if (evhttp_bind_socket(ls.http, address, (ev_uint16_t)port) != 0) {
		cli_err("cannot listen on %s port %lld: %s", address, port,
		    strerror(errno));
		goto out_http;
	}
	client_on_stop(listen_stop_cb, NULL);
	log_info("listening", "address=%s port=%lld inbox=%s", log_q(address),
	    port, log_q(ls.inbox_file));
	rc = client_run();
out_http:
	evhttp_free(ls.http);
	spawn_free();
	client_free();
out:
	dedup_free(ls.sigs);
	record_close(ls.rf);
	verifier_free(&ls.ver);
	return rc;
}
