// PesPass.cpp — the pes instrumentation pass (new pass manager plugin).
//
// Every defined function gets a basic-block entry record at the start of each
// block and one record after each memory access (the inline hot path of
// pes/rt_abi.h). Each module carries a site table and a BB table and registers
// them from a constructor. Ids: local 0..n_sites-1 are sites, n_sites+i is the
// i-th block of the module; records carry *id_base + local id. The resulting
// BB-labelled trace is what PPT-Multicore §3.2 builds from Byfl, and OpenMP
// outlined functions play the role of its translated parallel functions.
// docs/llvm-pass.md describes the rules in full.
#include "llvm_compat.h"
#include "pes_access.h"
#include "pes_calls.h"
#include "pes_chains.h"
#include "pes_clone.h"
#include "pes_emit.h"
#include "pes_loops.h"
#include "pes_omp.h"
#include "pes_ops.h"
#include "pes_tables.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace llvm;

static cl::opt<bool> SkipStack("pes-skip-stack",
                               cl::desc("pes: do not record accesses to non-escaping stack "
                                        "variables (allocas whose address is never captured)"),
                               cl::init(false));
static cl::opt<bool> SinglePath("pes-single-path",
                                cl::desc("pes: no check clones: every function records always "
                                         "(the ABI 1 shape; for measurements)"),
                                cl::init(false));
static cl::opt<bool> NoDescriptors("pes-no-descriptors",
                                   cl::desc("pes: no loop descriptors: affine loops write one "
                                            "record per access even in full traces"),
                                   cl::init(false));
static cl::opt<bool> NoCallEdges("pes-no-call-edges",
                                 cl::desc("pes: no CALL/RETURN records around calls (full traces "
                                          "then have no call paths)"),
                                 cl::init(false));
static cl::opt<bool> NoMixed("pes-no-mixed",
                             cl::desc("pes: loop descriptors only for bodies whose every address "
                                      "is affine (the form before mixed bodies; for measurements)"),
                             cl::init(false));
static cl::opt<bool> Verbose("pes-verbose",
                             cl::desc("pes: print per-module instrumentation counts on stderr"),
                             cl::init(false));

namespace
{

struct SitePlan {
    Instruction *I;
    pes::AccessSite S;
    uint32_t Local;
    unsigned Index; // position among classifyAccess(*I)'s sites
};

struct BBPlan {
    BasicBlock *BB;
    uint32_t Index; // module-local block index
    std::vector<SitePlan> Sites;
    std::vector<pes::CallEdge> Calls; // their sites (PES_KIND_CALL) follow the block's accesses
    bool Affine = false;    // a loop body that full traces record as descriptors (pes_loops.h)
    uint64_t Irregular = 0; // its records whose addresses are not affine (bit 0: the block's)
};

struct FnPlan {
    Function *F;
    bool RegionEntry;
    std::vector<BBPlan> Blocks;
};

bool shouldInstrument(const Function &F)
{
    if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
        return false;
    if (F.getName().starts_with("__pes_")) // the runtime and our own constructor
        return false;
    if (F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation) ||
        F.hasFnAttribute(Attribute::Naked))
        return false;
    // Before CoroSplit a function body may resume on another thread: the TLS
    // address we hoist into the entry block would be stale.
    if (F.isPresplitCoroutine())
        return false;
    // Funclet-based EH (Windows) would need funclet bundles on our calls.
    if (F.hasPersonalityFn() && isScopedEHPersonality(classifyEHPersonality(F.getPersonalityFn())))
        return false;
    return true;
}

// File name as the user gave it; joined with the compilation directory if relative.
std::string fileName(const DILocation *Loc)
{
    const DIFile *File = Loc->getScope() ? Loc->getScope()->getFile() : nullptr;
    if (!File)
        return std::string();
    StringRef Name = File->getFilename(), Dir = File->getDirectory();
    if (Name.empty() || Name.starts_with("/") || Dir.empty())
        return Name.str();
    return (Dir + "/" + Name).str();
}

// Static allocas must stay at the head of the entry block (or they turn into
// dynamic allocas once we split the block); clang puts them there, inlining
// and -O0 helpers may not.
Instruction *prepareEntry(Function &F)
{
    BasicBlock &Entry = F.getEntryBlock();
    std::vector<AllocaInst *> Static;
    for (Instruction &I : Entry)
        if (auto *AI = dyn_cast<AllocaInst>(&I))
            if (AI->isStaticAlloca() && !AI->isUsedWithInAlloca())
                Static.push_back(AI);
    Instruction *Pos = &*Entry.getFirstInsertionPt();
    for (AllocaInst *AI : Static) {
        if (AI != Pos)
            AI->moveBefore(Pos);
        else
            Pos = Pos->getNextNode();
    }
    Instruction *IP = &*Entry.getFirstInsertionPt();
    while (isa<AllocaInst>(IP) && cast<AllocaInst>(IP)->isStaticAlloca())
        IP = IP->getNextNode();
    return IP;
}

class PesInstrumenter
{
  public:
    PesInstrumenter(Module &M, ModuleAnalysisManager &MAM)
        : M(M), DL(M.getDataLayout()),
          FAM(MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager())
    {
    }
    bool run();

  private:
    Module &M;
    const DataLayout &DL;
    FunctionAnalysisManager &FAM;
    pes::ModuleTables Tables;
    std::vector<FnPlan> Plans;
    unsigned Clones = 0, DescriptorLoops = 0, CallEdges = 0;
    DenseMap<const Value *, bool> PrivateStack;

    bool isPrivateStack(const Value *Addr);
    void planDescriptors(FnPlan &P);
    void plan(Function &F, const SmallPtrSetImpl<const Function *> &Entries);
    void instrument(FnPlan &P, pes::RecordEmitter &E, GlobalVariable *IdBase);
};

bool PesInstrumenter::isPrivateStack(const Value *Addr)
{
    const Value *Obj = getUnderlyingObject(Addr);
    auto *AI = dyn_cast<AllocaInst>(Obj);
    if (!AI)
        return false;
    auto It = PrivateStack.find(AI);
    if (It != PrivateStack.end())
        return It->second;
    bool Private = !pes_compat::mayBeCaptured(AI);
    PrivateStack[AI] = Private;
    return Private;
}

// Blocks and sites of F, in program order, into the tables and Plans.
void PesInstrumenter::plan(Function &F, const SmallPtrSetImpl<const Function *> &Entries)
{
    const bool Parallel = pes::isOmpParallelFunction(F, Entries);
    pes::SharedPointers Shared(F, Entries);
    FnPlan P{&F, Entries.count(&F) != 0, {}};
    const uint32_t FnOff = Tables.intern(pes_compat::demangle(F.getName()));
    const TargetLibraryInfo *TLI = NoCallEdges ? nullptr : &FAM.getResult<TargetLibraryAnalysis>(F);
    auto siteAt = [&](const Instruction &I) {
        pes_rt_site R = {};
        if (const DILocation *Loc = I.getDebugLoc().get()) {
            R.line = Loc->getLine();
            R.column = static_cast<uint16_t>(std::min<unsigned>(Loc->getColumn(), UINT16_MAX));
            R.file = Tables.intern(fileName(Loc));
        }
        R.function = FnOff;
        return R;
    };
    // its own loop analysis: FAM's copy goes stale once the IR changes
    DominatorTree DT(F);
    LoopInfo LI(DT);
    const pes::LoopChains Chains(LI);
    unsigned N = 0;
    for (BasicBlock &BB : F) {
        pes_rt_bb Rec = {};
        Rec.function = FnOff;
        Rec.label = Tables.intern(BB.hasName() ? BB.getName().str() : "bb" + std::to_string(N));
        N++;
        Rec.flags = (Parallel ? PES_BB_PARALLEL : 0) | PES_BB_MODEL_FACTS;
        pes::countOps(BB, Rec.ops);
        pes::countInstrs(BB, Rec.instrs);
        pes::countOmpSync(BB, P.RegionEntry, Rec.forks, Rec.barriers);
        if (const pes::OpCounts *Chain = Chains.at(&BB))
            std::copy(Chain->begin(), Chain->end(), Rec.chain);
        BBPlan B{&BB, Tables.bbCount(), {}, {}};
        for (Instruction &I : BB) {
            SmallVector<pes::AccessSite, 2> Found;
            pes::classifyAccess(I, DL, Found);
            for (unsigned K = 0; K < Found.size(); K++) {
                pes::AccessSite &S = Found[K];
                if (SkipStack && !S.laneMask && isPrivateStack(S.addr))
                    continue;
                if (Shared.isShared(S.addr))
                    S.flags |= PES_SITE_SHARED;
                pes_rt_site R = siteAt(I);
                R.kind = S.kind;
                R.flags = S.flags;
                R.size = S.size;
                R.bb = B.Index;
                // Module-wide numbering in function/block/program order: the sites
                // of one block are contiguous.
                B.Sites.push_back(SitePlan{&I, S, Tables.siteCount(), K});
                Tables.addSite(R);
            }
        }
        // Call sites after the block's access sites: an access site's place in
        // its block does not depend on the calls.
        if (TLI)
            for (Instruction &I : BB) {
                auto *CB = dyn_cast<CallBase>(&I);
                if (!CB || !pes::needsCallEdge(*CB, *TLI))
                    continue;
                pes_rt_site R = siteAt(I);
                R.kind = PES_KIND_CALL;
                R.bb = B.Index;
                B.Calls.push_back(pes::CallEdge{CB, Tables.siteCount()});
                Tables.addSite(R);
            }
        Rec.n_sites = static_cast<uint32_t>(B.Sites.size() + B.Calls.size());
        Tables.addBB(Rec);
        P.Blocks.push_back(std::move(B));
    }
    planDescriptors(P);
    Plans.push_back(std::move(P));
}

// Which loop bodies can write descriptors: decided on the IR as the optimiser
// left it (ScalarEvolution), only where the function gets both clones (the
// descriptor copy relies on the demoted values) and not at -O0 (no loop there
// has its addresses in registers).
void PesInstrumenter::planDescriptors(FnPlan &P)
{
    Function &F = *P.F;
    if (NoDescriptors || SinglePath || F.hasOptNone() || !pes::canClone(F))
        return;
    LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
    if (LI.empty())
        return;
    ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
    for (BBPlan &B : P.Blocks) {
        std::vector<pes::AccessSite> Sites;
        for (SitePlan &S : B.Sites)
            Sites.push_back(S.S);
        const char *Why = pes::whyNoDescriptors(*B.BB, Sites, LI, SE, B.Irregular);
        if (!Why && B.Irregular && NoMixed)
            Why = "an address not affine in the loop (-pes-no-mixed)";
        B.Affine = !Why;
        // innermost loop headers only: the loops a user could reshape
        Loop *L = LI.getLoopFor(B.BB);
        if (Verbose && L && L->getHeader() == B.BB && L->isInnermost()) {
            const DILocation *Loc = B.BB->getTerminator()->getDebugLoc().get();
            errs() << "pes: " << F.getName() << ":" << (Loc ? Loc->getLine() : 0) << ": loop "
                   << B.BB->getName() << ": "
                   << (Why ? std::string("per-access records: ") + Why : "descriptors");
            if (!Why && B.Irregular)
                errs() << " (mixed: " << llvm::popcount(B.Irregular) << " of " << 1 + Sites.size()
                       << " records irregular)";
            errs() << "\n";
        }
    }
    // nothing may use these once the IR changes
    FAM.invalidate(F, PreservedAnalyses::none());
}

bool PesInstrumenter::run()
{
    if (M.getGlobalVariable("__pes_module_desc", /*AllowInternal=*/true))
        return false; // already instrumented (plugin given twice)
    Triple T(M.getTargetTriple());
    if (T.isNVPTX() || T.isAMDGPU() || T.isSPIR() || T.isSPIRV())
        return false; // offload device code: no runtime there
    if (DL.getPointerSize() != 8) {
        errs() << "pes: " << M.getSourceFileName()
               << ": only 64-bit targets are supported; module not instrumented\n";
        return false;
    }
    auto Entries = pes::findOmpRegionEntries(M);

    // Plan everything before changing the IR: the shared-pointer analysis must
    // see clang's code, and block ids need the module's final site count.
    std::vector<Function *> Fns;
    for (Function &F : M)
        if (shouldInstrument(F))
            Fns.push_back(&F);
    if (Fns.empty())
        return false;
    for (Function *F : Fns)
        plan(*F, Entries);

    LLVMContext &C = M.getContext();
    auto *IdBase = new GlobalVariable(M, Type::getInt32Ty(C), false, GlobalValue::InternalLinkage,
                                      ConstantInt::get(Type::getInt32Ty(C), 0), "__pes_id_base");
    pes::RecordEmitter E(M);
    for (FnPlan &P : Plans)
        instrument(P, E, IdBase);
    Tables.emit(M, IdBase);
    if (Verbose)
        errs() << "pes: " << M.getSourceFileName() << ": " << Plans.size() << " functions, "
               << Tables.siteCount() << " sites, " << Tables.bbCount() << " blocks, " << Clones
               << " check clones, " << DescriptorLoops << " descriptor loops, " << CallEdges
               << " call edges\n";
    return true;
}

void PesInstrumenter::instrument(FnPlan &P, pes::RecordEmitter &E, GlobalVariable *IdBase)
{
    Function &F = *P.F;
    const uint32_t NSites = Tables.siteCount();
    // Where each original block's records start, taken before any split.
    std::vector<Instruction *> Starts;
    Instruction *EntryIP = prepareEntry(F);
    for (BBPlan &B : P.Blocks) {
        if (B.BB == &F.getEntryBlock()) {
            Starts.push_back(EntryIP);
            continue;
        }
        auto It = B.BB->getFirstInsertionPt();
        Starts.push_back(It == B.BB->end() ? nullptr : &*It); // catchswitch: no room
    }
    std::vector<ReturnInst *> Rets;
    if (P.RegionEntry)
        for (BasicBlock &BB : F)
            if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator()))
                Rets.push_back(R);

    // The check clone first (pes_clone.h): it sees the body without records.
    // The function itself then becomes the recording clone.
    const bool TwoPaths = !SinglePath && pes::canClone(F);
    pes::CheckCloner Cloner(F, E);
    if (TwoPaths) {
        BasicBlock *Entry = &F.getEntryBlock();
        BasicBlock *Body = SplitBlock(Entry, EntryIP);
        std::vector<pes::SiteRef> Sites;
        for (BBPlan &B : P.Blocks)
            for (SitePlan &S : B.Sites)
                Sites.push_back(pes::SiteRef{S.I, S.Index});
        Cloner.segment(Body, Sites);
        Cloner.clone(Entry, IdBase);
        Clones++;
    } else {
        E.beginFunction(EntryIP, IdBase);
    }
    if (TwoPaths)
        for (size_t K = 0; K < P.Blocks.size(); K++) {
            BBPlan &B = P.Blocks[K];
            if (!B.Affine || !Starts[K])
                continue;
            std::vector<pes::LoopSite> Sites;
            for (SitePlan &S : B.Sites)
                Sites.push_back(pes::LoopSite{S.I, S.Index, S.Local});
            auto Slots = pes::addDescriptorCopy(Starts[K], NSites + B.Index, Sites, B.Irregular, E);
            if (!Slots.empty()) {
                Cloner.promoteAlso(Slots);
                DescriptorLoops++;
            }
        }

    Value *RegionId = nullptr;
    if (P.RegionEntry) {
        // Region id = global id of the region function's entry block: stable for
        // the trace and resolvable to the function through the BB table. Computed
        // in the entry block: the returns' records are also reached from the
        // check clone.
        Instruction *At = TwoPaths ? F.getEntryBlock().getTerminator() : EntryIP;
        IRBuilder<> B(At);
        RegionId = B.CreateZExt(E.globalId(At, NSites + P.Blocks.front().Index),
                                Type::getInt64Ty(F.getContext()));
        E.emit(EntryIP, RegionId,
               ConstantInt::get(Type::getInt32Ty(F.getContext()), PES_ID_REGION_BEGIN), nullptr,
               DebugLoc());
    }
    for (size_t K = 0; K < P.Blocks.size(); K++) {
        BBPlan &B = P.Blocks[K];
        if (Starts[K]) {
            Value *Zero = ConstantInt::get(Type::getInt64Ty(F.getContext()), 0);
            E.emit(Starts[K], Zero, E.globalId(Starts[K], NSites + B.Index), nullptr, DebugLoc());
        }
        // Records go after the access; all records of one instruction in order.
        // Operands are read again: cloning sent cross-block values through stack slots.
        for (size_t S = 0; S < B.Sites.size();) {
            Instruction *I = B.Sites[S].I;
            Instruction *Next = I->getNextNode();
            SmallVector<pes::AccessSite, 2> Now;
            pes::classifyAccess(*I, DL, Now);
            for (; S < B.Sites.size() && B.Sites[S].I == I; S++) {
                pes::AccessSite Site = Now[B.Sites[S].Index];
                Site.flags = B.Sites[S].S.flags;
                E.emitSite(Next, Site, B.Sites[S].Local, I->getDebugLoc());
            }
        }
    }
    // Call edges last: the records of the accesses before a call are then
    // already in place, and the CALL follows them.
    std::vector<pes::CallEdge> Calls;
    for (BBPlan &B : P.Blocks)
        Calls.insert(Calls.end(), B.Calls.begin(), B.Calls.end());
    pes::emitCallEdges(Calls, E);
    CallEdges += static_cast<unsigned>(Calls.size());
    for (ReturnInst *R : Rets)
        E.emit(R, RegionId, ConstantInt::get(Type::getInt32Ty(F.getContext()), PES_ID_REGION_END),
               nullptr, DebugLoc());
    if (TwoPaths)
        Cloner.finish();
}

struct PesPass : PassInfoMixin<PesPass> {
    PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
    {
        PesInstrumenter Inst(M, MAM);
        return Inst.run() ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired()
    {
        return true;
    } // also at -O0 / optnone
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
    return {LLVM_PLUGIN_API_VERSION, "PesPass", LLVM_VERSION_STRING, [](PassBuilder &PB) {
                pes_compat::registerOptimizerLast(
                    PB, [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(PesPass()); });
                // `opt -load-pass-plugin=PesPass.so -passes=pes` for debugging.
                PB.registerPipelineParsingCallback([](StringRef Name, ModulePassManager &MPM,
                                                      ArrayRef<PassBuilder::PipelineElement>) {
                    if (Name != "pes")
                        return false;
                    MPM.addPass(PesPass());
                    return true;
                });
            }};
}
