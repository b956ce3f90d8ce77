/*
 * fatal-check: reach libevent's fatal path on purpose and let the relay's
 * fatal callback (log_libevent_fatal) handle it, as treaty-relay installs
 * it.  libevent's debug mode refuses an event_add on an event never set
 * up with event_errx, the path its HTTP server took on pipelined requests
 * before issue 28.  t-door-pipeline runs it: the process must abort after
 * one "libevent ended the process" line naming libevent's reason.
 */
#include <string.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "log.h"

int
main(void)
{
	struct event_base	*base;
	struct event		 ev;

	log_use_stamps();
	log_init(0);
	event_enable_debug_mode();
	event_set_log_callback(log_libevent);
	event_set_fatal_callback(log_libevent_fatal);
	if ((base = event_base_new()) == NULL)
		return 1;
	memset(&ev, 0, sizeof(ev));
	ev.ev_base = base;	/* set up only in part: debug mode sees it */
	event_add(&ev, NULL);
	event_base_free(base);
	return 0;
}
