# What makes a build cheaper, each step measured (README "Build times"):
#   PJEMU_PCH    precompiled headers: the standard headers, nlohmann and fmt that nearly every
#                file includes, Catch2 for the tests, CLI11 for the commands, LibTorch for the
#                trainer's files that include it (trainer/CMakeLists.txt). One header set,
#                compiled once, reused by every target of its group.
#   PJEMU_UNITY  unity build of the emulator's libraries: the sources of a target compiled as
#                one file (PJEMU_UNITY_BATCH 0; batches of 16 took 17 % more CPU, of 6 a third
#                more than 16: each batch instantiates the same nlohmann, fmt and std templates
#                again), and the trainer's LibTorch files as one. The commands then reuse the
#                core PCH: precompiling CLI11 (22 CPU s) costs more than parsing it in their two
#                files. Cheaper from scratch, dearer after touching one .cc (its whole library
#                rebuilds): on for every first build (CI's sanitizer builds, the build/
#                tools/quickstart or tools/test makes), off by default for a developer's
#                build/. Not the tests: their files share fixture names.
#   PJEMU_DEBUG_INFO  lines (default): -g1, line tables and function names: backtraces, gdb
#                `bt` and stepping by line, no local variables; a quarter of a compile at -O2
#                (measured per file, README "Build times"). full: -g, for a debugging session.
#                none: -g0, what tools/quickstart builds (the same compile time per file; -g1's
#                sections, mostly function names, were 210 of pjemu's 221 MB).
#   ccache       used when it is on PATH (and no launcher was given).
#   lld          every link with ld.lld when it is there (Debian's lld, installed by setup).
option(PJEMU_PCH "Precompile the headers most sources include" ON)
option(PJEMU_UNITY "Unity build (batches of sources compiled as one file)" OFF)
set(PJEMU_UNITY_BATCH 0 CACHE STRING "Sources per unity batch (0: all of a target's)")
set(PJEMU_DEBUG_INFO lines CACHE STRING "Debug info of RelWithDebInfo builds: lines, full or none")
set_property(CACHE PJEMU_DEBUG_INFO PROPERTY STRINGS lines full none)
# The compile option of each level, after CMAKE_CXX_FLAGS_RELWITHDEBINFO's -g on the command
# line, so that it wins.
set(_pjemu_debug_flag_lines -g1)
set(_pjemu_debug_flag_none -g0)
set(_pjemu_debug_flag_full "")
if(NOT PJEMU_DEBUG_INFO MATCHES "^(lines|full|none)$")
  message(FATAL_ERROR "PJEMU_DEBUG_INFO is '${PJEMU_DEBUG_INFO}': use lines, full or none")
endif()
if(_pjemu_debug_flag_${PJEMU_DEBUG_INFO})
  add_compile_options($<$<CONFIG:RelWithDebInfo>:${_pjemu_debug_flag_${PJEMU_DEBUG_INFO}}>)
endif()
# A unity batch includes .cc files, which GCC then takes for headers: a class of one file with a
# member of a type from that file's anonymous namespace draws -Wsubobject-linkage, meant for
# headers only.
if(PJEMU_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-subobject-linkage)
endif()

if(NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(PJEMU_CCACHE ccache)
  if(PJEMU_CCACHE)
    # pch_defines,time_macros: what ccache needs to cache objects compiled with a PCH.
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${PJEMU_CCACHE})
  endif()
endif()

include(CheckLinkerFlag)
check_linker_flag(CXX -fuse-ld=lld PJEMU_HAVE_LLD)
if(PJEMU_HAVE_LLD)
  add_link_options(-fuse-ld=lld)
endif()

# The headers of each precompiled group. Every header here is one that most files of the group
# include anyway; a PCH with extra headers costs little, a missing heavy one a lot.
set(PJEMU_PCH_CORE
  <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional> <map> <memory> <mutex>
  <optional> <set> <sstream> <string> <string_view> <thread> <utility> <vector>
  <nlohmann/json.hpp> <fmt/format.h>)

# pjemu_pch_owner(NAME HEADERS h... LIBS l...): an object library that only compiles the PCH
# of a group, with the compile definitions its users get from LIBS (a PCH is valid only where
# the macros its headers test are the same).
function(pjemu_pch_owner name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS" ${ARGN})
  set(anchor ${CMAKE_BINARY_DIR}/pch/${name}.cc)
  if(NOT EXISTS ${anchor})
    file(WRITE ${anchor} "// The translation unit that owns the ${name} precompiled header.\n")
  endif()
  add_library(${name} OBJECT ${anchor})
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  if(PJEMU_PCH)
    target_precompile_headers(${name} PRIVATE ${P_HEADERS})
  endif()
endfunction()

# pjemu_speed_up(OWNER o [NO_UNITY] TARGETS t...): each target reuses o's PCH and, with
# PJEMU_UNITY and without NO_UNITY, is a unity build.
function(pjemu_speed_up)
  cmake_parse_arguments(S "NO_UNITY" "OWNER" "TARGETS" ${ARGN})
  foreach(target IN LISTS S_TARGETS)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    if(PJEMU_PCH AND S_OWNER)
      target_precompile_headers(${target} REUSE_FROM ${S_OWNER})
    endif()
    if(PJEMU_UNITY AND NOT S_NO_UNITY)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                                 UNITY_BUILD_BATCH_SIZE ${PJEMU_UNITY_BATCH})
    endif()
  endforeach()
endfunction()

# The build-system targets defined in a folder and its subfolders.
function(pjemu_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    pjemu_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()
