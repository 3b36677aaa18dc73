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

# The exec group every Triton action (TritonCompile, TritonLink, TritonSass) runs in. Its own
# execution platform is resolved with the Triton toolchain alone, so:
# - a target's `exec_properties = {"triton.KEY": "VALUE"}` reaches exactly these actions (Bazel
#   applies "<exec group>.KEY" keys to that group), not its C++ compile;
# - a toolchain registered with `exec_compatible_with` routes them toolchain-wide to the
#   execution platforms that have those constraints (and so those platforms' exec_properties),
#   while the library's C compiles keep the C++ toolchain's platform.
TRITON_EXEC_GROUP = "triton"

def triton_exec_groups():
    """The `exec_groups` entry for a rule that runs Triton tools.

    Returns:
      A dict to pass as (or merge into) a rule's `exec_groups`.
    """
    return {TRITON_EXEC_GROUP: exec_group(toolchains = use_triton_toolchain())}

def find_triton_exec_toolchain(ctx):
    """The Triton toolchain of the rule's `triton` exec group (see `triton_exec_groups`).

    Args:
      ctx: the rule context.

    Returns:
      The toolchain's `TritonToolchainInfo`.
    """
    return ctx.exec_groups[TRITON_EXEC_GROUP].toolchains[TRITON_TOOLCHAIN_TYPE].triton
