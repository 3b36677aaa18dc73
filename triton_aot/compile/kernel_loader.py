"""Imports the kernel file and finds the @triton.jit function to compile.

Modules are never dropped: a module's import may register things process-wide (torch custom
ops, class registries) and refuse to run twice in one process. The persistent worker instead
runs every request that imports the same files in one process of their own (worker.py,
request_key.py), where a second load finds the kernel module already imported, as a kernel
file's own `import` statement would. The context manager restores sys.path (the import roots).

The kernel module is named after the file's stem (as upstream compile.py does; a stem that is
not an identifier, such as the tutorials' `01-vector-add`, is spelled as one: `_01_vector_add`),
or after its dotted path when the file sits in a package under an --import_path root (the
deepest one: the name its own package gives it, so it is never imported twice, and relative
imports work). Triton puts module names into the symbols of noinline functions, so the
name must not depend on the process (no counters) for the outputs to be reproducible.

A kernel may also come from an installed module (`--kernel_module=liger_kernel.ops.rms_norm`):
imported by name from the toolchain's environment or the --import_path roots, unchanged.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import keyword
import os
import re
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from triton_aot.compile.wrappers import unwrap
from triton_aot.core.binding import ParamInfo
from triton_aot.core.build_terms import FLAG_ATTRIBUTES
from triton_aot.core.errors import UserError


@dataclass(frozen=True)
class LoadedKernel:
    fn: Any  # triton.runtime.jit.JITFunction
    name: str  # Triton function name
    file_name: str  # basename of the kernel file (the only form that reaches outputs)
    params: tuple[ParamInfo, ...]


@contextlib.contextmanager
def load_kernel(kernel_path: str | None, kernel_name: str,
                import_paths: Sequence[str] = (),
                kernel_module: str | None = None,
                bazel_target: str | None = None) -> Iterator[LoadedKernel]:
    """Imports `kernel_path` with its directory and `import_paths` on sys.path, or the
    installed module `kernel_module` with `import_paths` on sys.path.

    `bazel_target`: the rule that runs the import; its failures then name that target's
    attributes (deps, kernel_module), which a BUILD file can change, not this tool's flags."""
    if kernel_module is not None:
        with _load_module(kernel_module, kernel_name, import_paths, bazel_target) as kernel:
            yield kernel
        return
    path = Path(kernel_path)
    if not path.is_file():
        raise UserError(f"--kernel_path: {kernel_path!r} is not a file; give the path of the "
                        "Python file that defines the kernel")
    for root in import_paths:
        if not Path(root).is_dir():
            raise UserError(f"--import_path: {root!r} is not a directory")
    # abspath, not resolve(): Bazel sandboxes are trees of symlinks, and module __file__s
    # are spelled through the sys.path entry they were found in
    kernel_dir = os.path.abspath(path.parent)
    import_roots = [os.path.abspath(p) for p in import_paths]
    module_name = _module_name(path, import_roots)
    roots = [kernel_dir] + import_roots
    if "." in module_name:
        # Imported as pkg.sub.kernel: the kernel's own folder goes last, and not at all when a
        # file or folder in it is named like the top package (kernels/kernels.py would shadow
        # the package `kernels` as a plain module).
        top = module_name.partition(".")[0]
        shadows = (Path(kernel_dir) / f"{top}.py").exists() or (Path(kernel_dir) / top).exists()
        roots = import_roots + ([] if shadows else [kernel_dir])
    if _taken(module_name, roots):
        raise UserError(f"--kernel_path: the kernel file {path.name!r} shadows the Python "
                        f"module {module_name!r}; rename the kernel file")
    saved_path = list(sys.path)
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # never write .pyc next to (read-only) sources
    sys.path[:0] = roots
    importlib.invalidate_caches()
    try:
        module = _import(path, module_name, bazel_target, roots)
        fn = _find_kernel(module, kernel_name, path.name, bazel_target)
        yield LoadedKernel(fn=fn, name=kernel_name, file_name=path.name,
                           params=tuple(ParamInfo(p.name, bool(p.is_constexpr), p.annotation)
                                        for p in fn.params))
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_bytecode


@contextlib.contextmanager
def _load_module(module_name: str, kernel_name: str, import_paths: Sequence[str],
                 bazel_target: str | None) -> Iterator[LoadedKernel]:
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise UserError(f"--kernel_module: {module_name!r} is not a dotted module name; write it "
                        "as in an import statement, e.g. liger_kernel.ops.rms_norm")
    for root in import_paths:
        if not Path(root).is_dir():
            raise UserError(f"--import_path: {root!r} is not a directory")
    roots = [os.path.abspath(p) for p in import_paths]
    saved_path = list(sys.path)
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    sys.path[:0] = roots
    importlib.invalidate_caches()
    try:
        try:
            module = importlib.import_module(module_name)
        except UserError:
            raise
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            if (isinstance(e, ModuleNotFoundError) and e.name
                    and (module_name == e.name or module_name.startswith(e.name + "."))):
                where = (f"{bazel_target}: attribute 'kernel_module'" if bazel_target
                         else "--kernel_module")
                raise UserError(
                    f"{where}: no module named {e.name!r} in the toolchain's Python "
                    "environment or the deps' import roots; add the py_library that provides "
                    "it to deps (a pip hub's package, or your own py_library), or install its "
                    "package where the toolchain's interpreter sees it") from None
            raise import_failure(e, module_name, Path(module_name.rpartition(".")[2] + ".py"),
                                 "--kernel_module", bazel_target, roots) from e
        file_name = module_name
        fn = _find_kernel(module, kernel_name, file_name, bazel_target)
        yield LoadedKernel(fn=fn, name=kernel_name, file_name=file_name,
                           params=tuple(ParamInfo(p.name, bool(p.is_constexpr), p.annotation)
                                        for p in fn.params))
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_bytecode


def module_name_for_file(stem: str) -> str:
    """A module name for a file stem that may not be an identifier (`01-vector-add`): every
    other character becomes `_`, and a leading digit or a keyword gets a `_` prefix. Derived
    from the name alone, so it is the same on every machine and in every process."""
    name = re.sub(r"\W", "_", stem, flags=re.ASCII)
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = "_" + name
    return name


def _taken(name: str, roots: Sequence[str]) -> bool:
    """Whether importing a top-level module `name` would clash with an existing module: one of
    the standard library, or one already imported from elsewhere than the import `roots` (a
    module found in the roots is this kernel's own, imported by an earlier load in this
    process)."""
    top = name.partition(".")[0]
    if top in sys.stdlib_module_names:
        return True
    module = sys.modules.get(top)
    return module is not None and not _found_in(module, set(roots))


def _module_name(path: Path, import_roots: Sequence[str]) -> str:
    """The name the file's own package gives it: its dotted path relative to the deepest
    --import_path root that holds it (`pkg.sub.kernel`, so that relative imports work), or its
    stem when it lies directly in that root or the dotted name is unusable (upstream compile.py's
    name).

    The deepest root wins because a dep's `imports` root is where its package imports the file
    from: `third_party/whl/vllm/ops.py` under the roots `.` and `third_party/whl` is `vllm.ops`
    (as `vllm/__init__.py` imports it), never `third_party.whl.vllm.ops`, which would execute the
    file a second time (and its module-level side effects with it)."""
    file = os.path.abspath(path)
    relative = [Path(os.path.relpath(file, root)).with_suffix("").parts for root in import_roots]
    holding = [parts for parts in relative if parts and parts[0] != os.pardir]
    if holding:
        parts = min(holding, key=len)
        if (len(parts) > 1 and all(p.isidentifier() for p in parts)
                and not _taken(parts[0], import_roots)):
            return ".".join(parts)
    return module_name_for_file(path.stem)


def _import(path: Path, module_name: str, bazel_target: str | None,
            roots: Sequence[str]) -> Any:
    try:
        if "." in module_name:
            module = importlib.import_module(module_name)
            if os.path.abspath(getattr(module, "__file__", "") or "") != os.path.abspath(path):
                raise UserError(f"--kernel_path: importing {module_name!r} found "
                                f"{getattr(module, '__file__', None)!r}, not {str(path)!r}; "
                                "check the --import_path order")
            return module
        loaded = sys.modules.get(module_name)
        if loaded is not None and os.path.abspath(getattr(loaded, "__file__", "") or "") == \
                os.path.abspath(path):
            return loaded  # loaded before in this process: never executed twice
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        # Registered while executing so that dataclasses/typing/self-imports behave as usual;
        # dropped again when it fails, as `import` drops a module that raised
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            if sys.modules.get(module_name) is module:
                del sys.modules[module_name]
            raise
        return module
    except UserError:
        raise
    except BaseException as e:  # SystemExit from a stray sys.exit() included
        if isinstance(e, KeyboardInterrupt):
            raise
        raise import_failure(e, path.name, path, "--kernel_path", bazel_target, roots) from e


def import_failure(e: BaseException, what: str, path: Path, flag: str,
                   bazel_target: str | None, roots: Sequence[str] = ()) -> UserError:
    """The one error line for a kernel module whose import raised `e`, naming where the cause is.

    A missing module is the common case in a monorepo: the kernel imports the repository's own
    code or a package the toolchain lacks. The fix then is a dependency, named in the terms of
    whoever runs the import (a BUILD attribute, or this tool's flags). An error raised in another
    file under the import `roots` (a dep's `__init__`) is that dep's to fix, and a file that is
    opened at import but missing is a `data` file that no py_library lists."""
    detail = _describe(e, path)
    missing = e.name if isinstance(e, ModuleNotFoundError) and e.name else None
    if missing is not None:
        top = missing.partition(".")[0]
        if bazel_target:
            return UserError(
                f"{bazel_target}: attribute 'deps': importing {what} failed: {detail}; add the "
                f"py_library that provides {top!r} to deps (your own py_library, or a pip hub's "
                "package), or, when the kernel itself comes from an installed package, name it "
                "with kernel_module instead of srcs")
        return UserError(
            f"{flag}: importing {what} failed: {detail}; pass --import_path=DIR for the folder "
            f"that holds {top!r}, or install its package in this interpreter")
    raiser = _raising_file(e, roots)
    # (a file missing at import is a `data` omission, named below)
    helper = None if isinstance(e, FileNotFoundError) else _raising_helper(e, path)
    if helper is not None and (raiser is None or raiser.file in (helper.file,
                                                                 os.path.abspath(path))):
        # a module next to the kernel file (another file of its srcs) raised: its own line
        where = f"{bazel_target}: attribute 'srcs'" if bazel_target else flag
        return UserError(
            f"{where}: importing {what} failed: {type(e).__name__}: {_message(e)} (raised in "
            f"{helper.relative}:{helper.line}, which {path.name} imports); the cause is in "
            f"{helper.relative}, not in {path.name}: fix {helper.relative}:{helper.line}")
    # `what` is the module's name when the kernel comes from --kernel_module
    in_kernel_file = (raiser is None or raiser.file == os.path.abspath(path)
                      or raiser.module == what)
    missing_file = isinstance(e, FileNotFoundError) and e.filename
    # a file missing at import is one that no py_library in deps lists in its `data`
    attribute = FLAG_ATTRIBUTES[flag[2:]] if in_kernel_file and not missing_file else "deps"
    where = f"{bazel_target}: attribute '{attribute}'" if bazel_target else flag
    if in_kernel_file:
        culprit, module = path.name, None
    else:
        culprit, module = raiser.relative, raiser.module
        detail += f" (raised in {culprit}:{raiser.line})"
    if missing_file:
        opened = f"{culprit} opens {os.path.basename(str(e.filename))!r} at import"
        if not bazel_target:
            return UserError(f"{where}: importing {what} failed: {detail}; {opened}, and it does "
                             "not exist: put it where that file looks for it")
        lister = (f"the py_library that provides {module!r} (in deps)" if module
                  else "a py_library in deps")
        return UserError(f"{where}: importing {what} failed: {detail}; {opened}, and no input "
                         f"of the build holds it: list the file in the `data` of {lister}")
    if in_kernel_file:
        return UserError(f"{where}: importing {what} failed: {detail}; fix the kernel file")
    provider = ("the py_library in deps that provides it (its files, data or deps)"
                if bazel_target else "the package it belongs to")
    return UserError(f"{where}: importing {what} failed: {detail}; the cause is in {culprit} "
                     f"(module {module!r}), which the kernel's import runs, not in the kernel "
                     f"file: fix that file or {provider}")


@dataclass(frozen=True)
class _Place:
    """A line of a file found through an import root."""

    file: str  # absolute
    relative: str  # to its root, as messages name it
    module: str
    line: int


def _raising_file(e: BaseException, roots: Sequence[str]) -> _Place | None:
    """The innermost place of `e`'s traceback in a file found through `roots` (the kernel file
    and the deps' files, not the toolchain's packages), or None."""
    entries = sorted({os.path.abspath(p) for p in sys.path if p}, key=len, reverse=True)
    root_set = {os.path.abspath(r) for r in roots}
    places = [(f.filename, f.lineno) for f in traceback.extract_tb(e.__traceback__)]
    if isinstance(e, SyntaxError) and e.filename:  # the file that does not parse is no frame
        places.append((e.filename, e.lineno))
    for filename, lineno in reversed(places):
        file = os.path.abspath(filename)
        entry = next((p for p in entries if file.startswith(p + os.sep)), None)
        if entry is None or entry not in root_set:
            continue
        rel = Path(os.path.relpath(file, entry))
        parts = rel.with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        return _Place(file, str(rel), module, lineno)
    return None


def _raising_helper(e: BaseException, path: Path) -> _Place | None:
    """The innermost place of `e`'s traceback in another file of the kernel file's own folder
    (a helper module of the library's srcs), or None."""
    kernel = os.path.abspath(path)
    folder = os.path.dirname(kernel)
    places = [(f.filename, f.lineno) for f in traceback.extract_tb(e.__traceback__)]
    if isinstance(e, SyntaxError) and e.filename:
        places.append((e.filename, e.lineno))
    for filename, lineno in reversed(places):
        file = os.path.abspath(filename)
        if file != kernel and os.path.dirname(file) == folder:
            name = os.path.basename(file)
            return _Place(file, name, name.rpartition(".")[0], lineno or 0)
    return None


def _message(e: BaseException) -> str:
    return e.msg if isinstance(e, SyntaxError) else str(e)


def _describe(e: BaseException, path: Path) -> str:
    """`Type: message` plus the line that raised: the kernel file's, or, when the innermost
    line of the kernel's own folder is in a helper module the kernel file imports, that
    helper's (an `import` in helpers.py:4 that fails is helpers.py's line, not the line of the
    kernel file that imports helpers)."""
    text = f"{type(e).__name__}: {e}"
    if isinstance(e, SyntaxError) and e.lineno:
        return f"{type(e).__name__}: {e.msg} ({Path(e.filename or path).name}:{e.lineno})"
    place = raised_at(e, path)
    return f"{text} ({place})" if place else text


def raised_at(e: BaseException, path: Path) -> str:
    """Where in the kernel file's folder `e` was raised: `k.py:4`, or `helpers.py:4, which
    k.py imports` when the innermost such line is in another file of that folder; "" when no
    line of that folder is in the traceback."""
    kernel = os.path.abspath(path)
    folder = os.path.dirname(kernel)
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        file = os.path.abspath(frame.filename)
        if file == kernel:
            return f"{path.name}:{frame.lineno}"
        if os.path.dirname(file) == folder and file.endswith(".py"):
            return f"{os.path.basename(file)}:{frame.lineno}, which {path.name} imports"
    return ""


def _jit_types() -> tuple[type, type]:
    from triton.runtime.jit import JITFunction, KernelInterface
    return JITFunction, KernelInterface


def _find_kernel(module: Any, kernel_name: str, file_name: str,
                 bazel_target: str | None = None) -> Any:
    jit_function, kernel_interface = _jit_types()
    obj = getattr(module, kernel_name, None)
    # @triton.autotune / @triton.heuristics wrap the JITFunction; AOT compiles the function
    # itself, and gives the wrappers their build-time meaning (decorators.py).
    fn, wrappers = unwrap(obj)
    if fn is not None:
        # Kept on the function for kernel_wrappers() (LoadedKernel stays as it is). Set at every
        # lookup, so it always describes this one, also for a function that outlives the load
        # (one from an installed package, or wrapped under two names).
        fn._rules_triton_wrappers = wrappers
        return fn
    found = sorted(name for name, value in vars(module).items()
                   if isinstance(value, (jit_function, kernel_interface)))
    listing = ", ".join(found) if found else "none"
    what = "is not a @triton.jit function" if hasattr(module, kernel_name) else "is not defined"
    stand_in = None if found else _triton_stand_in(module)
    if stand_in is not None:
        name, value, origin = stand_in
        where = f"{bazel_target}: attribute 'deps'" if bazel_target else "--kernel_name"
        raise UserError(
            f"{where}: {kernel_name!r} {what} in {file_name}, because the file's `{name}` is "
            f"not Triton but {type(value).__name__} from {origin!r}: that module, which a dep "
            "provides, switched Triton off while it was imported. The cause is in that dep, not "
            "in the kernel file: give its py_library every file the package reads at import "
            "(a wheel's .dist-info folder, which package metadata checks read, is a common "
            "omission)")
    raise UserError(f"--kernel_name: {kernel_name!r} {what} in {file_name}; the @triton.jit "
                    f"functions there are: {listing}")


def _triton_stand_in(module: Any) -> tuple[str, Any, str] | None:
    """(name, value, its module) when the kernel module's `triton` or `tl` is something other
    than Triton's own modules: a package that finds Triton unusable at import may bind a
    placeholder instead (vLLM does), and then no function of the file is a JITFunction."""
    for name in ("triton", "tl"):
        value = vars(module).get(name)
        if value is None:
            continue
        if isinstance(value, types.ModuleType):
            # Triton's own module is the one imported under its name; a placeholder may be a
            # module object that calls itself "triton" (vLLM's is), made by another module
            if sys.modules.get(value.__name__) is value:
                origin = value.__name__
            else:
                origin = type(value).__module__
                origin = value.__name__ if origin == "builtins" else origin
                if origin == "triton" or origin.startswith("triton."):
                    origin = f"a module object named {value.__name__!r}"
        else:
            origin = type(value).__module__
        if origin != "triton" and not origin.startswith("triton."):
            return name, value, origin
    return None


def kernel_wrappers(kernel: LoadedKernel) -> tuple:
    """The @triton.autotune / @triton.heuristics objects around the kernel, outermost first."""
    return getattr(kernel.fn, "_rules_triton_wrappers", ())


def _found_in(module: Any, roots: set[str]) -> bool:
    """Whether a top-level module was found in one of the `roots` sys.path entries."""
    file = getattr(module, "__file__", None)
    if file:
        entry = os.path.dirname(os.path.abspath(file))
        if os.path.basename(file).startswith("__init__."):
            entry = os.path.dirname(entry)
        return entry in roots
    # namespace package: its __path__ lists <root>/<name> directories
    return any(os.path.dirname(os.path.abspath(p)) in roots
               for p in list(getattr(module, "__path__", [])))


def import_name(path: Path, import_roots: Sequence[str]) -> str:
    """The module name a file is imported as from these roots (capture imports a launcher of
    `srcs` so, as a compile action imports a kernel file)."""
    return _module_name(path, import_roots)
