# The compiler settings every vperf component builds with: the top-level
# project and hv/ configured on its own (tests/vm builds the static VMM so)
# include this one file.
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "build type" FORCE)
endif()

option(VPERF_WERROR "treat warnings as errors (CI turns this on)" OFF)
add_compile_definitions(_GNU_SOURCE)
add_compile_options(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                    -Wno-unused-parameter -fno-omit-frame-pointer)
if(VPERF_WERROR)
  add_compile_options(-Werror)
endif()

find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
# libpfm4 ships no pkg-config file in Debian.
find_path(PFM_INCLUDE_DIR perfmon/pfmlib_perf_event.h)
find_library(PFM_LIBRARY pfm)
find_library(PFM_STATIC_LIBRARY libpfm.a)	# for fully static programs (vperf-vmm-static)
if(NOT PFM_INCLUDE_DIR OR NOT PFM_LIBRARY)
  message(FATAL_ERROR "libpfm4 not found: run scripts/install-deps.sh (Debian package libpfm4-dev)")
endif()
