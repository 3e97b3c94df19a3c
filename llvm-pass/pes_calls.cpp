// pes_calls.cpp — call edges in the recording clone (pes_calls.h).
#include "pes_calls.h"

#include "llvm_compat.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

#include "pes/trace.h"

using namespace llvm;

namespace pes
{

// libc functions that call a function pointer argument before they return:
// with opaque pointers a function pointer held in a variable looks like any
// other pointer, so these keep their edges whatever their arguments are.
static bool callsBack(StringRef Name)
{
    return StringSwitch<bool>(Name)
        .Cases("qsort", "qsort_r", "bsearch", "lfind", "lsearch", true)
        .Cases("tsearch", "tfind", "tdelete", "twalk", "twalk_r", true)
        .Cases("scandir", "ftw", "nftw", "pthread_once", "dl_iterate_phdr", true)
        .Default(false);
}

bool needsCallEdge(const CallBase &CB, const TargetLibraryInfo &TLI)
{
    // !nosanitize: a sanitizer's own call (__asan_handle_no_return,
    // __ubsan_handle_*), not the program's, as for accesses (pes_emit.h)
    if (isa<IntrinsicInst>(CB) || CB.isInlineAsm() || CB.isMustTailCall() ||
        CB.hasFnAttr(Attribute::ReturnsTwice) || CB.hasMetadata(LLVMContext::MD_nosanitize))
        return false;
    const auto *Callee = dyn_cast<Function>(CB.getCalledOperand()->stripPointerCasts());
    if (!Callee)
        return true; // through a pointer: anything
    if (Callee->isIntrinsic() || Callee->getName().starts_with("__pes_") ||
        Callee->hasFnAttribute(Attribute::ReturnsTwice))
        return false;
    LibFunc LF;
    if (!TLI.getLibFunc(*Callee, LF) || !TLI.has(LF))
        return true;
    if (callsBack(Callee->getName()))
        return true;
    for (const Use &A : CB.args())
        if (isa<Function>(A->stripPointerCasts()))
            return true;
    return false;
}

unsigned emitCallEdges(const std::vector<CallEdge> &Edges, RecordEmitter &E)
{
    if (Edges.empty())
        return 0;
    LLVMContext &C = Edges.front().CB->getContext();
    Type *I32 = Type::getInt32Ty(C);
    Value *CallId = ConstantInt::get(I32, PES_ID_CALL),
          *ReturnId = ConstantInt::get(I32, PES_ID_RETURN);
    // The stack pointer is read where each record is: the same value before a
    // call and after it returns (x86-64 pops stack arguments before the next
    // instruction), and the unwinder gives the landing pad the caller's.
    auto ret = [&](Instruction *Before, const DebugLoc &Loc) {
        IRBuilder<> B(Before);
        E.emit(Before, pes_compat::stackPointer(B), ReturnId, nullptr, Loc);
    };
    SmallPtrSet<BasicBlock *, 8> Pads;
    unsigned Places = 0;
    for (const CallEdge &CE : Edges) {
        CallBase *CB = CE.CB;
        const DebugLoc &Loc = CB->getDebugLoc();
        {
            IRBuilder<> B(CB);
            Value *Sp = pes_compat::stackPointer(B);
            E.emit(CB, Sp, CallId, E.globalId(CB, CE.Local), Loc);
        }
        // A call that never returns (longjmp, exit, a throw) needs no RETURN
        // after it; an invoke of one still unwinds to its landing pad.
        const bool Returns = !CB->doesNotReturn();
        if (auto *II = dyn_cast<InvokeInst>(CB)) {
            BasicBlock *From = II->getParent(), *To = II->getNormalDest();
            if (Returns) {
                BasicBlock *Edge =
                    BasicBlock::Create(C, To->getName() + ".pes.call", From->getParent(), To);
                BranchInst::Create(To, Edge)->setDebugLoc(Loc);
                II->setNormalDest(Edge);
                To->replacePhiUsesWith(From, Edge);
                ret(Edge->getTerminator(), Loc);
                Places++;
            }
            BasicBlock *Pad = II->getUnwindDest();
            if (Pads.insert(Pad).second) {
                ret(&*Pad->getFirstInsertionPt(), Loc);
                Places++;
            }
        } else if (Returns) {
            ret(CB->getNextNode(), Loc);
            Places++;
        }
    }
    return Places;
}

} // namespace pes
