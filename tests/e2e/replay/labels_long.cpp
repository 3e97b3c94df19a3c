// The program of e2e.replay_labels (long names): a function whose demangled
// name, with its namespaces and template arguments, is far longer than any
// text table's label column. It runs once over 64 elements: 64 loads and 64
// stores of data.
#include <cstdio>

namespace physics {
namespace kernels {
struct SequentialExecutionPolicyWithAVeryLongName {};
template <typename Real, int Dim, typename Policy> struct ElementIntegrator {
    __attribute__((noinline)) static Real accumulate_forces_over_all_elements(volatile Real *f, int n) {
        Real s = 0;
        for (int i = 0; i < n; i++) f[i] = f[i] + Real(i);
        return s;
    }
};
} // namespace kernels
} // namespace physics

volatile double data[64];

int main() {
    using I = physics::kernels::ElementIntegrator<double, 3, physics::kernels::SequentialExecutionPolicyWithAVeryLongName>;
    I::accumulate_forces_over_all_elements(data, 64);
    std::printf("%g\n", data[63]);
    return 0;
}
