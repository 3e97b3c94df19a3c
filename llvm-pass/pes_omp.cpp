// pes_omp.cpp — OpenMP outlined-region detection and shared-pointer analysis.
#include "pes_omp.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace pes
{

SmallPtrSet<const Function *, 8> findOmpRegionEntries(Module &M)
{
    SmallPtrSet<const Function *, 8> Entries;
    // libomp entry points taking (ident, nargs, microtask, ...captured).
    for (const char *Name : {"__kmpc_fork_call", "__kmpc_fork_teams", "__kmpc_fork_call_if"}) {
        Function *Fork = M.getFunction(Name);
        if (!Fork)
            continue;
        for (User *U : Fork->users()) {
            auto *CB = dyn_cast<CallBase>(U);
            if (!CB || CB->getCalledOperand() != Fork || CB->arg_size() < 3)
                continue;
            if (auto *Micro = dyn_cast<Function>(CB->getArgOperand(2)->stripPointerCasts()))
                Entries.insert(Micro);
        }
    }
    return Entries;
}

void countOmpSync(const BasicBlock &BB, bool RegionEntry, uint32_t &Forks, uint32_t &Barriers)
{
    // The region is counted where its body starts, not at the fork call: a
    // program forks from code entered before the region of interest (main's
    // check clone), whose blocks are never recorded, while the outlined body
    // always runs in the recorded clone. The entry block has no predecessors,
    // so it runs once per thread per region.
    Forks = RegionEntry && BB.isEntryBlock() ? 1 : 0;
    Barriers = 0;
    for (const Instruction &I : BB) {
        auto *CB = dyn_cast<CallBase>(&I);
        const Function *Callee = CB ? CB->getCalledFunction() : nullptr;
        if (!Callee)
            continue;
        StringRef Name = Callee->getName();
        // __kmpc_reduce (not _nowait): libomp synchronises the team inside it
        // and __kmpc_end_reduce (tree: a gather there, the release here;
        // atomic/critical: one barrier in the end call), one barrier per pair,
        // counted at the first call.
        if (Name == "__kmpc_barrier" || Name == "__kmpc_cancel_barrier" || Name == "__kmpc_reduce")
            Barriers++;
    }
}

bool isOmpParallelFunction(const Function &F, const SmallPtrSetImpl<const Function *> &Entries)
{
    return Entries.count(&F) || F.getName().contains(".omp_outlined");
}

SharedPointers::SharedPointers(Function &F, const SmallPtrSetImpl<const Function *> &Entries)
{
    if (!isOmpParallelFunction(F, Entries))
        return;
    // Reduction combiners take lists of private/shared pairs, not captures.
    if (F.getName().contains(".omp.reduction."))
        return;
    SmallVector<const Value *, 32> Work;
    for (Argument &A : F.args())
        if (A.getArgNo() >= 2 && A.getType()->isPointerTy()) // 0,1: global/bound thread id
            if (Derived.insert(&A).second)
                Work.push_back(&A);
    SmallPtrSet<const AllocaInst *, 8> Slots;
    while (!Work.empty()) {
        const Value *V = Work.pop_back_val();
        for (const User *U : V->users()) {
            const Value *New = nullptr;
            if (auto *GEP = dyn_cast<GetElementPtrInst>(U)) {
                if (GEP->getPointerOperand() == V)
                    New = GEP;
            } else if (isa<BitCastInst>(U) || isa<AddrSpaceCastInst>(U) || isa<PHINode>(U)) {
                New = U;
            } else if (auto *Sel = dyn_cast<SelectInst>(U)) {
                if (Sel->getCondition() != V)
                    New = Sel;
            } else if (auto *LI = dyn_cast<LoadInst>(U)) {
                // A pointer read out of a shared variable points at shared data
                // (e.g. a shared `double *p`; p[i] is shared too).
                if (LI->getType()->isPtrOrPtrVectorTy())
                    New = LI;
            } else if (auto *SI = dyn_cast<StoreInst>(U)) {
                // -O0 spills each argument to an alloca and reloads it before use.
                auto *Slot = dyn_cast<AllocaInst>(SI->getPointerOperand());
                if (SI->getValueOperand() == V && Slot && Slots.insert(Slot).second)
                    for (const User *SU : Slot->users())
                        if (auto *Reload = dyn_cast<LoadInst>(SU))
                            if (Reload->getPointerOperand() == Slot &&
                                Reload->getType()->isPtrOrPtrVectorTy() &&
                                Derived.insert(Reload).second)
                                Work.push_back(Reload);
            }
            if (New && Derived.insert(New).second)
                Work.push_back(New);
        }
    }
}

} // namespace pes
