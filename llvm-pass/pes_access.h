// pes_access.h — which IR instructions are memory-access sites, and what the
// site table says about them (kind, size, flags, address operand).
#ifndef PES_ACCESS_H
#define PES_ACCESS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Instruction.h"

#include <cstdint>

namespace pes
{

struct AccessSite {
    uint8_t kind = 0;                // enum pes_access_kind
    uint8_t flags = 0;               // enum pes_site_flags
    uint32_t size = 0;               // bytes per record, 0 = length in extra
    llvm::Value *addr = nullptr;     // pointer; vector of pointers for gather/scatter
    llvm::Value *length = nullptr;   // mem intrinsics: byte count -> record.extra
    llvm::Value *laneMask = nullptr; // gather/scatter: <N x i1>
    unsigned lanes = 0;              // gather/scatter: fixed vector width
};

// Appends the sites of I (none, one, or two for memcpy/memmove) in program order.
void classifyAccess(llvm::Instruction &I, const llvm::DataLayout &DL,
                    llvm::SmallVectorImpl<AccessSite> &Out);

} // namespace pes

#endif
