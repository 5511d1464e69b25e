// torch_pch.cpp — the translation unit that builds the precompiled <torch/torch.h> every torch
// layer reuses (cmake/ddpbench_layers.cmake). Intentionally empty.
