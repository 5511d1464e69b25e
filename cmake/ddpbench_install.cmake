# ddpbench_install.cmake — what `cmake --install build [--prefix P]` puts where: the `ddpbench`
# binary in bin/, the Python oracles that --export-batches users run against their PyTorch in
# share/ddpbench/reference/, and the README with docs/ and reports/*.md beside it in
# share/doc/ddpbench/. The installed binary keeps the run path of every library it links from
# outside the build tree (a PyPI libtorch's folder, CUDA's), so it starts where it is put; the
# system's libraries need none. tests/install/ installs into a temporary prefix and runs it there.
include(GNUInstallDirs)

set_target_properties(ddpbench PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ddpbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reference/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ddpbench/reference
        FILES_MATCHING PATTERN "*.py" PATTERN "README.md" PATTERN "__pycache__" EXCLUDE)
# The README's links stay true where it is installed: docs/ and reports/ beside it, as in the tree.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${PROJECT_SOURCE_DIR}/reports/METRICS.md ${PROJECT_SOURCE_DIR}/reports/SCHEMA.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/reports)
