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

#define AUTH_HASH_HEX	(TOKEN_HASH_HEX + 1)	/* the hex digits and the NUL */

/*
 * The SHA-256 (lowercase hex) of the token of an Authorization header's
 * value ("Bearer <token>"; NULL: no header) into hex: 0, or -1 when it is
 * not a bearer token or the token is empty.  It takes the header's value,
 * not a request: the front door asks from a head evhttp has not read.
 */
int	auth_bearer(const char *value, char hex[AUTH_HASH_HEX]);
/*
 * The cache of recent tokens' hashes (auth.c): auth_init once at start
 * (draws its key), auth_clear on reload.
 */
void	auth_init(void);
void	auth_clear(void);

#endif
