// llvm_compat.h — every LLVM-version-specific API the pes pass plugin uses.
// Porting the plugin to a newer LLVM should mean editing this header only.
#ifndef PES_LLVM_COMPAT_H
#define PES_LLVM_COMPAT_H

#include "llvm/Analysis/CaptureTracking.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Passes/PassBuilder.h"
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h" // moved out of Passes/ in LLVM 22
#else
#include "llvm/Passes/PassPlugin.h"
#endif

#include <string>

namespace pes_compat
{

// OptimizerLast callbacks gained a ThinOrFullLTOPhase argument in LLVM 20.
template <typename Fn> inline void registerOptimizerLast(llvm::PassBuilder &PB, Fn Callback)
{
#if LLVM_VERSION_MAJOR >= 20
    PB.registerOptimizerLastEPCallback(
        [Callback](llvm::ModulePassManager &MPM, llvm::OptimizationLevel Level,
                   llvm::ThinOrFullLTOPhase) { Callback(MPM, Level); });
#else
    PB.registerOptimizerLastEPCallback(
        [Callback](llvm::ModulePassManager &MPM, llvm::OptimizationLevel Level) {
            Callback(MPM, Level);
        });
#endif
}

// Thread-local globals are accessed through llvm.threadlocal.address (LLVM 16+).
inline llvm::Value *threadLocalAddress(llvm::IRBuilder<> &B, llvm::GlobalVariable *GV)
{
    return B.CreateThreadLocalAddress(GV);
}

inline std::string demangle(llvm::StringRef Name)
{
    return llvm::demangle(std::string_view(Name.data(), Name.size()));
}

// Capture tracking switched to CaptureComponents in LLVM 21.
inline bool mayBeCaptured(const llvm::Value *V)
{
#if LLVM_VERSION_MAJOR >= 21
    return llvm::PointerMayBeCaptured(V, /*ReturnCaptures=*/true);
#else
    return llvm::PointerMayBeCaptured(V, /*ReturnCaptures=*/true, /*StoreCaptures=*/true);
#endif
}

// The stack pointer, as a pointer (llvm.stacksave, overloaded on the address
// space since LLVM 18).
inline llvm::Value *stackPointer(llvm::IRBuilder<> &B)
{
    return B.CreateStackSave("pes.sp");
}

inline llvm::MDNode *unlikelyWeights(llvm::LLVMContext &C)
{
    // Taken once per buffer fill (thousands of records): tell the backend so the
    // slow call is laid out out of line.
    return llvm::MDBuilder(C).createBranchWeights(1, (1u << 20) - 1);
}

} // namespace pes_compat

#endif
