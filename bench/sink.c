/*
 * sink: a trivial libevent HTTP server that answers every request with a
 * fixed status and a small JSON body, storing nothing.  The ceiling for the
 * ingest benchmark (what evhttp alone does on this machine) and, later, a
 * fast delivery target.
 *
 *   sink PORT [STATUS]      STATUS defaults to 202
 */
#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

static int	 sink_status = 202;

/* Answer every request the same way. */
static void
sink_cb(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*b = evbuffer_new();

	(void)arg;
	evbuffer_add_printf(b, "{\"id\":\"x\",\"duplicate\":false}");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, sink_status, NULL, sink_status == 204 ? NULL : b);
	evbuffer_free(b);
}

int
main(int argc, char **argv)
{
	struct event_base	*base;
	struct evhttp		*http;

	if (argc < 2) {
		fprintf(stderr, "usage: sink PORT [STATUS]\n");
		return 2;
	}
	if (argc > 2)
		sink_status = atoi(argv[2]);
	base = event_base_new();
	http = evhttp_new(base);
	evhttp_set_max_body_size(http, 1024 * 1024);
	evhttp_set_gencb(http, sink_cb, NULL);
	if (evhttp_bind_socket(http, "127.0.0.1", (ev_uint16_t)atoi(argv[1]))) {
		perror("bind");
		return 1;
	}
	event_base_dispatch(base);
	return 0;
}
