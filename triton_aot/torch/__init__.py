"""torch ops over kernel libraries (`python -m triton_aot.torch.torch_ops`): the op library's
C++ source and Python module, from each library's library description alone.
"""
