// pes_tables.h — the per-module site table, basic-block table, string table
// and module descriptor, emitted as constants with the exact layouts of
// pes/rt_abi.h, plus the constructor that registers them with the runtime.
#ifndef PES_TABLES_H
#define PES_TABLES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include "pes/rt_abi.h"

#include <string>
#include <vector>

namespace pes
{

class ModuleTables
{
  public:
    // Offset of S in the string table (deduplicated; "" is offset 0).
    uint32_t intern(llvm::StringRef S);
    void addSite(const pes_rt_site &S)
    {
        Sites.push_back(S);
    }
    void addBB(const pes_rt_bb &B)
    {
        BBs.push_back(B);
    }
    uint32_t siteCount() const
    {
        return static_cast<uint32_t>(Sites.size());
    }
    uint32_t bbCount() const
    {
        return static_cast<uint32_t>(BBs.size());
    }

    // Emits the tables and descriptor pointing at IdBase, and a constructor of
    // priority PES_RT_CTOR_PRIORITY calling __pes_register_module.
    void emit(llvm::Module &M, llvm::GlobalVariable *IdBase);

  private:
    std::string Strtab = std::string(1, '\0');
    llvm::StringMap<uint32_t> Offsets;
    std::vector<pes_rt_site> Sites;
    std::vector<pes_rt_bb> BBs;
};

} // namespace pes

#endif
