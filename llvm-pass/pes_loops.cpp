// pes_loops.cpp — loop descriptors (pes_loops.h).
#include "pes_loops.h"

#include "llvm/ADT/bit.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include "pes/rt_abi.h"

#include <cstddef>

using namespace llvm;

namespace pes
{

// An instruction that may run inside a descriptor body: anything but a call,
// except intrinsics that touch no memory (math, vector reductions, assumes,
// debug info, lifetime markers). A call could record (an instrumented callee),
// unwind, longjmp or exit with the chunk half written.
static bool allowedInBody(const Instruction &I, bool IsSite)
{
    auto *CB = dyn_cast<CallBase>(&I);
    if (!CB)
        return true;
    auto *II = dyn_cast<IntrinsicInst>(CB);
    if (!II)
        return false;
    if (IsSite) // a memory intrinsic: its lengths are checked with the sites
        return true;
    if (II->isAssumeLikeIntrinsic() || isa<DbgInfoIntrinsic>(II) || II->isLifetimeStartOrEnd())
        return true;
    return !II->mayReadOrWriteMemory() && !II->mayThrow();
}

// The address of an access is affine in L's iteration: loop-invariant, or an
// affine recurrence of L itself whose step does not change inside L.
static bool affineIn(Value *Addr, Loop *L, ScalarEvolution &SE)
{
    if (!Addr || !SE.isSCEVable(Addr->getType()))
        return false;
    const SCEV *S = SE.getSCEV(Addr);
    if (isa<SCEVCouldNotCompute>(S))
        return false;
    if (SE.isLoopInvariant(S, L))
        return true;
    auto *AR = dyn_cast<SCEVAddRecExpr>(S);
    return AR && AR->getLoop() == L && AR->isAffine() &&
           SE.isLoopInvariant(AR->getStepRecurrence(SE), L);
}

const char *whyNoDescriptors(BasicBlock &BB, const std::vector<AccessSite> &Sites, LoopInfo &LI,
                             ScalarEvolution &SE, uint64_t &Irregular)
{
    Irregular = 0;
    Loop *L = LI.getLoopFor(&BB);
    if (!L || L->getHeader() != &BB)
        return "not a loop header";
    if (!L->isInnermost())
        return "not an innermost loop";
    if (L->getNumBlocks() != 1)
        return "body of several blocks";
    // one way round and one way out, decided at the end of the iteration
    auto *Br = dyn_cast<BranchInst>(BB.getTerminator());
    if (!Br || !Br->isConditional() || (Br->getSuccessor(0) == &BB) == (Br->getSuccessor(1) == &BB))
        return "not one back edge and one exit";
    if (BB.isEHPad() || BB.hasAddressTaken())
        return "exception pad or address-taken block";
    if (1 + Sites.size() > PES_RT_LOOP_MAX)
        return "more records per iteration than a descriptor holds";
    LLVMContext &C = BB.getContext();
    for (size_t J = 0; J < Sites.size(); J++) {
        const AccessSite &S = Sites[J];
        // one record per access, with an extra the copy can know in advance
        if (S.laneMask)
            return "a gather or scatter";
        if (!RecordEmitter::constantExtra(C, S))
            return "a memory intrinsic of run-time length";
        if (!affineIn(S.addr, L, SE)) // its address goes into the chunk each iteration
            Irregular |= uint64_t{1} << (J + 1);
    }
    for (Instruction &I : BB) {
        SmallVector<AccessSite, 2> Found;
        classifyAccess(I, BB.getModule()->getDataLayout(), Found);
        if (!allowedInBody(I, !Found.empty()))
            return "a call";
    }
    return nullptr;
}

namespace
{

// The stack layout of struct pes_rt_loop for m records (rt_abi.h).
struct DescLayout {
    unsigned M;
    uint64_t tmpl(unsigned J, size_t Field) const
    {
        return offsetof(pes_rt_loop, tmpl) + J * sizeof(pes_record) + Field;
    }
    uint64_t step(unsigned J) const
    {
        return offsetof(pes_rt_loop, tmpl) + M * sizeof(pes_record) + J * sizeof(int64_t);
    }
    // the irregular addresses, iteration-major (pes_rt_loop_addrs)
    uint64_t addr(unsigned Slot) const
    {
        return step(M) + Slot * sizeof(uint64_t);
    }
    uint64_t bytes(bool Mixed) const
    {
        return Mixed ? addr(PES_RT_LOOP_ADDRS) : step(M);
    }
};

void storeAt(IRBuilder<> &B, Value *Base, uint64_t Off, Value *V)
{
    Value *P = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base, Off);
    quiet(B.CreateAlignedStore(V, P, Align(Off % 8 == 0 ? 8 : 4)));
}

Value *loadAt(IRBuilder<> &B, Value *Base, uint64_t Off, Type *T)
{
    Value *P = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base, Off);
    return quiet(B.CreateAlignedLoad(T, P, Align(8)));
}

} // namespace

std::vector<AllocaInst *> addDescriptorCopy(Instruction *Start, uint32_t BlockLocal,
                                            const std::vector<LoopSite> &Sites, uint64_t Irregular,
                                            RecordEmitter &E)
{
    BasicBlock *Head = Start->getParent();
    Function &F = *Head->getParent();
    LLVMContext &C = F.getContext();
    const DataLayout &DL = F.getParent()->getDataLayout();
    Type *I32 = Type::getInt32Ty(C), *I64 = Type::getInt64Ty(C);
    const DescLayout L{static_cast<unsigned>(1 + Sites.size())};
    auto isIrregular = [&](unsigned J) { return (Irregular >> J & 1) != 0; };
    const unsigned K = static_cast<unsigned>(llvm::popcount(Irregular));

    // The recording body's back edge goes to the loop header (the check
    // clone's switch test before Head, or Head itself); its exit elsewhere.
    auto *Br = cast<BranchInst>(Head->getTerminator());
    unsigned BackIdx = 0;
    BasicBlock *Header = nullptr;
    for (unsigned K = 0; K < 2; K++) {
        BasicBlock *S = Br->getSuccessor(K);
        if (S == Head || llvm::is_contained(successors(S), Head)) {
            Header = S;
            BackIdx = K;
            break;
        }
    }
    BasicBlock *Exit = Header ? Br->getSuccessor(1 - BackIdx) : nullptr;
    if (!Header || Exit == Header || Exit == Head)
        return {};

    // Slots: iterations of the open chunk (0 = no chunk open), its size, the descriptor.
    IRBuilder<> A(&*F.getEntryBlock().getFirstInsertionPt());
    AllocaInst *Count = A.CreateAlloca(I64, nullptr, "pes.loop.n");
    AllocaInst *Budget = A.CreateAlloca(I64, nullptr, "pes.loop.budget");
    AllocaInst *Desc = A.CreateAlloca(ArrayType::get(Type::getInt8Ty(C), L.bytes(K > 0)), nullptr,
                                      "pes.loop.desc");
    Desc->setAlignment(Align(8));
    {
        IRBuilder<> I(F.getEntryBlock().getTerminator());
        quiet(I.CreateStore(ConstantInt::get(I64, 0), Count));
        quiet(I.CreateStore(ConstantInt::get(I64, 1), Budget));
    }

    // Head becomes the choice; Body keeps the recording form; Copy runs without
    // records. The whole block is copied, with the reloads of demoted values
    // that come before Start.
    BasicBlock *Body = SplitBlock(Head, &*Head->getFirstInsertionPt());
    ValueToValueMapTy VMap;
    BasicBlock *Copy = CloneBasicBlock(Body, VMap, ".pes.loop", &F);
    SmallVector<BasicBlock *, 1> CopyBlocks{Copy};
    remapInstructionsInBlocks(CopyBlocks, VMap);
    {
        Instruction *T = Head->getTerminator();
        Value *On = E.descriptors(T);
        BranchInst::Create(Copy, Body, On, Head);
        T->eraseFromParent();
    }

    // The copy's records: the block record, then each access (addresses of the copy).
    std::vector<Value *> Addr(L.M), Id(L.M), Extra(L.M);
    Instruction *CopyBr = Copy->getTerminator();
    Addr[0] = ConstantInt::get(I64, 0);
    Id[0] = E.globalId(CopyBr, BlockLocal);
    Extra[0] = ConstantInt::get(I32, 0);
    for (size_t J = 0; J < Sites.size(); J++) {
        auto *CI = cast<Instruction>(VMap[Sites[J].I]);
        SmallVector<AccessSite, 2> Now;
        classifyAccess(*CI, DL, Now);
        const AccessSite &S = Now[Sites[J].Index];
        IRBuilder<> B(CopyBr);
        Addr[J + 1] = S.addr->getType()->isPointerTy() ? B.CreatePtrToInt(S.addr, I64)
                                                       : B.CreateZExtOrTrunc(S.addr, I64);
        Id[J + 1] = E.globalId(CopyBr, Sites[J].Local);
        Extra[J + 1] = RecordEmitter::constantExtra(C, S);
    }

    // End of an iteration: store its irregular addresses, count it; the first
    // two iterations of a chunk and its last take the cold path (record
    // templates, steps, hand the chunk over).
    auto *CopyCond = cast<BranchInst>(CopyBr);
    Value *Cond = CopyCond->getCondition();
    BasicBlock *Cold = BasicBlock::Create(C, "pes.loop.cold", &F);
    BasicBlock *Cap0 = BasicBlock::Create(C, "pes.loop.first", &F);
    BasicBlock *Test1 = BasicBlock::Create(C, "pes.loop.second.test", &F);
    BasicBlock *Cap1 = BasicBlock::Create(C, "pes.loop.second", &F);
    BasicBlock *FullTest = BasicBlock::Create(C, "pes.loop.full.test", &F);
    BasicBlock *Flush = BasicBlock::Create(C, "pes.loop.flush", &F);
    BasicBlock *Tail = BasicBlock::Create(C, "pes.loop.next", &F);
    BasicBlock *ExitFlush = BasicBlock::Create(C, "pes.loop.exit", &F);

    IRBuilder<> B(CopyBr);
    Value *N = quiet(B.CreateLoad(I64, Count, "pes.loop.i"));
    // a mixed body: this iteration's irregular addresses at addr[N * K + r]
    if (K) {
        Value *Slot = B.CreateMul(N, ConstantInt::get(I64, K));
        Value *Base =
            B.CreateGEP(B.getInt8Ty(), Desc,
                        B.CreateAdd(B.CreateShl(Slot, 3), ConstantInt::get(I64, L.addr(0))));
        for (unsigned J = 0, R = 0; J < L.M; J++)
            if (isIrregular(J)) {
                Value *P = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base, 8 * R++);
                quiet(B.CreateAlignedStore(Addr[J], P, Align(8)));
            }
    }
    Value *N1 = B.CreateAdd(N, ConstantInt::get(I64, 1));
    quiet(B.CreateStore(N1, Count));
    Value *Bud = quiet(B.CreateLoad(I64, Budget, "pes.loop.budget"));
    Value *IsCold =
        B.CreateOr(B.CreateICmpULT(N, ConstantInt::get(I64, 2)), B.CreateICmpUGE(N1, Bud));
    B.CreateCondBr(IsCold, Cold, Tail);
    CopyBr->eraseFromParent();

    // Tail: the loop goes on in the copy, or leaves it through the exit flush.
    {
        IRBuilder<> T(Tail);
        BasicBlock *Succ[2];
        Succ[BackIdx] = Copy;
        Succ[1 - BackIdx] = ExitFlush;
        T.CreateCondBr(Cond, Succ[0], Succ[1]);
    }
    {
        IRBuilder<> T(Cold);
        T.CreateCondBr(T.CreateICmpEQ(N, ConstantInt::get(I64, 0)), Cap0, Test1);
    }
    {
        // the chunk's first iteration: templates, zero steps, the chunk's size
        IRBuilder<> T(Cap0);
        for (unsigned J = 0; J < L.M; J++) {
            storeAt(T, Desc, L.tmpl(J, offsetof(pes_record, addr)), Addr[J]);
            storeAt(T, Desc, L.tmpl(J, offsetof(pes_record, id)), Id[J]);
            storeAt(T, Desc, L.tmpl(J, offsetof(pes_record, extra)), Extra[J]);
            storeAt(T, Desc, L.step(J), ConstantInt::get(I64, 0));
        }
        // iterations up to and including the one where the next time mark
        // falls, so that each chunk carries one mark (the runtime cuts it there)
        Value *Room = E.bytesBelowLimit(T);
        Room = T.CreateSelect(T.CreateICmpSLT(Room, ConstantInt::get(I64, 0)),
                              ConstantInt::get(I64, 0), Room);
        Value *AtLeast1 =
            T.CreateAdd(T.CreateUDiv(Room, ConstantInt::get(I64, L.M * sizeof(pes_record))),
                        ConstantInt::get(I64, 1));
        if (K) // no more iterations than the address array holds
            AtLeast1 = T.CreateBinaryIntrinsic(Intrinsic::umin, AtLeast1,
                                               ConstantInt::get(I64, PES_RT_LOOP_ADDRS / K));
        quiet(T.CreateStore(AtLeast1, Budget));
        T.CreateBr(FullTest);
    }
    {
        IRBuilder<> T(Test1);
        T.CreateCondBr(T.CreateICmpEQ(N, ConstantInt::get(I64, 1)), Cap1, FullTest);
    }
    {
        // the second: each address's step
        IRBuilder<> T(Cap1);
        for (unsigned J = 1; J < L.M; J++) {
            if (isIrregular(J))
                continue;
            Value *First = loadAt(T, Desc, L.tmpl(J, offsetof(pes_record, addr)), I64);
            storeAt(T, Desc, L.step(J), T.CreateSub(Addr[J], First));
        }
        T.CreateBr(FullTest);
    }
    auto handOver = [&](IRBuilder<> &T, Value *Iterations) {
        storeAt(T, Desc, offsetof(pes_rt_loop, iterations), Iterations);
        storeAt(T, Desc, offsetof(pes_rt_loop, m), ConstantInt::get(I32, L.M));
        storeAt(T, Desc, offsetof(pes_rt_loop, reserved), ConstantInt::get(I32, 0));
        storeAt(T, Desc, offsetof(pes_rt_loop, irregular), ConstantInt::get(I64, Irregular));
        E.emitLoopFlush(T, Desc);
        quiet(T.CreateStore(ConstantInt::get(I64, 0), Count));
    };
    {
        IRBuilder<> T(FullTest);
        Value *Now = quiet(T.CreateLoad(I64, Budget));
        T.CreateCondBr(T.CreateICmpUGE(N1, Now), Flush, Tail);
    }
    {
        // a full chunk: hand it over and go round through the header, which
        // tests `recording` and `descriptors` again
        IRBuilder<> T(Flush);
        handOver(T, N1);
        BasicBlock *Succ[2];
        Succ[BackIdx] = Header;
        Succ[1 - BackIdx] = Exit;
        T.CreateCondBr(Cond, Succ[0], Succ[1]);
    }
    {
        IRBuilder<> T(ExitFlush);
        handOver(T, quiet(T.CreateLoad(I64, Count)));
        T.CreateBr(Exit);
    }
    return {Count, Budget};
}

} // namespace pes
