"""Public API of rules_triton."""

load("//rules/private:providers.bzl", _TritonKernelInfo = "TritonKernelInfo", _TritonToolchainInfo = "TritonToolchainInfo")
load("//rules/private:toolchain.bzl", _triton_toolchain = "triton_toolchain")

TritonKernelInfo = _TritonKernelInfo
TritonToolchainInfo = _TritonToolchainInfo
triton_toolchain = _triton_toolchain
