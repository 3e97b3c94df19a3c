// pes_chains.h — loop-carried dependence chains per loop latch (pes_bb.chain,
// pes/trace.h): the ops one iteration must execute one after another because
// each needs the previous iteration's result, so that the runtime model can
// bound an iteration from below by sum_c chain[c] x latency[c].
#ifndef PES_CHAINS_H
#define PES_CHAINS_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/LoopInfo.h"

#include "pes/trace.h"

#include <array>
#include <cstdint>

namespace pes
{

using OpCounts = std::array<uint32_t, PES_OP_COUNT>;

// For every latch of every loop of LI's function: over the loops it closes
// and their header phis, the longest path (ops counted once per instruction,
// as in pes_bb.instrs; paths compared by nominal latency, pes_chains.cpp)
// through SSA values from the phi to its incoming value on that back edge.
// Blocks that close no loop are absent.
class LoopChains
{
  public:
    explicit LoopChains(const llvm::LoopInfo &LI);
    // The chain that block BB closes; nullptr if none.
    const OpCounts *at(const llvm::BasicBlock *BB) const
    {
        auto It = Chains.find(BB);
        return It == Chains.end() ? nullptr : &It->second;
    }

  private:
    llvm::DenseMap<const llvm::BasicBlock *, OpCounts> Chains;
};

} // namespace pes

#endif
