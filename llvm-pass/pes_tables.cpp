// pes_tables.cpp — emission of the rt_abi.h tables as IR constants.
#include "pes_tables.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstddef>

using namespace llvm;

// The IR struct types below are written field by field after these layouts;
// natural alignment then gives the same offsets on every LP64 target.
static_assert(sizeof(pes_rt_site) == 24 && offsetof(pes_rt_site, column) == 4 &&
                  offsetof(pes_rt_site, kind) == 6 && offsetof(pes_rt_site, size) == 8 &&
                  offsetof(pes_rt_site, function) == 20,
              "pes_rt_site layout changed: update ModuleTables::emit");
static_assert(sizeof(pes_rt_bb) == 24 + 12 * PES_OP_COUNT &&
                  offsetof(pes_rt_bb, forks) == 16 + 4 * PES_OP_COUNT &&
                  offsetof(pes_rt_bb, chain) == 24 + 8 * PES_OP_COUNT,
              "pes_rt_bb layout changed");
static_assert(offsetof(pes_rt_module, sites) == 16 && offsetof(pes_rt_module, id_base) == 48 &&
                  sizeof(pes_rt_module) == 56,
              "pes_rt_module layout changed");

namespace pes
{

uint32_t ModuleTables::intern(StringRef S)
{
    if (S.empty())
        return 0;
    auto It = Offsets.find(S);
    if (It != Offsets.end())
        return It->second;
    uint32_t Off = static_cast<uint32_t>(Strtab.size());
    Strtab.append(S.data(), S.size());
    Strtab.push_back('\0');
    Offsets[S] = Off;
    return Off;
}

void ModuleTables::emit(Module &M, GlobalVariable *IdBase)
{
    LLVMContext &C = M.getContext();
    Type *I8 = Type::getInt8Ty(C), *I16 = Type::getInt16Ty(C), *I32 = Type::getInt32Ty(C);
    PointerType *Ptr = PointerType::getUnqual(C);
    auto *SiteTy = StructType::get(C, {I32, I16, I8, I8, I32, I32, I32, I32});
    auto *OpsTy = ArrayType::get(I32, PES_OP_COUNT);
    auto *BBTy = StructType::get(C, {I32, I32, I32, I32, OpsTy, I32, I32, OpsTy, OpsTy});
    auto *ModTy = StructType::get(C, {I32, I32, I32, I32, Ptr, Ptr, Ptr, Ptr, Ptr});
    auto i32 = [&](uint32_t V) { return ConstantInt::get(I32, V); };

    uint32_t NameOff = intern(M.getSourceFileName());

    std::vector<Constant *> SiteVals;
    for (const pes_rt_site &S : Sites)
        SiteVals.push_back(ConstantStruct::get(
            SiteTy,
            {i32(S.line), ConstantInt::get(I16, S.column), ConstantInt::get(I8, S.kind),
             ConstantInt::get(I8, S.flags), i32(S.size), i32(S.bb), i32(S.file), i32(S.function)}));
    std::vector<Constant *> BBVals;
    auto opsArray = [&](const uint32_t *V) {
        std::vector<Constant *> Vals;
        for (int K = 0; K < PES_OP_COUNT; K++)
            Vals.push_back(i32(V[K]));
        return ConstantArray::get(OpsTy, Vals);
    };
    for (const pes_rt_bb &B : BBs)
        BBVals.push_back(ConstantStruct::get(
            BBTy, {i32(B.function), i32(B.label), i32(B.n_sites), i32(B.flags), opsArray(B.ops),
                   i32(B.forks), i32(B.barriers), opsArray(B.instrs), opsArray(B.chain)}));

    auto makeArray = [&](Type *ElemTy, std::vector<Constant *> &Vals,
                         const char *Name) -> Constant * {
        if (Vals.empty())
            return ConstantPointerNull::get(Ptr);
        auto *ATy = ArrayType::get(ElemTy, Vals.size());
        auto *GV = new GlobalVariable(M, ATy, /*isConstant=*/true, GlobalValue::PrivateLinkage,
                                      ConstantArray::get(ATy, Vals), Name);
        GV->setAlignment(Align(8));
        return GV;
    };
    Constant *SitesGV = makeArray(SiteTy, SiteVals, "__pes_sites");
    Constant *BBsGV = makeArray(BBTy, BBVals, "__pes_bbs");
    auto *StrGV = new GlobalVariable(
        M, ArrayType::get(I8, Strtab.size()), true, GlobalValue::PrivateLinkage,
        ConstantDataArray::getString(C, Strtab, /*AddNull=*/false), "__pes_strtab");
    Constant *NamePtr = ConstantExpr::getInBoundsGetElementPtr(
        StrGV->getValueType(), StrGV, ArrayRef<Constant *>{i32(0), i32(NameOff)});

    Constant *Desc = ConstantStruct::get(
        ModTy, {i32(PES_RT_ABI_VERSION), i32(siteCount()), i32(bbCount()),
                i32(static_cast<uint32_t>(Strtab.size())), SitesGV, BBsGV, StrGV, NamePtr, IdBase});
    // Not constant: the runtime receives a non-const pointer.
    auto *DescGV = new GlobalVariable(M, ModTy, false, GlobalValue::InternalLinkage, Desc,
                                      "__pes_module_desc");
    DescGV->setAlignment(Align(8));

    auto *VoidTy = Type::getVoidTy(C);
    FunctionCallee Register = M.getOrInsertFunction("__pes_register_module", VoidTy, Ptr);
    Function *Ctor = Function::Create(FunctionType::get(VoidTy, false),
                                      GlobalValue::InternalLinkage, "__pes_module_ctor", M);
    Ctor->addFnAttr(Attribute::NoUnwind);
    IRBuilder<> B(BasicBlock::Create(C, "entry", Ctor));
    B.CreateCall(Register, {DescGV});
    B.CreateRetVoid();
    appendToGlobalCtors(M, Ctor, PES_RT_CTOR_PRIORITY);
}

} // namespace pes
