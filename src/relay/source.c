/*
 * source.c: sources and the ledger (source.h).  Loop thread only.
 *
 * The ledger holds, per replay, what this instance's deliveries and
 * leases of its events came to, for replay.c to record in AUDIT; and the
 * last SOURCE_ENDED_KEEP replays this instance saw end, for the inbox to
 * answer a lease of an ended replay without asking JetStream.  deliver.c
 * and inbox*.c write to it, replay.c reads it: nothing here calls any of
 * them.  The only way up is replay.c's own event, made active after a
 * count (source_watch), so replay.c runs on the loop's next turn, never
 * inside a delivery's or a lease's callback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "source.h"
#include "util.h"

TAILQ_HEAD(source_tallies, source_tally);

static struct {
	struct source_tallies	 tallies;
	struct event		*watch;		/* replay.c's */
	/* The last SOURCE_ENDED_KEEP replays seen ending, a ring. */
	char			 ended[SOURCE_ENDED_KEEP][SOURCE_ID_SIZE];
	unsigned		 nended;
} ldg = { .tallies = TAILQ_HEAD_INITIALIZER(ldg.tallies) };

/* Make src the subscriber's own consumer or a replay's; see source.h. */
void
source_set(struct source *src, const char *id, int max_deliver)
{
	snprintf(src->id, sizeof(src->id), "%s", id != NULL ? id : "");
	src->max_deliver = max_deliver;
}

/* src's replay id, or NULL; see source.h. */
const char *
source_id(const struct source *src)
{
	return src->id[0] != '\0' ? src->id : NULL;
}

/* An outcome of one of src's events; see source.h. */
void
source_outcome(const struct source *src, int delivered)
{
	if (src->id[0] != '\0')
		source_counted(src->id, delivered);
}

/* Replay id's tally, or NULL. */
static struct source_tally *
tally_find(const char *id)
{
	struct source_tally	*t;

	TAILQ_FOREACH(t, &ldg.tallies, entry)
		if (strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

/* A new tally for replay id (an id of the right length). */
static struct source_tally *
tally_new(const char *id)
{
	struct source_tally	*t = xcalloc(1, sizeof(*t));

	memcpy(t->id, id, SOURCE_ID_SIZE);
	TAILQ_INSERT_TAIL(&ldg.tallies, t, entry);
	return t;
}

/* replay.c's event, made active after each count; see source.h. */
void
source_watch(struct event *ev)
{
	ldg.watch = ev;
}

/* Count an outcome of replay id's event; see source.h. */
void
source_counted(const char *id, int delivered)
{
	struct source_tally	*t = tally_find(id);

	if (t == NULL) {
		if (strlen(id) != API_REPLAY_ID_LEN)
			return;
		t = tally_new(id);
		t->made_ms = now_ms();
	}
	if (delivered)
		t->delivered++;
	else
		t->dropped++;
	if (ldg.watch != NULL)
		event_active(ldg.watch, EV_TIMEOUT, 0);
}

/* Replay id's tally, for replay.c; see source.h. */
struct source_tally *
source_tally_take(const char *id)
{
	struct source_tally	*t = tally_find(id);

	if (t == NULL)
		t = tally_new(id);
	t->taken = 1;
	return t;
}

/* The next tally a count made that replay.c has not taken; see source.h. */
struct source_tally *
source_tally_new(void)
{
	struct source_tally	*t;

	TAILQ_FOREACH(t, &ldg.tallies, entry)
		if (!t->taken) {
			t->taken = 1;
			return t;
		}
	return NULL;
}

/* Replay id's counts here; see source.h. */
void
source_counts(const char *id, uint64_t *delivered, uint64_t *dropped)
{
	struct source_tally	*t = tally_find(id);

	*delivered = t != NULL ? t->delivered : 0;
	*dropped = t != NULL ? t->dropped : 0;
}

/* Replay id ended: its tally freed, the end remembered; see source.h. */
void
source_end(const char *id)
{
	struct source_tally	*t = tally_find(id);

	snprintf(ldg.ended[ldg.nended++ % SOURCE_ENDED_KEEP],
	    sizeof(ldg.ended[0]), "%s", id);
	if (t != NULL) {
		TAILQ_REMOVE(&ldg.tallies, t, entry);
		free(t);
	}
}

/* Whether this instance saw replay id end; see source.h. */
int
source_ended(const char *id)
{
	unsigned	 i;

	for (i = 0; i < ldg.nended && i < SOURCE_ENDED_KEEP; i++)
		if (strcmp(ldg.ended[i], id) == 0)
			return 1;
	return 0;
}

/* Free every tally. */
void
source_free(void)
{
	struct source_tally	*t;

	while ((t = TAILQ_FIRST(&ldg.tallies)) != NULL) {
		TAILQ_REMOVE(&ldg.tallies, t, entry);
		free(t);
	}
	ldg.watch = NULL;
}
