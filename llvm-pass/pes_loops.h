// pes_loops.h — loop descriptors: a full trace records an affine loop's
// accesses as one descriptor per chunk of iterations instead of one record per
// access (regular section descriptors, after METRIC, Marathe et al.;
// pes/rt_abi.h, struct pes_rt_loop).
//
// A loop qualifies when its body is one block that loops to itself, holds no
// call (but intrinsics that touch no memory), and makes one record per access
// whose extra the copy knows in advance. Records whose address
// ScalarEvolution gives as {start,+,step} of this loop with a loop-invariant
// step (or as loop-invariant) are affine, the others irregular (an indirect
// a[idx[i]], u[i/2], a pointer chase): a mixed body. Such a body gets, in the
// recording clone only, a copy without records that the recording body enters
// when __pes_tls.descriptors is set. The copy counts iterations; it keeps the
// first iteration's records of the chunk and the step of each affine address,
// stores each irregular address of each iteration into the chunk, and hands
// the chunk to __pes_loop_flush when it is full (the records up to the next
// time mark, read from __pes_tls, or the chunk's address array) and when the
// loop ends.
#ifndef PES_LOOPS_H
#define PES_LOOPS_H

#include "pes_access.h"
#include "pes_emit.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Instructions.h"

#include <vector>

namespace pes
{

// One access record of the body, in record order.
struct LoopSite {
    llvm::Instruction *I;
    unsigned Index; // which site of I (classifyAccess order)
    uint32_t Local; // module-local site id
};

// Planning, on the IR as the optimiser left it: can BB's records be written
// as descriptors? nullptr if so, else why not (for -pes-verbose). Sites: BB's
// sites in record order. Irregular: bit j + 1 set for each site j whose
// address is not affine (bit 0 is the block record, always affine).
const char *whyNoDescriptors(llvm::BasicBlock &BB, const std::vector<AccessSite> &Sites,
                             llvm::LoopInfo &LI, llvm::ScalarEvolution &SE, uint64_t &Irregular);

// Instrumenting, after CheckCloner::clone and before the records are emitted:
// Start is the instruction where the body's block record goes (the body's
// first instruction after the check clone's split). Adds the descriptor copy
// and returns the allocas that must be promoted back to registers.
std::vector<llvm::AllocaInst *> addDescriptorCopy(llvm::Instruction *Start, uint32_t BlockLocal,
                                                  const std::vector<LoopSite> &Sites,
                                                  uint64_t Irregular, RecordEmitter &E);

} // namespace pes

#endif
