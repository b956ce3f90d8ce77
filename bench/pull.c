/*
 * pull: an inbox worker for the pull benchmark.  Each worker takes
 * GET /v1/inbox/NAME?lease=true&max=M, then acknowledges every envelope
 * with DELETE (spread over its acknowledgement connections) and fetches
 * again once all are answered, until N events are acknowledged in all.
 * Prints events/s from the first GET to the last 204.
 *
 *   pull -p PORT -i INBOX -n N [-w WORKERS] [-m MAX] [-a ACKCONNS]
 *   (the inbox token in BENCH_INBOX_TOKEN)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_tree.h>

#include "bench.h"

#define MAX_ACKCONNS	64

struct worker {
	struct evhttp_connection *get;
	struct evhttp_connection *ack[MAX_ACKCONNS];
	int			 next_ack;
	int			 outstanding;
	int			 gets;
};

static struct event_base	*base;
static const char		*inbox, *token;
static int			 port, total, maxn = 100, nworkers = 1;
static int			 nack = 8;
static int			 acked, failed, empties;
static double			 t_start, t_end;
static char			 auth[512];

/* Monotonic seconds. */
static double
now_s(void)
{
	return (double)clock_ns(CLOCK_MONOTONIC) / 1e9;
}

static void	worker_get(struct worker *w);

/* A DELETE was answered. */
static void
ack_done(struct evhttp_request *req, void *arg)
{
	struct worker	*w = arg;

	if (req != NULL && evhttp_request_get_response_code(req) == 204)
		acked++;
	else
		failed++;
	if (acked >= total) {
		t_end = now_s();
		event_base_loopexit(base, NULL);
		return;
	}
	if (--w->outstanding == 0)
		worker_get(w);
}

/* Acknowledge one envelope. */
static void
worker_ack(struct worker *w, const char *id, const char *receipt)
{
	struct evhttp_request	*r = evhttp_request_new(ack_done, w);
	char			 uri[1024], *eid = evhttp_uriencode(id, -1, 0);

	snprintf(uri, sizeof(uri), "/v1/inbox/%s/%s?receipt=%s", inbox, eid,
	    receipt);
	free(eid);
	evhttp_add_header(evhttp_request_get_output_headers(r), "Host",
	    "127.0.0.1");
	evhttp_add_header(evhttp_request_get_output_headers(r),
	    "Authorization", auth);
	w->outstanding++;
	evhttp_make_request(w->ack[w->next_ack], r, EVHTTP_REQ_DELETE, uri);
	w->next_ack = (w->next_ack + 1) % nack;
}

/* Fetch again shortly (the inbox was empty for now). */
static void
retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	worker_get(arg);
}

/* A GET was answered: acknowledge everything in it. */
static void
get_done(struct evhttp_request *req, void *arg)
{
	struct worker	*w = arg;
	struct evbuffer	*b;
	char		*text, err[128];
	const char	*p_env[] = { "envelopes", NULL };
	const char	*p_id[] = { "id", NULL };
	const char	*p_rc[] = { "receipt", NULL };
	yajl_val	 root, envs, id, rc;
	size_t		 i, len;
	struct timeval	 tv = { 0, 1000 };

	if (req == NULL || evhttp_request_get_response_code(req) != 200) {
		fprintf(stderr, "pull: GET failed (%d)\n", req != NULL ?
		    evhttp_request_get_response_code(req) : 0);
		exit(1);
	}
	b = evhttp_request_get_input_buffer(req);
	len = evbuffer_get_length(b);
	text = malloc(len + 1);
	evbuffer_remove(b, text, len);
	text[len] = '\0';
	root = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	envs = root != NULL ? yajl_tree_get(root, p_env, yajl_t_array) : NULL;
	if (envs == NULL) {
		fprintf(stderr, "pull: bad answer: %s\n", err);
		exit(1);
	}
	for (i = 0; i < envs->u.array.len; i++) {
		id = yajl_tree_get(envs->u.array.values[i], p_id,
		    yajl_t_string);
		rc = yajl_tree_get(envs->u.array.values[i], p_rc,
		    yajl_t_string);
		if (id != NULL && rc != NULL)
			worker_ack(w, YAJL_GET_STRING(id), YAJL_GET_STRING(rc));
	}
	if (envs->u.array.len == 0) {
		empties++;
		event_base_once(base, -1, EV_TIMEOUT, retry_cb, w, &tv);
	}
	yajl_tree_free(root);
}

/* Take the next batch under a lease. */
static void
worker_get(struct worker *w)
{
	struct evhttp_request	*r = evhttp_request_new(get_done, w);
	char			 uri[256];

	snprintf(uri, sizeof(uri), "/v1/inbox/%s?lease=true&max=%d", inbox,
	    maxn);
	evhttp_add_header(evhttp_request_get_output_headers(r), "Host",
	    "127.0.0.1");
	evhttp_add_header(evhttp_request_get_output_headers(r),
	    "Authorization", auth);
	w->gets++;
	evhttp_make_request(w->get, r, EVHTTP_REQ_GET, uri);
}

int
main(int argc, char **argv)
{
	struct worker	*ws;
	int		 c, i, j, gets = 0;

	while ((c = getopt(argc, argv, "p:i:n:w:m:a:")) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 'i': inbox = optarg; break;
		case 'n': total = atoi(optarg); break;
		case 'w': nworkers = atoi(optarg); break;
		case 'm': maxn = atoi(optarg); break;
		case 'a': nack = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: pull -p PORT -i INBOX -n N "
			    "[-w WORKERS] [-m MAX] [-a ACKCONNS]\n");
			return 2;
		}
	}
	token = getenv("BENCH_INBOX_TOKEN");
	if (port == 0 || inbox == NULL || total <= 0 || token == NULL ||
	    nack < 1 || nack > MAX_ACKCONNS || nworkers < 1) {
		fprintf(stderr, "pull: -p, -i, -n and BENCH_INBOX_TOKEN are "
		    "required\n");
		return 2;
	}
	snprintf(auth, sizeof(auth), "Bearer %s", token);
	base = event_base_new();
	ws = calloc((size_t)nworkers, sizeof(*ws));
	for (i = 0; i < nworkers; i++) {
		ws[i].get = evhttp_connection_base_new(base, NULL, "127.0.0.1",
		    (unsigned short)port);
		for (j = 0; j < nack; j++)
			ws[i].ack[j] = evhttp_connection_base_new(base, NULL,
			    "127.0.0.1", (unsigned short)port);
	}
	t_start = now_s();
	for (i = 0; i < nworkers; i++)
		worker_get(&ws[i]);
	event_base_dispatch(base);
	for (i = 0; i < nworkers; i++)
		gets += ws[i].gets;
	printf("pull: workers=%d max=%d ack_conns=%d acked=%d failed=%d "
	    "gets=%d empty_gets=%d elapsed_s=%.3f events_per_s=%.0f\n",
	    nworkers, maxn, nack, acked, failed, gets, empties,
	    t_end - t_start, acked / (t_end - t_start));
	return 0;
}
