// pes_clone.cpp — segments, the check clone and the switches (pes_clone.h).
#include "pes_clone.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include "pes/rt_abi.h"

using namespace llvm;

namespace pes
{

// A segment never holds more accesses than this (the runtime's stores field
// stays exact for 2^24 - room stores; see collector/src/runtime/rt_check.c).
static const uint64_t MaxSegmentAccesses = 4096;

bool canClone(const Function &F)
{
    for (const BasicBlock &BB : F) {
        if (BB.hasAddressTaken())
            return false;
        for (const Instruction &I : BB) {
            if (isa<CallBrInst>(I) || I.getType()->isTokenTy())
                return false;
            if (const auto *CB = dyn_cast<CallBase>(&I))
                if (CB->hasFnAttr(Attribute::ReturnsTwice))
                    return false;
        }
    }
    return true;
}

// A call after which the rest of the block may not run (longjmp, exception,
// exit): the next access starts a new segment.
static bool endsSegment(const Instruction &I)
{
    const auto *CB = dyn_cast<CallBase>(&I);
    return CB && !isa<IntrinsicInst>(CB) && !CB->isInlineAsm();
}

static bool dynamicLanes(const AccessSite &S)
{
    if (!S.laneMask)
        return false;
    auto *CM = dyn_cast<Constant>(S.laneMask);
    if (!CM)
        return true;
    for (unsigned L = 0; L < S.lanes; L++) {
        Constant *Bit = CM->getAggregateElement(L);
        if (!Bit || !isa<ConstantInt>(Bit))
            return true;
    }
    return false;
}

// Loads and stores of one record (memcpy's source and destination are two sites).
static uint64_t siteWeight(uint8_t Kind)
{
    uint64_t R = pes_kind_reads(Kind) ? 1 : 0, W = pes_kind_writes(Kind) ? 1 : 0;
    return (R + W) << PES_RT_WEIGHT_SHIFT | W;
}

static uint64_t accesses(uint64_t Weight)
{
    return Weight >> PES_RT_WEIGHT_SHIFT;
}

static unsigned activeLanes(const AccessSite &S)
{
    if (!S.laneMask)
        return 1;
    unsigned N = 0;
    auto *CM = cast<Constant>(S.laneMask);
    for (unsigned L = 0; L < S.lanes; L++)
        N += !CM->getAggregateElement(L)->isNullValue();
    return N;
}

void CheckCloner::segment(BasicBlock *BodyBlock, const std::vector<SiteRef> &Sites)
{
    Body = BodyBlock;
    // Sites of each instruction, in classifyAccess order.
    DenseMap<Instruction *, SmallVector<unsigned, 2>> Of;
    for (const SiteRef &R : Sites)
        Of[R.I].push_back(R.Index);
    std::vector<BasicBlock *> Blocks;
    for (BasicBlock &BB : F)
        Blocks.push_back(&BB);
    for (BasicBlock *BB : Blocks) {
        std::vector<Instruction *> Insts;
        for (Instruction &I : *BB)
            Insts.push_back(&I);
        BasicBlock *Cur = BB;
        bool Open = false, SawCall = false;
        Segment Seg;
        auto start = [&](Instruction *At, bool Cut) {
            if (Open)
                Segments.push_back(Seg);
            Seg = Segment();
            // a landing pad block cannot be branched to: its segment starts after the pad
            if ((Cut && At != &*Cur->getFirstInsertionPt()) || Cur->isEHPad())
                Cur = SplitBlock(Cur, At);
            Seg.Block = Cur;
            Open = true;
            SawCall = false;
        };
        for (Instruction *I : Insts) {
            auto It = Of.find(I);
            if (It != Of.end()) {
                SmallVector<AccessSite, 2> Found;
                classifyAccess(*I, F.getParent()->getDataLayout(), Found);
                for (unsigned K : It->second) {
                    const AccessSite &S = Found[K];
                    bool Dyn = dynamicLanes(S);
                    // Cut before I after a call, before a run-time lane count (its check
                    // sits right before it: the recording clone resumes exactly there),
                    // and when a segment grows too long. The first segment of a block
                    // starts at the block (nothing before I has run in either copy).
                    if (!Open)
                        start(I, SawCall || Dyn);
                    else if (SawCall || Dyn || Seg.Dynamic ||
                             accesses(Seg.Weight) + S.lanes + 1 > MaxSegmentAccesses)
                        start(I, true);
                    if (Dyn) {
                        Seg.Dynamic = I;
                        Seg.DynamicIndex = K;
                    } else {
                        Seg.Weight += siteWeight(S.kind) * activeLanes(S);
                    }
                }
            }
            if (endsSegment(*I))
                SawCall = true;
        }
        if (Open)
            Segments.push_back(Seg);
    }
}

void CheckCloner::demote(BasicBlock *Dispatch)
{
    // As reg2mem: every PHI and every value used outside its block goes through
    // a stack slot, so that the copies can jump into each other anywhere.
    std::vector<PHINode *> Phis;
    for (BasicBlock &BB : F)
        for (PHINode &P : BB.phis())
            Phis.push_back(&P);
    for (PHINode *P : Phis)
        Demoted.push_back(DemotePHIToStack(P));
    std::vector<Instruction *> Values;
    for (BasicBlock &BB : F)
        for (Instruction &I : BB)
            if (!(isa<AllocaInst>(I) && &BB == Dispatch) && I.isUsedOutsideOfBlock(&BB))
                Values.push_back(&I);
    // An invoke's value is stored at the start of its normal destination. That
    // block may be where the other copy jumps in (a segment start, a loop
    // header), on a path where this invoke never ran: the store gets a block of
    // its own on the invoke's normal edge, which nothing else branches to.
    for (Instruction *I : Values)
        if (auto *II = dyn_cast<InvokeInst>(I)) {
            BasicBlock *From = II->getParent(), *To = II->getNormalDest();
            BasicBlock *Edge =
                BasicBlock::Create(F.getContext(), To->getName() + ".pes.ret", &F, To);
            BranchInst::Create(To, Edge)->setDebugLoc(II->getDebugLoc());
            II->setNormalDest(Edge);
            To->replacePhiUsesWith(From, Edge);
        }
    for (Instruction *I : Values)
        Demoted.push_back(DemoteRegToStack(*I));
}

void CheckCloner::clone(BasicBlock *Dispatch, GlobalVariable *IdBase)
{
    demote(Dispatch);
    std::vector<BasicBlock *> Orig, Copies;
    for (BasicBlock &BB : F)
        if (&BB != Dispatch)
            Orig.push_back(&BB);
    ValueToValueMapTy VMap;
    for (BasicBlock *BB : Orig) {
        BasicBlock *C = CloneBasicBlock(BB, VMap, ".chk", &F);
        VMap[BB] = C;
        Copies.push_back(C);
    }
    remapInstructionsInBlocks(Copies, VMap);

    // Recording-clone loop headers (targets of retreating edges, so irreducible
    // loops too), found before any switch edge exists.
    SmallPtrSet<BasicBlock *, 32> OnStack, Done;
    std::vector<BasicBlock *> Headers;
    std::vector<std::pair<BasicBlock *, succ_iterator>> Stack;
    Stack.push_back({Body, succ_begin(Body)});
    OnStack.insert(Body);
    while (!Stack.empty()) {
        auto &[BB, It] = Stack.back();
        if (It == succ_end(BB)) {
            OnStack.erase(BB);
            Done.insert(BB);
            Stack.pop_back();
            continue;
        }
        BasicBlock *S = *It++;
        if (OnStack.count(S)) {
            if (!S->isEHPad() && std::find(Headers.begin(), Headers.end(), S) == Headers.end())
                Headers.push_back(S);
        } else if (!Done.count(S)) {
            OnStack.insert(S);
            Stack.push_back({S, succ_begin(S)});
        }
    }

    E.beginFunction(Dispatch->getTerminator(), IdBase);
    // Entry: which copy runs this call.
    Instruction *T = Dispatch->getTerminator();
    Value *Rec = E.recording(T);
    BranchInst::Create(Body, cast<BasicBlock>(VMap[Body]), Rec, Dispatch);
    T->eraseFromParent();

    for (const Segment &S : Segments)
        addCheck(S, cast<BasicBlock>(VMap[S.Block]),
                 S.Dynamic ? cast<Instruction>(VMap[S.Dynamic]) : nullptr);
    for (BasicBlock *H : Headers)
        addSwitchBack(H, cast<BasicBlock>(VMap[H]));
}

void CheckCloner::addCheck(const Segment &S, BasicBlock *Clone, Instruction *DynClone)
{
    LLVMContext &C = F.getContext();
    Type *I64 = Type::getInt64Ty(C);
    Value *W = ConstantInt::get(I64, S.Weight);
    Instruction *Before = &*Clone->getFirstInsertionPt();
    if (DynClone) {
        // right before the gather/scatter (after the reloads demotion put there):
        // its active lanes, each a load or a store
        SmallVector<AccessSite, 2> Found;
        classifyAccess(*DynClone, F.getParent()->getDataLayout(), Found);
        const AccessSite &D = Found[S.DynamicIndex];
        Before = DynClone;
        IRBuilder<> B(Before);
        Value *Bits = B.CreateBitCast(D.laneMask, B.getIntNTy(D.lanes));
        Value *N = B.CreateZExt(B.CreateUnaryIntrinsic(Intrinsic::ctpop, Bits), I64);
        Value *Dyn = B.CreateMul(N, ConstantInt::get(I64, siteWeight(D.kind)));
        W = B.CreateAdd(W, Dyn, "pes.weight");
    }
    E.emitCountdown(Before, W, S.Block);
}

void CheckCloner::addSwitchBack(BasicBlock *Header, BasicBlock *Clone)
{
    BasicBlock *Rest = SplitBlock(Header, &*Header->getFirstInsertionPt());
    Instruction *T = Header->getTerminator();
    Value *Rec = E.recording(T);
    BranchInst::Create(Rest, Clone, Rec, Header);
    T->eraseFromParent();
}

void CheckCloner::finish()
{
    // At -O0 every value that crosses a block boundary gets a stack slot anyway:
    // a stack slot shared by both copies is half what two promoted values take.
    if (F.hasOptNone())
        return;
    std::vector<AllocaInst *> Promotable;
    for (AllocaInst *A : Demoted)
        if (isAllocaPromotable(A))
            Promotable.push_back(A);
    if (Promotable.empty())
        return;
    DominatorTree DT(F);
    PromoteMemToReg(Promotable, DT);
}

} // namespace pes
