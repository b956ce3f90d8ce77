/*
 * store-leftover.c: the consumers no subscriber of this instance owns,
 * listed and deleted for the operations API (store-leftover.h).  Loop
 * thread; the JetStream calls are worker jobs (store_admin_leftover_list,
 * store_admin_leftover_delete), since they wait for JetStream's answer.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store-int.h"
#include "util.h"

/* Loop thread: the answer to the one who asked, unless it went away. */
static void
leftover_done(struct bridge_job *job)
{
	struct store_leftover_job *j = BRIDGE_CONTAINER(job,
	    struct store_leftover_job, job);
	int			 i;

	if (!j->closed) {
		if (j->result == STORE_LEFTOVER_FAILED)
			log_warnx("leftover consumers: JetStream did not answer",
			    "consumer=%s error=%s", log_q(j->name),
			    log_q(j->err));
		j->cb(j->arg, j->result, j->list, j->result ==
		    STORE_LEFTOVER_OK ? j->n : 0, j->more);
	}
	for (i = 0; i < j->n; i++) {
		free(j->list[i].name);
		free(j->list[i].filter);
	}
	free(j->list);
	for (i = 0; i < j->nowned; i++)
		free(j->owned[i]);
	free(j->owned);
	free(j->name);
	free(j);
}

/* A job with work, or NULL when JetStream cannot be asked now. */
static struct store_leftover_job *
leftover_job(void (*work)(struct bridge_job *), store_leftover_cb cb,
    void *arg)
{
	struct store_leftover_job *j;

	if (!store_conn.connected || store_conn.closing)
		return NULL;
	j = xcalloc(1, sizeof(*j));
	j->cb = cb;
	j->arg = arg;
	j->job.work = work;
	j->job.done = leftover_done;
	return j;
}

/* Who owns a consumer; see store-leftover.h. */
enum store_leftover_owner
store_leftover_owner(const char *consumer, const char *const *subscribers,
    int n, const char **tail)
{
	const size_t	 cl = strlen(STORE_CONSUMER_PREFIX);
	const size_t	 rl = strlen(STORE_REPLAY_PREFIX);
	int		 i;

	*tail = consumer;
	if (strncmp(consumer, STORE_REPLAY_PREFIX, rl) == 0) {
		*tail = consumer + rl;
		return STORE_OWNER_REPLAY;
	}
	if (strncmp(consumer, STORE_CONSUMER_PREFIX, cl) != 0 ||
	    consumer[cl] == '\0')
		return STORE_OWNER_OTHER;
	*tail = consumer + cl;
	for (i = 0; i < n; i++)
		if (strcmp(subscribers[i], *tail) == 0)
			return STORE_OWNER_SUBSCRIBER;
	return STORE_OWNER_NONE;
}

/* List the leftovers; see store-leftover.h. */
struct store_leftover_job *
store_leftover_list(const char *const *subscribers, int n,
    store_leftover_cb cb, void *arg)
{
	struct store_leftover_job *j;
	int			 i;

	if ((j = leftover_job(store_admin_leftover_list, cb, arg)) == NULL)
		return NULL;
	/* Their consumers' names: the worker reads nothing of the loop's. */
	j->owned = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*j->owned));
	for (i = 0; i < n; i++)
		j->owned[i] = store_wire_consumer(subscribers[i]);
	j->nowned = n;
	bridge_run(&j->job);
	return j;
}

/* Delete one; see store-leftover.h. */
struct store_leftover_job *
store_leftover_delete(const char *name, store_leftover_cb cb, void *arg)
{
	struct store_leftover_job *j;

	if ((j = leftover_job(store_admin_leftover_delete, cb, arg)) == NULL)
		return NULL;
	j->name = xstrdup(name);
	bridge_run(&j->job);
	return j;
}

/* Forget a job; see store-leftover.h. */
void
store_leftover_close(struct store_leftover_job *j)
{
	if (j != NULL)
		j->closed = 1;
}
