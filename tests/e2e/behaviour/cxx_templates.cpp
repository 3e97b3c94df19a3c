// cxx_templates — C++ as third-party codes are written: nested namespaces,
// class and function templates with long instantiated names, lambdas stored
// in std::function and passed to algorithms, std::map and std::vector of
// templated records, built with -fno-exceptions (run.sh). Two threads each
// fill their own container; the output is a checksum of both.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace vendor::numerics::detail::v2 {

template <typename Scalar, int Dim>
struct FixedVector {
    Scalar c[Dim];
    Scalar dot(const FixedVector &o) const {
        Scalar s{};
        for (int i = 0; i < Dim; i++) s += c[i] * o.c[i];
        return s;
    }
};

template <typename Key, typename Scalar, int Dim, typename Policy>
class IndexedAccumulator {
  public:
    using value_type = FixedVector<Scalar, Dim>;
    void add(const Key &k, const value_type &v) {
        auto &slot = table_[Policy::canonical(k)];
        for (int i = 0; i < Dim; i++) slot.c[i] += v.c[i];
        order_.push_back(k);
    }
    template <typename Visitor>
    Scalar fold(Visitor &&visit) const {
        Scalar s{};
        for (const auto &kv : table_) s += visit(kv.first, kv.second);
        return s;
    }
    std::size_t distinct() const { return table_.size(); }
    const std::vector<Key> &order() const { return order_; }

  private:
    std::map<Key, value_type> table_;
    std::vector<Key> order_;
};

struct ModuloPolicy {
    static long canonical(long k) { return ((k % 97) + 97) % 97; }
};

}  // namespace vendor::numerics::detail::v2

namespace app {
using Acc = vendor::numerics::detail::v2::IndexedAccumulator<long, double, 4,
                                                              vendor::numerics::detail::v2::ModuloPolicy>;

template <typename Acc_>
static double run_worker(long seed, std::function<long(long)> next) {
    Acc_ acc;
    long x = seed;
    for (int i = 0; i < 5000; i++) {
        x = next(x);
        typename Acc_::value_type v{{double(x % 13), double(x % 7), double(i % 5), 1.0}};
        acc.add(x, v);
    }
    std::vector<long> keys = acc.order();
    std::sort(keys.begin(), keys.end(), [](long a, long b) { return (a % 1000) < (b % 1000) || ((a % 1000) == (b % 1000) && a < b); });
    long head = std::accumulate(keys.begin(), keys.begin() + 100, 0L, [](long s, long k) { return s ^ (k * 31); });
    double folded = acc.fold([&](long k, const typename Acc_::value_type &v) { return v.dot(v) * double(k + 1); });
    return folded + double(head % 1000003) + double(acc.distinct());
}
}  // namespace app

int main() {
    double r[2] = {0, 0};
    auto lcg = [](long x) { return (x * 1103515245L + 12345L) % 2147483648L; };
    std::thread t([&] { r[1] = app::run_worker<app::Acc>(7, lcg); });
    r[0] = app::run_worker<app::Acc>(3, [](long x) { return (x * 69069L + 1L) % 4294967296L; });
    t.join();
    std::printf("cxx_templates: %.1f %.1f\n", r[0], r[1]);
    return 0;
}
