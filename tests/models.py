"""Small models the model tests build offline from the MiniLM package's tokenizer."""

from __future__ import annotations

from pathlib import Path


def tiny_cross_encoder(model_path: str, folder: Path) -> Path:
    """A one-layer BERT regression head (num_labels 1) with the MiniLM tokenizer, saved in
    ``folder``: the same weights every time (seed 0)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        initializer_range=0.3,  # with seed 0: the five scores of a question differ by > 4e-4
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
