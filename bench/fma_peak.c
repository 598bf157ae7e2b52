// This machine's FP32 FMA peak per vector ISA, on 1 and 2 threads: each thread keeps 12
// independent vector FMA chains busy (enough to cover FMA latency on two pipes). Measures every
// ISA kime emits x86 code for that the CPU has: AVX2 + FMA, then AVX-512.
// Prints one line per ISA: name, GFLOP/s with 1 thread, GFLOP/s with 2 threads.
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define CHAINS 12
#define ITERS 50000000L

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile float sink;

__attribute__((target("avx512f"))) static void chains512(long iters) {
  __m512 x[CHAINS], m = _mm512_set1_ps(0.9999f), a = _mm512_set1_ps(1e-4f);
  for (int c = 0; c < CHAINS; ++c) x[c] = _mm512_set1_ps((float)c);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; ++c) x[c] = _mm512_fmadd_ps(x[c], m, a);
  float s = 0;
  for (int c = 0; c < CHAINS; ++c) s += _mm512_reduce_add_ps(x[c]);
  sink = s;
}

__attribute__((target("avx2,fma"))) static void chains256(long iters) {
  __m256 x[CHAINS], m = _mm256_set1_ps(0.9999f), a = _mm256_set1_ps(1e-4f);
  for (int c = 0; c < CHAINS; ++c) x[c] = _mm256_set1_ps((float)c);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; ++c) x[c] = _mm256_fmadd_ps(x[c], m, a);
  float v[8], s = 0;
  for (int c = 0; c < CHAINS; ++c) {
    _mm256_storeu_ps(v, x[c]);
    for (int l = 0; l < 8; ++l) s += v[l];
  }
  sink = s;
}

struct job {
  int lanes;
  long iters;
};

static void* worker(void* arg) {
  const struct job* j = arg;
  if (j->lanes == 16)
    chains512(j->iters);
  else
    chains256(j->iters);
  return NULL;
}

// GFLOP/s of `threads` threads running `lanes`-wide FMA chains together.
static double measure(int lanes, int threads, long iters) {
  pthread_t t[8];
  struct job j = {lanes, iters};
  double t0 = seconds();
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, &j);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  double dt = seconds() - t0;
  return 2.0 * lanes * CHAINS * (double)iters * threads / dt / 1e9;
}

static void report(const char* name, int lanes) {
  measure(lanes, 1, ITERS / 10);  // warm up the clocks
  double one = measure(lanes, 1, ITERS), two = measure(lanes, 2, ITERS);
  printf("%s %.1f %.1f\n", name, one, two);
}

int main(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) report("avx2", 8);
  if (__builtin_cpu_supports("avx512f")) report("avx512", 16);
  return 0;
}
