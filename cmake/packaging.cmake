# What a user installs: the man pages and shell completions, generated from
# the built binaries (so they say what --help says and list the flags the
# command line defines), the install layout, and a Debian package built by
# CPack: `cmake --build build --target package` writes
# build/imgsmith_<version>_<arch>.deb, its dependencies found by
# dpkg-shlibdeps from the libraries the binaries link.

set(docs_dir ${PROJECT_BINARY_DIR}/share)
find_program(IMGSMITH_HELP2MAN help2man)
find_program(IMGSMITH_GZIP gzip)

# man pages: help2man runs each command's --help through a small wrapper
# (help2man runs one program; the commands are imgsmith's subcommands), with
# the version of the project, so a page cannot drift from the help it shows.
set(man_pages)
if(IMGSMITH_HELP2MAN AND IMGSMITH_GZIP)
  set(man_names imgsmith imgsmith-analyze imgsmith-diff imgsmith-gen imgsmith-slim imgsmith-probe)
  set(man_runs "" analyze diff gen slim "")
  set(man_what
      "small, correct and honest GPU container images"
      "measure a container image, find its waste and gate it in CI"
      "compare two container images"
      "write a small multi-stage Dockerfile for a project"
      "plan how to make an existing container image smaller"
      "check the GPU at container start, then run the app")
  foreach(i RANGE 5)
    list(GET man_names ${i} page)
    list(GET man_runs ${i} sub)
    list(GET man_what ${i} what)
    if(page STREQUAL "imgsmith-probe")
      set(program $<TARGET_FILE:imgsmith-probe>)
    else()
      set(program $<TARGET_FILE:imgsmith>)
    endif()
    set(wrapper ${docs_dir}/help2man/${page})
    set(page_file ${docs_dir}/man/man1/${page}.1.gz)
    add_custom_command(
      OUTPUT ${page_file}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${docs_dir}/help2man ${docs_dir}/man/man1
      COMMAND ${CMAKE_COMMAND} -DOUT=${wrapper} -DPROGRAM=${program} -DNAME=${page} "-DSUB=${sub}"
              -P ${PROJECT_SOURCE_DIR}/cmake/man_wrapper.cmake
      COMMAND ${IMGSMITH_HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
              "--name=${what}" --section=1 --source=imgsmith --manual=imgsmith
              --output=${docs_dir}/man/man1/${page}.1 ${wrapper}
      COMMAND ${IMGSMITH_GZIP} -9nf ${docs_dir}/man/man1/${page}.1
      DEPENDS imgsmith imgsmith-probe ${PROJECT_SOURCE_DIR}/cmake/man_wrapper.cmake
      COMMENT "man page ${page}(1) from its --help"
      VERBATIM)
    list(APPEND man_pages ${page_file})
  endforeach()
  install(FILES ${man_pages} DESTINATION share/man/man1)
else()
  message(WARNING "help2man or gzip not found: no man pages (scripts/setup.sh installs help2man); "
                  "the Debian package needs them")
endif()

# Shell completions, written by `imgsmith completion SHELL`.
set(completion_files
    ${docs_dir}/completions/bash/imgsmith
    ${docs_dir}/completions/zsh/_imgsmith
    ${docs_dir}/completions/fish/imgsmith.fish)
add_custom_command(
  OUTPUT ${completion_files}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${docs_dir}/completions/bash ${docs_dir}/completions/zsh
          ${docs_dir}/completions/fish
  COMMAND sh -c "\"$1\" completion bash > \"$2\" && \"$1\" completion zsh > \"$3\" && \"$1\" completion fish > \"$4\""
          completions $<TARGET_FILE:imgsmith> ${completion_files}
  DEPENDS imgsmith
  COMMENT "shell completions from imgsmith's command line"
  VERBATIM)
add_custom_target(imgsmith_docs ALL DEPENDS ${man_pages} ${completion_files})
install(FILES ${docs_dir}/completions/bash/imgsmith DESTINATION share/bash-completion/completions)
install(FILES ${docs_dir}/completions/zsh/_imgsmith DESTINATION share/zsh/vendor-completions)
install(FILES ${docs_dir}/completions/fish/imgsmith.fish DESTINATION share/fish/vendor_completions.d)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION share/doc/imgsmith RENAME copyright)
install(FILES ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/imgsmith)

# The release notes name this version: a version bumped in project() without
# its CHANGELOG.md section does not configure.
file(STRINGS ${PROJECT_SOURCE_DIR}/CHANGELOG.md release_heading REGEX "^## ${PROJECT_VERSION}( |$)")
if(NOT release_heading)
  message(FATAL_ERROR "CHANGELOG.md has no section '## ${PROJECT_VERSION} — DATE' for the version in project()")
endif()

# The Debian package. Its version is the project's, which --version prints.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME imgsmith)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "imgsmith maintainers <imgsmith@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "small, correct and honest GPU container images")
# CPack puts the summary on the Description line and this text below it,
# each line indented as Debian's control format wants.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "imgsmith analyze measures a container image (a saved file, an OCI layout,
a registry or the Docker daemon): every byte attributed to CUDA, the
framework, OS packages, Python, the app, caches or build tools; the waste
with the bytes each fix saves; dive-compatible efficiency; CI gates with
exit codes, JSON, Markdown, JUnit and HTML reports.
imgsmith gen writes a small multi-stage Dockerfile for a Python or CUDA
project, and imgsmith-probe checks the GPU at container start.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded with dlopen on first use (src/registry/curl_api.hpp,
# src/source/archive_api.hpp), so dpkg-shlibdeps cannot see them: named
# here, at the oldest releases with every function imgsmith calls
# (CURLOPT_PROTOCOLS_STR, archive_read_support_filter_zstd). CPack adds
# what dpkg-shlibdeps finds to these.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.85.0), libarchive13 (>= 3.3.3)")
# Registries are reached over TLS: curl verifies against the system's CAs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/packages)
include(CPack)
