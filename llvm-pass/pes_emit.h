// pes_emit.h — the inline record hot path of pes/rt_abi.h, emitted after each
// access: load cursor, compare with limit, unlikely call of __pes_record_slow,
// else store the 16-byte record and bump the cursor; and the check clone's
// countdown per segment.
#ifndef PES_EMIT_H
#define PES_EMIT_H

#include "pes_access.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace pes
{

// Our own loads and stores are not program accesses: tell sanitizers that run
// after us (ASan, TSan, MSan honour !nosanitize) to leave them alone, and
// ourselves too (classifyAccess skips them) should the pass run twice.
llvm::Instruction *quiet(llvm::Value *V);

class RecordEmitter
{
  public:
    explicit RecordEmitter(llvm::Module &M);

    // Per function: loads *id_base and the TLS address once, before IP (which
    // must be in the entry block, so both dominate every later record).
    void beginFunction(llvm::Instruction *IP, llvm::GlobalVariable *IdBase);
    // idBase + Local, as an i32 (emitted before Before).
    llvm::Value *globalId(llvm::Instruction *Before, uint32_t Local);

    // One record before Before. Addr: i64 or pointer; Id: i32; Extra: i32 or null (0).
    void emit(llvm::Instruction *Before, llvm::Value *Addr, llvm::Value *Id, llvm::Value *Extra,
              const llvm::DebugLoc &Loc);
    // The record(s) of one access site: gather/scatter emit one per active lane.
    void emitSite(llvm::Instruction *Before, const AccessSite &S, uint32_t Local,
                  const llvm::DebugLoc &Loc);

    // Check clone: subtract Weight (i64) from the countdown before Before; if it
    // drops below 0 call __pes_check_due and go to Recording if it says so.
    void emitCountdown(llvm::Instruction *Before, llvm::Value *Weight, llvm::BasicBlock *Recording);
    // __pes_tls.recording != 0, as an i1 (emitted before Before).
    llvm::Value *recording(llvm::Instruction *Before);

    // Loop descriptors (pes_loops.h): __pes_tls.descriptors != 0 as an i1;
    // the bytes left below __pes_tls.limit (limit - cursor, signed i64, negative
    // when the limit is pulled to NULL); the call of __pes_loop_flush(Desc).
    llvm::Value *descriptors(llvm::Instruction *Before);
    llvm::Value *bytesBelowLimit(llvm::IRBuilder<> &B);
    void emitLoopFlush(llvm::IRBuilder<> &B, llvm::Value *Desc);
    // The value of the site's record.extra when it is a constant (0 when the
    // site has no length), or nullptr when it is only known at run time.
    static llvm::ConstantInt *constantExtra(llvm::LLVMContext &C, const AccessSite &S);

  private:
    llvm::Module &M;
    llvm::LLVMContext &C;
    llvm::Type *I32, *I64;
    llvm::PointerType *Ptr;
    llvm::GlobalVariable *Tls;
    llvm::FunctionCallee Slow, CheckDue, LoopFlush;
    llvm::CallingConv::ID SlowCC = llvm::CallingConv::C; // of Slow, CheckDue and LoopFlush
    llvm::MDNode *Weights;
    // Per function: the id base and the address of __pes_tls (its fields are
    // addressed at each use, so that no other value lives through the function).
    llvm::Value *IdBaseVal = nullptr, *TlsAddr = nullptr;
    // Per optnone function: stack slots shared by all carry() calls, by type.
    bool Carry = false;
    llvm::DenseMap<llvm::Type *, llvm::SmallVector<llvm::AllocaInst *, 2>> CarrySlots;

    llvm::Value *tlsField(llvm::IRBuilder<> &B, size_t Offset);
    llvm::Value *addrToInt(llvm::IRBuilder<> &B, llvm::Value *Addr);
    llvm::Value *clampLength(llvm::IRBuilder<> &B, llvm::Value *Len);
    bool local(const llvm::Value *V, const llvm::BasicBlock *From) const;
    bool recomputable(const llvm::Instruction *I, const llvm::BasicBlock *From) const;
    void carry(llvm::BasicBlock *From, llvm::BasicBlock *Cont);
};

} // namespace pes

#endif
