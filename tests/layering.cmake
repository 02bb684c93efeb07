# Checks the libraries' link closures (written by tests/CMakeLists.txt)
# against the layering of src/CMakeLists.txt: a library reaches only those
# below it. Run by ctest as `layering`.
cmake_minimum_required(VERSION 3.22)

# For each library, what it must never reach: the libraries above it or
# beside it, and for everything that reads image bytes, the network.
set(network CURL::libcurl imgsmith_registry imgsmith_inputs)
set(forbidden_imgsmith_util imgsmith_source imgsmith_registry imgsmith_analysis imgsmith_inputs imgsmith_gen
  imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render imgsmith_cli CURL::libcurl)
set(forbidden_imgsmith_source ${network} imgsmith_analysis imgsmith_gen imgsmith_attribution imgsmith_gate
  imgsmith_diff imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_registry imgsmith_inputs imgsmith_analysis imgsmith_gen imgsmith_attribution
  imgsmith_gate imgsmith_diff imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_analysis ${network} imgsmith_gen imgsmith_attribution imgsmith_gate imgsmith_diff
  imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_inputs imgsmith_gen imgsmith_attribution imgsmith_gate imgsmith_diff imgsmith_render
  imgsmith_cli)
set(forbidden_imgsmith_attribution ${network} imgsmith_gen imgsmith_gate imgsmith_diff imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_gate ${network} imgsmith_gen imgsmith_diff imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_diff ${network} imgsmith_gen imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_render ${network} imgsmith_gen imgsmith_cli)
set(forbidden_imgsmith_gen ${network} imgsmith_source imgsmith_analysis imgsmith_attribution imgsmith_gate
  imgsmith_diff imgsmith_render imgsmith_cli)
set(forbidden_imgsmith_cli "")

if(NOT EXISTS "${CLOSURES}")
  message(FATAL_ERROR "layering: ${CLOSURES} is missing; configure the build again")
endif()
file(STRINGS "${CLOSURES}" lines)
set(failures 0)
set(checked 0)
foreach(line IN LISTS lines)
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${line}")
  set(library "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" reached "${CMAKE_MATCH_2}")
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
if(checked LESS 11)
  message(FATAL_ERROR "layering: only ${checked} libraries in ${CLOSURES}")
endif()
if(failures GREATER 0)
  message(FATAL_ERROR "layering: ${failures} link(s) against the order")
endif()
message(STATUS "layering: ${checked} libraries, each reaching only those below it")
