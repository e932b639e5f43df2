#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "perfwatch-runner: not built yet\n");
	return 2;
}
