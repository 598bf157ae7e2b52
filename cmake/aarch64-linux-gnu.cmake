# Cross-building the runtime and kime-run for AArch64 Linux with Debian's g++-aarch64-linux-gnu:
#   cmake -G Ninja -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DKIME_BUILD_COMPILER=OFF -DKIME_BUILD_TESTS=OFF [-DKIME_STATIC_TOOLS=ON]
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Header-only nlohmann/json comes from the host's Debian package.
set(nlohmann_json_DIR /usr/share/cmake/nlohmann_json)
# LD_LIBRARY_PATH: the cross toolchain's libc before Debian's libc6:arm64 (if installed), which
# the host's ld.so.cache would otherwise pair with the cross ld.so (they must be one build).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
