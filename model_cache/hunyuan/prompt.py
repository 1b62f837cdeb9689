"""The OCR prompt around one image, as HunyuanOCR's chat template lays it out."""

from __future__ import annotations

from dataclasses import dataclass

from model_cache.hunyuan.model_config import ModelConfig

DEFAULT_PROMPT = "提取图中的文字。"  # "extract the text in the image"


@dataclass
class Prompt:
    ids: list[int]
    image_start: int  # index of the first image placeholder
    image_tokens: int


def image_token_count(grid_h: int, grid_w: int, merge: int) -> int:
    """Merged rows x (merged cols + newline column) + begin and end vectors."""
    return (grid_h // merge) * (grid_w // merge + 1) + 2


def build_prompt(cfg: ModelConfig, variant: str, image_tokens: int, text_ids: list[int]) -> Prompt:
    head = [cfg.bos_id] + ([cfg.system_1_0_id] if variant == "1.0" else []) + [cfg.image_start_id]
    ids = head + [cfg.image_id] * image_tokens + [cfg.image_end_id] + list(text_ids) + [cfg.assistant_id]
    return Prompt(ids, len(head), image_tokens)
