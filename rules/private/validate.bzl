"""Analysis-time checks of triton_kernel_library attributes.

Each returns a normalised value or fails with a message that names the attribute and the fix.
Only what analysis itself needs is checked here: counts, names (hints, targets listed twice)
and each target's backend, read from the generated backends table. The signature's entries
(their grammar, which name a constexpr every algo must set) and what the targets table says of
each target (which triton compiles it, which has TMA) are the compile tool's checks
(triton_aot/core/signature.py, binding.py, target.py), run once per library in its import check,
with one-line errors naming the target and the attribute: the rule keeps no second parser.
"""

load("//rules/private/generated:launch_options.bzl", "LAUNCH_OPTIONS")
load("//rules/private/generated:reset_to_zero.bzl", "EXAMPLE_EXTENTS", "EXAMPLE_NAME", "EXTENT_COUNTS", "FORMS_TEXT")
load("//rules/private/generated:targets.bzl", "ARCH_SPECIFIC_FROM", "BACKENDS", "PTX_FALLBACK_ARCHS")
load("//rules/private/generated:triton_types.bzl", "INT_TYPES")

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_DIGITS = "0123456789"

_ALGO_KEYS = ["constexprs"] + LAUNCH_OPTIONS.keys() + ["grid", "targets", "reset_to_zero"]

def check_launch_args(label, launch_args):
    """Checks `launch_args` entries ("n_rows: i32") and returns the compile tool's flag value.

    Args:
      label: the target's label (for messages).
      launch_args: the `launch_args` attribute.

    Returns:
      The `--launch_args` value ("" when there are none).
    """
    names = {}
    for entry in launch_args:
        parts = entry.split(":")
        name = parts[0].strip()
        if len(parts) != 2 or not is_identifier(name):
            _err(label, "launch_args", "entry '{}' is not 'name: type'; write e.g. launch_args = [\"n_rows: i32\"]".format(entry))
        ty = parts[1].strip()
        if ty not in INT_TYPES:
            _err(label, "launch_args", "'{}' has type '{}'; launch arguments are integers: use one of {}".format(name, ty, ", ".join(INT_TYPES)))
        if name in names:
            _err(label, "launch_args", "'{}' is given twice".format(name))
        names[name] = True
    return ", ".join([e.strip() for e in launch_args])

def is_identifier(text):
    """Whether `text` is a C (and Python) identifier: ASCII letters, digits, '_'.

    Args:
      text: the string.

    Returns:
      bool.
    """
    if not text or text[0] not in _LETTERS:
        return False
    for ch in text.elems():
        if ch not in _LETTERS and ch not in _DIGITS:
            return False
    return True

def _err(label, attr, message):
    fail("{}: attribute '{}': {}".format(label, attr, message))

def check_c_name(label, attr, name):
    """Fails unless `name`, the value of `attr`, is a C identifier.

    Args:
      label: the target's label (for the message).
      attr: the attribute's name.
      name: its value.

    Returns:
      `name`.
    """
    if not is_identifier(name):
        _err(label, attr, "'{}' is not a C identifier; set '{}' to a name made of letters, digits and '_' (not starting with a digit)".format(name, attr))
    return name

def check_signature(label, signature):
    """Fails when the `signature` attribute is empty.

    Its entries are the compile tool's to read (triton_aot/core/signature.py), run once per
    library in its import check, with one error naming the entry and the attribute: the rule
    does not parse them a second time.

    Args:
      label: the target's label (for messages).
      signature: the `signature` attribute.
    """
    if not signature.strip():
        _err(label, "signature", "is empty; give one entry per kernel parameter, e.g. \"*fp16:16, i32, BLOCK\"")

def targets_error(targets):
    """Why the targets' spelling is wrong ("cuda:80", "hip:gfx942", ...; all of one backend), or None.

    This is the rule's one reader of a target's text: `check_targets` parses what it accepts.
    A caller that must not fail in analysis (whose Starlark traceback would come before the
    message) reports the message in an action instead (refusal.bzl).

    Args:
      targets: list of target strings.

    Returns:
      The message (without the label and attribute), or None.
    """
    if not targets:
        return "is empty; give at least one target such as \"cuda:90\" or \"hip:gfx942\""
    seen = {}
    for target in targets:
        parts = target.split(":")
        arch = parts[1] if len(parts) == 2 else ""
        if len(parts) != 2 or parts[0] not in BACKENDS or not arch.isalnum():
            return "'{}' is not a target; write \"cuda:<sm>\" (e.g. \"cuda:90\") or \"hip:gfx<arch>\" (e.g. \"hip:gfx942\")".format(target)
        if target in seen:
            return "'{}' is listed twice".format(target)
        if parts[0] != targets[0].split(":")[0]:
            return "mixes CUDA and HIP targets ('{}' and '{}'); a library is one backend (its C API uses that backend's types): make one library per backend".format(targets[0], target)
        seen[target] = True
    return None

def check_targets(label, attr, targets):
    """Checks the GPU targets' spelling ("cuda:80", "hip:gfx942", ...): all of one backend.

    The rest of the rule reads the structs it returns. Whether some triton compiles each arch is
    the compile tool's check (core/target.py and the targets table), run once per library in its
    import check.

    Args:
      label: the target's label (for messages).
      attr: where the targets come from (`targets` or the flag).
      targets: list of target strings.

    Returns:
      list of struct(name = the target string, arch = "80" or "gfx942", sm = the SM number of a
      CUDA target or None, row = its backend's BACKENDS row (targets.py's, generated)).
    """
    error = targets_error(targets)
    if error:
        _err(label, attr, error)
    parsed = []
    for target in targets:
        backend, arch = target.split(":")
        row = BACKENDS[backend]
        parsed.append(struct(
            name = target,
            backend = backend,
            arch = arch,
            sm = int(arch) if row["arch_is_sm"] and arch.isdigit() else None,
            row = row,
        ))
    return parsed

def ptx_fallback_arch(label, targets):
    """The target whose PTX an `embed_ptx` library embeds: the lowest portable one.

    The driver JIT-compiles that PTX for every later GPU; the PTX of sm_90 and newer is
    arch-specific (sm_90a) and serves no GPU but its own. Which archs can carry it is
    PTX_FALLBACK_ARCHS, generated from triton_aot/core/targets.py's ptx_fallback_arch.

    Args:
      label: the target's label (for messages).
      targets: the library's targets (`check_targets`' structs).

    Returns:
      The arch (a string, as the structs' `arch`) whose variants embed their PTX; None when a
      target is no arch of the targets table (the build fails on it).
    """
    if not targets[0].row["embed_ptx"]:
        _err(label, "embed_ptx", "is CUDA only, but the library targets '{}'; drop embed_ptx for hip libraries".format(targets[0].name))
    portable = [t.sm for t in targets if t.sm != None and t.sm in PTX_FALLBACK_ARCHS]
    if not portable and [t for t in targets if t.sm == None or t.sm < ARCH_SPECIFIC_FROM]:
        return None  # a target no triton compiles: the compile tool refuses it
    if not portable:
        _err(label, "embed_ptx", "every target is cuda:{} or newer, whose PTX Triton writes arch-specific (sm_{}a) and no other GPU can JIT-compile; add a target below cuda:{} to carry the PTX (e.g. \"cuda:80\"), or drop embed_ptx".format(ARCH_SPECIFIC_FROM, ARCH_SPECIFIC_FROM, ARCH_SPECIFIC_FROM))
    return str(min(portable))

def check_specializations(label, specializations):
    """Normalises the hint sets (sorted tokens, one space apart) and refuses two that are the same.

    Analysis needs only the distinct patterns, to count and name the variants; what a hint may
    be (NAME:16 or NAME:1, one per parameter) is the compile tool's rule
    (triton_aot/core/signature.py parse_hints), checked when the variant compiles.

    Args:
      label: the target's label (for messages).
      specializations: the `specializations` attribute.

    Returns:
      list of normalised hint strings ("" for the generic variant).
    """
    if not specializations:
        _err(label, "specializations", "is empty; use [\"\"] for one generic variant")
    seen = {}
    result = []
    for i, spec in enumerate(specializations):
        key = " ".join(sorted([t for t in spec.replace(",", " ").split(" ") if t]))
        if key in seen:
            _err(label, "specializations", "entries {} and {} give the same hints ('{}'); remove one".format(seen[key], i, key))
        seen[key] = i
        result.append(key)
    return result

def check_specialization_algos(label, specialization_algos, specializations, num_algos):
    """Checks `specialization_algos` against the (normalised) specializations and the algos.

    Args:
      label: the target's label (for messages).
      specialization_algos: the attribute: hint pattern -> list of algo indices (strings).
      specializations: the normalised specializations (check_specializations).
      num_algos: how many algos the library has.

    Returns:
      dict: normalised pattern -> dict of the algo indices (int) it keeps; a pattern it does not
      name keeps every algo.
    """
    result = {}
    for spec, algos in specialization_algos.items():
        key = " ".join(sorted([t for t in spec.replace(",", " ").split(" ") if t]))
        if not key:
            _err(label, "specialization_algos", "lists the generic pattern (''), which keeps every algo (the explicit NAME(..., algo_id) and the fallback launch it); remove that entry")
        if key not in specializations:
            _err(label, "specialization_algos", "'{}' is not one of the specializations; regenerate the .tuning_hints.bzl it comes from with tools/tune, or list the pattern in specializations".format(spec))
        kept = {}
        for a in algos:
            if not a.isdigit() or int(a) >= num_algos:
                _err(label, "specialization_algos", "'{}': '{}' is not an algo index (0..{})".format(spec, a, num_algos - 1))
            kept[int(a)] = True
        result[key] = kept
    return result

# What a string constexpr may hold: it ends up in --constexprs (comma separated), in C comments
# and in info strings, so no quote, comma or bracket (triton_aot.core.signature accepts the same).
_STRING_CHARS = _LETTERS + _DIGITS + " .+-"

def _dtype_spelling(text):
    # "tl.float16" or "triton.language.float16" -> "tl.float16"; None for anything else.
    for prefix in ("tl.", "triton.language."):
        if text.startswith(prefix) and is_identifier(text[len(prefix):]):
            return "tl." + text[len(prefix):]
    return None

def _constexpr_repr(label, index, name, value):
    """An algo's constexpr value as the compile tool's --constexprs spells it (Python's)."""
    if value == None:
        return "None"
    if type(value) == "bool":
        return "True" if value else "False"
    if type(value) == "int":
        return str(value)
    if type(value) == "float":
        return repr(value)
    if type(value) == "string":
        dtype = _dtype_spelling(value)
        if dtype:
            return dtype

        # A plain Starlark string is the string constexpr itself ("leaky_relu"); a value that is
        # already quoted ("'leaky_relu'", the signature's spelling) means the same.
        text = value
        if len(text) >= 2 and text[0] == text[-1] and text[0] in ("'", "\""):
            text = text[1:-1]
        for ch in text.elems():
            if ch not in _STRING_CHARS:
                _err(label, "algos", "algos[{}]: constexpr '{}': '{}' is not a value; a string constexpr holds only letters, digits, spaces and _.+- (write it as a plain string, e.g. \"leaky_relu\"), a dtype is written \"tl.float16\"".format(index, name, value))
        return "'" + text + "'"
    _err(label, "algos", "algos[{}]: constexpr '{}' has value {} ({}); use an int, bool, float, None, a string such as \"leaky_relu\" or a dtype such as \"tl.float16\"".format(index, name, value, type(value)))
    return None

def _replaced(template, constexprs):
    for name, value in constexprs.items():
        template = template.replace("{" + name + "}", value)
    return template

def _filled(label, index, what, template, constexprs):
    """`template` with the algo's {CONSTEXPR} placeholders replaced by their values.

    Any other {NAME} is an error naming `what` (the grid, a reset_to_zero region).
    """
    filled = _replaced(template, constexprs)
    if "{" in filled or "}" in filled:
        _err(label, "algos", "algos[{}]: {} '{}' has a {{NAME}} placeholder that is not one of this algo's constexprs ({}); name one of them, or write the value".format(
            index,
            what,
            template,
            ", ".join(constexprs.keys()) or "none",
        ))
    return filled

def _top_level_commas(text):
    """How many commas of `text` are outside parentheses (cdiv(a, b) is one expression)."""
    depth, commas = 0, 0
    for ch in text.elems():
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
    return commas

def _reset_to_zero_for(label, index, regions, constexprs, targets):
    """An algo's reset_to_zero with its {CONSTEXPR} placeholders filled: name -> extents.

    What needs the kernel (is NAME a pointer argument? are the extents valid expressions over
    its integer arguments?) is the compile tool's check; this one catches what the rule can see.
    """
    if type(regions) != "dict" or not regions:
        _err(label, "algos", "algos[{}]: reset_to_zero must be a non-empty dict of pointer argument name -> extents, e.g. {{\"{}\": \"{}\"}}".format(index, EXAMPLE_NAME, EXAMPLE_EXTENTS))
    for target in targets:
        if not target.row["reset_to_zero"]:
            _err(label, "algos", "algos[{}]: reset_to_zero is CUDA only for now, but the library targets '{}'; zero the output before calling a hip library, or build this algo for cuda targets".format(index, target.name))
    result = {}
    for name, text in regions.items():
        if type(name) != "string" or not is_identifier(name):
            _err(label, "algos", "algos[{}]: reset_to_zero key {} is not an argument name; name the pointer argument to zero, e.g. \"{}\"".format(index, repr(name), EXAMPLE_NAME))
        if type(text) != "string" or not text.strip():
            _err(label, "algos", "algos[{}]: reset_to_zero['{}'] must be a string of extents: {}, got {}".format(index, name, FORMS_TEXT, repr(text)))
        filled = _filled(label, index, "reset_to_zero['{}']".format(name), text, constexprs)
        commas = _top_level_commas(filled)
        if commas + 1 not in EXTENT_COUNTS:
            _err(label, "algos", "algos[{}]: reset_to_zero['{}'] '{}' has {} expressions; give {}".format(index, name, text, commas + 1, FORMS_TEXT))
        result[name] = filled
    return result

def _signature_for(label, index, template, constexprs):
    """The signature with the algo's values in its {CONSTEXPR} placeholders.

    The placeholders are block sizes of tensor descriptors: `tensordesc<fp16[{BLOCK_M}, 64]>`.
    """
    signature = _replaced(template, constexprs)
    if "{" in signature or "}" in signature:
        _err(label, "signature", "'{}' has a {{NAME}} placeholder that is not one of algos[{}]'s constexprs ({}); a tensor descriptor's block size may name a constexpr of the signature that every algo sets".format(
            template,
            index,
            ", ".join(constexprs.keys()) or "none",
        ))
    return signature

def _check_launch_option(label, index, name, value, option, targets):
    """Checks one launch option of algos[index] against its entry in LAUNCH_OPTIONS."""
    if option["bool"]:
        if type(value) != "bool":
            _err(label, "algos", "algos[{}]: {} must be True or False, got {}".format(index, name, value))
    elif value != None or option["default"] != None:
        ok = type(value) == "int"
        if ok and option["values"]:
            ok = value in option["values"]
        if ok and option["low"] != None:
            ok = value >= option["low"]
        if ok and option["high"] != None:
            ok = value <= option["high"]
        if not ok:
            _err(label, "algos", "algos[{}]: {} must be {}, got {}".format(index, name, option["spelled"], value))
    if value == None or value == option["default"]:
        return
    for target in targets:
        if option["cuda_only"] and not target.row["cuda_launch_options"]:
            _err(label, "algos", "algos[{}]: {} is CUDA only, but the algo is built for '{}'; drop {} for hip targets".format(index, name, target.name, name))
        minimum = option["min_cuda_arch"]
        if minimum != None and target.sm != None and target.sm < minimum:
            _err(label, "algos", "algos[{}]: {} = {} needs cuda:{} or newer, but the algo is built for '{}'; restrict the algo with targets = [\"cuda:{}\"], or drop {}".format(index, name, value, minimum, target.name, minimum, name))

def check_algos(label, algos, defaults, duplicates = None):
    """Decodes `algos` (triton_algo JSON) into dicts with every field filled in.

    Args:
      label: the target's label (for messages).
      algos: the `algos` attribute (triton_algo JSON strings).
      defaults: dict with the library's num_warps, num_stages, grid, targets (`check_targets`'
        structs) and signature.
      duplicates: a list that gets the message of two algos that are the same (analysis goes
        on: the caller reports it in an action, refusal.bzl), or None to fail.

    Returns:
      list of dicts: constexprs (name -> source spelling), every launch option of
      LAUNCH_OPTIONS (num_warps, ..., enable_fp_fusion), grid and signature (placeholders
      filled in), and
      reset_to_zero (name -> extents, placeholders filled in) when the algo has it.
    """
    if not algos:
        # the signature's constexpr names without a value are the compile tool's error
        algos = [json.encode({"constexprs": {}})]
    library_targets = {t.name: t for t in defaults["targets"]}
    result = []
    seen = {}
    for i, text in enumerate(algos):
        algo = json.decode(text, default = None)
        if type(algo) != "dict":
            _err(label, "algos", "algos[{}] is not a triton_algo(...) value: {}".format(i, text))
        for key in algo.keys():
            if key not in _ALGO_KEYS:
                _err(label, "algos", "algos[{}]: unknown key '{}' (known: {})".format(i, key, ", ".join(_ALGO_KEYS)))
        constexprs = {}
        given = algo.get("constexprs", {})
        for name, value in given.items():
            # A name the signature does not list is a constexpr the signature leaves out (one
            # with a default, or after the last entry): the compile tool, which has the kernel,
            # checks that it is a tl.constexpr parameter.
            if not is_identifier(name):
                _err(label, "algos", "algos[{}]: '{}' is not a parameter name; constexprs maps tl.constexpr parameter names to values".format(i, name))
            constexprs[name] = _constexpr_repr(label, i, name, value)
        algo_targets = algo.get("targets", None)
        if algo_targets != None:
            if type(algo_targets) != "list" or not algo_targets:
                _err(label, "algos", "algos[{}]: targets must be a non-empty list of the library's targets, got {}".format(i, algo_targets))
            for t in algo_targets:
                if t not in library_targets:
                    _err(label, "algos", "algos[{}]: target '{}' is not one of the library's targets ({}); an algo's targets restrict the library's".format(i, t, ", ".join(library_targets.keys())))
        normalised = {"constexprs": constexprs}
        for name, option in LAUNCH_OPTIONS.items():
            default = option["default"]
            if default == None and name in defaults:
                default = defaults[name]  # the library's attribute (num_warps, num_stages)
            value = algo.get(name, default)
            _check_launch_option(label, i, name, value, option, [library_targets[t] for t in algo_targets] if algo_targets else defaults["targets"])
            normalised[name] = value
        grid_template = algo.get("grid", defaults["grid"])
        if not grid_template:
            _err(label, "grid", "no grid: set 'grid' on the library or on algos[{}]".format(i))
        normalised["grid"] = _filled(label, i, "grid", grid_template, constexprs)
        normalised["signature"] = _signature_for(label, i, defaults["signature"], constexprs)
        if "reset_to_zero" in algo:
            normalised["reset_to_zero"] = _reset_to_zero_for(label, i, algo["reset_to_zero"], constexprs, defaults["targets"])
        key = json.encode({k: normalised[k] for k in sorted(normalised.keys()) if k not in ("grid", "signature")})
        normalised["targets"] = algo_targets
        if key in seen:
            message = "algos[{}] and algos[{}] are the same algo; remove one".format(seen[key], i)
            if duplicates == None:
                _err(label, "algos", message)
            elif not duplicates:
                duplicates.append(message)
        seen[key] = i
        result.append(normalised)
    return result
