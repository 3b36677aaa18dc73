"""A dep that switches Triton off at import, as vLLM does when it finds no usable Triton (for
instance when its wheel's .dist-info is missing): `triton` and `tl` become placeholders whose
`jit` leaves functions as they are."""


class TritonPlaceholder:
    def jit(self, fn=None, **kwargs):
        return fn if fn is not None else (lambda f: f)


class TritonLanguagePlaceholder:
    constexpr = None


triton = TritonPlaceholder()
tl = TritonLanguagePlaceholder()
