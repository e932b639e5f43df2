#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "perfwatch-tcp-rr: not built yet\n");
	return 2;
}
