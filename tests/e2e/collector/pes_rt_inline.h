/* pes_rt_inline.h — the inline sequence of pes/rt_abi.h as a C macro, so the
 * runtime can be tested without the LLVM pass: what instrumented code does
 * after every access, written by hand. */
#ifndef PES_RT_INLINE_H
#define PES_RT_INLINE_H

#include "pes/rt_abi.h"

#define PES_TEST_RECORD(addr_, id_, extra_)                                               \
    do {                                                                                  \
        struct pes_record *pes_cur_ = __pes_tls.cursor;                                   \
        if (pes_cur_ >= __atomic_load_n(&__pes_tls.limit, __ATOMIC_RELAXED)) {          \
            __pes_record_slow((uint64_t)(addr_),                                          \
                              (uint64_t)(uint32_t)(id_) | (uint64_t)(uint32_t)(extra_) << 32); \
        } else {                                                                          \
            pes_cur_->addr = (uint64_t)(addr_);                                           \
            pes_cur_->id = (uint32_t)(id_);                                               \
            pes_cur_->extra = (uint32_t)(extra_);                                         \
            __pes_tls.cursor = pes_cur_ + 1;                                              \
        }                                                                                 \
    } while (0)

#endif
