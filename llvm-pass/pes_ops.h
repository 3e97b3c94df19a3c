// pes_ops.h — static operation counts of a basic block per enum pes_op_class
// (the instruction mix PPT-Multicore takes from Byfl to estimate T_CPU).
#ifndef PES_OPS_H
#define PES_OPS_H

#include "llvm/IR/BasicBlock.h"

#include <cstdint>

namespace pes
{

// Fills Ops[PES_OP_COUNT]; arithmetic on vectors counts once per lane.
void countOps(const llvm::BasicBlock &BB, uint32_t *Ops);

} // namespace pes

#endif
