"""
LoRA through peft: the recipe's settings (rank, alpha, dropout, target modules), the adapter's weights on their own
(what a LoRA checkpoint saves), and the merged model (what an export writes: base + B·A·alpha/rank folded in).
Only the adapter's parameters require gradients, so the optimiser holds (and checkpoints) nothing else.
"""
import copy

from validation import bad, get_int, get_num

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def config(given):
    """The checked LoRA settings, or None when given is None/false."""
    if not given:
        return None
    if not isinstance(given, dict):
        raise bad("lora", "expected an object {rank, alpha, dropout, target_modules}")
    for k in given:
        if k not in ("rank", "alpha", "dropout", "target_modules"):
            raise bad(f"lora.{k}", "unknown field")
    out = {"rank": get_int(given, "rank", 16, lo=1), "alpha": get_num(given, "alpha", 32.0),
           "dropout": get_num(given, "dropout", 0.0), "target_modules": given.get("target_modules", DEFAULT_TARGETS)}
    if not 0 <= out["dropout"] < 1:
        raise bad("lora.dropout", "expected a number in [0, 1)")
    t = out["target_modules"]
    if not isinstance(t, list) or not t or not all(isinstance(x, str) and x for x in t):
        raise bad("lora.target_modules", "expected a non-empty array of module names")
    return out


def peft_config(cfg):
    from peft import LoraConfig
    return LoraConfig(r=cfg["rank"], lora_alpha=cfg["alpha"], lora_dropout=cfg["dropout"],
                      target_modules=list(cfg["target_modules"]), task_type="CAUSAL_LM", bias="none")


def wrap(model, cfg):
    """model with fresh adapters on cfg's target modules (B = 0: the wrapped model computes what model did)."""
    from peft import get_peft_model
    try:
        return get_peft_model(model, peft_config(cfg))
    except ValueError as e:  # target modules not found
        raise bad("lora.target_modules", str(e).splitlines()[0][:300])


def adapter_state(model, full_state):
    """The adapter's tensors out of the wrapped model's full state dict (peft's names, as adapter_model.safetensors)."""
    from peft import get_peft_model_state_dict
    return get_peft_model_state_dict(model, state_dict=full_state)


def load_adapter(model, tensors):
    from peft import set_peft_model_state_dict
    res = set_peft_model_state_dict(model, tensors)
    unexpected = getattr(res, "unexpected_keys", None) or []
    if unexpected:
        raise bad("path", f"the adapter does not fit this model: {unexpected[:3]}")


def merged(model, full_state):
    """A plain transformers model (CPU) with the adapter folded in, from the wrapped model's full state dict."""
    import hf_model
    from peft import get_peft_model
    base = hf_model.build(model.base_model.model.config)
    pm = get_peft_model(base, peft_config_from(model))
    pm.load_state_dict(full_state, strict=False)
    return pm.merge_and_unload()


def peft_config_from(model):
    return copy.deepcopy(model.peft_config["default"])
