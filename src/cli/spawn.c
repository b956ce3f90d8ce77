/*
 * spawn.c: run a command for an event (treaty work --exec, --on-receive).
 *
 * The child is /bin/sh -c CMD.  Its standard input is the event's data in
 * a memory file (memfd), written before the child starts, so the loop
 * never blocks on a pipe the child does not read.  Its environment is
 * ours plus the event's attributes: CE_<NAME> for each (CE_ID, CE_SOURCE,
 * CE_TYPE, CE_TIME, CE_SUBJECT, extensions ...), CE_DATACONTENTTYPE,
 * TREATY_INBOX and TREATY_DELIVERY_COUNT.  Exits are collected on SIGCHLD
 * through libevent, on the loop.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "cevent.h"
#include "cli.h"
#include "log.h"
#include "util.h"

extern char	**environ;

struct child {
	pid_t			 pid;
	spawn_cb		 cb;
	void			*arg;
	LIST_ENTRY(child)	 entry;
};

static struct {
	struct event		*sigchld;
	LIST_HEAD(, child)	 children;
	int			 n;
} sp;

/* SIGCHLD: collect every child that exited. */
static void
spawn_sigchld_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct child	*c;
	pid_t		 pid;
	int		 status;

	(void)sig;
	(void)ev;
	(void)arg;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		LIST_FOREACH(c, &sp.children, entry)
			if (c->pid == pid)
				break;
		if (c == NULL)
			continue;
		LIST_REMOVE(c, entry);
		sp.n--;
		if (c->cb != NULL)
			c->cb(c->arg, status);
		free(c);
	}
}

/* "NAME=value" with NAME upper-cased. */
static char *
env_pair(const char *prefix, const char *name, const char *value)
{
	char	*s = xmalloc(strlen(prefix) + strlen(name) + strlen(value) + 2);
	char	*p = s;

	p += sprintf(p, "%s", prefix);
	for (; *name != '\0'; name++)
		*p++ = (char)toupper((unsigned char)*name);
	sprintf(p, "=%s", value);
	return s;
}

/* A memory file holding data, positioned at its start; -1 on error. */
static int
data_fd(const char *data, size_t len)
{
	ssize_t	 w;
	size_t	 off = 0;
	int	 fd;

	if ((fd = memfd_create("treaty-event", MFD_CLOEXEC)) == -1)
		return -1;
	while (off < len) {
		if ((w = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Run cmd for ev; see cli.h. */
int
spawn_event(const char *cmd, const struct cevent *ev, const char *inbox,
    long long count, spawn_cb cb, void *arg)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 dfl, mask;
	struct child			*c;
	char				**env, *argv[4], num[24];
	size_t				 nenv = 0, i, k = 0;
	pid_t				 pid;
	int				 fd, rc, saved;

	if (sp.sigchld == NULL) {
		LIST_INIT(&sp.children);
		sp.sigchld = evsignal_new(client_base(), SIGCHLD,
		    spawn_sigchld_cb, NULL);
		evsignal_add(sp.sigchld, NULL);
	}
	if ((fd = data_fd(ev->data, ev->datalen)) == -1)
		return -1;
	while (environ[nenv] != NULL)
		nenv++;
	env = xcalloc(nenv + ev->nattrs + 4, sizeof(*env));
	/* Our environment first, minus what we set for the event. */
	for (i = 0; i < nenv; i++)
		if (strncmp(environ[i], "CE_", 3) != 0 &&
		    strncmp(environ[i], "TREATY_INBOX=", 13) != 0 &&
		    strncmp(environ[i], "TREATY_DELIVERY_COUNT=", 22) != 0 &&
		    strncmp(environ[i], "TREATY_TOKEN=", 13) != 0)
			env[k++] = xstrdup(environ[i]);
	for (i = 0; i < ev->nattrs; i++)
		env[k++] = env_pair("CE_", ev->attrs[i].name,
		    ev->attrs[i].value);
	if (ev->content_type != NULL)
		env[k++] = env_pair("CE_", "datacontenttype",
		    ev->content_type);
	if (inbox != NULL)
		env[k++] = env_pair("TREATY_", "inbox", inbox);
	snprintf(num, sizeof(num), "%lld", count);
	env[k++] = env_pair("TREATY_", "delivery_count", num);
	argv[0] = (char *)(uintptr_t)"sh";
	argv[1] = (char *)(uintptr_t)"-c";
	argv[2] = (char *)(uintptr_t)cmd;
	argv[3] = NULL;
	/*
	 * The child gets the data as stdin, our stdout and stderr, nothing
	 * else (libevent's sockets are not all close-on-exec), and SIGPIPE
	 * back at its default: we ignore it, a shell pipeline must not.
	 */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&attr);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	sigemptyset(&mask);
	posix_spawnattr_setsigmask(&attr, &mask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
	    POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, env);
	saved = rc;
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	for (i = 0; i < k; i++)
		free(env[i]);
	free(env);
	if (rc != 0) {
		errno = saved;
		return -1;
	}
	c = xcalloc(1, sizeof(*c));
	c->pid = pid;
	c->cb = cb;
	c->arg = arg;
	LIST_INSERT_HEAD(&sp.children, c, entry);
	sp.n++;
	return 0;
}

/* A best-effort hook ended: note a failure, nothing else. */
void
spawn_hook_done(void *arg, int status)
{
	(void)arg;
	if (spawn_code(status) != 0)
		log_warnx("--on-receive command failed (ignored)", "status=%d",
		    spawn_code(status));
}

/* The shell's exit code for a wait(2) status: 128 + signal when killed. */
int
spawn_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Children still running. */
int
spawn_running(void)
{
	return sp.n;
}

/* Stop collecting (at exit); children left running are not waited for. */
void
spawn_free(void)
{
	struct child	*c;

	if (sp.sigchld == NULL)
		return;
	while ((c = LIST_FIRST(&sp.children)) != NULL) {
		LIST_REMOVE(c, entry);
		free(c);
	}
	event_free(sp.sigchld);
	memset(&sp, 0, sizeof(sp));
}
