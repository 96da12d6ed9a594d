"""Writes a small random GPT-2 in the two outside formats ember loads, and the logits
PyTorch computes with it, for models/gpt2:weights_test:

  /usr/bin/python3 tools/reference/gpt2_export.py models/gpt2/testdata

- tiny_llmc.bin: llm.c's checkpoint, as llm.c's train_gpt2.py write_model writes it: a
  header of 256 int32 (20240326, version 3 = float32, block_size, vocab_size, n_layer,
  n_head, n_embd, the vocabulary padded to a multiple of 128), then float32 tensors in
  its order: wte (padded rows zero), wpe, then per kind and layer ln_1.weight,
  ln_1.bias, attn.c_attn.weight, attn.c_attn.bias, attn.c_proj.weight, attn.c_proj.bias,
  ln_2.weight, ln_2.bias, mlp.c_fc.weight, mlp.c_fc.bias, mlp.c_proj.weight,
  mlp.c_proj.bias, and ln_f.weight, ln_f.bias; matrices [out, in].
- tiny_hf/config.json and tiny_hf/model.safetensors: Hugging Face's GPT-2 layout, as
  the gpt2 repository's file has it: no "transformer." prefix, the attention's causal
  mask buffers h.<i>.attn.bias, and Conv1D matrices stored [in, out].
- tiny_logits.txt: "<name> v1 v2 ..." lines: the ids, the loss of the ids against the
  ids shifted by one, the logits' sum of squares, and 32 sampled logits.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "nn"))
from gpt2_torch import GPT  # noqa: E402
from safetensors_interop import write as write_safetensors  # noqa: E402

V, T, L, H, C = 96, 16, 2, 4, 32


KINDS = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
         "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
         "mlp.c_proj.weight", "mlp.c_proj.bias"]
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT(V, T, L, H, C)
    with torch.no_grad():  # away from PyTorch's init so that every tensor matters
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape) * (0.5 if p.dim() == 1 else 0.2) + (1.0 if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight" else 0.0))
    params = {n: p.detach().float() for n, p in model.named_parameters()}

    padded = (V + 127) // 128 * 128
    header = torch.zeros(256, dtype=torch.int32)
    header[:8] = torch.tensor([20240326, 3, T, V, L, H, C, padded])
    with open(os.path.join(out, "tiny_llmc.bin"), "wb") as f:
        f.write(header.numpy().tobytes())
        wte = torch.zeros(padded, C)
        wte[:V] = params["wte.weight"]
        f.write(wte.numpy().tobytes())
        f.write(params["wpe.weight"].numpy().tobytes())
        for kind in KINDS:
            for i in range(L):
                f.write(params[f"h.{i}.{kind}"].contiguous().numpy().tobytes())
        f.write(params["ln_f.weight"].numpy().tobytes())
        f.write(params["ln_f.bias"].numpy().tobytes())

    hf = os.path.join(out, "tiny_hf")
    os.makedirs(hf, exist_ok=True)
    with open(os.path.join(hf, "config.json"), "w") as f:
        json.dump({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_ctx": T, "n_embd": C,
                   "n_head": H, "n_layer": L, "n_positions": T, "vocab_size": V,
                   "layer_norm_epsilon": 1e-05, "activation_function": "gelu_new"}, f, indent=2)
        f.write("\n")
    tensors = {}
    for name, p in params.items():
        if any(name.endswith(k) for k in CONV1D):
            p = p.t().contiguous()
        tensors[name] = ("F32", list(p.shape), p.reshape(-1).tolist())
    for i in range(L):
        mask = torch.tril(torch.ones(T, T)).reshape(1, 1, T, T)
        tensors[f"h.{i}.attn.bias"] = ("F32", [1, 1, T, T], mask.reshape(-1).tolist())
    write_safetensors(os.path.join(hf, "model.safetensors"), tensors, {"format": "pt"})

    ids = torch.tensor([[(t * 37 + 5) % V for t in range(13)]])
    with torch.no_grad():
        logits = model(ids[:, :12])
        loss = F.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
    flat = logits.double().reshape(-1)
    with open(os.path.join(out, "tiny_logits.txt"), "w") as f:
        f.write("ids " + " ".join(str(int(i)) for i in ids[0]) + "\n")
        f.write(f"loss {loss.item():.9g}\n")
        f.write(f"logits.sumsq {(flat * flat).sum().item():.9g}\n")
        samples = [(k * 7919 + 13) % flat.numel() for k in range(32)]
        f.write("logits.samples " + " ".join(f"{flat[k].item():.9g}" for k in samples) + "\n")


if __name__ == "__main__":
    main()
