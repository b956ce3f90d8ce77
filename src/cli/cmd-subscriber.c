/*
 * cmd-subscriber.c: treaty admin subscriber (SPEC 16), the subscribers
 * kept in JetStream, managed through the relay's operations API with an
 * admin token, on the loop of client.c.
 *
 *   put NAME      PUT /v1/admin/subscribers/NAME with the definition the
 *                 options make (yajl's generator), or the JSON object of
 *                 --file: "subscriber NAME created|replaced|unchanged
 *                 (revision R)"
 *   get NAME      GET .../NAME: the definition as aligned "key: value"
 *                 lines, or the relay's JSON with --json
 *   delete NAME   DELETE .../NAME: "subscriber NAME deleted"
 *
 * The relay answers 200 both to a definition replaced and to one that was
 * so already, with the entry's revision; so put first asks GET .../NAME
 * for the revision before (unless --if-match gives it): the same one back
 * is "unchanged".  --url is the subscriber's here, so the relay's URL is
 * --relay-url (or TREATY_URL).
 *
 * Secrets.  Those sent come from --secret-file (one a line, newest
 * first), never from the command line.  One the relay generates (the
 * answer's "secret", when none was sent) goes to the --secret-out file,
 * made 0600 with O_EXCL before any request (an existing file is refused,
 * nothing sent), and/or to standard output with --show-secret; with
 * neither, nowhere: the put still succeeds (the subscriber is there, and
 * another put rotates the secret), with a warning.  No message carries a
 * secret, nor the name of a file that holds one.
 *
 * Each request is retried like every admin request (no answer, 429,
 * 502-504, up to --attempts failures in a row).  Exit 0 done; 1 refused
 * (401, 403, 404, 409, 412, 422, ...: the relay's code, field and detail
 * said), an answer that is not the relay's, or a generated secret that
 * could not be written; 2 usage; 75 after the attempts or at SIGINT or
 * SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "cli.h"
#include "json.h"
#include "util.h"

#define TOKENS_MAX	8	/* --token-sha256 given again: a rotation */
#define SECRET_MAX	4096	/* the longest generated secret taken */

enum sub_op {
	OP_PUT,
	OP_GET,
	OP_DELETE
};

enum sub_step {
	STEP_LOOK,		/* put: GET the revision before */
	STEP_SEND		/* the request of the command */
};

static struct {
	enum sub_op		 op;
	enum sub_step		 step;
	char			 what[32];	/* "admin subscriber put" */
	const char		*name;
	char			*path;
	char			*body;		/* put's; wiped at the end */
	size_t			 len;
	const char		*ifmatch;	/* --if-match's revision */
	char			 etag[32];	/* its If-Match value */
	long long		 prev;		/* the revision before: 0 none,
						   -1 not known */
	int			 json, show, attempts;
	int			 has_secret;	/* the body holds secrets */
	int			 perhaps;	/* a PUT or DELETE may have
						   arrived */
	const char		*out_path;	/* --secret-out */
	int			 out_fd;
	struct stat		 out_st;
	struct retry		 retry;
	struct client_req	*req;
} sb;

/* What put takes besides --file. */
struct put_args {
	const char	*url, *filter, *secret_file, *from, *file;
	const char	*tokens[TOKENS_MAX];
	size_t		 ntokens;
	long long	 max_deliver, max_in_flight;	/* -1: not given */
	int		 webhooks;
	int		 ordered;	/* --ordered (SPEC 18) */
};

/* Usage: why, then the usage text. */
static int
sub_usage(const char *why)
{
	cli_err("%s: %s\n%s", sb.what, why, SUBSCRIBER_USAGE);
	return EXIT_USAGE;
}

/*
 * Forget the --secret-out file while nothing is written to it: closed and
 * removed, so that the same command can run again.  Only the file this
 * command made (the same inode, still empty) is removed.
 */
static void
secret_out_discard(void)
{
	struct stat	 st;

	if (sb.out_fd < 0)
		return;
	if (lstat(sb.out_path, &st) == 0 && st.st_dev == sb.out_st.st_dev &&
	    st.st_ino == sb.out_st.st_ino && st.st_size == 0)
		unlink(sb.out_path);
	close(sb.out_fd);
	sb.out_fd = -1;
}

/* Write all of buf to fd; 0, or -1 with errno. */
static int
write_all(int fd, const char *buf, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(fd, buf, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The relay's reason, in full: "422 invalid: url: plain http only ...",
 * its error code, the field (when it names one) and the detail; without
 * an answer, client_why's.
 */
static const char *
sub_why(const struct client_result *r, char *buf, size_t len)
{
	char	 code[64], field[128], detail[400];

	if (r->status == 0)
		return client_why(r, buf, len);
	client_error_member(r, "error", code, sizeof(code));
	client_error_member(r, "field", field, sizeof(field));
	client_error_member(r, "detail", detail, sizeof(detail));
	snprintf(buf, len, "%d%s%s%s%s%s%s", r->status, code[0] != '\0' ?
	    " " : "", code, field[0] != '\0' ? ": " : "", field,
	    detail[0] != '\0' ? ": " : "", detail);
	return buf;
}

/* The "revision" of a definition, or -1 when it has none. */
static long long
revision_of(yajl_val root)
{
	const char	*path[] = { "revision", NULL };
	yajl_val	 v = yajl_tree_get(root, path, yajl_t_number);

	if (v == NULL || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1)
		return -1;
	return YAJL_GET_INTEGER(v);
}

/* A value of the relay's, printed as a terminal may show it. */
static void
print_clean(const char *s)
{
	char	*c = xstrdup(s);

	client_clean(c);
	fputs(c, stdout);
	free(c);
}

/* A value of a definition: text, a number, a list, or compact JSON. */
static void
print_value(const char *key, yajl_val v)
{
	yajl_gen	 g;
	char		*text;
	size_t		 i;
	int		 flat = 1;

	if (YAJL_IS_STRING(v))
		print_clean(YAJL_GET_STRING(v));
	else if (YAJL_IS_NUMBER(v))
		print_clean(v->u.number.r);
	else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		fputs(YAJL_IS_TRUE(v) ? "true" : "false", stdout);
	else if (YAJL_IS_NULL(v))
		fputs("-", stdout);
	else if (YAJL_IS_ARRAY(v) && strcmp(key, "secrets") == 0)
		/* A count is what the relay sends; never a secret's text. */
		printf("%zu", v->u.array.len);
	else {
		for (i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
			if (YAJL_IS_OBJECT(v->u.array.values[i]) ||
			    YAJL_IS_ARRAY(v->u.array.values[i]))
				flat = 0;
		if (YAJL_IS_ARRAY(v) && flat) {
			for (i = 0; i < v->u.array.len; i++) {
				fputs(i > 0 ? ", " : "", stdout);
				print_value("", v->u.array.values[i]);
			}
			return;
		}
		g = yajl_gen_alloc(NULL);
		json_gen_tree(g, v);
		text = json_gen_take(g);
		print_clean(text);
		free(text);
	}
}

/*
 * GET's answer as "key: value" lines, the values aligned, in the relay's
 * order; a "secret" is never printed (the relay sends none here).
 */
static int
print_definition(yajl_val root)
{
	const char	*k;
	size_t		 i, w = 0;

	for (i = 0; i < root->u.object.len; i++)
		if (strcmp(root->u.object.keys[i], "secret") != 0 &&
		    strlen(root->u.object.keys[i]) > w)
			w = strlen(root->u.object.keys[i]);
	for (i = 0; i < root->u.object.len; i++) {
		k = root->u.object.keys[i];
		if (strcmp(k, "secret") == 0)
			continue;
		print_clean(k);
		printf(":%*s ", (int)(w - strlen(k)), "");
		print_value(k, root->u.object.values[i]);
		putchar('\n');
	}
	return EXIT_OK;
}

/*
 * The generated secret of put's answer: to the --secret-out file and/or
 * standard output (--show-secret), or a warning that it is nowhere.
 */
static int
secret_save(const char *secret)
{
	size_t	 i, n = strlen(secret);
	int	 bad = n == 0 || n > SECRET_MAX;

	for (i = 0; i < n; i++)
		if ((unsigned char)secret[i] < 0x20 || secret[i] == 0x7f)
			bad = 1;
	if (bad) {
		cli_err("%s: the secret the relay generated is not one line of "
		    "text: not saved; rotate it with another put", sb.what);
		secret_out_discard();
		return EXIT_FAILED;
	}
	if (sb.out_fd >= 0) {
		if (write_all(sb.out_fd, secret, n) == -1 ||
		    write_all(sb.out_fd, "\n", 1) == -1 ||
		    fsync(sb.out_fd) == -1 || close(sb.out_fd) == -1) {
			cli_err("%s: --secret-out: cannot write the generated "
			    "secret: %s; subscriber %s has a secret nobody has: "
			    "rotate it with another put", sb.what,
			    strerror(errno), sb.name);
			/* Half a secret is no use, and still a secret's. */
			unlink(sb.out_path);
			sb.out_fd = -1;
			if (sb.show)
				printf("secret: %s\n", secret);
			return EXIT_FAILED;
		}
		sb.out_fd = -1;
		puts("secret: written to the --secret-out file");
	}
	if (sb.show)
		printf("secret: %s\n", secret);
	if (sb.out_path == NULL && !sb.show) {
		fflush(stdout);
		cli_err("%s: warning: the relay generated a secret for %s and it "
		    "was NOT saved (no --secret-out FILE, no --show-secret): "
		    "nobody can verify its signatures until it is rotated: put "
		    "%s again with --secret-out FILE or --secret-file FILE",
		    sb.what, sb.name, sb.name);
	}
	return EXIT_OK;
}

/* put's answer (200 or 201): the line, then the generated secret. */
static int
put_done(const struct client_result *r)
{
	const char	*p_secret[] = { "secret", NULL };
	yajl_val	 root, secret;
	const char	*how;
	long long	 rev;
	int		 rc = EXIT_OK;

	root = admin_parse(r->body, r->bodylen);
	if (root == NULL || !YAJL_IS_OBJECT(root) ||
	    (rev = revision_of(root)) < 0) {
		cli_err("%s: the relay's answer (%d) is not a stored "
		    "definition: subscriber %s was perhaps stored (see: treaty "
		    "admin subscriber get %s)", sb.what, r->status, sb.name,
		    sb.name);
		yajl_tree_free(root);
		secret_out_discard();
		return EXIT_FAILED;
	}
	/*
	 * 200 with the revision it had is a definition that was so already.
	 * 200 for one that was not there: made by an earlier attempt of this
	 * command (then replaced by this one, or not), or by someone else.
	 */
	if (r->status == 201)
		how = "created";
	else if (rev == sb.prev)
		how = "unchanged";
	else if (sb.prev == 0 && sb.perhaps)
		how = "created";
	else
		how = "replaced";
	printf("subscriber %s %s (revision %lld)\n", sb.name, how, rev);
	secret = yajl_tree_get(root, p_secret, yajl_t_any);
	if (secret != NULL && YAJL_IS_STRING(secret))
		rc = secret_save(secret->u.string);
	else if (secret != NULL) {
		cli_err("%s: the relay's generated secret is not text: not "
		    "saved; rotate it with another put", sb.what);
		rc = EXIT_FAILED;
	} else if (sb.out_path != NULL || sb.show) {
		cli_err("%s: the relay generated no secret: nothing to save",
		    sb.what);
		secret_out_discard();
	}
	if (secret != NULL && YAJL_IS_STRING(secret))
		OPENSSL_cleanse(secret->u.string, strlen(secret->u.string));
	yajl_tree_free(root);
	return rc;
}

/* get's answer: the definition, as lines or as the relay's JSON. */
static int
get_done(const struct client_result *r)
{
	yajl_val	 root;
	int		 rc;

	if ((root = admin_parse(r->body, r->bodylen)) == NULL)
		return EXIT_FAILED;
	if (!YAJL_IS_OBJECT(root)) {
		cli_err("%s: the relay's answer is not a subscriber's "
		    "definition", sb.what);
		yajl_tree_free(root);
		return EXIT_FAILED;
	}
	if (sb.json) {
		printf("%.*s\n", (int)r->bodylen, r->body);
		rc = EXIT_OK;
	} else
		rc = print_definition(root);
	yajl_tree_free(root);
	return rc;
}

/* A 404 with the relay's unknown_subscriber (not a route it lacks). */
static int
unknown_subscriber(const struct client_result *r)
{
	char	 code[64];

	return r->status == 404 && strcmp(client_error_member(r, "error",
	    code, sizeof(code)), "unknown_subscriber") == 0;
}

/* put's GET: the revision before, then the PUT. */
static int
looked(const struct client_result *r)
{
	yajl_val	 root;
	char		*text;

	if (unknown_subscriber(r))
		sb.prev = 0;
	else if (r->status == 200) {
		/* Only for the word of the line: not said when unreadable. */
		text = xstrndup(r->body, r->bodylen);
		root = yajl_tree_parse(text, NULL, 0);
		free(text);
		sb.prev = root != NULL && YAJL_IS_OBJECT(root) ?
		    revision_of(root) : -1;
		yajl_tree_free(root);
	} else
		return 0;
	sb.step = STEP_SEND;
	retry_reset(&sb.retry);
	return 1;
}

/*
 * ", subscriber NAME was perhaps changed (see: ...)" into buf when a PUT
 * or DELETE may have arrived, else "".
 */
static const char *
perhaps_note(char *buf, size_t len)
{
	buf[0] = '\0';
	if (sb.perhaps)
		snprintf(buf, len, "; subscriber %s was perhaps %s (see: treaty "
		    "admin subscriber get %s)", sb.name, sb.op == OP_DELETE ?
		    "deleted" : "changed", sb.name);
	return buf;
}

/* Say the refusal, with what a 412 means. */
static void
refused(const struct client_result *r)
{
	char	 why[768], more[512], all[1280];

	sub_why(r, why, sizeof(why));
	more[0] = '\0';
	if (r->status == 412)
		snprintf(more, sizeof(more), "; subscriber %s changed since "
		    "revision %s%s (see it again with: treaty admin subscriber "
		    "get %s)", sb.name, sb.ifmatch != NULL ? sb.ifmatch : "?",
		    sb.perhaps ? ", perhaps by an earlier attempt of this "
		    "command" : "", sb.name);
	snprintf(all, sizeof(all), "%s%s", why, more);
	admin_refused_why(sb.what, r, all);
}

static void	sub_send(void *arg);

/* The relay's answer to the request of this step. */
static void
sub_answer_cb(void *arg, const struct client_result *r)
{
	char	 why[768], note[256];
	int	 rc;

	(void)arg;
	sb.req = NULL;
	if (sb.step == STEP_LOOK && looked(r)) {
		sub_send(NULL);
		return;
	}
	if (sb.step == STEP_SEND) {
		rc = -1;
		if (sb.op == OP_PUT && (r->status == 200 || r->status == 201))
			rc = put_done(r);
		else if (sb.op == OP_GET && r->status == 200)
			rc = get_done(r);
		else if (sb.op == OP_DELETE && (r->status == 204 ||
		    (r->status == 404 && sb.perhaps && unknown_subscriber(r)))) {
			/*
			 * Gone after an attempt that may have arrived: that
			 * attempt's doing, or another's (as consumers --delete).
			 */
			printf("subscriber %s %s\n", sb.name, r->status == 204 ?
			    "deleted" : "is gone (perhaps deleted by an earlier "
			    "attempt)");
			rc = EXIT_OK;
		}
		if (rc != -1) {
			fflush(stdout);
			client_exit(rc);
			return;
		}
	}
	if (client_transient(r)) {
		if (sb.step == STEP_SEND && sb.op != OP_GET && !r->not_sent)
			sb.perhaps = 1;
		if ((int)sb.retry.attempt + 1 < sb.attempts) {
			retry_later(&sb.retry, r);
			return;
		}
		cli_err("%s: still failing after %d attempts: %s%s", sb.what,
		    sb.attempts, sub_why(r, why, sizeof(why)),
		    perhaps_note(note, sizeof(note)));
		secret_out_discard();
		client_exit(EXIT_TEMPFAIL);
		return;
	}
	refused(r);
	secret_out_discard();
	client_exit(EXIT_FAILED);
}

/* Send the request of this step (again, after a backoff). */
static void
sub_send(void *arg)
{
	struct outbound_header	 h[2];
	size_t			 nh = 0;

	(void)arg;
	if (sb.step == STEP_LOOK) {
		sb.req = client_request(OUTBOUND_GET, sb.path, NULL, 0, NULL, 0,
		    sub_answer_cb, NULL);
		return;
	}
	if (sb.ifmatch != NULL)
		h[nh++] = (struct outbound_header){ "If-Match", sb.etag };
	if (sb.op == OP_PUT)
		h[nh++] = (struct outbound_header){ "Content-Type",
		    "application/json" };
	sb.req = client_request(sb.op == OP_PUT ? OUTBOUND_PUT :
	    sb.op == OP_GET ? OUTBOUND_GET : OUTBOUND_DELETE, sb.path, h, nh,
	    sb.body, sb.len, sub_answer_cb, NULL);
}

/* SIGINT or SIGTERM: stop; not done, as after the attempts. */
static void
sub_stop_cb(void *arg)
{
	char	 note[256];

	(void)arg;
	if (sb.req != NULL && sb.step == STEP_SEND && sb.op != OP_GET)
		sb.perhaps = 1;
	if (sb.req != NULL)
		client_cancel(sb.req);
	sb.req = NULL;
	retry_cancel(&sb.retry);
	cli_err("%s: stopped%s", sb.what, perhaps_note(note, sizeof(note)));
	secret_out_discard();
	client_exit(EXIT_TEMPFAIL);
}

/*
 * The secrets of --secret-file as "secret" (one) or "secrets" (several,
 * newest first).  Each goes as it is: one that is not UTF-8 text could
 * not, so it is refused rather than changed.  0, or -1 said.
 */
static int
gen_secrets(yajl_gen g, const char *path)
{
	struct treaty_secret	 s[TREATY_MAX_SECRETS];
	char			*text = NULL;
	int			 i, n;

	if ((n = read_secrets(path, &text, s)) < 0) {
		secret_free(text);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!treaty_utf8_valid(s[i].key, s[i].len)) {
			cli_err("--secret-file: secret %d is not UTF-8 text", i + 1);
			secret_free(text);
			return -1;
		}
	json_gen_str(g, n == 1 ? "secret" : "secrets");
	if (n > 1)
		yajl_gen_array_open(g);
	for (i = 0; i < n; i++)
		yajl_gen_string(g, (const unsigned char *)s[i].key, s[i].len);
	if (n > 1)
		yajl_gen_array_close(g);
	secret_free(text);
	return 0;
}

/* The body of put from its options; -1 said. */
static int
body_from_args(const struct put_args *a)
{
	yajl_gen	 g = yajl_gen_alloc(NULL);
	size_t		 i;

	yajl_gen_map_open(g);
	if (a->url != NULL) {
		json_gen_str(g, "url");
		json_gen_str(g, a->url);
	} else {
		json_gen_str(g, "tokenSha256");
		if (a->ntokens > 1)
			yajl_gen_array_open(g);
		for (i = 0; i < a->ntokens; i++)
			json_gen_str(g, a->tokens[i]);
		if (a->ntokens > 1)
			yajl_gen_array_close(g);
	}
	json_gen_str(g, "filter");
	json_gen_str(g, a->filter);
	if (a->secret_file != NULL && gen_secrets(g, a->secret_file) == -1) {
		yajl_gen_free(g);
		return -1;
	}
	if (a->max_deliver >= 0) {
		json_gen_str(g, "maxDeliver");
		yajl_gen_integer(g, a->max_deliver);
	}
	if (a->max_in_flight >= 0) {
		json_gen_str(g, "maxInFlight");
		yajl_gen_integer(g, a->max_in_flight);
	}
	if (a->webhooks) {
		json_gen_str(g, "standardWebhooks");
		yajl_gen_bool(g, 1);
	}
	if (a->ordered) {
		json_gen_str(g, "ordered");
		yajl_gen_bool(g, 1);
	}
	if (a->from != NULL) {
		json_gen_str(g, "deliverFrom");
		json_gen_str(g, a->from);
	}
	yajl_gen_map_close(g);
	sb.body = json_gen_take(g);
	sb.len = strlen(sb.body);
	sb.has_secret = a->secret_file != NULL;
	return 0;
}

/*
 * The body of put from --file (- for standard input): one JSON object,
 * sent as yajl's generator writes it again.  -1 said (where it stops
 * being JSON, never its text, which may hold secrets).
 */
static int
body_from_file(const char *file)
{
	const char	*p_s[] = { "secret", NULL }, *p_ss[] = { "secrets", NULL };
	yajl_gen	 g;
	yajl_val	 root = NULL;
	FILE		*f = stdin;
	char		*text, why[128];
	size_t		 len, line, col;
	int		 rc = -1;

	if (strcmp(file, "-") != 0 && (f = fopen(file, "r")) == NULL) {
		cli_err("--file: %s", strerror(errno));
		return -1;
	}
	text = read_all(f, &len);
	if (f != stdin)
		fclose(f);
	if (text == NULL) {
		cli_err("--file: cannot read it");
		return -1;
	}
	if (len == 0 || json_error_at(text, len, &line, &col, why,
	    sizeof(why)) == 0) {
		if (len == 0)
			cli_err("--file: empty");
		else
			cli_err("--file: not JSON, at line %zu, column %zu: %s",
			    line, col, why);
		goto out;
	}
	if ((root = yajl_tree_parse(text, NULL, 0)) == NULL ||
	    !YAJL_IS_OBJECT(root)) {
		cli_err("--file: not a JSON object");
		goto out;
	}
	g = yajl_gen_alloc(NULL);
	if (json_copy(g, text, len) == -1) {
		cli_err("--file: not JSON the relay would take");
		yajl_gen_free(g);
		goto out;
	}
	sb.body = json_gen_take(g);
	sb.len = strlen(sb.body);
	sb.has_secret = yajl_tree_get(root, p_s, yajl_t_any) != NULL ||
	    yajl_tree_get(root, p_ss, yajl_t_any) != NULL;
	rc = 0;
out:
	yajl_tree_free(root);
	OPENSSL_cleanse(text, len);
	free(text);
	return rc;
}

/*
 * The --secret-out file, made now (before any request): 0600, refused
 * when it exists.  -1 said.
 */
static int
secret_out_open(void)
{
	if ((sb.out_fd = open(sb.out_path, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		cli_err("%s: --secret-out: %s%s; nothing sent", sb.what,
		    strerror(errno), errno == EEXIST ? " (it is never "
		    "overwritten: remove it, or give another)" : "");
		return -1;
	}
	if (fstat(sb.out_fd, &sb.out_st) == -1) {
		cli_err("%s: --secret-out: %s; nothing sent", sb.what,
		    strerror(errno));
		secret_out_discard();
		return -1;
	}
	return 0;
}

/* The name of the option whose getopt code is c. */
static const char *
opt_name(const struct option *lo, int c)
{
	for (; lo->name != NULL; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

static const struct option sub_opts[] = {
	CLIENT_RELAY_URL_OPT,
	CLIENT_LONGOPTS_REST,
	{ "url", required_argument, NULL, 'u' },
	{ "token-sha256", required_argument, NULL, 'k' },
	{ "filter", required_argument, NULL, 'f' },
	{ "secret-file", required_argument, NULL, 's' },
	{ "secret-out", required_argument, NULL, 'o' },
	{ "show-secret", no_argument, NULL, 'S' },
	{ "max-deliver", required_argument, NULL, 'm' },
	{ "max-in-flight", required_argument, NULL, 'i' },
	{ "standard-webhooks", no_argument, NULL, 'w' },
	{ "ordered", no_argument, NULL, 'O' },
	{ "deliver-from", required_argument, NULL, 'd' },
	{ "if-match", required_argument, NULL, 'M' },
	{ "file", required_argument, NULL, 'F' },
	{ "json", no_argument, NULL, 'j' },
	{ "attempts", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/*
 * The options each form takes (their getopt codes; the client options
 * and --attempts go with every one).
 */
#define OPTS_PUT	"ufksoSmiwOdM"
#define OPTS_PUT_FILE	"FMoS"
#define OPTS_GET	"j"
#define OPTS_DELETE	"M"

/* An option given that is not one of this form's: usage. */
static int
check_given(const char *given, const char *allowed, const char *form)
{
	char	 why[160];

	for (; *given != '\0'; given++)
		if (strchr(allowed, *given) == NULL) {
			if (*given == 'u' && sb.op != OP_PUT)
				snprintf(why, sizeof(why), "--url is the "
				    "subscriber's, for put; the relay's is "
				    "--relay-url URL or TREATY_URL");
			else
				snprintf(why, sizeof(why), "--%s is not for %s",
				    opt_name(sub_opts, *given), form);
			return sub_usage(why);
		}
	return 0;
}

/*
 * The options of put, checked, and its body: EXIT_OK, or the exit status
 * after saying why not.
 */
static int
put_prepare(const struct put_args *a, const char *given)
{
	if (a->file != NULL) {
		if (check_given(given, OPTS_PUT_FILE, "put --file (the whole "
		    "definition is in the file)") != 0)
			return EXIT_USAGE;
	} else {
		if (check_given(given, OPTS_PUT, "put") != 0)
			return EXIT_USAGE;
		if (a->filter == NULL)
			return sub_usage("--filter F is required");
		if ((a->url != NULL) == (a->ntokens > 0))
			return sub_usage("either --url URL (push) or "
			    "--token-sha256 HEX (pull)");
		if (a->secret_file != NULL && (sb.out_path != NULL || sb.show))
			return sub_usage("--secret-out and --show-secret are for "
			    "a secret the relay generates, not with "
			    "--secret-file");
	}
	if ((a->file != NULL ? body_from_file(a->file) :
	    body_from_args(a)) == -1)
		return EXIT_FAILED;
	if (a->file != NULL && sb.has_secret && (sb.out_path != NULL ||
	    sb.show))
		return sub_usage("--secret-out and --show-secret are for a "
		    "secret the relay generates: the --file definition has "
		    "its own");
	return EXIT_OK;
}

int
cmd_admin_subscriber(int argc, char **argv)
{
	struct put_args	 a;
	const char	*op;
	char		 given[64] = "", *name;
	long long	 v;
	size_t		 n;
	int		 c, rc;

	memset(&sb, 0, sizeof(sb));
	memset(&a, 0, sizeof(a));
	sb.out_fd = -1;
	sb.attempts = ADMIN_ATTEMPTS;
	a.max_deliver = a.max_in_flight = -1;
	snprintf(sb.what, sizeof(sb.what), "admin subscriber");
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		puts(SUBSCRIBER_USAGE);
		return EXIT_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return sub_usage("which? put, get or delete");
	op = argv[1];
	if (strcmp(op, "put") == 0)
		sb.op = OP_PUT;
	else if (strcmp(op, "get") == 0)
		sb.op = OP_GET;
	else if (strcmp(op, "delete") == 0)
		sb.op = OP_DELETE;
	else
		return sub_usage("unknown command: put, get or delete");
	snprintf(sb.what, sizeof(sb.what), "admin subscriber %s", op);
	optind = 1;
	while ((c = cli_getopt(argc - 1, argv + 1, "hv", sub_opts)) != -1) {
		if (c < 128 && c != 'h' && c != 'v' && c != 'n' && c != '?' &&
		    strchr(given, c) == NULL && strlen(given) < sizeof(given) - 1)
			given[strlen(given)] = (char)c;
		switch (c) {
		case 'u': a.url = optarg; break;
		case 'f': a.filter = optarg; break;
		case 's': a.secret_file = optarg; break;
		case 'o': sb.out_path = optarg; break;
		case 'S': sb.show = 1; break;
		case 'w': a.webhooks = 1; break;
		case 'O': a.ordered = 1; break;
		case 'd': a.from = optarg; break;
		case 'F': a.file = optarg; break;
		case 'j': sb.json = 1; break;
		case 'k':
			if (a.ntokens == TOKENS_MAX)
				return sub_usage("--token-sha256: at most 8");
			a.tokens[a.ntokens++] = optarg;
			break;
		case 'm':
		case 'i':
			if ((v = num_arg(optarg)) < 1)
				return sub_usage(c == 'm' ? "--max-deliver: a "
				    "number, 1 or more" : "--max-in-flight: a "
				    "number, 1 or more");
			*(c == 'm' ? &a.max_deliver : &a.max_in_flight) = v;
			break;
		case 'M':
			if (num_arg(optarg) < 1)
				return sub_usage("--if-match: a revision, 1 or "
				    "more (as get shows it)");
			sb.ifmatch = optarg;
			break;
		case 'n':
			if ((sb.attempts = admin_attempts(optarg)) == -1)
				return EXIT_USAGE;
			break;
		case 'h':
			puts(SUBSCRIBER_USAGE);
			return EXIT_OK;
		default:
			if (client_option(c, optarg, SUBSCRIBER_USAGE) == -1)
				return EXIT_USAGE;
		}
	}
	/* Not printed: a secret given by mistake would be there. */
	if (argc - 1 - optind != 1)
		return sub_usage(argc - 1 - optind == 0 ? "NAME is required" :
		    "one NAME, and no other argument");
	sb.name = argv[optind + 1];
	if (sb.name[0] == '\0')
		return sub_usage("NAME is empty");
	if (sb.op == OP_GET && check_given(given, OPTS_GET, "get") != 0)
		return EXIT_USAGE;
	if (sb.op == OP_DELETE && check_given(given, OPTS_DELETE,
	    "delete") != 0)
		return EXIT_USAGE;
	if (sb.op == OP_PUT && (rc = put_prepare(&a, given)) != EXIT_OK) {
		if (sb.body != NULL)
			OPENSSL_cleanse(sb.body, sb.len);
		free(sb.body);
		return rc;
	}
	if (sb.ifmatch != NULL)
		snprintf(sb.etag, sizeof(sb.etag), "\"%s\"", sb.ifmatch);
	name = admin_encode(sb.name);
	n = strlen(API_ADMIN_PATH) + strlen(name) + 16;
	sb.path = xmalloc(n);
	snprintf(sb.path, n, "%ssubscribers/%s", API_ADMIN_PATH, name);
	free(name);
	/* The revision before is known when --if-match says it. */
	sb.step = sb.op == OP_PUT && sb.ifmatch == NULL ? STEP_LOOK :
	    STEP_SEND;
	sb.prev = sb.ifmatch != NULL ? num_arg(sb.ifmatch) : -1;
	client_url_option("--relay-url");
	rc = EXIT_FAILED;
	if ((c = client_init()) != 0)
		rc = c == -2 ? EXIT_USAGE : EXIT_FAILED;
	else if (sb.out_path == NULL || secret_out_open() == 0) {
		retry_init(&sb.retry, sb.op == OP_PUT ? "subscriber-put" :
		    sb.op == OP_GET ? "subscriber-get" : "subscriber-delete",
		    sub_send, NULL);
		client_on_stop(sub_stop_cb, NULL);
		sub_send(NULL);
		rc = client_run();
		retry_cancel(&sb.retry);
	}
	secret_out_discard();
	client_free();
	free(sb.path);
	if (sb.body != NULL)
		OPENSSL_cleanse(sb.body, sb.len);
	free(sb.body);
	return rc;
}
