# How Kerncast is built, as opposed to what: the linker, the amount of debug information, ccache, unity builds and
# precompiled headers. None of it changes what the programs do; it shortens a first build on a 2-core machine, where
# every file parsed Qt, nlohmann-json and CLI11 again and compiled their templates again with full debug information.

# A faster linker when one is installed (mold, then lld; scripts/lib/setup.sh installs lld). KERNCAST_LINKER=default
# keeps the compiler's own.
include(CheckLinkerFlag)
set(KERNCAST_LINKER "" CACHE STRING "Linker passed as -fuse-ld= (mold, lld, gold, bfd); empty: mold or lld when installed, \
else the compiler's default; `default`: the compiler's default")
if(KERNCAST_LINKER STREQUAL "")
  foreach(linker mold lld)
    check_linker_flag(CXX "-fuse-ld=${linker}" KERNCAST_HAS_LINKER_${linker})
    if(KERNCAST_HAS_LINKER_${linker})
      add_link_options(-fuse-ld=${linker})
      break()
    endif()
  endforeach()
elseif(NOT KERNCAST_LINKER STREQUAL "default")
  add_link_options(-fuse-ld=${KERNCAST_LINKER})
endif()

# RelWithDebInfo's -g is what a debugger wants, and it costs about a third of a file's compile time at -O2 (tst_bins,
# tst_cmd_search). `lines` (-g1) keeps file and line numbers for backtraces and profilers; scripts/test and
# scripts/demo build with it unless KERNCAST_DEBUG_INFO=full is set.
set(KERNCAST_DEBUG_INFO full CACHE STRING "Debug information of RelWithDebInfo builds: full (-g) or lines (-g1)")
set_property(CACHE KERNCAST_DEBUG_INFO PROPERTY STRINGS full lines)
if(KERNCAST_DEBUG_INFO STREQUAL "lines")
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
elseif(NOT KERNCAST_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "KERNCAST_DEBUG_INFO must be full or lines, not ${KERNCAST_DEBUG_INFO}")
endif()

# ccache when it is installed (a rebuild after switching branches then compiles only what differs). The precompiled
# headers need these sloppiness settings for ccache to cache the files that use them.
find_program(KERNCAST_CCACHE ccache)
if(KERNCAST_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
                                  CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
                                  ${KERNCAST_CCACHE})
endif()

# Unity builds of the libraries: a batch of files compiled as one parses the headers and instantiates the templates
# they share once. The CLI, widgets and GUI libraries took about 1,200 s of compile jobs file by file and 200 s in
# batches; core and engine about 520 s and 230 s. -DKERNCAST_UNITY_BUILD=OFF compiles file by file (a change to one
# file then rebuilds only that file). A name defined in two files of such a library (say a helper in an anonymous
# namespace) is an error in a unity build: give one of them another name.
option(KERNCAST_UNITY_BUILD "Compile the libraries in batches of files" ON)
function(kerncast_unity_build target)
  if(KERNCAST_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

# Precompiled headers: the third-party headers nearly every file of a target includes, parsed once per target instead
# of once per file (core, engine and the tests). Loading one costs a second or so, so the CLI, widgets and GUI
# libraries go without; core and engine load theirs once per batch. -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns them off (to check that a header includes what it uses).
set(KERNCAST_PCH_STD <algorithm> <array> <cmath> <cstdint> <cstdio> <filesystem> <fstream> <functional> <map>
    <memory> <optional> <set> <sstream> <string> <vector>)
set(KERNCAST_PCH_JSON <nlohmann/json.hpp>)
