# ddpbench_package.cmake — `cpack -G DEB` in a build tree makes ddpbench_<version>_<arch>.deb of
# what `cmake --install` puts in a prefix (cmake/ddpbench_install.cmake), installed under /usr.
# Its Depends are the packages that own the libraries the binary links: dpkg-shlibdeps finds the
# Debian ones (libtorch1.13, libopenmpi3, libyaml-cpp0.7, ...). CUDA and NCCL are not Debian
# packages (here they are a toolkit under /usr/local/cuda that dpkg does not know), so
# dpkg-shlibdeps skips them and they are named here as NVIDIA's apt repository names them
# (cuda-cudart-<major>-<minor>, libnccl2): a node that has them from that repository satisfies
# the package, and one without them is told what is missing before the binary fails to start.
# Only a build against the system's libtorch is packaged: a PyPI libtorch lives in a virtual
# environment that no package can depend on (install that build with `cmake --install`).
# tests/install/deb_package_test.sh checks the Depends against the binary's NEEDED libraries.
if(NOT TORCH_INSTALL_PREFIX MATCHES "^/usr/?$")
  message(STATUS "ddpbench: libtorch is not the system's (${TORCH_INSTALL_PREFIX}); no .deb package")
  return()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ddpbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ddpbench developers <ddpbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "correctness and scaling harness for data-parallel (DDP) deep-learning training")
set(CPACK_PACKAGE_DESCRIPTION
    "Runs one training scenario single-device, DataParallel-style and as DDP (ddpbench's engine or\nc10d's Reducer), compares weights, gradients, buffers and losses tensor by tensor against an\nexact per-rank reference, measures throughput and scaling, and writes JSON, CSV, HTML and JUnit\nreports with a regression gate.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Python oracles in share/ddpbench/reference need python3-torch; --export-batches users run
# them, a plain `ddpbench run` does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, python3-torch")

if(DDPBENCH_HAVE_CUDA)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "cuda-cudart-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}, libnccl2")
endif()

include(CPack)
