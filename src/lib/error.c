/*
 * error.c: text for libtreaty's error codes.
 *
 * Static strings only; callable from any thread.
 */
#include "treaty.h"

/* Short static text for a libtreaty error code. */
const char *
treaty_strerror(int err)
{
	switch (err) {
	case TREATY_OK:
		return ("success");
	case TREATY_E_INVALID:
		return ("invalid argument or input");
	case TREATY_E_SPACE:
		return ("output buffer too small");
	case TREATY_E_SIG_MISSING:
		return ("signature missing");
	case TREATY_E_SIG_MALFORMED:
		return ("signature header malformed");
	case TREATY_E_SIG_STALE:
		return ("signature timestamp outside tolerance");
	case TREATY_E_SIG_MISMATCH:
		return ("signature does not match");
	case TREATY_E_CRYPTO:
		return ("cryptographic library failure");
	default:
		return ("unknown error");
	}
}
