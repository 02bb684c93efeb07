# embed_text_files(OUTPUT FILE FUNCTION NAME NAMESPACE NS COMMENT TEXT INPUTS FILE...):
# a rule writing FILE, a C++ source whose NS::NAME() returns the INPUTS'
# texts by file name (cmake/embed_text.cmake), so a binary carries its
# tables and templates and needs no file beside it.
function(embed_text_files)
  cmake_parse_arguments(EMBED "" "OUTPUT;FUNCTION;NAMESPACE;COMMENT" "INPUTS" ${ARGN})
  string(REPLACE ";" "|" inputs_arg "${EMBED_INPUTS}")
  add_custom_command(
    OUTPUT ${EMBED_OUTPUT}
    COMMAND ${CMAKE_COMMAND} "-DINPUTS=${inputs_arg}" -DOUTPUT=${EMBED_OUTPUT}
            -DNAMESPACE=${EMBED_NAMESPACE} -DFUNCTION=${EMBED_FUNCTION}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${EMBED_INPUTS} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "${EMBED_COMMENT}"
    VERBATIM)
endfunction()
