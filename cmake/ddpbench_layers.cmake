# ddpbench_layers.cmake — one static library per layer, and include roots that make the allowed
# arrows the only ones that compile (docs/ARCHITECTURE.md, "Layers").
#
# Why staged include roots: every header is included by its path from the layer's root
# ("comm/communicator.h"). If all targets saw harness/ as an include directory, any layer could
# include any header and the arrows would be a convention. Instead each layer gets its own root,
# build/layers/<target>/, holding one symlink to its source folder, and only that root is the
# layer's PUBLIC include directory. A layer therefore sees exactly the headers of the layers it
# links to (and theirs, where they link PUBLIC): a forbidden include fails with "No such file",
# which tests/layering proves for the arrows that matter most.

# ddpbench_layer(<target> DIR <source folder> INCLUDE_AS <path from the include root>
#                [SOURCES files relative to DIR...] [PUBLIC deps...] [PRIVATE deps...]
#                [TORCH])
# TORCH: the layer's sources use libtorch; they reuse the one precompiled <torch/torch.h>.
function(ddpbench_layer target)
  cmake_parse_arguments(L "TORCH" "DIR;INCLUDE_AS" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  set(root ${CMAKE_BINARY_DIR}/layers/${target})
  ddpbench_stage_include(${root} ${L_DIR} ${L_INCLUDE_AS})
  list(TRANSFORM L_SOURCES PREPEND ${L_DIR}/)
  add_library(${target} STATIC ${L_SOURCES})
  target_include_directories(${target} PUBLIC ${root})
  target_link_libraries(${target} PUBLIC ${L_PUBLIC} PRIVATE ${L_PRIVATE})
  if(L_TORCH)
    target_link_libraries(${target} PUBLIC ddpbench_torch)
    target_precompile_headers(${target} REUSE_FROM ddpbench_torch_pch)
  endif()
  if(DDPBENCH_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${DDPBENCH_UNITY_BATCH})
  endif()
endfunction()

# Makes <root>/<include_as> a symlink to <dir> (re-created when it points elsewhere).
function(ddpbench_stage_include root dir include_as)
  set(link ${root}/${include_as})
  get_filename_component(parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(IS_SYMLINK ${link})
    file(READ_SYMLINK ${link} current)
    if(current STREQUAL dir)
      return()
    endif()
  endif()
  file(REMOVE ${link})
  file(CREATE_LINK ${dir} ${link} SYMBOLIC)
endfunction()

# What every torch-using layer shares: libtorch, its ABI flags, and one precompiled
# <torch/torch.h> (~20 s of parsing saved in every torch translation unit). The PCH is built once
# by an object library; layers reuse it, so their compile flags must match: no layer adds
# compile definitions or options of its own (include directories may differ).
function(ddpbench_torch_base)
  add_library(ddpbench_torch INTERFACE)
  target_link_libraries(ddpbench_torch INTERFACE ${TORCH_LIBRARIES} ddpbench_fmt Threads::Threads)
  # libstdc++ first among the shared libraries, before libtorch: PyPI's libtorch.so exports its
  # own copies of std::filesystem (64 symbols in torch 2.11) and the dynamic linker binds to the
  # first library that defines a symbol; its remove_all jumps to address 0 (every run crashed).
  # Where the toolchain keeps libtorch ahead anyway (Ubuntu 24.04's, on the GPU machine), the
  # start-up check in harness/runtime/libstdcxx_first.cpp re-runs the process with libstdc++
  # preloaded; --undefined keeps that file in every program that links libtorch.
  # --no-as-needed keeps libtorch_cuda.so, which no project object references by symbol but which
  # CUDA tensors need at run time (Ubuntu's toolchain passes --as-needed by default).
  # tests/unit/runtime_libstdcxx_binding_test.cpp proves the binding.
  add_library(ddpbench_libstdcxx_first STATIC
              ${PROJECT_SOURCE_DIR}/harness/runtime/libstdcxx_first.cpp)
  target_link_libraries(ddpbench_libstdcxx_first PRIVATE ${CMAKE_DL_LIBS})
  target_link_libraries(ddpbench_torch INTERFACE ddpbench_libstdcxx_first)
  target_link_options(ddpbench_torch INTERFACE "LINKER:--no-as-needed" "-lstdc++"
                      "LINKER:--undefined=ddpbench_libstdcxx_first")
  target_compile_options(ddpbench_torch INTERFACE ${TORCH_CXX_FLAGS})
  add_library(ddpbench_torch_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
  target_link_libraries(ddpbench_torch_pch PRIVATE ddpbench_torch)
  target_precompile_headers(ddpbench_torch_pch PRIVATE <torch/torch.h>)
endfunction()
