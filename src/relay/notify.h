/*
 * notify.h: systemd readiness notification (sd_notify protocol).  Main
 * thread, which runs the loop: at start, from the loop's callbacks, and at
 * shutdown.
 */
#ifndef NOTIFY_H
#define NOTIFY_H

/* Send state (e.g. "READY=1") to $NOTIFY_SOCKET if set; 0 or -1. */
int	notify_send(const char *state);

/* The watchdog interval systemd asks for, microseconds, or 0. */
long long	notify_watchdog_usec(void);

#endif
