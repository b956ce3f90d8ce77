/*
 * record.c: the local inbox file of treaty work and treaty listen.
 *
 * One JSON object per line:
 *   {"envelopeId":ID,"inbox":NAME,"deliveryCount":N,"receivedAt":TIME,
 *    "event":<structured-mode CloudEvent>}
 * (envelopeId and inbox only for events taken from an inbox).  A record is
 * appended with one write(2) and flushed with fsync(2) before the event is
 * acknowledged: after a crash the file, not the relay, is the recovery
 * source, and the ids read back at start keep an event from being
 * appended or executed twice.  Lines written by older versions without
 * envelopeId are still read (their (source, id) counts); lines that are
 * not JSON objects are skipped with a notice, never rewritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "treaty.h"
#include "cevent.h"
#include "cli.h"
#include "log.h"
#include "util.h"

#define PENDING_MAX	1024	/* appends between two syncs */

struct record_file {
	char		*path;
	int		 fd;
	off_t		 size;		/* where the next record starts */
	off_t		 synced;	/* size at the last good fsync */
	int		 need_nl;	/* the last line has no newline */
	int		 synced_nl;	/* need_nl at the last good fsync */
	struct strset	*keys;
	char		*pending[PENDING_MAX];	/* keys not yet synced */
	size_t		 pending_len[PENDING_MAX];
	size_t		 npending;
	yajl_gen	 g;
};

/*
 * The set's key of a record: its kind ('i' an event of a source in an
 * inbox, its id then "<source, id>" from strset_key2; 's' an event of a
 * source) and the scoped id, into k; length, or 0.
 */
static size_t
record_key(char k[KEY_MAX], char kind, const char *scope, const char *id)
{
	size_t	 n;

	if ((n = strset_key2(k + 1, KEY_MAX - 1, scope, id)) == 0)
		return 0;
	k[0] = kind;
	return n + 1;
}

/*
 * The key of event (source, id) in inbox: an event id is unique only
 * within its source (and the relay keeps two producers' ids apart), so an
 * inbox may hand out two events of the same id.  Length, or 0.
 */
static size_t
record_inbox_key(char k[KEY_MAX], const char *inbox, const char *source,
    const char *id)
{
	char	 sid[KEY_MAX];

	if (strset_key2(sid, sizeof(sid), source, id) == 0)
		return 0;
	return record_key(k, 'i', inbox, sid);
}

/* Add the keys one record line gives: its event, and in its inbox. */
static int
record_line_keys(struct record_file *f, const char *line)
{
	static const char	*pi[] = { "inbox", NULL };
	static const char	*ps[] = { "event", "source", NULL };
	static const char	*pd[] = { "event", "id", NULL };
	yajl_val		 root, in, src, id;
	char			 k[KEY_MAX];
	size_t			 n;

	if ((root = yajl_tree_parse(line, NULL, 0)) == NULL ||
	    !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return -1;
	}
	in = yajl_tree_get(root, pi, yajl_t_string);
	src = yajl_tree_get(root, ps, yajl_t_string);
	id = yajl_tree_get(root, pd, yajl_t_string);
	if (src != NULL && id != NULL && (n = record_key(k, 's',
	    YAJL_GET_STRING(src), YAJL_GET_STRING(id))) > 0)
		strset_add(f->keys, k, n);
	if (in != NULL && src != NULL && id != NULL &&
	    (n = record_inbox_key(k, YAJL_GET_STRING(in),
	    YAJL_GET_STRING(src), YAJL_GET_STRING(id))) > 0)
		strset_add(f->keys, k, n);
	yajl_tree_free(root);
	return 0;
}

/* Open path and read its records' keys back. */
struct record_file *
record_open(const char *path)
{
	struct record_file	*f = xcalloc(1, sizeof(*f));
	FILE			*in;
	char			*line = NULL;
	size_t			 cap = 0;
	ssize_t			 n;
	off_t			 at = 0;
	long long		 lines = 0, skipped = 0;

	f->path = xstrdup(path);
	f->keys = strset_new();
	/* 0600: events may be private; O_APPEND: every write at the end. */
	if ((f->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600)) == -1 || (in = fdopen(dup(f->fd), "r")) == NULL) {
		cli_err("%s: %s", path, strerror(errno));
		record_close(f);
		return NULL;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] != '\n') {
			/* A torn last line: a crash in the middle of an append. */
			if (record_line_keys(f, line) == -1) {
				log_warnx("inbox file: cutting an unfinished "
				    "last line", "file=%s bytes=%zd",
				    log_q(path), n);
				if (ftruncate(f->fd, at) == -1) {
					cli_err("%s: %s", path, strerror(errno));
					fclose(in);
					free(line);
					record_close(f);
					return NULL;
				}
			} else {
				f->need_nl = 1;
				at += n;
			}
			break;
		}
		at += n;
		lines++;
		if (n > 1 && record_line_keys(f, line) == -1)
			skipped++;
	}
	free(line);
	if (ferror(in)) {
		cli_err("%s: %s", path, strerror(errno));
		fclose(in);
		record_close(f);
		return NULL;
	}
	fclose(in);
	if (skipped > 0)
		log_warnx("inbox file: lines that are not records were skipped",
		    "file=%s skipped=%lld", log_q(path), skipped);
	/*
	 * What a crash left may sit in the page cache only: flush it before
	 * its ids are trusted to acknowledge redeliveries.
	 */
	if (fsync(f->fd) == -1) {
		cli_err("%s: %s", path, strerror(errno));
		record_close(f);
		return NULL;
	}
	f->size = f->synced = at;
	f->synced_nl = f->need_nl;
	f->g = yajl_gen_alloc(NULL);
	log_debug("inbox file read", "file=%s lines=%lld keys=%zu",
	    log_q(path), lines, strset_count(f->keys));
	return f;
}

/* Close the file. */
void
record_close(struct record_file *f)
{
	if (f == NULL)
		return;
	if (f->fd != -1)
		close(f->fd);
	while (f->npending > 0)
		free(f->pending[--f->npending]);
	strset_free(f->keys);
	if (f->g != NULL)
		yajl_gen_free(f->g);
	free(f->path);
	free(f);
}

/* Whether key kind+scope+id is recorded. */
static int
record_has(struct record_file *f, char kind, const char *scope,
    const char *id)
{
	char	 k[KEY_MAX];
	size_t	 n = record_key(k, kind, scope, id);

	return n > 0 && strset_has(f->keys, k, n);
}

/* An event (source, id) of inbox already recorded. */
int
record_has_inbox_event(struct record_file *f, const char *inbox,
    const char *source, const char *id)
{
	char	 k[KEY_MAX];
	size_t	 n = record_inbox_key(k, inbox, source, id);

	return n > 0 && strset_has(f->keys, k, n);
}

/* An event (source, id) already recorded. */
int
record_has_event(struct record_file *f, const char *source, const char *id)
{
	return record_has(f, 's', source, id);
}

/* Remember key k (n bytes, 0: none) of an appended, unsynced record. */
static void
record_pend(struct record_file *f, const char *k, size_t n)
{
	if (n == 0)
		return;
	if (strset_add(f->keys, k, n) == 1) {
		f->pending[f->npending] = xstrndup(k, n);
		f->pending_len[f->npending++] = n;
	}
}

/* Write all of buf at the end of the file. */
static int
record_write(struct record_file *f, const char *buf, size_t len)
{
	ssize_t	 w;
	size_t	 off = 0;

	while (off < len) {
		if ((w = write(f->fd, buf + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* Undo what was written since the last good sync. */
static void
record_undo(struct record_file *f)
{
	int		 saved = errno;
	/* Best effort: a half record must not stay for the next one to follow. */
	struct stat	 st;

	if (ftruncate(f->fd, f->synced) == 0) {
		f->size = f->synced;
		f->need_nl = f->synced_nl;
	} else if (fstat(f->fd, &st) == 0) {
		/*
		 * The fragment stays: end it with a newline before the next
		 * record, so it is one unreadable line (skipped at start), not
		 * glued to a good one.
		 */
		f->size = f->synced = st.st_size;
		f->need_nl = f->synced_nl = 1;
	}
	while (f->npending > 0) {
		f->npending--;
		strset_del(f->keys, f->pending[f->npending],
		    f->pending_len[f->npending]);
		free(f->pending[f->npending]);
	}
	errno = saved;
}

/* Make the appended records durable. */
int
record_sync(struct record_file *f)
{
	if (f->size == f->synced)
		return 0;
	if (fsync(f->fd) == -1) {
		record_undo(f);
		return -1;
	}
	f->synced = f->size;
	f->synced_nl = f->need_nl;
	while (f->npending > 0)
		free(f->pending[--f->npending]);
	return 0;
}

/* Append the record of ev; see cli.h. */
int
record_append(struct record_file *f, const struct cevent *ev,
    const char *inbox, const char *envelope_id, long long count, int sync)
{
	const unsigned char	*buf;
	size_t			 len, n;
	char			 ts[64], *line, k[KEY_MAX];
	struct timespec		 now;
	int			 rc = 0;

	if (f->npending >= PENDING_MAX - 2 && record_sync(f) == -1)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	if (treaty_rfc3339_format(now.tv_sec, now.tv_nsec, 3, ts,
	    sizeof(ts)) < 0)
		ts[0] = '\0';
	yajl_gen_clear(f->g);
	yajl_gen_reset(f->g, NULL);
	yajl_gen_map_open(f->g);
#define KEY(s)	yajl_gen_string(f->g, (const unsigned char *)(s), strlen(s))
	if (envelope_id != NULL) {
		KEY("envelopeId");
		KEY(envelope_id);
		KEY("inbox");
		KEY(inbox);
	}
	if (count >= 0) {
		KEY("deliveryCount");
		yajl_gen_integer(f->g, count);
	}
	KEY("receivedAt");
	KEY(ts);
	KEY("event");
#undef KEY
	cevent_gen_structured(f->g, ev);
	yajl_gen_map_close(f->g);
	yajl_gen_get_buf(f->g, &buf, &len);
	/* One write: a crash leaves at most one torn line, cut at start. */
	line = xmalloc(len + 2);
	n = 0;
	if (f->need_nl)
		line[n++] = '\n';
	memcpy(line + n, buf, len);
	n += len;
	line[n++] = '\n';
	if (record_write(f, line, n) == -1) {
		free(line);
		record_undo(f);
		return -1;
	}
	free(line);
	f->need_nl = 0;
	f->size += (off_t)n;
	if (ev->source != NULL && ev->id != NULL) {
		record_pend(f, k, record_key(k, 's', ev->source, ev->id));
		if (envelope_id != NULL)
			record_pend(f, k, record_inbox_key(k, inbox,
			    ev->source, ev->id));
	}
	if (sync)
		rc = record_sync(f);
	return rc;
}
