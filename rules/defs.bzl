"""Public API of rules_triton.

    load("@rules_triton//rules:defs.bzl", "triton_algo", "triton_kernel_library")
    load("@rules_triton//rules:defs.bzl", "triton_autotune_algos")   # algos from @triton.autotune
    load("@rules_triton//rules:defs.bzl", "triton_torch_library", "triton_torch_op")  # torch ops
    load("@rules_triton//rules:defs.bzl", "triton_launcher_library")  # declared by calling it
    load("@rules_triton//rules:defs.bzl", "triton_launcher_c_library")  # its call in C, over DLPack
"""

load("//rules/private:providers.bzl", _TritonKernelInfo = "TritonKernelInfo", _TritonToolchainInfo = "TritonToolchainInfo")
load("//rules/private/rules:algo.bzl", _triton_algo = "triton_algo")
load("//rules/private/rules:autotune.bzl", _triton_autotune_algos = "triton_autotune_algos")
load("//rules/private/rules:cuda_headers.bzl", _triton_cuda_headers = "triton_cuda_headers")
load("//rules/private/rules:current_cuda_headers.bzl", _current_cuda_headers = "current_cuda_headers")
load("//rules/private/rules:kernel_library.bzl", _triton_kernel_library = "triton_kernel_library")
load("//rules/private/rules:launcher.bzl", _launcher_op = "launcher_op", _triton_launcher_library = "triton_launcher_library")
load("//rules/private/rules:launcher_c_library.bzl", _triton_launcher_c_library = "triton_launcher_c_library")
load("//rules/private/rules:toolchain.bzl", _triton_toolchain = "triton_toolchain")
load("//rules/private/rules:torch_library.bzl", _triton_torch_library = "triton_torch_library", _triton_torch_op = "triton_torch_op")

current_cuda_headers = _current_cuda_headers
triton_algo = _triton_algo
triton_autotune_algos = _triton_autotune_algos
triton_launcher_library = _triton_launcher_library
triton_launcher_c_library = _triton_launcher_c_library
launcher_op = _launcher_op
triton_cuda_headers = _triton_cuda_headers
triton_kernel_library = _triton_kernel_library
triton_toolchain = _triton_toolchain
TritonKernelInfo = _TritonKernelInfo
TritonToolchainInfo = _TritonToolchainInfo
triton_torch_library = _triton_torch_library
triton_torch_op = _triton_torch_op
