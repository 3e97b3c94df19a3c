/* abort — memory work, then abort(). */
#include <stdlib.h>

#include "bh.h"

int main(void)
{
    static unsigned long a[8000];
    bh_say("abort: %lx\n", bh_sweep(a, 8000, 100));
    abort();
}
