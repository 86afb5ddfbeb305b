"""Transformer families of the zoo, all attention through ``F.scaled_dot_product_attention``:

* ``Bert``: a BERT-style encoder (HF BertModel layout: embeddings, N post-LN layers, tanh pooler);
* ``GPT2``: a GPT-2-style decoder with pre-LN blocks, tanh GELU and the LM head tied to the token embedding;
* ``Llama``: a Llama-style decoder: RMSNorm, rotary positions, grouped-query attention, SwiGLU MLP.

Parameter counts, derived by hand (h = hidden, f = FFN width, V = vocab, P = positions, L = layers):

* BERT-base (h 768, f 3072, V 30522, P 512, 2 token types, L 12):
  embeddings (30522 + 512 + 2) * 768 + LayerNorm 2 * 768 = 23,837,184;
  per layer: q, k, v, out 4 * (768*768 + 768) = 2,362,368; FFN 768*3072 + 3072 + 3072*768 + 768 = 4,722,432;
  two LayerNorms 3,072 -> 7,087,872; x 12 = 85,054,464; pooler 768*768 + 768 = 590,592.
  Total 109,482,240.
* GPT-2 small (h 768, V 50257, P 1024, L 12): wte 38,597,376 + wpe 786,432 + 12 * 7,087,872 (same block as
  BERT's) + ln_f 1,536 = 124,439,808; lm_head.weight is wte.weight (38,597,376 shared elements, counted once).
* Llama (h, f, V, heads H, KV heads K, head dim d = h / H, L layers, untied head):
  per layer q h*h + k, v 2 * h*K*d + o h*h + MLP 3 * h*f + 2 norms 2h; total = L * layer + 2 * V*h + h.
  llama-7b (h 4096, f 11008, V 32000, H = K = 32, L 32): 202,383,360 per layer -> 6,738,415,616.
  llama-70b (h 8192, f 28672, V 32000, H 64, K 8, L 80): q 67,108,864 + k 8,388,608 + v 8,388,608
  + o 67,108,864 + MLP 704,643,072 + norms 16,384 = 855,654,400 per layer; x 80 = 68,452,352,000;
  + embed 262,144,000 + lm_head 262,144,000 + norm 8,192 = 68,976,648,192.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F


def _split_heads(x: Tensor, heads: int) -> Tensor:
    b, s, _ = x.shape
    return x.view(b, s, heads, -1).transpose(1, 2)  # (b, heads, s, d)


def _merge_heads(x: Tensor) -> Tensor:
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


# ---------------------------------------------------------------------------------------------------
# BERT


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    max_positions: int = 512
    type_vocab: int = 2
    eps: float = 1e-12


class BertEmbeddings(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(c.max_positions).unsqueeze(0))

    def forward(self, input_ids: Tensor) -> Tensor:
        seq = input_ids.shape[1]
        types = torch.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(types)
        x = x + self.position_embeddings(self.position_ids[:, :seq])
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.heads = c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)

    def forward(self, x: Tensor) -> Tensor:
        q, k, v = (_split_heads(proj(x), self.heads) for proj in (self.query, self.key, self.value))
        return _merge_heads(F.scaled_dot_product_attention(q, k, v))


class BertResidual(nn.Module):
    """Dense + dropout + LayerNorm(x + residual): BERT's SelfOutput and Output."""

    def __init__(self, d_in: int, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(d_in, c.hidden)
        self.dropout = nn.Dropout(0.1)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x: Tensor, residual: Tensor) -> Tensor:
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertLayer(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_output = BertResidual(c.hidden, c)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.act = nn.GELU()
        self.output = BertResidual(c.intermediate, c)

    def forward(self, x: Tensor) -> Tensor:
        x = self.attention_output(self.attention(x), x)
        return self.output(self.act(self.intermediate(x)), x)


class Bert(nn.Module):
    """Returns (sequence output (b, s, h), pooled output (b, h))."""

    def __init__(self, c: BertConfig = BertConfig()) -> None:
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = nn.ModuleList(BertLayer(c) for _ in range(c.layers))
        self.pooler = nn.Linear(c.hidden, c.hidden)
        self.pooler_act = nn.Tanh()

    def forward(self, input_ids: Tensor) -> tuple[Tensor, Tensor]:
        x = self.embeddings(input_ids)
        for layer in self.encoder:
            x = layer(x)
        return x, self.pooler_act(self.pooler(x[:, 0]))


# ---------------------------------------------------------------------------------------------------
# GPT-2


@dataclass(frozen=True)
class GPT2Config:
    vocab_size: int = 50257
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    max_positions: int = 1024
    eps: float = 1e-5


class GPT2Attention(nn.Module):
    def __init__(self, c: GPT2Config) -> None:
        super().__init__()
        self.heads = c.heads
        self.c_attn = nn.Linear(c.hidden, 3 * c.hidden)
        self.c_proj = nn.Linear(c.hidden, c.hidden)
        self.resid_dropout = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:
        q, k, v = (_split_heads(t, self.heads) for t in self.c_attn(x).chunk(3, dim=-1))
        y = _merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return self.resid_dropout(self.c_proj(y))


class GPT2MLP(nn.Module):
    def __init__(self, c: GPT2Config) -> None:
        super().__init__()
        self.c_fc = nn.Linear(c.hidden, 4 * c.hidden)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * c.hidden, c.hidden)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, c: GPT2Config) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c.hidden, eps=c.eps)
        self.mlp = GPT2MLP(c)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Transformer(nn.Module):
    def __init__(self, c: GPT2Config) -> None:
        super().__init__()
        self.wte = nn.Embedding(c.vocab_size, c.hidden)
        self.wpe = nn.Embedding(c.max_positions, c.hidden)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(GPT2Block(c) for _ in range(c.layers))
        self.ln_f = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, input_ids: Tensor) -> Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.drop(self.wte(input_ids) + self.wpe(positions))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2(nn.Module):
    """Returns logits (b, s, vocab). ``lm_head.weight`` is ``transformer.wte.weight`` (tied)."""

    def __init__(self, c: GPT2Config = GPT2Config()) -> None:
        super().__init__()
        self.transformer = GPT2Transformer(c)
        self.lm_head = nn.Linear(c.hidden, c.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids: Tensor) -> Tensor:
        return self.lm_head(self.transformer(input_ids))


# ---------------------------------------------------------------------------------------------------
# Llama


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int = 32000
    hidden: int = 4096
    layers: int = 32
    heads: int = 32
    kv_heads: int = 32
    intermediate: int = 11008
    eps: float = 1e-5
    rope_theta: float = 10000.0
    tie_embeddings: bool = False


LLAMA_PRESETS = {
    "llama-7b": LlamaConfig(),
    "llama-70b": LlamaConfig(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672),
    "llama-tiny": LlamaConfig(vocab_size=1000, hidden=128, layers=2, heads=4, kv_heads=2, intermediate=344),
}


class RMSNorm(nn.Module):
    def __init__(self, hidden: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def _rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.heads, self.kv_heads = c.heads, c.kv_heads
        head_dim = c.hidden // c.heads
        self.q_proj = nn.Linear(c.hidden, c.heads * head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(c.heads * head_dim, c.hidden, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, cache: list | None = None, index: int = 0) -> Tensor:
        q = _split_heads(self.q_proj(x), self.heads)
        k = _split_heads(self.k_proj(x), self.kv_heads)
        v = _split_heads(self.v_proj(x), self.kv_heads)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        past = 0
        if cache is not None:  # KV cache: cache[index] holds this layer's (k, v) of the earlier positions
            if index < len(cache):
                past = cache[index][0].shape[2]
                k, v = torch.cat((cache[index][0], k), dim=2), torch.cat((cache[index][1], v), dim=2)
                cache[index] = (k, v)
            else:
                cache.append((k, v))
        gqa = self.kv_heads != self.heads
        if past == 0 or q.shape[2] == 1:  # prefill: causal; one new token attends every cached position
            y = F.scaled_dot_product_attention(q, k, v, is_causal=past == 0, enable_gqa=gqa)
        else:  # several new tokens after a cache: causal with an offset
            mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril(past)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
        return self.o_proj(_merge_heads(y))


class LlamaMLP(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.up_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.down_proj = nn.Linear(c.intermediate, c.hidden, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden, c.eps)
        self.self_attn = LlamaAttention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.eps)
        self.mlp = LlamaMLP(c)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, cache: list | None = None, index: int = 0) -> Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache, index)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """Returns logits (b, s, vocab)."""

    def __init__(self, c: LlamaConfig = LlamaConfig()) -> None:
        super().__init__()
        self.config = c
        head_dim = c.hidden // c.heads
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden)
        self.layers = nn.ModuleList(LlamaDecoderLayer(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden, c.eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab_size, bias=False)
        if c.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        inv_freq = 1.0 / c.rope_theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, input_ids: Tensor, past_key_values: list | None = None, logits_to_keep: int = 0) -> Tensor:
        """``past_key_values``: a list the layers fill with their (k, v) (b, kv_heads, positions, d) and
        extend on later calls (a KV cache; ``modelcost llm`` uses it). ``logits_to_keep`` > 0: the head runs
        on the last that many positions only (what generation needs after the prompt)."""
        x = self.embed_tokens(input_ids)
        past = past_key_values[0][0].shape[2] if past_key_values else 0
        positions = torch.arange(past, past + input_ids.shape[1], device=input_ids.device, dtype=torch.float32)
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, past_key_values, i)
        x = self.norm(x)
        return self.lm_head(x[:, -logits_to_keep:] if logits_to_keep else x)


def bert(config: BertConfig = BertConfig()) -> Bert:
    return Bert(config)


def gpt2(config: GPT2Config = GPT2Config()) -> GPT2:
    return GPT2(config)


def llama(preset: str = "llama-7b", **overrides: float | bool) -> Llama:
    from dataclasses import replace

    return Llama(replace(LLAMA_PRESETS[preset], **overrides))
