/* The program of e2e.replay_labels (line-0 sites): at -O2 clang sinks the two
 * stores of set() into one, whose merged location has line 0 (the file is
 * kept). set() runs 64 times: 64 accesses of that one site. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void set(int c, int *p) {
    if (c)
        *p = 1;
    else
        *p = 2;
}
int main(int argc, char **argv) {
    int *v = malloc(64 * sizeof *v);
    for (int i = 0; i < 64; i++) set((i + argc) & 1, &v[i]);
    long s = 0;
    for (int i = 0; i < 64; i++) s += v[i];
    printf("%ld\n", s);
    (void)argv;
    free(v);
    return 0;
}
