"""Writes the seed corpora of the ember_fuzzer targets (base/fuzzer.bzl) into each
package's testdata/fuzz/<target>/: small valid files of every format and the edge cases
around them. Standard library only; run from the repository root:

    python3 tools/fuzz/make_seeds.py
"""
import base64
import gzip
import json
import os
import struct


def write(package, target, name, data):
    folder = os.path.join(package, "testdata", "fuzz", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- safetensors: 8-byte little-endian header length, JSON header, data.
def safetensors(tensors, metadata=None, pad=True):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


S = ("nn", "safetensors_fuzzer")
write(*S, "model", safetensors({"fc.weight": ("F32", [2, 3], f32(1, 2, 3, 4, 5, 6)), "fc.bias": ("F32", [3], f32(0.5, -1, 2)),
                                "optimizer.0.step": ("I64", [], struct.pack("<q", 7))},
                               {"format": "ember-mnist", "step": "7"}))
write(*S, "hugging_face", safetensors({"wte": ("F32", [2, 2], f32(1, 2, 3, 4))}, {"format": "pt"}, pad=False))
write(*S, "dtypes", safetensors({"a": ("BF16", [2], b"\x80\x3f\x00\x40"), "b": ("F16", [1], b"\x00\x3c"),
                                 "c": ("F64", [1], struct.pack("<d", 2.5)), "d": ("I32", [2], struct.pack("<2i", -1, 9)),
                                 "e": ("U8", [3], b"\x00\x7f\xff"), "f": ("BOOL", [3], b"\x00\x01\x02"),
                                 "g": ("I8", [1], b"\xff"), "h": ("I16", [1], b"\x01\x80")}))
write(*S, "empty_tensors", safetensors({"z": ("F32", [0, 5], b""), "s": ("F32", [], f32(3))}))
write(*S, "no_tensors", safetensors({}))
write(*S, "metadata_only", safetensors({}, {"k": "v"}))
write(*S, "truncated", safetensors({"x": ("F32", [4], f32(1, 2, 3, 4))})[:-3])
write(*S, "header_too_long", struct.pack("<Q", 1 << 40) + b"{}")
write(*S, "overlap", struct.pack("<Q", 88) + b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}' + b"abc")
write(*S, "huge_shape", safetensors({"x": ("F32", [1 << 62, 4], b"")}))
number = b'{"x":{"dtype":"F32","shape":[4e999,4],"data_offsets":[0,0]}}'
write(*S, "number_overflow", struct.pack("<Q", len(number)) + number)  # out_of_range, not a parse_error
write(*S, "not_json", struct.pack("<Q", 4) + b"{abc")

# --- IDX: 0 0 type ndims, big-endian dimensions, big-endian values.
def idx(code, dims, values_raw):
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + values_raw


I = ("data", "idx_fuzzer")
write(*I, "images_u8", idx(0x08, [2, 3, 3], bytes(range(18))))
write(*I, "labels_u8", idx(0x08, [4], bytes([9, 0, 3, 7])))
write(*I, "signed_byte", idx(0x09, [3], bytes([0x80, 0x7F, 0xFF])))
write(*I, "short", idx(0x0B, [2], struct.pack(">2h", -2, 300)))
write(*I, "int", idx(0x0C, [2, 1], struct.pack(">2i", -7, 1 << 30)))
write(*I, "float", idx(0x0D, [2], struct.pack(">2f", 1.5, float("nan"))))
write(*I, "double", idx(0x0E, [1], struct.pack(">d", -0.0)))
write(*I, "zero_dim", idx(0x08, [0, 28], b""))
write(*I, "truncated", idx(0x08, [10], bytes(5)))
write(*I, "trailing", idx(0x08, [1], b"ab"))
write(*I, "terabytes", idx(0x08, [0x7FFFFFFF, 0x7FFFFFFF], b"x"))
write(*I, "huge_then_zero", idx(0x08, [0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0], b""))  # 0 elements, a shape past int64
write(*I, "gzip", gzip.compress(idx(0x08, [2], b"\x01\x02"), mtime=0))

# --- token shards: 256 little-endian int32 (magic, version, count, zeros), uint16 tokens.
def shard(tokens, magic=20240520, version=1, count=None):
    header = struct.pack("<3i", magic, version, len(tokens) if count is None else count) + bytes(253 * 4)
    return header + struct.pack("<%dH" % len(tokens), *tokens)


T = ("data", "shard_fuzzer")
write(*T, "gpt2_tokens", shard([50256, 464, 2068, 7586, 21831, 13]))
write(*T, "empty", shard([]))
write(*T, "large_ids", shard([65535, 300, 255]))
write(*T, "count_too_big", shard([1, 2], count=3))
write(*T, "negative_count", shard([], count=-1))
write(*T, "wrong_magic", shard([1], magic=20240326))
write(*T, "wrong_version", shard([1], version=2))
write(*T, "short_header", shard([])[:100])

# --- vocabularies (vocab_fuzzer: first byte even = .tiktoken, odd = encoder.json NUL vocab.bpe).
merges = [b"He", b"ll", b"llo", b"Hello", b" w", b"or", b" wor", b"ld", b" world"]
tokens = [bytes([b]) for b in range(256)] + merges
tiktoken = "".join("%s %d\n" % (base64.b64encode(t).decode(), i) for i, t in enumerate(tokens))
V = ("tokenizer", "vocab_fuzzer")
write(*V, "tiktoken_small", b"\x00" + tiktoken.encode())
write(*V, "tiktoken_missing_byte", b"\x00" + tiktoken.split("\n", 1)[1].encode())
write(*V, "tiktoken_duplicate_rank", b"\x00" + (tiktoken + "YQ== 3\n").encode())
write(*V, "tiktoken_bad_base64", b"\x00" + b"@@@ 0\n")
write(*V, "tiktoken_no_rank", b"\x00" + b"YQ==\n")
write(*V, "tiktoken_empty", b"\x00")


def byte_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


u = byte_to_unicode()
show = lambda t: "".join(u[b] for b in t)
pairs = [(b"H", b"e"), (b"l", b"l"), (b"ll", b"o"), (b"He", b"llo"), (b" ", b"w"), (b"o", b"r"), (b" w", b"or"),
         (b"l", b"d"), (b" wor", b"ld")]
order = list(u)  # GPT-2's single-byte order
encoder = {show(bytes([b])): i for i, b in enumerate(order)}
for i, (a, b) in enumerate(pairs):
    encoder[show(a + b)] = 256 + i
encoder["<|endoftext|>"] = 256 + len(pairs)
bpe = "#version: 0.2\n" + "".join("%s %s\n" % (show(a), show(b)) for a, b in pairs)
write(*V, "gpt2_small", b"\x01" + json.dumps(encoder, ensure_ascii=False).encode() + b"\x00" + bpe.encode())
write(*V, "gpt2_merge_mismatch", b"\x01" + json.dumps(encoder, ensure_ascii=False).encode() + b"\x00" +
      (bpe + "x y\n").encode())
write(*V, "gpt2_not_json", b"\x01" + b"{\"a\": " + b"\x00" + b"#version: 0.2\n")

# --- GPT-2 checkpoints (weights_fuzzer: first byte even = one file, odd = HF folder as
# config.json NUL model.safetensors). A model of vocab 8, 4 positions, 1 layer, 1 head,
# 4 wide: 300 parameters.
V, B, L, C = 8, 4, 1, 4
order = [("wte.weight", [V, C]), ("wpe.weight", [B, C])]
for kind, shape in [("ln_1.weight", [C]), ("ln_1.bias", [C]), ("attn.c_attn.weight", [3 * C, C]),
                    ("attn.c_attn.bias", [3 * C]), ("attn.c_proj.weight", [C, C]), ("attn.c_proj.bias", [C]),
                    ("ln_2.weight", [C]), ("ln_2.bias", [C]), ("mlp.c_fc.weight", [4 * C, C]), ("mlp.c_fc.bias", [4 * C]),
                    ("mlp.c_proj.weight", [C, 4 * C]), ("mlp.c_proj.bias", [C])]:
    order += [("h.%d.%s" % (i, kind), shape) for i in range(L)]
order += [("ln_f.weight", [C]), ("ln_f.bias", [C])]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


values = lambda n, k: [((i * 7 + k) % 11 - 5) / 10 for i in range(n)]
llmc = struct.pack("<8i", 20240326, 3, B, V, L, 1, C, V) + bytes(248 * 4)
for k, (name, shape) in enumerate(order):
    llmc += f32(*values(numel(shape), k))
W = ("models/gpt2", "weights_fuzzer")
write(*W, "llmc_f32", b"\x00" + llmc)
write(*W, "llmc_truncated", b"\x00" + llmc[:-8])
write(*W, "llmc_huge_header", b"\x00" + struct.pack("<8i", 20240326, 3, B, V, 0x7FFFFFFF, 1, 1 << 30, V) + bytes(248 * 4))
config = {"vocab_size": V, "block_size": B, "n_layer": L, "n_head": 1, "n_embd": C, "dropout": 0.0}
tensors = {name: ("F32", shape, f32(*values(numel(shape), k))) for k, (name, shape) in enumerate(order)}
write(*W, "ember", b"\x00" + safetensors(tensors, {"format": "ember-gpt2-checkpoint/1", "config": json.dumps(config)}))
big = dict(config, n_layer=1000, n_embd=4096, n_head=8)
write(*W, "ember_config_too_big", b"\x00" + safetensors(tensors, {"format": "ember-gpt2-checkpoint/1", "config": json.dumps(big)}))
hf = {("transformer." + name): t for name, t in tensors.items()}
for name, (dtype, shape, raw) in list(hf.items()):  # Conv1D weights are stored [in, out]
    if name.endswith(("c_attn.weight", "c_proj.weight", "c_fc.weight")):
        hf[name] = (dtype, shape[::-1], raw)
hf_config = {"vocab_size": V, "n_positions": B, "n_layer": L, "n_head": 1, "n_embd": C}
write(*W, "hugging_face", b"\x01" + json.dumps(hf_config).encode() + b"\x00" + safetensors(hf, {"format": "pt"}))
write(*W, "hugging_face_bad_config", b"\x01" + b'{"vocab_size": -1}' + b"\x00" + safetensors(hf, {"format": "pt"}))

# --- the tokenize tool's --jsonl lines (jsonl_fuzzer: first byte bit 0 = encode, bit 1 =
# --ordinary).
J = ("tools/tokenize", "jsonl_fuzzer")
write(*J, "encode", b"\x01" + b'{"text": "Hello world"}')
write(*J, "encode_special", b"\x01" + b'{"text": "a<|endoftext|>b", "allowed_special": "all"}')
write(*J, "encode_special_refused", b"\x01" + b'{"text": "a<|endoftext|>b"}')
write(*J, "encode_ordinary", b"\x03" + b'{"text": "a<|endoftext|>b"}')
write(*J, "encode_allowed_list", b"\x01" + b'{"text": "x", "allowed_special": ["<|endoftext|>", "<|fim|>"]}')
write(*J, "encode_bad_utf8", b"\x01" + b'{"text": "\xff"}')
write(*J, "encode_escapes", b"\x01" + '{"text": "\\u00e9\\ud83d\\ude00\\n"}'.encode())
write(*J, "decode", b"\x00" + b'{"ids": [15496, 995]}')
write(*J, "decode_unknown", b"\x00" + b'{"ids": [50257, -1, 1.5, "x"]}')
write(*J, "decode_partial_utf8", b"\x00" + b'{"ids": [171]}')
write(*J, "not_an_object", b"\x00" + b'[1, 2]')
write(*J, "not_json", b"\x01" + b'{"text": ')

# --- model specs (network_json_fuzzer: the JSON text itself).
S = ("nn", "network_json_fuzzer")
write(*S, "mlp", json.dumps({"layers": [{"type": "Flatten"}, {"type": "Linear", "in_features": 784, "out_features": 128},
                                        {"type": "ReLU"}, {"type": "Linear", "in_features": 128, "out_features": 10}]}))
write(*S, "cnn", json.dumps({"layers": [
    {"type": "Conv2d", "in_channels": 1, "out_channels": 8, "kernel_size": 3, "padding": 1}, {"type": "ReLU"},
    {"type": "MaxPool2d", "kernel_size": 2}, {"type": "Conv2d", "in_channels": 8, "out_channels": 16,
    "kernel_size": [3, 3], "stride": 1, "dilation": 1, "bias": False}, {"type": "Flatten", "start_dim": 1},
    {"type": "Dropout", "p": 0.1}, {"type": "Linear", "in_features": 16, "out_features": 10, "bias": True},
    {"type": "Softmax", "dim": -1}]}))
write(*S, "all_layers", json.dumps({"layers": [
    {"type": "Embedding", "num_embeddings": 50, "embedding_dim": 8}, {"type": "LayerNorm", "normalized_shape": 8},
    {"type": "GELU", "approximate": "tanh"}, {"type": "Tanh"}, {"type": "Sigmoid"}, {"type": "Scale", "factor": 0.5}]}))
write(*S, "unknown_type", '{"layers": [{"type": "Conv3d"}]}')
write(*S, "unknown_argument", '{"layers": [{"type": "Linear", "in_feature": 3, "in_features": 3, "out_features": 2}]}')
write(*S, "wrong_types", '{"layers": [{"type": "Linear", "in_features": "3", "out_features": 2.5, "bias": 1}]}')
write(*S, "negative", '{"layers": [{"type": "Linear", "in_features": -3, "out_features": 2}]}')
write(*S, "huge", '{"layers": [{"type": "Linear", "in_features": 78400000, "out_features": 100}]}')
write(*S, "not_an_object", '[{"type": "ReLU"}]')
write(*S, "extra_key", '{"layers": [], "extra": 1}')
write(*S, "not_json", '{"layers": [')
write(*S, "number_overflow", '{"layers": [{"type": "Dropout", "p": 33333e3333333333}]}')  # network_json_fuzzer's first finding
