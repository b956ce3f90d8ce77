/*
 * auth.h: bearer tokens.  A request's token is never kept or logged: only
 * its SHA-256 is compared, in constant time, with the hashes the
 * configuration holds (config_find_producer, config_find_inbox); recent
 * tokens' hashes are remembered under a keyed tag (auth.c).  Loop thread
 * only.
 */
#ifndef AUTH_H
#define AUTH_H

#include "config.h"

struct evhttp_request;

#define AUTH_HASH_HEX	(TOKEN_HASH_HEX + 1)	/* the hex digits and the NUL */

/*
 * The SHA-256 (lowercase hex) of the request's "Authorization: Bearer
 * <token>" into hex: 0, or -1 when there is no such header or the token
 * is empty.
 */
int	auth_bearer(struct evhttp_request *req, char hex[AUTH_HASH_HEX]);
/* The same from an Authorization header's value (NULL: none). */
int	auth_bearer_value(const char *value, char hex[AUTH_HASH_HEX]);
/*
 * The cache of recent tokens' hashes (auth.c): auth_init once at start
 * (draws its key), auth_clear on reload.
 */
void	auth_init(void);
void	auth_clear(void);

#endif
