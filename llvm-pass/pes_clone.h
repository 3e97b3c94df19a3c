// pes_clone.h — the check clone of an instrumented function (pes/rt_abi.h).
//
// Arnold & Ryder (PLDI 2001) keep two copies of each function: one that only
// counts down to the next sample, one fully instrumented, and switch between
// them at run time. Here the recording copy is the function itself (the
// records are added afterwards by PesPass); the check copy keeps a per-thread
// countdown, decremented once per *segment*: a block cut after every call
// (a longjmp or an exception never leaves a segment half counted) and before
// every gather/scatter whose active lanes are only known at run time.
#ifndef PES_CLONE_H
#define PES_CLONE_H

#include "pes_emit.h"

#include "llvm/IR/Function.h"

#include <vector>

namespace pes
{

// Can F get a check clone? No for blocks whose address is taken (computed
// goto would jump between the copies), callbr, token values (funclets,
// coroutines) and calls of returns_twice functions (setjmp): those keep the
// recording form only, which counts exactly through its records.
bool canClone(const llvm::Function &F);

// What the check clone needs to know about one site.
struct SiteRef {
    llvm::Instruction *I;
    unsigned Index; // which site of I (classifyAccess order)
};

class CheckCloner
{
  public:
    CheckCloner(llvm::Function &F, RecordEmitter &E) : F(F), E(E) {}

    // Step 1, before anything else changes F: cuts F's blocks into segments.
    // `Sites` lists every instrumented site in program order. `Body` is the
    // first block after the entry block's static allocas (PesPass splits it off).
    void segment(llvm::BasicBlock *Body, const std::vector<SiteRef> &Sites);
    // Step 2: copies the body into the check clone, dispatches at entry on
    // __pes_tls.recording (`Dispatch` ends in an unconditional branch to Body),
    // adds the countdown checks and the switches back at recording-clone loop
    // headers. Cross-block values go through allocas (promoted again by finish()).
    void clone(llvm::BasicBlock *Dispatch, llvm::GlobalVariable *IdBase);
    // Step 3, after the recording clone got its records: back to SSA (not in
    // optnone functions), with these slots too (the descriptor copies' counters).
    void promoteAlso(const std::vector<llvm::AllocaInst *> &Slots)
    {
        Demoted.insert(Demoted.end(), Slots.begin(), Slots.end());
    }
    void finish();

  private:
    struct Segment {
        llvm::BasicBlock *Block = nullptr;    // recording clone
        uint64_t Weight = 0;                  // static part
        llvm::Instruction *Dynamic = nullptr; // gather/scatter with a run-time mask
        unsigned DynamicIndex = 0;
    };
    llvm::Function &F;
    RecordEmitter &E;
    llvm::BasicBlock *Body = nullptr;
    std::vector<Segment> Segments;
    std::vector<llvm::AllocaInst *> Demoted;

    void demote(llvm::BasicBlock *Dispatch);
    void addCheck(const Segment &S, llvm::BasicBlock *Clone, llvm::Instruction *DynClone);
    void addSwitchBack(llvm::BasicBlock *Header, llvm::BasicBlock *Clone);
};

} // namespace pes

#endif
