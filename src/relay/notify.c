/*
 * notify.c: the sd_notify protocol, one datagram to $NOTIFY_SOCKET, written
 * directly rather than linking libsystemd for one call.  A name starting
 * with '@' is in the abstract namespace.  Loop thread.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "notify.h"

/* Send one state string; silently nothing when not under systemd. */
int
notify_send(const char *state)
{
	const char		*path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un	 sun;
	socklen_t		 len;
	size_t			 plen;
	int			 fd, rc;

	if (path == NULL || path[0] == '\0')
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sun.sun_path)) {
		log_warnx("NOTIFY_SOCKET is not usable", NULL);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("cannot notify systemd", NULL);
		return -1;
	}
	rc = (int)sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len);
	if (rc == -1)
		log_warn("cannot notify systemd", "state=%s", log_q(state));
	close(fd);
	return rc == -1 ? -1 : 0;
}

/*
 * systemd's watchdog interval for us (WATCHDOG_USEC, when WATCHDOG_PID is
 * unset or ours), microseconds; 0 when there is none.
 */
long long
notify_watchdog_usec(void)
{
	const char	*usec = getenv("WATCHDOG_USEC");
	const char	*pid = getenv("WATCHDOG_PID");
	long long	 v;

	if (usec == NULL || (pid != NULL && atol(pid) != (long)getpid()))
		return 0;
	v = atoll(usec);
	return v > 0 ? v : 0;
}
