// This machine's FP32 FMA peak, 1 and 2 threads: each thread keeps 12 independent vector FMA
// chains busy (enough to cover FMA latency on two pipes) for a fixed time. AVX-512 where the
// CPU has it, else AVX2. Prints: width, GFLOP/s with 1 thread, GFLOP/s with 2 threads.
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define CHAINS 12
#define ITERS 200000000L

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int wide;  // 1: AVX-512
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

static void* worker(void* arg) {
  long iters = *(long*)arg;
  if (wide) chains512(iters);
  else chains256(iters);
  return NULL;
}

// GFLOP/s of `threads` threads running together.
static double measure(int threads, long iters) {
  pthread_t t[8];
  double t0 = seconds();
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, &iters);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  double dt = seconds() - t0;
  double flops = 2.0 * (wide ? 16 : 8) * CHAINS * (double)iters * threads;
  return flops / dt / 1e9;
}

int main(void) {
  __builtin_cpu_init();
  wide = __builtin_cpu_supports("avx512f");
  long iters = ITERS / 4;
  measure(1, iters / 10);  // warm up the clocks
  double one = measure(1, iters), two = measure(2, iters);
  printf("%s %.1f %.1f\n", wide ? "avx512" : "avx2", one, two);
  return 0;
}
