#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "perfwatchd: not built yet\n");
	return 2;
}
