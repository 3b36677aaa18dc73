"""A dep that switches Triton off at import with placeholders that are module objects named
`triton` and `triton.language` (as vLLM's are): `jit`, `autotune` and `heuristics` leave
functions as they are."""

import types


class TritonLanguagePlaceholder(types.ModuleType):
    def __init__(self):
        super().__init__("triton.language")
        self.constexpr = None


class TritonPlaceholder(types.ModuleType):
    def __init__(self):
        super().__init__("triton")
        self.jit = self.autotune = self.heuristics = self._identity
        self.Config = lambda *args, **kwargs: None
        self.language = TritonLanguagePlaceholder()

    @staticmethod
    def _identity(fn=None, **kwargs):
        return fn if fn is not None else (lambda f: f)


triton = TritonPlaceholder()
tl = triton.language
