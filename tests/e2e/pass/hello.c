/* hello.c — pes-clang driver test: prints GREETING (given with -D, may contain spaces). */
#include <stdio.h>
#include "mock_rt.h"

#ifndef GREETING
#define GREETING "no greeting"
#endif

int counter;

int main(void) {
    for (int i = 0; i < 10; i++)
        counter += i;
    printf("greeting=[%s] counter=%d modules=%d\n", GREETING, counter, mock_modules());
    return 0;
}
