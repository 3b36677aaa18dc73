"""Not triton: a py_library without the wheel's files."""
