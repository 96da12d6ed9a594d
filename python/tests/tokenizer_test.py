"""ember.tokenizer against tiktoken: the ids tiktoken gives on every test vector
(tools/reference/tiktoken_vectors.js wrote them), tiktoken's special-token contract and
errors, batches, and the GIL released while a long text encodes."""

import json
import threading
import time
import unittest

import ember
import ember.tokenizer as tiktoken

VECTORS = "tokenizer/testdata/tiktoken_vectors.jsonl"


class TiktokenVectorsTest(unittest.TestCase):
    def test_every_vector(self):
        with open(VECTORS, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        names = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
        for name in names:
            enc = tiktoken.get_encoding(name)
            for row in rows:
                text = row["text"]
                with self.subTest(name=name, text=text[:40]):
                    self.assertEqual(enc.encode_ordinary(text), row[name])
                    self.assertEqual(enc.decode(row[name]), text)
                    if name + ".all_special" in row:
                        self.assertEqual(enc.encode(text, allowed_special="all"), row[name + ".all_special"])
            batch = enc.encode_ordinary_batch([row["text"] for row in rows], num_threads=3)
            self.assertEqual(batch, [row[name] for row in rows])


class EncodingTest(unittest.TestCase):
    def setUp(self):
        self.enc = tiktoken.get_encoding("cl100k_base")

    def test_properties(self):
        enc = self.enc
        self.assertEqual(repr(enc), "<Encoding 'cl100k_base'>")
        self.assertEqual((enc.name, enc.n_vocab, enc.max_token_value, enc.eot_token), ("cl100k_base", 100277, 100276, 100257))
        self.assertEqual(enc.special_tokens_set, {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"})
        self.assertIs(tiktoken.get_encoding("cl100k_base"), enc)  # loaded once
        self.assertIn("o200k_base", tiktoken.list_encoding_names())

    def test_special_tokens_as_tiktoken(self):
        enc = self.enc
        text = "a<|endoftext|>b<|fim_prefix|>"
        with self.assertRaises(ValueError) as raised:
            enc.encode(text)
        self.assertTrue(str(raised.exception).startswith(
            "Encountered text corresponding to disallowed special token '<|endoftext|>'.\n"))
        self.assertEqual(enc.encode(text, allowed_special="all"), [64, 100257, 65, 100258])
        self.assertEqual(enc.encode(text, disallowed_special=()), enc.encode_ordinary(text))
        # Allowed ones become ids, the rest are ordinary text when not disallowed...
        self.assertEqual(enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=()),
                         [64, 100257] + enc.encode_ordinary("b<|fim_prefix|>"))
        # ... and an error when they are (the default: every special not allowed).
        with self.assertRaisesRegex(ValueError, "'<\\|fim_prefix\\|>'"):
            enc.encode(text, allowed_special={"<|endoftext|>"})
        with self.assertRaisesRegex(ValueError, "'<\\|endoftext\\|>'"):
            enc.encode_batch(["fine", text])
        self.assertEqual(enc.encode_batch(["x", text], allowed_special="all"), [[87], [64, 100257, 65, 100258]])

    def test_decode(self):
        enc = self.enc
        ids = enc.encode("héllo 🚀")
        self.assertEqual(enc.decode(ids), "héllo 🚀")
        self.assertEqual(enc.decode_bytes(ids), "héllo 🚀".encode())
        self.assertEqual(b"".join(enc.decode_tokens_bytes(ids)), "héllo 🚀".encode())
        # A token cut inside a UTF-8 sequence: replaced, or as the caller asks.
        cut = enc.encode("🚀")[:1]
        self.assertEqual(enc.decode(cut), "\ufffd")
        self.assertEqual(enc.decode(cut, errors="ignore"), "")
        self.assertEqual(enc.decode_single_token_bytes(9906), b"Hello")

    def test_errors(self):
        with self.assertRaisesRegex(KeyError, "token id 100256 is not in cl100k_base"):  # tiktoken's KeyError
            self.enc.decode([9906, 100256])
        with self.assertRaises(KeyError):
            self.enc.decode_single_token_bytes(100256)
        with self.assertRaisesRegex(ValueError, "Unknown encoding gpt3"):
            tiktoken.get_encoding("gpt3")
        with self.assertRaisesRegex(FileNotFoundError, "/nowhere/"):
            tiktoken.get_encoding("gpt2", vocab_dir="/nowhere")
        self.assertEqual(self.enc.encode("\ud800 x"), self.enc.encode("\ufffd x"))  # a lone surrogate

    def test_the_rest_of_tiktokens_api(self):
        enc = self.enc
        self.assertEqual(enc.encode_single_token("Hello"), 9906)
        self.assertEqual(enc.encode_single_token(b"Hello"), 9906)
        self.assertEqual(enc.encode_single_token("<|endoftext|>"), 100257)
        self.assertEqual(enc.encode_single_token(b"<|endoftext|>"), 100257)
        with self.assertRaises(KeyError):
            enc.encode_single_token("Hello world")
        self.assertTrue(enc.is_special_token(100257))
        self.assertFalse(enc.is_special_token(9906))
        ids = [enc.encode("hello world"), enc.encode("héllo")]
        self.assertEqual(enc.decode_batch(ids), ["hello world", "héllo"])
        self.assertEqual(enc.decode_bytes_batch(ids), [b"hello world", "héllo".encode()])
        array = enc.encode_to_numpy("hello world")
        self.assertEqual((str(array.dtype), array.tolist()), ("uint32", ids[0]))
        values = enc.token_byte_values()
        self.assertEqual((len(values), values[0], values[-1]), (100256, b"\x00", b"\xff"))  # ranks 0 .. 100255
        self.assertTrue(all(a < b for a, b in zip(values, values[1:])))  # sorted
        # Offsets: the character each token starts in. "我" is split after its second byte
        # (b" \xe6\x88", b"\x91"): the second piece starts inside it, at index 6; the
        # rocket's four bytes span three tokens, the last two starting inside it.
        self.assertEqual(enc.decode_with_offsets(enc.encode("hello 我 world")), ("hello 我 world", [0, 5, 6, 7]))
        self.assertEqual(enc.decode_with_offsets([64, 11410, 248, 222, 65]), ("a 🚀b", [0, 1, 2, 2, 3]))

    def test_encoding_for_model(self):
        for model, name in (("gpt2", "gpt2"), ("text-davinci-003", "p50k_base"), ("gpt-4", "cl100k_base"),
                            ("gpt-3.5-turbo-0301", "cl100k_base"), ("gpt-4o", "o200k_base"),
                            ("gpt-4o-2024-05-13", "o200k_base"), ("text-davinci-edit-001", "p50k_edit"),
                            ("gpt-oss-120b", "o200k_harmony"), ("ft:gpt-4o-mini:org", "o200k_base")):
            self.assertEqual(tiktoken.encoding_name_for_model(model), name, model)
        self.assertEqual(tiktoken.encoding_for_model("gpt-4").name, "cl100k_base")
        with self.assertRaisesRegex(KeyError, "Could not automatically map"):
            tiktoken.encoding_for_model("llama")
        harmony = tiktoken.get_encoding("o200k_harmony")
        self.assertEqual(harmony.encode("<|start|>assistant", allowed_special="all"), [200006, 173781])
        self.assertIn("o200k_harmony", tiktoken.list_encoding_names())

    def test_a_constructed_encoding_pickles(self):
        import pickle
        base = tiktoken.get_encoding("r50k_base")
        self.assertIs(pickle.loads(pickle.dumps(base))._core, base._core)  # by name: the same tables
        custom = tiktoken.Encoding("custom", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                                   special_tokens={"<|pickle|>": 100_000})
        self.assertEqual(custom.encode("hello world"), base.encode("hello world"))
        again = pickle.loads(pickle.dumps(custom))
        self.assertEqual(again.encode("<|pickle|> hi", allowed_special="all"), [100_000, 23105])
        self.assertEqual(again.n_vocab, 100_001)
        with self.assertRaisesRegex(ValueError, "explicit_n_vocab"):
            tiktoken.Encoding("x", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                              special_tokens={}, explicit_n_vocab=5)
        with self.assertRaisesRegex(ValueError, "byte 0 is not a token"):
            tiktoken.Encoding("x", pat_str=base._pat_str, mergeable_ranks={b"a": 0}, special_tokens={})

    def test_gil_released_while_encoding(self):
        text = "The quick brown fox jumps over the lazy dog. " * 200000  # 9 MB
        done = threading.Event()
        worker = threading.Thread(target=lambda: (self.enc.encode_ordinary(text), done.set()))
        ticks = 0
        start = time.perf_counter()
        worker.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)
        worker.join()
        elapsed = time.perf_counter() - start
        # Holding the GIL for the whole encode would leave this thread no turn at all.
        self.assertGreater(ticks, 10, f"the main thread ran {ticks} times in {elapsed:.3f} s")


if __name__ == "__main__":
    unittest.main()
