"""HunyuanOCR's special token ids (shared by the checkpoint and the prompt builder)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecialIds:
    bos: int = 120000
    pad: int = 120002
    assistant: int = 120006  # ends the user turn; generation starts after it
    eos: int = 120007
    eod: int = 120020
    system_1_0: int = 120021  # 1.0 prompts carry it right after BOS
    image_start: int = 120118
    image_end: int = 120119
    image: int = 120120
    newline: int = 120121

    def names(self) -> dict[int, str]:
        """Token strings for the tiny test tokenizer (the real tokenizer.json has its own)."""
        return {
            self.bos: "<|hy_begin_of_sentence|>", self.pad: "<|hy_pad|>",
            self.assistant: "<|hy_Assistant|>", self.eos: "<|hy_eos|>",
            self.eod: "<|hy_end_of_document|>", self.system_1_0: "<|hy_system|>",
            self.image_start: "<|hy_image_start|>", self.image_end: "<|hy_image_end|>",
            self.image: "<|hy_image|>", self.newline: "<|hy_image_newline|>",
        }
