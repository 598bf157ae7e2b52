// LD_PRELOAD=avx2_only.so PROGRAM ...: the program sees, through CPUID, a CPU with AVX2 and FMA
// but none of AVX-512, AVX512-BF16/VNNI/FP16 or AMX, so that a peer that picks its kernels by
// CPUID (ONNX Runtime's MLAS) runs the kernels it would run on an AVX2-only CPU. kime's paths are
// forced with kime-run --cpu-target instead; this is for the peers.
// Built with -DKEEP_AVX512_CORE (bench/run.sh's avx512_core_only.so), the program sees AVX-512 F,
// CD, BW, DQ and VL but none of the later extensions (VNNI, BF16, IFMA, VBMI, FP16, AMX ...): a
// Skylake-SP, the AVX-512 CPU without VNNI, whose kernels kime's x86-64-avx512 int8 path meets.
//
// How: arch_prctl(ARCH_SET_CPUID, 0) makes the CPUID instruction fault (CPUID faulting, Intel
// CPUs and KVM guests: /proc/cpuinfo "cpuid_fault"); the SIGSEGV handler runs the real CPUID with
// faulting briefly off, clears the masked bits and steps over the instruction. The program's own
// SIGSEGV handler (V8 installs one) is kept and called for every other fault. The setting is
// inherited by threads created later and dropped at exec.
// Only the ISA the program picks changes: it runs on this CPU's cores, caches and clocks.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction app_segv;  // the program's own handler, called for other faults

static int set_cpuid(int enabled) { return (int)syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

static void real_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

// Leaf 7: AVX-512 F, DQ, CD, BW, VL (ebx 16, 17, 28, 30, 31: kept with KEEP_AVX512_CORE), IFMA,
// PF, ER (ebx 21, 26, 27); VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ (ecx 1, 6, 11, 12, 14); 4VNNIW,
// 4FMAPS, VP2INTERSECT, FP16, AMX BF16, TILE, INT8 (edx 2, 3, 8, 23, 22, 24, 25); subleaf 1:
// AVX-VNNI and AVX512-BF16 (eax 4, 5).
#ifdef KEEP_AVX512_CORE
static const uint32_t kEbxMasked = (1u << 21) | (1u << 26) | (1u << 27);
#else
static const uint32_t kEbxMasked =
    (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31);
#endif
static void mask(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  if (leaf == 7 && sub == 0) {
    r[1] &= ~kEbxMasked;
    r[2] &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
    r[3] &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
  } else if (leaf == 7 && sub == 1) {
    r[0] &= ~((1u << 4) | (1u << 5));
  }
}

static void on_segv(int sig, siginfo_t* info, void* ctx) {
  ucontext_t* uc = (ucontext_t*)ctx;
  greg_t* g = uc->uc_mcontext.gregs;
  const uint8_t* ip = (const uint8_t*)g[REG_RIP];
  if (info->si_code == SI_KERNEL && ip[0] == 0x0f && ip[1] == 0xa2) {
    uint32_t r[4], leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX];
    set_cpuid(1);
    real_cpuid(leaf, sub, r);
    set_cpuid(0);
    mask(leaf, sub, r);
    g[REG_RAX] = r[0], g[REG_RBX] = r[1], g[REG_RCX] = r[2], g[REG_RDX] = r[3];
    g[REG_RIP] += 2;
    return;
  }
  if (app_segv.sa_flags & SA_SIGINFO) {
    app_segv.sa_sigaction(sig, info, ctx);
  } else if (app_segv.sa_handler != SIG_DFL && app_segv.sa_handler != SIG_IGN) {
    app_segv.sa_handler(sig);
  } else {
    signal(SIGSEGV, SIG_DFL);  // the fault happens again, now fatal as without this library
  }
}

// The program's SIGSEGV handler is kept aside, ours stays installed.
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  static int (*real)(int, const struct sigaction*, struct sigaction*);
  if (!real) real = (int (*)(int, const struct sigaction*, struct sigaction*))dlsym(RTLD_NEXT, "sigaction");
  if (sig != SIGSEGV) return real(sig, act, old);
  if (old) *old = app_segv;
  if (act) app_segv = *act;
  return 0;
}

__attribute__((constructor)) static void start(void) {
  int (*real)(int, const struct sigaction*, struct sigaction*) =
      (int (*)(int, const struct sigaction*, struct sigaction*))dlsym(RTLD_NEXT, "sigaction");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (real(SIGSEGV, &sa, NULL) != 0 || set_cpuid(0) != 0) {
    fprintf(stderr, "avx2_only: this CPU or kernel has no CPUID faulting (arch_prctl ARCH_SET_CPUID)\n");
    _exit(2);
  }
}
