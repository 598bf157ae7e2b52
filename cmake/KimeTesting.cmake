# Helpers for the test tree: one wrapper around gtest_discover_tests.
find_package(GTest REQUIRED)
include(GoogleTest)

# kime_add_unittest(NAME SOURCES... LIBS... [PROPERTIES prop value...]): a gtest binary whose
# tests ctest lists one by one, each with PROPERTIES and the label `quick` (the CI tiers:
# test/CMakeLists.txt).
function(kime_add_unittest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;PROPERTIES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    KIME_TEST_DATA="${PROJECT_SOURCE_DIR}/test/data"
    KIME_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS quick ${ARG_PROPERTIES})
endfunction()
