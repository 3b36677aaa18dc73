"""A package of kernels that uses relative imports (needs --import_path=pkg_root)."""
