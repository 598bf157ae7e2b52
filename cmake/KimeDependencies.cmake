# The compiler's dependencies. Only the compiler side includes this file; the runtime needs none.

# MLIR 19: the version file wants major.minor.
find_package(MLIR 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/mlir)
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
target_include_directories(kime_halide SYSTEM INTERFACE /usr/include/halide14)
target_link_libraries(kime_halide INTERFACE ${KIME_HALIDE_LIB} Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(kime_halide INTERFACE HALIDE_ENABLE_RTTI HALIDE_WITH_EXCEPTIONS)

# The linker kime-compile runs to make each target's kernels one shared object. lld links
# x86-64 and AArch64 objects alike.
find_program(KIME_LLD_PATH NAMES ld.lld-19 ld.lld REQUIRED)

# CUDA Toolkit 13: NVRTC turns the generated CUDA C++ into PTX; ptxas proves it assembles. No GPU
# is needed for either.
find_package(CUDAToolkit REQUIRED)
# NVRTC needs no driver, but CMake's CUDA::nvrtc links the driver's stub; with --no-as-needed
# (a sanitizer build) that makes every compiler binary need libcuda.so.1 to start.
set_property(TARGET CUDA::nvrtc PROPERTY INTERFACE_LINK_LIBRARIES "")
find_program(KIME_PTXAS_PATH ptxas HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin REQUIRED)
