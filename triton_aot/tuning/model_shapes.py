"""A model's matmul calls to tune: its linear layers' (N, K) in torch.nn.Linear's layout, from a
list of pairs or a Hugging Face config.json, times a range of batch sizes (M).

    layers_of_config(json.load(open("config.json")))  -> [Layer("q", 4096, 4096), ...]
    parse_layers("4096x4096,1024x4096")              -> [Layer("4096x4096", 4096, 4096), ...]
    batch_sizes("1:8192", 20)                         -> 20 M log-spaced from 1 to 8192
    model_calls(layers, ms)                           -> the tuning calls (M, N, K, layout "nt")

From a config: q, k/v and o of the attention and the fused qkv (frameworks run either), the
MLP's gate/up, the fused gate_up and down, the experts' of a mixture of experts (and its shared
expert), and the LM head, which only gets batch sizes up to LM_HEAD_MAX_M (a server gives it one
row per sequence). Layers with the same (N, K) are one layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from triton_aot.core.errors import UserError

if TYPE_CHECKING:  # call_hints imports absl, which the build machine's python3 may lack
    from triton_aot.tuning.call_hints import Call

LM_HEAD_MAX_M = 256


@dataclass(frozen=True)
class Layer:
    name: str
    n: int
    k: int


def _int_field(cfg: dict, *names: str, default: int | None = None) -> int | None:
    for name in names:
        v = cfg.get(name)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return default


def layers_of_config(cfg: Any, what: str = "config.json") -> list[Layer]:
    """The linear layers of a Hugging Face decoder config (text_config when it nests one)."""
    if not isinstance(cfg, dict):
        raise UserError(f"{what}: not a JSON object; give a Hugging Face config.json")
    cfg = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    hidden = _int_field(cfg, "hidden_size", "n_embd", "d_model")
    heads = _int_field(cfg, "num_attention_heads", "n_head")
    if hidden is None or heads is None:
        raise UserError(f"{what}: needs hidden_size and num_attention_heads (a decoder's "
                        "config.json); or give the layers as --layers=NxK,...")
    kv = _int_field(cfg, "num_key_value_heads", default=heads)
    head_dim = _int_field(cfg, "head_dim", default=hidden // heads)
    q, kvd = heads * head_dim, kv * head_dim
    out = [Layer("q", q, hidden), Layer("k/v", kvd, hidden), Layer("qkv", q + 2 * kvd, hidden),
           Layer("o", hidden, q)]
    inter = _int_field(cfg, "intermediate_size", "n_inner", "ffn_dim")
    experts = _int_field(cfg, "num_local_experts", "n_routed_experts", "num_experts")
    moe_inter = _int_field(cfg, "moe_intermediate_size", default=inter if experts else None)
    if inter is not None and not (experts and _int_field(cfg, "moe_intermediate_size") is None):
        out += [Layer("gate/up", inter, hidden), Layer("gate_up", 2 * inter, hidden),
                Layer("down", hidden, inter)]
    if experts and moe_inter:
        out += [Layer("expert gate/up", moe_inter, hidden),
                Layer("expert gate_up", 2 * moe_inter, hidden),
                Layer("expert down", hidden, moe_inter)]
        shared = _int_field(cfg, "shared_expert_intermediate_size")
        if shared is None and _int_field(cfg, "n_shared_experts"):
            shared = moe_inter * cfg["n_shared_experts"]
        if shared:
            out += [Layer("shared expert gate/up", shared, hidden),
                    Layer("shared expert gate_up", 2 * shared, hidden),
                    Layer("shared expert down", hidden, shared)]
    vocab = _int_field(cfg, "vocab_size")
    if vocab:
        out.append(Layer("lm_head", vocab, hidden))
    seen, unique = set(), []
    for layer in out:
        if (layer.n, layer.k) not in seen:
            seen.add((layer.n, layer.k))
            unique.append(layer)
    return unique


def parse_layers(text: str) -> list[Layer]:
    """`NxK,NxK,...`: the weight of each layer is [N, K] (y = x @ W.t())."""
    out = []
    for tok in (t.strip() for t in text.split(",") if t.strip()):
        n, _, k = tok.partition("x")
        if not (n.isdigit() and k.isdigit() and int(n) > 0 and int(k) > 0):
            raise UserError(f"--layers: {tok!r} is not NxK (e.g. 4096x4096,1024x4096: N = "
                            "output features, K = input features)")
        out.append(Layer(tok, int(n), int(k)))
    if not out:
        raise UserError("--layers is empty; give NxK pairs, e.g. --layers=4096x4096,14336x4096")
    return out


def batch_sizes(spec: str, count: int) -> list[int]:
    """`LO:HI` with `count` sizes log-spaced from LO to HI (rounded, distinct), or a list
    `1,16,300`."""
    try:
        if ":" in spec:
            lo, hi = (int(v) for v in spec.split(":"))
            if not 1 <= lo <= hi or count < 1:
                raise ValueError
            if count == 1 or lo == hi:
                return [lo]
            vals = {round(lo * (hi / lo) ** (i / (count - 1))) for i in range(count)}
            return sorted(vals)
        vals = sorted({int(v) for v in spec.split(",") if v.strip()})
        if not vals or vals[0] < 1:
            raise ValueError
        return vals
    except ValueError:
        raise UserError(f"--batch={spec!r}: give LO:HI (with --batch_count sizes log-spaced "
                        "between them) or a list of sizes, e.g. 1:8192 or 1,16,300") from None


def model_calls(layers: Sequence[Layer], ms: Sequence[int], layout: str | None = "nt"
                ) -> list[Call]:
    """The tuning calls of these layers at these batch sizes (the LM head at M <=
    LM_HEAD_MAX_M only), in layer then M order; `layout` becomes make_args' keyword."""
    from triton_aot.tuning.call_hints import Call

    extra = (("layout", layout),) if layout else ()
    calls = []
    for layer in layers:
        for m in ms:
            if layer.name == "lm_head" and m > LM_HEAD_MAX_M:
                continue
            calls.append(Call((m, layer.n, layer.k), extra))
    return calls


def cost(call: Call) -> float:
    """A call's relative tuning cost, for balancing shards: its work, plus a floor for the
    launch and the fixed per-algo overhead."""
    return float(math.prod(call.key)) + 2.0 ** 27
