/*
 * outbox.c: the outbox directory of publish and flush.  Main thread (the
 * client's loop); the writes block on fsync, which is the point.
 *
 * An entry is a file whose first line is the subject and the rest the
 * request body: one structured-mode event (a JSON object) or a batch (a
 * JSON array, SPEC 14).  It is written under a temporary name, fsynced,
 * renamed to its time-ordered name and the directory fsynced, so a file
 * with its final name is whole and durable.  Names start with the time in
 * nanoseconds: alphabetical order is oldest first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "cli.h"
#include "util.h"

/* fsync the directory dir, so a rename or a new name in it is durable. */
static int
sync_dir(const char *dir)
{
	int	 fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/*
 * An outbox must be the user's own, writable by nobody else: flush
 * publishes every file in it with the user's token, so a file someone
 * else could put there would be published as the user's.
 */
int
outbox_check(const char *dir)
{
	struct stat	 st;

	if (stat(dir, &st) == -1) {
		cli_err("outbox %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_err("outbox %s: not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		cli_err("outbox %s: must be owned by this user and writable by "
		    "nobody else (chmod go-w), or another user's files would be "
		    "published with this token", dir);
		return -1;
	}
	return 0;
}

/* Write all of buf to fd; 0 or -1. */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t	 w;
	size_t	 off = 0;

	while (off < len) {
		w = write(fd, buf + off, len - off);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Write an entry durably; see cli.h. */
char *
outbox_write(const char *dir, const char *subject, const char *body,
    size_t len)
{
	struct timespec	 ts;
	uint32_t	 rnd;
	char		 name[64], *tmp, *path;
	int		 fd;

	/* A missing outbox is made (private: events may be). */
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		cli_err("outbox %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (outbox_check(dir) == -1)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (RAND_bytes((unsigned char *)&rnd, sizeof(rnd)) != 1)
		rnd = (uint32_t)ts.tv_nsec;
	snprintf(name, sizeof(name), "%020lld-%08x" OUTBOX_SUFFIX,
	    (long long)ts.tv_sec * NS_PER_S + ts.tv_nsec, rnd);
	path = xjoin(dir, "/", name);
	tmp = xjoin(dir, "/.tmp-", name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
	    == -1)
		goto fail;
	if (write_all(fd, subject, strlen(subject)) == -1 ||
	    write_all(fd, "\n", 1) == -1 || write_all(fd, body, len) == -1) {
		close(fd);
		goto fail_unlink;
	}
	if (fsync(fd) == -1 || close(fd) == -1)
		goto fail_unlink;
	if (rename(tmp, path) == -1)
		goto fail_unlink;
	if (sync_dir(dir) == -1) {
		/* Not durable, so not kept: nothing is sent, exit 1. */
		unlink(path);
		goto fail;
	}
	free(tmp);
	return path;
fail_unlink:
	unlink(tmp);
fail:
	cli_err("outbox %s: %s", dir, strerror(errno));
	free(tmp);
	free(path);
	return NULL;
}

/* Read an entry; see cli.h. */
int
outbox_read(const char *path, char **subject, char **body, size_t *len)
{
	FILE	*f;
	char	*text, *nl;
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 1;
		cli_err("%s: %s", path, strerror(errno));
		return -1;
	}
	text = read_all(f, &n);
	fclose(f);
	if (text == NULL) {
		cli_err("%s: cannot be read", path);
		return -1;
	}
	if ((nl = memchr(text, '\n', n)) == NULL) {
		cli_err("%s: not an outbox file (no subject line)", path);
		free(text);
		*subject = xstrdup("");
		*body = xstrdup("");
		*len = 0;
		return 2;
	}
	*subject = xstrndup(text, (size_t)(nl - text));
	*len = n - (size_t)(nl + 1 - text);
	*body = xstrndup(nl + 1, *len);
	free(text);
	return 0;
}

/* Set an entry aside for a human; see cli.h. */
int
outbox_reject(const char *path)
{
	char	*rej = xjoin(path, "", OUTBOX_REJECTED);
	int	 rc;

	if ((rc = rename(path, rej)) == 0)
		cli_err("kept as %s", rej);
	else if (errno == ENOENT) {
		/* A flush running beside this one set it aside first. */
		cli_err("%s: already set aside or sent", path);
		rc = 0;
	} else
		cli_err("cannot set %s aside: %s", path, strerror(errno));
	free(rej);
	return rc;
}
