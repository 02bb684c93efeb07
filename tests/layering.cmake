# Checks the libraries' link closures (written by tests/CMakeLists.txt)
# against the layering of src/CMakeLists.txt: a library reaches only those
# below it. Run by ctest as `layering`.
cmake_minimum_required(VERSION 3.22)

# For each library, what it must never reach: the libraries above it or
# beside it, and for everything that reads image bytes, the network.
set(network imgsmith_curl_api imgsmith_registry imgsmith_inputs)
set(forbidden_imgsmith_util imgsmith_models imgsmith_kernels imgsmith_report imgsmith_source imgsmith_registry imgsmith_analysis imgsmith_inputs imgsmith_gen
  imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli imgsmith_curl_api)
set(forbidden_imgsmith_models imgsmith_kernels imgsmith_report imgsmith_source ${network} imgsmith_analysis imgsmith_gen
  imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_kernels imgsmith_report imgsmith_source ${network} imgsmith_analysis imgsmith_gen
  imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_source imgsmith_models imgsmith_kernels imgsmith_report ${network} imgsmith_analysis imgsmith_gen imgsmith_attribution imgsmith_gate
  imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_registry imgsmith_kernels imgsmith_report imgsmith_inputs imgsmith_analysis imgsmith_gen imgsmith_attribution
  imgsmith_gate imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_analysis imgsmith_kernels imgsmith_report ${network} imgsmith_gen imgsmith_attribution imgsmith_gate imgsmith_diff
  imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_inputs imgsmith_kernels imgsmith_report imgsmith_gen imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render
  imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_attribution imgsmith_kernels imgsmith_report ${network} imgsmith_gen imgsmith_gate imgsmith_diff imgsmith_render
  imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_gate imgsmith_report ${network} imgsmith_gen imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_report ${network} imgsmith_gen imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_diff ${network} imgsmith_gen imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_render ${network} imgsmith_gen imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_gen imgsmith_kernels imgsmith_report ${network} imgsmith_source imgsmith_analysis imgsmith_attribution imgsmith_gate
  imgsmith_diff imgsmith_render imgsmith_api imgsmith_cli)
set(forbidden_imgsmith_api imgsmith_gen imgsmith_cli)
set(forbidden_imgsmith_cli "")

# Ends a check: fewer than LEAST things seen means it read nothing, and any
# failure fails the test.
function(conclude seen least nothing failures against passed)
  if(seen LESS least)
    message(FATAL_ERROR "layering: ${nothing}")
  endif()
  if(failures GREATER 0)
    message(FATAL_ERROR "layering: ${failures} ${against}")
  endif()
  message(STATUS "layering: ${passed}")
endfunction()

if(NOT EXISTS "${CLOSURES}")
  message(FATAL_ERROR "layering: ${CLOSURES} is missing; configure the build again")
endif()
# LIBRARY=REACHED,... a line: the libraries, and reached_LIBRARY for each.
file(STRINGS "${CLOSURES}" lines)
set(libraries "")
foreach(line IN LISTS lines)
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${line}")
  list(APPEND libraries "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" reached_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()

set(failures 0)
set(checked 0)
foreach(library IN LISTS libraries)
  set(reached ${reached_${library}})
  if(NOT DEFINED forbidden_${library})
    message(SEND_ERROR "layering: ${library} has no place in the layering; add it to tests/layering.cmake")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  foreach(other IN LISTS forbidden_${library})
    if(other IN_LIST reached)
      message(SEND_ERROR "layering: ${library} links ${other}, which sits above it or beside it")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endforeach()
conclude(${checked} 15 "only ${checked} libraries in ${CLOSURES}" ${failures} "link(s) against the order"
         "${checked} libraries, each reaching only those below it")

# Includes follow the links: a library's files (src/LIB/, and its headers in
# include/imgsmith/LIB/) include imgsmith/OTHER/ headers only for an OTHER it
# links. imgsmith/version.hpp is generated for everyone.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "layering: SOURCE_DIR is not set")
endif()
set(include_failures 0)
set(files_checked 0)
foreach(target IN LISTS libraries)
  string(REGEX REPLACE "^imgsmith_" "" library "${target}")
  set(reached ${reached_${target}})
  file(GLOB_RECURSE files "${SOURCE_DIR}/src/${library}/*.cpp" "${SOURCE_DIR}/src/${library}/*.hpp"
       "${SOURCE_DIR}/include/imgsmith/${library}/*.hpp")
  foreach(source IN LISTS files)
    math(EXPR files_checked "${files_checked} + 1")
    file(STRINGS "${source}" includes REGEX "^#include \"imgsmith/")
    foreach(include IN LISTS includes)
      if(include MATCHES "^#include \"imgsmith/version\\.hpp\"")
        continue()
      endif()
      if(NOT include MATCHES "^#include \"imgsmith/([a-z_]+)/")
        file(RELATIVE_PATH shown "${SOURCE_DIR}" "${source}")
        message(SEND_ERROR "layering: ${shown}: ${include} names no library's folder (imgsmith/LIB/...)")
        math(EXPR include_failures "${include_failures} + 1")
        continue()
      endif()
      set(other "${CMAKE_MATCH_1}")
      if(NOT other STREQUAL library AND NOT "imgsmith_${other}" IN_LIST reached)
        file(RELATIVE_PATH shown "${SOURCE_DIR}" "${source}")
        message(SEND_ERROR "layering: ${shown} (imgsmith_${library}) includes ${include}, "
                           "but imgsmith_${library} does not link imgsmith_${other}")
        math(EXPR include_failures "${include_failures} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
conclude(${files_checked} 50 "only ${files_checked} files found under ${SOURCE_DIR}/src and include"
         ${include_failures} "include(s) against the order" "the includes of ${files_checked} files follow the links")
