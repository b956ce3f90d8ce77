/*
 * cmd-admin.c: treaty admin (SPEC 15), the operations API of the relay
 * with an admin token (--token-file or TREATY_TOKEN).
 *
 *   treaty admin status    what each subscriber is owed, as a table (or
 *                          the relay's JSON with --json)
 *   treaty admin drops     a subscriber's drop records from a time on,
 *                          every page (or up to --limit), as a table (or
 *                          one JSON object a line with --json)
 *   treaty admin replay    start, follow or cancel a replay: cmd-replay.c
 *   treaty admin consumers the consumers that no subscriber owns (a
 *                          subscriber removed from the configuration
 *                          leaves its own), as a table or the JSON;
 *                          with --delete NAME, that one deleted
 *   treaty admin subscriber
 *                          put, get or delete a subscriber kept in
 *                          JetStream (SPEC 16): cmd-subscriber.c
 *
 * One GET, retried like every client request on what is worth retrying
 * (no answer, 429, 502-504) up to --attempts times: exit 0 with the
 * answer, 1 when the relay refuses for good (a wrong token: 401 or 403;
 * no admin token configured there: 404), 75 when it still fails after
 * the attempts or at SIGINT or SIGTERM.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cli.h"
#include "json.h"
#include "util.h"

#define DROPS_PAGE		1000	/* records asked for at once: the most */

static struct {
	char		*path;		/* below the URL */
	int		 json;		/* print the answer as it is */
	int		 attempts;
	struct retry	 retry;
	struct client_req *req;
	/*
	 * 0; 1 when there is another page to ask for (path set); -1 when
	 * the answer is not what it should be (said why).
	 */
	int		(*print)(const char *body, size_t len);
	/* drops */
	const char	*subscriber;
	long long	 limit;		/* records still wanted; -1: all */
	long long	 page;		/* records asked for at once */
	int64_t		 since_ns;	/* of the page asked for */
	int		 header;	/* the table's header is out */
	/* consumers --delete */
	const char	*consumer;
	int		 perhaps;	/* an earlier attempt may have arrived */
	/* pause, resume: the subscriber's name, and which (SPEC 17) */
	const char	*state_name;
	int		 pause;
	/* attempts: the subscriber's name, and the page's before */
	const char	*att_name;
	int64_t		 before_ns;	/* 0: the newest */
} ad;

/* One figure of a subscriber, or "-" when the relay does not know it. */
static void
print_figure(yajl_val s, const char *key, int width)
{
	const char	*path[] = { key, NULL };
	yajl_val	 v = yajl_tree_get(s, path, yajl_t_number);

	if (v != NULL && YAJL_IS_INTEGER(v))
		printf(" %*lld", width, (long long)YAJL_GET_INTEGER(v));
	else
		printf(" %*s", width, "-");
}

/* A string of a subscriber, or "" when it has none. */
static const char *
str_of(yajl_val s, const char *key)
{
	const char	*path[] = { key, NULL };
	yajl_val	 v = yajl_tree_get(s, path, yajl_t_string);

	return v != NULL ? YAJL_GET_STRING(v) : "";
}

/* The relay's JSON answer, parsed (NULL and a message when it is not). */
yajl_val
admin_parse(const char *body, size_t len)
{
	char		*text = xstrndup(body, len);
	yajl_val	 root = yajl_tree_parse(text, NULL, 0);

	free(text);
	if (root == NULL)
		cli_err("admin: the relay's answer is not JSON");
	return root;
}

/*
 * The list under key in the relay's answer (its tree in *root, for the
 * caller to free) and the width of its longest "name" (at least 4), or
 * NULL, said, when the answer holds no such list.
 */
static yajl_val
admin_list(const char *body, size_t len, const char *key, yajl_val *root,
    int *w)
{
	const char	*path[] = { key, NULL };
	yajl_val	 list;
	size_t		 i;

	*root = admin_parse(body, len);
	if ((list = yajl_tree_get(*root, path, yajl_t_array)) == NULL) {
		cli_err("admin: the relay's answer is not a list of %s", key);
		yajl_tree_free(*root);
		return NULL;
	}
	*w = 4;
	for (i = 0; i < list->u.array.len; i++)
		if ((int)strlen(str_of(list->u.array.values[i], "name")) > *w)
			*w = (int)strlen(str_of(list->u.array.values[i], "name"));
	return list;
}

/* GET /v1/admin/subscribers as a table, one subscriber per line. */
static int
print_status(const char *body, size_t len)
{
	yajl_val	 root, list, s;
	size_t		 i;
	int		 w;

	if (ad.json) {
		printf("%.*s\n", (int)len, body);
		return 0;
	}
	if ((list = admin_list(body, len, "subscribers", &root, &w)) == NULL)
		return -1;
	/*
	 * The relay counts drops in memory (its drop records in AUDIT are the
	 * whole history, too costly to count per status): the header says
	 * what the figure is, so a restart's zero is not read as "none".
	 */
	/*
	 * SOURCE: the configuration's, or the API's (SPEC 16); STATE:
	 * active, paused or tripped (SPEC 17).
	 */
	printf("%-*s %-4s %-6s %-7s %10s %10s %11s %19s  %s\n", w, "NAME",
	    "KIND", "SOURCE", "STATE", "PENDING", "IN-FLIGHT", "REDELIVERED",
	    "DROPPED-SINCE-START", "FILTER");
	for (i = 0; i < list->u.array.len; i++) {
		s = list->u.array.values[i];
		printf("%-*s %-4s %-6s %-7s", w, str_of(s, "name"),
		    str_of(s, "kind"), str_of(s, "source"), str_of(s, "state"));
		print_figure(s, "pending", 10);
		print_figure(s, "inFlight", 10);
		print_figure(s, "redelivered", 11);
		print_figure(s, "dropped", 19);
		printf("  %s\n", str_of(s, "filter"));
	}
	yajl_tree_free(root);
	return 0;
}

/* A parsed value as one JSON line (a record, a replay's answer). */
void
admin_print_json(yajl_val r)
{
	yajl_gen		 g = yajl_gen_alloc(NULL);
	const unsigned char	*buf;
	size_t			 len;

	json_gen_tree(g, r);
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		printf("%.*s\n", (int)len, (const char *)buf);
	yajl_gen_free(g);
}

/* One record as a line of the table. */
static void
print_record_line(yajl_val r)
{
	const char	*p_seq[] = { "sequence", NULL };
	const char	*p_att[] = { "attempts", NULL };
	const char	*p_st[] = { "status", NULL };
	yajl_val	 v;

	printf("%-30s", str_of(r, "time"));
	v = yajl_tree_get(r, p_seq, yajl_t_number);
	printf(" %10s", v != NULL ? v->u.number.r : "-");
	v = yajl_tree_get(r, p_att, yajl_t_number);
	printf(" %8s", v != NULL ? v->u.number.r : "-");
	v = yajl_tree_get(r, p_st, yajl_t_number);
	printf(" %6s", v != NULL ? v->u.number.r : "-");
	printf("  %-24s %-32s %-16s %s\n", str_of(r, "eventId"),
	    str_of(r, "subject"), str_of(r, "source"),
	    *str_of(r, "error") != '\0' ? str_of(r, "error") : "-");
}

/* GET /v1/admin/consumers as a table, one consumer per line. */
static int
print_consumers(const char *body, size_t len)
{
	const char	*p_more[] = { "more", NULL };
	yajl_val	 root, list, c, more;
	size_t		 i;
	int		 w;

	if (ad.json) {
		printf("%.*s\n", (int)len, body);
		return 0;
	}
	if ((list = admin_list(body, len, "consumers", &root, &w)) == NULL)
		return -1;
	printf("%-*s %-4s %10s %10s  %-30s  %s\n", w, "NAME", "KIND",
	    "PENDING", "IN-FLIGHT", "LAST-DELIVERED", "FILTER");
	for (i = 0; i < list->u.array.len; i++) {
		c = list->u.array.values[i];
		printf("%-*s %-4s", w, str_of(c, "name"), str_of(c, "kind"));
		print_figure(c, "pending", 10);
		print_figure(c, "inFlight", 10);
		printf("  %-30s  %s\n", *str_of(c, "lastDelivered") != '\0' ?
		    str_of(c, "lastDelivered") : "-", str_of(c, "filter"));
	}
	if ((more = yajl_tree_get(root, p_more, yajl_t_true)) != NULL)
		cli_err("admin consumers: the relay listed the first %zu; "
		    "there are more", list->u.array.len);
	yajl_tree_free(root);
	return 0;
}

/*
 * s percent-encoded for a path segment or a query value: everything but
 * RFC 3986's unreserved characters, so a '+' of a time's offset is %2B
 * (a '+' in a query would be read as a space) and a '/' is %2F.
 */
char *
admin_encode(const char *s)
{
	char	*e;

	if ((e = evhttp_uriencode(s, -1, 0)) == NULL) {
		cli_err("out of memory");
		abort();
	}
	return e;
}

/* The path of a page of drops from since (valid RFC 3339) on. */
static void
drops_path(const char *since)
{
	int64_t	 sec = 0;
	long	 ns = 0;

	char	*name = admin_encode(ad.subscriber);
	char	*t = admin_encode(since);
	char	 lim[24];
	size_t	 len;

	snprintf(lim, sizeof(lim), "%lld", ad.limit >= 0 &&
	    ad.limit < ad.page ? ad.limit : ad.page);
	free(ad.path);
	len = strlen(API_ADMIN_PATH) + strlen(name) + strlen(t) + 64;
	ad.path = xmalloc(len);
	snprintf(ad.path, len, "%sdrops?subscriber=%s&since=%s&limit=%s",
	    API_ADMIN_PATH, name, t, lim);
	free(name);
	free(t);
	treaty_rfc3339_parse(since, &sec, &ns);
	ad.since_ns = sec * NS_PER_S + ns;
}

/* The path of a page of attempts before before (NULL: the newest). */
static void
attempts_path(const char *before)
{
	char	*name = admin_encode(ad.att_name);
	char	*t = before != NULL ? admin_encode(before) : NULL;
	size_t	 len;
	int64_t	 sec = 0;
	long	 ns = 0;

	free(ad.path);
	len = strlen(API_ADMIN_PATH) + strlen(name) + (t ? strlen(t) : 0) + 80;
	ad.path = xmalloc(len);
	snprintf(ad.path, len, "%ssubscribers/%s/attempts?limit=%lld%s%s",
	    API_ADMIN_PATH, name, ad.limit >= 0 && ad.limit < ad.page ?
	    ad.limit : ad.page, t != NULL ? "&before=" : "", t != NULL ? t : "");
	free(name);
	free(t);
	if (before != NULL && treaty_rfc3339_parse(before, &sec, &ns) ==
	    TREATY_OK)
		ad.before_ns = sec * NS_PER_S + ns;
}

/* A page of GET .../attempts: printed; 1 when there is another. */
static int
print_attempts(const char *body, size_t len)
{
	const char	*p_list[] = { "attempts", NULL };
	const char	*p_next[] = { "next", NULL };
	const char	*p_st[] = { "status", NULL };
	const char	*p_att[] = { "attempt", NULL };
	const char	*p_ms[] = { "ms", NULL };
	yajl_val	 root = admin_parse(body, len), list, next, r, v;
	int64_t		 sec, prev = ad.before_ns;
	long		 ns;
	size_t		 i;
	int		 more = 0;

	if ((list = yajl_tree_get(root, p_list, yajl_t_array)) == NULL) {
		cli_err("admin attempts: the relay's answer is not a list of "
		    "attempts");
		yajl_tree_free(root);
		return -1;
	}
	if (!ad.json && !ad.header) {
		printf("%-24s %7s %6s %7s  %-16s %-24s %s\n", "TIME", "ATTEMPT",
		    "STATUS", "MS", "INSTANCE", "EVENT-ID", "ERROR");
		ad.header = 1;
	}
	for (i = 0; i < list->u.array.len && ad.limit != 0; i++) {
		r = list->u.array.values[i];
		if (ad.json)
			admin_print_json(r);
		else {
			printf("%-24s", str_of(r, "time"));
			v = yajl_tree_get(r, p_att, yajl_t_number);
			printf(" %7lld", v != NULL ? YAJL_GET_INTEGER(v) : 0LL);
			if ((v = yajl_tree_get(r, p_st, yajl_t_number)) != NULL)
				printf(" %6lld", YAJL_GET_INTEGER(v));
			else
				printf(" %6s", "-");
			if ((v = yajl_tree_get(r, p_ms, yajl_t_number)) != NULL)
				printf(" %7lld", YAJL_GET_INTEGER(v));
			else
				printf(" %7s", "-");
			printf("  %-16s %-24s %s\n", str_of(r, "instance"),
			    str_of(r, "eventId"), str_of(r, "error"));
		}
		if (ad.limit > 0)
			ad.limit--;
	}
	next = yajl_tree_get(root, p_next, yajl_t_string);
	if (next != NULL && ad.limit != 0) {
		/* A next page that does not go back would be asked for ever. */
		if (treaty_rfc3339_parse(next->u.string, &sec, &ns) !=
		    TREATY_OK || (prev > 0 && sec * NS_PER_S + ns >= prev)) {
			cli_err("admin attempts: the relay's next page does not "
			    "begin before this one");
			yajl_tree_free(root);
			return -1;
		}
		attempts_path(next->u.string);
		more = 1;
	}
	yajl_tree_free(root);
	return more;
}

/* The path of GET /v1/admin/consumers, or of DELETE .../consumers/NAME. */
static void
consumers_path(void)
{
	char	*name;
	size_t	 len;

	if (ad.consumer == NULL) {
		ad.path = xstrdup(API_ADMIN_PATH "consumers");
		return;
	}
	name = admin_encode(ad.consumer);
	len = strlen(API_ADMIN_PATH) + strlen(name) + 16;
	ad.path = xmalloc(len);
	snprintf(ad.path, len, "%sconsumers/%s", API_ADMIN_PATH, name);
	free(name);
}

/* A page of GET /v1/admin/drops: printed; 1 when there is another. */
static int
print_drops(const char *body, size_t len)
{
	const char	*p_drops[] = { "drops", NULL };
	const char	*p_next[] = { "next", NULL };
	yajl_val	 root = admin_parse(body, len), list, next;
	int64_t		 sec, prev = ad.since_ns;
	long		 ns;
	size_t		 i;
	int		 more = 0;

	if ((list = yajl_tree_get(root, p_drops, yajl_t_array)) == NULL) {
		cli_err("admin drops: the relay's answer is not a list of "
		    "drops");
		yajl_tree_free(root);
		return -1;
	}
	if (!ad.json && !ad.header) {
		printf("%-30s %10s %8s %6s  %-24s %-32s %-16s %s\n", "TIME",
		    "SEQUENCE", "ATTEMPTS", "STATUS", "EVENT-ID", "SUBJECT",
		    "SOURCE", "ERROR");
		ad.header = 1;
	}
	for (i = 0; i < list->u.array.len && ad.limit != 0; i++) {
		if (ad.json)
			admin_print_json(list->u.array.values[i]);
		else
			print_record_line(list->u.array.values[i]);
		if (ad.limit > 0)
			ad.limit--;
	}
	next = yajl_tree_get(root, p_next, yajl_t_string);
	if (next != NULL && ad.limit != 0) {
		/* A next page that does not move on would be asked for ever. */
		if (treaty_rfc3339_parse(next->u.string, &sec, &ns) !=
		    TREATY_OK || sec * NS_PER_S + ns <= prev) {
			cli_err("admin drops: the relay's next page does not "
			    "begin after this one");
			yajl_tree_free(root);
			return -1;
		}
		drops_path(next->u.string);
		more = 1;
	}
	yajl_tree_free(root);
	return more;
}

/*
 * A refusal for good, said once: the status, the relay's detail, and
 * which token was used when it was the token's fault.
 */
void
admin_refused(const char *what, const struct client_result *r)
{
	char	 why[768];

	admin_refused_why(what, r, client_why(r, why, sizeof(why)));
}

/* The same, the reason given. */
void
admin_refused_why(const char *what, const struct client_result *r,
    const char *why)
{
	cli_err("%s: %s%s", what, why, r->status == 401 || r->status == 403 ?
	    " (the token of --token-file or TREATY_TOKEN)" : "");
}

static void	admin_send(void *arg);

/* The relay's answer. */
static void
admin_answer_cb(void *arg, const struct client_result *r)
{
	char	 why[768];
	int	 c;

	(void)arg;
	ad.req = NULL;
	if (ad.consumer != NULL && (r->status == 204 || (r->status == 404 &&
	    ad.perhaps))) {
		/*
		 * A 404 after an attempt that may have reached the relay (no
		 * answer, or a 503 from JetStream's side) is that attempt's
		 * doing, or another's: either way the consumer is gone.
		 */
		printf("consumer %s %s\n", ad.consumer, r->status == 204 ?
		    "deleted" : "is gone (perhaps deleted by an earlier "
		    "attempt)");
		fflush(stdout);
		client_exit(EXIT_OK);
		return;
	}
	if (ad.state_name != NULL && r->status == 204) {
		printf("subscriber %s %s\n", ad.state_name, ad.pause ?
		    "paused" : "resumed");
		fflush(stdout);
		client_exit(EXIT_OK);
		return;
	}
	if (r->status == 200 && ad.consumer == NULL) {
		if ((c = ad.print(r->body, r->bodylen)) == -1) {
			client_exit(EXIT_FAILED);
			return;
		}
		if (c == 1) {
			/* The next page: a fresh start for its retries. */
			retry_reset(&ad.retry);
			admin_send(NULL);
			return;
		}
		fflush(stdout);
		client_exit(EXIT_OK);
		return;
	}
	if (client_transient(r)) {
		if (!r->not_sent)
			ad.perhaps = 1;
		if ((int)ad.retry.attempt + 1 < ad.attempts) {
			retry_later(&ad.retry, r);
			return;
		}
		cli_err("admin: still failing after %d attempts: %s", ad.attempts,
		    client_why(r, why, sizeof(why)));
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	admin_refused("admin", r);
	client_exit(EXIT_FAILED);
}

/* Send the request (again, after a backoff). */
static void
admin_send(void *arg)
{
	(void)arg;
	ad.req = client_request(ad.consumer != NULL ? OUTBOUND_DELETE :
	    ad.state_name != NULL ? OUTBOUND_POST : OUTBOUND_GET, ad.path, NULL,
	    0, NULL, 0, admin_answer_cb, NULL);
}

/* SIGINT or SIGTERM: stop waiting; not done, as after the attempts. */
static void
admin_stop_cb(void *arg)
{
	(void)arg;
	if (ad.req != NULL)
		client_cancel(ad.req);
	ad.req = NULL;
	retry_cancel(&ad.retry);
	client_exit(EXIT_TEMPFAIL);
}

/* The value of --attempts, or -1 after saying why not. */
int
admin_attempts(const char *arg)
{
	long long	 v;

	if ((v = num_arg(arg)) < 1 || v > ADMIN_ATTEMPTS_MAX) {
		cli_err("--attempts: 1 to %d", ADMIN_ATTEMPTS_MAX);
		return -1;
	}
	return (int)v;
}

static const struct option admin_opts[] = {
	CLIENT_LONGOPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "subscriber", required_argument, NULL, 's' },
	{ "since", required_argument, NULL, 'S' },
	{ "before", required_argument, NULL, 'S' },
	{ "limit", required_argument, NULL, 'l' },
	{ "page", required_argument, NULL, 'p' },
	{ "delete", required_argument, NULL, 'D' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

int
cmd_admin(int argc, char **argv)
{
	const char	*what, *since = NULL;
	char		 sincebuf[TREATY_RFC3339_MAX];
	long long	 v;
	int		 c, rc;

	memset(&ad, 0, sizeof(ad));
	ad.attempts = ADMIN_ATTEMPTS;
	ad.limit = -1;
	ad.page = DROPS_PAGE;
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		puts(ADMIN_USAGE);
		return EXIT_OK;
	}
	if (argc < 2 || argv[1][0] == '-') {
		cli_err("admin: which? status, drops, replay, consumers, "
		    "subscriber, pause or resume\n%s", ADMIN_USAGE);
		return EXIT_USAGE;
	}
	what = argv[1];
	if (strcmp(what, "replay") == 0)
		return cmd_admin_replay(argc - 1, argv + 1);
	if (strcmp(what, "subscriber") == 0)
		return cmd_admin_subscriber(argc - 1, argv + 1);
	if (strcmp(what, "pause") == 0 || strcmp(what, "resume") == 0)
		ad.pause = what[0] == 'p';
	else if (strcmp(what, "attempts") == 0)
		ad.print = print_attempts;
	else if (strcmp(what, "status") == 0)
		ad.print = print_status;
	else if (strcmp(what, "drops") == 0)
		ad.print = print_drops;
	else if (strcmp(what, "consumers") == 0)
		ad.print = print_consumers;
	else {
		cli_err("admin: unknown command %s\n%s", what, ADMIN_USAGE);
		return EXIT_USAGE;
	}
	optind = 1;
	while ((c = cli_getopt(argc - 1, argv + 1, "hv", admin_opts)) != -1) {
		switch (c) {
		case 'j':
			ad.json = 1;
			break;
		case 'n':
			if ((ad.attempts = admin_attempts(optarg)) == -1)
				return EXIT_USAGE;
			break;
		case 's':
			ad.subscriber = optarg;
			break;
		case 'S':
			since = optarg;
			break;
		case 'l':
			if ((v = num_arg(optarg)) < 1) {
				cli_err("--limit: a number of records, 1 or more");
				return EXIT_USAGE;
			}
			ad.limit = v;
			break;
		case 'p':
			if ((v = num_arg(optarg)) < 1 || v > DROPS_PAGE) {
				cli_err("--page: 1 to %d records", DROPS_PAGE);
				return EXIT_USAGE;
			}
			ad.page = v;
			break;
		case 'D':
			ad.consumer = optarg;
			break;
		case 'h':
			puts(ADMIN_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, ADMIN_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	if (ad.print == NULL || ad.print == print_attempts) {
		/* pause NAME, resume NAME, attempts NAME: the one argument. */
		if (optind + 1 >= argc || argv[optind + 1][0] == '\0') {
			cli_err("admin %s: which subscriber? NAME\n%s", what,
			    ADMIN_USAGE);
			return EXIT_USAGE;
		}
		if (ad.print == NULL)
			ad.state_name = argv[optind + 1];
		else
			ad.att_name = argv[optind + 1];
		optind++;
	}
	if (optind < argc - 1) {
		cli_err("admin %s: unexpected argument %s\n%s", what,
		    argv[optind + 1], ADMIN_USAGE);
		return EXIT_USAGE;
	}
	if (ad.state_name != NULL && (ad.json || ad.consumer != NULL ||
	    ad.subscriber != NULL || since != NULL || ad.limit >= 0 ||
	    ad.page != DROPS_PAGE)) {
		cli_err("admin %s: only NAME and --attempts\n%s", what,
		    ADMIN_USAGE);
		return EXIT_USAGE;
	}
	if (ad.consumer != NULL && (ad.print != print_consumers || ad.json ||
	    ad.consumer[0] == '\0')) {
		cli_err("admin %s: --delete NAME is for consumers, without "
		    "--json\n%s", what, ADMIN_USAGE);
		return EXIT_USAGE;
	}
	if (ad.print == print_attempts) {
		if (ad.subscriber != NULL) {
			cli_err("admin attempts: the subscriber is NAME, not "
			    "--subscriber\n%s", ADMIN_USAGE);
			return EXIT_USAGE;
		}
		if (since != NULL && since_arg(since, sincebuf,
		    sizeof(sincebuf)) == -1) {
			cli_err("admin attempts: --before must be "
			    SINCE_FORMS);
			return EXIT_USAGE;
		}
		attempts_path(since != NULL ? sincebuf : NULL);
	} else if (ad.print == print_drops) {
		if (ad.subscriber == NULL || since == NULL) {
			cli_err("admin drops: --subscriber NAME and --since TIME "
			    "are required\n%s", ADMIN_USAGE);
			return EXIT_USAGE;
		}
		if (since_arg(since, sincebuf, sizeof(sincebuf)) == -1) {
			cli_err("admin drops: --since must be "
			    SINCE_FORMS);
			return EXIT_USAGE;
		}
		drops_path(sincebuf);
	} else if (ad.subscriber != NULL || since != NULL || ad.limit >= 0 ||
	    ad.page != DROPS_PAGE) {
		cli_err("admin %s: --subscriber, --since, --limit and --page "
		    "are for drops\n%s", what, ADMIN_USAGE);
		return EXIT_USAGE;
	} else if (ad.state_name != NULL) {
		char	*enc = admin_encode(ad.state_name);

		ad.path = xjoin(API_ADMIN_PATH "subscribers/", enc, ad.pause ?
		    "/pause" : "/resume");
		free(enc);
	} else if (ad.print == print_consumers)
		consumers_path();
	else
		ad.path = xstrdup(API_ADMIN_PATH "subscribers");
	if ((c = client_init()) != 0) {
		client_free();
		free(ad.path);
		return c == -2 ? EXIT_USAGE : EXIT_FAILED;
	}
	retry_init(&ad.retry, "admin", admin_send, NULL);
	client_on_stop(admin_stop_cb, NULL);
	admin_send(NULL);
	rc = client_run();
	retry_cancel(&ad.retry);
	client_free();
	free(ad.path);
	return rc;
}
