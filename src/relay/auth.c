/*
 * auth.c: bearer tokens (auth.h), for ingest and the inboxes alike.  Loop
 * thread only.
 */
#include <string.h>
#include <strings.h>

#include <event2/http.h>

#include "treaty.h"
#include "auth.h"

/* The hash of the request's bearer token; see auth.h. */
int
auth_bearer(struct evhttp_request *req, char hex[AUTH_HASH_HEX])
{
	return auth_bearer_value(evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Authorization"), hex);
}

/* The same from the header's value (NULL: none). */
int
auth_bearer_value(const char *h, char hex[AUTH_HASH_HEX])
{
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return -1;
	for (h += 7; *h == ' '; h++)
		;
	if (*h == '\0')
		return -1;
	/* Only the hash is compared: the token itself is never kept. */
	return treaty_sha256_hex(h, strlen(h), hex) == TREATY_OK ? 0 : -1;
}
