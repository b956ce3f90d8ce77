/*
 * cmd-admin.c: treaty admin (SPEC 15), the operations API of the relay
 * with an admin token (--token-file or TREATY_TOKEN).
 *
 *   treaty admin status    what each subscriber is owed, as a table (or
 *                          the relay's JSON with --json)
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

#include <yajl/yajl_tree.h>

#include "api.h"
#include "cli.h"

#define ADMIN_ATTEMPTS		8
#define ADMIN_ATTEMPTS_MAX	1000

#define ADMIN_USAGE							\
	"usage: treaty admin status [--json] [--attempts N]\n" CLIENT_USAGE

static struct {
	const char	*path;		/* below the URL */
	int		 json;		/* print the answer as it is */
	int		 attempts;
	struct retry	 retry;
	struct client_req *req;
	void		(*print)(const char *body, size_t len);
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

/* GET /v1/admin/subscribers as a table, one subscriber per line. */
static void
print_status(const char *body, size_t len)
{
	const char	*path[] = { "subscribers", NULL };
	char		*text = malloc(len + 1);
	yajl_val	 root, list, s;
	size_t		 i;
	int		 w = 4;

	if (text == NULL)
		return;
	memcpy(text, body, len);
	text[len] = '\0';
	root = yajl_tree_parse(text, NULL, 0);
	free(text);
	if ((list = yajl_tree_get(root, path, yajl_t_array)) == NULL) {
		cli_err("admin status: the relay's answer is not a list of "
		    "subscribers");
		yajl_tree_free(root);
		return;
	}
	for (i = 0; i < list->u.array.len; i++)
		if ((int)strlen(str_of(list->u.array.values[i], "name")) > w)
			w = (int)strlen(str_of(list->u.array.values[i], "name"));
	printf("%-*s %-4s %10s %10s %11s %10s  %s\n", w, "NAME", "KIND",
	    "PENDING", "IN-FLIGHT", "REDELIVERED", "DROPPED", "FILTER");
	for (i = 0; i < list->u.array.len; i++) {
		s = list->u.array.values[i];
		printf("%-*s %-4s", w, str_of(s, "name"), str_of(s, "kind"));
		print_figure(s, "pending", 10);
		print_figure(s, "inFlight", 10);
		print_figure(s, "redelivered", 11);
		print_figure(s, "dropped", 10);
		printf("  %s\n", str_of(s, "filter"));
	}
	yajl_tree_free(root);
}

static void	admin_send(void *arg);

/* The relay's answer. */
static void
admin_answer_cb(void *arg, const struct client_result *r)
{
	char	 what[96], detail[200];

	(void)arg;
	ad.req = NULL;
	if (r->status == 200) {
		if (ad.json)
			printf("%.*s\n", (int)r->bodylen, r->body);
		else
			ad.print(r->body, r->bodylen);
		client_exit(EXIT_OK);
		return;
	}
	if (client_transient(r)) {
		if ((int)ad.retry.attempt + 1 < ad.attempts) {
			retry_later(&ad.retry, r);
			return;
		}
		cli_err("admin: still failing after %d attempts: %s", ad.attempts,
		    client_what(r, what, sizeof(what)));
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	client_detail(r, detail, sizeof(detail));
	cli_err("admin: %s%s%s%s", client_what(r, what, sizeof(what)),
	    detail[0] != '\0' ? ": " : "", detail,
	    r->status == 401 || r->status == 403 ? " (the token of "
	    "--token-file or TREATY_TOKEN)" : "");
	client_exit(EXIT_FAILED);
}

/* Send the request (again, after a backoff). */
static void
admin_send(void *arg)
{
	(void)arg;
	ad.req = client_request(OUTBOUND_GET, ad.path, NULL, 0, NULL, 0,
	    admin_answer_cb, NULL);
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

static const struct option admin_opts[] = {
	CLIENT_LONGOPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

int
cmd_admin(int argc, char **argv)
{
	const char	*what;
	long long	 v;
	int		 c, rc;

	memset(&ad, 0, sizeof(ad));
	ad.attempts = ADMIN_ATTEMPTS;
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		puts(ADMIN_USAGE);
		return EXIT_OK;
	}
	if (argc < 2 || argv[1][0] == '-') {
		cli_err("admin: which? status\n%s", ADMIN_USAGE);
		return EXIT_USAGE;
	}
	what = argv[1];
	if (strcmp(what, "status") == 0) {
		ad.path = API_ADMIN_PATH "subscribers";
		ad.print = print_status;
	} else {
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
			if ((v = num_arg(optarg)) < 1 || v > ADMIN_ATTEMPTS_MAX) {
				cli_err("--attempts: 1 to %d", ADMIN_ATTEMPTS_MAX);
				return EXIT_USAGE;
			}
			ad.attempts = (int)v;
			break;
		case 'h':
			puts(ADMIN_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, ADMIN_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	if (optind < argc - 1) {
		cli_err("admin %s: unexpected argument %s\n%s", what,
		    argv[optind + 1], ADMIN_USAGE);
		return EXIT_USAGE;
	}
	if ((c = client_init()) != 0) {
		client_free();
		return c == -2 ? EXIT_USAGE : EXIT_FAILED;
	}
	retry_init(&ad.retry, "admin", admin_send, NULL);
	client_on_stop(admin_stop_cb, NULL);
	admin_send(NULL);
	rc = client_run();
	retry_cancel(&ad.retry);
	client_free();
	return rc;
}
