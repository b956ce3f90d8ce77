/*
 * config.c: flags, environment variables and the configuration file ->
 * struct config.  Main thread, outside the loop's callbacks; a struct
 * config is never changed once loaded.
 *
 * The producer and subscriber lists are read in config-lists.c.
 *
 * Every setting is a row of opts[] below: its flag, its variable, its
 * default and its range, so --help, parsing and the error messages cannot
 * drift apart.  Precedence (SPEC 11): the flag, then the environment, then
 * the file (--config / TREATY_RELAY_CONFIG, systemd's EnvironmentFile
 * syntax), then the default.  A TREATY_RELAY_* variable the relay does not
 * know, in the environment or the file, is an error: a misspelt setting
 * must not pass silently.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/http.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "api.h"
#include "config.h"
#include "tls.h"
#include "config-int.h"
#include "log.h"
#include "opt.h"
#include "outbound.h"
#include "resolve.h"
#include "seal.h"
#include "util.h"

enum opt_kind {
	OPT_INT,
	OPT_STR,
	OPT_JSON,
	OPT_HASHES,		/* SHA-256 hex, comma-separated */
	OPT_FLAG
};

struct opt {
	const char	*flag;		/* long option, without "--" */
	const char	*var;		/* environment variable */
	enum opt_kind	 kind;
	size_t		 off;		/* offset in struct config (not JSON) */
	const char	*def;		/* default, as text, or NULL */
	long		 min, max;
	const char	*help;
};

#define OFF(f)	offsetof(struct config, f)

enum {
	O_NATS, O_PORT, O_LISTEN, O_PRODUCERS, O_SUBSCRIBERS, O_WORK_AGE,
	O_AUDIT_AGE, O_DUPWIN, O_REPLICAS, O_PUBTIMEOUT, O_MAXPENDING,
	O_GRACE, O_HTTPTIMEOUT, O_ALLOW_PRIVATE, O_CA_FILE, O_DELIVERY_TIMEOUT,
	O_DELIVERY_IDLE, O_DNS_TIMEOUT, O_DNS_SERVER, O_ACK_WAIT, O_RETRY_BASE,
	O_RETRY_MAX, O_PROGRESS, O_LEASE, O_VERBOSE, O_REUSEPORT,
	O_CONTROL_LISTEN, O_MAX_CONNECTIONS, O_REQUEST_TIMEOUT, O_TLS_CERT,
	O_TLS_KEY, O_ADMIN_TOKENS, O_MAX_REPLAYS, O_SECRET_KEY_FILE,
	O_ATTEMPTS, NOPTS
};

static const struct opt opts[NOPTS] = {
	[O_NATS] = { "nats-url", "NATS_URL", OPT_STR, OFF(nats_url),
	  "nats://127.0.0.1:4222", 0, 0,
	  "JetStream server URLs, comma-separated" },
	[O_PORT] = { "port", "PORT", OPT_INT, OFF(port), "8080", 1, 65535,
	  "HTTP listen port" },
	[O_LISTEN] = { "listen", "TREATY_RELAY_LISTEN", OPT_STR, OFF(listen),
	  "0.0.0.0", 0, 0, "HTTP listen address (numeric IPv4 or IPv6)" },
	[O_PRODUCERS] = { "producers", "TREATY_RELAY_PRODUCERS", OPT_JSON, 0,
	  NULL, 0, 0, "JSON list of {name, tokenSha256, subjects}" },
	[O_SUBSCRIBERS] = { "subscribers", "TREATY_RELAY_SUBSCRIBERS",
	  OPT_JSON, 0, NULL, 0, 0, "JSON list of push and pull subscribers" },
	[O_WORK_AGE] = { "work-max-age-hours",
	  "TREATY_RELAY_WORK_MAX_AGE_HOURS", OPT_INT, OFF(work_max_age_hours),
	  "168", 1, 87600, "WORK stream retention, hours" },
	[O_AUDIT_AGE] = { "audit-max-age-days",
	  "TREATY_RELAY_AUDIT_MAX_AGE_DAYS", OPT_INT, OFF(audit_max_age_days),
	  "365", 1, 36500, "AUDIT stream retention, days" },
	[O_DUPWIN] = { "duplicate-window-minutes",
	  "TREATY_RELAY_DUPLICATE_WINDOW_MINUTES", OPT_INT,
	  OFF(duplicate_window_minutes), "60", 1, 10080,
	  "JetStream duplicate window, minutes" },
	[O_REPLICAS] = { "replicas", "TREATY_RELAY_REPLICAS", OPT_INT,
	  OFF(replicas), "1", 1, 5, "stream replicas" },
	[O_PUBTIMEOUT] = { "publish-timeout-ms",
	  "TREATY_RELAY_PUBLISH_TIMEOUT_MS", OPT_INT, OFF(publish_timeout_ms),
	  "5000", 100, 60000,
	  "longest wait for JetStream's acknowledgement before 503" },
	[O_MAXPENDING] = { "max-pending", "TREATY_RELAY_MAX_PENDING", OPT_INT,
	  OFF(max_pending), "4096", 1, 65536,
	  "publishes in flight; beyond, 503 at once" },
	[O_GRACE] = { "grace-seconds", "TREATY_RELAY_GRACE_SECONDS", OPT_INT,
	  OFF(grace_seconds), "10", 0, 300, "shutdown grace period, seconds" },
	[O_HTTPTIMEOUT] = { "http-timeout-seconds",
	  "TREATY_RELAY_HTTP_TIMEOUT_SECONDS", OPT_INT,
	  OFF(http_timeout_seconds), "30", 1, 3600,
	  "idle timeout of a client connection, seconds" },
	[O_ALLOW_PRIVATE] = { "allow-private-networks",
	  "TREATY_RELAY_ALLOW_PRIVATE_NETWORKS", OPT_FLAG,
	  OFF(allow_private_networks), "0", 0, 1,
	  "deliver to private, loopback and link-local addresses too, and "
	  "plain http to private ones" },
	[O_CA_FILE] = { "ca-file", "TREATY_RELAY_CA_FILE", OPT_STR,
	  OFF(ca_file), NULL, 0, 0,
	  "PEM file of CAs for https deliveries (default: system store)" },
	[O_DELIVERY_TIMEOUT] = { "delivery-timeout-ms",
	  "TREATY_RELAY_DELIVERY_TIMEOUT_MS", OPT_INT,
	  OFF(delivery_timeout_ms), API_STR(OUTBOUND_DEADLINE_MS_DEFAULT), 100,
	  600000,
	  "overall deadline of one delivery, response body included" },
	[O_DELIVERY_IDLE] = { "delivery-idle-timeout-ms",
	  "TREATY_RELAY_DELIVERY_IDLE_TIMEOUT_MS", OPT_INT,
	  OFF(delivery_idle_ms), API_STR(OUTBOUND_IDLE_MS_DEFAULT), 100, 600000,
	  "idle timeout of a delivery connection" },
	[O_DNS_TIMEOUT] = { "dns-timeout-ms", "TREATY_RELAY_DNS_TIMEOUT_MS",
	  OPT_INT, OFF(dns_timeout_ms), API_STR(RESOLVE_TIMEOUT_MS_DEFAULT), 100,
	  60000, "bound on one DNS lookup" },
	[O_DNS_SERVER] = { "dns-server", "TREATY_RELAY_DNS_SERVER", OPT_STR,
	  OFF(dns_server), NULL, 0, 0,
	  "ip[:port] of the DNS server (default: /etc/resolv.conf)" },
	[O_ACK_WAIT] = { "ack-wait-seconds", "TREATY_RELAY_ACK_WAIT_SECONDS",
	  OPT_INT, OFF(ack_wait_seconds), "30", 1, 3600,
	  "JetStream ack wait of push consumers" },
	[O_RETRY_BASE] = { "retry-base-ms", "TREATY_RELAY_RETRY_BASE_MS",
	  OPT_INT, OFF(retry_base_ms), "1000", 10, 600000,
	  "first redelivery delay (doubles each time)" },
	[O_RETRY_MAX] = { "retry-max-ms", "TREATY_RELAY_RETRY_MAX_MS", OPT_INT,
	  OFF(retry_max_ms), "300000", 10, 3600000,
	  "longest redelivery delay, and the cap on Retry-After" },
	[O_PROGRESS] = { "progress-seconds", "TREATY_RELAY_PROGRESS_SECONDS",
	  OPT_INT, OFF(progress_seconds), "10", 1, 3600,
	  "send in-progress to JetStream this often during a delivery" },
	[O_ATTEMPTS] = { "attempts-per-subscriber",
	  "TREATY_RELAY_ATTEMPTS_PER_SUBSCRIBER", OPT_INT,
	  OFF(attempts_per_subscriber), "1000", 0, 10000,
	  "delivery attempts kept per subscriber in ATTEMPTS (0: none)" },
	[O_LEASE] = { "lease-seconds", "TREATY_RELAY_LEASE_SECONDS",
	  OPT_INT, OFF(lease_seconds), API_STR(API_LEASE_DEFAULT_S), 1, 3600,
	  "lease of an event fetched from an inbox (pull consumers' ack wait)" },
	[O_VERBOSE] = { "verbose", "TREATY_RELAY_VERBOSE", OPT_FLAG,
	  OFF(verbose), "0", 0, 1, "write debug log lines" },
	[O_REUSEPORT] = { "reuseport", "TREATY_RELAY_REUSEPORT", OPT_FLAG,
	  OFF(reuseport), "0", 0, 1,
	  "share the port with other instances (SO_REUSEPORT)" },
	[O_CONTROL_LISTEN] = { "control-listen", "TREATY_RELAY_CONTROL_LISTEN",
	  OPT_STR, OFF(control_listen), NULL, 0, 0,
	  "ADDR:PORT of this instance's own /healthz and /metrics" },
	[O_MAX_CONNECTIONS] = { "max-connections",
	  "TREATY_RELAY_MAX_CONNECTIONS", OPT_INT, OFF(max_connections),
	  "10000", 1, 1000000,
	  "client connections at once; beyond, a new one is closed at once" },
	[O_REQUEST_TIMEOUT] = { "request-timeout-seconds",
	  "TREATY_RELAY_REQUEST_TIMEOUT_SECONDS", OPT_INT,
	  OFF(request_timeout_seconds), "10", 1, 3600,
	  "a request must arrive whole within this from its first byte" },
	[O_TLS_CERT] = { "tls-cert", "TREATY_RELAY_TLS_CERT", OPT_STR,
	  OFF(tls_cert), NULL, 0, 0,
	  "PEM certificate chain: the main listener speaks HTTPS only" },
	[O_TLS_KEY] = { "tls-key", "TREATY_RELAY_TLS_KEY", OPT_STR,
	  OFF(tls_key), NULL, 0, 0,
	  "PEM private key of --tls-cert" },
	/* After the producers and subscribers: it may share no token. */
	[O_ADMIN_TOKENS] = { "admin-token-sha256",
	  "TREATY_RELAY_ADMIN_TOKEN_SHA256", OPT_HASHES, 0, NULL, 0, 0,
	  "SHA-256s of the admin tokens (/v1/admin/), comma-separated" },
	[O_MAX_REPLAYS] = { "max-replays", "TREATY_RELAY_MAX_REPLAYS", OPT_INT,
	  OFF(max_replays), "16", 1, 1000,
	  "replays running at once across all instances; beyond, 429" },
	[O_SECRET_KEY_FILE] = { "secret-key-file",
	  "TREATY_RELAY_SECRET_KEY_FILE", OPT_STR, OFF(secret_key_file), NULL,
	  0, 0, "keys sealing API subscribers' secrets: 64 hex digits a line, "
	  "newest first" },
};

/*
 * Settings only a restart changes (SPEC 11): the listener, the NATS
 * connection, the publish table (its size, and its deadlines, which the
 * sweep expects in the order of the publishes), the TLS context and pool
 * timeouts of deliveries, DNS, and the lease that pull consumers and the
 * lease memory were made with.  A reload keeps their running values.
 */
static const int restart_only[] = {
	O_NATS, O_PORT, O_LISTEN, O_MAXPENDING, O_PUBTIMEOUT, O_CA_FILE,
	O_DELIVERY_TIMEOUT,
	O_DELIVERY_IDLE, O_DNS_TIMEOUT, O_DNS_SERVER, O_LEASE, O_REUSEPORT,
	O_CONTROL_LISTEN
};

/* Record a configuration error; always returns -1. */
int
config_err(struct config_error *err, const char *var, const char *field,
    const char *fmt, ...)
{
	va_list	 ap;

	snprintf(err->var, sizeof(err->var), "%s", var);
	snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return -1;
}

/* Print --help. */
void
config_usage(void *fp)
{
	FILE	*f = fp;
	size_t	 i;

	fprintf(f, "usage: treaty-relay [options]\n"
	    "\nHTTP relay between producers, subscribers and NATS JetStream.\n"
	    "Every option has an environment variable; the option wins over\n"
	    "it, and it over the configuration file.\n\n");
	for (i = 0; i < NOPTS; i++) {
		char	 lhs[64];

		snprintf(lhs, sizeof(lhs), "--%s%s", opts[i].flag,
		    opts[i].kind == OPT_FLAG ? "" :
		    opts[i].kind == OPT_INT ? " N" :
		    opts[i].kind == OPT_JSON ? " JSON" :
		    opts[i].kind == OPT_HASHES ? " HASH[,HASH]" : " VALUE");
		fprintf(f, "  %-32s %s\n  %-32s   %s%s%s\n", lhs, opts[i].help,
		    "", opts[i].var, opts[i].def ? ", default " : "",
		    opts[i].def ? opts[i].def : "");
	}
	fprintf(f, "  %-32s %s\n  %-32s   %s\n", "--config FILE",
	    "read settings from FILE (VAR=value lines); flags and the "
	    "environment win", "", CONFIG_FILE_VAR);
	fprintf(f, "  %-32s %s\n", "-v", "same as --verbose");
	fprintf(f, "  %-32s %s\n", "--check-config",
	    "validate the configuration, exit 0 or 78");
	fprintf(f, "  %-32s %s\n", "--help, --version", "");
	fprintf(f, "\nSee treaty-relay(8).\n");
}

/* Parse a decimal integer in [min, max] or fail. */
static int
parse_int(const char *s, long min, long max, int *out)
{
	char	*end;
	long	 v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/*
 * One NATS server URL: nats:// or tls://, a host, an optional port 1-65535
 * and optional user information, nothing after the authority.  Returns the
 * scheme's TLS-ness (0 or 1) or -1 with why set.
 */
static int
nats_url_check(const char *url, const char **why)
{
	struct evhttp_uri	*u;
	const char		*scheme, *host, *path;
	int			 tls = -1;

	if ((u = evhttp_uri_parse_with_flags(url, 0)) == NULL) {
		*why = "not a URL (nats://host:port)";
		return -1;
	}
	scheme = evhttp_uri_get_scheme(u);
	host = evhttp_uri_get_host(u);
	path = evhttp_uri_get_path(u);
	if (scheme == NULL || (strcasecmp(scheme, "nats") != 0 &&
	    strcasecmp(scheme, "tls") != 0))
		*why = "each URL must start with nats:// or tls://";
	else if (host == NULL || host[0] == '\0')
		*why = "a URL has no host";
	else if (evhttp_uri_get_port(u) == 0 || evhttp_uri_get_port(u) > 65535)
		*why = "a URL's port must be 1-65535";
	else if ((path != NULL && path[0] != '\0' && strcmp(path, "/") != 0) ||
	    evhttp_uri_get_query(u) != NULL || evhttp_uri_get_fragment(u) != NULL)
		*why = "a URL must end after host:port";
	else
		tls = strcasecmp(scheme, "tls") == 0;
	evhttp_uri_free(u);
	return tls;
}

/* Split NATS_URL on commas into cfg->nats_servers and check each. */
static int
parse_nats_url(struct config *cfg, const char *var, struct config_error *err)
{
	char		*copy, *tok, *save = NULL, field[32];
	const char	*why = NULL, *p;
	size_t		 n = 1;
	int		 tls, ntls = 0;

	for (p = cfg->nats_url; *p != '\0'; p++)
		if (*p == ',')
			n++;
	cfg->nats_servers = xcalloc(n, sizeof(char *));
	copy = xstrdup(cfg->nats_url);
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		size_t	 len;

		while (isspace((unsigned char)*tok))
			tok++;
		for (len = strlen(tok); len > 0 &&
		    isspace((unsigned char)tok[len - 1]); len--)
			tok[len - 1] = '\0';
		if (*tok == '\0')
			continue;
		snprintf(field, sizeof(field), "[%d]", cfg->nnats_servers);
		if ((tls = nats_url_check(tok, &why)) == -1) {
			free(copy);
			return config_err(err, var, field, "%s", why);
		}
		ntls += tls;
		cfg->nats_servers[cfg->nnats_servers++] = xstrdup(tok);
	}
	free(copy);
	if (cfg->nnats_servers == 0)
		return config_err(err, var, "", "no server URL");
	/* nats.c has one TLS setting per connection, not one per URL. */
	if (ntls != 0 && ntls != cfg->nnats_servers)
		return config_err(err, var, "", "use tls:// for every URL or for "
		    "none");
	cfg->nats_tls = ntls != 0;
	return 0;
}

/*
 * TLS for the main listener: both files or neither; with both, the server
 * context is made now (at start and at each reload, so a renewed
 * certificate is read again), and a missing, unreadable or mismatched
 * pair names the file at fault.
 */
static int
config_tls(struct config *cfg, char names[2][64], struct config_error *err)
{
	enum tls_blame	 blame;
	char		 detail[256];

	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL))
		return cfg->tls_cert == NULL ?
		    config_err(err, "TREATY_RELAY_TLS_CERT", "", "must be set "
		    "with %s (both or neither)", names[1]) :
		    config_err(err, "TREATY_RELAY_TLS_KEY", "", "must be set "
		    "with %s (both or neither)", names[0]);
	if (cfg->tls_cert == NULL)
		return 0;
	if ((cfg->tls_ctx = tls_server_new(cfg->tls_cert, cfg->tls_key,
	    &blame, detail, sizeof(detail))) == NULL)
		return config_err(err, names[blame == TLS_BLAME_CERT ? 0 : 1],
		    "", "%s", detail);
	return 0;
}

/*
 * The keys that seal API subscribers' secrets (SPEC 16), read at every
 * load, so that a reload rotates them (a file that fails keeps the
 * running keys, as any refused reload does).  A file others may read is
 * used, with a warning: refusing it would stop every instance at once for
 * a mode a package or an editor may have set.
 */
static int
config_secret_keys(struct config *cfg, const char *path, const char *name,
    struct config_error *err)
{
	char	 why[192], field[32] = "";
	int	 loose, line;

	if ((cfg->secret_keys = seal_keys_load(path, &loose, &line, why,
	    sizeof(why))) == NULL) {
		if (line > 0)
			snprintf(field, sizeof(field), "line %d", line);
		return config_err(err, name, field, "%s: %s", path, why);
	}
	if (loose)
		log_warnx("secret key file readable by others; make it mode "
		    "600, or 640 with the relay's group", "var=%s file=%s",
		    name, log_q(path));
	return 0;
}

/* 1 when OpenSSL can load path as trusted CA certificates. */
static int
ca_file_usable(const char *path)
{
	SSL_CTX	*ctx;
	int	 ok;

	if (access(path, R_OK) == -1 ||
	    (ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return 0;
	ok = SSL_CTX_load_verify_locations(ctx, path, NULL) == 1;
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

/* 1 when s is a variable name: a letter or '_', then letters, digits, '_'. */
static int
var_name_valid(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || isdigit((unsigned char)s[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* Parse a configuration file's text; see config.h. */
int
config_file_parse(const char *text, size_t len, config_file_cb fn, void *arg,
    int *errline, const char **why)
{
	const char	*p = text, *end = text + len, *eq, *v, *ve;
	char		*name, *value, *o;
	int		 line = 0, rc;

	*why = NULL;
	/* Leading and trailing blanks (and a CR) do not count. */
	while (text_line(&p, end, &v, &ve)) {
		*errline = ++line;
		if (v == ve || *v == '#' || *v == ';')
			continue;
		if (memchr(v, '\0', (size_t)(ve - v)) != NULL) {
			*why = "a NUL byte";
			return -1;
		}
		if ((eq = memchr(v, '=', (size_t)(ve - v))) == NULL ||
		    !var_name_valid(v, (size_t)(eq - v))) {
			*why = "not VAR=value (no export, no spaces around =)";
			return -1;
		}
		name = xstrndup(v, (size_t)(eq - v));
		v = eq + 1;
		if (v < ve && (*v == '\'' || *v == '"')) {
			/* Quoted: the quotes go; in "..." a \ escapes. */
			char	 q = *v++;

			value = o = xmalloc((size_t)(ve - v) + 1);
			for (; v < ve && *v != q; v++) {
				if (q == '"' && *v == '\\' && v + 1 < ve)
					v++;
				*o++ = *v;
			}
			*o = '\0';
			if (v == ve || v + 1 != ve) {
				free(name);
				free(value);
				*why = v == ve ? "a quote is not closed (a value "
				    "is one line)" : "text after the closing quote";
				return -1;
			}
		} else
			value = xstrndup(v, (size_t)(ve - v));
		rc = fn(arg, name, value, line);
		free(name);
		free(value);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The values a configuration file gave, and where. */
struct file_vars {
	const char	*path;
	char		*value[NOPTS];
	int		 line[NOPTS];
	struct config_error *err;
};

/* One assignment of the file: a setting of opts[], or an error. */
static int
file_var(void *arg, const char *name, const char *value, int line)
{
	struct file_vars	*fv = arg;
	int			 i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].var, name) == 0) {
			free(fv->value[i]);	/* a later line wins */
			fv->value[i] = xstrdup(value);
			fv->line[i] = line;
			return 0;
		}
	config_err(fv->err, name, "", "unknown variable (%s line %d)", fv->path,
	    line);
	return 1;
}

/* Read the configuration file into fv; -1 with err set when it cannot. */
static int
file_read(struct file_vars *fv, const char *blame, struct config_error *err)
{
	FILE		*f;
	char		*text;
	size_t		 len;
	int		 line = 0, rc, saved;
	const char	*why = NULL;

	fv->err = err;
	if ((f = fopen(fv->path, "r")) == NULL) {
		saved = errno;
		return config_err(err, blame, "", "cannot read %s: %s", fv->path,
		    strerror(saved));
	}
	text = xmalloc(CONFIG_FILE_MAX + 1);
	len = fread(text, 1, CONFIG_FILE_MAX + 1, f);
	saved = ferror(f) ? errno : 0;
	fclose(f);
	if (saved != 0 || len > CONFIG_FILE_MAX) {
		free(text);
		return config_err(err, blame, "", "cannot read %s: %s", fv->path,
		    saved != 0 ? strerror(saved) : "larger than "
		    API_STR(CONFIG_FILE_MAX_MIB) " MiB");
	}
	rc = config_file_parse(text, len, file_var, fv, &line, &why);
	free(text);
	if (rc == -1) {
		char	 field[32];

		snprintf(field, sizeof(field), "line %d", line);
		return config_err(err, blame, field, "%s: %s", fv->path, why);
	}
	return rc == 0 ? 0 : -1;
}

/* A TREATY_RELAY_* variable of the environment the relay does not know. */
static int
env_unknown(struct config_error *err)
{
	extern char	**environ;
	char		**e, name[128];
	size_t		  n;
	int		  i;

	for (e = environ; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "TREATY_RELAY_", 13) != 0)
			continue;
		n = strcspn(*e, "=");
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, *e, n);
		name[n] = '\0';
		if (strcmp(name, CONFIG_FILE_VAR) == 0)
			continue;
		for (i = 0; i < NOPTS; i++)
			if (strcmp(opts[i].var, name) == 0)
				break;
		if (i == NOPTS)
			return config_err(err, name, "", "unknown variable (in the "
			    "environment)");
	}
	return 0;
}

/* Apply one option's text value; name is what to blame in an error. */
static int
apply(struct config *cfg, int i, const char *val, const char *name,
    struct config_error *err)
{
	const struct opt	*o = &opts[i];
	char			*base = (char *)cfg;

	switch (o->kind) {
	case OPT_INT:
		if (parse_int(val, o->min, o->max, (int *)(base + o->off)) == -1)
			return config_err(err, name, "", "must be an integer "
			    "%ld-%ld", o->min, o->max);
		return 0;
	case OPT_FLAG:
		if (strcmp(val, "1") == 0 || strcmp(val, "true") == 0)
			*(int *)(base + o->off) = 1;
		else if (strcmp(val, "0") == 0 || strcmp(val, "false") == 0 ||
		    val[0] == '\0')
			*(int *)(base + o->off) = 0;
		else
			return config_err(err, name, "", "must be 0 or 1");
		return 0;
	case OPT_STR:
		free(*(char **)(base + o->off));
		*(char **)(base + o->off) = xstrdup(val);
		return 0;
	case OPT_JSON:
		if (i == O_PRODUCERS)
			return config_parse_producers(cfg, val, name, err);
		return config_parse_subscribers(cfg, val, name, err);
	case OPT_HASHES:
		return config_parse_admin_tokens(cfg, val, name, err);
	}
	return -1;
}

/* Load defaults, then the environment, then the flags; validate. */
enum config_action
config_load(struct config *cfg, int argc, char **argv,
    struct config_error *err)
{
	struct option	 lopts[NOPTS + 5];
	const char	*given[NOPTS];	/* value from flag, or NULL */
	char		 tlsname[2][64] = { "TREATY_RELAY_TLS_CERT",
			    "TREATY_RELAY_TLS_KEY" };
	char		 progname[64] = "TREATY_RELAY_PROGRESS_SECONDS";
	char		 dupname[64] = "TREATY_RELAY_DUPLICATE_WINDOW_MINUTES";
	const char	*file = NULL, *file_blame = "--config";
	struct file_vars fv;
	enum config_action action = CONFIG_RUN;
	int		 i, k, c;

	memset(cfg, 0, sizeof(*cfg));
	memset(err, 0, sizeof(*err));
	memset(given, 0, sizeof(given));
	memset(&fv, 0, sizeof(fv));
	for (i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].flag;
		lopts[i].has_arg = opts[i].kind == OPT_FLAG ? no_argument :
		    required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = 1000 + i;
	}
	lopts[NOPTS] = (struct option){ "check-config", no_argument, NULL, 'C' };
	lopts[NOPTS + 1] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[NOPTS + 2] = (struct option){ "version", no_argument, NULL, 'V' };
	lopts[NOPTS + 3] = (struct option){ "config", required_argument, NULL,
	    'F' };
	lopts[NOPTS + 4] = (struct option){ NULL, 0, NULL, 0 };

	optind = 1;
	while ((c = opt_next(argc, argv, "vh", lopts, err->detail,
	    sizeof(err->detail))) != -1) {
		if (c >= 1000 && c < 1000 + NOPTS)
			given[c - 1000] = opts[c - 1000].kind == OPT_FLAG ? "1" :
			    optarg;
		else if (c == 'v')
			given[O_VERBOSE] = "1";
		else if (c == 'C')
			action = CONFIG_CHECK;
		else if (c == 'F')
			file = optarg;
		else if (c == 'h')
			return CONFIG_HELP;
		else if (c == 'V')
			return CONFIG_VERSION;
		else
			return CONFIG_USAGE_ERROR;	/* opt_next said why */
	}
	if (optind < argc) {
		snprintf(err->detail, sizeof(err->detail),
		    "unexpected argument %s", argv[optind]);
		return CONFIG_USAGE_ERROR;
	}

	if (env_unknown(err) == -1)
		return CONFIG_BAD;
	if (file == NULL && (file = getenv(CONFIG_FILE_VAR)) != NULL)
		file_blame = CONFIG_FILE_VAR;
	if (file != NULL) {
		fv.path = file;
		cfg->config_file = xstrdup(file);
		if (file_read(&fv, file_blame, err) == -1) {
			action = CONFIG_BAD;
			goto out;
		}
	}

	/*
	 * TREATY_RELAY_ALLOW_PRIVATE_NETWORKS first (k -1): the subscribers'
	 * URLs are checked against it (config-lists.c).
	 */
	for (k = -1; k < NOPTS; k++) {
		const char	*val, *name;
		char		 flagname[64];

		if (k == O_ALLOW_PRIVATE)
			continue;
		i = k < 0 ? O_ALLOW_PRIVATE : k;
		val = given[i];
		snprintf(flagname, sizeof(flagname), "--%s", opts[i].flag);
		name = val != NULL ? flagname : opts[i].var;
		if (val == NULL)
			val = getenv(opts[i].var);
		if (val == NULL)
			val = fv.value[i];
		if (val == NULL)
			val = opts[i].def;
		if (val == NULL)
			continue;
		if (apply(cfg, i, val, name, err) == -1 ||
		    (i == O_NATS && parse_nats_url(cfg, name, err) == -1)) {
			action = CONFIG_BAD;
			goto out;
		}
		if (i == O_TLS_CERT || i == O_TLS_KEY)
			snprintf(tlsname[i - O_TLS_CERT], sizeof(tlsname[0]),
			    "%s", name);
		if (i == O_PROGRESS || i == O_DUPWIN)
			snprintf(i == O_PROGRESS ? progname : dupname, 64,
			    "%s", name);
		if (i == O_CA_FILE && !ca_file_usable(val)) {
			config_err(err, name, "", "%s is not a readable PEM file "
			    "of CA certificates", val);
			action = CONFIG_BAD;
			goto out;
		}
		if (i == O_SECRET_KEY_FILE && config_secret_keys(cfg, val, name,
		    err) == -1) {
			action = CONFIG_BAD;
			goto out;
		}
		if (i == O_DNS_SERVER) {
			struct sockaddr_storage	 ss;
			int			 sl = sizeof(ss);

			if (evutil_parse_sockaddr_port(val,
			    (struct sockaddr *)&ss, &sl) == -1) {
				config_err(err, name, "", "must be ip[:port]");
				action = CONFIG_BAD;
				goto out;
			}
		}
		if (i == O_CONTROL_LISTEN && config_control_addr(val, NULL,
		    NULL) == -1) {
			config_err(err, name, "", "must be ADDR:PORT, a numeric "
			    "address ([::1]:9101 for IPv6) and a port 1-65535");
			action = CONFIG_BAD;
			goto out;
		}
		if (i == O_LISTEN) {
			unsigned char	 a[16];

			if (evutil_inet_pton(AF_INET, val, a) != 1 &&
			    evutil_inet_pton(AF_INET6, val, a) != 1) {
				config_err(err, name, "", "must be a numeric IPv4 or "
				    "IPv6 address");
				action = CONFIG_BAD;
				goto out;
			}
		}
	}
	/*
	 * In-progress must reach JetStream before the ack wait runs out, or
	 * a slow delivery is handed to another instance meanwhile.
	 */
	if (cfg->progress_seconds >= cfg->ack_wait_seconds) {
		config_err(err, progname, "", "must be below the ack wait "
		    "(%d s)", cfg->ack_wait_seconds);
		action = CONFIG_BAD;
	/* JetStream refuses a stream whose window is longer than its age. */
	} else if (cfg->duplicate_window_minutes > cfg->work_max_age_hours *
	    60 || cfg->duplicate_window_minutes > cfg->audit_max_age_days *
	    1440) {
		config_err(err, dupname, "", "must not be longer than the WORK "
		    "and AUDIT max ages (%d min, %d min)",
		    cfg->work_max_age_hours * 60,
		    cfg->audit_max_age_days * 1440);
		action = CONFIG_BAD;
	} else if (config_tls(cfg, tlsname, err) == -1)
		action = CONFIG_BAD;
out:
	for (i = 0; i < NOPTS; i++)
		free(fv.value[i]);
	return action;
}

/* Free everything config_load allocated. */
void
config_free(struct config *cfg)
{
	size_t	 i, j;

	free(cfg->config_file);
	free(cfg->nats_url);
	for (i = 0; i < (size_t)cfg->nnats_servers; i++)
		free(cfg->nats_servers[i]);
	free(cfg->nats_servers);
	free(cfg->listen);
	free(cfg->ca_file);
	free(cfg->dns_server);
	free(cfg->control_listen);
	free(cfg->tls_cert);
	free(cfg->tls_key);
	SSL_CTX_free(cfg->tls_ctx);
	free(cfg->secret_key_file);
	seal_keys_free(cfg->secret_keys);
	for (i = 0; i < cfg->nproducers; i++) {
		for (j = 0; j < cfg->producers[i].nsubjects; j++)
			free(cfg->producers[i].subjects[j]);
		free(cfg->producers[i].subjects);
	}
	free(cfg->producers);
	for (i = 0; i < cfg->nsubscribers; i++)
		config_subscriber_clear(&cfg->subscribers[i]);
	free(cfg->subscribers);
	memset(cfg, 0, sizeof(*cfg));
}

/* 1 when producers a and b have the same settings. */
static int
producer_equal(const struct producer *a, const struct producer *b)
{
	size_t	 j;

	if (strcmp(a->name, b->name) != 0 || a->tokens.n != b->tokens.n ||
	    a->nsubjects != b->nsubjects || a->rate != b->rate ||
	    a->burst != b->burst)
		return 0;
	for (j = 0; j < a->tokens.n; j++)
		if (strcmp(a->tokens.hash[j], b->tokens.hash[j]) != 0)
			return 0;
	for (j = 0; j < a->nsubjects; j++)
		if (strcmp(a->subjects[j], b->subjects[j]) != 0)
			return 0;
	return 1;
}

/* The producer called name in cfg, or NULL. */
static const struct producer *
producer_named(const struct config *cfg, const char *name)
{
	size_t	 i;

	for (i = 0; i < cfg->nproducers; i++)
		if (strcmp(cfg->producers[i].name, name) == 0)
			return &cfg->producers[i];
	return NULL;
}

/* What a reload does to the producers; see config.h. */
void
config_producer_changes(const struct config *next, const struct config *run,
    struct sub_changes *ch, void (*note)(const char *name, const char *what))
{
	const struct producer	*p, *was;
	size_t			 i;

	for (i = 0; i < next->nproducers; i++) {
		p = &next->producers[i];
		if ((was = producer_named(run, p->name)) == NULL) {
			ch->added++;
			note(p->name, "added");
		} else if (!producer_equal(p, was)) {
			ch->changed++;
			note(p->name, "changed");
		}
	}
	for (i = 0; i < run->nproducers; i++)
		if (producer_named(next, run->producers[i].name) == NULL) {
			ch->removed++;
			note(run->producers[i].name, "removed");
		}
}

/*
 * A reload: next replaces run.  Each restart-only setting that differs
 * keeps its running value, and warn gets its variable.  A subscriber may
 * not change between push and pull (its JetStream consumer cannot): -1
 * with err naming it.  0 otherwise.
 */
int
config_reload_prepare(struct config *next, const struct config *run,
    void (*warn)(const char *var), struct config_error *err)
{
	const char	*base_run = (const char *)run;
	char		*base_next = (char *)next;
	size_t		 i, k;

	for (i = 0; i < next->nsubscribers; i++)
		for (k = 0; k < run->nsubscribers; k++)
			if (strcmp(next->subscribers[i].name,
			    run->subscribers[k].name) == 0 &&
			    next->subscribers[i].kind !=
			    run->subscribers[k].kind) {
				char	 field[32];

				snprintf(field, sizeof(field), "[%zu]", i);
				return config_err(err, opts[O_SUBSCRIBERS].var,
				    field, "%s cannot change between push and "
				    "pull while running; add it under a new name",
				    next->subscribers[i].name);
			}
	for (i = 0; i < sizeof(restart_only) / sizeof(restart_only[0]); i++) {
		const struct opt	*o = &opts[restart_only[i]];
		char			**ns, *const *rs;

		if (o->kind == OPT_STR) {
			ns = (char **)(base_next + o->off);
			rs = (char *const *)(base_run + o->off);
			if (str_eq(*ns, *rs))
				continue;
			free(*ns);
			*ns = *rs != NULL ? xstrdup(*rs) : NULL;
		} else {
			if (*(const int *)(base_run + o->off) ==
			    *(int *)(base_next + o->off))
				continue;
			*(int *)(base_next + o->off) =
			    *(const int *)(base_run + o->off);
		}
		warn(o->var);
		if (restart_only[i] == O_NATS) {
			/* What the URL made: the servers and TLS. */
			for (k = 0; k < (size_t)next->nnats_servers; k++)
				free(next->nats_servers[k]);
			free(next->nats_servers);
			next->nnats_servers = run->nnats_servers;
			next->nats_servers = xcalloc((size_t)run->nnats_servers,
			    sizeof(char *));
			for (k = 0; k < (size_t)run->nnats_servers; k++)
				next->nats_servers[k] =
				    xstrdup(run->nats_servers[k]);
			next->nats_tls = run->nats_tls;
		}
	}
	/* TLS on or off is a restart's too (SPEC 11); a new pair is not. */
	if ((next->tls_ctx != NULL) != (run->tls_ctx != NULL)) {
		free(next->tls_cert);
		free(next->tls_key);
		SSL_CTX_free(next->tls_ctx);
		next->tls_cert = run->tls_cert ? xstrdup(run->tls_cert) : NULL;
		next->tls_key = run->tls_key ? xstrdup(run->tls_key) : NULL;
		if ((next->tls_ctx = run->tls_ctx) != NULL)
			SSL_CTX_up_ref(next->tls_ctx);
		warn(opts[O_TLS_CERT].var);
	}
	return 0;
}

/*
 * Split a control listener's "ADDR:PORT" ("[v6]:PORT" for IPv6) into a
 * numeric address (into addr, 64 bytes, unless NULL) and a port 1-65535.
 * 0, or -1 when it is not one.
 */
int
config_control_addr(const char *s, char *addr, int *port)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	int			 sl = sizeof(ss), p;
	char			 host[64];

	if (s == NULL || strchr(s, ':') == NULL ||
	    evutil_parse_sockaddr_port(s, (struct sockaddr *)&ss, &sl) == -1)
		return -1;
	p = ntohs(ss.ss_family == AF_INET ? sin->sin_port : sin6->sin6_port);
	if (p == 0 || evutil_inet_ntop(ss.ss_family, ss.ss_family == AF_INET ?
	    (void *)&sin->sin_addr : (void *)&sin6->sin6_addr, host,
	    sizeof(host)) == NULL)
		return -1;
	if (addr != NULL)
		memcpy(addr, host, strlen(host) + 1);
	if (port != NULL)
		*port = p;
	return 0;
}
