// pes_omp.h — OpenMP parallel regions as clang outlines them, and which
// pointers in an outlined function reach shared variables (this replaces
// PPT-Multicore §3.1's source translation and shared_var_trace labels).
#ifndef PES_OMP_H
#define PES_OMP_H

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

namespace pes
{

// Functions passed as the microtask to __kmpc_fork_call / __kmpc_fork_teams:
// they get REGION_BEGIN at entry and REGION_END before each return.
llvm::SmallPtrSet<const llvm::Function *, 8> findOmpRegionEntries(llvm::Module &M);

// True for region entries and functions clang names "*.omp_outlined*"
// (e.g. "main.omp_outlined", "main.omp_outlined_debug__"): their blocks are
// PES_BB_PARALLEL.
bool isOmpParallelFunction(const llvm::Function &F,
                           const llvm::SmallPtrSetImpl<const llvm::Function *> &Entries);

// Parallel regions entered in BB and calls in BB that wait for the whole
// team. Forks: 1 in the entry block of a region entry (the microtask passed
// to __kmpc_fork_call, _fork_teams or _fork_call_if; RegionEntry), which
// every thread of the team runs once per region (replay counts the master's,
// stream 0), else 0. Barriers: __kmpc_barrier (the barrier clang emits after
// a worksharing construct without nowait and for `#pragma omp barrier`),
// __kmpc_cancel_barrier and __kmpc_reduce (the blocking reduction). The
// barrier that ends a parallel region is inside __kmpc_fork_call and counts
// with its region (pes_bb.forks, pes/trace.h).
void countOmpSync(const llvm::BasicBlock &BB, bool RegionEntry, uint32_t &Forks,
                  uint32_t &Barriers);

// Values of F that point into shared variables: derived from F's pointer
// arguments after the two thread-id pointers, through GEPs, casts, phis,
// selects, pointer loads through such values, and allocas used as spill
// slots for them (-O0). Empty unless F is a parallel function.
class SharedPointers
{
  public:
    SharedPointers(llvm::Function &F, const llvm::SmallPtrSetImpl<const llvm::Function *> &Entries);
    bool isShared(const llvm::Value *Ptr) const
    {
        return Derived.count(Ptr) != 0;
    }

  private:
    llvm::SmallPtrSet<const llvm::Value *, 32> Derived;
};

} // namespace pes

#endif
