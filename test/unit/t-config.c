/*
 * t-config.c: unit tests of config_load() (src/relay/config.c): every
 * default of docs/DESIGN.md's table, environment values, flags over the
 * environment, numeric ranges, the producer and subscriber lists, NATS_URL,
 * the listen address, the actions (--check-config, --help, --version,
 * usage errors), config_find_producer(), and the configuration file (its
 * syntax, its precedence, unknown variables).
 *
 * Every load is followed by config_free(), whatever it returned, so that a
 * leak on any path shows under AddressSanitizer (make SANITIZE=1).
 *
 * getopt_long may keep a pointer into the last argv it scanned, so the argv
 * strings built here live until the end of the program (see argv_pool).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/relay/config.h"
#include "../../src/relay/seal.h"
#include "harness.h"

#define PROG		"treaty-relay"
#define MAX_ARGS	40

/* Two SHA-256 values in hex, as a producer's tokenSha256. */
#define HASH_A	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HASH_B	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define HASH_A_UPPER \
	"0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
#define SECRET	"0123456789abcdef"	/* exactly 16 bytes */

/* Every variable config_load reads, cleared before each load. */
static const char *const vars[] = {
	"NATS_URL", "PORT", "TREATY_RELAY_LISTEN", "TREATY_RELAY_PRODUCERS",
	"TREATY_RELAY_SUBSCRIBERS", "TREATY_RELAY_WORK_MAX_AGE_HOURS",
	"TREATY_RELAY_AUDIT_MAX_AGE_DAYS",
	"TREATY_RELAY_DUPLICATE_WINDOW_MINUTES", "TREATY_RELAY_REPLICAS",
	"TREATY_RELAY_PUBLISH_TIMEOUT_MS", "TREATY_RELAY_MAX_PENDING",
	"TREATY_RELAY_GRACE_SECONDS", "TREATY_RELAY_HTTP_TIMEOUT_SECONDS",
	"TREATY_RELAY_VERBOSE", "TREATY_RELAY_ALLOW_PRIVATE_NETWORKS",
	"TREATY_RELAY_CA_FILE", "TREATY_RELAY_DELIVERY_TIMEOUT_MS",
	"TREATY_RELAY_DELIVERY_IDLE_TIMEOUT_MS", "TREATY_RELAY_DNS_TIMEOUT_MS",
	"TREATY_RELAY_DNS_SERVER", "TREATY_RELAY_ACK_WAIT_SECONDS",
	"TREATY_RELAY_RETRY_BASE_MS", "TREATY_RELAY_RETRY_MAX_MS",
	"TREATY_RELAY_PROGRESS_SECONDS", "TREATY_RELAY_LEASE_SECONDS",
	"TREATY_RELAY_CONFIG", "TREATY_RELAY_REUSEPORT",
	"TREATY_RELAY_CONTROL_LISTEN", "TREATY_RELAY_ADMIN_TOKEN_SHA256",
	"TREATY_RELAY_MAX_REPLAYS", "TREATY_RELAY_SECRET_KEY_FILE"
};

/* Every argv built by load(), freed at exit. */
static char	**argv_pool[4096];
static size_t	  nargv_pool;

/* Unset every variable of the relay. */
static void
env_clear(void)
{
	size_t	 i;

	for (i = 0; i < T_NCASES(vars); i++)
		unsetenv(vars[i]);
}

/*
 * config_load with argv = PROG followed by the NULL-terminated arguments.
 * The environment is whatever the case set.
 */
static enum config_action
load(struct config *cfg, struct config_error *err, ...)
{
	va_list		 ap;
	const char	*a;
	char		**argv;
	int		 argc = 0;

	argv = calloc(MAX_ARGS + 1, sizeof(*argv));
	if (argv == NULL)
		abort();
	argv[argc++] = strdup(PROG);
	va_start(ap, err);
	while ((a = va_arg(ap, const char *)) != NULL) {
		if (argc == MAX_ARGS)
			abort();	/* raise MAX_ARGS */
		argv[argc++] = strdup(a);
	}
	va_end(ap);
	if (nargv_pool < T_NCASES(argv_pool))
		argv_pool[nargv_pool++] = argv;
	return config_load(cfg, argc, argv, err);
}

/* Free every argv load() built. */
static void
argv_pool_free(void)
{
	size_t	 i, j;

	for (i = 0; i < nargv_pool; i++) {
		for (j = 0; argv_pool[i][j] != NULL; j++)
			free(argv_pool[i][j]);
		free(argv_pool[i]);
	}
	nargv_pool = 0;
}

/*
 * Load with one variable set (NULL: none) and one optional flag pair;
 * expect CONFIG_BAD naming want_var (and want_field unless NULL).
 */
static void
expect_bad_at(int line, const char *var, const char *val, const char *flag,
    const char *fval, const char *want_var, const char *want_field)
{
	struct config		 cfg;
	struct config_error	 err;
	enum config_action	 a;

	env_clear();
	if (var != NULL)
		setenv(var, val, 1);
	if (flag != NULL)
		a = load(&cfg, &err, flag, fval, NULL);
	else
		a = load(&cfg, &err, NULL);
	if (!t_check_int(__FILE__, line, "action", "CONFIG_BAD", a, CONFIG_BAD))
		t_fail(__FILE__, line, "  for %s=%s %s %s", var ? var : "-",
		    val ? val : "-", flag ? flag : "", fval ? fval : "");
	else {
		t_check_str(__FILE__, line, "err.var", "want_var", err.var,
		    want_var);
		if (want_field != NULL &&
		    !t_check_str(__FILE__, line, "err.field", "want_field",
		    err.field, want_field))
			t_fail(__FILE__, line, "  value was %.300s", val ? val :
			    fval);
		t_check_true(__FILE__, line, "err.detail non-empty",
		    err.detail[0] != '\0');
	}
	config_free(&cfg);
}

/* Like EXPECT_BAD_ENV, on top of what the caller set in the environment. */
static void
expect_bad_keep_at(int line, const char *var, const char *val,
    const char *want_field)
{
	struct config		 cfg;
	struct config_error	 err;

	setenv(var, val, 1);
	if (t_check_int(__FILE__, line, "action", "CONFIG_BAD",
	    load(&cfg, &err, NULL), CONFIG_BAD)) {
		t_check_str(__FILE__, line, "err.var", var, err.var, var);
		t_check_str(__FILE__, line, "err.field", want_field, err.field,
		    want_field);
	}
	config_free(&cfg);
}
#define EXPECT_BAD_AT_KEEP(var, val, field) \
	expect_bad_keep_at(__LINE__, var, val, field)

#define EXPECT_BAD_ENV(var, val, field) \
	expect_bad_at(__LINE__, var, val, NULL, NULL, var, field)
#define EXPECT_BAD_FLAG(flag, val, field) \
	expect_bad_at(__LINE__, NULL, NULL, flag, val, flag, field)

/* Load with one variable set; expect CONFIG_RUN.  Caller frees cfg. */
static int
load_env_ok_at(int line, struct config *cfg, const char *var,
    const char *val)
{
	struct config_error	 err;
	enum config_action	 a;

	env_clear();
	setenv(var, val, 1);
	a = load(cfg, &err, NULL);
	if (!t_check_int(__FILE__, line, "action", "CONFIG_RUN", a,
	    CONFIG_RUN)) {
		t_fail(__FILE__, line, "  %s=%.300s: var=%s field=%s detail=%s",
		    var, val, err.var, err.field, err.detail);
		return 0;
	}
	return 1;
}
#define LOAD_ENV_OK(cfg, var, val) load_env_ok_at(__LINE__, cfg, var, val)

/* Nothing set: the defaults of docs/DESIGN.md's table. */
static void
defaults(void)
{
	struct config		 cfg;
	struct config_error	 err;

	env_clear();
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_STR(cfg.nats_url, "nats://127.0.0.1:4222");
	T_EQ_INT(cfg.nnats_servers, 1);
	if (cfg.nnats_servers == 1)
		T_EQ_STR(cfg.nats_servers[0], "nats://127.0.0.1:4222");
	T_EQ_INT(cfg.port, 8080);
	T_EQ_STR(cfg.listen, "0.0.0.0");
	T_EQ_INT(cfg.nproducers, 0);
	T_EQ_INT(cfg.nsubscribers, 0);
	T_EQ_INT(cfg.work_max_age_hours, 168);
	T_EQ_INT(cfg.audit_max_age_days, 365);
	T_EQ_INT(cfg.duplicate_window_minutes, 60);
	T_EQ_INT(cfg.replicas, 1);
	T_EQ_INT(cfg.publish_timeout_ms, 5000);
	T_EQ_INT(cfg.max_pending, 4096);
	T_EQ_INT(cfg.grace_seconds, 10);
	T_EQ_INT(cfg.http_timeout_seconds, 30);
	T_EQ_INT(cfg.verbose, 0);
	T_EQ_INT(cfg.max_replays, 16);
	config_free(&cfg);
}

/* Every variable read from the environment. */
static void
env_values(void)
{
	struct config		 cfg;
	struct config_error	 err;

	env_clear();
	setenv("NATS_URL", "nats://10.0.0.1:4333", 1);
	setenv("PORT", "9090", 1);
	setenv("TREATY_RELAY_LISTEN", "127.0.0.1", 1);
	setenv("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\",\"tokenSha256\":\""
	    HASH_A "\",\"subjects\":[\"evt.>\"]}]", 1);
	setenv("TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"s\",\"url\":"
	    "\"https://example.com/hook\",\"secret\":\"" SECRET "\","
	    "\"filter\":\"evt.>\"}]", 1);
	setenv("TREATY_RELAY_WORK_MAX_AGE_HOURS", "24", 1);
	setenv("TREATY_RELAY_AUDIT_MAX_AGE_DAYS", "30", 1);
	setenv("TREATY_RELAY_DUPLICATE_WINDOW_MINUTES", "5", 1);
	setenv("TREATY_RELAY_REPLICAS", "3", 1);
	setenv("TREATY_RELAY_PUBLISH_TIMEOUT_MS", "1000", 1);
	setenv("TREATY_RELAY_MAX_PENDING", "100", 1);
	setenv("TREATY_RELAY_GRACE_SECONDS", "0", 1);
	setenv("TREATY_RELAY_HTTP_TIMEOUT_SECONDS", "7", 1);
	setenv("TREATY_RELAY_VERBOSE", "1", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_STR(cfg.nats_url, "nats://10.0.0.1:4333");
	T_EQ_INT(cfg.port, 9090);
	T_EQ_STR(cfg.listen, "127.0.0.1");
	T_EQ_INT(cfg.nproducers, 1);
	T_EQ_INT(cfg.nsubscribers, 1);
	T_EQ_INT(cfg.work_max_age_hours, 24);
	T_EQ_INT(cfg.audit_max_age_days, 30);
	T_EQ_INT(cfg.duplicate_window_minutes, 5);
	T_EQ_INT(cfg.replicas, 3);
	T_EQ_INT(cfg.publish_timeout_ms, 1000);
	T_EQ_INT(cfg.max_pending, 100);
	T_EQ_INT(cfg.grace_seconds, 0);
	T_EQ_INT(cfg.http_timeout_seconds, 7);
	T_EQ_INT(cfg.verbose, 1);
	config_free(&cfg);
	env_clear();
}

/* A flag wins over its variable, in both --flag VALUE and --flag=VALUE. */
static void
flags_override_env(void)
{
	struct config		 cfg;
	struct config_error	 err;

	env_clear();
	setenv("NATS_URL", "nats://10.0.0.1:4333", 1);
	setenv("PORT", "9090", 1);
	setenv("TREATY_RELAY_LISTEN", "127.0.0.1", 1);
	setenv("TREATY_RELAY_REPLICAS", "3", 1);
	setenv("TREATY_RELAY_PUBLISH_TIMEOUT_MS", "1000", 1);
	setenv("TREATY_RELAY_GRACE_SECONDS", "4", 1);
	setenv("TREATY_RELAY_PRODUCERS", "not json at all", 1);
	T_EQ_INT(load(&cfg, &err, "--nats-url", "nats://10.0.0.2:4222",
	    "--port", "7070", "--listen", "::1", "--replicas=5",
	    "--publish-timeout-ms", "60000", "--grace-seconds=300",
	    "--work-max-age-hours", "87600", "--audit-max-age-days", "36500",
	    "--duplicate-window-minutes", "10080", "--max-pending", "65536",
	    "--http-timeout-seconds", "3600", "--producers", "[]", "-v",
	    NULL), CONFIG_RUN);
	T_EQ_STR(err.detail, "");
	T_EQ_STR(cfg.nats_url, "nats://10.0.0.2:4222");
	T_EQ_INT(cfg.port, 7070);
	T_EQ_STR(cfg.listen, "::1");
	T_EQ_INT(cfg.replicas, 5);
	T_EQ_INT(cfg.publish_timeout_ms, 60000);
	T_EQ_INT(cfg.grace_seconds, 300);
	T_EQ_INT(cfg.work_max_age_hours, 87600);
	T_EQ_INT(cfg.audit_max_age_days, 36500);
	T_EQ_INT(cfg.duplicate_window_minutes, 10080);
	T_EQ_INT(cfg.max_pending, 65536);
	T_EQ_INT(cfg.http_timeout_seconds, 3600);
	T_EQ_INT(cfg.nproducers, 0);
	T_EQ_INT(cfg.verbose, 1);
	config_free(&cfg);

	/* --verbose and TREATY_RELAY_VERBOSE=0 overridden by the flag. */
	env_clear();
	setenv("TREATY_RELAY_VERBOSE", "0", 1);
	T_EQ_INT(load(&cfg, &err, "--verbose", NULL), CONFIG_RUN);
	T_EQ_INT(cfg.verbose, 1);
	config_free(&cfg);
	env_clear();
}

/* One numeric setting: its variable, flag and range. */
struct num_opt {
	const char	*var;
	const char	*flag;
	long		 min, max;
};

static const struct num_opt num_opts[] = {
	{ "PORT", "--port", 1, 65535 },
	{ "TREATY_RELAY_WORK_MAX_AGE_HOURS", "--work-max-age-hours", 1, 87600 },
	{ "TREATY_RELAY_AUDIT_MAX_AGE_DAYS", "--audit-max-age-days", 1, 36500 },
	{ "TREATY_RELAY_DUPLICATE_WINDOW_MINUTES",
	  "--duplicate-window-minutes", 1, 10080 },
	{ "TREATY_RELAY_REPLICAS", "--replicas", 1, 5 },
	{ "TREATY_RELAY_PUBLISH_TIMEOUT_MS", "--publish-timeout-ms", 100,
	  60000 },
	{ "TREATY_RELAY_MAX_PENDING", "--max-pending", 1, 65536 },
	{ "TREATY_RELAY_GRACE_SECONDS", "--grace-seconds", 0, 300 },
	{ "TREATY_RELAY_HTTP_TIMEOUT_SECONDS", "--http-timeout-seconds", 1,
	  3600 },
	{ "TREATY_RELAY_MAX_REPLAYS", "--max-replays", 1, 1000 },
};

/* Each numeric variable: bounds accepted, outside refused naming it. */
static void
numeric_ranges(void)
{
	static const char *const garbage[] = {
		"", "abc", "12x", " 5", "5 ", "0x10", "1e3", "+-1",
		"99999999999999999999999", "-99999999999999999999999"
	};
	struct config		 cfg;
	struct config_error	 err;
	char			 buf[32];
	size_t			 i, j;

	for (i = 0; i < T_NCASES(num_opts); i++) {
		const struct num_opt *o = &num_opts[i];

		snprintf(buf, sizeof(buf), "%ld", o->min);
		if (LOAD_ENV_OK(&cfg, o->var, buf))
			config_free(&cfg);
		snprintf(buf, sizeof(buf), "%ld", o->max);
		if (LOAD_ENV_OK(&cfg, o->var, buf))
			config_free(&cfg);
		snprintf(buf, sizeof(buf), "%ld", o->min - 1);
		EXPECT_BAD_ENV(o->var, buf, "");
		snprintf(buf, sizeof(buf), "%ld", o->max + 1);
		EXPECT_BAD_ENV(o->var, buf, "");
		for (j = 0; j < T_NCASES(garbage); j++)
			EXPECT_BAD_ENV(o->var, garbage[j], "");
		/* From a flag the error names the flag, even over a good var. */
		snprintf(buf, sizeof(buf), "%ld", o->max + 1);
		expect_bad_at(__LINE__, o->var, "1", o->flag, buf, o->flag, "");
		EXPECT_BAD_FLAG(o->flag, "abc", "");
		EXPECT_BAD_FLAG(o->flag, "", "");
	}
	(void)err;
	env_clear();
}

/*
 * In-progress must reach JetStream before the ack wait runs out: a
 * progress interval not below the ack wait is refused, naming the
 * progress setting (from where it came: default, variable or flag).
 */
static void
progress_below_ack_wait(void)
{
	struct config		 cfg;
	struct config_error	 err;

	expect_bad_at(__LINE__, "TREATY_RELAY_ACK_WAIT_SECONDS", "10", NULL,
	    NULL, "TREATY_RELAY_PROGRESS_SECONDS", "");
	expect_bad_at(__LINE__, "TREATY_RELAY_ACK_WAIT_SECONDS", "30",
	    "--progress-seconds", "30", "--progress-seconds", "");
	env_clear();
	setenv("TREATY_RELAY_ACK_WAIT_SECONDS", "5", 1);
	EXPECT_BAD_AT_KEEP("TREATY_RELAY_PROGRESS_SECONDS", "6", "");
	setenv("TREATY_RELAY_PROGRESS_SECONDS", "4", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT(cfg.ack_wait_seconds, 5);
	T_EQ_INT(cfg.progress_seconds, 4);
	config_free(&cfg);
	env_clear();
}

/*
 * JetStream refuses a stream whose duplicate window is longer than its
 * max age: refused here, naming the window, rather than accepted and
 * then failing every publish (a reload) or never becoming ready (a start).
 */
static void
duplicate_window_within_ages(void)
{
	struct config		 cfg;
	struct config_error	 err;

	expect_bad_at(__LINE__, "TREATY_RELAY_WORK_MAX_AGE_HOURS", "1",
	    "--duplicate-window-minutes", "61", "--duplicate-window-minutes",
	    "");
	expect_bad_at(__LINE__, "TREATY_RELAY_AUDIT_MAX_AGE_DAYS", "1",
	    "--duplicate-window-minutes", "1441",
	    "--duplicate-window-minutes", "");
	env_clear();
	setenv("TREATY_RELAY_WORK_MAX_AGE_HOURS", "1", 1);
	EXPECT_BAD_AT_KEEP("TREATY_RELAY_DUPLICATE_WINDOW_MINUTES", "120", "");
	setenv("TREATY_RELAY_DUPLICATE_WINDOW_MINUTES", "60", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT(cfg.duplicate_window_minutes, 60);
	config_free(&cfg);
	env_clear();
}

/* TREATY_RELAY_VERBOSE: 0/1/true/false/empty, anything else refused. */
static void
verbose_values(void)
{
	struct config	 cfg;

	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_VERBOSE", "true")) {
		T_EQ_INT(cfg.verbose, 1);
		config_free(&cfg);
	}
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_VERBOSE", "0")) {
		T_EQ_INT(cfg.verbose, 0);
		config_free(&cfg);
	}
	EXPECT_BAD_ENV("TREATY_RELAY_VERBOSE", "yes", "");
	EXPECT_BAD_ENV("TREATY_RELAY_VERBOSE", "2", "");
	env_clear();
}

/* A valid producer list: names, lowercase hashes, subjects copied. */
static void
producers_ok(void)
{
	struct config	 cfg;

	if (!LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS",
	    "[{\"name\":\"alpha\",\"tokenSha256\":\"" HASH_A_UPPER "\","
	    "\"subjects\":[\"evt.*.shop.>\",\"audit.*.shop.>\"]},"
	    "{\"name\":\"Beta_2-x\",\"tokenSha256\":\"" HASH_B "\","
	    "\"subjects\":[\"evt.acme.other.order.created\"]}]"))
		return;
	T_EQ_INT(cfg.nproducers, 2);
	if (cfg.nproducers == 2) {
		T_EQ_STR(cfg.producers[0].name, "alpha");
		T_EQ_STR(cfg.producers[0].tokens.hash[0], HASH_A);
		T_EQ_INT(cfg.producers[0].nsubjects, 2);
		if (cfg.producers[0].nsubjects == 2) {
			T_EQ_STR(cfg.producers[0].subjects[0], "evt.*.shop.>");
			T_EQ_STR(cfg.producers[0].subjects[1],
			    "audit.*.shop.>");
		}
		T_EQ_STR(cfg.producers[1].name, "Beta_2-x");
		T_EQ_STR(cfg.producers[1].tokens.hash[0], HASH_B);
		T_EQ_INT(cfg.producers[1].nsubjects, 1);
	}
	config_free(&cfg);

	/* An empty list is valid (every POST then gets 401). */
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS", "[]")) {
		T_EQ_INT(cfg.nproducers, 0);
		config_free(&cfg);
	}
	/* A 64-character name is the longest allowed. */
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS", "[{\"name\":\""
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "\",\"tokenSha256\":\"" HASH_A "\",\"subjects\":[\"evt.>\"]}]"))
		config_free(&cfg);
	env_clear();
}

#define P_OK(name, hash)	"{\"name\":\"" name "\",\"tokenSha256\":\"" \
				hash "\",\"subjects\":[\"evt.>\"]}"

/* Every way a producer list can be wrong names its field. */
static void
producers_bad(void)
{
	static const struct {
		const char	*json;
		const char	*field;
	} bad[] = {
		{ "[{", "" },
		{ "", "" },
		{ "[1,]", "" },
		{ "{\"name\":\"a\"}", "" },
		{ "\"x\"", "" },
		{ "null", "" },
		{ "[\"x\"]", "[0]" },
		{ "[" P_OK("a", HASH_A) ",[]]", "[1]" },
		{ "[" P_OK("a", HASH_A) ",null]", "[1]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"],\"subject\":[\"evt.>\"]}]",
		  "[0].subject" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"],\"Name\":\"a\"}]", "[0].Name" },
		{ "[{\"name\":\"a.b\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].name" },
		{ "[{\"name\":\"\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].name" },
		{ "[{\"name\":\"a b\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].name" },
		{ "[{\"name\":\"caf\xc3\xa9\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].name" },
		{ "[{\"name\":\""
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "\",\"tokenSha256\":\"" HASH_A "\",\"subjects\":[\"evt.>\"]}]",
		  "[0].name" },
		{ "[{\"name\":7,\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].name" },
		{ "[{\"tokenSha256\":\"" HASH_A "\",\"subjects\":[\"evt.>\"]}]",
		  "[0].name" },
		{ "[" P_OK("a", HASH_A) "," P_OK("a", HASH_B) "]", "[1].name" },
		/* 63 and 65 hex digits, a non-hex digit, a number, missing. */
		{ "[{\"name\":\"a\",\"tokenSha256\":\""
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
		  "\",\"subjects\":[\"evt.>\"]}]", "[0].tokenSha256" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "0\","
		  "\"subjects\":[\"evt.>\"]}]", "[0].tokenSha256" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\""
		  "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "\",\"subjects\":[\"evt.>\"]}]", "[0].tokenSha256" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\""
		  " 123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "\",\"subjects\":[\"evt.>\"]}]", "[0].tokenSha256" },
		{ "[{\"name\":\"a\",\"tokenSha256\":1,\"subjects\":[\"evt.>\"]}]",
		  "[0].tokenSha256" },
		{ "[{\"name\":\"a\",\"subjects\":[\"evt.>\"]}]",
		  "[0].tokenSha256" },
		{ "[{\"name\":\"x\"}]", "[0].tokenSha256" },
		/* The same token in either case is the same token. */
		{ "[" P_OK("a", HASH_A) "," P_OK("b", HASH_A_UPPER) "]",
		  "[1].tokenSha256" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[]}]", "[0].subjects" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\"}]",
		  "[0].subjects" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":\"evt.>\"}]", "[0].subjects" },
		{ "[" P_OK("a", HASH_A) ",{\"name\":\"b\",\"tokenSha256\":\""
		  HASH_B "\",\"subjects\":[\"evt..x\"]}]", "[1].subjects[0]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\",\"evt.>.x\"]}]", "[0].subjects[1]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.a b\"]}]", "[0].subjects[0]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"\"]}]", "[0].subjects[0]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[5]}]", "[0].subjects[0]" },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.*.shop.>\",\"evt.x*.y\"]}]",
		  "[0].subjects[1]" },
	};
	size_t	 i;

	for (i = 0; i < T_NCASES(bad); i++)
		EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", bad[i].json,
		    bad[i].field);
	/* Given as --producers, the error names the flag. */
	EXPECT_BAD_FLAG("--producers", "[{\"name\":\"x\"}]", "[0].tokenSha256");
	expect_bad_at(__LINE__, "TREATY_RELAY_PRODUCERS", "[]", "--producers",
	    "[\"x\"]", "--producers", "[0]");
	env_clear();
}

/* config_find_producer: the right producer by hash, NULL otherwise. */
static void
find_producer(void)
{
	struct config		 cfg;
	const struct producer	*p;

	if (!LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS",
	    "[" P_OK("alpha", HASH_A_UPPER) "," P_OK("beta", HASH_B) "]"))
		return;
	p = config_find_producer(&cfg, HASH_A);
	T_ASSERT(p != NULL && strcmp(p->name, "alpha") == 0);
	T_ASSERT(p == &cfg.producers[0]);
	p = config_find_producer(&cfg, HASH_B);
	T_ASSERT(p != NULL && strcmp(p->name, "beta") == 0);
	T_ASSERT(config_find_producer(&cfg,
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdee")
	    == NULL);
	T_ASSERT(config_find_producer(&cfg,
	    "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	    == NULL);
	/* Hashes are compared as stored (lowercase), not case-folded. */
	T_ASSERT(config_find_producer(&cfg, HASH_A_UPPER) == NULL);
	config_free(&cfg);

	/* No producers: nothing is found. */
	env_clear();
	if (LOAD_ENV_OK(&cfg, "PORT", "8080")) {
		T_ASSERT(config_find_producer(&cfg, HASH_A) == NULL);
		config_free(&cfg);
	}
	env_clear();
}

#define SUB(extra)	"[{\"name\":\"s\",\"secret\":\"" SECRET "\"," \
			"\"filter\":\"evt.>\"," extra "}]"
#define SUB_URL(u)	SUB("\"url\":\"" u "\"")

/* Push and pull subscribers that are valid, with their defaults. */
static void
subscribers_ok(void)
{
	static const char *const urls[] = {
		"https://example.com/hook", "HTTPS://example.com:8443/a?b=c",
		"http://localhost/hook", "http://LOCALHOST:9000/x",
		"http://127.0.0.1:8080", "http://127.0.0.1:8080/x",
		"http://[::1]/", "http://[::1]:9/x", "http://hooks",
		"http://hooks:8080/in", "https://10.1.2.3/x",
	};
	struct config	 cfg;
	char		 buf[512];
	size_t		 i;

	for (i = 0; i < T_NCASES(urls); i++) {
		snprintf(buf, sizeof(buf), SUB("\"url\":\"%s\""), urls[i]);
		if (!LOAD_ENV_OK(&cfg, "TREATY_RELAY_SUBSCRIBERS", buf))
			continue;
		T_EQ_INT(cfg.nsubscribers, 1);
		if (cfg.nsubscribers == 1) {
			T_EQ_INT(cfg.subscribers[0].kind, SUB_PUSH);
			T_EQ_STR(cfg.subscribers[0].url, urls[i]);
			T_EQ_INT(cfg.subscribers[0].max_deliver, 10);
			T_EQ_INT(cfg.subscribers[0].max_in_flight, 64);
			T_EQ_INT(cfg.subscribers[0].standard_webhooks, 0);
			T_EQ_INT(cfg.subscribers[0].nsecrets, 1);
			T_EQ_STR(cfg.subscribers[0].filter, "evt.>");
		}
		config_free(&cfg);
	}

	/* secrets list (newest first), options, a pull subscriber. */
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_SUBSCRIBERS",
	    "[{\"name\":\"orders\",\"url\":\"https://h.example/x\","
	    "\"secrets\":[\"new-secret-000001\",\"old-secret-0000001\"],"
	    "\"filter\":\"evt.*.shop.order.*\",\"maxDeliver\":3,"
	    "\"maxInFlight\":1,\"standardWebhooks\":true},"
	    "{\"name\":\"worker\",\"tokenSha256\":\"" HASH_A_UPPER "\","
	    "\"secret\":\"" SECRET "\",\"filter\":\"evt.>\"}]")) {
		T_EQ_INT(cfg.nsubscribers, 2);
		if (cfg.nsubscribers == 2) {
			struct subscriber *s = &cfg.subscribers[0];

			T_EQ_STR(s->name, "orders");
			T_EQ_INT(s->nsecrets, 2);
			if (s->nsecrets == 2) {
				T_EQ_STR(s->secrets[0], "new-secret-000001");
				T_EQ_STR(s->secrets[1], "old-secret-0000001");
			}
			T_EQ_STR(s->filter, "evt.*.shop.order.*");
			T_EQ_INT(s->max_deliver, 3);
			T_EQ_INT(s->max_in_flight, 1);
			T_EQ_INT(s->standard_webhooks, 1);
			s = &cfg.subscribers[1];
			T_EQ_INT(s->kind, SUB_PULL);
			T_ASSERT(s->url == NULL);
			T_EQ_STR(s->tokens.hash[0], HASH_A);
			T_EQ_INT(s->max_deliver, 10);
			/* Pull: leases at once, JetStream's own default. */
			T_EQ_INT(s->max_in_flight, 1000);
		}
		config_free(&cfg);
	}
	env_clear();
}

/* Every way a subscriber can be wrong is refused, naming its field. */
static void
subscribers_bad(void)
{
	static const struct {
		const char	*json;
		const char	*field;	/* NULL: any field of entry [0] */
	} bad[] = {
		{ "[{", "" },
		{ "{}", "" },
		{ "[7]", "[0]" },
		{ SUB_URL("http://example.com/hook"), "[0].url" },
		{ SUB_URL("http://127.0.0.1.nip.io/hook"), "[0].url" },
		{ SUB_URL("http://localhost.example.com/"), "[0].url" },
		{ SUB_URL("http://10.0.0.1/"), "[0].url" },
		{ SUB_URL("http://[2001:db8::1]/"), "[0].url" },
		{ SUB_URL("http://2130706433/"), "[0].url" },
		{ SUB_URL("http://-hooks/"), "[0].url" },
		{ SUB_URL("ftp://example.com/x"), "[0].url" },
		{ SUB_URL("ftp://hooks/x"), "[0].url" },
		{ SUB_URL("example.com/hook"), "[0].url" },
		{ SUB_URL("https://"), "[0].url" },
		{ SUB_URL("https://user:pw@example.com/"), "[0].url" },
		{ SUB_URL(""), "[0].url" },
		{ SUB("\"url\":5"), "[0].url" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\"audit.>\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\">\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\"evt\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\"*.>\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\"evt..x\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\"}]", "[0].filter" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":"
		  "\"0123456789abcde\",\"filter\":\"evt.>\"}]", "[0].secret" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\","
		  "\"filter\":\"evt.>\"}]", NULL },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"secrets\":[\"" SECRET "\"],\"filter\":\"evt.>\"}]",
		  NULL },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secrets\":"
		  "[],\"filter\":\"evt.>\"}]", "[0].secrets" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secrets\":"
		  "[\"" SECRET "\",\"short\"],\"filter\":\"evt.>\"}]",
		  "[0].secrets[1]" },
		{ SUB("\"url\":\"https://e.example/\",\"tokenSha256\":\"" HASH_A
		  "\""), NULL },
		{ SUB("\"maxInFlight\":5"), NULL },
		{ SUB("\"tokenSha256\":\"abc\""), "[0].tokenSha256" },
		{ SUB("\"url\":\"https://e.example/\",\"maxDeliver\":0"),
		  "[0].maxDeliver" },
		{ SUB("\"url\":\"https://e.example/\",\"maxDeliver\":-1"),
		  "[0].maxDeliver" },
		{ SUB("\"url\":\"https://e.example/\",\"maxDeliver\":\"3\""),
		  "[0].maxDeliver" },
		{ SUB("\"url\":\"https://e.example/\",\"maxDeliver\":2.5"),
		  "[0].maxDeliver" },
		{ SUB("\"url\":\"https://e.example/\",\"maxInFlight\":0"),
		  "[0].maxInFlight" },
		{ SUB("\"url\":\"https://e.example/\",\"standardWebhooks\":1"),
		  "[0].standardWebhooks" },
		/* SPEC 18: ordered is true or false. */
		{ SUB("\"url\":\"https://e.example/\",\"ordered\":\"yes\""),
		  "[0].ordered" },
		{ SUB("\"url\":\"https://e.example/\",\"ordered\":1"),
		  "[0].ordered" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\","
		  "\"secret\":\"whsec_not!base64=\",\"filter\":\"evt.>\","
		  "\"standardWebhooks\":true}]", "[0].secret" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\","
		  "\"secrets\":[\"" SECRET "\",\"whsec_not!base64=\"],"
		  "\"filter\":\"evt.>\",\"standardWebhooks\":true}]",
		  "[0].secrets[1]" },
		{ SUB("\"url\":\"https://e.example/\",\"retries\":1"),
		  "[0].retries" },
		/* SPEC 17: breaker.failures 0-10000, rateLimit (0, 100000]. */
		{ SUB("\"url\":\"https://e.example/\",\"breaker\":"
		  "{\"failures\":-1}"), "[0].breaker.failures" },
		{ SUB("\"url\":\"https://e.example/\",\"breaker\":"
		  "{\"failures\":10001}"), "[0].breaker.failures" },
		{ SUB("\"url\":\"https://e.example/\",\"breaker\":"
		  "{\"failures\":2.5}"), "[0].breaker.failures" },
		{ SUB("\"url\":\"https://e.example/\",\"breaker\":"
		  "{\"tries\":3}"), "[0].breaker.tries" },
		{ SUB("\"url\":\"https://e.example/\",\"breaker\":20"),
		  "[0].breaker" },
		{ SUB("\"tokenSha256\":\"" HASH_A "\",\"breaker\":"
		  "{\"failures\":3}"), "[0].breaker" },
		{ SUB("\"url\":\"https://e.example/\",\"rateLimit\":0"),
		  "[0].rateLimit" },
		{ SUB("\"url\":\"https://e.example/\",\"rateLimit\":100001"),
		  "[0].rateLimit" },
		{ SUB("\"url\":\"https://e.example/\",\"rateLimit\":\"5\""),
		  "[0].rateLimit" },
		{ SUB("\"tokenSha256\":\"" HASH_A "\",\"rateLimit\":5"),
		  "[0].rateLimit" },
		{ "[{\"name\":\"a.b\",\"url\":\"https://e.example/\","
		  "\"secret\":\"" SECRET "\",\"filter\":\"evt.>\"}]",
		  "[0].name" },
		{ "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"secret\":\""
		  SECRET "\",\"filter\":\"evt.>\"},{\"name\":\"s\",\"url\":"
		  "\"https://f.example/\",\"secret\":\"" SECRET "\","
		  "\"filter\":\"evt.>\"}]", "[1].name" },
	};
	size_t	 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		struct config		 cfg;
		struct config_error	 err;

		if (bad[i].field != NULL) {
			EXPECT_BAD_ENV("TREATY_RELAY_SUBSCRIBERS", bad[i].json,
			    bad[i].field);
			continue;
		}
		env_clear();
		setenv("TREATY_RELAY_SUBSCRIBERS", bad[i].json, 1);
		if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
			T_EQ_STR(err.var, "TREATY_RELAY_SUBSCRIBERS");
			if (!T_ASSERT(strncmp(err.field, "[0].", 4) == 0))
				t_fail(__FILE__, __LINE__, "  field %s for %s",
				    err.field, bad[i].json);
		} else
			t_fail(__FILE__, __LINE__, "  accepted %s", bad[i].json);
		config_free(&cfg);
	}
	EXPECT_BAD_FLAG("--subscribers", SUB_URL("ftp://x.example/"),
	    "[0].url");
	env_clear();
}

/*
 * Plain http to a private network where the operator allowed it: with
 * TREATY_RELAY_ALLOW_PRIVATE_NETWORKS, a private address or a name (which
 * deliveries then reach only at private addresses), never a public
 * address; without it, the error says the two ways out.  The setting
 * counts wherever it is given, before or after the list.
 */
static void
private_urls(void)
{
	static const char *const ok_urls[] = {
		"http://10.0.0.1/", "http://192.168.1.5:8080/x",
		"http://100.64.0.9/", "http://[fd00::1]:8080/x",
		"http://[fe80::1]/", "http://hooks.internal:8080/in",
		"http://svc.ns.svc.cluster.local/", "http://localhost/",
	};
	static const char *const bad_urls[] = {
		"http://8.8.8.8/", "http://[2606:4700::1111]/",
		"http://93.184.216.34:80/x",
	};
	struct config		 cfg;
	struct config_error	 err;
	char			 buf[512];
	size_t			 i;

	for (i = 0; i < T_NCASES(ok_urls); i++) {
		env_clear();
		setenv("TREATY_RELAY_ALLOW_PRIVATE_NETWORKS", "1", 1);
		snprintf(buf, sizeof(buf), SUB("\"url\":\"%s\""), ok_urls[i]);
		setenv("TREATY_RELAY_SUBSCRIBERS", buf, 1);
		if (!T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN))
			t_fail(__FILE__, __LINE__, "  %s: %s", ok_urls[i],
			    err.detail);
		config_free(&cfg);
		/* The flag too, though it comes after the list. */
		env_clear();
		setenv("TREATY_RELAY_SUBSCRIBERS", buf, 1);
		T_EQ_INT(load(&cfg, &err, "--allow-private-networks", NULL),
		    CONFIG_RUN);
		config_free(&cfg);
	}
	for (i = 0; i < T_NCASES(bad_urls); i++) {
		env_clear();
		setenv("TREATY_RELAY_ALLOW_PRIVATE_NETWORKS", "1", 1);
		snprintf(buf, sizeof(buf), SUB("\"url\":\"%s\""), bad_urls[i]);
		EXPECT_BAD_AT_KEEP("TREATY_RELAY_SUBSCRIBERS", buf, "[0].url");
	}
	/* https to a public address stays fine with the setting. */
	env_clear();
	setenv("TREATY_RELAY_ALLOW_PRIVATE_NETWORKS", "1", 1);
	setenv("TREATY_RELAY_SUBSCRIBERS", SUB_URL("https://8.8.8.8/"), 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	config_free(&cfg);

	/* Without it: the two ways out, named. */
	env_clear();
	setenv("TREATY_RELAY_SUBSCRIBERS", SUB_URL("http://10.0.0.1/"), 1);
	if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
		T_EQ_STR(err.field, "[0].url");
		T_ASSERT(strstr(err.detail, "use https, or set "
		    "TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1") != NULL);
	}
	config_free(&cfg);
	env_clear();
	setenv("TREATY_RELAY_ALLOW_PRIVATE_NETWORKS", "1", 1);
	setenv("TREATY_RELAY_SUBSCRIBERS", SUB_URL("http://8.8.8.8/"), 1);
	if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD))
		T_ASSERT(strstr(err.detail, "never to a public address: use "
		    "https") != NULL);
	config_free(&cfg);
	env_clear();
}

/*
 * deliverFrom (SPEC 3): all by default for a configured subscriber, new,
 * or an RFC 3339 time to the nanosecond, push and pull alike; anything
 * else is refused naming the field.  A changed value makes the
 * subscriber "changed" (the reload logs that it is kept).
 */
static void
deliver_from(void)
{
	static const char *const bad[] = { "\"yesterday\"", "\"ALL\"",
	    "\"\"", "\"2026-13-01T00:00:00Z\"", "\"2026-01-02\"",
	    "\"2026-01-02T03:04:05\"", "\"9999-01-01T00:00:00Z\"", "5",
	    "null", "[\"new\"]" };
	struct config	 cfg;
	struct subscriber a, b;
	char		 buf[512];
	size_t		 i;

	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_SUBSCRIBERS",
	    "[{\"name\":\"d\",\"url\":\"https://e.example/\",\"secret\":\""
	    SECRET "\",\"filter\":\"evt.>\"},"
	    "{\"name\":\"n\",\"url\":\"https://e.example/\",\"secret\":\""
	    SECRET "\",\"filter\":\"evt.>\",\"deliverFrom\":\"new\"},"
	    "{\"name\":\"t\",\"tokenSha256\":\"" HASH_A "\",\"secret\":\""
	    SECRET "\",\"filter\":\"evt.>\","
	    "\"deliverFrom\":\"2026-01-02T03:04:05.000000006+01:00\"},"
	    "{\"name\":\"a\",\"url\":\"https://e.example/\",\"secret\":\""
	    SECRET "\",\"filter\":\"evt.>\",\"deliverFrom\":\"all\"}]")) {
		if (T_EQ_INT(cfg.nsubscribers, 4)) {
			T_EQ_INT(cfg.subscribers[0].from, SUB_FROM_ALL);
			T_EQ_INT(cfg.subscribers[1].from, SUB_FROM_NEW);
			T_EQ_INT(cfg.subscribers[2].kind, SUB_PULL);
			T_EQ_INT(cfg.subscribers[2].from, SUB_FROM_TIME);
			/* 2026-01-02T02:04:05Z, and 6 ns. */
			T_ASSERT(cfg.subscribers[2].from_ns ==
			    1767319445LL * 1000000000LL + 6);
			T_EQ_INT(cfg.subscribers[3].from, SUB_FROM_ALL);
			a = cfg.subscribers[0];
			b = a;
			T_EQ_INT(config_subscriber_equal(&a, &b), 1);
			b.from = SUB_FROM_NEW;
			T_EQ_INT(config_subscriber_equal(&a, &b), 0);
			b = cfg.subscribers[2];
			a = b;
			a.from_ns++;
			T_EQ_INT(config_subscriber_equal(&a, &b), 0);
		}
		config_free(&cfg);
	}
	/* The configuration's default; the API's (SPEC 16) will be new. */
	T_EQ_INT(SUB_FROM_CONFIG_DEFAULT, SUB_FROM_ALL);
	/* Before 1970: from the start, as all. */
	memset(&a, 0, sizeof(a));
	T_EQ_INT(config_deliver_from("1969-12-31T23:59:59Z", &a), 0);
	T_EQ_INT(a.from, SUB_FROM_TIME);
	T_ASSERT(a.from_ns == 0);
	T_EQ_INT(config_deliver_from("new", &a), 0);
	T_EQ_INT(a.from, SUB_FROM_NEW);
	T_EQ_INT(config_deliver_from("now", &a), -1);

	for (i = 0; i < T_NCASES(bad); i++) {
		snprintf(buf, sizeof(buf), SUB("\"url\":\"https://e.example/\","
		    "\"deliverFrom\":%s"), bad[i]);
		EXPECT_BAD_ENV("TREATY_RELAY_SUBSCRIBERS", buf,
		    "[0].deliverFrom");
	}
	env_clear();
}

/*
 * A key given twice in any object of a JSON setting is refused naming
 * the variable, the key's field and the key (SPEC 13): the first would
 * be read and the second, maybe a short secret, pass unchecked.
 */
static void
duplicate_keys(void)
{
	static const struct {
		const char	*var, *json, *field, *detail;
	} bad[] = {
		{ "TREATY_RELAY_PRODUCERS", "[{\"name\":\"a\",\"tokenSha256\":"
		  "\"" HASH_A "\",\"subjects\":[\"evt.>\"],"
		  "\"subjects\":[\"x\"]}]", "[0].subjects",
		  "duplicate key subjects" },
		{ "TREATY_RELAY_PRODUCERS", "[" P_OK("a", HASH_A) ",{\"name\":"
		  "\"b\",\"\\u006eame\":\"c\",\"tokenSha256\":\"" HASH_B "\","
		  "\"subjects\":[\"evt.>\"]}]", "[1].name",
		  "duplicate key name" },
		/* Inside a value the relay refuses anyway: still named. */
		{ "TREATY_RELAY_PRODUCERS", "[{\"name\":\"a\",\"tokenSha256\":"
		  "\"" HASH_A "\",\"subjects\":[{\"k\":1,\"k\":2}]}]",
		  "[0].subjects[0].k", "duplicate key k" },
		{ "TREATY_RELAY_SUBSCRIBERS",
		  SUB("\"url\":\"https://e.example/\",\"secret\":\"short\""),
		  "[0].secret", "duplicate key secret" },
		{ "TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"p\","
		  "\"tokenSha256\":\"" HASH_A "\",\"secret\":\"" SECRET "\","
		  "\"filter\":\"evt.>\",\"maxDeliver\":3,\"maxDeliver\":3}]",
		  "[0].maxDeliver",
		  "duplicate key maxDeliver" },
		{ "TREATY_RELAY_SUBSCRIBERS", "{\"a\":1,\"a\":1}", "a",
		  "duplicate key a" },
	};
	struct config		 cfg;
	struct config_error	 err;
	size_t			 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		env_clear();
		setenv(bad[i].var, bad[i].json, 1);
		if (!T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
			config_free(&cfg);
			continue;
		}
		T_EQ_STR(err.var, bad[i].var);
		T_EQ_STR(err.field, bad[i].field);
		T_EQ_STR(err.detail, bad[i].detail);
		config_free(&cfg);
	}
	/* The same keys in different objects are no repeat. */
	T_ASSERT(LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS", "[" P_OK("a",
	    HASH_A) "," P_OK("b", HASH_B) "]"));
	config_free(&cfg);
	env_clear();
}

/* NATS_URL: comma-separated nats:// (or tls://) URLs. */
static void
nats_url(void)
{
	struct config	 cfg;

	if (LOAD_ENV_OK(&cfg, "NATS_URL",
	    "nats://10.0.0.1:4222,nats://10.0.0.2:4222")) {
		T_EQ_INT(cfg.nnats_servers, 2);
		if (cfg.nnats_servers == 2) {
			T_EQ_STR(cfg.nats_servers[0], "nats://10.0.0.1:4222");
			T_EQ_STR(cfg.nats_servers[1], "nats://10.0.0.2:4222");
		}
		T_EQ_STR(cfg.nats_url,
		    "nats://10.0.0.1:4222,nats://10.0.0.2:4222");
		config_free(&cfg);
	}
	if (LOAD_ENV_OK(&cfg, "NATS_URL", "tls://a:1, tls://b:2 ,")) {
		T_EQ_INT(cfg.nnats_servers, 2);
		if (cfg.nnats_servers == 2)
			T_EQ_STR(cfg.nats_servers[1], "tls://b:2");
		T_EQ_INT(cfg.nats_tls, 1);
		config_free(&cfg);
	}
	if (LOAD_ENV_OK(&cfg, "NATS_URL", "nats://user:pw@a")) {
		T_EQ_INT(cfg.nats_tls, 0);
		config_free(&cfg);
	}
	/* nats.c has one TLS switch per connection: all tls:// or none. */
	EXPECT_BAD_ENV("NATS_URL", "nats://a:1, tls://b:2,", "");
	EXPECT_BAD_ENV("NATS_URL", "127.0.0.1:4222", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "http://127.0.0.1:4222", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "nats://a:4222,b:4222", "[1]");
	EXPECT_BAD_ENV("NATS_URL", "nats://127.0.0.1:notaport", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "nats://h:0", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "nats://h:65536", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "nats://h:4222/x", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "nats://:4222", "[0]");
	EXPECT_BAD_ENV("NATS_URL", "", "");
	EXPECT_BAD_ENV("NATS_URL", ",", "");
	EXPECT_BAD_FLAG("--nats-url", "localhost:4222", "[0]");
	env_clear();
}

/* TREATY_RELAY_LISTEN: a numeric IPv4 or IPv6 address only. */
static void
listen_addr(void)
{
	static const char *const good[] = { "::1", "::", "127.0.0.1",
	    "0.0.0.0", "fe80::1" };
	static const char *const badv[] = { "localhost", "", "example.com",
	    "127.0.0.1:80", "[::1]", "256.1.1.1", "1.2.3" };
	struct config	 cfg;
	size_t		 i;

	for (i = 0; i < T_NCASES(good); i++)
		if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_LISTEN", good[i])) {
			T_EQ_STR(cfg.listen, good[i]);
			config_free(&cfg);
		}
	for (i = 0; i < T_NCASES(badv); i++)
		EXPECT_BAD_ENV("TREATY_RELAY_LISTEN", badv[i], "");
	EXPECT_BAD_FLAG("--listen", "localhost", "");
	env_clear();
}

/* --check-config, --help, -h, --version, usage errors. */
static void
actions(void)
{
	struct config		 cfg;
	struct config_error	 err;

	env_clear();
	setenv("TREATY_RELAY_PRODUCERS", "[" P_OK("a", HASH_A) "]", 1);
	T_EQ_INT(load(&cfg, &err, "--check-config", NULL), CONFIG_CHECK);
	T_EQ_INT(cfg.nproducers, 1);
	config_free(&cfg);
	/* A bad configuration wins over --check-config: exit 78. */
	setenv("PORT", "0", 1);
	T_EQ_INT(load(&cfg, &err, "--check-config", NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "PORT");
	config_free(&cfg);
	env_clear();

	T_EQ_INT(load(&cfg, &err, "--help", NULL), CONFIG_HELP);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "-h", NULL), CONFIG_HELP);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "--version", NULL), CONFIG_VERSION);
	config_free(&cfg);
	/* --help is answered even when the configuration is bad. */
	setenv("PORT", "0", 1);
	T_EQ_INT(load(&cfg, &err, "--help", NULL), CONFIG_HELP);
	config_free(&cfg);
	env_clear();

	T_EQ_INT(load(&cfg, &err, "--bogus", NULL), CONFIG_USAGE_ERROR);
	T_ASSERT(strstr(err.detail, "--bogus") != NULL);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "-x", NULL), CONFIG_USAGE_ERROR);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "--port", NULL), CONFIG_USAGE_ERROR);
	config_free(&cfg);
	/* glibc would take a unique prefix: --gra as --grace-seconds. */
	T_EQ_INT(load(&cfg, &err, "--gra", "5", NULL), CONFIG_USAGE_ERROR);
	T_ASSERT(strstr(err.detail, "--gra ") != NULL &&
	    strstr(err.detail, "abbreviated") != NULL);
	config_free(&cfg);
	/* The message names the option, not its value (perhaps a secret). */
	T_EQ_INT(load(&cfg, &err, "--admin-token=abc123secret", NULL),
	    CONFIG_USAGE_ERROR);
	T_ASSERT(strstr(err.detail, "--admin-token") != NULL &&
	    strstr(err.detail, "abc123secret") == NULL);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "stray", NULL), CONFIG_USAGE_ERROR);
	T_ASSERT(strstr(err.detail, "stray") != NULL);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "--version=1", NULL), CONFIG_USAGE_ERROR);
	config_free(&cfg);
	/* After a usage error a normal load still works (getopt reset). */
	T_EQ_INT(load(&cfg, &err, "--port", "81", NULL), CONFIG_RUN);
	T_EQ_INT(cfg.port, 81);
	config_free(&cfg);
}

/* --help names every variable of docs/DESIGN.md and every flag. */
static void
usage_text(void)
{
	static const char *const flags[] = {
		"--nats-url", "--port", "--listen", "--producers",
		"--subscribers", "--work-max-age-hours", "--audit-max-age-days",
		"--duplicate-window-minutes", "--replicas",
		"--publish-timeout-ms", "--max-pending", "--grace-seconds",
		"--http-timeout-seconds", "--verbose", "--check-config",
		"--help", "--version"
	};
	char	*buf = NULL;
	size_t	 len = 0, i;
	FILE	*f = open_memstream(&buf, &len);

	if (!T_ASSERT(f != NULL))
		return;
	config_usage(f);
	fclose(f);
	for (i = 0; i < T_NCASES(vars); i++)
		if (!T_ASSERT(strstr(buf, vars[i]) != NULL))
			t_fail(__FILE__, __LINE__, "  %s missing", vars[i]);
	for (i = 0; i < T_NCASES(flags); i++)
		if (!T_ASSERT(strstr(buf, flags[i]) != NULL))
			t_fail(__FILE__, __LINE__, "  %s missing", flags[i]);
	free(buf);
}

/* A pull subscriber's token may not be a producer's or another inbox's. */
static void
pull_token_roles(void)
{
	struct config		 cfg;
	struct config_error	 err;
#define PULL_FMT	"{\"name\":\"%s\",\"tokenSha256\":\"" HASH_A \
			"\",\"secret\":\"0123456789abcdef\",\"filter\":\"evt.>\"}"
	char			 one[512], two[1024], a[400], b[400];

	env_clear();
	setenv("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\",\"tokenSha256\":\""
	    HASH_A "\",\"subjects\":[\"evt.>\"]}]", 1);
	snprintf(a, sizeof(a), PULL_FMT, "inbox");
	snprintf(one, sizeof(one), "[%s]", a);
	setenv("TREATY_RELAY_SUBSCRIBERS", one, 1);
	if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
		T_EQ_STR(err.var, "TREATY_RELAY_SUBSCRIBERS");
		T_EQ_STR(err.field, "[0].tokenSha256");
	}
	config_free(&cfg);

	unsetenv("TREATY_RELAY_PRODUCERS");
	snprintf(b, sizeof(b), PULL_FMT, "inbox2");
	snprintf(two, sizeof(two), "[%s,%s]", a, b);
	setenv("TREATY_RELAY_SUBSCRIBERS", two, 1);
	if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD))
		T_EQ_STR(err.field, "[1].tokenSha256");
	config_free(&cfg);
	env_clear();
}

#define HASH_C	"c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"

/* tokenSha256 as a list (rotation): any of its hashes, up to eight. */
static void
token_lists(void)
{
	struct config		 cfg;
	char			 nine[1024];
	size_t			 i, n;

	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\","
	    "\"tokenSha256\":[\"" HASH_B "\",\"" HASH_A_UPPER "\"],"
	    "\"subjects\":[\"evt.>\"]},{\"name\":\"q\",\"tokenSha256\":\""
	    HASH_C "\",\"subjects\":[\"evt.>\"]}]")) {
		T_EQ_INT((int)cfg.producers[0].tokens.n, 2);
		T_EQ_STR(cfg.producers[0].tokens.hash[1], HASH_A);
		T_ASSERT(config_find_producer(&cfg, HASH_A) == &cfg.producers[0]);
		T_ASSERT(config_find_producer(&cfg, HASH_B) == &cfg.producers[0]);
		T_ASSERT(config_find_producer(&cfg, HASH_C) == &cfg.producers[1]);
		config_free(&cfg);
	}
	n = (size_t)snprintf(nine, sizeof(nine), "[{\"name\":\"p\","
	    "\"subjects\":[\"evt.>\"],\"tokenSha256\":[");
	for (i = 0; i < 9; i++)
		n += (size_t)snprintf(nine + n, sizeof(nine) - n,
		    "%s\"%064zx\"", i ? "," : "", i + 1);
	snprintf(nine + n, sizeof(nine) - n, "]}]");
	EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", nine, "[0].tokenSha256");
	EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\","
	    "\"subjects\":[\"evt.>\"],\"tokenSha256\":[]}]",
	    "[0].tokenSha256");
	EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\","
	    "\"subjects\":[\"evt.>\"],\"tokenSha256\":[\"" HASH_A "\",7]}]",
	    "[0].tokenSha256");
	EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\","
	    "\"subjects\":[\"evt.>\"],\"tokenSha256\":[\"" HASH_A "\",\""
	    HASH_A_UPPER "\"]}]", "[0].tokenSha256");
	/* A hash is one producer's or one inbox's, even inside lists. */
	EXPECT_BAD_ENV("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\","
	    "\"subjects\":[\"evt.>\"],\"tokenSha256\":[\"" HASH_A "\",\""
	    HASH_B "\"]},{\"name\":\"q\",\"subjects\":[\"evt.>\"],"
	    "\"tokenSha256\":[\"" HASH_C "\",\"" HASH_B "\"]}]",
	    "[1].tokenSha256");
	env_clear();
	setenv("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\",\"tokenSha256\":"
	    "[\"" HASH_C "\",\"" HASH_A "\"],\"subjects\":[\"evt.>\"]}]", 1);
	EXPECT_BAD_AT_KEEP("TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"i\","
	    "\"tokenSha256\":[\"" HASH_B "\",\"" HASH_A "\"],\"secret\":"
	    "\"0123456789abcdef\",\"filter\":\"evt.>\"}]", "[0].tokenSha256");
	/* An inbox's list: found by any of its hashes. */
	env_clear();
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"i\","
	    "\"tokenSha256\":[\"" HASH_B "\",\"" HASH_A "\"],\"secret\":"
	    "\"0123456789abcdef\",\"filter\":\"evt.>\"}]")) {
		T_ASSERT(config_find_inbox(&cfg, HASH_A) == &cfg.subscribers[0]);
		T_ASSERT(config_find_inbox(&cfg, HASH_B) == &cfg.subscribers[0]);
		T_ASSERT(config_find_inbox(&cfg, HASH_C) == NULL);
		config_free(&cfg);
	}
	env_clear();
}

/* At most TREATY_MAX_SECRETS secrets; a CA file must load; numeric hosts are not local. */
static void
delivery_settings(void)
{
	char	 list[2048];
	size_t	 i, n = 0;

	n += (size_t)snprintf(list + n, sizeof(list) - n,
	    "[{\"name\":\"s\",\"url\":\"https://e.example/\",\"filter\":"
	    "\"evt.>\",\"secrets\":[");
	for (i = 0; i < 9; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"",
		    i ? "," : "", "0123456789abcdef");
	snprintf(list + n, sizeof(list) - n, "]}]");
	EXPECT_BAD_ENV("TREATY_RELAY_SUBSCRIBERS", list, "[0].secrets");
	EXPECT_BAD_ENV("TREATY_RELAY_CA_FILE", "/nonexistent/ca.pem", "");
	EXPECT_BAD_ENV("TREATY_RELAY_CA_FILE", "/etc/hostname", "");
	EXPECT_BAD_ENV("TREATY_RELAY_DNS_SERVER", "not-an-address", "");
	T_EQ_INT(config_host_is_local("hooks"), 1);
	T_EQ_INT(config_host_is_local("localhost"), 1);
	T_EQ_INT(config_host_is_local("[::1]"), 1);
	T_EQ_INT(config_host_is_local("2130706433"), 0);
	T_EQ_INT(config_host_is_local("10.0.0.1"), 0);
	T_EQ_INT(config_host_is_local("a.example"), 0);
	env_clear();
}

/* Collects what config_file_parse reads: "NAME=value|" per line. */
struct collected {
	char	 text[1024];
	int	 lines[16];
	int	 n;
};

/* config_file_parse's callback for collect(). */
static int
collect_cb(void *arg, const char *name, const char *value, int line)
{
	struct collected	*c = arg;
	size_t			 len = strlen(c->text);

	snprintf(c->text + len, sizeof(c->text) - len, "%s=%s|", name, value);
	if (c->n < 16)
		c->lines[c->n++] = line;
	return 0;
}

/* Parse text; the assignments read, or "ERROR line N: why". */
static const char *
collect(const char *text)
{
	static struct collected	 c;
	static char		 out[1100];
	const char		*why = NULL;
	int			 line = 0;

	memset(&c, 0, sizeof(c));
	if (config_file_parse(text, strlen(text), collect_cb, &c, &line,
	    &why) == -1) {
		snprintf(out, sizeof(out), "ERROR line %d: %s", line, why);
		return out;
	}
	return c.text;
}

/* The file syntax: what systemd's EnvironmentFile= reads, and the shell. */
static void
file_syntax(void)
{
	T_EQ_STR(collect(""), "");
	T_EQ_STR(collect("# a comment\n\n; another\n   \nA=1\n"), "A=1|");
	T_EQ_STR(collect("A=1\r\nB_2=two words  \n"), "A=1|B_2=two words|");
	T_EQ_STR(collect("J='[{\"name\":\"a\"}]'\n"), "J=[{\"name\":\"a\"}]|");
	T_EQ_STR(collect("D=\"say \\\"hi\\\" \\\\ \"\n"), "D=say \"hi\" \\ |");
	T_EQ_STR(collect("E=\nF=''\n"), "E=|F=|");
	T_EQ_STR(collect("   G=1\t\n"), "G=1|");
	T_EQ_STR(collect("H=a=b"), "H=a=b|");
	/* What is not VAR=value, with its line. */
	T_EQ_STR(collect("A=1\nexport B=2\n"),
	    "ERROR line 2: not VAR=value (no export, no spaces around =)");
	T_EQ_STR(collect("A = 1\n"),
	    "ERROR line 1: not VAR=value (no export, no spaces around =)");
	T_EQ_STR(collect("just text\n"),
	    "ERROR line 1: not VAR=value (no export, no spaces around =)");
	T_EQ_STR(collect("1A=1\n"),
	    "ERROR line 1: not VAR=value (no export, no spaces around =)");
	T_EQ_STR(collect("#\n\nJ='[1,\n2]'\n"),
	    "ERROR line 3: a quote is not closed (a value is one line)");
	T_EQ_STR(collect("J='a'b\n"), "ERROR line 1: text after the closing quote");
}

/* Write text to a new temporary file; its path (static). */
static const char *
temp_file(const char *text)
{
	static char	 path[64];
	FILE		*f;
	int		 fd;

	snprintf(path, sizeof(path), "/tmp/t-config.XXXXXX");
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL)
		abort();
	fputs(text, f);
	fclose(f);
	return path;
}

/* Flag, then environment, then file, then default; unknown names refused. */
static void
file_precedence(void)
{
	struct config		 cfg;
	struct config_error	 err;
	const char		*path;
	char			 file[64];

	path = temp_file("# treaty-relay\nPORT=7001\nTREATY_RELAY_REPLICAS=3\n"
	    "TREATY_RELAY_MAX_REPLAYS=2\n"
	    "TREATY_RELAY_GRACE_SECONDS=4\nTREATY_RELAY_PRODUCERS='[{\"name\""
	    ":\"p\",\"tokenSha256\":\"" HASH_A "\",\"subjects\":[\"evt.>\"]}]'"
	    "\nTREATY_RELAY_REPLICAS=2\n");
	snprintf(file, sizeof(file), "%s", path);
	env_clear();
	setenv("TREATY_RELAY_GRACE_SECONDS", "5", 1);
	T_EQ_INT(load(&cfg, &err, "--config", file, "--port", "7002", NULL),
	    CONFIG_RUN);
	T_EQ_INT(cfg.port, 7002);		/* the flag */
	T_EQ_INT(cfg.grace_seconds, 5);		/* the environment */
	T_EQ_INT(cfg.replicas, 2);		/* the file's later line */
	T_EQ_INT(cfg.http_timeout_seconds, 30);	/* the default */
	T_EQ_INT(cfg.max_replays, 2);		/* the file */
	T_EQ_INT((int)cfg.nproducers, 1);
	T_EQ_STR(cfg.config_file, file);
	config_free(&cfg);
	/* The same file named by the environment. */
	env_clear();
	setenv("TREATY_RELAY_CONFIG", file, 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT(cfg.port, 7001);
	config_free(&cfg);
	unlink(file);
	/* Unreadable: the variable or flag that named it. */
	EXPECT_BAD_ENV("TREATY_RELAY_CONFIG", "/nonexistent/treaty.env", "");
	EXPECT_BAD_FLAG("--config", "/nonexistent/treaty.env", "");
	EXPECT_BAD_FLAG("--config", "/tmp", "");
	env_clear();
}

/* A misspelt variable, in the file or the environment, is 78 naming it. */
static void
file_unknown(void)
{
	struct config		 cfg;
	struct config_error	 err;
	char			 file[64];

	snprintf(file, sizeof(file), "%s", temp_file("PORT=7001\n"
	    "TREATY_RELAY_REPLICA=2\n"));
	env_clear();
	T_EQ_INT(load(&cfg, &err, "--config", file, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_REPLICA");
	T_ASSERT(strstr(err.detail, "line 2") != NULL);
	config_free(&cfg);
	unlink(file);
	/* The file is the relay's alone: any unknown name is refused. */
	snprintf(file, sizeof(file), "%s", temp_file("NATS_ULR=nats://x:1\n"));
	T_EQ_INT(load(&cfg, &err, "--config", file, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "NATS_ULR");
	config_free(&cfg);
	unlink(file);
	/* A line that is not VAR=value: the file's variable, and the line. */
	snprintf(file, sizeof(file), "%s", temp_file("PORT=1\nexport A=1\n"));
	setenv("TREATY_RELAY_CONFIG", file, 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_CONFIG");
	T_EQ_STR(err.field, "line 2");
	config_free(&cfg);
	unlink(file);
	/* The environment: TREATY_RELAY_* only (others are not ours). */
	env_clear();
	setenv("TREATY_RELAY_PRODUCER", "[]", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_PRODUCER");
	config_free(&cfg);
	unsetenv("TREATY_RELAY_PRODUCER");
	setenv("TREATY_RELAYX", "1", 1);
	setenv("NATS_USER", "someone", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	config_free(&cfg);
	unsetenv("TREATY_RELAYX");
	unsetenv("NATS_USER");
	env_clear();
}

/* The warnings config_reload_prepare gave, space-separated. */
static char	 kept[256];

static void
kept_warn(const char *var)
{
	size_t	 n = strlen(kept);

	snprintf(kept + n, sizeof(kept) - n, "%s%s", n ? " " : "", var);
}

/*
 * A reload: restart-only settings keep their running values (one warning
 * each), the others take the new ones; push and pull never swap under one
 * name; subscriber copies and comparison.
 */
static void
reload_prepare(void)
{
	struct config		 run, next;
	struct config_error	 err;
	struct subscriber	*copy;

	env_clear();
	setenv("TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"h\",\"url\":"
	    "\"http://localhost/x\",\"secrets\":[\"" SECRET "\",\"" SECRET
	    "x\"],\"filter\":\"evt.>\"}]", 1);
	T_EQ_INT(load(&run, &err, NULL), CONFIG_RUN);
	setenv("NATS_URL", "nats://10.0.0.1:4222,nats://10.0.0.2:4222", 1);
	setenv("PORT", "9000", 1);
	setenv("TREATY_RELAY_LEASE_SECONDS", "60", 1);
	setenv("TREATY_RELAY_RETRY_BASE_MS", "123", 1);
	setenv("TREATY_RELAY_WORK_MAX_AGE_HOURS", "24", 1);
	setenv("TREATY_RELAY_MAX_REPLAYS", "3", 1);
	T_EQ_INT(load(&next, &err, NULL), CONFIG_RUN);
	kept[0] = '\0';
	T_EQ_INT(config_reload_prepare(&next, &run, kept_warn, &err), 0);
	T_EQ_STR(kept, "NATS_URL PORT TREATY_RELAY_LEASE_SECONDS");
	T_EQ_STR(next.nats_url, run.nats_url);
	T_EQ_INT(next.nnats_servers, 1);
	T_EQ_STR(next.nats_servers[0], run.nats_servers[0]);
	T_EQ_INT(next.port, 8080);
	T_EQ_INT(next.lease_seconds, run.lease_seconds);
	T_EQ_INT(next.retry_base_ms, 123);
	T_EQ_INT(next.work_max_age_hours, 24);
	T_EQ_INT(next.max_replays, 3);
	T_ASSERT(config_subscriber_equal(&next.subscribers[0],
	    &run.subscribers[0]));
	copy = config_subscriber_dup(&run.subscribers[0]);
	T_ASSERT(config_subscriber_equal(copy, &run.subscribers[0]));
	T_ASSERT(copy->secrets[1] != run.subscribers[0].secrets[1]);
	copy->max_deliver++;
	T_ASSERT(!config_subscriber_equal(copy, &run.subscribers[0]));
	config_subscriber_free(copy);
	config_free(&next);

	/* The same name as a pull subscriber: refused, nothing warned. */
	env_clear();
	setenv("TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"h\",\"tokenSha256\":"
	    "\"" HASH_A "\",\"secret\":\"" SECRET "\",\"filter\":"
	    "\"evt.>\"}]", 1);
	T_EQ_INT(load(&next, &err, NULL), CONFIG_RUN);
	kept[0] = '\0';
	T_EQ_INT(config_reload_prepare(&next, &run, kept_warn, &err), -1);
	T_EQ_STR(err.var, "TREATY_RELAY_SUBSCRIBERS");
	T_EQ_STR(err.field, "[0]");
	T_EQ_STR(kept, "");
	config_free(&next);
	config_free(&run);
	env_clear();
}

/* Each producer a reload adds, changes or removes, in config.h's order. */
static char	 noted[256];
static void
note_producer(const char *name, const char *what)
{
	size_t	 n = strlen(noted);

	snprintf(noted + n, sizeof(noted) - n, "%s%s %s", n > 0 ? ", " : "",
	    name, what);
}

/*
 * A reload's producer counts (the "configuration reloaded" line): by
 * name; a new token, subject, rate or burst is a change, the order of
 * the list is not.
 */
static void
producer_changes(void)
{
	static const struct {
		const char	*next, *noted;
		int		 added, changed, removed;
	} cases[] = {
		{ "[" P_OK("a", HASH_A) "," P_OK("b", HASH_B) "]", "", 0, 0, 0 },
		{ "[" P_OK("b", HASH_B) "," P_OK("a", HASH_A) "]", "", 0, 0, 0 },
		{ "[" P_OK("a", HASH_A) "]", "b removed", 0, 0, 1 },
		{ "[" P_OK("a", HASH_B) "," P_OK("b", HASH_A) "]",
		  "a changed, b changed", 0, 2, 0 },
		{ "[{\"name\":\"a\",\"tokenSha256\":[\"" HASH_A "\",\"" HASH_B
		  "\"],\"subjects\":[\"evt.>\"]}]", "a changed, b removed", 0, 1,
		  1 },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.x.>\"]}," P_OK("b", HASH_B) "]",
		  "a changed", 0, 1, 0 },
		{ "[{\"name\":\"a\",\"tokenSha256\":\"" HASH_A "\","
		  "\"subjects\":[\"evt.>\"],\"rate\":5}," P_OK("b", HASH_B) "]",
		  "a changed", 0, 1, 0 },
		{ "[" P_OK("c", HASH_B) "," P_OK("a", HASH_A) "]",
		  "c added, b removed", 1, 0, 1 },
	};
	struct config		 run, next;
	struct config_error	 err;
	struct sub_changes	 ch;
	size_t			 i;

	env_clear();
	setenv("TREATY_RELAY_PRODUCERS", "[" P_OK("a", HASH_A) ","
	    P_OK("b", HASH_B) "]", 1);
	T_EQ_INT(load(&run, &err, NULL), CONFIG_RUN);
	for (i = 0; i < T_NCASES(cases); i++) {
		setenv("TREATY_RELAY_PRODUCERS", cases[i].next, 1);
		if (!T_EQ_INT(load(&next, &err, NULL), CONFIG_RUN)) {
			t_fail(__FILE__, __LINE__, "  case %zu: %s", i, err.detail);
			config_free(&next);
			continue;
		}
		memset(&ch, 0, sizeof(ch));
		noted[0] = '\0';
		config_producer_changes(&next, &run, &ch, note_producer);
		T_EQ_STR(noted, cases[i].noted);
		T_EQ_INT(ch.added, cases[i].added);
		T_EQ_INT(ch.changed, cases[i].changed);
		T_EQ_INT(ch.removed, cases[i].removed);
		config_free(&next);
	}
	config_free(&run);
	env_clear();
}

/*
 * A JSON setting that does not parse says where (line and column of the
 * value, from yajl's parser) and yajl's reason, under the variable's or
 * the flag's name, never quoting the text (it may hold a secret).
 */
static void
json_not_parsed(void)
{
	static const struct {
		const char	*var, *flag, *json, *detail;
	} bad[] = {
		{ "TREATY_RELAY_PRODUCERS", "--producers",
		  "[{\"name\":\"a\",\"tokenSha256\":\"x\",}]",
		  "not valid JSON near line 1, column 32: invalid object key (must "
		  "be a string)" },
		{ "TREATY_RELAY_SUBSCRIBERS", "--subscribers",
		  "[{\"name\":\"s\",\n \"secret\":\"" SECRET "\"\n x}]",
		  "not valid JSON near line 3, column 2: invalid char in json text" },
		{ "TREATY_RELAY_SUBSCRIBERS", "--subscribers",
		  "[{\"name\":\"s\",\"secret\":\"" SECRET "\"",
		  "not valid JSON near line 1, column 41: premature EOF" },
	};
	struct config		 cfg;
	struct config_error	 err;
	size_t			 i;

	for (i = 0; i < T_NCASES(bad); i++) {
		env_clear();
		setenv(bad[i].var, bad[i].json, 1);
		if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
			T_EQ_STR(err.var, bad[i].var);
			T_EQ_STR(err.field, "");
			T_EQ_STR(err.detail, bad[i].detail);
			T_ASSERT(strstr(err.detail, SECRET) == NULL);
		}
		config_free(&cfg);
		env_clear();
		if (T_EQ_INT(load(&cfg, &err, bad[i].flag, bad[i].json, NULL),
		    CONFIG_BAD)) {
			T_EQ_STR(err.var, bad[i].flag);
			T_EQ_STR(err.detail, bad[i].detail);
		}
		config_free(&cfg);
	}
	env_clear();
}

/* --reuseport and --control-listen (SPEC 12). */
static void
instances(void)
{
	struct config		 cfg;
	struct config_error	 err;
	char			 addr[64];
	int			 port;

	env_clear();
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT(cfg.reuseport, 0);
	T_ASSERT(cfg.control_listen == NULL);
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "--reuseport", "--control-listen",
	    "127.0.0.1:9101", NULL), CONFIG_RUN);
	T_EQ_INT(cfg.reuseport, 1);
	T_EQ_INT(config_control_addr(cfg.control_listen, addr, &port), 0);
	T_EQ_STR(addr, "127.0.0.1");
	T_EQ_INT(port, 9101);
	config_free(&cfg);
	setenv("TREATY_RELAY_REUSEPORT", "1", 1);
	setenv("TREATY_RELAY_CONTROL_LISTEN", "[::1]:9102", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT(cfg.reuseport, 1);
	T_EQ_INT(config_control_addr(cfg.control_listen, addr, &port), 0);
	T_EQ_STR(addr, "::1");
	T_EQ_INT(port, 9102);
	config_free(&cfg);
	/* Not ADDR:PORT: a name, no port, port 0, out of range. */
	setenv("TREATY_RELAY_CONTROL_LISTEN", "localhost:9101", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_CONTROL_LISTEN");
	config_free(&cfg);
	setenv("TREATY_RELAY_CONTROL_LISTEN", "127.0.0.1", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	config_free(&cfg);
	setenv("TREATY_RELAY_CONTROL_LISTEN", "127.0.0.1:0", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	config_free(&cfg);
	setenv("TREATY_RELAY_CONTROL_LISTEN", "127.0.0.1:65536", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	config_free(&cfg);
	setenv("TREATY_RELAY_REUSEPORT", "yes", 1);
	unsetenv("TREATY_RELAY_CONTROL_LISTEN");
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_REUSEPORT");
	config_free(&cfg);
	env_clear();
}

/*
 * TREATY_RELAY_ADMIN_TOKEN_SHA256 (SPEC 15): one hash or a list, spaces
 * around commas, any case; a bad, repeated or shared hash is exit 78
 * naming the variable (and the place in the list); empty means none.
 */
static void
admin_tokens(void)
{
	struct config		 cfg;
	struct config_error	 err;

	env_clear();
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT((int)cfg.admin.n, 0);
	config_free(&cfg);
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", HASH_A_UPPER " , " HASH_B, 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT((int)cfg.admin.n, 2);
	T_ASSERT(config_token_match(&cfg.admin, HASH_A));
	T_ASSERT(config_token_match(&cfg.admin, HASH_B));
	config_free(&cfg);
	T_EQ_INT(load(&cfg, &err, "--admin-token-sha256", HASH_B, NULL),
	    CONFIG_RUN);
	T_EQ_INT((int)cfg.admin.n, 1);
	T_ASSERT(!config_token_match(&cfg.admin, HASH_A));
	config_free(&cfg);
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", "", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_EQ_INT((int)cfg.admin.n, 0);
	config_free(&cfg);
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", HASH_A ",abc", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_ADMIN_TOKEN_SHA256");
	T_EQ_STR(err.field, "[1]");
	config_free(&cfg);
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", HASH_A "," HASH_A_UPPER, 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_ASSERT(strstr(err.detail, "twice") != NULL);
	config_free(&cfg);
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", HASH_A ",,", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	config_free(&cfg);
	/* One token, one role: not a producer's. */
	setenv("TREATY_RELAY_ADMIN_TOKEN_SHA256", HASH_B, 1);
	setenv("TREATY_RELAY_PRODUCERS", "[{\"name\":\"p\",\"tokenSha256\":"
	    "\"" HASH_B "\",\"subjects\":[\"evt.>\"]}]", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_ADMIN_TOKEN_SHA256");
	T_ASSERT(strstr(err.detail, "producer p") != NULL);
	config_free(&cfg);
	/* Nor an inbox's. */
	unsetenv("TREATY_RELAY_PRODUCERS");
	setenv("TREATY_RELAY_SUBSCRIBERS", "[{\"name\":\"box\",\"tokenSha256\""
	    ":\"" HASH_B "\",\"secret\":\"" SECRET "\",\"filter\":\"evt.>\"}]", 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD);
	T_EQ_STR(err.var, "TREATY_RELAY_ADMIN_TOKEN_SHA256");
	T_ASSERT(strstr(err.detail, "subscriber box") != NULL);
	config_free(&cfg);
	env_clear();
}

/* Keys for TREATY_RELAY_SECRET_KEY_FILE, and their ids. */
#define SEAL_KEY_A	HASH_A
#define SEAL_KID_A	"4884fdaa"
#define SEAL_KEY_B	HASH_B
#define SEAL_KID_B	"8d2e4d63"

/* The secret key file: read at each load, its errors 78 naming the line. */
static void
secret_key_file(void)
{
	struct config		 cfg, next;
	struct config_error	 err;
	char			 good[64], bad[64], conf[128], other[64];

	env_clear();
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	T_ASSERT(cfg.secret_key_file == NULL);
	T_ASSERT(cfg.secret_keys == NULL);
	config_free(&cfg);
	snprintf(good, sizeof(good), "%s", temp_file("# newest first\n"
	    SEAL_KEY_B "\n" SEAL_KEY_A "\n"));
	if (LOAD_ENV_OK(&cfg, "TREATY_RELAY_SECRET_KEY_FILE", good)) {
		T_EQ_STR(cfg.secret_key_file, good);
		T_EQ_INT(seal_keys_count(cfg.secret_keys), 2);
		T_EQ_STR(seal_keys_kid(cfg.secret_keys, 0), SEAL_KID_B);
		T_EQ_STR(seal_keys_kid(cfg.secret_keys, 1), SEAL_KID_A);
	}
	config_free(&cfg);
	/* A bad line: its number, and never its text. */
	snprintf(bad, sizeof(bad), "%s", temp_file(SEAL_KEY_A "\n"
	    "0123456789abcdef0123456789abcdef\n"));
	EXPECT_BAD_ENV("TREATY_RELAY_SECRET_KEY_FILE", bad, "line 2");
	env_clear();
	setenv("TREATY_RELAY_SECRET_KEY_FILE", bad, 1);
	if (T_EQ_INT(load(&cfg, &err, NULL), CONFIG_BAD)) {
		T_ASSERT(strstr(err.detail, bad) != NULL);
		T_ASSERT(strstr(err.detail, "0123456789abcdef") == NULL);
	}
	config_free(&cfg);
	/* --check-config reads it too. */
	T_EQ_INT(load(&cfg, &err, "--check-config", NULL), CONFIG_BAD);
	config_free(&cfg);
	EXPECT_BAD_FLAG("--secret-key-file", bad, "line 2");
	/* Missing, empty, or no key in it: the whole file. */
	EXPECT_BAD_ENV("TREATY_RELAY_SECRET_KEY_FILE", "/nonexistent/keys", "");
	EXPECT_BAD_ENV("TREATY_RELAY_SECRET_KEY_FILE", "", "");
	snprintf(other, sizeof(other), "%s", temp_file("# none yet\n"));
	EXPECT_BAD_ENV("TREATY_RELAY_SECRET_KEY_FILE", other, "");
	unlink(other);
	/* From the configuration file, as any setting. */
	snprintf(conf, sizeof(conf), "%s",
	    temp_file("TREATY_RELAY_SECRET_KEY_FILE="));
	{
		FILE	*f = fopen(conf, "a");

		if (T_ASSERT(f != NULL)) {
			fprintf(f, "%s\n", good);
			fclose(f);
		}
	}
	env_clear();
	T_EQ_INT(load(&cfg, &err, "--config", conf, NULL), CONFIG_RUN);
	T_EQ_INT(seal_keys_count(cfg.secret_keys), 2);
	config_free(&cfg);
	unlink(conf);
	/*
	 * A reload takes the new file's keys (rotation); a reload without
	 * the variable has none.
	 */
	snprintf(other, sizeof(other), "%s", temp_file(SEAL_KEY_A "\n"));
	env_clear();
	setenv("TREATY_RELAY_SECRET_KEY_FILE", good, 1);
	T_EQ_INT(load(&cfg, &err, NULL), CONFIG_RUN);
	setenv("TREATY_RELAY_SECRET_KEY_FILE", other, 1);
	kept[0] = '\0';
	if (T_EQ_INT(load(&next, &err, NULL), CONFIG_RUN) &&
	    T_EQ_INT(config_reload_prepare(&next, &cfg, kept_warn, &err), 0)) {
		T_EQ_STR(kept, "");
		T_EQ_INT(seal_keys_count(next.secret_keys), 1);
		T_EQ_STR(seal_keys_kid(next.secret_keys, 0), SEAL_KID_A);
	}
	config_free(&next);
	unsetenv("TREATY_RELAY_SECRET_KEY_FILE");
	if (T_EQ_INT(load(&next, &err, NULL), CONFIG_RUN) &&
	    T_EQ_INT(config_reload_prepare(&next, &cfg, kept_warn, &err), 0))
		T_ASSERT(next.secret_keys == NULL);
	config_free(&next);
	config_free(&cfg);
	unlink(other);
	unlink(bad);
	unlink(good);
	env_clear();
}

static const struct t_case cases[] = {
	{ "TREATY_RELAY_SECRET_KEY_FILE", secret_key_file },
	{ "--reuseport and --control-listen", instances },
	{ "admin tokens", admin_tokens },
	{ "reload: restart-only settings kept, kinds fixed", reload_prepare },
	{ "configuration file syntax", file_syntax },
	{ "configuration file precedence and errors", file_precedence },
	{ "unknown variables in the file or the environment", file_unknown },
	{ "delivery settings: secrets, CA file, DNS server, local hosts",
	  delivery_settings },
	{ "defaults of DESIGN.md", defaults },
	{ "environment values", env_values },
	{ "flags override the environment", flags_override_env },
	{ "numeric ranges, garbage and empty values", numeric_ranges },
	{ "progress below the ack wait", progress_below_ack_wait },
	{ "duplicate window within the max ages",
	  duplicate_window_within_ages },
	{ "TREATY_RELAY_VERBOSE values", verbose_values },
	{ "valid producers, hashes stored lowercase", producers_ok },
	{ "bad producers name var and field", producers_bad },
	{ "config_find_producer", find_producer },
	{ "valid push and pull subscribers, defaults", subscribers_ok },
	{ "bad subscribers name var and field", subscribers_bad },
	{ "plain http to private networks when allowed", private_urls },
	{ "deliverFrom: all, new or a time", deliver_from },
	{ "a key given twice in a JSON setting", duplicate_keys },
	{ "a JSON setting that does not parse says where", json_not_parsed },
	{ "a reload's producer counts", producer_changes },
	{ "pull tokens are never a producer's or another inbox's",
	  pull_token_roles },
	{ "tokenSha256 lists for rotation", token_lists },
	{ "NATS_URL lists", nats_url },
	{ "TREATY_RELAY_LISTEN numeric only", listen_addr },
	{ "check-config, help, version, usage errors", actions },
	{ "--help lists every variable and flag", usage_text },
};

int
main(void)
{
	int	 failed;

	failed = t_run("config", cases, T_NCASES(cases));
	env_clear();
	argv_pool_free();
	return (failed ? 1 : 0);
}
