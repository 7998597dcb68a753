# tests/integration/arm64.cmake (included by CMakeLists.txt here): the agent cross-built for
# aarch64 (cmake/aarch64-linux-gnu.cmake) and loaded into Debian's arm64 OpenJDK 17 running under
# qemu-aarch64 — the arm64 root scripts/arm64.sh fetches. Tests jvm_arm64_<case> (run.py's
# case_arm64_<case>), labels integration and arm64; docs/arm64.md says what they hold and why.
#
# SAMPLER_ARM64: the directory scripts/arm64.sh made (`scripts/arm64.sh --list` prints it).
# Empty: where scripts/arm64.sh puts it, if it is complete there; else the tests are registered
# but say "skipped" (never "passed") until it is fetched and the build configured again. OFF: the
# same, on purpose. The cross tree (build/arm64/) is configured once and built with the rest
# (`cmake --build`), only when the root is there.
set(SAMPLER_ARM64 "" CACHE STRING
    "scripts/arm64.sh's directory for the arm64 JVM tests (empty: where it puts it, if complete; OFF: skip them)")
# it_arm64_cases: run.py's arm64_* cases, from `run.py --list` (CMakeLists.txt here)

set(it_arm64 "")
set(it_arm64_why "")
if(SAMPLER_ARM64 STREQUAL "OFF")
  set(it_arm64_why "SAMPLER_ARM64=OFF")
elseif(NOT SAMPLER_AARCH64_TESTS)
  set(it_arm64_why "SAMPLER_AARCH64_TESTS=OFF: no aarch64 cross compiler and qemu-aarch64")
elseif(SAMPLER_ARM64 STREQUAL "")
  _it_cache_dirs(_dirs)
  foreach(d IN LISTS _dirs)
    if(EXISTS "${d}/arm64/VERSION" AND EXISTS "${d}/arm64/bin/java")
      set(it_arm64 "${d}/arm64")
      break()
    endif()
  endforeach()
  if(NOT it_arm64)
    set(it_arm64_why "no arm64 root (scripts/arm64.sh fetches it; then configure again)")
  endif()
elseif(EXISTS "${SAMPLER_ARM64}/VERSION" AND EXISTS "${SAMPLER_ARM64}/bin/java")
  set(it_arm64 "${SAMPLER_ARM64}")
else()
  message(FATAL_ERROR "SAMPLER_ARM64=${SAMPLER_ARM64}: not a complete arm64 root (no VERSION or bin/java): "
    "scripts/arm64.sh makes one and prints it with --list")
endif()

if(NOT it_arm64)
  message(STATUS "arm64 JVM tests skipped: ${it_arm64_why}")
  foreach(case IN LISTS it_arm64_cases)
    add_test(NAME jvm_arm64_${case}
             COMMAND sh -c "echo 'skipped: ${it_arm64_why}'; exit 77")
    set_tests_properties(jvm_arm64_${case} PROPERTIES LABELS "integration;arm64" SKIP_RETURN_CODE 77)
  endforeach()
  return()
endif()
file(READ "${it_arm64}/VERSION" _arm64_version)
string(STRIP "${_arm64_version}" _arm64_version)
message(STATUS "arm64 JVM tests on ${_arm64_version} under qemu-aarch64 (${it_arm64})")

# The agent, cross-built in a tree of its own: configured once, built whenever this tree is.
set(arm64_tree ${CMAKE_BINARY_DIR}/arm64)
set(arm64_agent ${arm64_tree}/agent/libsampler.so)
add_custom_command(OUTPUT ${arm64_tree}/CMakeCache.txt
  COMMAND ${CMAKE_COMMAND} -S ${PROJECT_SOURCE_DIR} -B ${arm64_tree}
          -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake
          -DSAMPLER_ARM64_ROOT=${it_arm64}/root -DBUILD_TESTING=OFF
          -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DSAMPLER_WERROR=${SAMPLER_WERROR}
  COMMENT "Configuring the aarch64 cross build of the agent (${arm64_tree})")
add_custom_target(arm64_agent ALL
  COMMAND ${CMAKE_COMMAND} --build ${arm64_tree} --target sampler
  DEPENDS ${arm64_tree}/CMakeCache.txt
  BYPRODUCTS ${arm64_agent}
  COMMENT "Building the agent for aarch64 (${arm64_tree})")

# The JNI library of the native-frame scenario, for aarch64 (built as test_platform_aarch64 is).
set(arm64_werror "")
if(SAMPLER_WERROR)
  set(arm64_werror -Werror)
endif()
set(arm64_jnilib ${CMAKE_CURRENT_BINARY_DIR}/libit_nativework_arm64.so)
set(_jni_includes "")
foreach(d IN LISTS JDK_INCLUDE_DIRS)
  list(APPEND _jni_includes -I${d})
endforeach()
add_custom_command(OUTPUT ${arm64_jnilib}
  COMMAND ${AARCH64_CC} -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra ${arm64_werror} -shared -fPIC
          ${_jni_includes} ${CMAKE_CURRENT_SOURCE_DIR}/jni/nativework.c -o ${arm64_jnilib} -ldl
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/jni/nativework.c
  COMMENT "Cross-compiling the JNI test library for aarch64")
add_custom_target(arm64_jnilib ALL DEPENDS ${arm64_jnilib})

foreach(case IN LISTS it_arm64_cases)
  add_test(NAME jvm_arm64_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/run.py
                   --agent ${arm64_agent} --classes ${IT_CLASSES} --java ${it_arm64}/bin/java
                   --jnilib ${arm64_jnilib} arm64_${case})
  set_tests_properties(jvm_arm64_${case} PROPERTIES LABELS "integration;arm64" TIMEOUT 300)
endforeach()
