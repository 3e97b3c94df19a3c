// alloc_heavy ROUNDS — an allocation-heavy C++ workload: a std::map of short
// std::strings and a std::list of small structs, nodes inserted and erased in
// a fixed pseudo-random order, so most of the time goes to new/delete and the
// pointer chasing between small blocks (LULESH-like allocation rates). Prints
// a checksum; the work does not depend on timing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <string>

struct item {
    uint64_t key, value[3];
};

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? std::atol(argv[1]) : 200;
    std::map<uint32_t, std::string> m;
    std::list<item> l;
    uint64_t x = 88172645463325252ull, sum = 0;
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < 2000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t k = (uint32_t)(x % 8192);
            auto it = m.find(k);
            if (it != m.end()) {
                sum += it->second.size() + (unsigned char)it->second[0];
                m.erase(it);
            } else {
                m.emplace(k, std::string(24 + k % 16, (char)('a' + k % 26)));
            }
            l.push_back(item{x, {x >> 1, x >> 2, x >> 3}});
            if (l.size() > 1000) {
                sum += l.front().value[1];
                l.pop_front();
            }
        }
        for (const auto &e : l)
            sum += e.value[0] & 0xff;
    }
    std::printf("alloc_heavy: %ld rounds, %zu map entries, %zu list nodes, checksum %llu\n", rounds,
                m.size(), l.size(), (unsigned long long)sum);
    return 0;
}
