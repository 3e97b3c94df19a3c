// cxx_exceptions — C++ exceptions thrown and caught in threads, and carried
// to the main thread with std::exception_ptr and rethrown there.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bh.h"

static void work(int k, std::exception_ptr *out)
{
    std::vector<unsigned long> v(1000, (unsigned long)k);
    unsigned long caught = 0;
    for (int r = 0; r < 20; r++) {
        try {
            if (bh_sweep(v.data(), 1000, 2) % 3 != 4)
                throw std::runtime_error("round " + std::to_string(r));
        } catch (const std::runtime_error &e) {
            caught += e.what()[0];
        }
    }
    try {
        throw std::out_of_range("thread " + std::to_string(k) + " caught " + std::to_string(caught));
    } catch (...) {
        *out = std::current_exception();
    }
}

int main()
{
    const int n = 4;
    std::vector<std::exception_ptr> errors(n);
    std::vector<std::thread> threads;
    for (int k = 0; k < n; k++)
        threads.emplace_back(work, k, &errors[k]);
    for (auto &t : threads)
        t.join();
    for (int k = 0; k < n; k++) {
        try {
            std::rethrow_exception(errors[k]);
        } catch (const std::out_of_range &e) {
            std::printf("cxx_exceptions: %s\n", e.what());
        }
    }
    return 0;
}
