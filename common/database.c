/* Where the store's database is (common/database.h). */
#include <ctype.h>
#include <string.h>

#include "common/database.h"

int
database_is_pg(const char *where)
{
	const char *p = where;

	if (strncmp(where, "postgresql://", 13) == 0 ||
	    strncmp(where, "postgres://", 11) == 0)
		return 1;
	while (*p == '_' || islower((unsigned char)*p))
		p++;
	if (p == where)
		return 0;
	while (*p == ' ')
		p++;
	return *p == '=';
}
