"""The Triton toolchain type, and how rules request and find it.

In the style of rules_cc's `find_cc_toolchain`/`use_cc_toolchain`: rules write
`toolchains = use_triton_toolchain()` and call `find_triton_toolchain(ctx)`, so the type's label
is spelled once, here, as a `Label` (a string would be resolved against the repository of
whichever .bzl file used it, and breaks when rules_triton is not the main repository).
"""

TRITON_TOOLCHAIN_TYPE = Label("//toolchains:toolchain_type")

def use_triton_toolchain():
    """The `toolchains` entry for a rule that runs Triton tools.

    Returns:
      A list to pass as (or concatenate into) a rule's `toolchains`.
    """

    # Mandatory: no rule of ours can do anything useful without a Triton toolchain, and a
    # resolution error names the missing type more clearly than a later `None` would.
    return [config_common.toolchain_type(TRITON_TOOLCHAIN_TYPE, mandatory = True)]

def find_triton_toolchain(ctx):
    """The resolved Triton toolchain of a rule that declared `use_triton_toolchain()`.

    Args:
      ctx: the rule context.

    Returns:
      The toolchain's `TritonToolchainInfo`.
    """
    return ctx.toolchains[TRITON_TOOLCHAIN_TYPE].triton
