"""A package whose __init__ imports its kernel module, as vLLM's does (fused_moe)."""
from opspkg import kern  # noqa: F401
