# CMake toolchain file: the agent cross-built for aarch64 Linux on an x86-64 Debian machine.
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DSAMPLER_ARM64_ROOT=$(scripts/arm64.sh --list)/root -DBUILD_TESTING=OFF
#   cmake --build build-arm64 --target sampler
#
# The compiler and C library: Debian's gcc-aarch64-linux-gnu and libc6-dev-arm64-cross
# (/usr/aarch64-linux-gnu). The libraries the agent links (libunwind, libelf, zlib, and what they
# need): the arm64 packages scripts/arm64.sh extracts into SAMPLER_ARM64_ROOT — found there by
# pkg-config (PKG_CONFIG_LIBDIR, PKG_CONFIG_SYSROOT_DIR) and CMake's find_* (CMAKE_FIND_ROOT_PATH);
# programs (javac, for the JDK's headers, which are the same on every architecture) on the host.
# The integration tests build with it (tests/integration/arm64.cmake); BUILD_TESTING must be OFF:
# the unit tests' Criterion has no arm64 build beside the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)

# try_compile re-reads this file in a project of its own: pass the root on to it
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES SAMPLER_ARM64_ROOT)
if(NOT SAMPLER_ARM64_ROOT AND DEFINED ENV{SAMPLER_ARM64_ROOT})
  set(SAMPLER_ARM64_ROOT "$ENV{SAMPLER_ARM64_ROOT}")
endif()
if(NOT SAMPLER_ARM64_ROOT OR NOT EXISTS "${SAMPLER_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig")
  message(FATAL_ERROR "SAMPLER_ARM64_ROOT='${SAMPLER_ARM64_ROOT}': not the root of arm64 packages "
    "(no usr/lib/aarch64-linux-gnu/pkgconfig). scripts/arm64.sh makes one: "
    "-DSAMPLER_ARM64_ROOT=$(scripts/arm64.sh --list)/root")
endif()

set(CMAKE_FIND_ROOT_PATH "${SAMPLER_ARM64_ROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} "${SAMPLER_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${SAMPLER_ARM64_ROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${SAMPLER_ARM64_ROOT}")
# the linked libraries' own dependencies (libunwind's liblzma, libelf's zlib and zstd) are in the
# root too: bookworm's packages keep libc-level libraries in lib/, the rest in usr/lib/
set(_arm64_libdirs "${SAMPLER_ARM64_ROOT}/usr/lib/aarch64-linux-gnu:${SAMPLER_ARM64_ROOT}/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_arm64_libdirs}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_arm64_libdirs}")
