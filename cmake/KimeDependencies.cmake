# The compiler's dependencies. Only the compiler side includes this file; the runtime needs none.

# Where the dependencies are: Debian 12's paths by default, each a cache variable.
set(KIME_LLVM_ROOT /usr/lib/llvm-19 CACHE PATH "LLVM/MLIR 19's prefix (holds lib/cmake/mlir and bin/FileCheck)")
set(KIME_HALIDE_INCLUDE_DIR /usr/include/halide14 CACHE PATH "Halide 14's headers (Halide.h)")
set(KIME_X86_64_LIBC /lib/x86_64-linux-gnu/libc.so.6 CACHE FILEPATH
  "the x86-64 glibc that x86 kernels link against (for its symbol versions)")
set(KIME_AARCH64_LIBC /usr/aarch64-linux-gnu/lib/libc.so.6 CACHE FILEPATH
  "the AArch64 glibc that arm-64 kernels link against (Debian package libc6-arm64-cross)")
set(KIME_WITH_CUDA AUTO CACHE STRING
  "PTX through NVRTC and ptxas: ON (needs a CUDA Toolkit), OFF (CPU targets only), AUTO (ON where a toolkit is found)")
set_property(CACHE KIME_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)

# MLIR 19: the version file wants major.minor.
find_package(MLIR 19.1 REQUIRED CONFIG HINTS ${KIME_LLVM_ROOT}/lib/cmake/mlir)
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
message(STATUS "kime: MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_CMAKE_DIR}")

find_package(nlohmann_json 3 REQUIRED)
find_package(Threads REQUIRED)

# One interface target for everything that uses MLIR: the shared MLIR and LLVM libraries
# (never mix them with static ones), and MLIR's headers as system headers so their warnings
# stay out of ours.
add_library(kime_mlir INTERFACE)
target_include_directories(kime_mlir SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_link_libraries(kime_mlir INTERFACE MLIR LLVM)
target_compile_definitions(kime_mlir INTERFACE ${LLVM_DEFINITIONS})

# Halide 14, imported by hand: find_package(Halide) would pull in LLVM 14's CMake config.
find_library(KIME_HALIDE_LIB NAMES Halide14 Halide REQUIRED)
add_library(kime_halide INTERFACE)
target_include_directories(kime_halide SYSTEM INTERFACE ${KIME_HALIDE_INCLUDE_DIR})
target_link_libraries(kime_halide INTERFACE ${KIME_HALIDE_LIB} Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(kime_halide INTERFACE HALIDE_ENABLE_RTTI HALIDE_WITH_EXCEPTIONS)

# The linker kime-compile runs to make each target's kernels one shared object. lld links
# x86-64 and AArch64 objects alike.
find_program(KIME_LLD_PATH NAMES ld.lld-19 ld.lld REQUIRED)
# The disassembler that checks the Sapphire Rapids kernels for instructions other CPUs of their
# targets lack (codegen/cpu/ForeignInstructions.h); Debian's llvm-19 package has it.
find_program(KIME_OBJDUMP_PATH NAMES llvm-objdump-19 llvm-objdump HINTS /usr/lib/llvm-19/bin REQUIRED)

# CUDA Toolkit 13 (optional): NVRTC turns the generated CUDA C++ into PTX; ptxas proves it
# assembles. No GPU is needed for either. Without it the compiler makes CPU code only (and still
# writes CUDA C++ for --emit=cuda); KIME_HAS_NVRTC says which.
set(KIME_HAS_NVRTC OFF)
if(NOT KIME_WITH_CUDA STREQUAL "OFF")
  if(KIME_WITH_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    find_program(KIME_PTXAS_PATH ptxas HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)
    # NVRTC needs no driver, but CMake's CUDA::nvrtc links the driver's stub; with --no-as-needed
    # (a sanitizer build) that makes every compiler binary need libcuda.so.1 to start.
    set_property(TARGET CUDA::nvrtc PROPERTY INTERFACE_LINK_LIBRARIES "")
    set(KIME_HAS_NVRTC ON)
  endif()
endif()
message(STATUS "kime: PTX through NVRTC: ${KIME_HAS_NVRTC} (KIME_WITH_CUDA=${KIME_WITH_CUDA})")

# ONNX (Debian's libonnx-dev, with protobuf): kime-import reads models exported from PyTorch.
find_package(ONNX REQUIRED CONFIG)
find_package(Protobuf REQUIRED)
