# What `cmake --install` puts where (GNU layout under CMAKE_INSTALL_PREFIX), and the
# Debian package `cpack -G DEB` makes of the same files. tests/e2e/install_test.cpp
# checks both: every file below, and the .deb installed into a throwaway root.
include(GNUInstallDirs)

install(TARGETS sitepatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Stripped even without `--strip`: a RelWithDebInfo binary is 123 MB, 4 MB stripped, and
# nobody debugs an installed copy (setup.sh's build/ keeps it). The prefix and DESTDIR
# are read at install time, so `--prefix` and cpack's staging folder both work.
option(SITEPATCH_INSTALL_STRIP "Strip the installed binary" ON)
if(SITEPATCH_INSTALL_STRIP AND CMAKE_STRIP)
  install(CODE "execute_process(COMMAND \"${CMAKE_STRIP}\"
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/sitepatch\"
    RESULT_VARIABLE strip_rc)
  if(NOT strip_rc EQUAL 0)
    message(FATAL_ERROR \"could not strip the installed sitepatch\")
  endif()")
endif()

# The man page with this version in its footer (configure_file reruns when it changes).
configure_file(${CMAKE_SOURCE_DIR}/docs/man/sitepatch.1 ${CMAKE_BINARY_DIR}/generated/sitepatch.1 @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/sitepatch.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Where each shell looks for a vendor's completions (Debian's folders for zsh and fish).
install(FILES ${CMAKE_SOURCE_DIR}/completions/sitepatch.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME sitepatch)
install(FILES ${CMAKE_SOURCE_DIR}/completions/_sitepatch
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/completions/sitepatch.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# The guides, which `sitepatch help --guide TOPIC` also prints from the binary.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/guide/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/guide
        FILES_MATCHING PATTERN "*.md")

# The shipped recipes and the rules and hints the binary carries, as files to read,
# copy and start from: share/sitepatch/recipes/{*.yaml,rules/,hints/}, as in the tree.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/recipes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sitepatch/recipes
        FILES_MATCHING PATTERN "*.yaml")
# Each names its JSON Schema relative to itself (../docs/schema/...): the schemas go
# beside them as in the tree, so an editor opening an installed copy finds its schema.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/schema/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sitepatch/docs/schema
        FILES_MATCHING PATTERN "*.json")

# cpack -G DEB → sitepatch_<version>_<arch>.deb. Libraries come from dpkg-shlibdeps
# (dpkg-dev); python3 is a dependency because local commands run an environment's
# Python and Debian's venvs are made from it; ssh only matters for --host.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sitepatch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "patch installed Python packages by syntax tree, reversibly")
set(CPACK_PACKAGE_CONTACT "sitepatch maintainers <maintainers@users.noreply.a-seed-76d56c79.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.8)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssh-client")
# The summary becomes the first line of Description:, this the paragraph below it.
set(CPACK_PACKAGE_DESCRIPTION "sitepatch edits installed Python packages (a venv's site-packages, a conda
environment, the system's dist-packages) with recipes whose edits are located by
syntax tree. Every change is previewed as a diff, written all or nothing, recorded
in a git history, verifiable after upgrades and reversible. It works on remote
machines over ssh, audits code for operations torch.compile cannot trace, and
turns dynamo's graph-break logs into recipes.")
include(CPack)
