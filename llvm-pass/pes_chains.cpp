// pes_chains.cpp — longest loop-carried chains (pes_chains.h).
//
// Within one iteration of loop L, values flow forward: the body without L's
// back edges is acyclic, and visiting L's blocks in reverse post-order (header
// first) sees every definition before its uses, except through phis. A phi
// of L's header starts a chain (its value is last iteration's); another
// header phi of L starts its own chain, so it ends every path through it. A
// phi of an inner loop's header is entered only from outside that loop (one
// inner iteration on the path; the inner latch carries the inner chain); any
// other phi merges the paths of its incoming values. Only dependences through
// registers are followed: a value carried through memory (a store read back
// by the next iteration's load, every local at -O0) is not a chain here.
#include "pes_chains.h"

#include "pes_ops.h"

#include "llvm/Analysis/LoopIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace pes
{

namespace
{
struct Path {
    uint64_t Cost = 0; // sum of Ops[c] x nominalLatency(c)
    OpCounts Ops{};
};
} // namespace

// Only to choose between paths (the longest) and between the chains of a
// latch's loops: cycles of one op on a typical x86-64 core. The model prices
// the chosen path with the machine's own latencies; this ranks, e.g., one
// fadd above one integer add, so a reduction's chain wins over its induction
// variable's.
static uint32_t nominalLatency(int C)
{
    switch (C) {
    case PES_OP_INT_MUL:
        return 3;
    case PES_OP_INT_DIV:
        return 25;
    case PES_OP_FP_ADD:
    case PES_OP_FP_MUL:
        return 4;
    case PES_OP_FP_DIV:
        return 15;
    case PES_OP_LOAD:
    case PES_OP_CALL:
        return 5;
    default: // integer add, store, branch, other
        return 1;
    }
}

static bool longer(const Path &A, const Path &B)
{
    return A.Cost > B.Cost;
}

static Path extend(Path P, const uint32_t *Own)
{
    for (int C = 0; C < PES_OP_COUNT; C++) {
        P.Ops[C] += Own[C];
        P.Cost += static_cast<uint64_t>(Own[C]) * nominalLatency(C);
    }
    return P;
}

static bool isMulAdd(const Instruction &I)
{
    auto *II = dyn_cast<IntrinsicInst>(&I);
    return II &&
           (II->getIntrinsicID() == Intrinsic::fmuladd || II->getIntrinsicID() == Intrinsic::fma);
}

// The longest path from header phi Start through one iteration of L to every
// value of L that depends on it; the one ending at End (Start's value on the
// back edge from Latch) is the chain, or false if End does not depend on Start.
static bool chainOf(const Loop &L, const LoopInfo &LI, LoopBlocksRPO &RPO, const PHINode *Start,
                    const Value *End, Path &Out)
{
    DenseMap<const Value *, Path> Dist;
    Dist[Start] = Path{};
    for (const BasicBlock *BB : RPO) {
        const Loop *Of = LI.getLoopFor(BB); // an inner loop if BB is its header
        if (Of && Of->getHeader() != BB)
            Of = nullptr;
        for (const Instruction &I : *BB) {
            if (&I == Start)
                continue;
            bool Found = false;
            Path Best;
            if (auto *Phi = dyn_cast<PHINode>(&I)) {
                if (BB == L.getHeader())
                    continue; // another chain's start
                for (unsigned K = 0; K < Phi->getNumIncomingValues(); K++) {
                    if (Of && Of->contains(Phi->getIncomingBlock(K)))
                        continue; // the inner loop's back edge
                    auto It = Dist.find(Phi->getIncomingValue(K));
                    if (It != Dist.end() && (!Found || longer(It->second, Best))) {
                        Best = It->second;
                        Found = true;
                    }
                }
                if (Found)
                    Dist[&I] = Best;
                continue;
            }
            uint32_t Own[PES_OP_COUNT] = {0};
            countInstruction(I, Own, /*Lanes=*/false);
            // a*b + c: a path through the addend c waits only for the add
            // (an FMA unit's latency is an add's; without one, the multiply
            // runs off the chain)
            uint32_t AddOnly[PES_OP_COUNT] = {0};
            AddOnly[PES_OP_FP_ADD] = 1;
            const bool MulAdd = isMulAdd(I);
            for (unsigned K = 0; K < I.getNumOperands(); K++) {
                auto It = Dist.find(I.getOperand(K));
                if (It == Dist.end())
                    continue;
                Path P = extend(It->second, MulAdd && K == 2 ? AddOnly : Own);
                if (!Found || longer(P, Best)) {
                    Best = P;
                    Found = true;
                }
            }
            if (Found)
                Dist[&I] = Best;
        }
    }
    auto It = Dist.find(End);
    if (It == Dist.end())
        return false;
    Out = It->second;
    return true;
}

LoopChains::LoopChains(const LoopInfo &LI)
{
    DenseMap<const BasicBlock *, Path> LatchPaths;
    for (const Loop *L : LI.getLoopsInPreorder()) {
        SmallVector<BasicBlock *, 4> Latches;
        L->getLoopLatches(Latches);
        if (Latches.empty())
            continue;
        LoopBlocksRPO RPO(const_cast<Loop *>(L));
        RPO.perform(&LI);
        for (const BasicBlock *Latch : Latches) {
            Path Best;
            bool Any = false;
            for (const PHINode &Phi : L->getHeader()->phis()) {
                int K = Phi.getBasicBlockIndex(Latch);
                Path P;
                if (K >= 0 && chainOf(*L, LI, RPO, &Phi, Phi.getIncomingValue(K), P) &&
                    (!Any || longer(P, Best))) {
                    Best = P;
                    Any = true;
                }
            }
            if (!Any)
                continue;
            // a block closing several loops closes the longest of their chains
            auto Ins = LatchPaths.try_emplace(Latch, Best);
            if (!Ins.second && longer(Best, Ins.first->second))
                Ins.first->second = Best;
        }
    }
    for (auto &KV : LatchPaths)
        Chains[KV.first] = KV.second.Ops;
}

} // namespace pes
