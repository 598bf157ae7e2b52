// Prints what CPUID says of FMA, AVX2, AVX-512F, AVX-512BW, AVX512-VNNI and AVX512-BF16, one
// "name 0|1" a line; run under LD_PRELOAD=avx2_only.so (or avx512_core_only.so) it shows the
// masked view (bench/run.sh checks it before use).
#include <stdint.h>
#include <stdio.h>

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

int main(void) {
  uint32_t l1[4], l7[4], l71[4];
  cpuid(1, 0, l1);
  cpuid(7, 0, l7);
  cpuid(7, 1, l71);
  printf("fma %u\navx2 %u\navx512f %u\navx512bw %u\navx512_vnni %u\navx512_bf16 %u\n", (l1[2] >> 12) & 1,
         (l7[1] >> 5) & 1, (l7[1] >> 16) & 1, (l7[1] >> 30) & 1, (l7[2] >> 11) & 1, (l71[0] >> 5) & 1);
  return 0;
}
