#!/usr/bin/env python3
"""Throughput of the pretrained scorers' architectures, on a GPU or on CPU:

  throughput.py SENTENCES TOKENIZER_JSON [N]

SENTENCES is a text file of corpus sentences, one per line (the first N are
used, 20000 by default); TOKENIZER_JSON the encoder's tokenizer.json. It
measures, with the weights drawn at random (speed does not depend on the
values; the networks' shapes are those named):

  encoder  all-MiniLM-L6-v2's shape (BERT, 6 layers, width 384, 12 heads,
           feed-forward 1536): sentences encoded per second (mean pooling,
           normalised), the sentences sorted by length and padded per batch
           as sentence-transformers does, in float32 and in half precision;
  lm       causal language models of GPT-2's small (124M) and medium (355M)
           shapes: sequences of 128 tokens scored per second (the summed
           log-probability of every token, as Eq. 3's log p(c | s) needs),
           in float32 and bfloat16.

It prints the device, the library versions and thread counts, one line
per measurement, and writes them as JSON lines to $OUT/throughput.jsonl
when OUT is set.
"""
import contextlib
import json
import os
import sys
import time

import torch
import transformers
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel


def autocast(dev, dtype):
    """Mixed precision in dtype, or nothing for float32."""
    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(dev, dtype=dtype)


def sync(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def timed(dev, fn, reps):
    fn()  # warm-up: kernels, allocator
    sync(dev)
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    sync(dev)
    return (time.perf_counter() - t) / reps


def main():
    sents_path, tok_path = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(1)
    info = {"device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu",
            "torch": torch.__version__, "transformers": transformers.__version__,
            "threads": torch.get_num_threads()}
    print(json.dumps(info), flush=True)
    rows = [dict(info, kind="info")]

    sents = [l.rstrip("\n") for l in open(sents_path, encoding="utf-8")][:n]
    tok = Tokenizer.from_file(tok_path)
    tok.no_padding()
    tok.enable_truncation(256)
    ids = [e.ids for e in tok.encode_batch(sents)]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    mean_len = sum(len(x) for x in ids) / len(ids)

    enc = BertModel(BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6,
                               num_attention_heads=12, intermediate_size=1536,
                               max_position_embeddings=512), add_pooling_layer=False).to(dev).eval()

    def encode_all(bs, dtype):
        def run():
            with torch.inference_mode(), autocast(dev, dtype):
                for s in range(0, len(order), bs):
                    batch = [ids[i] for i in order[s:s + bs]]
                    width = max(len(x) for x in batch)
                    x = torch.zeros(len(batch), width, dtype=torch.long)
                    m = torch.zeros(len(batch), width, dtype=torch.long)
                    for j, t in enumerate(batch):
                        x[j, :len(t)] = torch.tensor(t)
                        m[j, :len(t)] = 1
                    x, m = x.to(dev), m.to(dev)
                    h = enc(input_ids=x, attention_mask=m).last_hidden_state
                    mf = m.unsqueeze(-1).to(h.dtype)
                    e = (h * mf).sum(1) / mf.sum(1)
                    torch.nn.functional.normalize(e.float(), dim=-1).cpu()
        return run

    half = torch.float16 if dev == "cuda" else torch.bfloat16
    for dtype in (torch.float32, half):
        for bs in ((256, 1024) if dev == "cuda" else (64,)):
            secs = timed(dev, encode_all(bs, dtype), 3 if dev == "cuda" else 1)
            r = {"kind": "encoder", "shape": "all-MiniLM-L6-v2", "dtype": str(dtype).split(".")[-1], "batch": bs,
                 "sentences": len(ids), "mean_tokens": round(mean_len, 1), "seconds": round(secs, 4),
                 "sentences_per_s": round(len(ids) / secs, 1)}
            print(json.dumps(r), flush=True)
            rows.append(r)

    for name, layers, width, heads in (("gpt2-small", 12, 768, 12), ("gpt2-medium", 24, 1024, 16)):
        if dev != "cuda" and name != "gpt2-small":
            continue
        lm = GPT2LMHeadModel(GPT2Config(n_layer=layers, n_embd=width, n_head=heads)).to(dev).eval()
        seq, bs = 128, (256 if dev == "cuda" else 16)
        x = torch.randint(0, 50257, (bs, seq), device=dev)
        for dtype in (torch.float32, torch.bfloat16):
            def score():
                with torch.inference_mode(), autocast(dev, dtype):
                    logits = lm(input_ids=x).logits[:, :-1].float()
                    lp = torch.log_softmax(logits, -1).gather(-1, x[:, 1:].unsqueeze(-1)).squeeze(-1)
                    lp.sum(1).cpu()
            secs = timed(dev, score, 5 if dev == "cuda" else 1)
            r = {"kind": "lm", "shape": name, "params_m": round(sum(p.numel() for p in lm.parameters()) / 1e6, 1),
                 "dtype": str(dtype).split(".")[-1], "batch": bs, "tokens": seq, "seconds": round(secs, 4),
                 "sequences_per_s": round(bs / secs, 1)}
            print(json.dumps(r), flush=True)
            rows.append(r)
        del lm
        if dev == "cuda":
            torch.cuda.empty_cache()

    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "throughput.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
