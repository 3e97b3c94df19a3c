// pes_ops.cpp — classification of IR instructions into enum pes_op_class.
#include "pes_ops.h"

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

#include "pes/trace.h"

using namespace llvm;

namespace pes
{

static uint32_t lanes(const Type *T)
{
    if (auto *FV = dyn_cast<FixedVectorType>(T))
        return FV->getNumElements();
    return 1; // scalars, and scalable vectors (unknown width) count once
}

static void add(uint32_t *Ops, int Class, uint32_t N)
{
    uint64_t V = static_cast<uint64_t>(Ops[Class]) + N;
    Ops[Class] = V > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(V);
}

// Intrinsics that generate no code: not counted at all.
static bool isFree(const IntrinsicInst &II)
{
    switch (II.getIntrinsicID()) {
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::assume:
    case Intrinsic::experimental_noalias_scope_decl:
    case Intrinsic::invariant_start:
    case Intrinsic::invariant_end:
    case Intrinsic::threadlocal_address:
        return true;
    default:
        return II.isAssumeLikeIntrinsic() || isa<DbgInfoIntrinsic>(II);
    }
}

static void countIntrinsic(const IntrinsicInst &II, uint32_t *Ops, bool Lanes)
{
    uint32_t L = Lanes ? lanes(II.getType()) : 1;
    switch (II.getIntrinsicID()) {
    case Intrinsic::fmuladd:
    case Intrinsic::fma: // one multiply and one add, as Byfl counts them
        add(Ops, PES_OP_FP_MUL, L);
        add(Ops, PES_OP_FP_ADD, L);
        return;
    case Intrinsic::memcpy:
    case Intrinsic::memcpy_inline:
    case Intrinsic::memmove:
        add(Ops, PES_OP_LOAD, 1);
        add(Ops, PES_OP_STORE, 1);
        return;
    case Intrinsic::memset:
    case Intrinsic::memset_inline:
    case Intrinsic::masked_store:
    case Intrinsic::masked_scatter:
    case Intrinsic::masked_compressstore:
        add(Ops, PES_OP_STORE, 1);
        return;
    case Intrinsic::masked_load:
    case Intrinsic::masked_gather:
    case Intrinsic::masked_expandload:
        add(Ops, PES_OP_LOAD, 1);
        return;
    default:
        add(Ops, PES_OP_OTHER, 1);
        return;
    }
}

void countInstruction(const Instruction &I, uint32_t *Ops, bool Lanes)
{
    if (isa<PHINode>(I))
        return; // resolved by register allocation, not executed as such
    if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
        if (!isFree(*II))
            countIntrinsic(*II, Ops, Lanes);
        return;
    }
    uint32_t L = Lanes ? lanes(I.getType()) : 1;
    switch (I.getOpcode()) {
    case Instruction::Add:
    case Instruction::Sub:
        add(Ops, PES_OP_INT_ADD, L);
        break;
    case Instruction::Mul:
        add(Ops, PES_OP_INT_MUL, L);
        break;
    case Instruction::UDiv:
    case Instruction::SDiv:
    case Instruction::URem:
    case Instruction::SRem:
        add(Ops, PES_OP_INT_DIV, L);
        break;
    case Instruction::FAdd:
    case Instruction::FSub:
        add(Ops, PES_OP_FP_ADD, L);
        break;
    case Instruction::FMul:
        add(Ops, PES_OP_FP_MUL, L);
        break;
    case Instruction::FDiv:
    case Instruction::FRem:
        add(Ops, PES_OP_FP_DIV, L);
        break;
    case Instruction::Load:
        add(Ops, PES_OP_LOAD, 1);
        break;
    case Instruction::Store:
        add(Ops, PES_OP_STORE, 1);
        break;
    case Instruction::AtomicRMW:
    case Instruction::AtomicCmpXchg: // reads and writes
        add(Ops, PES_OP_LOAD, 1);
        add(Ops, PES_OP_STORE, 1);
        break;
    case Instruction::Br:
    case Instruction::Switch:
    case Instruction::IndirectBr:
        add(Ops, PES_OP_BRANCH, 1);
        break;
    case Instruction::Call:
    case Instruction::Invoke:
    case Instruction::CallBr:
        add(Ops, PES_OP_CALL, 1);
        break;
    default:
        add(Ops, PES_OP_OTHER, 1);
        break;
    }
}

void countOps(const BasicBlock &BB, uint32_t *Ops)
{
    for (int C = 0; C < PES_OP_COUNT; C++)
        Ops[C] = 0;
    for (const Instruction &I : BB)
        countInstruction(I, Ops, /*Lanes=*/true);
}

void countInstrs(const BasicBlock &BB, uint32_t *Instrs)
{
    for (int C = 0; C < PES_OP_COUNT; C++)
        Instrs[C] = 0;
    for (const Instruction &I : BB)
        countInstruction(I, Instrs, /*Lanes=*/false);
}

} // namespace pes
