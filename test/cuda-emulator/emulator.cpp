// Runs a kernel grid of the emulated CUDA C++ on the CPU: warp after warp, each warp's 32 lanes
// as fibers (ucontext) on this thread, switched round-robin. A warp shuffle parks its lane until
// every lane of the warp has reached it, so values are exchanged as on a GPU. Linked into each
// emulated kernel library, which the fake driver (fake_libcuda.cpp) calls through
// kime_emu_launch.
#include <ucontext.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_emulation.h"

namespace kime_emu {

namespace {

constexpr int kWarp = 32;
constexpr size_t kStack = 256 * 1024;

struct Lane {
  ucontext_t context;
  Index thread;
  bool done = false;
  bool parked = false;  // waiting at a shuffle
  int phase = 0;        // which half of `shuffled` its next shuffle writes
};

Lane lanes[kWarp];
int current = 0;
ucontext_t scheduler;
float shuffled[2][kWarp];
Index block, dims;

void* kernel = nullptr;
void** params = nullptr;
int paramCount = 0;

// Every kime kernel parameter is a pointer: call with the values the launch gave.
void callKernel() {
  void* a[16] = {};
  for (int i = 0; i < paramCount; ++i) a[i] = *static_cast<void**>(params[i]);
  using Fn = void (*)(void*, void*, void*, void*, void*, void*, void*, void*, void*, void*, void*, void*, void*, void*,
                      void*, void*);
  // Passing more pointer arguments than a kernel takes is harmless in the x86-64 and AArch64
  // calling conventions: the extra registers are ignored.
  reinterpret_cast<Fn>(kernel)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                               a[14], a[15]);
}

void laneMain() {
  callKernel();
  lanes[current].done = true;  // returning resumes the scheduler (uc_link)
}

}  // namespace

const Index& threadIndex() { return lanes[current].thread; }
const Index& blockIndex() { return block; }
const Index& blockDimensions() { return dims; }

// Each lane's operands of the current mma, by phase like the shuffles.
struct MmaOperands {
  unsigned a[4], b[2];
  float c[4];
};
MmaOperands mmaOperands[2][kWarp];

float asFloat(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void mmaTf32(float* d, const unsigned* a, const unsigned* b) {
  const int me = current;
  const int phase = lanes[me].phase;
  MmaOperands& mine = mmaOperands[phase][me];
  std::memcpy(mine.a, a, sizeof mine.a);
  std::memcpy(mine.b, b, sizeof mine.b);
  std::memcpy(mine.c, d, sizeof mine.c);
  lanes[me].phase ^= 1;
  lanes[me].parked = true;
  swapcontext(&lanes[me].context, &scheduler);
  // Every lane's operands are in: this lane's four elements of D, by the PTX ISA's layouts
  // (groupID = lane / 4, threadID_in_group = lane % 4):
  //   A 16x8: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
  //   B 8x8:  b0 (k = t, n = g), b1 (k = t + 4, n = g)
  //   C, D:   c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1)
  const MmaOperands* all = mmaOperands[phase];
  auto A = [&](int row, int k) {
    const int lane = (row % 8) * 4 + k % 4, reg = (row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0);
    return asFloat(all[lane].a[reg]);
  };
  auto B = [&](int k, int n) { return asFloat(all[n * 4 + k % 4].b[k >= 4 ? 1 : 0]); };
  const int g = me / 4, t = me % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    float acc = all[me].c[i];
    for (int k = 0; k < 8; ++k) acc += A(row, k) * B(k, col);
    d[i] = acc;
  }
}

float shuffleXor(float v, int laneMask) {
  const int me = current;
  const int phase = lanes[me].phase;
  shuffled[phase][me] = v;
  lanes[me].phase ^= 1;
  lanes[me].parked = true;
  swapcontext(&lanes[me].context, &scheduler);
  return shuffled[phase][me ^ laneMask];
}

}  // namespace kime_emu

// Runs the grid; 0 on success, 1 when a warp's lanes diverged at a shuffle (some parked, some
// finished), which on a GPU would read undefined values.
extern "C" int kime_emu_launch(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               void** kernelParams, int count) {
  using namespace kime_emu;
  static std::vector<char> stacks(kWarp * kStack);
  if (count > 16 || (bx * by * bz) % kWarp != 0) return 1;
  kernel = fn, params = kernelParams, paramCount = count;
  dims = {bx, by, bz};
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        block = {x, y, z};
        for (unsigned w = 0; w < bx * by * bz / kWarp; ++w) {
          for (int l = 0; l < kWarp; ++l) {
            Lane& lane = lanes[l];
            lane = Lane{};
            const unsigned t = w * kWarp + unsigned(l);
            lane.thread = {t % bx, t / bx % by, t / (bx * by)};
            getcontext(&lane.context);
            lane.context.uc_stack.ss_sp = &stacks[size_t(l) * kStack];
            lane.context.uc_stack.ss_size = kStack;
            lane.context.uc_link = &scheduler;
            makecontext(&lane.context, laneMain, 0);
          }
          for (bool running = true; running;) {
            running = false;
            int parked = 0;
            for (int l = 0; l < kWarp; ++l) {
              if (lanes[l].done) continue;
              current = l;
              lanes[l].parked = false;
              swapcontext(&scheduler, &lanes[l].context);
              if (lanes[l].parked) ++parked, running = true;
            }
            // A shuffle needs the whole warp; a lane that finished (now or before) misses it.
            if (parked && parked != kWarp) {
              std::fprintf(stderr, "kime_emu: lanes of warp %u in block (%u, %u, %u) diverged at a shuffle\n", w, x, y,
                           z);
              return 1;
            }
          }
        }
      }
  return 0;
}
