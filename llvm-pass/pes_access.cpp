// pes_access.cpp — classification of memory-access instructions into sites.
#include "pes_access.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

#include "pes/rt_abi.h"

using namespace llvm;

namespace pes
{

// Store size of a type in bytes; 0 if unknown at compile time (scalable vectors).
static uint32_t storeSize(const DataLayout &DL, Type *T)
{
    TypeSize S = DL.getTypeStoreSize(T);
    if (S.isScalable())
        return 0;
    uint64_t V = S.getFixedValue();
    return V > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(V);
}

static bool isScalable(Type *T)
{
    return isa<ScalableVectorType>(T);
}

static void addScalar(SmallVectorImpl<AccessSite> &Out, uint8_t Kind, Value *Ptr, Type *T,
                      uint8_t Flags, const DataLayout &DL)
{
    if (isScalable(T))
        return; // size unknown statically: not instrumented (documented)
    AccessSite S;
    S.kind = Kind;
    S.addr = Ptr;
    S.size = storeSize(DL, T);
    S.flags = Flags | (T->isVectorTy() ? PES_SITE_VECTOR : 0);
    Out.push_back(S);
}

static void addRange(SmallVectorImpl<AccessSite> &Out, uint8_t Kind, Value *Ptr, Value *Len,
                     uint8_t Flags)
{
    AccessSite S;
    S.kind = Kind;
    S.addr = Ptr;
    S.length = Len;
    S.flags = Flags;
    // A constant length is also the static size; the record still carries it in extra.
    if (auto *C = dyn_cast<ConstantInt>(Len))
        if (C->getValue().getActiveBits() <= 32)
            S.size = static_cast<uint32_t>(C->getZExtValue());
    Out.push_back(S);
}

static void addLanes(SmallVectorImpl<AccessSite> &Out, uint8_t Kind, Value *Ptrs, Value *Mask,
                     Type *VecTy, const DataLayout &DL)
{
    auto *FV = dyn_cast<FixedVectorType>(VecTy);
    if (!FV)
        return;
    AccessSite S;
    S.kind = Kind;
    S.addr = Ptrs;
    S.laneMask = Mask;
    S.lanes = FV->getNumElements();
    S.size = storeSize(DL, FV->getElementType());
    Out.push_back(S);
}

void classifyAccess(Instruction &I, const DataLayout &DL, SmallVectorImpl<AccessSite> &Out)
{
    // Accesses added by instrumentation (sanitizer shadow checks, our own
    // records) carry !nosanitize: they are not the program's.
    if (I.hasMetadata(LLVMContext::MD_nosanitize))
        return;
    if (auto *LI = dyn_cast<LoadInst>(&I)) {
        if (LI->getPointerOperand()->isSwiftError())
            return;
        uint8_t F =
            (LI->isVolatile() ? PES_SITE_VOLATILE : 0) | (LI->isAtomic() ? PES_SITE_ATOMIC : 0);
        addScalar(Out, PES_KIND_LOAD, LI->getPointerOperand(), LI->getType(), F, DL);
        return;
    }
    if (auto *SI = dyn_cast<StoreInst>(&I)) {
        if (SI->getPointerOperand()->isSwiftError())
            return;
        uint8_t F =
            (SI->isVolatile() ? PES_SITE_VOLATILE : 0) | (SI->isAtomic() ? PES_SITE_ATOMIC : 0);
        addScalar(Out, PES_KIND_STORE, SI->getPointerOperand(), SI->getValueOperand()->getType(), F,
                  DL);
        return;
    }
    if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
        uint8_t F = PES_SITE_ATOMIC | (RMW->isVolatile() ? PES_SITE_VOLATILE : 0);
        addScalar(Out, PES_KIND_RMW, RMW->getPointerOperand(), RMW->getValOperand()->getType(), F,
                  DL);
        return;
    }
    if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
        uint8_t F = PES_SITE_ATOMIC | (CX->isVolatile() ? PES_SITE_VOLATILE : 0);
        addScalar(Out, PES_KIND_CMPXCHG, CX->getPointerOperand(), CX->getNewValOperand()->getType(),
                  F, DL);
        return;
    }
    if (auto *MT = dyn_cast<MemTransferInst>(&I)) { // memcpy, memmove, memcpy.inline
        uint8_t F = MT->isVolatile() ? PES_SITE_VOLATILE : 0;
        addRange(Out, PES_KIND_COPY_SRC, MT->getRawSource(), MT->getLength(), F);
        addRange(Out, PES_KIND_COPY_DST, MT->getRawDest(), MT->getLength(), F);
        return;
    }
    if (auto *MS = dyn_cast<MemSetInst>(&I)) { // memset, memset.inline
        addRange(Out, PES_KIND_SET_DST, MS->getRawDest(), MS->getLength(),
                 MS->isVolatile() ? PES_SITE_VOLATILE : 0);
        return;
    }
    auto *II = dyn_cast<IntrinsicInst>(&I);
    if (!II)
        return;
    const uint8_t Masked = PES_SITE_MASKED;
    switch (II->getIntrinsicID()) {
    case Intrinsic::masked_load: // (ptr, align, mask, passthru): whole vector range
        addScalar(Out, PES_KIND_LOAD, II->getArgOperand(0), II->getType(), Masked, DL);
        break;
    case Intrinsic::masked_store: // (value, ptr, align, mask)
        addScalar(Out, PES_KIND_STORE, II->getArgOperand(1), II->getArgOperand(0)->getType(),
                  Masked, DL);
        break;
    case Intrinsic::masked_expandload: // (ptr, mask, passthru): range is an over-approximation
        addScalar(Out, PES_KIND_LOAD, II->getArgOperand(0), II->getType(), Masked, DL);
        break;
    case Intrinsic::masked_compressstore: // (value, ptr, mask)
        addScalar(Out, PES_KIND_STORE, II->getArgOperand(1), II->getArgOperand(0)->getType(),
                  Masked, DL);
        break;
    case Intrinsic::masked_gather: // (ptrs, align, mask, passthru)
        addLanes(Out, PES_KIND_GATHER, II->getArgOperand(0), II->getArgOperand(2), II->getType(),
                 DL);
        break;
    case Intrinsic::masked_scatter: // (value, ptrs, align, mask)
        addLanes(Out, PES_KIND_SCATTER, II->getArgOperand(1), II->getArgOperand(3),
                 II->getArgOperand(0)->getType(), DL);
        break;
    default:
        break;
    }
}

} // namespace pes
