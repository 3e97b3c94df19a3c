// pes_calls.h — call edges in full traces (pes/trace.h, "Call edges"): which
// calls of an instrumented function get a CALL record before them and a
// RETURN record where they return or unwind, and the emission of both in the
// recording clone. The check clone has none: a run without the collector
// pays nothing for them.
#ifndef PES_CALLS_H
#define PES_CALLS_H

#include "pes_emit.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/InstrTypes.h"

#include <cstdint>
#include <vector>

namespace pes
{

// Can CB reach instrumented code? No for intrinsics, inline asm, musttail
// calls (nothing may follow them), returns_twice calls (setjmp returns to its
// caller only), sanitizer checks (!nosanitize), the pes runtime, and library
// functions TLI knows that take no
// callback (a function among the arguments, or one of the libc functions that
// call back before they return, for a function pointer held in a variable).
bool needsCallEdge(const llvm::CallBase &CB, const llvm::TargetLibraryInfo &TLI);

// One bracketed call and its site (module-local id, kind PES_KIND_CALL).
struct CallEdge {
    llvm::CallBase *CB;
    uint32_t Local;
};

// Brackets each call of F's recording clone (F itself, after CheckCloner::clone
// or without a clone): {sp, PES_ID_CALL, site} right before it, {sp,
// PES_ID_RETURN, 0} right after a call instruction, on a block of its own on an
// invoke's normal edge (its destination may be entered from elsewhere, the
// check clone included) and right after the landingpad of its unwind
// destination (once per landing pad, however many invokes share it); none
// after a call that does not return. Must run after E.beginFunction. Returns
// the number of RETURN places made.
unsigned emitCallEdges(const std::vector<CallEdge> &Edges, RecordEmitter &E);

} // namespace pes

#endif
