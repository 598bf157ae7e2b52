# kime_add_model(NAME GRAPH graph.json WEIGHTS model.safetensors BUCKETS buckets.json
#                [TARGETS cpu-target...] [CUDA_ARCH sm_NN... | none] [VERIFY] [SIGN KEY.key]
#                [EMBED [RUNTIME kime::runtime | kime::runtime_static]])
#
# Compiles a model with kime-compile in the build: the artifact NAME.kime in
# ${CMAKE_CURRENT_BINARY_DIR}/kime/NAME/, made again only when the Graph, the weights, the bucket
# file or kime-compile change (the same inputs give the same bytes): refit in seconds when only the
# weights changed (kime-compile --update), and otherwise with unchanged kernels taken from the
# kernel cache (KIME_CACHE_DIR, default ~/.cache/kime). VERIFY adds --verify (every
# bucket checked against the reference evaluator; the artifact must run on this machine). SIGN
# signs it with that secret key (kime-keygen's; --sign): a runtime given the public key
# (kime_model_options.trusted_keys) then loads it, and nothing changed since.
#   - Without EMBED, NAME is a target building the artifact (with ALL).
#   - With EMBED, NAME is a static library holding the artifact as page-aligned read-only data,
#     with the generated header NAME.h on its include path: kime_model_open_NAME() and constants
#     for the model's stages and buckets (KIME_<NAME>_STAGE_0_BUCKETS, ...). It links RUNTIME
#     (default kime::runtime; kime::runtime_static for a static executable). No .kime file is
#     needed at run time.
# TARGETS default: the CPU targets of the system being built for (arm-64 on AArch64,
# x86-64-avx2 and x86-64-avx512 on x86-64). CUDA_ARCH default: kime-compile's (sm_80, sm_90).
# kime-compile is kime::kime-compile where the compiler is installed, or the program named by
# KIME_COMPILE_EXECUTABLE (a cross build against a runtime-only install names the host's).
# Sets NAME_ARTIFACT in the caller's scope, and the target property KIME_ARTIFACT.
include_guard(GLOBAL)

set(KIME_COMPILE_EXECUTABLE "" CACHE FILEPATH "kime-compile to run (default: kime::kime-compile)")

function(_kime_compile_command out_var)
  if(KIME_COMPILE_EXECUTABLE)
    if(NOT EXISTS "${KIME_COMPILE_EXECUTABLE}")
      message(FATAL_ERROR "kime_add_model: KIME_COMPILE_EXECUTABLE (${KIME_COMPILE_EXECUTABLE}) does not exist")
    endif()
    set(${out_var} "${KIME_COMPILE_EXECUTABLE}" PARENT_SCOPE)
  elseif(TARGET kime::kime-compile)
    set(${out_var} "$<TARGET_FILE:kime::kime-compile>" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "kime_add_model: no kime-compile: this kime install has only the runtime; "
                        "set KIME_COMPILE_EXECUTABLE to a kime-compile for the build machine")
  endif()
endfunction()

function(_kime_default_targets out_var)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(${out_var} arm-64 PARENT_SCOPE)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(${out_var} x86-64-avx2 x86-64-avx512 PARENT_SCOPE)
  else()
    message(FATAL_ERROR "kime_add_model: kime has no CPU target for ${CMAKE_SYSTEM_PROCESSOR}; name TARGETS")
  endif()
endfunction()

function(kime_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "VERIFY;EMBED" "GRAPH;WEIGHTS;BUCKETS;RUNTIME;SIGN" "TARGETS;CUDA_ARCH")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kime_add_model(${name}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  foreach(input GRAPH WEIGHTS BUCKETS)
    if(NOT arg_${input})
      message(FATAL_ERROR "kime_add_model(${name}): ${input} is required")
    endif()
    get_filename_component(${input} "${arg_${input}}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endforeach()
  if(arg_EMBED AND NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kime_add_model(${name}): with EMBED the name must be a C identifier")
  endif()
  if(arg_RUNTIME AND NOT arg_EMBED)
    message(FATAL_ERROR "kime_add_model(${name}): RUNTIME goes with EMBED")
  endif()
  _kime_compile_command(compile)
  if(NOT arg_TARGETS)
    _kime_default_targets(arg_TARGETS)
  endif()
  list(JOIN arg_TARGETS "," targets)

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/kime/${name}")
  set(artifact "${dir}/${name}.kime")
  # --update: when only the weights changed, the artifact already there is refit (its code kept);
  # otherwise compiled in full, its kernels from the kernel cache where they are there.
  set(command "${compile}" "${GRAPH}" --weights "${WEIGHTS}" --buckets "${BUCKETS}" --target "${targets}"
      -o "${artifact}" --update)
  if(arg_CUDA_ARCH)
    list(JOIN arg_CUDA_ARCH "," archs)
    list(APPEND command --cuda-arch "${archs}")
  endif()
  if(arg_VERIFY)
    list(APPEND command --verify)
  endif()
  set(depends "${GRAPH}" "${WEIGHTS}" "${BUCKETS}" "${compile}")
  if(arg_SIGN)
    get_filename_component(key "${arg_SIGN}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND command --sign "${key}")
    list(APPEND depends "${key}")
  endif()
  set(outputs "${artifact}")
  if(arg_EMBED)
    list(APPEND command --embed ${name})
    list(APPEND outputs "${dir}/${name}.h" "${dir}/${name}.c")
  endif()
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND ${command}
    DEPENDS ${depends}
    COMMENT "kime: compiling model ${name} (${targets})"
    VERBATIM)

  if(arg_EMBED)
    if(NOT arg_RUNTIME)
      set(arg_RUNTIME kime::runtime)
    endif()
    add_library(${name} STATIC "${dir}/${name}.c")
    # The object includes the artifact's bytes: made again whenever the artifact is.
    set_source_files_properties("${dir}/${name}.c" PROPERTIES OBJECT_DEPENDS "${artifact}")
    target_include_directories(${name} PUBLIC "${dir}")
    target_link_libraries(${name} PUBLIC ${arg_RUNTIME})
  else()
    add_custom_target(${name} ALL DEPENDS "${artifact}")
  endif()
  set_target_properties(${name} PROPERTIES KIME_ARTIFACT "${artifact}")
  set(${name}_ARTIFACT "${artifact}" PARENT_SCOPE)
endfunction()
