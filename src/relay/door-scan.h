/*
 * door-scan.h: what of a connection's bytes the front door (door.c) lets
 * through to evhttp, one request at a time (door-scan.c).  Loop thread
 * only.
 */
#ifndef DOOR_SCAN_H
#define DOOR_SCAN_H

struct dconn;

/*
 * Let through what can go of the request in c's raw buffer and move it to
 * evhttp's input: its head once whole and read (or refused: the door's
 * answer written, nothing after it read as a request), its body as it
 * comes, nothing after its last byte until evhttp has answered it.  1
 * when something went through, 0 when nothing did, -1 when a chunked
 * body's framing broke (nothing to answer: the caller closes).
 */
int	door_process(struct dconn *c);

#endif
