/*
 * bridge.c: nats.c threads -> loop thread, and the worker thread for nats.c
 * calls that block.  The only file with a mutex.  See the rule in bridge.h.
 *
 * Hand-off (memcached style): lock, append, unlock, and event_active on a
 * user event only when the queue was empty, so a burst of items (connection
 * events, finished worker jobs) costs one wake-up.  The loop takes the
 * whole list in one grab and runs it outside the lock.  event_active from
 * another thread is safe because store_global_init() turned on libevent's
 * pthread locking (evthread_use_pthreads) before the event_base was made.
 *
 * Publish acknowledgements, consumer messages and request replies never
 * come through here: the loop polls them (store-int.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include <event2/event.h>

#include "bridge.h"
#include "log.h"

STAILQ_HEAD(bridge_list, bridge_item);
STAILQ_HEAD(bridge_jobs, bridge_job);

static pthread_mutex_t	 bridge_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bridge_list bridge_queue = STAILQ_HEAD_INITIALIZER(bridge_queue);
static struct event	*bridge_ev;

static pthread_mutex_t	 worker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 worker_cond = PTHREAD_COND_INITIALIZER;
static struct bridge_jobs worker_queue = STAILQ_HEAD_INITIALIZER(worker_queue);
static int		 worker_stop;
static int		 worker_started;
static pthread_t	 worker_thread;
static int		 jobs_pending;	/* loop thread only */

/* Run every queued item; loop thread. */
static void
bridge_drain(void)
{
	struct bridge_list	 grab = STAILQ_HEAD_INITIALIZER(grab);
	struct bridge_item	*it;

	pthread_mutex_lock(&bridge_lock);
	STAILQ_CONCAT(&grab, &bridge_queue);
	pthread_mutex_unlock(&bridge_lock);
	while ((it = STAILQ_FIRST(&grab)) != NULL) {
		STAILQ_REMOVE_HEAD(&grab, entry);
		it->fn(it);
	}
}

/* The wake-up event fired: drain the queue. */
static void
bridge_wake_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	bridge_drain();
}

/* Post an item for the loop thread.  Any thread. */
void
bridge_post(struct bridge_item *item)
{
	int	 was_empty;

	struct event	*ev;

	pthread_mutex_lock(&bridge_lock);
	was_empty = STAILQ_EMPTY(&bridge_queue);
	STAILQ_INSERT_TAIL(&bridge_queue, item, entry);
	ev = bridge_ev;
	pthread_mutex_unlock(&bridge_lock);
	/*
	 * Activating outside the lock is safe: if the loop drained between
	 * our unlock and this call, it merely wakes once for nothing.  The
	 * event is freed only after nats.c's threads have ended.
	 */
	if (was_empty && ev != NULL)
		event_active(ev, EV_READ, 0);
}

/* The worker thread: run jobs in order, post each back to the loop. */
static void *
bridge_worker_main(void *arg)
{
	struct bridge_job	*job;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&worker_lock);
		while (STAILQ_EMPTY(&worker_queue) && !worker_stop)
			pthread_cond_wait(&worker_cond, &worker_lock);
		if (worker_stop && STAILQ_EMPTY(&worker_queue)) {
			pthread_mutex_unlock(&worker_lock);
			return NULL;
		}
		job = STAILQ_FIRST(&worker_queue);
		STAILQ_REMOVE_HEAD(&worker_queue, jentry);
		pthread_mutex_unlock(&worker_lock);
		job->work(job);
		bridge_post(&job->item);
	}
}

/* Make the wake-up event and start the worker.  Loop thread, once. */
void
bridge_init(struct event_base *base)
{
	bridge_ev = event_new(base, -1, EV_PERSIST, bridge_wake_cb, NULL);
	if (bridge_ev == NULL)
		fatalx("cannot create the bridge event", NULL);
	if (pthread_create(&worker_thread, NULL, bridge_worker_main, NULL) != 0)
		fatalx("cannot start the worker thread", NULL);
	worker_started = 1;
}

/* A job's work is done: keep the count, then run its done function. */
static void
bridge_job_done_cb(struct bridge_item *it)
{
	struct bridge_job	*job = BRIDGE_CONTAINER(it, struct bridge_job, item);

	jobs_pending--;
	job->done(job);
}

/* Queue a job for the worker thread.  Loop thread. */
void
bridge_run(struct bridge_job *job)
{
	job->item.fn = bridge_job_done_cb;
	jobs_pending++;
	pthread_mutex_lock(&worker_lock);
	STAILQ_INSERT_TAIL(&worker_queue, job, jentry);
	pthread_cond_signal(&worker_cond);
	pthread_mutex_unlock(&worker_lock);
}

/* Jobs handed to the worker whose done function has not run yet. */
int
bridge_jobs_pending(void)
{
	return jobs_pending;
}

/* Join the worker.  Main thread, after the loop. */
void
bridge_stop_worker(void)
{
	if (!worker_started)
		return;
	pthread_mutex_lock(&worker_lock);
	worker_stop = 1;
	pthread_cond_signal(&worker_cond);
	pthread_mutex_unlock(&worker_lock);
	pthread_join(worker_thread, NULL);
	worker_started = 0;
	/*
	 * Its last jobs' done functions, now: they free nats.c messages, and
	 * nats.c's library is gone once store_free has closed it (its
	 * garbage collector's lock with it).
	 */
	bridge_drain();
}

/* Run what is left for the loop, then free the event.  Main thread. */
void
bridge_free(void)
{
	struct event	*ev;

	bridge_drain();
	pthread_mutex_lock(&bridge_lock);
	ev = bridge_ev;
	bridge_ev = NULL;
	pthread_mutex_unlock(&bridge_lock);
	if (ev != NULL)
		event_free(ev);
}
