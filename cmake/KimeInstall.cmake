# `cmake --install build --prefix P`: the tools, the runtime (libkime.so and libkime.a), its headers,
# the batch-file library, a CMake package (find_package(kime): kime::runtime, kime::runtime_static,
# kime::tooling, kime::kime-compile and the other tools, kime_add_model()) and a pkg-config file.
# A runtime-only build (KIME_BUILD_COMPILER=OFF, e.g. cross-built for AArch64) installs the same
# without the compiler's tools.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(KIME_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kime)

install(TARGETS kime_runtime_shared kime_runtime_static kime_tooling kime-run EXPORT kimeRuntimeTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY runtime/include/kime tooling/include/kime DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kimeRuntimeTargets NAMESPACE kime:: DESTINATION ${KIME_CMAKE_DIR})

if(KIME_BUILD_COMPILER)
  install(TARGETS kime-compile kime-graph kime-opt kime-translate kime-buckets kime-sign kime-keygen kime-int8-error
    EXPORT kimeCompilerTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT kimeCompilerTargets NAMESPACE kime:: DESTINATION ${KIME_CMAKE_DIR})
endif()

configure_package_config_file(cmake/kimeConfig.cmake.in ${PROJECT_BINARY_DIR}/kimeConfig.cmake
  INSTALL_DESTINATION ${KIME_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kimeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kimeConfig.cmake ${PROJECT_BINARY_DIR}/kimeConfigVersion.cmake
  cmake/KimeAddModel.cmake DESTINATION ${KIME_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so the prefix given at install time holds.
file(RELATIVE_PATH KIME_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(cmake/kime.pc.in ${PROJECT_BINARY_DIR}/kime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kime.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
