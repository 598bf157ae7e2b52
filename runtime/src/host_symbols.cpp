// The C library functions kime's own loader (elf_image.cpp) hands the kernels: what the Halide
// runtime inside them calls (memory, threads, a little stdio for its error reports) and the math
// functions a kernel may call. Taking their addresses here also links them into a static kime-run.
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "elf_image.h"

namespace kime {

namespace {

#ifdef KIME_STATIC_RUNTIME
// A static executable has no dynamic loader to offer; Halide asks for one only to find GPU
// drivers and tracing hooks, which kernels for the CPU do not use.
void* noDlopen(const char*, int) { return nullptr; }
void* noDlsym(void*, const char*) { return nullptr; }
char* noDlerror() { return const_cast<char*>("no dynamic loading in a static kime runtime"); }
#endif

}  // namespace

#define KIME_HOST(f) \
  HostSymbol { #f, reinterpret_cast<void*>(&f) }

const std::vector<HostSymbol>& hostSymbols() {
  static const std::vector<HostSymbol> table = {
      KIME_HOST(malloc),
      KIME_HOST(calloc),
      KIME_HOST(realloc),
      KIME_HOST(free),
      KIME_HOST(posix_memalign),
      KIME_HOST(aligned_alloc),
      KIME_HOST(memcpy),
      KIME_HOST(memmove),
      KIME_HOST(memset),
      KIME_HOST(memcmp),
      KIME_HOST(strlen),
      KIME_HOST(strcmp),
      KIME_HOST(strncmp),
      KIME_HOST(strncpy),
      KIME_HOST(atoi),
      KIME_HOST(getenv),
      KIME_HOST(abort),
      KIME_HOST(write),
      KIME_HOST(fopen),
      KIME_HOST(fclose),
      KIME_HOST(fwrite),
      KIME_HOST(fileno),
      KIME_HOST(snprintf),
      KIME_HOST(sysconf),
      KIME_HOST(syscall),
      KIME_HOST(gettimeofday),
      KIME_HOST(clock_gettime),
      KIME_HOST(usleep),
      KIME_HOST(sched_yield),
      KIME_HOST(pthread_create),
      KIME_HOST(pthread_join),
      KIME_HOST(pthread_self),
      KIME_HOST(pthread_mutex_init),
      KIME_HOST(pthread_mutex_destroy),
      KIME_HOST(pthread_mutex_lock),
      KIME_HOST(pthread_mutex_unlock),
      KIME_HOST(pthread_cond_init),
      KIME_HOST(pthread_cond_destroy),
      KIME_HOST(pthread_cond_wait),
      KIME_HOST(pthread_cond_signal),
      KIME_HOST(pthread_cond_broadcast),
      KIME_HOST(expf),
      KIME_HOST(logf),
      KIME_HOST(powf),
      KIME_HOST(sqrtf),
      KIME_HOST(tanhf),
      KIME_HOST(erff),
      KIME_HOST(sinf),
      KIME_HOST(cosf),
      KIME_HOST(fmaf),
#ifdef KIME_STATIC_RUNTIME
      HostSymbol{"dlopen", reinterpret_cast<void*>(&noDlopen)},
      HostSymbol{"dlsym", reinterpret_cast<void*>(&noDlsym)},
      HostSymbol{"dlerror", reinterpret_cast<void*>(&noDlerror)},
#else
      KIME_HOST(dlopen),
      KIME_HOST(dlsym),
      KIME_HOST(dlerror),
#endif
  };
  return table;
}

}  // namespace kime
