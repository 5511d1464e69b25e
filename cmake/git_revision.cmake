# git_revision.cmake — regenerates git_revision.h on every build, rewriting it only when the
# revision changed, so reports name the commit that was actually built without forcing rebuilds.
set(DDPBENCH_GIT_HEADER_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_target(ddpbench_git_revision
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${DDPBENCH_GIT_HEADER_DIR}/ddpbench_git_revision.h
          -P ${CMAKE_SOURCE_DIR}/cmake/write_git_revision.cmake
  BYPRODUCTS ${DDPBENCH_GIT_HEADER_DIR}/ddpbench_git_revision.h
  COMMENT "Checking git revision")
