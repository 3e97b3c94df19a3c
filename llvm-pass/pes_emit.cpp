// pes_emit.cpp — emission of the inline record hot path (pes/rt_abi.h).
#include "pes_emit.h"

#include "llvm_compat.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include "pes/rt_abi.h"

#include <cstddef>
#include <functional>

using namespace llvm;

static_assert(offsetof(pes_rt_tls, cursor) == 0 && offsetof(pes_rt_tls, limit) == 8 &&
                  offsetof(pes_rt_tls, countdown) == 16 && offsetof(pes_rt_tls, recording) == 24 &&
                  offsetof(pes_rt_tls, descriptors) == 28 && sizeof(pes_rt_tls) == 32,
              "pes_rt_tls layout changed: update RecordEmitter");
static_assert(offsetof(pes_record, addr) == 0 && offsetof(pes_record, id) == 8 &&
                  offsetof(pes_record, extra) == 12 && sizeof(pes_record) == 16,
              "pes_record layout changed: update RecordEmitter");

namespace pes
{

Instruction *quiet(Value *V)
{
    auto *I = cast<Instruction>(V);
    I->setMetadata(LLVMContext::MD_nosanitize, MDNode::get(I->getContext(), {}));
    return I;
}

RecordEmitter::RecordEmitter(Module &Mod) : M(Mod), C(Mod.getContext())
{
    I32 = Type::getInt32Ty(C);
    I64 = Type::getInt64Ty(C);
    Ptr = PointerType::getUnqual(C);
    auto *TlsTy = StructType::get(C, {Ptr, Ptr, I64, I32, I32});
    Tls = M.getGlobalVariable("__pes_tls");
    if (!Tls) {
        Tls = new GlobalVariable(M, TlsTy, false, GlobalValue::ExternalLinkage, nullptr,
                                 "__pes_tls", nullptr, GlobalValue::InitialExecTLSModel);
    }
    Tls->setThreadLocalMode(GlobalValue::InitialExecTLSModel);
    AttributeList Attrs =
        AttributeList().addFnAttribute(C, Attribute::NoUnwind).addFnAttribute(C, Attribute::Cold);
    // x86-64: the slow paths save the registers they use (preserve_most,
    // PES_RT_SLOW_CC in rt_abi.h), so values live across a record or a countdown
    // stay in caller-saved registers instead of taking callee-saved ones or
    // spill slots: the frame stays that of the uninstrumented function. Called
    // through the GOT: a lazily bound PLT entry's resolver clobbers r10.
    if (Triple(M.getTargetTriple()).getArch() == Triple::x86_64) {
        SlowCC = CallingConv::PreserveMost;
        Attrs = Attrs.addFnAttribute(C, Attribute::NonLazyBind);
    }
    Slow = M.getOrInsertFunction("__pes_record_slow", Attrs, Type::getVoidTy(C), I64, I64);
    CheckDue = M.getOrInsertFunction("__pes_check_due", Attrs, I32, I64);
    LoopFlush = M.getOrInsertFunction("__pes_loop_flush", Attrs, Type::getVoidTy(C), Ptr);
    for (FunctionCallee FC : {Slow, CheckDue, LoopFlush})
        if (auto *Fn = dyn_cast<Function>(FC.getCallee()))
            Fn->setCallingConv(SlowCC);
    Weights = pes_compat::unlikelyWeights(C);
}

void RecordEmitter::beginFunction(Instruction *IP, GlobalVariable *IdBase)
{
    IRBuilder<> B(IP);
    IdBaseVal = quiet(B.CreateLoad(I32, IdBase, "pes.idbase"));
    TlsAddr = pes_compat::threadLocalAddress(B, Tls);
    Carry = IP->getFunction()->hasOptNone();
    CarrySlots.clear();
}

Value *RecordEmitter::tlsField(IRBuilder<> &B, size_t Offset)
{
    if (Offset == 0)
        return TlsAddr;
    return B.CreateConstInBoundsGEP1_64(Type::getInt8Ty(C), TlsAddr, Offset);
}

// At -O0 the fast register allocator gives every value that lives across a
// block boundary or a call a stack slot of its own, for the whole function:
// each record (a branch around a call) would add a slot for every value live
// across it, about 30 bytes per record. So in optnone functions, the values of
// From that are used beyond it (in the record's arms, or in Cont, From's only
// way on) are recomputed there if they are cheap arithmetic on values from
// elsewhere, else they go through a few slots shared by all records: each
// slot is written at the end of From and read back at once in the blocks that
// use it, so records never see each other's values.
bool RecordEmitter::local(const Value *V, const BasicBlock *From) const
{
    auto *I = dyn_cast<Instruction>(V);
    return I && I->getParent() == From && I != IdBaseVal && I != TlsAddr &&
           !(isa<AllocaInst>(I) && cast<AllocaInst>(I)->isStaticAlloca());
}

bool RecordEmitter::recomputable(const Instruction *I, const BasicBlock *From) const
{
    if (!isa<CastInst>(I) && !isa<GetElementPtrInst>(I) &&
        !(isa<BinaryOperator>(I) && !I->isIntDivRem()))
        return false;
    for (const Value *Op : I->operands())
        if (local(Op, From) && !recomputable(cast<Instruction>(Op), From))
            return false;
    return true;
}

void RecordEmitter::carry(BasicBlock *From, BasicBlock *Cont)
{
    Function &F = *From->getParent();
    std::vector<Instruction *> Values;
    for (Instruction &I : *From)
        if (local(&I, From) && !I.getType()->isTokenTy() && I.isUsedOutsideOfBlock(From))
            Values.push_back(&I);
    // where to put the copies and reloads of a block (fixed: they stay in order)
    DenseMap<BasicBlock *, Instruction *> Top;
    DenseMap<std::pair<Instruction *, BasicBlock *>, Value *> Copies;
    std::function<Value *(Instruction *, BasicBlock *)> copy = [&](Instruction *V, BasicBlock *At) {
        Value *&R = Copies[{V, At}];
        if (!R) {
            Instruction *N = V->clone();
            for (Use &Op : N->operands())
                if (local(Op.get(), From))
                    Op.set(copy(cast<Instruction>(Op.get()), At));
            N->insertBefore(Top[At]);
            R = N;
        }
        return R;
    };
    DenseMap<Type *, unsigned> Used;
    for (Instruction *V : Values) {
        AllocaInst *Slot = nullptr;
        if (!recomputable(V, From)) {
            Type *T = V->getType();
            unsigned K = Used[T]++;
            auto &Slots = CarrySlots[T];
            if (Slots.size() == K) {
                IRBuilder<> A(&*F.getEntryBlock().getFirstInsertionPt());
                Slots.push_back(A.CreateAlloca(T, nullptr, "pes.carry"));
            }
            Slot = Slots[K];
            quiet(new StoreInst(V, Slot, From->getTerminator()));
        }
        for (Use &U : make_early_inc_range(V->uses())) {
            BasicBlock *UB = cast<Instruction>(U.getUser())->getParent();
            if (UB == From)
                continue;
            // the record's arms are only reached from From; every other use through Cont
            BasicBlock *At = UB->getSinglePredecessor() == From ? UB : Cont;
            if (!Top.count(At))
                Top[At] = &*At->getFirstInsertionPt();
            if (!Slot) {
                U.set(copy(V, At));
                continue;
            }
            Value *&R = Copies[{V, At}];
            if (!R)
                R = quiet(new LoadInst(V->getType(), Slot, V->getName() + ".c", Top[At]));
            U.set(R);
        }
    }
}

Value *RecordEmitter::recording(Instruction *Before)
{
    IRBuilder<> B(Before);
    Value *R = quiet(B.CreateAlignedLoad(I32, tlsField(B, offsetof(pes_rt_tls, recording)),
                                         Align(8), "pes.rec"));
    return B.CreateICmpNE(R, ConstantInt::get(I32, 0));
}

Value *RecordEmitter::descriptors(Instruction *Before)
{
    IRBuilder<> B(Before);
    Value *D = quiet(B.CreateAlignedLoad(I32, tlsField(B, offsetof(pes_rt_tls, descriptors)),
                                         Align(4), "pes.desc"));
    return B.CreateICmpNE(D, ConstantInt::get(I32, 0));
}

Value *RecordEmitter::bytesBelowLimit(IRBuilder<> &B)
{
    Value *Cur = quiet(B.CreateLoad(Ptr, TlsAddr, "pes.cur"));
    Value *Lim = quiet(B.CreateLoad(Ptr, tlsField(B, offsetof(pes_rt_tls, limit)), "pes.lim"));
    return B.CreateSub(B.CreatePtrToInt(Lim, I64), B.CreatePtrToInt(Cur, I64), "pes.room");
}

void RecordEmitter::emitLoopFlush(IRBuilder<> &B, Value *Desc)
{
    B.CreateCall(LoopFlush, {Desc})->setCallingConv(SlowCC);
}

ConstantInt *RecordEmitter::constantExtra(LLVMContext &Ctx, const AccessSite &S)
{
    Type *T32 = Type::getInt32Ty(Ctx);
    if (!S.length)
        return ConstantInt::get(cast<IntegerType>(T32), 0);
    auto *CL = dyn_cast<ConstantInt>(S.length);
    if (!CL)
        return nullptr;
    // as clampLength: beyond 4 GiB saturates
    return ConstantInt::get(cast<IntegerType>(T32),
                            CL->getValue().ugt(UINT32_MAX) ? UINT32_MAX : CL->getZExtValue());
}

void RecordEmitter::emitCountdown(Instruction *Before, Value *Weight, BasicBlock *Recording)
{
    IRBuilder<> B(Before);
    // load, subtract, store, sign test: x86 folds it into one `sub` on memory + `js`
    Value *CountdownPtr = tlsField(B, offsetof(pes_rt_tls, countdown));
    Value *D = quiet(B.CreateAlignedLoad(I64, CountdownPtr, Align(8), "pes.cd"));
    Value *Left = B.CreateSub(D, Weight, "pes.left");
    quiet(B.CreateAlignedStore(Left, CountdownPtr, Align(8)));
    Value *Due = B.CreateICmpSLT(Left, ConstantInt::get(I64, 0));
    BasicBlock *Head = Before->getParent();
    Instruction *Then = SplitBlockAndInsertIfThen(Due, Before, false, Weights);
    IRBuilder<> S(Then);
    CallInst *Rec = S.CreateCall(CheckDue, {Weight});
    Rec->setCallingConv(SlowCC);
    // the check block now ends in `br Before's block`: go to Recording instead if asked
    BasicBlock *Cold = Then->getParent(), *Cont = Before->getParent();
    Then->eraseFromParent();
    IRBuilder<> T(Cold);
    T.CreateCondBr(T.CreateICmpNE(Rec, ConstantInt::get(I32, 0)), Recording, Cont);
    if (Carry)
        carry(Head, Cont);
}

Value *RecordEmitter::globalId(Instruction *Before, uint32_t Local)
{
    IRBuilder<> B(Before);
    return B.CreateAdd(IdBaseVal, ConstantInt::get(I32, Local));
}

Value *RecordEmitter::addrToInt(IRBuilder<> &B, Value *Addr)
{
    if (Addr->getType()->isPointerTy())
        return B.CreatePtrToInt(Addr, I64);
    return B.CreateZExtOrTrunc(Addr, I64);
}

// Lengths beyond 4 GiB saturate to UINT32_MAX (documented in docs/llvm-pass.md).
Value *RecordEmitter::clampLength(IRBuilder<> &B, Value *Len)
{
    Len = B.CreateZExtOrTrunc(Len, I64);
    Value *Max = ConstantInt::get(I64, UINT32_MAX);
    if (auto *CL = dyn_cast<ConstantInt>(Len))
        return ConstantInt::get(I32,
                                CL->getValue().ugt(UINT32_MAX) ? UINT32_MAX : CL->getZExtValue());
    Value *Big = B.CreateICmpUGT(Len, Max);
    return B.CreateTrunc(B.CreateSelect(Big, Max, Len), I32);
}

void RecordEmitter::emit(Instruction *Before, Value *Addr, Value *Id, Value *Extra,
                         const DebugLoc &Loc)
{
    IRBuilder<> B(Before);
    B.SetCurrentDebugLocation(Loc);
    Value *A = addrToInt(B, Addr);
    Value *IdExtra = B.CreateZExt(Id, I64);
    if (Extra) {
        auto *CE = dyn_cast<ConstantInt>(Extra);
        if (!CE || !CE->isZero())
            IdExtra = B.CreateOr(IdExtra, B.CreateShl(B.CreateZExt(Extra, I64), 32));
    }
    Value *Cur = quiet(B.CreateLoad(Ptr, TlsAddr, "pes.cur"));
    Value *Lim = quiet(B.CreateLoad(Ptr, tlsField(B, offsetof(pes_rt_tls, limit)), "pes.lim"));
    Value *Full = B.CreateICmpUGE(Cur, Lim);
    BasicBlock *Head = Before->getParent();
    Instruction *ThenT = nullptr, *ElseT = nullptr;
    SplitBlockAndInsertIfThenElse(Full, Before, &ThenT, &ElseT, Weights);

    IRBuilder<> S(ThenT);
    S.SetCurrentDebugLocation(Loc);
    S.CreateCall(Slow, {A, IdExtra})->setCallingConv(SlowCC);

    IRBuilder<> F(ElseT);
    F.SetCurrentDebugLocation(Loc);
    if (Carry) // read again rather than carried (no store to it in between)
        Cur = quiet(F.CreateLoad(Ptr, TlsAddr, "pes.cur"));
    Type *I8 = Type::getInt8Ty(C);
    quiet(F.CreateAlignedStore(A, Cur, Align(8)));
    Value *IdP = F.CreateConstInBoundsGEP1_64(I8, Cur, offsetof(pes_record, id));
    if (M.getDataLayout().isLittleEndian()) {
        // id and extra are adjacent: one 8-byte store (id in the low half).
        quiet(F.CreateAlignedStore(IdExtra, IdP, Align(8)));
    } else {
        quiet(F.CreateAlignedStore(F.CreateTrunc(IdExtra, I32), IdP, Align(8)));
        Value *ExP = F.CreateConstInBoundsGEP1_64(I8, Cur, offsetof(pes_record, extra));
        quiet(F.CreateAlignedStore(F.CreateTrunc(F.CreateLShr(IdExtra, 32), I32), ExP, Align(4)));
    }
    Value *Next = F.CreateConstInBoundsGEP1_64(I8, Cur, sizeof(pes_record), "pes.next");
    quiet(F.CreateAlignedStore(Next, TlsAddr, Align(8)));
    if (Carry)
        carry(Head, Before->getParent());
}

void RecordEmitter::emitSite(Instruction *Before, const AccessSite &S, uint32_t Local,
                             const DebugLoc &Loc)
{
    if (!S.laneMask) {
        Value *Id = globalId(Before, Local);
        Value *Extra = nullptr;
        if (S.length) {
            IRBuilder<> B(Before);
            Extra = clampLength(B, S.length);
        }
        emit(Before, S.addr, Id, Extra, Loc);
        return;
    }
    // Gather/scatter: one record per active lane, extra = lane (vectors are small).
    for (unsigned L = 0; L < S.lanes; L++) {
        Instruction *At = Before;
        if (auto *CM = dyn_cast<Constant>(S.laneMask)) {
            Constant *Bit = CM->getAggregateElement(L);
            if (Bit && Bit->isNullValue())
                continue;
            if (!Bit || !isa<ConstantInt>(Bit)) { // undef/poison lane: treat as unknown
                IRBuilder<> B(Before);
                At =
                    SplitBlockAndInsertIfThen(B.CreateExtractElement(S.laneMask, L), Before, false);
            }
        } else {
            IRBuilder<> B(Before);
            At = SplitBlockAndInsertIfThen(B.CreateExtractElement(S.laneMask, L), Before, false);
        }
        IRBuilder<> B(At);
        Value *LaneAddr = B.CreateExtractElement(S.addr, L);
        emit(At, LaneAddr, globalId(At, Local), ConstantInt::get(I32, L), Loc);
    }
}

} // namespace pes
