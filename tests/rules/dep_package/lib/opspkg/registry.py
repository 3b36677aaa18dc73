"""Ops registered at import, like torch.library: registering one twice is an error."""

OPS = set()


def register(name):
    if name in OPS:
        raise RuntimeError(f"Tried to register an operator ({name}) multiple times")
    OPS.add(name)
