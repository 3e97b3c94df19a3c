// alloc_new — C++ allocations for the allocation records (alloc_run.sh): the
// operator new call of make_n and of main is the site (kind "new"), not the
// malloc call inside the C++ runtime. Prints "name=0x..." like alloc_prog.
#include <cstdio>
#include <cstring>

struct S {
    int x[10];
};

__attribute__((noinline)) static double *make_n()
{
    double *p = new double[1000];
    std::memset(p, 0, 1000 * sizeof *p);
    return p;
}

int main()
{
    double *n = make_n();
    S *s = new S();
    std::printf("fn_make_n=%p\nfn_main=%p\nn=%p\ns=%p\n", (void *)make_n, (void *)main, (void *)n,
                (void *)s);
    n[999] = s->x[3];
    delete s;
    delete[] n;
    return 0;
}
