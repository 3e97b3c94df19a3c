// pes_ops.h — static operation counts of a basic block per enum pes_op_class
// (the instruction mix PPT-Multicore takes from Byfl to estimate T_CPU).
#ifndef PES_OPS_H
#define PES_OPS_H

#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Instruction.h"

#include <cstdint>

namespace pes
{

// Adds I's operations to Ops[PES_OP_COUNT] (saturating). Lanes: arithmetic on
// a fixed-width vector counts once per lane, else once per instruction. Phis
// and intrinsics that generate no code count nothing; an fmuladd/fma counts
// in both FP_MUL and FP_ADD.
void countInstruction(const llvm::Instruction &I, uint32_t *Ops, bool Lanes);

// Fills Ops[PES_OP_COUNT] (pes_bb.ops): arithmetic on vectors counts once per lane.
void countOps(const llvm::BasicBlock &BB, uint32_t *Ops);

// Fills Instrs[PES_OP_COUNT] (pes_bb.instrs): as countOps, but a vector
// instruction counts once.
void countInstrs(const llvm::BasicBlock &BB, uint32_t *Instrs);

} // namespace pes

#endif
